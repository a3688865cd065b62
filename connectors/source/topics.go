package source

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/kmirror/kmirror/connectors"
	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/connectors/planner"
	"github.com/kmirror/kmirror/kmtype"
)

// sourceTaskConfigs is MirrorSourceConnector.taskConfigs: the partitions dealt round-robin to
// min(maxTasks, len(order)) tasks, each task config being the connector config plus the task class, the
// task's partitions and its index, the assignment that dealt them, and the last move by load of the tasks
// lastMove names. No partitions means no tasks.
func sourceTaskConfigs(raw map[string]string, order []mirror.TopicPartition, maxTasks int, by TaskAssignment, lastMove map[int]string) []map[string]string {
	assigned := planner.Tasks(order, maxTasks)
	configs := make([]map[string]string, 0, len(assigned))
	for i, tps := range assigned {
		task := maps.Clone(raw)
		task[connectors.TaskClassKey] = connectors.SourceTaskClass
		task[mirror.TaskAssignedPartitionsConfig] = mirror.EncodeAssignedPartitions(tps)
		task[mirror.TaskIndexConfig] = strconv.Itoa(i)
		task[mirror.TaskAssignedByConfig] = string(by)
		if move, ok := lastMove[i]; ok {
			task[mirror.TaskLastMoveConfig] = move
		}
		configs = append(configs, task)
	}
	return configs
}

// remoteTopicConfig is MM2's targetConfig: the source topic's config entries that are copied to its remote
// topic. Read-only, sensitive and static broker entries never are, nor what config.properties.exclude
// names. Entries with their default value on the source are kept for an incremental sync, which turns them
// into deletes unless use.defaults.from=source; when a topic is created they are kept only with
// use.defaults.from=source, so the target's defaults apply otherwise. Values from dynamic broker configs are
// not defaults, so they become topic overrides on the target.
func remoteTopicConfig(entries []kafka.ConfigEntry, filter *mirror.ConfigPropertyFilter, incremental bool) []kafka.ConfigEntry {
	var out []kafka.ConfigEntry
	for _, e := range entries {
		isDefault := e.Source == kafka.SourceDefault
		if !incremental && isDefault && !filter.ShouldReplicateSourceDefault(e.Name) {
			continue
		}
		if e.ReadOnly || e.Sensitive || e.Source == kafka.SourceStaticBroker || !filter.ShouldReplicateConfigProperty(e.Name) {
			continue
		}
		out = append(out, e)
	}
	return out
}

// newRemoteTopicConfig is the config a remote topic is created with.
func newRemoteTopicConfig(source []kafka.ConfigEntry, filter *mirror.ConfigPropertyFilter) map[string]string {
	entries := remoteTopicConfig(source, filter, false)
	if len(entries) == 0 {
		return nil
	}
	cfg := make(map[string]string, len(entries))
	for _, e := range entries {
		cfg[e.Name] = e.Value
	}
	return cfg
}

// topicConfigOps is the incremental config sync of one remote topic (MM2's incrementalAlterConfigs): SET
// every synced source value, DELETE (back to the target's default) every entry that has its default on the
// source unless use.defaults.from=source. MM2 sends every operation on every sync; when the remote topic's
// current config is known (remote non-nil) only the operations that change something are returned, which
// leaves the same end state without rewriting unchanged configs every interval. A value counts as set only
// when it is a topic override on the target: a target default that happens to equal the source value is
// still made explicit, as MM2 does.
func topicConfigOps(source, remote []kafka.ConfigEntry, filter *mirror.ConfigPropertyFilter) []kafka.ConfigOp {
	var overrides map[string]string
	if remote != nil {
		overrides = make(map[string]string)
		for _, e := range remote {
			if e.Source == kafka.SourceTopic {
				overrides[e.Name] = e.Value
			}
		}
	}
	var ops []kafka.ConfigOp
	for _, e := range remoteTopicConfig(source, filter, true) {
		reset := e.Source == kafka.SourceDefault && !filter.ShouldReplicateSourceDefault(e.Name)
		if overrides != nil {
			current, overridden := overrides[e.Name]
			if (reset && !overridden) || (!reset && overridden && current == e.Value) {
				continue
			}
		}
		if reset {
			ops = append(ops, kafka.ConfigOp{Name: e.Name, Delete: true})
		} else {
			ops = append(ops, kafka.ConfigOp{Name: e.Name, Value: e.Value})
		}
	}
	slices.SortFunc(ops, func(a, b kafka.ConfigOp) int { return cmp.Compare(a.Name, b.Name) })
	return ops
}

// refreshPlan is one discovery round (MM2's loadTopicPartitions / refreshTopicPartitions with
// computeAndCreateTopicPartitions): it lists the replicated source topics, creates the missing remote
// topics, grows remote topics whose source grew, and publishes the task set if it changed.
func (r *sourcePlanner) refreshPlan(ctx context.Context) error {
	all, err := r.source.Topics(ctx)
	if err != nil {
		err = fmt.Errorf("list topics on source cluster %s: %w", r.sourceAlias, err)
		if kafka.IsAuthorization(err) {
			return plannerStop(err)
		}
		return err
	}
	topics := make(map[string]int)
	for t, n := range all {
		if n > 0 && r.selector.ShouldReplicate(t) {
			topics[t] = n
		}
	}
	remote, err := r.target.Topics(ctx)
	if err != nil {
		return fmt.Errorf("list topics on target cluster %s: %w", r.targetAlias, err)
	}
	r.remoteTopics = remote
	if err := r.createRemoteTopics(ctx, topics); err != nil {
		return err
	}
	r.growRemoteTopics(ctx, topics)
	if err := r.reportProblems(ctx, topics); err != nil {
		return err
	}

	gone := goneFromPlan(r.order, all)
	stats, statsOK := r.planStats(ctx, gone)
	planned := r.withDraining(gone, topics, stats, statsOK)
	maxTasks := r.cfg.TasksMax
	order := partitionOrder(r.order, planned, maxTasks, r.assignment)
	if min(maxTasks, len(order)) != min(maxTasks, len(r.order)) {
		r.lastMove = nil // the tasks are dealt anew: their last moves no longer describe them
	}
	if added, removed := partitionChanges(r.order, order); r.planned && (added > 0 || removed > 0) {
		r.log.Info("source partitions changed", "cluster", r.sourceAlias, "added", added, "removed", removed, "partitions", len(order),
			"draining", len(r.draining))
	}
	r.order, r.topics = order, topics
	if err := r.publish(ctx); err != nil {
		return err
	}
	if !statsOK {
		return nil // the stats of dropped partitions stay until they can be judged
	}
	if r.judgeDropped(ctx, all, order, stats) {
		if err := r.reportProblems(ctx, topics); err != nil {
			return err
		}
	}
	if err := r.saveLosses(ctx); err != nil {
		return err
	}
	return r.retainStats(ctx)
}

// partitionChanges counts the partitions of next that are not in prev, and those of prev not in next.
func partitionChanges(prev, next []mirror.TopicPartition) (added, removed int) {
	in := func(list []mirror.TopicPartition) map[mirror.TopicPartition]bool {
		set := make(map[mirror.TopicPartition]bool, len(list))
		for _, tp := range list {
			set[tp] = true
		}
		return set
	}
	prevSet, nextSet := in(prev), in(next)
	for tp := range nextSet {
		if !prevSet[tp] {
			added++
		}
	}
	for tp := range prevSet {
		if !nextSet[tp] {
			removed++
		}
	}
	return added, removed
}

// createRemoteTopics creates the remote topics of replicated source topics that the target lacks, with the
// source's partition count, replication.factor and the source's synced configs. A topic that cannot be
// created is logged and tried again on the next refresh, as MM2 does: one bad topic must not stop the others.
func (r *sourcePlanner) createRemoteTopics(ctx context.Context, topics map[string]int) error {
	var missing []string
	for _, t := range slices.Sorted(maps.Keys(topics)) {
		if _, ok := r.remoteTopics[r.remoteName(t)]; !ok {
			missing = append(missing, t)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	configs, err := r.source.TopicConfigs(ctx, missing)
	if err != nil {
		return fmt.Errorf("describe configs of new topics on source cluster %s: %w", r.sourceAlias, err)
	}
	newTopics := make([]kafka.NewTopic, 0, len(missing))
	for _, t := range missing {
		entries, ok := configs[t]
		if !ok {
			continue // deleted since it was listed
		}
		newTopics = append(newTopics, kafka.NewTopic{
			Name: r.remoteName(t), Partitions: topics[t], ReplicationFactor: r.replicationFactor,
			Config: newRemoteTopicConfig(entries, r.configFilter),
		})
	}
	results, err := r.target.CreateTopics(ctx, newTopics)
	if err != nil {
		return fmt.Errorf("create remote topics on target cluster %s: %w", r.targetAlias, err)
	}
	for _, nt := range newTopics {
		err := results[nt.Name]
		switch {
		case err == nil:
			r.log.Info("created remote topic", "topic", nt.Name, "partitions", nt.Partitions, "cluster", r.targetAlias)
			r.remoteTopics[nt.Name] = nt.Partitions
		case kafka.IsTopicExists(err):
			// Created by someone else since the listing; the next refresh sees its partition count.
			r.remoteTopics[nt.Name] = nt.Partitions
		default:
			r.log.Warn("could not create remote topic", "topic", nt.Name, "cluster", r.targetAlias, "error", err)
			r.problem(nt.Name, fmt.Sprintf("remote topic %s could not be created on %s, so its records are not replicated: %v", nt.Name, r.targetAlias, err))
		}
	}
	return nil
}

// problem records why a remote topic cannot take its source's records.
func (r *sourcePlanner) problem(remote, text string) {
	if r.problems == nil {
		r.problems = map[string]string{}
	}
	r.problems[remote] = text
}

// reportProblems drops the problems of remote topics that now exist with enough partitions (or whose source
// topic is gone) and shows the rest in the connector's status.
func (r *sourcePlanner) reportProblems(ctx context.Context, topics map[string]int) error {
	live := make(map[string]int, len(topics))
	for t, n := range topics {
		live[r.remoteName(t)] = n
	}
	for remote := range r.problems {
		want, replicated := live[remote]
		if have, ok := r.remoteTopics[remote]; !replicated || (ok && have >= want) {
			delete(r.problems, remote)
		}
	}
	var lines []string
	var notices []kmtype.Notice
	for _, remote := range slices.Sorted(maps.Keys(r.problems)) {
		lines = append(lines, r.problems[remote])
		notices = append(notices, kmtype.Notice{Kind: NoticeRemoteTopicProblem, Topic: remote, Message: r.problems[remote]})
	}
	for _, n := range r.lossNotices() {
		lines = append(lines, n.Message)
		notices = append(notices, n)
	}
	notice := strings.Join(lines, "\n")
	if notice == r.reported {
		return nil
	}
	if err := r.env.Report(ctx, notices); err != nil {
		return err
	}
	r.reported = notice
	return nil
}

// growRemoteTopics adds partitions to remote topics that have fewer than their source topic, because a
// record keeps its partition number. Partitions are never removed, and a remote topic with more partitions
// than its source is left alone.
func (r *sourcePlanner) growRemoteTopics(ctx context.Context, topics map[string]int) {
	for _, t := range slices.Sorted(maps.Keys(topics)) {
		name := r.remoteName(t)
		have, ok := r.remoteTopics[name]
		want := topics[t]
		if !ok || have >= want {
			continue
		}
		err := r.target.CreatePartitions(ctx, name, want)
		switch {
		case err == nil:
			r.log.Info("grew remote topic", "topic", name, "partitions", want, "cluster", r.targetAlias)
			r.remoteTopics[name] = want
		case kafka.IsInvalidPartitions(err):
			// Already grown by someone else: the metadata was older than the topic.
		default:
			r.log.Warn("could not grow remote topic", "topic", name, "partitions", want, "cluster", r.targetAlias, "error", err)
			r.problem(name, fmt.Sprintf("remote topic %s on %s could not grow to %d partitions, so its new partitions are not replicated: %v", name, r.targetAlias, want, err))
		}
	}
}

// publish hands the runtime the task set computed from the current partition order, unless it is the set
// published last.
func (r *sourcePlanner) publish(ctx context.Context) error {
	configs := sourceTaskConfigs(r.cfg.Raw, r.order, r.cfg.TasksMax, r.assignment, r.lastMove)
	if r.planned && slices.EqualFunc(configs, r.published, maps.Equal) {
		r.log.Debug("task set unchanged", "tasks", len(configs), "partitions", len(r.order))
		return nil
	}
	if err := r.env.SetTaskConfigs(ctx, configs); err != nil {
		return plannerRetry(fmt.Errorf("publish task configs: %w", err))
	}
	r.log.Info("planned source tasks", "tasks", len(configs), "partitions", len(r.order), "topics", len(r.topics))
	r.published, r.planned = configs, true
	return nil
}

// syncTopicConfigs is MM2's syncTopicConfigs: the configs of every replicated topic whose remote topic
// exists are applied to the remote topic incrementally (see topicConfigOps). A topic whose change fails is
// logged and synced again next time.
func (r *sourcePlanner) syncTopicConfigs(ctx context.Context) error {
	var topics, remotes []string
	for _, t := range slices.Sorted(maps.Keys(r.topics)) {
		if _, ok := r.remoteTopics[r.remoteName(t)]; ok {
			topics = append(topics, t)
			remotes = append(remotes, r.remoteName(t))
		}
	}
	if len(topics) == 0 {
		return nil
	}
	source, err := r.source.TopicConfigs(ctx, topics)
	if err != nil {
		return fmt.Errorf("describe topic configs on source cluster %s: %w", r.sourceAlias, err)
	}
	// Knowing the remote configs only saves operations, so a target that refuses to describe them (MM2
	// itself never asks) gets every operation instead.
	current, err := r.target.TopicConfigs(ctx, remotes)
	if err != nil {
		if plannerTransient(err) {
			return fmt.Errorf("describe topic configs on target cluster %s: %w", r.targetAlias, err)
		}
		r.log.Debug("cannot describe remote topic configs; sending every config operation", "cluster", r.targetAlias, "error", err)
		current = nil
	}
	var firstTransient error
	for i, t := range topics {
		entries, ok := source[t]
		if !ok {
			continue // deleted since the last refresh
		}
		var remote []kafka.ConfigEntry
		if current != nil {
			if remote, ok = current[remotes[i]]; !ok {
				continue // the remote topic is gone
			}
		}
		ops := topicConfigOps(entries, remote, r.configFilter)
		if len(ops) == 0 {
			continue
		}
		if err := r.target.AlterTopicConfigs(ctx, remotes[i], ops); err != nil {
			if !plannerTransient(err) {
				r.log.Warn("could not sync remote topic configs", "topic", remotes[i], "cluster", r.targetAlias, "error", err)
			} else if firstTransient == nil {
				firstTransient = fmt.Errorf("sync configs of remote topic %s: %w", remotes[i], err)
			}
			continue
		}
		r.log.Info("synced remote topic configs", "topic", remotes[i], "changed", configOpNames(ops))
	}
	return firstTransient
}

func configOpNames(ops []kafka.ConfigOp) []string {
	names := make([]string, len(ops))
	for i, op := range ops {
		names[i] = op.Name
	}
	return names
}

func (r *sourcePlanner) remoteName(topic string) string {
	return r.policy.FormatRemoteTopic(r.sourceAlias, topic)
}

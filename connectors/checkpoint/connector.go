package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kmirror/kmirror/connectors"
	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/tasks"
)

// checkpointConnector is MirrorCheckpointConnector's planning side: it creates the checkpoints topic on the
// target, finds the source consumer groups to checkpoint (the group filter, and a committed offset on a topic
// the topic filter accepts), and deals them in contiguous chunks to min(tasks.max, #groups) tasks.
type checkpointConnector struct {
	name string
	cfg  config
	log  *slog.Logger
}

// Retry delay of the connector's jobs after a failure (an unreachable cluster).
const checkpointRetryDelay = 5 * time.Second

func (c *checkpointConnector) Run(ctx context.Context, env tasks.ConnectorEnv) error {
	if err := env.Running(ctx); err != nil {
		return connectors.DropWhenDone(ctx, err)
	}
	if !c.cfg.Enabled || !c.cfg.EmitCheckpointsEnabled {
		// MM2 at this snapshot keeps throwing for a disabled checkpoint connector (KAFKA-18021); zero tasks is
		// what it was meant to do.
		c.log.Info("checkpoints are disabled", "source", c.cfg.SourceAlias(), "target", c.cfg.TargetAlias())
		if err := env.SetTaskConfigs(ctx, nil); err != nil {
			return connectors.DropWhenDone(ctx, err)
		}
		<-ctx.Done()
		return nil
	}
	policy, err := mirror.NewReplicationPolicy(c.cfg.Raw)
	if err != nil {
		return err
	}
	topicFilter, err := mirror.NewTopicFilter(c.cfg.Raw)
	if err != nil {
		return err
	}
	groupFilter, err := mirror.NewGroupFilter(c.cfg.Raw)
	if err != nil {
		return err
	}
	source, err := c.cfg.NewAdmin(clientconfig.SourceAdmin, c.name, -1, c.log)
	if err != nil {
		return err
	}
	defer source.Close()
	target, err := c.cfg.NewAdmin(clientconfig.TargetAdmin, c.name, -1, c.log)
	if err != nil {
		return err
	}
	defer target.Close()

	topic := policy.CheckpointsTopic(c.cfg.SourceAlias())
	topicCreated := false
	refresh := time.Duration(c.cfg.RefreshGroupsIntervalSeconds) * time.Second
	if !c.cfg.RefreshGroupsEnabled || refresh <= 0 {
		refresh = 0
	}
	var published []string
	planned := false
	reported := ""
	status := connectors.NewFailingJobs(env, c.cfg.Config, c.name)
	const createJob, groupsJob = "create the checkpoints topic", "list the consumer groups"
	for {
		var notices []kmtype.Notice
		delay := refresh
		if !topicCreated {
			// MM2 only logs a failure here; the tasks retry their sends (and create the topic) themselves. The
			// connector shows FAILED until the topic exists.
			if err := connectors.CreateCompactedTopic(ctx, target, topic, int(c.cfg.CheckpointsTopicReplicationFactor)); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				c.log.Warn("could not create the checkpoints topic, will retry", "topic", topic, "cluster", c.cfg.TargetAlias(), "error", err)
				status.Fail(createJob, fmt.Errorf("%s %s on target cluster %s: %w", createJob, topic, c.cfg.TargetAlias(), err))
				delay = checkpointRetryDelay
			} else {
				topicCreated = true
				status.OK(createJob)
			}
		}
		groups, err := findGroups(ctx, source, groupFilter, topicFilter)
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			c.log.Warn("could not list the source cluster's consumer groups, will retry", "cluster", c.cfg.SourceAlias(), "error", err)
			status.Fail(groupsJob, fmt.Errorf("%s of source cluster %s: %w", groupsJob, c.cfg.SourceAlias(), err))
			delay = checkpointRetryDelay
		default:
			status.OK(groupsJob)
			if !planned || !slices.Equal(groups, published) {
				if err := env.SetTaskConfigs(ctx, c.taskConfigs(groups)); err != nil {
					return connectors.DropWhenDone(ctx, err)
				}
				if planned {
					c.log.Info("consumer groups changed", "groups", len(groups))
				}
				published, planned = groups, true
			}
			if len(groups) == 0 {
				notices = append(notices, kmtype.Notice{Kind: NoticeNoGroups, Message: fmt.Sprintf(
					"no consumer group of source cluster %s matches groups=%q and groups.exclude=%q with a committed offset on a topic the topic filter accepts (topics=%q): the connector runs no task",
					c.cfg.SourceAlias(), strings.Join(c.cfg.Groups, ","), strings.Join(c.cfg.GroupsExclude, ","), c.topicsSetting())})
			}
		}
		recovered, err := status.Show(ctx, "")
		switch {
		case err != nil && (errors.Is(err, kmtype.ErrFenced) || ctx.Err() != nil):
			return connectors.DropWhenDone(ctx, err)
		case err != nil:
			c.log.Warn("could not show the connector's jobs in its status; will retry", "error", err)
			delay = checkpointRetryDelay
		case recovered:
			reported = "" // Running showed no notice
		}
		if msg := noticeText(notices); !status.Failing() && msg != reported {
			if err := env.Report(ctx, notices); err != nil {
				return connectors.DropWhenDone(ctx, err)
			}
			reported = msg
		}
		if delay == 0 && planned {
			<-ctx.Done()
			return nil
		}
		if delay == 0 {
			delay = checkpointRetryDelay
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(delay):
		}
	}
}

func noticeText(ns []kmtype.Notice) string {
	var b strings.Builder
	for _, n := range ns {
		b.WriteString(n.Kind + ":" + n.Message + "\n")
	}
	return b.String()
}

// findGroups lists the source's consumer groups that the group filter accepts and that have a committed offset
// for at least one topic the topic filter accepts (KAFKA-14837), sorted. A group id with a comma cannot be
// carried in task.assigned.groups (MM2 has the same limit) and is left out with a warning.
func findGroups(ctx context.Context, source *kafka.Admin, groupFilter *mirror.GroupFilter, topicFilter *mirror.TopicFilter) ([]string, error) {
	all, err := source.ListGroups(ctx)
	if err != nil {
		return nil, err
	}
	var candidates []string
	for _, g := range all {
		if groupFilter.Accepts(g) && !strings.Contains(g, ",") {
			candidates = append(candidates, g)
		}
	}
	if len(candidates) == 0 {
		return nil, nil
	}
	offsets, failed, err := source.GroupOffsets(ctx, candidates)
	if err != nil {
		return nil, err
	}
	if len(failed) > 0 && len(offsets) == 0 {
		for g, err := range failed {
			return nil, fmt.Errorf("read the offsets of group %s: %w", g, err)
		}
	}
	var out []string
	for _, g := range slices.Sorted(maps.Keys(offsets)) {
		for _, o := range offsets[g] {
			if topicFilter.Accepts(o.Topic) {
				out = append(out, g)
				break
			}
		}
	}
	return out, nil
}

// taskConfigs deals groups into contiguous chunks over min(tasks.max, #groups) tasks, as Connect's
// ConnectorUtils.groupPartitions does.
func (c *checkpointConnector) taskConfigs(groups []string) []map[string]string {
	if len(groups) == 0 {
		return nil
	}
	chunks := mirror.GroupContiguous(groups, min(max(c.cfg.TasksMax, 1), len(groups)))
	out := make([]map[string]string, len(chunks))
	for i, chunk := range chunks {
		task := maps.Clone(c.cfg.Raw)
		task[connectors.TaskClassKey] = connectors.CheckpointTaskClass
		task[mirror.TaskAssignedGroupsConfig] = strings.Join(chunk, ",")
		task[mirror.TaskIndexConfig] = strconv.Itoa(i)
		out[i] = task
	}
	return out
}

// topicsSetting is the topic filter's "topics" as in force: the default when the config leaves it out. The key is
// not in the checkpoint connector's definition (MM2's DefaultTopicFilter reads it from the raw config).
func (c *checkpointConnector) topicsSetting() string {
	if v, ok := c.cfg.Raw[mirror.TopicsConfig]; ok {
		return v
	}
	return mirror.TopicsDefault
}

package kafka

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// groupOffsetsParallelism bounds the offset fetches GroupOffsets has in flight: librdkafka takes one group per
// request.
const groupOffsetsParallelism = 8

// GroupOffset is a committed offset of a consumer group for one partition.
type GroupOffset struct {
	Topic     string
	Partition int32
	Offset    int64  // the committed offset: the next record the group reads
	Metadata  string // commit metadata, "" when none
}

// GroupState is what DescribeGroups tells of a group.
type GroupState struct {
	Group string
	// State is Kafka's state name as Java prints it: "Empty", "Stable", "Dead", "PreparingRebalance",
	// "CompletingRebalance" or "Unknown". librdkafka knows no other names, so a consumer-protocol group that is
	// "Assigning" or "Reconciling" reads as "Unknown".
	State   string
	Members int
	// Exists is false when the broker says the group does not exist: GROUP_ID_NOT_FOUND, or Dead with no members
	// (what DescribeGroups before v6 answers for an unknown group).
	Exists bool
}

// ListGroups returns the id of every consumer group of the cluster, sorted. It lists groups of both the classic
// and the consumer protocol; librdkafka leaves out groups of other protocol types (Connect, share, streams).
func (a *Admin) ListGroups(ctx context.Context) ([]string, error) {
	ctx, cancel := a.ctx(ctx)
	defer cancel()
	res, err := a.a.ListConsumerGroups(ctx, ckafka.SetAdminRequestTimeout(a.Timeout))
	if err != nil {
		return nil, fmt.Errorf("list consumer groups: %w", a.cause(ctx, err))
	}
	// Each broker answers for the groups it coordinates: a broker that failed leaves groups out, so the
	// listing is incomplete and must not be taken as the set of groups.
	if len(res.Errors) > 0 {
		return nil, fmt.Errorf("list consumer groups: %w", errors.Join(res.Errors...))
	}
	out := make([]string, 0, len(res.Valid))
	for _, g := range res.Valid {
		out = append(out, g.GroupID)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// GroupOffsets returns the committed offsets of groups, sorted by topic and partition; partitions without a
// committed offset are left out. A group whose fetch succeeded is in the first map, even with no offsets; a
// group whose fetch failed is in the second map with its error. The returned error is for the operation as a
// whole (the context ended before every group was fetched); the maps are nil then. The admin Timeout bounds
// the whole operation, not each group.
func (a *Admin) GroupOffsets(ctx context.Context, groups []string) (map[string][]GroupOffset, map[string]error, error) {
	offsets := make(map[string][]GroupOffset, len(groups))
	failed := map[string]error{}
	if len(groups) == 0 {
		return offsets, failed, nil
	}
	unique := slices.Compact(slices.Sorted(slices.Values(groups)))
	ctx, cancel := a.ctx(ctx)
	defer cancel()

	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		todo = make(chan string)
	)
	for range min(groupOffsetsParallelism, len(unique)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for g := range todo {
				got, err := a.groupOffsets(ctx, g)
				mu.Lock()
				if err != nil {
					failed[g] = err
				} else {
					offsets[g] = got
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for _, g := range unique {
		select {
		case todo <- g:
		case <-ctx.Done():
			break feed
		}
	}
	close(todo)
	wg.Wait()
	// A group that failed because the context ended tells nothing of the group itself.
	if err := ctx.Err(); err != nil && (len(offsets)+len(failed) < len(unique) || anyContextError(failed)) {
		return nil, nil, fmt.Errorf("fetch offsets of %d consumer groups: %w", len(unique), err)
	}
	return offsets, failed, nil
}

func anyContextError(errs map[string]error) bool {
	for _, err := range errs {
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			return true
		}
	}
	return false
}

// groupOffsets fetches the committed offsets of one group.
func (a *Admin) groupOffsets(ctx context.Context, group string) ([]GroupOffset, error) {
	res, err := a.a.ListConsumerGroupOffsets(ctx, []ckafka.ConsumerGroupTopicPartitions{{Group: group}},
		ckafka.SetAdminRequestTimeout(a.Timeout))
	if err != nil {
		return nil, fmt.Errorf("fetch offsets of group %s: %w", group, a.cause(ctx, err))
	}
	var out []GroupOffset
	var errs []error
	for _, r := range res.ConsumerGroupsTopicPartitions {
		if r.Group != group {
			continue
		}
		for _, tp := range r.Partitions {
			topic := ""
			if tp.Topic != nil {
				topic = *tp.Topic
			}
			if tp.Error != nil {
				errs = append(errs, fmt.Errorf("%s [%d]: %w", topic, tp.Partition, tp.Error))
				continue
			}
			if tp.Offset < 0 { // no committed offset: -1 from the broker, OffsetInvalid from librdkafka
				continue
			}
			o := GroupOffset{Topic: topic, Partition: tp.Partition, Offset: int64(tp.Offset)}
			if tp.Metadata != nil {
				o.Metadata = *tp.Metadata
			}
			out = append(out, o)
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("fetch offsets of group %s: %w", group, errors.Join(errs...))
	}
	slices.SortFunc(out, func(x, y GroupOffset) int {
		return cmp.Or(cmp.Compare(x.Topic, y.Topic), cmp.Compare(x.Partition, y.Partition))
	})
	return out, nil
}

// DescribeGroups returns the state of each group. A group the broker does not know is in the map with Exists
// false and State "Dead". Any other per-group error fails the call, naming the group.
func (a *Admin) DescribeGroups(ctx context.Context, groups []string) (map[string]GroupState, error) {
	out := make(map[string]GroupState, len(groups))
	if len(groups) == 0 {
		return out, nil
	}
	ctx, cancel := a.ctx(ctx)
	defer cancel()
	res, err := a.a.DescribeConsumerGroups(ctx, groups, ckafka.SetAdminRequestTimeout(a.Timeout))
	if err != nil {
		return nil, fmt.Errorf("describe consumer groups: %w", a.cause(ctx, err))
	}
	var errs []error
	for _, d := range res.ConsumerGroupDescriptions {
		switch d.Error.Code() {
		case ckafka.ErrNoError:
			state := d.State.String()
			out[d.GroupID] = GroupState{Group: d.GroupID, State: state, Members: len(d.Members),
				Exists: !(d.State == ckafka.ConsumerGroupStateDead && len(d.Members) == 0)}
		case ckafka.ErrGroupIDNotFound:
			out[d.GroupID] = GroupState{Group: d.GroupID, State: ckafka.ConsumerGroupStateDead.String()}
		default:
			errs = append(errs, fmt.Errorf("describe consumer group %s: %w", d.GroupID, d.Error))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// AlterGroupOffsets commits offsets (with their metadata) for group, as Java's alterConsumerGroupOffsets. The
// broker accepts it only while the group has no members: for an active group the error satisfies IsGroupActive.
func (a *Admin) AlterGroupOffsets(ctx context.Context, group string, offsets []GroupOffset) error {
	if len(offsets) == 0 {
		return nil
	}
	tps := make([]ckafka.TopicPartition, len(offsets))
	for i, o := range offsets {
		topic, metadata := o.Topic, o.Metadata
		tps[i] = ckafka.TopicPartition{Topic: &topic, Partition: o.Partition, Offset: ckafka.Offset(o.Offset), Metadata: &metadata}
	}
	ctx, cancel := a.ctx(ctx)
	defer cancel()
	res, err := a.a.AlterConsumerGroupOffsets(ctx, []ckafka.ConsumerGroupTopicPartitions{{Group: group, Partitions: tps}},
		ckafka.SetAdminRequestTimeout(a.Timeout))
	if err != nil {
		return fmt.Errorf("alter offsets of group %s: %w", group, a.cause(ctx, err))
	}
	var errs []error
	for _, r := range res.ConsumerGroupsTopicPartitions {
		for _, tp := range r.Partitions {
			if tp.Error == nil {
				continue
			}
			topic := ""
			if tp.Topic != nil {
				topic = *tp.Topic
			}
			errs = append(errs, fmt.Errorf("%s [%d]: %w", topic, tp.Partition, tp.Error))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("alter offsets of group %s: %w", group, errors.Join(errs...))
	}
	return nil
}

// IsGroupActive tells whether err says a group's offsets cannot be altered because the group has members or
// is rebalancing. The broker answers an admin commit to such a group with UNKNOWN_MEMBER_ID (the admin is not a
// member), or REBALANCE_IN_PROGRESS while the group is completing a rebalance.
func IsGroupActive(err error) bool {
	return hasCode(err, ckafka.ErrUnknownMemberID) || hasCode(err, ckafka.ErrRebalanceInProgress) ||
		hasCode(err, ckafka.ErrIllegalGeneration) || hasCode(err, ckafka.ErrStaleMemberEpoch) ||
		hasCode(err, ckafka.ErrFencedMemberEpoch)
}

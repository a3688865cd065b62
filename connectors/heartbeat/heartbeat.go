package heartbeat

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strconv"
	"time"

	"github.com/kmirror/kmirror/connectors"
	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/tasks"
)

// heartbeatConnector is MirrorHeartbeatConnector: it creates the heartbeats topic on the target cluster and
// runs one task that emits a heartbeat every emit.heartbeats.interval.seconds.
type heartbeatConnector struct {
	name string
	cfg  config
	log  *slog.Logger
}

func (c *heartbeatConnector) Run(ctx context.Context, env tasks.ConnectorEnv) error {
	if err := env.Running(ctx); err != nil {
		return err
	}
	policy, err := mirror.NewReplicationPolicy(c.cfg.Raw)
	if err != nil {
		return err
	}
	var configs []map[string]string
	if c.cfg.EmitHeartbeatsEnabled {
		task := maps.Clone(c.cfg.Raw)
		// Only task.class is added: MirrorHeartbeatConnector's one task config is the connector's config, with no
		// task.index (GET /connectors/{c}/tasks shows it).
		task[connectors.TaskClassKey] = connectors.HeartbeatTaskClass
		configs = append(configs, task)
	}
	if err := env.SetTaskConfigs(ctx, configs); err != nil {
		return err
	}
	// MM2 creates the topic even when emission is disabled, and only logs a failure: the task retries its
	// sends until the topic exists or its retry budget is spent. Here the connector shows FAILED, naming the
	// target cluster, and retries until the topic exists.
	const createJob = "create the heartbeats topic"
	status := connectors.NewFailingJobs(env, c.cfg.Config, c.name)
	delay := connectors.JobRetryMin
	for {
		topic := policy.HeartbeatsTopic()
		err := c.createTopic(ctx, topic)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			c.log.Warn("could not create the heartbeats topic, will retry", "topic", topic, "retry_in", delay, "error", err)
			status.Fail(createJob, fmt.Errorf("%s %s on target cluster %s: %w", createJob, topic, c.cfg.TargetAlias(), err))
		} else {
			status.OK(createJob)
		}
		if _, serr := status.Show(ctx, ""); serr != nil {
			if errors.Is(serr, kmtype.ErrFenced) {
				return serr
			}
			c.log.Warn("could not show the connector's jobs in its status; will retry", "error", serr)
		} else if err == nil {
			<-ctx.Done()
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(delay):
		}
		delay = min(2*delay, connectors.JobRetryMax)
	}
}

func (c *heartbeatConnector) createTopic(ctx context.Context, topic string) error {
	admin, err := c.cfg.NewAdmin(clientconfig.TargetAdmin, c.name, -1, c.log)
	if err != nil {
		return err
	}
	defer admin.Close()
	return connectors.CreateCompactedTopic(ctx, admin, topic, int(c.cfg.HeartbeatsTopicReplicationFactor))
}

// heartbeatTask is MirrorHeartbeatTask.
type heartbeatTask struct {
	id  tasks.TaskID
	cfg config
	log *slog.Logger
}

// heartbeatFailAfterDeliveries is how many delivery timeouts in a row a heartbeat task tolerates before it
// fails: a target that stays unreachable must show up as FAILED, not as a RUNNING task that emits nothing.
const heartbeatFailAfterDeliveries = 3

func (t *heartbeatTask) Run(ctx context.Context, env tasks.TaskEnv) error {
	policy, err := mirror.NewReplicationPolicy(t.cfg.Raw)
	if err != nil {
		return err
	}
	props, err := t.cfg.ClientProps(clientconfig.HeartbeatsProducer, t.id.Connector, t.id.Task)
	if err != nil {
		return err
	}
	deliveryTimeout := 30 * time.Second
	if ms, err := strconv.Atoi(props["message.timeout.ms"]); err == nil && ms > 0 {
		deliveryTimeout = time.Duration(ms) * time.Millisecond
	} else {
		// librdkafka's 0 means "forever"; a heartbeat that never fails would hide an unreachable target.
		props["message.timeout.ms"] = strconv.Itoa(int(deliveryTimeout.Milliseconds()))
	}

	deliveries := make(chan kafka.Delivery, 64)
	stopped := make(chan struct{})
	producer, err := kafka.NewProducer(props, t.log, func(d kafka.Delivery) {
		select {
		case deliveries <- d:
		case <-stopped:
		}
	})
	if err != nil {
		return err
	}
	defer func() {
		// A stopping run delivers what it queued within its stop budget (tasks.Task); a failed one drops it: the
		// next run emits heartbeats of its own.
		if ctx.Err() != nil {
			producer.Flush(env.StopContext())
		}
		close(stopped)
		producer.Close()
	}()
	if err := env.Running(ctx); err != nil {
		return err
	}

	topic := policy.HeartbeatsTopic()
	source, target := t.cfg.SourceAlias(), t.cfg.TargetAlias()
	interval := time.Duration(t.cfg.EmitHeartbeatsIntervalSeconds) * time.Second
	if interval <= 0 {
		interval = time.Second
	}
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	lastDelivered := time.Now()
	active := connectors.NewTopicRecorder(env, topic, t.log)
	emit := func() error {
		now := time.Now()
		hb := mirror.Heartbeat{SourceClusterAlias: source, TargetClusterAlias: target, Timestamp: now.UnixMilli()}
		key, value, err := mirror.Encode(hb)
		if err != nil {
			return err
		}
		err = producer.Produce(topic, 0, key, value, nil, now, nil)
		if errors.Is(err, kafka.ErrQueueFull) {
			return nil // the next tick tries again; deliveries are still being drained
		}
		return err
	}
	if err := emit(); err != nil {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
			if err := producer.AuthFailure(); err != nil {
				// The heartbeats would only time out, one after the other, with the reason lost.
				return fmt.Errorf("emit heartbeats to %s on cluster %s: authenticate: %w", topic, target, err)
			}
			if err := emit(); err != nil {
				return err
			}
		case d := <-deliveries:
			if d.Err == nil {
				lastDelivered = time.Now()
				active.Delivered(ctx, lastDelivered)
				continue
			}
			if !kafka.IsRetriable(d.Err) {
				return fmt.Errorf("emit heartbeat to %s on cluster %s: %w", topic, target, d.Err)
			}
			if silent := time.Since(lastDelivered); silent > heartbeatFailAfterDeliveries*deliveryTimeout {
				return fmt.Errorf("no heartbeat delivered to %s on cluster %s for %s: %w", topic, target, silent.Round(time.Second), d.Err)
			}
			t.log.Warn("heartbeat not delivered, will keep trying", "topic", topic, "error", d.Err)
		}
	}
}

package kafka

import (
	"time"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// Option configures a Consumer or a Producer when it is created.
type Option func(*options)

type options struct {
	statsEvery    time.Duration
	onStats       func(json string)
	deliveryTimes bool
}

func applyOptions(opts []Option) options {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// WithStats asks librdkafka for its statistics every interval (statistics.interval.ms) and hands each JSON
// document to fn: for a Consumer on the goroutine that calls Poll, for a Producer on its delivery goroutine.
// fn must be quick; it is never called after Close has returned. A zero interval or a nil fn does nothing.
// librdkafka builds the document under its own locks, so intervals of seconds cost next to nothing.
func WithStats(interval time.Duration, fn func(json string)) Option {
	return func(o *options) {
		if interval > 0 && fn != nil {
			o.statsEvery, o.onStats = interval, fn
		}
	}
}

// WithDeliveryTimes makes a Producer's delivery reports carry when they arrived (Delivery.At), for latency
// metrics; without it At is zero and no clock is read.
func WithDeliveryTimes() Option { return func(o *options) { o.deliveryTimes = true } }

// apply sets statistics.interval.ms when statistics were asked for.
func (o options) apply(cm *ckafka.ConfigMap) *ckafka.ConfigMap {
	if o.onStats != nil {
		(*cm)["statistics.interval.ms"] = int(max(o.statsEvery.Milliseconds(), 1))
	}
	return cm
}

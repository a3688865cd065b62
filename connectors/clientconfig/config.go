package clientconfig

import "time"

// Config is the translation of one client's Java properties.
type Config struct {
	// Props are the librdkafka properties, ready for a kafka.ConfigMap.
	Props map[string]string
	// Dropped lists, sorted, the keys that were accepted but have no effect:
	// Java keys without a librdkafka counterpart whose absence changes nothing
	// (metrics.*, serializers, ...), keys that apply to another codec or
	// protocol than the one in use, and user values replaced by forced settings.
	Dropped []string
	// Warnings describe, one per key, values that were clamped to librdkafka's
	// range or only approximated. They are meant for the log.
	Warnings []string
	// MaxPollRecords is Java's max.poll.records for consumers (default 500):
	// the most records the application should take per poll-loop turn, since
	// librdkafka has no such property.
	MaxPollRecords int
	// MaxBlock is Java's max.block.ms for producers: how long a produce call may
	// wait for queue space before failing. NoLimit means wait for ever (the
	// Connect task producers' default).
	MaxBlock time.Duration
	// DefaultAPITimeout is Java's default.api.timeout.ms for consumers and
	// admins (default 60s): the timeout to give blocking calls such as
	// QueryWatermarkOffsets or admin requests.
	DefaultAPITimeout time.Duration
}

// NoLimit is the MaxBlock value meaning "wait for ever".
const NoLimit = time.Duration(1<<63 - 1)

// KeyError is a problem with one client setting.
type KeyError struct {
	// Key is the key as Translate received it (a Java or librdkafka name);
	// Validate reports it under the connector key it came from.
	Key string
	// Msg says what is wrong and, where possible, what to do instead.
	Msg string
}

// Error names the key first, so the message stands on its own in a log line.
func (e *KeyError) Error() string { return e.Key + ": " + e.Msg }

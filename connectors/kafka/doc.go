// Package kafka wraps confluent-kafka-go (librdkafka) for kmirror: admin operations, a producer whose delivery
// reports are always drained, and an assign-only consumer. It is the only package that imports
// confluent-kafka-go; everything it exports speaks kmirror's own types, and it takes librdkafka property maps
// already translated from Java client names (see package clientconfig).
package kafka

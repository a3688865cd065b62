package kafka

import ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"

// LastHeader returns the value of the record's last header named key, as Kafka's Headers.lastHeader does,
// and whether it has one.
func (r Record) LastHeader(key string) ([]byte, bool) {
	for i := len(r.m.Headers) - 1; i >= 0; i-- {
		if r.m.Headers[i].Key == key {
			return r.m.Headers[i].Value, true
		}
	}
	return nil, false
}

// AddHeader appends a header to the record, for Producer.Forward to write with it.
func (r Record) AddHeader(h Header) {
	r.m.Headers = append(r.m.Headers, ckafka.Header{Key: h.Key, Value: h.Value})
}

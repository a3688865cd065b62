package mirror

// Record is one of MM2's internal records (Heartbeat, Checkpoint, OffsetSync) as written to Kafka.
type Record interface {
	Key() ([]byte, error)
	Value() ([]byte, error)
}

// Encode returns rec's key and value, or the first failure to encode either.
func Encode(rec Record) (key, value []byte, err error) {
	if key, err = rec.Key(); err != nil {
		return nil, nil, err
	}
	if value, err = rec.Value(); err != nil {
		return nil, nil, err
	}
	return key, value, nil
}

package mirror

import "fmt"

// Heartbeat is the record MirrorHeartbeatConnector writes to the heartbeats topic every interval; its
// replicated copies ("A.heartbeats") let clients measure replication hops and liveness.
type Heartbeat struct {
	SourceClusterAlias string
	TargetClusterAlias string
	// Timestamp is milliseconds since the epoch.
	Timestamp int64
}

// Key encodes the record key: sourceClusterAlias STRING, targetClusterAlias STRING.
func (h Heartbeat) Key() ([]byte, error) {
	var w schemaWriter
	w.string("sourceClusterAlias", h.SourceClusterAlias)
	w.string("targetClusterAlias", h.TargetClusterAlias)
	b, err := w.bytes()
	if err != nil {
		return nil, fmt.Errorf("encode heartbeat key: %w", err)
	}
	return b, nil
}

// Value encodes the record value: version INT16 (0), timestamp INT64. It is always 10 bytes.
func (h Heartbeat) Value() ([]byte, error) {
	var w schemaWriter
	w.int16(recordVersion)
	w.int64(h.Timestamp)
	return w.bytes()
}

// DecodeHeartbeat decodes a heartbeat record.
func DecodeHeartbeat(key, value []byte) (Heartbeat, error) {
	k := schemaReader{buf: key}
	h := Heartbeat{
		SourceClusterAlias: k.string("sourceClusterAlias"),
		TargetClusterAlias: k.string("targetClusterAlias"),
	}
	if k.err != nil {
		return Heartbeat{}, fmt.Errorf("decode heartbeat key: %w", k.err)
	}
	v := schemaReader{buf: value}
	v.int16("version")
	h.Timestamp = v.int64("timestamp")
	if v.err != nil {
		return Heartbeat{}, fmt.Errorf("decode heartbeat value: %w", v.err)
	}
	return h, nil
}

package mirror

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
	return w.encoded("heartbeat key")
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
	return decodeRecord("heartbeat", key, value, func(k *schemaReader, h *Heartbeat) {
		h.SourceClusterAlias = k.string("sourceClusterAlias")
		h.TargetClusterAlias = k.string("targetClusterAlias")
	}, func(v *schemaReader, h *Heartbeat) {
		v.int16("version")
		h.Timestamp = v.int64("timestamp")
	})
}

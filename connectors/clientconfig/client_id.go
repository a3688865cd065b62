package clientconfig

import (
	"strconv"
	"strings"
)

// KeyClientID is the client setting that names a client: in its metric labels and in librdkafka's log lines.
const KeyClientID = "client.id"

// clientIDReferenceMsg refuses a config provider reference in client.id: the name is shown in metric labels
// and log lines, which would show the resolved value.
const clientIDReferenceMsg = "config provider references are not allowed in client.id: it names the client in metric labels and log lines, which would show the resolved value"

// isClientIDKey reports whether a connector key sets a client's client.id (under any client prefix).
func isClientIDKey(key string) bool {
	_, name, ok := clientPrefix(key)
	return ok && (name == KeyClientID || name == "override."+KeyClientID)
}

// ClientID builds MM2's client.id:
// [<userClientID>|]<source>-><target>|<connector>[-<taskIndex>][|<label>].
// userClientID is the client.id Resolve returned, if any; an empty one adds no
// prefix. A negative taskIndex (connector-level clients) adds no suffix, and
// an empty label (see Label) adds no role part.
func ClientID(userClientID, source, target, connector string, taskIndex int, label string) string {
	var b strings.Builder
	if userClientID != "" {
		b.WriteString(userClientID)
		b.WriteByte('|')
	}
	b.WriteString(source)
	b.WriteString("->")
	b.WriteString(target)
	b.WriteByte('|')
	b.WriteString(connector)
	if taskIndex >= 0 {
		b.WriteByte('-')
		b.WriteString(strconv.Itoa(taskIndex))
	}
	if label != "" {
		b.WriteByte('|')
		b.WriteString(label)
	}
	return b.String()
}

// Label is MM2's role name in client.id, such as "replication-consumer" or
// "offset-syncs-target-producer". It depends on the connector class (the
// checkpoint connector's admins are "checkpoint-source-admin", ...) and on
// offset-syncs.topic.location, both read from connectorConfig. Connect task
// producers have no MM2 label: Label returns "" for them (Java's Connect names
// them connector-producer-<connector>-<task> unless the user sets client.id).
func Label(role Role, connectorConfig map[string]string) string {
	class := connectorTypeOf(connectorConfig[keyConnectorClass])
	loc := offsetSyncsLocation(connectorConfig)
	switch role {
	case ReplicationConsumer:
		return "replication-consumer"
	case SourceAdmin:
		if class == connectorCheckpoint {
			return "checkpoint-source-admin"
		}
		return "replication-source-admin"
	case TargetAdmin:
		switch class {
		case connectorCheckpoint:
			return "checkpoint-target-admin"
		case connectorHeartbeat:
			return "heartbeats-target-admin"
		}
		return "replication-target-admin"
	case OffsetSyncsProducer:
		return "offset-syncs-" + loc + "-producer"
	case OffsetSyncsAdmin:
		return "offset-syncs-" + loc + "-admin"
	case OffsetSyncsConsumer:
		return "offset-syncs-" + loc + "-consumer"
	case CheckpointsConsumer:
		return "checkpoints-target-consumer"
	}
	return ""
}

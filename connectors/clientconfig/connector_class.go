package clientconfig

import "strings"

// connectorType is one of MM2's three connectors.
type connectorType int

const (
	connectorUnknown connectorType = iota
	connectorSource
	connectorCheckpoint
	connectorHeartbeat
)

// connectorTypeOf recognises MM2 connector.class values the way Connect does:
// the fully qualified name, the simple class name, or the simple name without
// its "Connector" suffix.
func connectorTypeOf(class string) connectorType {
	class = strings.TrimSpace(class)
	class = strings.TrimPrefix(class, "org.apache.kafka.connect.mirror.")
	class = strings.TrimSuffix(class, "Connector")
	switch class {
	case "MirrorSource":
		return connectorSource
	case "MirrorCheckpoint":
		return connectorCheckpoint
	case "MirrorHeartbeat":
		return connectorHeartbeat
	}
	return connectorUnknown
}

// rolesOf lists the clients a connector builds, given its config. A source
// connector with emit.offset-syncs.enabled=false builds no offset-syncs clients.
func rolesOf(t connectorType, connectorConfig map[string]string) []Role {
	switch t {
	case connectorSource:
		roles := []Role{ReplicationConsumer, ReplicationProducer, SourceAdmin, TargetAdmin}
		if !strings.EqualFold(strings.TrimSpace(connectorConfig["emit.offset-syncs.enabled"]), "false") {
			roles = append(roles, OffsetSyncsProducer, OffsetSyncsAdmin)
		}
		return roles
	case connectorCheckpoint:
		return []Role{SourceAdmin, TargetAdmin, OffsetSyncsConsumer, OffsetSyncsAdmin,
			CheckpointsConsumer, CheckpointsProducer}
	case connectorHeartbeat:
		return []Role{TargetAdmin, HeartbeatsProducer}
	}
	return nil
}

package clientconfig

import "strings"

// Connector config keys read besides the client prefixes.
const (
	keyConnectorClass      = "connector.class"
	keyOffsetSyncsLocation = "offset-syncs.topic.location"
)

// producerOverridePrefix is Connect's per-connector override prefix for the
// task producer.
const producerOverridePrefix = "producer.override."

// Resolve builds the Java-named properties of one client from a connector
// config, the way MM2's MirrorConnectorConfig does: the cluster's connection
// keys (source.cluster.* or target.cluster.*, filtered to bootstrap.servers,
// security.protocol, ssl.* and sasl.*), overlaid by the generic client prefix
// (consumer., producer., admin.), overlaid by the cluster-specific one
// (source.consumer., target.producer., ...), and for Connect task producers by
// producer.override.; later layers win.
//
// A key that isConnectorKey reports as a connector key of its own is never a
// client setting, even when it starts with a client prefix:
// consumer.poll.timeout.ms is MM2's poll timeout, not poll.timeout.ms for the
// consumer. Connect's own <kind>.override. keys are not read through the
// generic <kind>. prefix either.
//
// client.id is left as the user set it (or absent): build MM2's client.id from
// it with ClientID and Label before Translate, which derives the replication
// consumer's group.id from it.
func Resolve(role Role, connectorConfig map[string]string, isConnectorKey func(string) bool) map[string]string {
	props, _ := resolve(role, connectorConfig, isConnectorKey)
	return props
}

// resolve is Resolve that also reports, for every resulting key, the connector
// key it came from, so that Validate can name the key the operator wrote.
func resolve(role Role, cfg map[string]string, isConnectorKey func(string) bool) (props, origin map[string]string) {
	if isConnectorKey == nil {
		isConnectorKey = func(string) bool { return false }
	}
	props = map[string]string{}
	origin = map[string]string{}
	layer := func(prefix string, keep func(name string) bool) {
		for k, v := range cfg {
			name, ok := strings.CutPrefix(k, prefix)
			if !ok || name == "" || isConnectorKey(k) || !keep(name) {
				continue
			}
			props[name] = v
			origin[name] = k
		}
	}
	all := func(string) bool { return true }

	side := clusterSide(role, cfg)
	kind := role.kind().String()
	layer(side+".cluster.", isConnectionKey)
	layer(kind+".", func(name string) bool {
		// producer.override.x (and Connect's consumer./admin. override
		// prefixes) are not client keys named override.x.
		return !strings.HasPrefix(name, "override.")
	})
	layer(side+"."+kind+".", all)
	if role.connectProducer() {
		layer(producerOverridePrefix, all)
	}

	return props, origin
}

// isConnectionKey is MM2's filter on cluster-level keys: only what is needed to
// reach and authenticate to the cluster goes to every client.
func isConnectionKey(name string) bool {
	return name == "bootstrap.servers" || name == "security.protocol" ||
		strings.HasPrefix(name, "ssl.") || strings.HasPrefix(name, "sasl.")
}

// clusterSide is "source" or "target": the cluster the role's client talks to.
func clusterSide(role Role, cfg map[string]string) string {
	switch role {
	case ReplicationConsumer, SourceAdmin:
		return "source"
	case OffsetSyncsProducer, OffsetSyncsAdmin, OffsetSyncsConsumer:
		return offsetSyncsLocation(cfg)
	}
	return "target"
}

// offsetSyncsLocation is offset-syncs.topic.location, "source" unless set to
// "target".
func offsetSyncsLocation(cfg map[string]string) string {
	if strings.TrimSpace(cfg[keyOffsetSyncsLocation]) == "target" {
		return "target"
	}
	return "source"
}

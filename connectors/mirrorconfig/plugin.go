package mirrorconfig

import (
	"strings"

	"github.com/kmirror/kmirror/connectors/configdef"
)

// The connector classes kmirror implements, under MM2's names.
const (
	SourceConnectorClass     = "org.apache.kafka.connect.mirror.MirrorSourceConnector"
	CheckpointConnectorClass = "org.apache.kafka.connect.mirror.MirrorCheckpointConnector"
	HeartbeatConnectorClass  = "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector"
)

// Version is the Kafka release whose MM2 connectors kmirror reproduces; it is what the
// plugins report and what connector.plugin.version may ask for.
const Version = "4.1.1"

// PluginTypeSource is the plugin type of all three MM2 connectors.
const PluginTypeSource = "source"

// Plugin describes one connector plugin, as GET /connector-plugins lists it.
type Plugin struct {
	Class   string
	Type    string
	Version string
	// Own is the plugin's own ConfigDef, what the Java connector's config() returns: Connect's
	// ConnectorConfig keys, MM2's common keys and the connector's own.
	Own *configdef.Def
}

// Plugins returns the three MM2 connectors, ordered by class name as Connect sorts plugins.
func Plugins() []Plugin {
	classes := pluginClasses()
	out := make([]Plugin, len(classes))
	for i, c := range classes {
		out[i] = newPlugin(c)
	}
	return out
}

// LookupPlugin finds a plugin by full class name, simple class name (MirrorSourceConnector)
// or alias without the "Connector" suffix (MirrorSource), the names Connect accepts.
// Matching is case-sensitive, as in Connect.
func LookupPlugin(classOrAlias string) (Plugin, bool) {
	for _, c := range pluginClasses() {
		simple := c[strings.LastIndex(c, ".")+1:]
		if classOrAlias == c || classOrAlias == simple || classOrAlias == prunedName(simple, "Connector") {
			return newPlugin(c), true
		}
	}
	return Plugin{}, false
}

func pluginClasses() []string {
	return []string{CheckpointConnectorClass, HeartbeatConnectorClass, SourceConnectorClass}
}

func newPlugin(class string) Plugin {
	var own []configdef.Key
	switch class {
	case CheckpointConnectorClass:
		own = mirrorCheckpointKeys()
	case HeartbeatConnectorClass:
		own = mirrorHeartbeatKeys()
	case SourceConnectorClass:
		own = mirrorSourceKeys()
	}
	return Plugin{Class: class, Type: PluginTypeSource, Version: Version, Own: ownDef(own)}
}

// ConfigDef is the definition GET /connector-plugins/{plugin}/config shows: the plugin's own
// keys first, then, for a connector, the source-connector framework keys the plugin does not
// define itself (AbstractHerder.connectorPluginConfig).
func ConfigDef(p Plugin) *configdef.Def {
	d := p.Own.Clone()
	if p.Type != PluginTypeSource {
		return d // converters show their own keys only
	}
	for _, k := range frameworkDef().Keys() {
		if !d.Has(k.Name) {
			d.Define(k)
		}
	}
	return d
}

// ownDef builds an MM2 connector's config(): ConnectorConfig, MirrorConnectorConfig's common
// keys with the client security keys, then the connector's own keys.
func ownDef(specific []configdef.Key) *configdef.Def {
	d := configdef.New().WithClassResolver(classResolver())
	for _, group := range [][]configdef.Key{connectorKeys(), mirrorBaseKeys(), clientSSLKeys(), clientSASLKeys(), specific} {
		for _, k := range group {
			d.Define(k)
		}
	}
	return d
}

// frameworkDef is SourceConnectorConfig's definition: what Connect validates every source
// connector against before asking the connector itself.
func frameworkDef() *configdef.Def {
	d := configdef.New().WithClassResolver(classResolver())
	for _, group := range [][]configdef.Key{connectorKeys(), sourceConnectorKeys()} {
		for _, k := range group {
			d.Define(k)
		}
	}
	return d
}

// connectorConfigDef is ConnectorConfig alone, which Connect falls back to when the
// requested connector version cannot be loaded. Its version key defaults to the version
// that is available.
func connectorConfigDef(p Plugin) *configdef.Def {
	d := configdef.New().WithClassResolver(classResolver())
	for _, k := range connectorKeys() {
		if k.Name == ConnectorPluginVersionConfig {
			k.Default = p.Version
		}
		d.Define(k)
	}
	return d
}

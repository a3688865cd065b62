package mm2file

import (
	"maps"
	"strings"
)

// Role prefixes of client settings: in a cluster's settings they become source.<k> or target.<k> rather than
// source.cluster.<k>.
var clientRolePrefixes = []string{"consumer", "producer", "admin"}

// Prefixes of the connector keys and of MM2's copies of a cluster's settings.
const (
	sourceClusterPrefix = "source.cluster."
	targetClusterPrefix = "target.cluster."
	sourcePrefix        = "source."
	targetPrefix        = "target."
)

// setting is a connector config value and the file key it came from ("" for a value MM2 fills in).
type setting struct {
	value, from string
}

// BaseConfig is MirrorMakerConfig.connectorBaseConfig(flow, class): the config MM2 gives the connector class
// (a full class name) of the flow's herder. Config provider references stay as written: the worker resolves
// them.
func (f *File) BaseConfig(fl Flow, class string) map[string]string {
	out := map[string]string{}
	for k, s := range f.baseSettings(fl, class) {
		out[k] = s.value
	}
	return out
}

func (f *File) baseSettings(fl Flow, class string) map[string]setting {
	props := map[string]setting{}
	names := connectorKeyNames()
	for k, v := range f.props {
		if names[k] {
			props[k] = setting{v, k}
		}
	}
	maps.Copy(props, f.withPrefix(keyConfigProviders))
	maps.Copy(props, f.withPrefix(keyReplicationPolicy))

	for _, side := range []struct{ alias, clusterPrefix, clientPrefix string }{
		{fl.Source, sourceClusterPrefix, sourcePrefix},
		{fl.Target, targetClusterPrefix, targetPrefix},
	} {
		for k, s := range f.clusterProps(side.alias) {
			if isClientKey(k) {
				props[side.clientPrefix+k] = s
			} else {
				props[side.clusterPrefix+k] = s
			}
		}
	}

	putIfAbsent(props, keyName, setting{simpleName(class), ""})
	putIfAbsent(props, keyConnectorClass, setting{class, ""})
	putIfAbsent(props, keySourceAlias, setting{fl.Source, ""})
	putIfAbsent(props, keyTargetAlias, setting{fl.Target, ""})
	maps.Copy(props, f.withPrefixStripped(fl.prefix()))
	putIfAbsent(props, keyEnabled, setting{"false", ""})
	return props
}

// clusterProps is MirrorMakerConfig.clusterProps(alias): the "<alias>.*" settings, plus copies of the client
// connection keys to their producer., consumer. and admin. forms, with top-level connection keys as fallbacks
// for both forms.
func (f *File) clusterProps(alias string) map[string]setting {
	props := f.withPrefixStripped(alias + ".")
	conn := clientConnectionKeys()
	for _, k := range conn {
		if s, ok := props[k]; ok {
			for _, role := range clientRolePrefixes {
				putIfAbsent(props, role+"."+k, s)
			}
		}
	}
	for _, k := range conn {
		if v, ok := f.props[k]; ok {
			s := setting{v, k}
			for _, role := range clientRolePrefixes {
				putIfAbsent(props, role+"."+k, s)
			}
			putIfAbsent(props, k, s)
		}
	}
	return props
}

// withPrefix is MirrorMakerConfig.stringsWithPrefix: the keys that start with prefix, prefix itself included
// (config.providers reaches the connectors).
func (f *File) withPrefix(prefix string) map[string]setting {
	out := map[string]setting{}
	for k, v := range f.props {
		if strings.HasPrefix(k, prefix) {
			out[k] = setting{v, k}
		}
	}
	return out
}

// withPrefixStripped is Utils.entriesWithPrefix(raw, prefix): the same keys without the prefix.
func (f *File) withPrefixStripped(prefix string) map[string]setting {
	out := map[string]setting{}
	for k, v := range f.props {
		if len(k) > len(prefix) && strings.HasPrefix(k, prefix) {
			out[k[len(prefix):]] = setting{v, k}
		}
	}
	return out
}

// isClientKey is MM2's "(^consumer.*|^producer.*|^admin.*)" test: no dot is required after the role.
func isClientKey(k string) bool {
	for _, role := range clientRolePrefixes {
		if strings.HasPrefix(k, role) {
			return true
		}
	}
	return false
}

func putIfAbsent(m map[string]setting, k string, s setting) {
	if _, ok := m[k]; !ok {
		m[k] = s
	}
}

func simpleName(class string) string { return class[strings.LastIndex(class, ".")+1:] }

package api

import (
	"net/http"
	"slices"
	"strings"

	"github.com/kmirror/kmirror/connectors/configdef"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
)

// Connect's plugin types in the order GET /connector-plugins lists them (ConnectorPluginsResource adds sinks,
// sources, transformations, predicates, converters, then header converters).
var pluginTypeOrder = []string{"sink", "source", "transformation", "predicate", "converter", "header_converter"}

// undefinedVersion is what a plugin without a version reports (PluginDesc.UNDEFINED_VERSION); PluginInfo
// leaves such a version out.
const undefinedVersion = "undefined"

const connectorClassKey = mirrorconfig.ConnectorClassConfig

// listPlugins is GET /connector-plugins[?connectorsOnly=true|false].
func (s *server) listPlugins(w http.ResponseWriter, r *http.Request) error {
	connectorsOnly := true
	if v := r.URL.Query().Get("connectorsOnly"); strings.TrimSpace(v) != "" {
		// Jersey reads a boolean parameter with Boolean.valueOf: only "true", in any case, is true.
		connectorsOnly = strings.EqualFold(v, "true")
	}
	// The converters kmirror accepts are listed; transformations and predicates would be, but kmirror runs none.
	plugins := append(mirrorconfig.Plugins(), mirrorconfig.ConverterPlugins()...)
	out := make([]pluginInfo, 0, len(plugins))
	for _, typ := range pluginTypeOrder {
		if connectorsOnly && typ != "sink" && typ != "source" { // as isConnector
			continue
		}
		var ofType []pluginInfo
		for _, p := range plugins {
			if p.Type != typ {
				continue
			}
			info := pluginInfo{Class: p.Class, Type: p.Type, Version: p.Version}
			if info.Version == undefinedVersion {
				info.Version = ""
			}
			ofType = append(ofType, info)
		}
		slices.SortStableFunc(ofType, func(a, b pluginInfo) int { return strings.Compare(a.Class, b.Class) })
		out = append(out, ofType...)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// pluginConfig is GET /connector-plugins/{plugin}/config: the plugin's key definitions, its own keys first.
func (s *server) pluginConfig(w http.ResponseWriter, r *http.Request) error {
	name, err := pathParam(r, "plugin")
	if err != nil {
		return err
	}
	p, ok := s.plugins.lookup(name)
	if !ok {
		return errorf(http.StatusNotFound, "Unknown plugin %s.", name)
	}
	if !slices.Contains(pluginTypeOrder, p.Type) {
		return errorf(http.StatusBadRequest, "Invalid plugin class %s. Valid types are sink, source, converter, header_converter, transformation, predicate.", name)
	}
	keys := mirrorconfig.ConfigDef(p).Keys()
	out := make([]configdef.ConfigKeyInfo, 0, len(keys))
	for _, k := range keys {
		out = append(out, configdef.KeyInfo(k))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// validatePlugin is PUT /connector-plugins/{plugin}/config/validate. The path names the plugin only for a
// consistency check; validation uses connector.class from the body, as in Connect.
func (s *server) validatePlugin(w http.ResponseWriter, r *http.Request) error {
	name, cfg, err := namedProps(w, r, "plugin")
	if err != nil {
		return err
	}
	if class, ok := cfg.get(connectorClassKey); ok && !strings.HasSuffix(withoutConnectorSuffix(class), withoutConnectorSuffix(name)) {
		return errorf(http.StatusBadRequest, "Included connector type %s does not match request type %s", class, name)
	}
	infos, verr := s.validateConnectorConfig(cfg)
	if verr != nil {
		// Connect's resource does not unwrap the validation failure, so its message carries the exception class.
		return &httpError{Status: verr.err.Status, Message: verr.exceptionClass + ": " + verr.err.Message}
	}
	writeJSON(w, http.StatusOK, infos)
	return nil
}

// withoutConnectorSuffix is ConnectorPluginsResource.normalizedPluginName: a trailing "Connector" is dropped
// unless it is the whole name.
func withoutConnectorSuffix(name string) string {
	if len(name) > len("Connector") && strings.HasSuffix(name, "Connector") {
		return strings.TrimSuffix(name, "Connector")
	}
	return name
}

// connectorType is the "type" of ConnectorInfo and ConnectorStateInfo: the plugin's type, or "unknown" when
// connector.class is missing or names no plugin (AbstractHerder.connectorType).
func (s *server) connectorType(config map[string]string) string {
	if p, ok := s.plugins.lookup(config[connectorClassKey]); ok && isConnector(p) {
		return p.Type
	}
	return "unknown"
}

// connectorKind is what ConnectorStateInfo says of a connector's plugin: its type and the version that runs.
type connectorKind struct {
	Type    string
	Version string
}

// connectorKind is the type and running version (KIP-891) of a connector. kmirror builds one version of each MM2
// connector into every worker, and connector.plugin.version admits only that one, so it is the version every
// task and connector instance of a known class runs. An unknown class has none.
func (s *server) connectorKind(config map[string]string) connectorKind {
	if p, ok := s.plugins.lookup(config[connectorClassKey]); ok && isConnector(p) {
		k := connectorKind{Type: p.Type, Version: p.Version}
		if k.Version == undefinedVersion {
			k.Version = ""
		}
		return k
	}
	return connectorKind{Type: "unknown"}
}

// isConnector tells connectors from the other plugin types (converters, transformations, predicates).
func isConnector(p mirrorconfig.Plugin) bool { return p.Type == "source" || p.Type == "sink" }

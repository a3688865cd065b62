package mirrorconfig

import (
	"maps"
	"slices"
	"strings"

	"github.com/kmirror/kmirror/connectors/configdef"
)

// NullValueMessage is Connect's error for a property sent as JSON null.
const NullValueMessage = "Null value can not be supplied as the configuration value."

// Validate runs Connect's connector validation (AbstractHerder.validateConnectorConfig in a
// distributed worker without exactly-once support) for one of the MM2 plugins, followed by
// the checks for what kmirror does not implement, and returns the body of
// PUT /connector-plugins/{plugin}/config/validate. props maps property names to values; a
// nil value is a JSON null. The result's name is the connector.class value given.
//
// clientErrors, if not nil, receives the non-null properties and returns extra errors per
// property name for client settings; they are added to the matching entry, or listed as
// entries without a definition after the connector's keys.
//
// The request-level failures Connect reports instead of a ConfigInfos (no connector.class,
// unknown class, connector.class not matching the plugin in the URL) are the caller's.
func Validate(p Plugin, props map[string]*string, clientErrors func(map[string]string) map[string][]string) configdef.ConfigInfos {
	return ValidateOn(Worker{}, p, props, clientErrors)
}

// ValidateOn is Validate as answered by worker w: with exactly-once source support enabled,
// exactly.once.support=required passes the worker's preflight check (the connector's own
// answer still applies).
func ValidateOn(w Worker, p Plugin, props map[string]*string, clientErrors func(map[string]string) map[string][]string) configdef.ConfigInfos {
	connType := ""
	if c := props[ConnectorClassConfig]; c != nil {
		connType = *c
	}
	if infos, mismatch := versionMismatch(p, props, connType); mismatch {
		return infos
	}

	framework := frameworkDef()
	frameworkValues := pointers(framework.Validate(props))
	checkExactlyOnce(p, props, frameworkValues, w)
	frameworkValues = append(frameworkValues, nullValuesWithoutKey(framework, props)...)
	converters := converterConfigs(props, frameworkValues)

	ownValues := pointers(p.Own.Validate(props))
	ownValues = connectorRules(p, props, ownValues)

	// The connector's own definitions replace the framework's, keeping the framework order.
	keys := framework.Clone()
	for _, k := range p.Own.Keys() {
		keys.Replace(k)
	}
	v := newValidation(keys, unionGroups(framework.Groups(), p.Own.Groups()))
	v.add(frameworkValues...)
	v.add(ownValues...)

	kmirrorRules(p, props, v, w)
	for _, name := range slices.Sorted(maps.Keys(props)) {
		if props[name] == nil {
			v.ensureError(name, nil, NullValueMessage)
		}
	}

	clients := clientConfigs(props, v, clientErrors)
	configs := append(v.infos(), clients...)
	configs = append(configs, converters...)
	return configdef.ConfigInfos{
		Name:       connType,
		ErrorCount: errorCount(configs),
		Groups:     v.groups,
		Configs:    configs,
	}
}

// nullValuesWithoutKey reports null properties the definition does not know, sorted by name
// (Connect's order is HashMap order, i.e. arbitrary).
func nullValuesWithoutKey(d *configdef.Def, props map[string]*string) []*configdef.ConfigValue {
	var out []*configdef.ConfigValue
	for _, name := range slices.Sorted(maps.Keys(props)) {
		if props[name] == nil && !d.Has(name) {
			cv := newValue(name, nil)
			cv.AddError(NullValueMessage)
			out = append(out, cv)
		}
	}
	return out
}

// versionMismatch handles a connector.plugin.version that excludes the version kmirror
// provides. Connect then cannot load the connector and validates only ConnectorConfig
// (AbstractHerder.invalidVersionedConnectorValidation).
func versionMismatch(p Plugin, props map[string]*string, connType string) (configdef.ConfigInfos, bool) {
	req, err := versionRequirement(props[ConnectorPluginVersionConfig])
	if err != nil || req == nil || req.contains(p.Version) {
		// An invalid requirement is reported on the key by its validator.
		return configdef.ConfigInfos{}, false
	}
	msg := "Plugin " + p.Class + " not found that matches the version range " + req.String() +
		", available versions: [" + p.Version + "]"
	def := connectorConfigDef(p)
	values := pointers(def.Validate(props))
	for _, cv := range values {
		switch cv.Name {
		case ConnectorClassConfig:
			cv.AddError(msg)
		case ConnectorPluginVersionConfig:
			cv.AddError(msg)
			cv.RecommendedValues = []string{p.Version}
		}
	}
	v := newValidation(def, def.Groups())
	v.add(values...)
	v.add(nullValuesWithoutKey(def, props)...)
	for _, name := range slices.Sorted(maps.Keys(props)) {
		if props[name] == nil {
			v.ensureError(name, nil, NullValueMessage)
		}
	}
	configs := v.infos()
	return configdef.ConfigInfos{Name: connType, ErrorCount: errorCount(configs), Groups: v.groups, Configs: configs}, true
}

// clientConfigs merges the client-settings errors. Errors for a reported property join its
// entry; the others become entries without a definition, after the connector's keys, where
// Connect lists its client override results.
func clientConfigs(props map[string]*string, v *validation, clientErrors func(map[string]string) map[string][]string) []configdef.ConfigInfo {
	if clientErrors == nil {
		return nil
	}
	nonNull := map[string]string{}
	for k, raw := range props {
		if raw != nil {
			nonNull[k] = *raw
		}
	}
	errs := clientErrors(nonNull)
	var out []configdef.ConfigInfo
	for _, name := range slices.Sorted(maps.Keys(errs)) {
		if len(errs[name]) == 0 {
			continue
		}
		if cv := v.find(name); cv != nil {
			cv.Errors = append(cv.Errors, errs[name]...)
			continue
		}
		cv := newValue(name, props[name])
		cv.Errors = append(cv.Errors, errs[name]...)
		out = append(out, configdef.ConfigInfo{Value: valueInfo(cv)})
	}
	return out
}

// trimmed returns the Java-trimmed property value, or "" and false when it is absent or null.
func trimmed(props map[string]*string, name string) (string, bool) {
	raw := props[name]
	if raw == nil {
		return "", false
	}
	return strings.TrimFunc(*raw, func(r rune) bool { return r <= ' ' }), true
}

package mirrorconfig

import (
	"strings"

	"github.com/kmirror/kmirror/connectors/configdef"
)

// converterSlot is one of a connector's three converter settings.
type converterSlot struct {
	classKey   string
	versionKey string
	iface      string
	typeName   string // ConverterType name passed as converter.type
}

func converterSlots() []converterSlot {
	// Connect validates the header converter first, then key and value.
	return []converterSlot{
		{classKey: HeaderConverterConfig, versionKey: HeaderConverterPluginVersionConfig, iface: headerConverterInterface, typeName: "header"},
		{classKey: KeyConverterConfig, versionKey: KeyConverterPluginVersionConfig, iface: converterInterface, typeName: "key"},
		{classKey: ValueConverterConfig, versionKey: ValueConverterPluginVersionConfig, iface: converterInterface, typeName: "value"},
	}
}

// converterTypeDef is ConverterConfig.newConfigDef(), all the configuration
// ByteArrayConverter has.
func converterTypeDef() *configdef.Def {
	return configdef.New().Define(configdef.Key{
		Name: "converter.type", Type: configdef.TypeString,
		Validator:     configdef.In("key", "value", "header"),
		Importance:    configdef.ImportanceLow,
		Documentation: "How this converter will be used.",
	})
}

// converterConfigs validates the configuration of converters set explicitly on the connector
// against the converter's own ConfigDef, as AbstractHerder.validateConverterConfig does, and
// returns the entries it adds, named with the "<key>." prefix. Connect skips a converter whose
// class or version setting already failed; kmirror also skips converters it does not run
// (they are rejected by kmirrorRules), so only ByteArrayConverter is ever examined.
func converterConfigs(props map[string]*string, framework []*configdef.ConfigValue) []configdef.ConfigInfo {
	failed := map[string]bool{}
	for _, cv := range framework {
		failed[cv.Name] = len(cv.Errors) > 0
	}
	resolve := classResolver()
	var out []configdef.ConfigInfo
	for _, slot := range converterSlots() {
		class, ok := trimmed(props, slot.classKey)
		if !ok || failed[slot.classKey] || failed[slot.versionKey] {
			continue
		}
		if canonical, _ := resolve(class); canonical != byteArrayConverterClass {
			continue
		}
		if req, err := versionRequirement(props[slot.versionKey]); err != nil || (req != nil && !req.contains(Version)) {
			continue
		}
		prefix := slot.classKey + "."
		converterProps := map[string]*string{}
		for name, raw := range props {
			if rest, ok := strings.CutPrefix(name, prefix); ok {
				converterProps[rest] = raw
			}
		}
		if _, set := converterProps["converter.type"]; !set {
			typeName := slot.typeName
			converterProps["converter.type"] = &typeName
		}
		def := converterTypeDef()
		for _, cv := range def.Validate(converterProps) {
			k, _ := def.Lookup(cv.Name)
			k.Name = prefix + k.Name // only the name is prefixed, not the display name
			keyInfo := configdef.KeyInfo(k)
			cv.Name = prefix + cv.Name
			out = append(out, configdef.ConfigInfo{Definition: &keyInfo, Value: valueInfo(&cv)})
		}
	}
	return out
}

package mirrorconfig

import (
	"strings"

	"github.com/kmirror/kmirror/connectors/configdef"
)

// Plugin types of the converters GET /connector-plugins?connectorsOnly=false lists.
const (
	PluginTypeConverter       = "converter"
	PluginTypeHeaderConverter = "header_converter"
)

// ConverterPlugins returns the converter plugins kmirror accepts: ByteArrayConverter, once as a converter and
// once as a header converter, as a Connect worker lists a class that implements both. kmirror replicates
// records as raw bytes, so it lists neither the other converters a Connect 4.1.1 worker lists (BooleanConverter,
// JsonConverter, StringConverter, SimpleHeaderConverter), which its validation rejects, nor any transformation
// or predicate, since it runs none.
func ConverterPlugins() []Plugin {
	return []Plugin{converterPlugin(PluginTypeConverter), converterPlugin(PluginTypeHeaderConverter)}
}

// LookupAnyPlugin finds a connector (as LookupPlugin) or a converter by full class name, simple class name
// (ByteArrayConverter) or alias without the "Converter" suffix (ByteArray). A class that is both a converter and
// a header converter is reported as a converter, the first of its types in Connect's PluginType order.
func LookupAnyPlugin(classOrAlias string) (Plugin, bool) {
	if p, ok := LookupPlugin(classOrAlias); ok {
		return p, true
	}
	simple := byteArrayConverterClass[strings.LastIndex(byteArrayConverterClass, ".")+1:]
	if classOrAlias == byteArrayConverterClass || classOrAlias == simple || classOrAlias == prunedName(simple, converterInterface) {
		return converterPlugin(PluginTypeConverter), true
	}
	return Plugin{}, false
}

// converterPlugin is ByteArrayConverter as a plugin of the given type. Its definition is ConverterConfig's,
// which is what ByteArrayConverter.config() returns.
func converterPlugin(typ string) Plugin {
	own := configdef.New()
	own.Define(configdef.Key{
		Name:          "converter.type",
		Type:          configdef.TypeString,
		Importance:    configdef.ImportanceLow,
		Documentation: "How this converter will be used.",
	})
	return Plugin{Class: byteArrayConverterClass, Type: typ, Version: Version, Own: own}
}

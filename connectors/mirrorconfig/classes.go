package mirrorconfig

import (
	"strings"

	"github.com/kmirror/kmirror/connectors/configdef"
)

// Class names kmirror's configs refer to.
const (
	byteArrayConverterClass          = "org.apache.kafka.connect.converters.ByteArrayConverter"
	defaultReplicationPolicyClass    = "org.apache.kafka.connect.mirror.DefaultReplicationPolicy"
	identityReplicationPolicyClass   = "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"
	defaultTopicFilterClass          = "org.apache.kafka.connect.mirror.DefaultTopicFilter"
	defaultGroupFilterClass          = "org.apache.kafka.connect.mirror.DefaultGroupFilter"
	defaultConfigPropertyFilterClass = "org.apache.kafka.connect.mirror.DefaultConfigPropertyFilter"
	forwardingAdminClass             = "org.apache.kafka.clients.admin.ForwardingAdmin"

	converterInterface       = "Converter"
	headerConverterInterface = "HeaderConverter"
)

// knownClass is a Java class a Connect worker running MM2 4.1.1 could load, with the plugin
// interfaces it implements. kmirror has no JVM, so this table stands in for the classpath.
type knownClass struct {
	name            string
	converter       bool
	headerConverter bool
}

func knownClasses() []knownClass {
	both := func(name string) knownClass { return knownClass{name: name, converter: true, headerConverter: true} }
	return []knownClass{
		both(byteArrayConverterClass),
		both("org.apache.kafka.connect.converters.BooleanConverter"),
		both("org.apache.kafka.connect.converters.DoubleConverter"),
		both("org.apache.kafka.connect.converters.FloatConverter"),
		both("org.apache.kafka.connect.converters.IntegerConverter"),
		both("org.apache.kafka.connect.converters.LongConverter"),
		both("org.apache.kafka.connect.converters.ShortConverter"),
		both("org.apache.kafka.connect.json.JsonConverter"),
		both("org.apache.kafka.connect.storage.StringConverter"),
		{name: "org.apache.kafka.connect.storage.SimpleHeaderConverter", headerConverter: true},
		{name: defaultReplicationPolicyClass},
		{name: identityReplicationPolicyClass},
		{name: defaultTopicFilterClass},
		{name: defaultGroupFilterClass},
		{name: defaultConfigPropertyFilterClass},
		{name: forwardingAdminClass},
		{name: "org.apache.kafka.common.security.oauthbearer.DefaultJwtRetriever"},
		{name: "org.apache.kafka.common.security.oauthbearer.DefaultJwtValidator"},
	}
}

// classResolver resolves class names the way Connect's DelegatingClassLoader does: full
// names, and for plugins (converters) the simple name and the name without its type suffix
// ("ByteArrayConverter", "ByteArray"), dropping aliases that would be ambiguous. kmirror also
// accepts the simple names of the two replication policies, which Java would not resolve
// because policies are not Connect plugins; the brief asks for both spellings.
func classResolver() configdef.ClassResolver {
	classes := knownClasses()
	full := make(map[string]bool, len(classes))
	aliases := map[string]map[string]bool{}
	addAlias := func(alias, name string) {
		if aliases[alias] == nil {
			aliases[alias] = map[string]bool{}
		}
		aliases[alias][name] = true
	}
	for _, c := range classes {
		full[c.name] = true
		simple := c.name[strings.LastIndex(c.name, ".")+1:]
		if c.converter {
			addAlias(simple, c.name)
			addAlias(prunedName(simple, converterInterface), c.name)
		}
		if c.headerConverter {
			addAlias(simple, c.name)
			addAlias(prunedName(simple, headerConverterInterface), c.name)
		}
	}
	addAlias("DefaultReplicationPolicy", defaultReplicationPolicyClass)
	addAlias("IdentityReplicationPolicy", identityReplicationPolicyClass)
	return func(nameOrAlias string) (string, bool) {
		if full[nameOrAlias] {
			return nameOrAlias, true
		}
		if names := aliases[nameOrAlias]; len(names) == 1 {
			for n := range names {
				return n, true
			}
		}
		return "", false
	}
}

// prunedName strips a plugin type suffix, as PluginUtils.prunedName does.
func prunedName(simple, suffix string) string {
	if i := strings.LastIndex(simple, suffix); i > 0 {
		return simple[:i]
	}
	return simple
}

// implements reports whether a canonical class implements the given Connect interface.
func implements(class, iface string) bool {
	for _, c := range knownClasses() {
		if c.name == class {
			return (iface == converterInterface && c.converter) || (iface == headerConverterInterface && c.headerConverter)
		}
	}
	return false
}

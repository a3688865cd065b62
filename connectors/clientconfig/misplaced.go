package clientconfig

import (
	"strings"
)

// Keys under a prefix that looks like a client's but configures none: a client prefix nested in a cluster
// prefix (source.cluster.consumer.linger.ms; MM2 takes only connection settings from source.cluster.*, and
// its dedicated mode writes a cluster's consumer settings as source.consumer.*), or Connect's consumer. and
// admin. override prefixes, which configure clients MM2 connectors do not have. Java MM2 ignores them;
// kmirror refuses them, naming the key, since a setting that is silently not applied is worse than an error.

// nestedClientPrefix finds a client prefix nested in a cluster prefix: source.cluster.consumer.x gives the
// consumer kind and x.
func nestedClientPrefix(key string) (kind clientKind, prefix, name string, ok bool) {
	for _, side := range []string{"source", "target"} {
		for _, k := range []clientKind{kindConsumer, kindProducer, kindAdmin} {
			p := side + ".cluster." + k.String() + "."
			if name, ok := strings.CutPrefix(key, p); ok && name != "" {
				return k, p, name, true
			}
		}
	}
	return 0, "", "", false
}

// nestedPrefixMsg refuses a key under a nested client prefix that is not a code-loading key.
func nestedPrefixMsg(prefix string, kind clientKind) string {
	side, _, _ := strings.Cut(prefix, ".")
	return prefix + " is not a client prefix: MM2 takes only connection settings (bootstrap.servers, security.protocol, ssl.*, sasl.*) from " +
		side + ".cluster.*; put " + kind.String() + " settings under " + side + "." + kind.String() + ". (or " + kind.String() + ". for both clusters)"
}

// codeLoadingMsg is the message every client prefix gives name when it is a key that loads code, names a
// program or a class, or is a C pointer (see docs/security-audit.md), so that a prefix no client reads
// refuses it with the same words; "" when name is none of those.
func codeLoadingMsg(kind clientKind, name, value string) string {
	if reason, ok := commandKeys[name]; ok && strings.TrimSpace(value) != "" {
		return "cannot be set: " + reason
	}
	kinds, java := javaKeyKinds(name)
	if !java {
		if reason, ok := libReserved[name]; ok {
			return "cannot be set: " + reason
		}
		return ""
	}
	if !strings.HasSuffix(name, ".class") && !strings.HasSuffix(name, ".classes") && name != "security.providers" {
		return ""
	}
	if !kinds.has(kind) {
		return ""
	}
	// A Java class key: what the client of that kind says of it, in a context where it is read (ssl.* and
	// sasl.* keys count only for SASL_SSL).
	role := map[clientKind]Role{kindConsumer: ReplicationConsumer, kindProducer: ReplicationProducer, kindAdmin: SourceAdmin}[kind]
	in := map[string]string{"bootstrap.servers": "broker:9092", "security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN",
		"sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p";`, name: value}
	_, errs := translate(Options{}, role, in)
	for _, e := range errs {
		if e.Key == name {
			return e.Msg
		}
	}
	return ""
}

package clientconfig

import (
	"maps"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// rejectedKey is one row of the security audit (docs/security-audit.md): a
// key that must never reach a client, with a value an attacker might send and
// the part of the error that says why.
type rejectedKey struct {
	key, value, reason string
	// java marks Java client keys: Java's rules decide where they apply (a
	// cluster prefix only carries ssl.* and sasl.*; admin clients have no
	// interceptors), and a prefix no client reads checks them by name only.
	java bool
	// kinds, for Java keys, are the client kinds that define the key.
	kinds kindSet
}

func codeLoadingKeys() []rejectedKey {
	keys := []rejectedKey{
		{key: "plugin.library.paths", value: "/tmp/evil.so", reason: "it loads native plugins"},
		{key: "interceptors", value: "x", reason: "it loads native plugins"},
		{key: "ssl.engine.location", value: "/tmp/evil.so", reason: "it loads an OpenSSL engine, a shared library"},
		{key: "ssl.engine.id", value: "dynamic", reason: "it selects an OpenSSL engine"},
		{key: "ssl.providers", value: "legacy,default", reason: "it loads OpenSSL providers"},
		{key: "sasl.kerberos.keytab", value: "/etc/krb5.keytab", reason: "a shell command kmirror never runs"},
		{key: "sasl.kerberos.kinit.cmd", value: "touch /tmp/pwned", reason: "it names a program to run"},
		// Java class keys: no Java class can run inside kmirror, and a custom
		// one is refused rather than ignored, because it was there to change
		// what the client does.
		{key: "ssl.engine.factory.class", value: "com.evil.Engine", reason: "custom SSL engine factories cannot run", java: true, kinds: onAll},
		{key: "sasl.client.callback.handler.class", value: "com.evil.H", reason: "custom SASL classes cannot run", java: true, kinds: onAll},
		{key: "sasl.login.class", value: "com.evil.Login", reason: "custom SASL classes cannot run", java: true, kinds: onAll},
		{key: "sasl.login.callback.handler.class", value: "com.evil.H", reason: "a login callback handler only applies to OAUTHBEARER", java: true, kinds: onAll},
		{key: "interceptor.classes", value: "com.evil.I", reason: "Java interceptors cannot run", java: true, kinds: onConsumer | onProducer},
		{key: "security.providers", value: "com.evil.P", reason: "Java security providers (JCA) cannot be loaded", java: true, kinds: onAll},
	}
	for _, k := range cPointerProperties {
		keys = append(keys, rejectedKey{key: k, value: "0xdeadbeef", reason: "a C callback or pointer"})
	}
	return keys
}

// securedClusters puts both clusters on SASL_SSL with PLAIN, so that every
// ssl.* and sasl.* key is read rather than dropped as Java would for
// PLAINTEXT.
func securedClusters(cfg map[string]string) {
	for _, side := range []string{"source", "target"} {
		cfg[side+".cluster.security.protocol"] = "SASL_SSL"
		cfg[side+".cluster.sasl.mechanism"] = "PLAIN"
		cfg[side+".cluster.sasl.jaas.config"] = `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p";`
	}
}

// TestValidateRejectsCodeLoadingKeysUnderEveryPrefix sends each audited key
// through every prefix a MirrorSourceConnector accepts and expects an error
// on exactly that connector key, saying why.
func TestValidateRejectsCodeLoadingKeysUnderEveryPrefix(t *testing.T) {
	type prefix struct {
		p    string
		kind clientKind
		// read: some client of a source connector reads this prefix;
		// otherwise Validate checks its keys by name. unread: a prefix
		// that looks like a client's but configures none (Connect's
		// consumer./admin. overrides, a client prefix nested in a
		// cluster prefix): every key is refused, a code-loading one with
		// the words a read prefix uses.
		read, cluster, unread bool
	}
	prefixes := []prefix{
		{p: "source.cluster.", kind: kindAdmin, read: true, cluster: true},
		{p: "target.cluster.", kind: kindAdmin, read: true, cluster: true},
		{p: "consumer.", kind: kindConsumer, read: true},
		{p: "producer.", kind: kindProducer, read: true},
		{p: "admin.", kind: kindAdmin, read: true},
		{p: "source.consumer.", kind: kindConsumer, read: true},
		{p: "source.producer.", kind: kindProducer, read: true}, // offset syncs
		{p: "source.admin.", kind: kindAdmin, read: true},
		{p: "target.producer.", kind: kindProducer, read: true},
		{p: "target.admin.", kind: kindAdmin, read: true},
		{p: "producer.override.", kind: kindProducer, read: true},
		{p: "target.consumer.", kind: kindConsumer},
		{p: "consumer.override.", kind: kindConsumer, unread: true},
		{p: "admin.override.", kind: kindAdmin, unread: true},
	}
	for _, side := range []string{"source", "target"} {
		for _, k := range []clientKind{kindConsumer, kindProducer, kindAdmin} {
			prefixes = append(prefixes, prefix{p: side + ".cluster." + k.String() + ".", kind: k, unread: true})
		}
	}
	for _, rk := range codeLoadingKeys() {
		for _, px := range prefixes {
			if rk.java {
				switch {
				case px.cluster && !isConnectionKey(rk.key):
					continue // MM2 passes only connection keys from a cluster prefix
				case !px.cluster && !rk.kinds.has(px.kind):
					continue // another kind's key: refused as misplaced, tested elsewhere
				case !px.read && !px.unread:
					continue // a valid Java name that no client reads: nothing runs it
				}
			}
			connectorKey := px.p + rk.key
			t.Run(connectorKey, func(t *testing.T) {
				cfg := baseConnector()
				securedClusters(cfg)
				cfg[connectorKey] = rk.value
				got := Validate(cfg, mm2Keys)
				require.Contains(t, got, connectorKey, "all errors: %v", got)
				require.Len(t, got, 1, "only the audited key is wrong: %v", got)
				msgs := strings.Join(got[connectorKey], "\n")
				require.True(t, strings.HasPrefix(msgs, connectorKey+": "), "the error names the key: %s", msgs)
				require.Contains(t, msgs, rk.reason)
			})
		}
	}
}

// TestTranslateRejectsCodeLoadingKeysForEveryRole checks the task-start path:
// Translate refuses each key for each role whose kind takes it, with
// PLAINTEXT too for the librdkafka keys (they are refused before
// security.protocol could make them irrelevant).
func TestTranslateRejectsCodeLoadingKeysForEveryRole(t *testing.T) {
	roles := []Role{ReplicationConsumer, ReplicationProducer, OffsetSyncsProducer, HeartbeatsProducer,
		SourceAdmin, TargetAdmin, OffsetSyncsAdmin, OffsetSyncsConsumer, CheckpointsConsumer, CheckpointsProducer}
	sasl := map[string]string{
		"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN",
		"sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p";`,
	}
	for _, rk := range codeLoadingKeys() {
		for _, role := range roles {
			if rk.java && !rk.kinds.has(role.kind()) {
				continue
			}
			contexts := map[string]map[string]string{"SASL_SSL": sasl}
			if !rk.java {
				contexts["PLAINTEXT"] = map[string]string{}
			}
			for proto, ctx := range contexts {
				t.Run(rk.key+"/"+role.String()+"/"+proto, func(t *testing.T) {
					in := map[string]string{"bootstrap.servers": "broker:9092", rk.key: rk.value}
					maps.Copy(in, ctx)
					_, errs := translate(Options{}, role, in)
					require.Len(t, errs, 1, "errors: %v", errs)
					require.Equal(t, rk.key, errs[0].Key)
					require.Contains(t, errs[0].Msg, rk.reason)
				})
			}
		}
	}
}

func TestTranslateRejectsOAuthClasses(t *testing.T) {
	const jaas = `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="c" clientSecret="s";`
	oidc := func(k, v string) map[string]string {
		return map[string]string{
			"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER", "sasl.jaas.config": jaas,
			"sasl.oauthbearer.token.endpoint.url": "https://idp.example/token", k: v,
		}
	}
	runTranslateCases(t, []translateCase{
		{name: "custom login callback handler", role: ReplicationConsumer,
			in:     oidc("sasl.login.callback.handler.class", "com.evil.Handler"),
			errKey: "sasl.login.callback.handler.class", errMsg: "cannot run in librdkafka"},
		{name: "custom JWT retriever", role: ReplicationProducer,
			in:     oidc("sasl.oauthbearer.jwt.retriever.class", "com.evil.Retriever"),
			errKey: "sasl.oauthbearer.jwt.retriever.class", errMsg: "cannot run in librdkafka"},
		{name: "custom JWT validator", role: SourceAdmin,
			in:     oidc("sasl.oauthbearer.jwt.validator.class", "com.evil.Validator"),
			errKey: "sasl.oauthbearer.jwt.validator.class"},
		{name: "token endpoint that is a file", role: SourceAdmin,
			in:     oidc("sasl.oauthbearer.token.endpoint.url", "file:///etc/passwd"),
			errKey: "sasl.oauthbearer.token.endpoint.url", errMsg: "not an http(s) URL"},
		{name: "token endpoint on another curl protocol", role: SourceAdmin,
			in:     oidc("sasl.oauthbearer.token.endpoint.url", "dict://127.0.0.1:6379/info"),
			errKey: "sasl.oauthbearer.token.endpoint.url", errMsg: "not an http(s) URL"},
		{name: "token endpoint not in --allowed-oauth-urls", role: ReplicationProducer,
			in:     oidc("sasl.oauthbearer.token.endpoint.url", "http://169.254.169.254/latest/meta-data/"),
			errKey: "sasl.oauthbearer.token.endpoint.url",
			errMsg: `"http://169.254.169.254/latest/meta-data/" is not a token endpoint kmirror may call (--allowed-oauth-urls: https://idp/token, https://idp.example/token)`},
		{name: "an allowed endpoint with another path", role: ReplicationProducer,
			in:     oidc("sasl.oauthbearer.token.endpoint.url", "https://idp.example/token/../admin"),
			errKey: "sasl.oauthbearer.token.endpoint.url", errMsg: "is not a token endpoint kmirror may call"},
	})
}

// TestOAuthURLsAllowNoneByDefault: as in Kafka 4, a client may fetch OAUTHBEARER tokens only from URLs the
// operator listed; with none listed every endpoint is refused, naming the flag.
func TestOAuthURLsAllowNoneByDefault(t *testing.T) {
	const jaas = `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="c" clientSecret="s";`
	in := map[string]string{
		"bootstrap.servers": "b:9092", "security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER", "sasl.jaas.config": jaas,
		"sasl.login.callback.handler.class":   "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
		"sasl.oauthbearer.token.endpoint.url": "https://idp.example/token",
	}
	_, errs := translate(Options{}, ReplicationConsumer, in)
	require.Len(t, errs, 1, "errors: %v", errs)
	require.Equal(t, "sasl.oauthbearer.token.endpoint.url", errs[0].Key)
	require.Contains(t, errs[0].Msg, "--allowed-oauth-urls is empty, so none")

	cfg, errs := translate(Options{OAuthURLs: []string{"https://idp.example/token"}}, ReplicationConsumer, in)
	require.Empty(t, errs)
	require.Equal(t, "https://idp.example/token", cfg.Props["sasl.oauthbearer.token.endpoint.url"])
}

func TestCodeLoadingKeysAreNeverDropped(t *testing.T) {
	// A blank kinit command asks for nothing: dropped, as Java ignores it.
	cfg := mustTranslate(t, ReplicationConsumer, map[string]string{"bootstrap.servers": "b:9092", "sasl.kerberos.kinit.cmd": " "})
	require.Contains(t, cfg.Dropped, "sasl.kerberos.kinit.cmd")
	require.NotContains(t, cfg.Props, "sasl.kerberos.kinit.cmd")

	// A real one is an error, not a drop, under PLAINTEXT too, where the SASL
	// handler has already dropped every sasl.* key.
	_, errs := translate(Options{}, ReplicationConsumer, map[string]string{"bootstrap.servers": "b:9092", "sasl.kerberos.kinit.cmd": "/usr/bin/kinit"})
	require.Len(t, errs, 1)
	require.Equal(t, "sasl.kerberos.kinit.cmd", errs[0].Key)

	// Under a cluster prefix a non-connection key is read by no client, and is
	// still reported; an ordinary one is not.
	c := baseConnector()
	c["source.cluster.plugin.library.paths"] = "/tmp/evil.so"
	c["target.cluster.foo"] = "bar"
	// Config providers are a connector-level (worker) setting, never a client's.
	c["source.consumer.config.providers"] = "file"
	got := Validate(c, mm2Keys)
	require.Equal(t, []string{"source.cluster.plugin.library.paths: cannot be set: it loads native plugins, which could change or drop records"},
		got["source.cluster.plugin.library.paths"])
	require.Contains(t, got["source.consumer.config.providers"][0], "unknown consumer setting")
	require.Len(t, got, 2)
}

// TestValidateRefusesNestedClientPrefixes: a client prefix nested in a cluster prefix configures nothing (MM2
// takes only connection settings from source.cluster.*), so any key under it is refused, naming the key and
// where the setting belongs, instead of being silently ignored.
func TestValidateRefusesNestedClientPrefixes(t *testing.T) {
	for key, want := range map[string]string{
		"source.cluster.consumer.max.poll.records": "put consumer settings under source.consumer.",
		"target.cluster.producer.linger.ms":        "target.cluster.producer. is not a client prefix",
		"source.cluster.admin.request.timeout.ms":  "put admin settings under source.admin.",
		"target.cluster.consumer.sasl.jaas.config": "target.cluster.consumer. is not a client prefix",
	} {
		cfg := baseConnector()
		cfg[key] = "1"
		got := Validate(cfg, mm2Keys)
		require.Len(t, got, 1, "only %s is wrong: %v", key, got)
		require.Contains(t, strings.Join(got[key], "\n"), key+": ")
		require.Contains(t, strings.Join(got[key], "\n"), want)
	}
	cfg := baseConnector()
	cfg["source.cluster.linger.ms"] = "5"
	require.Empty(t, Validate(cfg, mm2Keys), "a non-connection key under a cluster prefix is ignored, as MM2 ignores it (mm2.properties writes them)")
}

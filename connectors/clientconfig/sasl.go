package clientconfig

import (
	"fmt"
	"strings"
)

// Login modules Kafka ships, as named in sasl.jaas.config.
const (
	plainLoginModule       = "org.apache.kafka.common.security.plain.PlainLoginModule"
	scramLoginModule       = "org.apache.kafka.common.security.scram.ScramLoginModule"
	oauthBearerLoginModule = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
	krb5LoginModule        = "com.sun.security.auth.module.Krb5LoginModule"
)

// noKerberos explains every GSSAPI rejection.
const noKerberos = "GSSAPI (Kerberos) is not available: the librdkafka bundled with kmirror is built without Kerberos; use PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER"

// saslDropped are SaslConfigs keys with no librdkafka counterpart and no
// effect on the mechanisms kmirror supports: Kerberos tuning (GSSAPI is
// refused), Java's login refresh and retry timing (librdkafka refreshes
// OAUTHBEARER tokens at 80% of their lifetime), and broker-side token
// validation.
var saslDropped = []string{
	"sasl.kerberos.service.name", "sasl.kerberos.kinit.cmd", "sasl.kerberos.ticket.renew.window.factor",
	"sasl.kerberos.ticket.renew.jitter", "sasl.kerberos.min.time.before.relogin",
	"sasl.login.refresh.window.jitter", "sasl.login.refresh.min.period.seconds",
	"sasl.login.refresh.buffer.seconds", "sasl.login.connect.timeout.ms", "sasl.login.read.timeout.ms",
	"sasl.login.retry.backoff.ms", "sasl.login.retry.backoff.max.ms",
	"sasl.oauthbearer.scope.claim.name", "sasl.oauthbearer.jwks.endpoint.url",
	"sasl.oauthbearer.jwks.endpoint.refresh.ms", "sasl.oauthbearer.jwks.endpoint.retry.backoff.ms",
	"sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms", "sasl.oauthbearer.clock.skew.seconds",
	"sasl.oauthbearer.expected.audience", "sasl.oauthbearer.expected.issuer",
}

// sasl translates the SaslConfigs keys for SASL_PLAINTEXT and SASL_SSL; with
// another protocol Java ignores them, and so does kmirror.
func (t *translator) sasl() {
	if !t.usesSASL() {
		t.dropPendingJava("sasl.")
		return
	}
	mech := "GSSAPI" // Java's default
	if v, ok := t.get("sasl.mechanism"); ok && strings.TrimSpace(v) != "" {
		mech = strings.ToUpper(strings.TrimSpace(v))
	}
	switch mech {
	case "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER":
		t.emit("sasl.mechanism", "sasl.mechanism", mech)
	case "GSSAPI":
		if t.has("sasl.mechanism") {
			t.fail("sasl.mechanism", "%s", noKerberos)
		} else {
			t.fail("sasl.mechanism", "not set, so it defaults to GSSAPI; %s", noKerberos)
		}
		t.dropPendingJava("sasl.")
		return
	default:
		t.fail("sasl.mechanism", "SASL mechanism %q is not supported; use PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER", mech)
		t.dropPendingJava("sasl.")
		return
	}

	for _, key := range []string{"sasl.client.callback.handler.class", "sasl.login.class"} {
		if v, ok := t.get(key); ok {
			if strings.TrimSpace(v) != "" {
				t.fail(key, "custom SASL classes cannot run in librdkafka")
			} else {
				t.drop(key)
			}
		}
	}
	for _, key := range saslDropped {
		if t.has(key) {
			t.drop(key)
		}
	}
	if v, ok := t.get("sasl.login.refresh.window.factor"); ok {
		t.drop("sasl.login.refresh.window.factor")
		if strings.TrimSpace(v) != "0.8" {
			t.warn("sasl.login.refresh.window.factor", "librdkafka always refreshes tokens at 80%% of their lifetime")
		}
	}

	entry, ok := t.jaasEntry()
	if mech == "OAUTHBEARER" {
		t.oauthBearer(entry, ok)
		return
	}
	if h, set := t.get("sasl.login.callback.handler.class"); set {
		if strings.TrimSpace(h) != "" {
			t.fail("sasl.login.callback.handler.class", "a login callback handler only applies to OAUTHBEARER, not %s", mech)
		} else {
			t.drop("sasl.login.callback.handler.class")
		}
	}
	t.dropPendingJava("sasl.oauthbearer.")
	if ok {
		t.userPassword(entry, mech)
	}
}

// jaasEntry parses sasl.jaas.config, which must hold exactly one login module.
// Java falls back to the JVM's JAAS file when it is absent; kmirror has none.
func (t *translator) jaasEntry() (jaasEntry, bool) {
	const key = "sasl.jaas.config"
	v, ok := t.get(key)
	if !ok || strings.TrimSpace(v) == "" {
		t.fail(key, "missing: SASL needs the login module and credentials in sasl.jaas.config (there is no JVM JAAS file to fall back to)")
		return jaasEntry{}, false
	}
	entries, err := parseJAAS(v)
	if err != nil {
		t.fail(key, "%v", err)
		return jaasEntry{}, false
	}
	if len(entries) != 1 {
		t.fail(key, "JAAS config property contains %d login modules, should be 1 module", len(entries))
		return jaasEntry{}, false
	}
	e := entries[0]
	if e.module == krb5LoginModule {
		t.fail(key, "%s", noKerberos)
		return jaasEntry{}, false
	}
	return e, true
}

// userPassword maps the PLAIN and SCRAM login modules; both carry a username
// and a password, which Java's SASL client reads the same way for either
// mechanism.
func (t *translator) userPassword(e jaasEntry, mech string) {
	const key = "sasl.jaas.config"
	switch e.module {
	case plainLoginModule, scramLoginModule:
	case oauthBearerLoginModule:
		t.fail(key, "OAuthBearerLoginModule does not provide credentials for %s", mech)
		return
	default:
		t.fail(key, "login module %s is not supported; use %s or %s", e.module, plainLoginModule, scramLoginModule)
		return
	}
	user, hasUser := e.options["username"]
	pass, hasPass := e.options["password"]
	if !hasUser || !hasPass {
		t.fail(key, "the %s entry needs both the username and password options", shortName(e.module))
		return
	}
	if strings.EqualFold(e.options["tokenauth"], "true") {
		t.fail(key, "delegation-token authentication (tokenauth=true) is not supported by librdkafka")
		return
	}
	for opt := range e.options {
		if opt != "username" && opt != "password" && opt != "tokenauth" {
			t.warn(key, "option %s of %s ignored", opt, shortName(e.module))
		}
	}
	t.emit(key, "sasl.username", user)
	t.emit(key, "sasl.password", pass)
}

// dropPendingJava drops the Java keys with a prefix that no handler took.
func (t *translator) dropPendingJava(prefix string) {
	for key := range t.pending {
		if _, java := javaKeys[key]; java && strings.HasPrefix(key, prefix) {
			t.drop(key)
		}
	}
}

func shortName(class string) string {
	return class[strings.LastIndex(class, ".")+1:]
}

// quoteFree rejects values librdkafka's space- or comma-separated OAUTHBEARER
// formats cannot carry.
func quoteFree(v, seps string) error {
	if strings.ContainsAny(v, seps) {
		return fmt.Errorf("value %q contains one of %q, which librdkafka's format cannot carry", v, seps)
	}
	return nil
}

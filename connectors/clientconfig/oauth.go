package clientconfig

import (
	"net/url"
	"sort"
	"strings"
)

// OAUTHBEARER classes Kafka ships.
const (
	oauthLoginHandler       = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"
	oauthLoginHandlerLegacy = "org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerLoginCallbackHandler" // 3.1-3.3
	oauthPackage            = "org.apache.kafka.common.security.oauthbearer."
)

const jwtBearerGrant = "urn:ietf:params:oauth:grant-type:jwt-bearer"

// oauthAssertionKeys are the KIP-1139 jwt-bearer assertion settings (Kafka
// 4.1), which librdkafka 2.11 knows under the same names but one.
var oauthAssertionKeys = map[string]string{
	"sasl.oauthbearer.assertion.algorithm":              "sasl.oauthbearer.assertion.algorithm",
	"sasl.oauthbearer.assertion.claim.aud":              "sasl.oauthbearer.assertion.claim.aud",
	"sasl.oauthbearer.assertion.claim.exp.seconds":      "sasl.oauthbearer.assertion.claim.exp.seconds",
	"sasl.oauthbearer.assertion.claim.iss":              "sasl.oauthbearer.assertion.claim.iss",
	"sasl.oauthbearer.assertion.claim.jti.include":      "sasl.oauthbearer.assertion.claim.jti.include",
	"sasl.oauthbearer.assertion.claim.nbf.seconds":      "sasl.oauthbearer.assertion.claim.nbf.seconds",
	"sasl.oauthbearer.assertion.claim.sub":              "sasl.oauthbearer.assertion.claim.sub",
	"sasl.oauthbearer.assertion.file":                   "sasl.oauthbearer.assertion.file",
	"sasl.oauthbearer.assertion.private.key.file":       "sasl.oauthbearer.assertion.private.key.file",
	"sasl.oauthbearer.assertion.private.key.passphrase": "sasl.oauthbearer.assertion.private.key.passphrase",
	"sasl.oauthbearer.assertion.template.file":          "sasl.oauthbearer.assertion.jwt.template.file",
}

// oauthBearer maps OAUTHBEARER: either OIDC, where librdkafka fetches tokens
// from the token endpoint itself, or Java's default unsecured tokens, which
// librdkafka can also build (for tests only).
func (t *translator) oauthBearer(e jaasEntry, jaasOK bool) {
	const jaasKey = "sasl.jaas.config"
	oidc, grant, ok := t.oauthMode()
	if !ok {
		t.dropPendingJava("sasl.oauthbearer.")
		return
	}
	for _, key := range []string{"sasl.oauthbearer.sub.claim.name", "sasl.oauthbearer.jwt.validator.class"} {
		v, set := t.get(key)
		switch v = strings.TrimSpace(v); {
		case !set:
		case key == "sasl.oauthbearer.sub.claim.name" && v != "" && v != "sub":
			t.fail(key, "librdkafka always reads the subject from the sub claim")
		case key == "sasl.oauthbearer.jwt.validator.class" && v != "" && v != oauthPackage+"DefaultJwtValidator":
			t.fail(key, "custom JWT validators cannot run in librdkafka")
		default:
			t.drop(key)
		}
	}
	if jaasOK && e.module != oauthBearerLoginModule {
		t.fail(jaasKey, "OAUTHBEARER needs %s, not %s", oauthBearerLoginModule, e.module)
		jaasOK = false
	}
	if !oidc {
		t.dropPendingJava("sasl.oauthbearer.")
		if jaasOK {
			t.unsecuredJWT(e)
		}
		return
	}

	t.emit("sasl.login.callback.handler.class", "sasl.oauthbearer.method", "oidc")
	// Fail at client creation, not at the first login, if the build lacks OIDC.
	t.setDefault("builtin.features", "oidc")
	if grant != "" {
		t.emit("sasl.oauthbearer.jwt.retriever.class", "sasl.oauthbearer.grant.type", grant)
	}

	const urlKey = "sasl.oauthbearer.token.endpoint.url"
	if v, set := t.get(urlKey); !set || strings.TrimSpace(v) == "" {
		t.fail(urlKey, "missing: OAUTHBEARER with OIDC needs the token endpoint URL")
	} else if u, err := url.Parse(strings.TrimSpace(v)); err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		t.fail(urlKey, "%q is not an http(s) URL; reading tokens from a file is not supported", v)
	} else if endpoint := strings.TrimSpace(v); !t.opts.allowedOAuthURL(endpoint) {
		t.fail(urlKey, "%q is not a token endpoint kmirror may call (%s)", endpoint, t.opts.describeOAuthURLs())
	} else {
		t.emit(urlKey, urlKey, endpoint)
	}

	opts := map[string]string{}
	if jaasOK {
		opts = e.options
	}
	urlEncode := false
	if b, set := t.boolean("sasl.oauthbearer.header.urlencode"); set {
		urlEncode = b
	}
	// The 4.1 top-level keys win over the JAAS options they replace.
	credential := func(key, option string) {
		v, set := t.get(key)
		src := key
		if !set || v == "" {
			v, set = opts[option]
			src = jaasKey
		}
		if !set || v == "" {
			if grant == "" {
				t.fail(key, "missing: the client_credentials grant needs it (or the JAAS option %s)", option)
			}
			return
		}
		if urlEncode {
			// What Java's HttpAccessTokenRetriever does before building the
			// Basic authorization header; librdkafka never encodes.
			v = url.QueryEscape(v)
		}
		t.emit(src, key, v)
	}
	credential("sasl.oauthbearer.client.credentials.client.id", "clientId")
	credential("sasl.oauthbearer.client.credentials.client.secret", "clientSecret")
	if v, set := t.get("sasl.oauthbearer.scope"); set && v != "" {
		t.emit("sasl.oauthbearer.scope", "sasl.oauthbearer.scope", v)
	} else if v := opts["scope"]; v != "" {
		t.emit(jaasKey, "sasl.oauthbearer.scope", v)
	}

	var ext []string
	for opt, v := range opts {
		name, isExt := strings.CutPrefix(opt, "extension_")
		switch {
		case isExt:
			if err := quoteFree(name+v, ",="); err != nil {
				t.fail(jaasKey, "extension %s: %v", name, err)
				continue
			}
			ext = append(ext, name+"="+v)
		case opt == "clientId", opt == "clientSecret", opt == "scope":
		default:
			t.warn(jaasKey, "option %s of OAuthBearerLoginModule ignored", opt)
		}
	}
	if len(ext) > 0 {
		sort.Strings(ext)
		t.emit(jaasKey, "sasl.oauthbearer.extensions", strings.Join(ext, ","))
	}

	for java, lib := range oauthAssertionKeys {
		v, set := t.get(java)
		switch {
		case !set:
		case grant == "":
			// Only the jwt-bearer grant signs assertions.
			t.drop(java)
		case java == "sasl.oauthbearer.assertion.claim.exp.seconds" && strings.TrimSpace(v) == "0":
			t.fail(java, "invalid value 0: librdkafka requires at least 1")
		default:
			t.emit(java, lib, strings.TrimSpace(v))
		}
	}
}

// oauthMode decides between OIDC and unsecured tokens, and the OIDC grant
// ("" for client_credentials). OIDC is on when the login callback handler or
// the JWT retriever (Kafka 4.1) asks for it, or a token endpoint is set.
func (t *translator) oauthMode() (oidc bool, grant string, ok bool) {
	ok = true
	if v, set := t.get("sasl.login.callback.handler.class"); set {
		switch strings.TrimSpace(v) {
		case "":
		case oauthLoginHandler, oauthLoginHandlerLegacy:
			oidc = true
		default:
			t.fail("sasl.login.callback.handler.class", "login callback handler %q cannot run in librdkafka; only Kafka's OAuthBearerLoginCallbackHandler (OIDC) is supported", strings.TrimSpace(v))
			ok = false
		}
	}
	if v, set := t.get("sasl.oauthbearer.jwt.retriever.class"); set {
		switch strings.TrimSpace(v) {
		case "", oauthPackage + "DefaultJwtRetriever":
			// It picks by the other settings, as decided here.
			t.drop("sasl.oauthbearer.jwt.retriever.class")
		case oauthPackage + "ClientCredentialsJwtRetriever":
			oidc = true
		case oauthPackage + "JwtBearerJwtRetriever":
			oidc, grant = true, jwtBearerGrant
		case oauthPackage + "FileJwtRetriever":
			t.fail("sasl.oauthbearer.jwt.retriever.class", "reading tokens from a file is not supported")
			ok = false
		default:
			t.fail("sasl.oauthbearer.jwt.retriever.class", "JWT retriever %q cannot run in librdkafka", strings.TrimSpace(v))
			ok = false
		}
	}
	if strings.TrimSpace(t.in["sasl.oauthbearer.token.endpoint.url"]) != "" {
		oidc = true
	}
	return oidc, grant, ok
}

// unsecuredJWT translates the options of Java's default
// OAuthBearerUnsecuredLoginCallbackHandler into librdkafka's
// sasl.oauthbearer.config for its built-in unsecured JWT.
func (t *translator) unsecuredJWT(e jaasEntry) {
	const (
		key    = "sasl.jaas.config"
		prefix = "unsecuredLogin"
	)
	opts := e.options
	principalClaim := strings.TrimSpace(opts[prefix+"PrincipalClaimName"])
	if principalClaim == "" {
		principalClaim = "sub"
	}
	scopeClaim := strings.TrimSpace(opts[prefix+"ScopeClaimName"])
	if scopeClaim == "" {
		scopeClaim = "scope"
	}
	principal, ok := opts[prefix+"StringClaim_"+principalClaim]
	if !ok || strings.TrimSpace(principal) == "" {
		t.fail(key, "unsecured OAUTHBEARER needs the principal in the option %sStringClaim_%s", prefix, principalClaim)
		return
	}
	parts := []string{"principalClaimName=" + principalClaim, "principal=" + principal}
	if scopeClaim != "scope" {
		parts = append(parts, "scopeClaimName="+scopeClaim)
	}
	if list := opts[prefix+"ListClaim_"+scopeClaim]; list != "" {
		// Java's list claims start with their own delimiter: ",a,b" or "|a|b".
		var scopes []string
		for _, s := range strings.Split(list[1:], list[:1]) {
			if s != "" {
				scopes = append(scopes, s)
			}
		}
		parts = append(parts, "scope="+strings.Join(scopes, ","))
	}
	if life := strings.TrimSpace(opts[prefix+"LifetimeSeconds"]); life != "" {
		if _, err := parseInteger(life, 1, javaLongMax); err != nil {
			t.fail(key, "%sLifetimeSeconds: %v", prefix, err)
			return
		}
		parts = append(parts, "lifeSeconds="+life)
	}
	var ext []string
	for opt, v := range opts {
		switch name, isExt := strings.CutPrefix(opt, prefix+"Extension_"); {
		case isExt:
			ext = append(ext, "extension_"+name+"="+v)
		case opt == prefix+"PrincipalClaimName", opt == prefix+"ScopeClaimName", opt == prefix+"LifetimeSeconds",
			opt == prefix+"StringClaim_"+principalClaim, opt == prefix+"ListClaim_"+scopeClaim:
		default:
			t.warn(key, "option %s has no librdkafka equivalent and is ignored", opt)
		}
	}
	sort.Strings(ext)
	parts = append(parts, ext...)
	for _, p := range parts {
		if err := quoteFree(p, " \t\n"); err != nil {
			t.fail(key, "unsecured OAUTHBEARER: %v", err)
			return
		}
	}
	t.emit(key, "enable.sasl.oauthbearer.unsecure.jwt", "true")
	t.emit(key, "sasl.oauthbearer.config", strings.Join(parts, " "))
}

package clientconfig

import (
	"testing"
)

func saslProps(mech, jaas string, kv ...string) map[string]string {
	m := map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanism": mech, "sasl.jaas.config": jaas}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

const (
	plainJAAS = `org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="p w;d";`
	scramJAAS = `org.apache.kafka.common.security.scram.ScramLoginModule required username="bob" password='s3cr3t';`
	oauthJAAS = `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="app" clientSecret="sec ret" scope="kafka" extension_logicalCluster="lkc-1" extension_pool="p9";`
)

func TestTranslateSASL(t *testing.T) {
	runTranslateCases(t, []translateCase{
		{name: "PLAIN", role: ReplicationConsumer, in: saslProps("PLAIN", plainJAAS),
			want: map[string]string{"security.protocol": "sasl_ssl", "sasl.mechanism": "PLAIN",
				"sasl.username": "alice", "sasl.password": "p w;d"},
			absent: []string{"sasl.jaas.config"}},
		{name: "SCRAM", role: ReplicationProducer, in: saslProps("scram-sha-512", scramJAAS),
			want: map[string]string{"sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "bob", "sasl.password": "s3cr3t"}},
		{name: "SCRAM delegation tokens", role: ReplicationProducer,
			in:     saslProps("SCRAM-SHA-256", `org.apache.kafka.common.security.scram.ScramLoginModule required username="t" password="h" tokenauth="true";`),
			errKey: "sasl.jaas.config", errMsg: "tokenauth=true"},
		{name: "PLAIN without password", role: SourceAdmin,
			in:     saslProps("PLAIN", `org.apache.kafka.common.security.plain.PlainLoginModule required username="a";`),
			errKey: "sasl.jaas.config", errMsg: "needs both the username and password"},
		{name: "JAAS syntax error carries Java's message", role: SourceAdmin,
			in:     saslProps("PLAIN", `org.apache.kafka.common.security.plain.PlainLoginModule required username="a" password="b"`),
			errKey: "sasl.jaas.config", errMsg: "JAAS config entry not terminated by semi-colon"},
		{name: "two login modules", role: SourceAdmin, in: saslProps("PLAIN", plainJAAS+" "+scramJAAS),
			errKey: "sasl.jaas.config", errMsg: "JAAS config property contains 2 login modules, should be 1 module"},
		{name: "missing JAAS", role: SourceAdmin, in: saslProps("PLAIN", ""),
			errKey: "sasl.jaas.config", errMsg: "missing"},
		{name: "GSSAPI by default", role: SourceAdmin,
			in:     map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.kerberos.service.name": "kafka"},
			errKey: "sasl.mechanism", errMsg: "defaults to GSSAPI"},
		{name: "GSSAPI", role: SourceAdmin, in: saslProps("GSSAPI", `com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true;`),
			errKey: "sasl.mechanism", errMsg: "without Kerberos"},
		{name: "Kerberos login module", role: SourceAdmin,
			in:     saslProps("PLAIN", `com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true;`),
			errKey: "sasl.jaas.config", errMsg: "without Kerberos"},
		{name: "unknown mechanism", role: SourceAdmin, in: saslProps("AWS_MSK_IAM", `software.amazon.msk.auth.iam.IAMLoginModule required;`),
			errKey: "sasl.mechanism", errMsg: "not supported"},
		{name: "unknown login module", role: SourceAdmin, in: saslProps("PLAIN", `com.acme.Login required username="a" password="b";`),
			errKey: "sasl.jaas.config", errMsg: "not supported"},
		{name: "custom callback handler", role: SourceAdmin,
			in:     saslProps("PLAIN", plainJAAS, "sasl.client.callback.handler.class", "com.acme.H"),
			errKey: "sasl.client.callback.handler.class", errMsg: "custom SASL classes"},
		{name: "login tuning and Kerberos keys dropped", role: SourceAdmin,
			in: saslProps("PLAIN", plainJAAS, "sasl.login.retry.backoff.ms", "100", "sasl.kerberos.service.name", "kafka",
				"sasl.oauthbearer.token.endpoint.url", "https://idp/token"),
			dropped: []string{"sasl.login.retry.backoff.ms", "sasl.kerberos.service.name", "sasl.oauthbearer.token.endpoint.url"}},
		{name: "sasl keys unused without SASL", role: SourceAdmin,
			in: map[string]string{"security.protocol": "SSL", "sasl.mechanism": "GSSAPI", "sasl.jaas.config": "broken",
				"sasl.username": "x"},
			absent:  []string{"sasl.mechanism", "sasl.username"},
			dropped: []string{"sasl.mechanism", "sasl.jaas.config", "sasl.username"}},

		{name: "OAUTHBEARER OIDC", role: ReplicationConsumer,
			in: saslProps("OAUTHBEARER", oauthJAAS,
				"sasl.login.callback.handler.class", "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
				"sasl.oauthbearer.token.endpoint.url", "https://idp.example/token"),
			want: map[string]string{
				"sasl.mechanism":                      "OAUTHBEARER",
				"sasl.oauthbearer.method":             "oidc",
				"builtin.features":                    "oidc",
				"sasl.oauthbearer.token.endpoint.url": "https://idp.example/token",
				"sasl.oauthbearer.client.id":          "app",
				"sasl.oauthbearer.client.secret":      "sec ret",
				"sasl.oauthbearer.scope":              "kafka",
				"sasl.oauthbearer.extensions":         "logicalCluster=lkc-1,pool=p9",
			}},
		{name: "OAUTHBEARER 4.1 keys win over JAAS options, with URL encoding", role: ReplicationConsumer,
			in: saslProps("OAUTHBEARER", oauthJAAS,
				"sasl.oauthbearer.jwt.retriever.class", "org.apache.kafka.common.security.oauthbearer.ClientCredentialsJwtRetriever",
				"sasl.oauthbearer.token.endpoint.url", "https://idp.example/token",
				"sasl.oauthbearer.client.credentials.client.id", "new app",
				"sasl.oauthbearer.scope", "other",
				"sasl.oauthbearer.header.urlencode", "true"),
			want: map[string]string{
				"sasl.oauthbearer.client.id":     "new+app",
				"sasl.oauthbearer.client.secret": "sec+ret",
				"sasl.oauthbearer.scope":         "other",
			}},
		{name: "OAUTHBEARER jwt-bearer grant", role: SourceAdmin,
			in: saslProps("OAUTHBEARER", `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;`,
				"sasl.oauthbearer.jwt.retriever.class", "org.apache.kafka.common.security.oauthbearer.JwtBearerJwtRetriever",
				"sasl.oauthbearer.token.endpoint.url", "https://idp.example/token",
				"sasl.oauthbearer.assertion.private.key.file", "testdata/keystore.pem",
				"sasl.oauthbearer.assertion.template.file", "testdata/tpl.json"),
			want: map[string]string{
				"sasl.oauthbearer.grant.type":                  jwtBearerGrant,
				"sasl.oauthbearer.assertion.private.key.file":  "testdata/keystore.pem",
				"sasl.oauthbearer.assertion.jwt.template.file": "testdata/tpl.json",
			}},
		{name: "OAUTHBEARER file token endpoint", role: SourceAdmin,
			in: saslProps("OAUTHBEARER", oauthJAAS,
				"sasl.login.callback.handler.class", "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
				"sasl.oauthbearer.token.endpoint.url", "file:///var/token"),
			errKey: "sasl.oauthbearer.token.endpoint.url", errMsg: "not an http(s) URL"},
		{name: "OAUTHBEARER without client id", role: SourceAdmin,
			in: saslProps("OAUTHBEARER", `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientSecret="s";`,
				"sasl.oauthbearer.token.endpoint.url", "https://idp.example/token"),
			errKey: "sasl.oauthbearer.client.credentials.client.id", errMsg: "clientId"},
		{name: "OAUTHBEARER MSK IAM handler", role: SourceAdmin,
			in: saslProps("OAUTHBEARER", `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;`,
				"sasl.login.callback.handler.class", "software.amazon.msk.auth.iam.IAMOAuthBearerLoginCallbackHandler"),
			errKey: "sasl.login.callback.handler.class", errMsg: "cannot run in librdkafka"},
		{name: "OAUTHBEARER custom sub claim", role: SourceAdmin,
			in: saslProps("OAUTHBEARER", oauthJAAS, "sasl.oauthbearer.token.endpoint.url", "https://idp/token",
				"sasl.oauthbearer.sub.claim.name", "client_id"),
			errKey: "sasl.oauthbearer.sub.claim.name", errMsg: "sub claim"},
		{name: "OAUTHBEARER unsecured", role: SourceAdmin,
			in: saslProps("OAUTHBEARER", `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required `+
				`unsecuredLoginStringClaim_sub="admin" unsecuredLoginListClaim_scope="|read|write" `+
				`unsecuredLoginLifetimeSeconds="600" unsecuredLoginExtension_team="a";`),
			want: map[string]string{
				"enable.sasl.oauthbearer.unsecure.jwt": "true",
				"sasl.oauthbearer.config":              "principalClaimName=sub principal=admin scope=read,write lifeSeconds=600 extension_team=a",
			},
			absent: []string{"sasl.oauthbearer.method"}},
		{name: "OAUTHBEARER unsecured without principal", role: SourceAdmin,
			in:     saslProps("OAUTHBEARER", `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;`),
			errKey: "sasl.jaas.config", errMsg: "unsecuredLoginStringClaim_sub"},
		{name: "OAUTHBEARER with the PLAIN module", role: SourceAdmin, in: saslProps("OAUTHBEARER", plainJAAS),
			errKey: "sasl.jaas.config", errMsg: "OAUTHBEARER needs"},
	})
}

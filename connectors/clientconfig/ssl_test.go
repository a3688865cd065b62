package clientconfig

import (
	"bytes"
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func sslProps(kv ...string) map[string]string {
	m := map[string]string{"security.protocol": "SSL"}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

func TestTranslateSSL(t *testing.T) {
	ca, err := os.ReadFile("testdata/ca.pem")
	require.NoError(t, err)
	runTranslateCases(t, []translateCase{
		{name: "PEM trust store file", role: SourceAdmin,
			in:   sslProps("ssl.truststore.type", "PEM", "ssl.truststore.location", "testdata/ca.pem"),
			want: map[string]string{"ssl.ca.location": "testdata/ca.pem"}},
		{name: "PEM trust store string", role: SourceAdmin,
			in:   sslProps("ssl.truststore.type", "PEM", "ssl.truststore.certificates", string(ca)),
			want: map[string]string{"ssl.ca.pem": string(ca)}},
		{name: "PEM certificates need the PEM type", role: SourceAdmin,
			in:     sslProps("ssl.truststore.certificates", string(ca)),
			errKey: "ssl.truststore.certificates", errMsg: "SSL trust store certs can be specified only for PEM, but trust store type is JKS."},
		{name: "PEM trust store with a password", role: SourceAdmin,
			in:     sslProps("ssl.truststore.type", "PEM", "ssl.truststore.location", "testdata/ca.pem", "ssl.truststore.password", "x"),
			errKey: "ssl.truststore.password", errMsg: "SSL trust store password cannot be specified for PEM format."},
		{name: "PEM key and chain strings", role: SourceAdmin,
			in: sslProps("ssl.keystore.type", "PEM", "ssl.keystore.key", "KEY", "ssl.keystore.certificate.chain", "CHAIN",
				"ssl.key.password", "kp"),
			want: map[string]string{"ssl.key.pem": "KEY", "ssl.certificate.pem": "CHAIN", "ssl.key.password": "kp"}},
		{name: "PEM key without chain", role: SourceAdmin,
			in:     sslProps("ssl.keystore.type", "PEM", "ssl.keystore.key", "KEY"),
			errKey: "ssl.keystore.key", errMsg: "SSL private key is specified, but certificate chain is not specified."},
		{name: "PEM key store file", role: SourceAdmin,
			in:   sslProps("ssl.keystore.type", "pem", "ssl.keystore.location", "testdata/keystore.pem"),
			want: map[string]string{"ssl.key.location": "testdata/keystore.pem", "ssl.certificate.location": "testdata/keystore.pem"}},
		{name: "PKCS12 key store passes through", role: SourceAdmin,
			in: sslProps("ssl.keystore.type", "PKCS12", "ssl.keystore.location", "testdata/keystore.p12",
				"ssl.keystore.password", "changeit", "ssl.key.password", "changeit"),
			want: map[string]string{"ssl.keystore.location": "testdata/keystore.p12", "ssl.keystore.password": "changeit"}},
		{name: "PKCS12 declared as JKS is still PKCS12", role: SourceAdmin,
			in:   sslProps("ssl.keystore.location", "testdata/keystore.p12", "ssl.keystore.password", "changeit"),
			want: map[string]string{"ssl.keystore.location": "testdata/keystore.p12"}},
		{name: "PKCS12 key password differs", role: SourceAdmin,
			in: sslProps("ssl.keystore.location", "testdata/keystore.p12", "ssl.keystore.password", "changeit",
				"ssl.key.password", "other"),
			errKey: "ssl.key.password", errMsg: "different from its store password"},
		{name: "key store without password", role: SourceAdmin,
			in:     sslProps("ssl.keystore.location", "testdata/keystore.p12"),
			errKey: "ssl.keystore.location", errMsg: "SSL key store is specified, but key store password is not specified."},
		{name: "JKS key store with a wrong key password", role: SourceAdmin,
			in: sslProps("ssl.keystore.location", "testdata/keystore.jks", "ssl.keystore.password", "changeit",
				"ssl.key.password", "wrong"),
			errKey: "ssl.keystore.location", errMsg: "Cannot recover key: the key password is wrong"},
		{name: "JKS key store with a wrong store password", role: SourceAdmin,
			in:     sslProps("ssl.keystore.location", "testdata/keystore.jks", "ssl.keystore.password", "wrong"),
			errKey: "ssl.keystore.location", errMsg: "Keystore was tampered with, or password was incorrect"},
		{name: "PKCS12 trust store rejected with the conversion", role: SourceAdmin,
			in:     sslProps("ssl.truststore.location", "testdata/truststore.p12", "ssl.truststore.password", "changeit"),
			errKey: "ssl.truststore.location", errMsg: "openssl pkcs12 -in testdata/truststore.p12 -nokeys -out ca.pem"},
		{name: "PEM trust store file declared as JKS", role: SourceAdmin,
			in:     sslProps("ssl.truststore.location", "testdata/ca.pem"),
			errKey: "ssl.truststore.location", errMsg: "set ssl.truststore.type=PEM"},
		{name: "PEM key store file declared as PKCS12", role: SourceAdmin,
			in:     sslProps("ssl.keystore.type", "PKCS12", "ssl.keystore.location", "testdata/keystore.pem", "ssl.keystore.password", "x"),
			errKey: "ssl.keystore.location", errMsg: "set ssl.keystore.type=PEM"},
		{name: "missing trust store file", role: SourceAdmin,
			in:     sslProps("ssl.truststore.location", "testdata/nope.jks"),
			errKey: "ssl.truststore.location", errMsg: "cannot read trust store"},
		{name: "unsupported store type", role: SourceAdmin,
			in:     sslProps("ssl.keystore.type", "BCFKS", "ssl.keystore.location", "testdata/keystore.p12", "ssl.keystore.password", "p"),
			errKey: "ssl.keystore.type", errMsg: "not supported"},
		{name: "a store type without a store is unused, as in Java", role: SourceAdmin,
			in: sslProps("ssl.keystore.type", "BCFKS")},
		{name: "endpoint identification off", role: SourceAdmin,
			in:   sslProps("ssl.endpoint.identification.algorithm", ""),
			want: map[string]string{"ssl.endpoint.identification.algorithm": "none"}},
		{name: "endpoint identification https", role: SourceAdmin,
			in:   sslProps("ssl.endpoint.identification.algorithm", "HTTPS"),
			want: map[string]string{"ssl.endpoint.identification.algorithm": "https"}},
		{name: "TLS 1.2+ protocols dropped", role: SourceAdmin,
			in:      sslProps("ssl.protocol", "TLSv1.3", "ssl.enabled.protocols", "TLSv1.2,TLSv1.3"),
			dropped: []string{"ssl.protocol", "ssl.enabled.protocols"}},
		{name: "TLS 1.1 rejected", role: SourceAdmin, in: sslProps("ssl.enabled.protocols", "TLSv1.1,TLSv1.2"),
			errKey: "ssl.enabled.protocols", errMsg: "TLSv1.1"},
		{name: "cipher suites translated", role: SourceAdmin,
			in:   sslProps("ssl.cipher.suites", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, TLS_AES_128_GCM_SHA256,TLS_RSA_WITH_AES_256_CBC_SHA"),
			want: map[string]string{"ssl.cipher.suites": "ECDHE-RSA-AES128-GCM-SHA256:AES256-SHA"}, warn: "ssl.cipher.suites"},
		{name: "unknown cipher suite", role: SourceAdmin, in: sslProps("ssl.cipher.suites", "TLS_FOO"),
			errKey: "ssl.cipher.suites", errMsg: "TLS_FOO"},
		{name: "JSSE-only keys dropped", role: SourceAdmin,
			in: sslProps("ssl.keymanager.algorithm", "SunX509", "ssl.trustmanager.algorithm", "PKIX",
				"ssl.secure.random.implementation", "SHA1PRNG", "ssl.provider", "SunJSSE"),
			dropped: []string{"ssl.keymanager.algorithm", "ssl.trustmanager.algorithm",
				"ssl.secure.random.implementation", "ssl.provider"}},
		{name: "custom SSL engine factory", role: SourceAdmin, in: sslProps("ssl.engine.factory.class", "com.acme.F"),
			errKey: "ssl.engine.factory.class", errMsg: "custom SSL engine"},
		{name: "librdkafka ssl key passes through", role: SourceAdmin, in: sslProps("ssl.crl.location", "testdata/ca.pem"),
			want: map[string]string{"ssl.crl.location": "testdata/ca.pem"}},
		{name: "ssl keys unused with PLAINTEXT", role: SourceAdmin,
			in: map[string]string{"ssl.keystore.location": "testdata/keystore.jks", "ssl.keystore.password": "x",
				"ssl.truststore.location": "/nope", "ssl.ca.location": "/ca.pem"},
			absent: []string{"ssl.keystore.location", "ssl.ca.location", "ssl.truststore.location"},
			dropped: []string{"ssl.keystore.location", "ssl.keystore.password", "ssl.truststore.location",
				"ssl.ca.location"}},
	})
}

func TestTranslateJKSTrustStore(t *testing.T) {
	cfg := mustTranslate(t, SourceAdmin, map[string]string{
		"bootstrap.servers":       "a:1",
		"security.protocol":       "SASL_SSL",
		"sasl.mechanism":          "PLAIN",
		"sasl.jaas.config":        `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p";`,
		"ssl.truststore.location": "testdata/truststore.jks",
		"ssl.truststore.password": "changeit",
	})
	require.NotContains(t, cfg.Props, "ssl.truststore.location")
	require.ElementsMatch(t, []string{pemDER(t, "testdata/ca.pem"), pemDER(t, "testdata/ca2.pem")},
		derBlocks(t, cfg.Props["ssl.ca.pem"]))
}

func TestJKSTrustedCerts(t *testing.T) {
	store, err := os.ReadFile("testdata/truststore.jks")
	require.NoError(t, err)

	t.Run("no password skips the integrity check", func(t *testing.T) {
		out, err := jksTrustedCertsPEM(store, "")
		require.NoError(t, err)
		require.Len(t, derBlocks(t, out), 2)
	})
	t.Run("wrong password", func(t *testing.T) {
		_, err := jksTrustedCertsPEM(store, "wrong")
		require.EqualError(t, err, "Keystore was tampered with, or password was incorrect")
	})
	t.Run("tampered", func(t *testing.T) {
		bad := append([]byte(nil), store...)
		bad[len(bad)/2] ^= 1
		_, err := jksTrustedCertsPEM(bad, "changeit")
		require.Error(t, err)
	})
	t.Run("truncated", func(t *testing.T) {
		_, err := jksTrustedCertsPEM(store[:40], "")
		require.ErrorContains(t, err, "malformed JKS key store")
	})
	t.Run("key entries contribute their leaf certificate", func(t *testing.T) {
		ks, err := os.ReadFile("testdata/keystore.jks")
		require.NoError(t, err)
		out, err := jksTrustedCertsPEM(ks, "changeit")
		require.NoError(t, err)
		blocks := derBlocks(t, out)
		require.Len(t, blocks, 1)
		require.NotEqual(t, pemDER(t, "testdata/ca.pem"), blocks[0], "the leaf, not the CA of the chain")
	})
	t.Run("via Translate, a wrong password names the key and the file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "ts.jks")
		require.NoError(t, os.WriteFile(path, store, 0o600))
		_, errs := translate(Options{Files: allowDirs(t, filepath.Dir(path))}, SourceAdmin, sslProps("bootstrap.servers", "a:1",
			"ssl.truststore.location", path, "ssl.truststore.password", "nope"))
		require.Len(t, errs, 1)
		require.Equal(t, "ssl.truststore.location", errs[0].Key)
		require.True(t, strings.HasPrefix(errs[0].Msg, path+": Keystore was tampered with"))
	})
}

func pemDER(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	b, _ := pem.Decode(data)
	require.NotNil(t, b)
	return string(b.Bytes)
}

func derBlocks(t *testing.T, s string) []string {
	t.Helper()
	var out []string
	rest := []byte(s)
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		require.Equal(t, "CERTIFICATE", b.Type)
		out = append(out, string(b.Bytes))
	}
	return out
}

// TestJKSKeyStoreBecomesPEM: librdkafka cannot read a JKS key store, so its private key is recovered (Sun's key
// protection) and handed over with its certificate chain as PEM. The recovered key must be the one the
// certificate was issued for, and no key password reaches librdkafka (the PEM key is not encrypted).
func TestJKSKeyStoreBecomesPEM(t *testing.T) {
	cfg := mustTranslate(t, SourceAdmin, sslProps("bootstrap.servers", "broker:9092", "ssl.keystore.location", "testdata/keystore.jks", "ssl.keystore.password", "changeit"))
	require.NotContains(t, cfg.Props, "ssl.keystore.location")
	require.NotContains(t, cfg.Props, "ssl.key.password")
	keyBlock, rest := pem.Decode([]byte(cfg.Props["ssl.key.pem"]))
	require.NotNil(t, keyBlock, "ssl.key.pem is PEM")
	require.Equal(t, "PRIVATE KEY", keyBlock.Type)
	require.Empty(t, bytes.TrimSpace(rest))
	key, err := x509.ParsePKCS8PrivateKey(keyBlock.Bytes)
	require.NoError(t, err)
	certBlock, _ := pem.Decode([]byte(cfg.Props["ssl.certificate.pem"]))
	require.NotNil(t, certBlock, "ssl.certificate.pem is PEM")
	cert, err := x509.ParseCertificate(certBlock.Bytes)
	require.NoError(t, err)
	pub, ok := key.(interface{ Public() crypto.PublicKey })
	require.True(t, ok)
	require.True(t, pub.Public().(interface{ Equal(crypto.PublicKey) bool }).Equal(cert.PublicKey),
		"the recovered key belongs to the key store's certificate")
	require.True(t, IsSecret("source.cluster.ssl.key.pem") || IsSecret("ssl.key.pem"), "the PEM key is treated as a secret")
}

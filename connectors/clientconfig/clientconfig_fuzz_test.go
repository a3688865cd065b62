package clientconfig

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Every client setting comes from a REST body, so the translation of Java client properties sees whatever a
// client sends. The fuzz targets here check that no input panics and that every error names the key at fault,
// the promise Validate's per-key messages rely on.

// javaPropsSeeds are client configs in .properties form ("key=value" lines), one per feature the translator
// has: each security protocol and SASL mechanism, the stores, the producer's and consumer's tuning.
var javaPropsSeeds = []string{
	"bootstrap.servers=broker:9092",
	"bootstrap.servers=b1:9092,b2:9093\nclient.id=mm2\nsecurity.protocol=PLAINTEXT\nrequest.timeout.ms=30000\n" +
		"reconnect.backoff.ms=50\nreconnect.backoff.max.ms=1000\nconnections.max.idle.ms=540000\nmetadata.max.age.ms=300000",
	"bootstrap.servers=broker:9092\nsecurity.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\n" +
		`sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="u" password="p";`,
	"bootstrap.servers=broker:9092\nsecurity.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n" +
		`sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username='a' password="b\"c";`,
	"bootstrap.servers=broker:9092\nsecurity.protocol=SASL_SSL\nsasl.mechanism=OAUTHBEARER\n" +
		"sasl.oauthbearer.token.endpoint.url=https://idp/token\nsasl.login.callback.handler.class=" +
		"org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler\n" +
		`sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="c" clientSecret="s" scope="x";`,
	"bootstrap.servers=broker:9092\nsecurity.protocol=SASL_SSL\nsasl.mechanism=GSSAPI\nsasl.kerberos.service.name=kafka",
	"bootstrap.servers=broker:9092\nsecurity.protocol=SSL\nssl.truststore.location=testdata/truststore.jks\n" +
		"ssl.truststore.password=changeit\nssl.keystore.type=PKCS12\nssl.keystore.location=testdata/keystore.p12\n" +
		"ssl.keystore.password=changeit\nssl.key.password=changeit\nssl.endpoint.identification.algorithm=",
	"bootstrap.servers=broker:9092\nsecurity.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.location=testdata/ca.pem\n" +
		"ssl.keystore.type=PEM\nssl.keystore.location=testdata/keystore.pem\nssl.enabled.protocols=TLSv1.2,TLSv1.3\n" +
		"ssl.protocol=TLSv1.3\nssl.cipher.suites=TLS_AES_128_GCM_SHA256,TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
	"bootstrap.servers=broker:9092\nsecurity.protocol=SSL\nssl.keystore.type=PEM\nssl.keystore.key=-----BEGIN PRIVATE KEY-----\n" +
		"ssl.keystore.certificate.chain=-----BEGIN CERTIFICATE-----\nssl.truststore.type=PEM\nssl.truststore.certificates=-----BEGIN CERTIFICATE-----",
	"bootstrap.servers=broker:9092\nacks=all\nenable.idempotence=true\nmax.in.flight.requests.per.connection=5\nretries=2147483647\n" +
		"batch.size=16384\nlinger.ms=5\ncompression.type=zstd\ncompression.zstd.level=3\nbuffer.memory=33554432\n" +
		"delivery.timeout.ms=120000\nmax.block.ms=60000\nmax.request.size=1048576\ntransactional.id=tx\ntransaction.timeout.ms=60000\n" +
		"partitioner.class=org.apache.kafka.clients.producer.RoundRobinPartitioner\ninterceptor.classes=\n" +
		"key.serializer=org.apache.kafka.common.serialization.ByteArraySerializer",
	"bootstrap.servers=broker:9092\nacks=0\nretries=0\nenable.idempotence=false\nmax.in.flight.requests.per.connection=1\ncompression.type=gzip",
	"bootstrap.servers=broker:9092\ngroup.id=g\nauto.offset.reset=earliest\nenable.auto.commit=false\nisolation.level=read_committed\n" +
		"fetch.min.bytes=1\nfetch.max.bytes=52428800\nfetch.max.wait.ms=500\nmax.partition.fetch.bytes=1048576\nmax.poll.records=500\n" +
		"session.timeout.ms=45000\nheartbeat.interval.ms=3000\ngroup.protocol=consumer\ngroup.remote.assignor=uniform\n" +
		"partition.assignment.strategy=org.apache.kafka.clients.consumer.CooperativeStickyAssignor\nclient.rack=r1\n" +
		"default.api.timeout.ms=60000\nmetrics.context.x=y",
	"bootstrap.servers=broker:9092\nqueue.buffering.max.kbytes=1024\nstatistics.interval.ms=0\nsocket.keepalive.enable=true\n" +
		"ssl.engine.location=/tmp/x.so\nplugin.library.paths=/tmp/p\nsasl.kerberos.kinit.cmd=kinit\nenable.ssl.certificate.verification=false",
	"bootstrap.servers=\nsecurity.protocol=bogus\nacks=2\nlinger.ms=-1\nbatch.size=x\ncompression.type=brotli\nfetch.max.wiat.ms=1",
}

// parseJavaProps reads "key=value" lines; a line without '=' is a key with an empty value.
func parseJavaProps(s string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		if line == "" {
			continue
		}
		k, v, _ := strings.Cut(line, "=")
		m[k] = v
	}
	return m
}

// fuzzStores points every file-path setting at one of the stores in testdata (chosen by the fuzzed value), so
// the fuzzer exercises the store readers without reading whatever file a mutated path names (/dev/zero would
// never end). Which paths a config may name at all is checked elsewhere.
func fuzzStores(t *testing.T, props map[string]string) {
	t.Helper()
	stores, err := filepath.Glob("testdata/*")
	if err != nil || len(stores) == 0 {
		t.Fatalf("no stores in testdata: %v", err)
	}
	slices.Sort(stores)
	for k, v := range props {
		if strings.HasSuffix(k, ".location") || strings.HasSuffix(k, ".file") || strings.HasSuffix(k, ".keytab") ||
			strings.HasSuffix(k, ".paths") || strings.HasSuffix(k, ".cmd") {
			if v != "" {
				props[k] = stores[len(v)%len(stores)]
			}
		}
	}
}

// FuzzTranslate: for every role, Translate returns a config or errors that are each a *KeyError on a key the
// input has (the empty key too, if that is what was sent) or on a Java key it lacks, so that Validate can put every message under the key
// the operator wrote.
func FuzzTranslate(f *testing.F) {
	for i, s := range javaPropsSeeds {
		f.Add(s, uint8(i))
	}
	f.Fuzz(func(t *testing.T, text string, roleByte uint8) {
		role := Role(int(roleByte) % (int(CheckpointsProducer) + 1))
		in := parseJavaProps(text)
		fuzzStores(t, in)
		cfg, errs := translate(testOptions(t), role, maps.Clone(in))
		for _, e := range errs {
			if e == nil || e.Msg == "" {
				t.Fatalf("%s: error %#v says nothing (input %q)", role, e, in)
			}
			// A key the input lacks is one that is missing or whose default does not work: it must be a Java
			// client key, which Validate then files under the prefix that should hold it.
			if _, ok := in[e.Key]; !ok {
				if _, java := javaKeyKinds(e.Key); !java {
					t.Fatalf("%s: error on %q, neither a key of the input nor a Java client key: %v (input %q)", role, e.Key, e, in)
				}
			}
		}
		if len(errs) > 0 {
			return
		}
		for k := range cfg.Props {
			if k == "" || strings.ContainsAny(k, " \t\n=") {
				t.Fatalf("%s: translated to librdkafka property %q (input %q)", role, k, in)
			}
		}
		if cfg.MaxPollRecords <= 0 || cfg.MaxBlock < 0 || cfg.DefaultAPITimeout < 0 {
			t.Fatalf("%s: nonsense limits %+v", role, cfg)
		}
	})
}

// FuzzValidate: Validate on a whole connector config (client keys under their MM2 prefixes) files each message
// under the key it is about, and every message starts with that key.
func FuzzValidate(f *testing.F) {
	classes := []string{"org.apache.kafka.connect.mirror.MirrorSourceConnector", "MirrorCheckpointConnector",
		"MirrorHeartbeatConnector"}
	prefixes := []string{"source.cluster.", "target.cluster.", "source.consumer.", "target.producer.", "producer.override.",
		"consumer.", "admin.", "source.admin."}
	for i, s := range javaPropsSeeds {
		var b strings.Builder
		b.WriteString("connector.class=" + classes[i%len(classes)] + "\n")
		b.WriteString("source.cluster.alias=A\ntarget.cluster.alias=B\noffset-syncs.topic.location=target\n")
		for _, line := range strings.Split(s, "\n") {
			b.WriteString(prefixes[(i+len(line))%len(prefixes)] + line + "\n")
		}
		f.Add(b.String())
	}
	f.Fuzz(func(t *testing.T, text string) {
		in := parseJavaProps(text)
		fuzzStores(t, in)
		for key, msgs := range testOptions(t).Validate(in, func(k string) bool { return strings.HasSuffix(k, ".alias") }) {
			if key == "" || len(msgs) == 0 {
				t.Fatalf("messages %q under key %q", msgs, key)
			}
			for _, m := range msgs {
				if !strings.HasPrefix(m, key+": ") {
					t.Fatalf("message %q under %q does not start with its key", m, key)
				}
			}
		}
	})
}

// FuzzParseJAAS: a sasl.jaas.config value parses into entries or fails with one of JaasConfig's messages, and
// what it parses to, written back with every string quoted, parses to the same entries.
func FuzzParseJAAS(f *testing.F) {
	for _, s := range []string{
		`org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p";`,
		`a.B required; c.D optional k=v;`,
		`m sufficient k="a\tb\101\\\"" 'x'='y' /* c */ // line` + "\n" + ` z="w";`,
		`m REQUISITE k=1;`, `m required k=-x;`, `m required k="unterminated`, "m required k=\"a\nb\";", `m`, `;`, ``,
		`"quoted module" required;`, `m required k="\`, `m bogus;`, `m required k=;`, `m required k`, `/`, `/*`, `-`,
		`m required k="é☃"; n optional;`, "\xff required;",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		entries, err := parseJAAS(s)
		if err != nil {
			if !strings.Contains(err.Error(), "JAAS config") {
				t.Fatalf("parseJAAS(%q): error %q does not say it is about the JAAS config", s, err)
			}
			return
		}
		if len(entries) == 0 {
			t.Fatalf("parseJAAS(%q): no entries and no error", s)
		}
		var b strings.Builder
		for _, e := range entries {
			switch e.flag {
			case "required", "requisite", "sufficient", "optional":
			default:
				t.Fatalf("parseJAAS(%q): flag %q", s, e.flag)
			}
			if e.module == "" {
				t.Fatalf("parseJAAS(%q): an entry without a module", s)
			}
			b.WriteString(jaasQuote(e.module) + " " + e.flag)
			for k, v := range e.options {
				b.WriteString(" " + jaasQuote(k) + "=" + jaasQuote(v))
			}
			b.WriteString(";\n")
		}
		again, err := parseJAAS(b.String())
		if err != nil {
			t.Fatalf("parseJAAS(%q) = %+v, written back as %q: %v", s, entries, b.String(), err)
		}
		if len(again) != len(entries) {
			t.Fatalf("written back as %q: %d entries, want %d", b.String(), len(again), len(entries))
		}
		for i := range entries {
			if again[i].module != entries[i].module || again[i].flag != entries[i].flag || !maps.Equal(again[i].options, entries[i].options) {
				t.Fatalf("parseJAAS(%q)[%d] = %+v, written back as %q it reads %+v", s, i, entries[i], b.String(), again[i])
			}
		}
	})
}

// jaasQuote writes s as a double-quoted StreamTokenizer string: backslash, quote and line ends escaped.
func jaasQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`)
	return `"` + r.Replace(s) + `"`
}

// FuzzJKS: a trust store file's bytes (any bytes, any password) give PEM certificates or an error, never a panic;
// the seeds are the test stores.
func FuzzJKS(f *testing.F) {
	for _, name := range []string{"testdata/truststore.jks", "testdata/keystore.jks"} {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, "changeit")
		f.Add(data, "")
		f.Add(data[:len(data)/2], "")
	}
	f.Add([]byte{0xFE, 0xED, 0xFE, 0xED, 0, 0, 0, 2, 0xFF, 0xFF, 0xFF, 0xFF}, "")
	f.Fuzz(func(t *testing.T, data []byte, password string) {
		pemCerts, err := jksTrustedCertsPEM(data, password)
		if err != nil {
			if pemCerts != "" {
				t.Fatalf("both PEM and error %v", err)
			}
			return
		}
		if pemCerts != "" && !strings.HasPrefix(pemCerts, "-----BEGIN CERTIFICATE-----") {
			t.Fatalf("PEM output %q", pemCerts)
		}
		// The key store path: an error, or a PKCS#8 key and a chain, never half of it.
		keyPEM, chainPEM, err := jksPrivateKeyPEM(data, password, password)
		if err != nil {
			if keyPEM != "" || chainPEM != "" {
				t.Fatalf("both PEM and error %v", err)
			}
			return
		}
		if !strings.HasPrefix(keyPEM, "-----BEGIN PRIVATE KEY-----") || !strings.HasPrefix(chainPEM, "-----BEGIN CERTIFICATE-----") {
			t.Fatalf("key store PEM output %q / %q", keyPEM, chainPEM)
		}
	})
}

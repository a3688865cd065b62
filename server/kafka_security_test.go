package server_test

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
	"github.com/kmirror/kmirror/server"
)

// The secured broker S (scripts/harness up-secure) is started once per test binary: early, by TestMain, when
// the whole package runs (its JVM then starts while other tests run), else by the first test that asks.
// TestMain stops it if this binary started it; `scripts/harness down` stops it too, so a killed test run
// leaks nothing past the harness.
var secure struct {
	once    sync.Once
	err     error
	started bool
	dir     string
}

// secureBroker waits for broker S and fails the test if it could not start. Its KAFKA_S_* variables are
// exported, so that kafkatest's helpers reach it as cluster "S" (through its PLAINTEXT listener, which only
// the tests' own tools use).
func secureBroker(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs the secured broker S: skipped under -short, the suite without brokers or PostgreSQL")
	}
	secure.once.Do(upSecure)
	require.NoError(t, secure.err)
}

func upSecure() {
	if os.Getenv("KAFKA_S_SASL_SSL_BOOTSTRAP") != "" {
		return // started by whoever runs the tests (e.g. `. DIR/S/env`)
	}
	dir := os.Getenv("KMIRROR_HARNESS_DIR")
	if dir == "" {
		secure.err = fmt.Errorf("KMIRROR_HARNESS_DIR is not set: run the tests with ./scripts/test, which starts the harness")
		return
	}
	t0 := time.Now()
	cmd := exec.Command(filepath.Join("..", "scripts", "harness"), "up-secure", "--dir", dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		secure.err = fmt.Errorf("scripts/harness up-secure: %w\n%s", err, stderr.String())
		return
	}
	secure.started, secure.dir = !strings.Contains(stderr.String(), "already running"), dir
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimPrefix(sc.Text(), "export "), "=")
		if !ok || strings.HasPrefix(k, "#") {
			continue
		}
		os.Setenv(k, strings.Trim(v, "'"))
	}
	// The harness's own timing lines say where the time went (certificates, format, broker start).
	fmt.Fprintf(os.Stderr, "%ssecured broker S up in %.1f s\n", stderr.String(), time.Since(t0).Seconds())
}

func TestMain(m *testing.M) {
	flag.Parse()
	// The whole package (CI): start S at once, alongside the tests that run before the ones that need it.
	// With -run, only when a test asks: the chosen tests may not need it at all.
	if flag.Lookup("test.run").Value.String() == "" && flag.Lookup("test.list").Value.String() == "" &&
		os.Getenv("KMIRROR_HARNESS_DIR") != "" && !testing.Short() {
		go secure.once.Do(upSecure)
	}
	code := m.Run()
	secure.once.Do(func() {}) // waits for an early start still under way
	if secure.started {
		cmd := exec.Command(filepath.Join("..", "scripts", "harness"), "down-secure", "--dir", secure.dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "scripts/harness down-secure: %v\n%s", err, out)
		}
	}
	os.Exit(code)
}

// allowSecrets lets kmirror open broker S's client stores (--allowed-file-dirs): the one directory they
// all live in.
func allowSecrets(c *server.Config) {
	c.Clients.AllowedFileDirs = []string{os.Getenv("KAFKA_S_SECRETS")}
}

// secretsPath names a client store of broker S. Every store a test config names lives in this one
// directory (KAFKA_S_SECRETS), so that an --allowed-file-dirs setting needs one entry for all of them.
func secretsPath(name string) string { return filepath.Join(os.Getenv("KAFKA_S_SECRETS"), name) }

// secureCluster is a way into broker S with Java-style client configs, as an MM2 user would write them.
type secureCluster struct {
	name      string
	bootstrap func() string
	config    func() map[string]string
}

func jaas(module, user, password string) string {
	return fmt.Sprintf(`org.apache.kafka.common.security.%s required username="%s" password="%s";`, module, user, password)
}

var (
	scramJKS = secureCluster{name: "SASL_SSL SCRAM-SHA-512, JKS trust store",
		bootstrap: func() string { return os.Getenv("KAFKA_S_SASL_SSL_BOOTSTRAP") },
		config: func() map[string]string {
			return map[string]string{
				"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
				"sasl.jaas.config":    jaas("scram.ScramLoginModule", os.Getenv("KAFKA_S_SCRAM_USER"), os.Getenv("KAFKA_S_SCRAM_PASSWORD")),
				"ssl.truststore.type": "JKS", "ssl.truststore.location": secretsPath("truststore.jks"),
				"ssl.truststore.password": os.Getenv("KAFKA_S_STORE_PASSWORD"),
			}
		}}
	plainPEM = secureCluster{name: "SASL_SSL PLAIN, PEM trust store",
		bootstrap: func() string { return os.Getenv("KAFKA_S_SASL_SSL_BOOTSTRAP") },
		config: func() map[string]string {
			return map[string]string{
				"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN",
				"sasl.jaas.config":    jaas("plain.PlainLoginModule", os.Getenv("KAFKA_S_PLAIN_USER"), os.Getenv("KAFKA_S_PLAIN_PASSWORD")),
				"ssl.truststore.type": "PEM", "ssl.truststore.location": secretsPath("ca.pem"),
			}
		}}
	mtlsPEM = secureCluster{name: "SSL mutual TLS, PEM key store, JKS trust store",
		bootstrap: func() string { return os.Getenv("KAFKA_S_SSL_BOOTSTRAP") },
		config: func() map[string]string {
			return map[string]string{
				"security.protocol": "SSL",
				"ssl.keystore.type": "PEM", "ssl.keystore.location": secretsPath("client-keystore.pem"),
				"ssl.truststore.type": "JKS", "ssl.truststore.location": secretsPath("truststore.jks"),
				"ssl.truststore.password": os.Getenv("KAFKA_S_STORE_PASSWORD"),
			}
		}}
	mtlsJKS = secureCluster{name: "SSL mutual TLS, JKS key store, JKS trust store",
		bootstrap: func() string { return os.Getenv("KAFKA_S_SSL_BOOTSTRAP") },
		config: func() map[string]string {
			return map[string]string{
				"security.protocol": "SSL",
				"ssl.keystore.type": "JKS", "ssl.keystore.location": secretsPath("client.jks"),
				"ssl.keystore.password": os.Getenv("KAFKA_S_STORE_PASSWORD"),
				"ssl.truststore.type":   "JKS", "ssl.truststore.location": secretsPath("truststore.jks"),
				"ssl.truststore.password": os.Getenv("KAFKA_S_STORE_PASSWORD"),
			}
		}}
	mtlsPKCS12 = secureCluster{name: "SSL mutual TLS, PKCS12 key store, PEM trust store",
		bootstrap: func() string { return os.Getenv("KAFKA_S_SSL_BOOTSTRAP") },
		config: func() map[string]string {
			return map[string]string{
				"security.protocol": "SSL",
				"ssl.keystore.type": "PKCS12", "ssl.keystore.location": secretsPath("client.p12"),
				"ssl.keystore.password": os.Getenv("KAFKA_S_STORE_PASSWORD"),
				"ssl.truststore.type":   "PEM", "ssl.truststore.location": secretsPath("ca.pem"),
			}
		}}
)

// securedMirror is a MirrorSourceConnector config from cluster src to dst ("A", "B" or "S"), the S side
// reached through sc.
func securedMirror(t *testing.T, src, dst string, sc secureCluster, topic string) map[string]any {
	cfg := map[string]any{
		"connector.class":                       "org.apache.kafka.connect.mirror.MirrorSourceConnector",
		"source.cluster.alias":                  src,
		"target.cluster.alias":                  dst,
		"topics":                                topic,
		"tasks.max":                             "2",
		"replication.factor":                    "1",
		"offset-syncs.topic.replication.factor": "1",
		"sync.topic.acls.enabled":               "false",
		"sync.topic.configs.enabled":            "false",
		"refresh.topics.interval.seconds":       "1",
	}
	for side, cluster := range map[string]string{"source": src, "target": dst} {
		if cluster != "S" {
			cfg[side+".cluster.bootstrap.servers"] = kafkatest.Bootstrap(t, cluster)
			continue
		}
		cfg[side+".cluster.bootstrap.servers"] = sc.bootstrap()
		for k, v := range sc.config() {
			cfg[side+".cluster."+k] = v
		}
	}
	return cfg
}

// awaitEnds waits until every partition of topic on cluster holds at least want records.
func awaitEnds(t *testing.T, cluster, topic string, partitions int, want int64, within time.Duration) {
	t.Helper()
	require.Eventually(t, func() bool {
		for _, end := range kafkatest.PartitionEnds(t, cluster, topic, partitions) {
			if end < want {
				return false
			}
		}
		return true
	}, within, 200*time.Millisecond, "%s on %s never reached %d records per partition (now %v)",
		topic, cluster, want, kafkatest.PartitionEnds(t, cluster, topic, partitions))
}

// TestReplicationThroughSecuredListeners replicates through each secured listener of broker S, with the
// Java-style configs an MM2 user writes, in both directions (S as the target, S as the source), and audits
// every record: each remote partition must hold its source partition's sequence exactly once and in order.
func TestReplicationThroughSecuredListeners(t *testing.T) {
	t.Parallel()
	secureBroker(t)
	const partitions, perPartition = 2, 1500
	cases := []struct {
		src, dst string
		sc       secureCluster
	}{
		{"A", "S", scramJKS},
		{"S", "B", plainPEM},
		{"A", "S", mtlsPEM},
		{"S", "B", mtlsPKCS12},
		{"A", "S", mtlsJKS},
	}
	for _, tc := range cases {
		t.Run(tc.src+"->"+tc.dst+" "+tc.sc.name, func(t *testing.T) {
			t.Parallel()
			t0 := time.Now()
			k := startKmirror(t, "", allowSecrets)
			topic := kafkatest.TopicName(t, "sec")
			kafkatest.CreateTopic(t, tc.src, topic, partitions, nil)
			seq := make([]int, partitions)
			kafkatest.Produce(t, tc.src, handoverRecords(topic, partitions, seq, perPartition/2))

			name := "sec-" + uniqueAlias("")
			code, body := k.do(http.MethodPut, "/connectors/"+name+"/config", securedMirror(t, tc.src, tc.dst, tc.sc, topic))
			require.Equal(t, http.StatusCreated, code, "%v", body)
			k.awaitStates(name, "RUNNING RUNNING RUNNING", 90*time.Second)
			// Records produced while the connector runs, too.
			kafkatest.Produce(t, tc.src, handoverRecords(topic, partitions, seq, perPartition-perPartition/2))

			remote := tc.src + "." + topic
			awaitEnds(t, tc.dst, remote, partitions, perPartition, 2*time.Minute)
			got := kafkatest.ReadPartitions(t, tc.dst, map[string]int{remote: partitions}, 0)
			for p := range partitions {
				a := auditHandover(t, p, got[kafkatest.Partition{Topic: remote, Partition: int32(p)}], perPartition)
				t.Logf("audit of %s [%d]: %d records: %d missing, %d duplicated, %d reordered", remote, p, a.records, a.missing, a.duplicated, a.reordered)
				require.Equal(t, handoverAudit{records: perPartition}, a, "partition %d", p)
			}
			require.Equal(t, "RUNNING RUNNING RUNNING", k.states(name))
			t.Logf("%s: %d records replicated and audited in %.1f s", tc.sc.name, partitions*perPartition, time.Since(t0).Seconds())
		})
	}
}

// connectorStatus returns the connector's state and trace ("" when it has none, or no status yet).
func connectorStatus(k *kmirror, name string) (state, trace string) {
	code, body := k.do(http.MethodGet, "/connectors/"+name+"/status", nil)
	if code != http.StatusOK {
		return "", ""
	}
	c := body.(map[string]any)["connector"].(map[string]any)
	state, _ = c["state"].(string)
	trace, _ = c["trace"].(string)
	return state, trace
}

// TestWrongPasswordFailsTheConnector gives one side a wrong SCRAM password: the connector must end up
// FAILED with a trace that names the authentication failure, instead of RUNNING while librdkafka retries
// the handshake for ever and every request times out as a "broker transport failure".
func TestWrongPasswordFailsTheConnector(t *testing.T) {
	t.Parallel()
	secureBroker(t)
	for _, side := range []string{"target", "source"} {
		t.Run(side, func(t *testing.T) {
			t.Parallel()
			k := startKmirror(t, "", allowSecrets)
			src, dst := "A", "S"
			if side == "source" {
				src, dst = "S", "B"
			}
			topic := kafkatest.TopicName(t, "secbad")
			kafkatest.CreateTopic(t, src, topic, 1, nil)
			cfg := securedMirror(t, src, dst, scramJKS, topic)
			cfg[side+".cluster.sasl.jaas.config"] = jaas("scram.ScramLoginModule", os.Getenv("KAFKA_S_SCRAM_USER"), "not-the-password")
			name := "secbad-" + uniqueAlias("")
			trace := createAwaitingFailure(t, k, name, cfg)
			require.Contains(t, trace, "SASL authentication error")
			require.Contains(t, trace, "invalid credentials with SASL mechanism SCRAM-SHA-512")
			require.NotContains(t, trace, "not-the-password", "a trace never shows the password")
		})
	}
}

// TestWrongTaskPasswordFailsTheTask gives only a task's client a wrong password (the connector's admin
// clients authenticate; producer.override. or source.consumer. override the credentials): the connector
// keeps RUNNING and the task goes FAILED with the authentication failure in its trace, as Java's
// AuthenticationException fails a Connect task, instead of waiting for acknowledgements for ever.
func TestWrongTaskPasswordFailsTheTask(t *testing.T) {
	t.Parallel()
	secureBroker(t)
	for _, tc := range []struct{ name, src, dst, key, class, states string }{
		{"target producer", "A", "S", "producer.override.sasl.jaas.config", "", "RUNNING FAILED"},
		{"source consumer", "S", "B", "source.consumer.sasl.jaas.config", "", "RUNNING FAILED"},
		// MM2 only logs that the heartbeats connector could not create its topic; kmirror shows the connector
		// FAILED while that job fails (docs/connector-failures.md), and the task fails on authentication.
		{"heartbeats producer", "A", "S", "target.cluster.sasl.jaas.config", "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector", "FAILED FAILED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			k := startKmirror(t, "", allowSecrets)
			topic := kafkatest.TopicName(t, "secbadtask")
			kafkatest.CreateTopic(t, tc.src, topic, 1, nil)
			kafkatest.Produce(t, tc.src, handoverRecords(topic, 1, []int{0}, 10))
			cfg := securedMirror(t, tc.src, tc.dst, scramJKS, topic)
			cfg["tasks.max"] = "1"
			if tc.class != "" {
				cfg["connector.class"] = tc.class
				cfg["heartbeats.topic.replication.factor"] = "1"
			}
			cfg[tc.key] = jaas("scram.ScramLoginModule", os.Getenv("KAFKA_S_SCRAM_USER"), "not-the-password")
			name := "secbadtask-" + uniqueAlias("")
			t0 := time.Now()
			code, body := k.do(http.MethodPut, "/connectors/"+name+"/config", cfg)
			require.Equal(t, http.StatusCreated, code, "%v", body)
			k.awaitStates(name, tc.states, 90*time.Second)
			_, st := k.do(http.MethodGet, "/connectors/"+name+"/tasks/0/status", nil)
			trace, _ := st.(map[string]any)["trace"].(string)
			t.Logf("task FAILED after %.1f s: %s", time.Since(t0).Seconds(), trace)
			require.Contains(t, trace, "SASL authentication error")
			require.Contains(t, trace, "invalid credentials with SASL mechanism SCRAM-SHA-512")
			require.NotContains(t, trace, "not-the-password")
		})
	}
}

// TestRefusedTLSFailsTheConnector: a TLS set-up that cannot work fails the connector with the reason, as a
// wrong password does: a client without a certificate on the mutual-TLS listener (the broker refuses it
// with a TLS alert), and a trust store without the broker's CA (the system's CAs do not know it).
func TestRefusedTLSFailsTheConnector(t *testing.T) {
	t.Parallel()
	secureBroker(t)
	for _, tc := range []struct {
		name, want string
		drop       []string
	}{
		{"no client certificate", "SSL alert number", []string{"ssl.keystore.type", "ssl.keystore.location"}},
		{"broker certificate not trusted", "certificate verify failed",
			[]string{"ssl.truststore.type", "ssl.truststore.location", "ssl.truststore.password"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			k := startKmirror(t, "", allowSecrets)
			topic := kafkatest.TopicName(t, "sectls")
			kafkatest.CreateTopic(t, "A", topic, 1, nil)
			cfg := securedMirror(t, "A", "S", mtlsPEM, topic)
			for _, key := range tc.drop {
				delete(cfg, "target.cluster."+key)
			}
			name := "sectls-" + uniqueAlias("")
			trace := createAwaitingFailure(t, k, name, cfg)
			require.Contains(t, trace, tc.want)
		})
	}
}

// TestCodeLoadingConfigsLoadNothing is the reproduction: a shared library whose constructor leaves a
// marker file. librdkafka itself loads it when told to (so the payload is live); kmirror refuses every
// config that names it, at PUT and at /validate, and the marker never appears.
func TestCodeLoadingConfigsLoadNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	marker, lib := filepath.Join(dir, "loaded"), filepath.Join(dir, "evil.so")
	src := filepath.Join(dir, "evil.c")
	require.NoError(t, os.WriteFile(src, []byte(`#include <stdio.h>
__attribute__((constructor)) static void evil(void) { FILE *f = fopen(MARKER, "w"); if (f) fclose(f); }
`), 0o600))
	out, err := exec.Command("gcc", "-shared", "-fPIC", "-o", lib, fmt.Sprintf("-DMARKER=%q", marker), src).CombinedOutput()
	require.NoError(t, err, "gcc: %s", out)

	k := startKmirror(t, "", allowSecrets)
	for _, key := range []string{
		"source.cluster.ssl.engine.location",  // the report
		"target.cluster.ssl.engine.location",  // the same through the other cluster
		"consumer.plugin.library.paths",       // every client of the connector
		"source.cluster.plugin.library.paths", // read by no client, still refused
		"producer.override.plugin.library.paths",
	} {
		cfg := mirrorConfig(t, "never-.*", map[string]any{
			"source.cluster.security.protocol": "SSL", "target.cluster.security.protocol": "SSL", key: lib,
		})
		code, body := k.do(http.MethodPut, "/connectors/evil-"+uniqueAlias("")+"/config", cfg)
		require.Equal(t, http.StatusBadRequest, code, "%s: %v", key, body)
		require.Contains(t, fmt.Sprint(body), key+": cannot be set: it loads", "%s", key)
		code, body = k.do(http.MethodPut, "/connector-plugins/MirrorSourceConnector/config/validate", cfg)
		require.Equal(t, http.StatusOK, code, "%v", body)
		require.Contains(t, fmt.Sprint(body), key+": cannot be set", "%s", key)
	}
	require.NoFileExists(t, marker, "kmirror loaded the library")

	// The payload is real: librdkafka runs its constructor when it is handed the library directly.
	p, err := kafka.NewProducer(map[string]string{"bootstrap.servers": "127.0.0.1:1", "plugin.library.paths": lib},
		slog.New(slog.DiscardHandler), func(kafka.Delivery) {})
	if err == nil {
		p.Close()
	}
	require.FileExists(t, marker, "the test library does not prove anything: librdkafka did not run it either")
}

// TestWrongPasswordFailsTheCheckpointTask: a checkpoint task whose producer override has a wrong password
// (its connector's admin clients authenticate) fails with the cause, instead of logging "checkpoint round
// failed, will retry" for ever.
func TestWrongPasswordFailsTheCheckpointTask(t *testing.T) {
	t.Parallel()
	secureBroker(t)
	k := startKmirror(t, "", allowSecrets)
	topic := kafkatest.TopicName(t, "secck")
	kafkatest.CreateTopic(t, "A", topic, 1, nil)
	group := "secck-" + uniqueAlias("")
	commitGroup(t, group, map[kafkatest.Partition]int64{{Topic: topic, Partition: 0}: 0})
	cfg := securedMirror(t, "A", "S", scramJKS, topic)
	cfg["connector.class"] = "org.apache.kafka.connect.mirror.MirrorCheckpointConnector"
	cfg["groups"] = group
	cfg["emit.checkpoints.interval.seconds"] = "1"
	cfg["refresh.groups.interval.seconds"] = "1"
	cfg["checkpoints.topic.replication.factor"] = "1"
	cfg["producer.override.sasl.jaas.config"] = jaas("scram.ScramLoginModule", os.Getenv("KAFKA_S_SCRAM_USER"), "not-the-password")
	name := "secck-" + uniqueAlias("")
	t0 := time.Now()
	code, body := k.do(http.MethodPut, "/connectors/"+name+"/config", cfg)
	require.Equal(t, http.StatusCreated, code, "%v", body)
	k.awaitStates(name, "RUNNING FAILED", 90*time.Second)
	_, st := k.do(http.MethodGet, "/connectors/"+name+"/tasks/0/status", nil)
	trace, _ := st.(map[string]any)["trace"].(string)
	t.Logf("task FAILED after %.1f s: %s", time.Since(t0).Seconds(), trace)
	require.Contains(t, trace, "emit checkpoints to cluster S: authenticate")
	require.Contains(t, trace, "invalid credentials with SASL mechanism SCRAM-SHA-512")
}

// createAwaitingFailure creates the connector and waits until it is FAILED, returning its trace.
func createAwaitingFailure(t *testing.T, k *kmirror, name string, cfg map[string]any) string {
	t.Helper()
	t0 := time.Now()
	code, body := k.do(http.MethodPut, "/connectors/"+name+"/config", cfg)
	require.Equal(t, http.StatusCreated, code, "%v", body)
	require.Eventually(t, func() bool {
		state, _ := connectorStatus(k, name)
		return state == "FAILED"
	}, 90*time.Second, 100*time.Millisecond, "connector %s never FAILED", name)
	_, trace := connectorStatus(k, name)
	t.Logf("FAILED after %.1f s: %s", time.Since(t0).Seconds(), trace)
	return trace
}

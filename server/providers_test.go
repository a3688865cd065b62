package server_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
	"github.com/kmirror/kmirror/server"
)

// syncBuffer collects log output written from many goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestConfigProvidersResolvedOnlyWhenATaskStarts: a connector whose client settings come from the file,
// directory and env providers runs with the resolved values, while every GET returns the references as
// written; a changed file is read again when the task restarts, and a reference that no longer resolves, or
// resolves to a value the setting refuses, fails the task with a trace that names the key and the provider.
// No resolved secret, nor a literal password, reaches a response or the log, even at DEBUG.
func TestConfigProvidersResolvedOnlyWhenATaskStarts(t *testing.T) {
	const (
		jaasSecret  = "pw-fr0m-a-pr0perties-file"
		literalPass = "l1teral-key-passw0rd"
		envSecret   = "env-s3cret-client-rack"
		badCodec    = "s3cret-n0t-a-codec"
	)
	t.Setenv("KMIRROR_TEST_PROVIDER_RACK", "") // kmirror's own variables are never readable
	t.Setenv("HB_TEST_RACK", envSecret)
	dir := filepath.Join(t.TempDir(), "provided")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "producer"), 0o700))
	props := filepath.Join(dir, "target.properties")
	writeProps := func(bootstrap bool) {
		content := "jaas=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"" + jaasSecret + "\";\n"
		if bootstrap {
			content += "bootstrap=" + kafkatest.Bootstrap(t, "B") + "\n"
		}
		require.NoError(t, os.WriteFile(props, []byte(content), 0o600))
	}
	writeCodec := func(codec string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "producer", "compression"), []byte(codec), 0o600))
	}
	writeProps(true)
	writeCodec("lz4")

	var logs syncBuffer
	k := startKmirrorWith(t, "", func(c *server.Config) {
		loggers, err := server.NewLoggers(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug - 4}), "TRACE")
		require.NoError(t, err)
		c.Loggers = loggers
		c.Clients = server.ClientRules{
			ConfigProviders:            []string{"env", "file", "directory"},
			ConfigProviderAllowedPaths: []string{dir},
		}
	})
	source, target := uniqueAlias("provA"), uniqueAlias("provB")
	name := "providers-" + source
	config := map[string]any{
		"connector.class":                     "MirrorHeartbeatConnector",
		"source.cluster.alias":                source,
		"target.cluster.alias":                target,
		"target.cluster.bootstrap.servers":    "${file:" + props + ":bootstrap}",
		"target.cluster.sasl.jaas.config":     "${file:" + props + ":jaas}",
		"target.cluster.ssl.key.password":     literalPass,
		"target.producer.compression.type":    "${directory:" + filepath.Join(dir, "producer") + ":compression}",
		"target.producer.client.rack":         "${env:HB_TEST_RACK}",
		"heartbeats.topic.replication.factor": "1",
		"emit.heartbeats.interval.seconds":    "1",
	}
	// Refused writes name the key and leave nothing behind.
	for key, bad := range map[string]string{
		"target.producer.compression.type":       "${directory:/etc:hostname}",
		"target.cluster.ssl.truststore.location": "/etc/passwd",
	} {
		wrong := map[string]any{"target.cluster.security.protocol": "SSL", key: bad}
		for k, v := range config {
			if _, set := wrong[k]; !set {
				wrong[k] = v
			}
		}
		code, body := k.do(http.MethodPut, "/connectors/"+name+"/config", wrong)
		require.Equal(t, http.StatusBadRequest, code)
		require.Contains(t, body.(map[string]any)["message"], key+": ")
		require.Contains(t, body.(map[string]any)["message"], "outside the directories")
		code, _ = k.do(http.MethodGet, "/connectors/"+name, nil)
		require.Equal(t, http.StatusNotFound, code)
	}

	code, body := k.do(http.MethodPut, "/connectors/"+name+"/config", config)
	require.Equal(t, http.StatusCreated, code, "%v", body)
	k.awaitStates(name, "RUNNING RUNNING", 30*time.Second)
	require.Eventually(t, func() bool { return len(heartbeatsFrom(t, source, target)) > 0 }, 30*time.Second, 200*time.Millisecond,
		"the task reached B through the bootstrap servers read from the file")

	// Every GET shows the config as written.
	var everything []string
	for _, path := range []string{"/connectors/" + name, "/connectors/" + name + "/config", "/connectors/" + name + "/tasks",
		"/connectors/" + name + "/tasks-config", "/connectors?expand=info&expand=status", "/connectors/" + name + "/status"} {
		code, body := k.do(http.MethodGet, path, nil)
		require.Contains(t, []int{http.StatusOK, http.StatusNotFound}, code, path) // tasks-config is gone in Connect 4
		raw, err := json.Marshal(body)
		require.NoError(t, err)
		everything = append(everything, string(raw))
	}
	_, got := k.do(http.MethodGet, "/connectors/"+name+"/config?revealSecrets=true", nil)
	for key, v := range config {
		require.Equal(t, v, got.(map[string]any)[key], "GET /config?revealSecrets=true returns %s as stored", key)
	}
	_, tasks := k.do(http.MethodGet, "/connectors/"+name+"/tasks", nil)
	taskConfig := tasks.([]any)[0].(map[string]any)["config"].(map[string]any)
	require.Equal(t, "${file:"+props+":jaas}", taskConfig["target.cluster.sasl.jaas.config"], "task configs hold the reference, not the secret")

	// The key leaves the file: the restarted task reads it again and fails, naming the key and the provider.
	writeProps(false)
	code, _ = k.do(http.MethodPost, "/connectors/"+name+"/tasks/0/restart", nil)
	require.Equal(t, http.StatusNoContent, code)
	k.awaitStates(name, "RUNNING FAILED", 30*time.Second)
	trace := taskTrace(t, k, name)
	require.Contains(t, trace, "target.cluster.bootstrap.servers: ${file:"+props+":bootstrap}: no key bootstrap in "+props+" (file config provider)")

	// A value the setting refuses is reported without the value.
	writeProps(true)
	writeCodec(badCodec)
	code, _ = k.do(http.MethodPost, "/connectors/"+name+"/tasks/0/restart", nil)
	require.Equal(t, http.StatusNoContent, code)
	require.Eventually(t, func() bool {
		return bytes.Contains([]byte(taskTrace(t, k, name)), []byte("compression.type"))
	}, 30*time.Second, 50*time.Millisecond)
	trace = taskTrace(t, k, name)
	require.Contains(t, trace, "target.producer.compression.type: the value of ${directory:"+filepath.Join(dir, "producer")+":compression} is not valid for this setting (not shown: it came from a config provider)")
	everything = append(everything, trace)

	// Fixed, and picked up by the next restart.
	writeCodec("zstd")
	code, _ = k.do(http.MethodPost, "/connectors/"+name+"/tasks/0/restart", nil)
	require.Equal(t, http.StatusNoContent, code)
	k.awaitStates(name, "RUNNING RUNNING", 30*time.Second)

	k.stop()
	require.Contains(t, logs.String(), "starting task", "the log was captured")
	for _, out := range everything {
		// A literal password too: GETs show it [hidden] unless an admin asks (see docs/security.md, Secrets at rest).
		for _, secret := range []string{jaasSecret, literalPass, envSecret, badCodec} {
			require.NotContains(t, out, secret)
		}
	}
	for _, out := range []string{trace, logs.String()} {
		for _, secret := range []string{jaasSecret, literalPass, envSecret, badCodec} {
			require.NotContains(t, out, secret, "never in a trace or the log")
		}
	}
}

func taskTrace(t *testing.T, k *kmirror, name string) string {
	t.Helper()
	_, st := k.do(http.MethodGet, "/connectors/"+name+"/tasks/0/status", nil)
	trace, _ := st.(map[string]any)["trace"].(string)
	return trace
}

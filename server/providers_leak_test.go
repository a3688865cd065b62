package server_test

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
	"github.com/kmirror/kmirror/connectors/source"
	"github.com/kmirror/kmirror/server"
)

// TestProviderValuesNeverShown: values resolved through each config provider (env, file, directory) into the
// string settings librdkafka writes into its texts — bootstrap servers it cannot reach, client.rack, both
// dumped by debug=all — appear in no log line (TRACE), no metric, no trace and no notice; librdkafka's lines
// carry [hidden] where they would have carried them. A reference in client.id, which names the client in
// metric labels and log lines, is refused with a 400 naming the key.
func TestProviderValuesNeverShown(t *testing.T) {
	mark := func(what string) string {
		b := make([]byte, 4)
		_, _ = rand.Read(b)
		return "leak" + what + hex.EncodeToString(b)
	}
	envHost, fileRack, dirHost := mark("env"), mark("file"), mark("dir")
	t.Setenv("LEAK_TEST_HOST", envHost+".invalid:9092")
	dir := filepath.Join(t.TempDir(), "provided")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "syncs"), 0o700))
	props := filepath.Join(dir, "client.properties")
	require.NoError(t, os.WriteFile(props, []byte("rack="+fileRack+"\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "syncs", "bootstrap"), []byte(dirHost+".invalid:9093\n"), 0o600))

	var logs syncBuffer
	k := startKmirrorWith(t, "", func(c *server.Config) {
		loggers, err := server.NewLoggers(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug - 4}), "TRACE")
		require.NoError(t, err)
		c.Loggers = loggers
		// The Go data path quotes the replication consumer's errors in a notice.
		c.DataPath = source.DataPathGo
		c.Clients = server.ClientRules{ConfigProviders: []string{"env", "file", "directory"}, ConfigProviderAllowedPaths: []string{dir}}
	})
	topic := kafkatest.TopicName(t, "leak")
	kafkatest.CreateTopic(t, "A", topic, 1, nil)
	source, target := uniqueAlias("leakA"), uniqueAlias("leakB")
	name := "leak-" + source
	config := map[string]any{
		"connector.class":                       "MirrorSourceConnector",
		"source.cluster.alias":                  source,
		"target.cluster.alias":                  target,
		"source.cluster.bootstrap.servers":      kafkatest.Bootstrap(t, "A"),
		"target.cluster.bootstrap.servers":      kafkatest.Bootstrap(t, "B"),
		"topics":                                topic,
		"tasks.max":                             "1",
		"replication.factor":                    "1",
		"offset-syncs.topic.replication.factor": "1",
		"sync.topic.acls.enabled":               "false",
		// The replication consumer and the offset-syncs producer reach for hosts named by providers, and dump
		// their settings at debug=all.
		"source.consumer.bootstrap.servers": "${env:LEAK_TEST_HOST}",
		"source.consumer.client.rack":       "${file:" + props + ":rack}",
		"source.consumer.debug":             "all",
		"source.producer.bootstrap.servers": "${directory:" + filepath.Join(dir, "syncs") + ":bootstrap}",
		"source.producer.debug":             "all",
	}

	for _, key := range []string{"source.consumer.client.id", "producer.override.client.id", "consumer.client.id"} {
		bad := map[string]any{key: "${env:LEAK_TEST_HOST}"}
		for k, v := range config {
			bad[k] = v
		}
		code, body := k.do(http.MethodPut, "/connectors/"+name+"/config", bad)
		require.Equal(t, http.StatusBadRequest, code, "%v", body)
		require.Contains(t, body.(map[string]any)["message"], key+": config provider references are not allowed in client.id")
	}

	code, body := k.do(http.MethodPut, "/connectors/"+name+"/config", config)
	require.Equal(t, http.StatusCreated, code, "%v", body)
	// librdkafka names the unreachable hosts in its lines; each must have arrived, hidden.
	require.Eventually(t, func() bool {
		out := logs.String()
		return strings.Contains(out, "Failed to resolve '[hidden]") && strings.Contains(out, "client.rack = [hidden]") ||
			strings.Contains(out, "client.rack=[hidden]")
	}, 60*time.Second, 200*time.Millisecond, "librdkafka's lines naming the provided values were logged, hidden")
	// The replication consumer's error, which the Go data path also puts in a notice.
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), `error="[hidden]/bootstrap: Failed to resolve`) },
		60*time.Second, 200*time.Millisecond, "the consumer's error, hidden")

	shown := map[string]string{
		"/metrics":  k.raw("/metrics"),
		"status":    k.raw("/connectors/" + name + "/status"),
		"notices":   k.raw("/connectors/" + name + "/notices"),
		"expanded":  k.raw("/connectors?expand=status&expand=info"),
		"task conf": k.raw("/connectors/" + name + "/tasks"),
	}
	k.stop()
	shown["log"] = logs.String()
	for where, out := range shown {
		for _, secret := range []string{envHost, fileRack, dirHost} {
			require.NotContains(t, out, secret, "a provided value in %s", where)
		}
	}
}

// raw returns the body of a GET as text.
func (k *kmirror) raw(path string) string {
	k.t.Helper()
	resp, err := k.client.Get(k.url + path)
	require.NoError(k.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(k.t, err)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		var v any
		if json.Unmarshal(b, &v) == nil {
			out, _ := json.Marshal(v) // one escaping of the text, as a reader sees it
			return string(out)
		}
	}
	return string(b)
}

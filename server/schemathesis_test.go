package server_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Schemathesis (scripts/schemathesis) generates requests from kmirror's own OpenAPI document, valid and
// invalid, and checks every response against it. The run is bounded in time and needs Python, so it is not
// part of every `go test`: it runs when KMIRROR_SCHEMATHESIS names the `st` binary, as scripts/test's whole
// run does after the other tests:
//
//	KMIRROR_SCHEMATHESIS=$(scripts/schemathesis install) go test -run '^TestSchemathesis$' ./server
//
// KMIRROR_SCHEMATHESIS_TIME is the budget in seconds (default 90); KMIRROR_SCHEMATHESIS_SEED replays a run.
//
// Checks: not_a_server_error (no 5xx), status_code_conformance (only documented statuses),
// content_type_conformance and response_schema_conformance (bodies as documented). The others Schemathesis
// has are left out on purpose: negative_data_rejection and positive_data_acceptance assume the document
// captures every validation rule, and kmirror, like Connect, accepts some bodies a schema would call invalid
// (numbers and booleans as config values) and refuses some it would call valid (a config that fails the
// connector's own validation); unsupported_method would demand 405 where Jersey answers 404 for a path no
// method serves; use_after_free and ensure_resource_availability assume a created resource is readable at
// once by every operation, which is not true of a connector's tasks (the leader plans them a moment later);
// ignored_auth and the header checks test authentication, which this API's document does not declare.
var schemathesisChecks = []string{"not_a_server_error", "status_code_conformance", "content_type_conformance",
	"response_schema_conformance"}

// schemathesisConfig is the run's schemathesis.toml. The fixture resources are offered as path parameters half
// of the time, so the operations on an existing connector, task, group, plugin and logger are tested too, not
// only their 404s; the other half are generated names.
const schemathesisConfig = `
request-timeout = 15.0

[dictionaries.connectors]
values = [%[1]s]

[dictionaries.tasks]
values = [0]

[dictionaries.groups]
values = ["%[2]s"]

[dictionaries.plugins]
values = ["MirrorSourceConnector", "org.apache.kafka.connect.mirror.MirrorCheckpointConnector", "MirrorHeartbeat"]

[dictionaries.loggers]
values = ["root", "org.apache.kafka.connect.mirror", "kmirror"]

[parameters]
"path.connector" = { dictionary = "connectors", probability = 0.5 }
"path.task" = { dictionary = "tasks", probability = 0.5 }
"path.group" = { dictionary = "groups", probability = 0.5 }
"path.plugin" = { dictionary = "plugins", probability = 0.5 }
"path.logger" = { dictionary = "loggers", probability = 0.5 }
`

func TestSchemathesis(t *testing.T) {
	st := os.Getenv("KMIRROR_SCHEMATHESIS")
	if st == "" {
		t.Skip("KMIRROR_SCHEMATHESIS is not set: scripts/test runs this with the whole suite (see the comment above)")
	}
	budget := 90
	if v := os.Getenv("KMIRROR_SCHEMATHESIS_TIME"); v != "" {
		var err error
		budget, err = strconv.Atoi(v)
		require.NoError(t, err, "KMIRROR_SCHEMATHESIS_TIME")
	}

	// Its own kmirror on its own database: the run creates, changes and deletes connectors at random.
	k := startKmirror(t, "")
	suffix := randomSuffix(t)
	group := "st-group-" + suffix
	fixtures := map[string]map[string]any{
		// A topic regex that matches nothing on the shared clusters: the tasks run, replicate nothing.
		"st-source":     mirrorConfig(t, "schemathesis-"+suffix+"-.*", nil),
		"st-checkpoint": checkpointConfig(t, "A", group, nil),
		"st-heartbeat":  heartbeatConfig(t, map[string]any{"emit.heartbeats.interval.seconds": "60"}),
		"st-stopped":    mirrorConfig(t, "schemathesis-"+suffix+"-.*", nil),
	}
	var names []string
	for name, cfg := range fixtures {
		k.create(name, cfg)
		names = append(names, strconv.Quote(name))
	}
	// A STOPPED connector is the only kind whose offsets can be altered or reset.
	code, _ := k.do(http.MethodPut, "/connectors/st-stopped/stop", nil)
	require.Equal(t, http.StatusNoContent, code)

	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "schemathesis.toml")
	require.NoError(t, os.WriteFile(cfgFile, []byte(fmt.Sprintf(schemathesisConfig, strings.Join(names, ", "), group)), 0o600))

	args := []string{"--config-file", cfgFile, "--no-color", "run", k.url + "/openapi.json",
		"--checks", strings.Join(schemathesisChecks, ","),
		"--max-time", strconv.Itoa(budget),
		// One worker: the machine's two cores also run kmirror and the brokers.
		"--workers", "1",
		"--continue-on-failure",
		"--report", "junit", "--report-dir", dir,
	}
	if seed := os.Getenv("KMIRROR_SCHEMATHESIS_SEED"); seed != "" {
		args = append(args, "--seed", seed)
	}
	// The budget bounds generation; the margin is for loading the document and the last requests.
	ctx, cancel := context.WithTimeout(t.Context(), time.Duration(budget)*time.Second+2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, st, args...)
	cmd.Dir = dir // Schemathesis writes its cache beside it
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	t.Logf("st %s\n%s", strings.Join(args, " "), out.String())
	t.Logf("Schemathesis ran %.0f s", time.Since(start).Seconds())
	require.NoError(t, ctx.Err(), "Schemathesis did not finish within its budget")
	require.NoError(t, err, "Schemathesis found responses that contradict the OpenAPI document, or 5xx (see the log above)")
	// A run that tested nothing passes too; make sure it did test.
	require.Contains(t, out.String(), "passed", "Schemathesis reports no test that passed")
}

func randomSuffix(t *testing.T) string {
	t.Helper()
	b := make([]byte, 4)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return hex.EncodeToString(b)
}

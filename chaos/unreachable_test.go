package chaos

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kmirror/kmirror/connectors"
	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
)

// unreachable is an address nothing listens on.
const unreachable = "127.0.0.1:1"

// TestUnreachableSource creates a source connector whose source cluster cannot be reached, fixes its address,
// breaks it again and fixes it again, with records flowing from the first fix on.
// Expected: FAILED within the admin timeout, with a trace naming the cluster, the address and the cause (no
// healthy-looking RUNNING without tasks); RUNNING again after each fix without a restart; while the second
// broken config is being planned, a status that says the tasks run the previous config (a notice at once, then
// FAILED within the admin timeout, with the cause and the same words), GET /tasks
// marks its configs as the previous config's (and shows them), and records keep flowing from A through those
// tasks; nothing missing, reordered or stale, and nothing on B that the producer on A did not write. The short
// form sets admin.timeout.ms to 10 s; -chaos.long keeps MM2's default (60 s).
func TestUnreachableSource(t *testing.T) {
	v := vol()
	adminTimeout := 10 * time.Second
	timeoutKey := map[string]string{"admin.timeout.ms": strconv.FormatInt(adminTimeout.Milliseconds(), 10)}
	if *longRun {
		adminTimeout, timeoutKey = time.Minute, nil
	}
	s := newScenario(t, "unreach")
	s.extra = map[string]string{"source.cluster.bootstrap.servers": unreachable}
	for k, val := range timeoutKey {
		s.extra[k] = val
	}
	broken := s.mirrorConfig()
	s.extra = timeoutKey
	fixed := s.mirrorConfig()

	// 1. Unreachable from the start.
	putAt := time.Now()
	s.c.putConfig(s.name, broken)
	st := awaitFailedNaming(t, s, adminTimeout, "cluster A at bootstrap.servers="+unreachable)
	toFailed := time.Since(putAt)
	t.Logf("unreachable source: FAILED after %.1f s (admin timeout %s): %s", toFailed.Seconds(), adminTimeout, st.Connector.Trace)
	if len(st.Tasks) != 0 {
		t.Errorf("tasks without a plan: %s", st.states())
	}

	// 2. Fixed: RUNNING without a restart, records flow.
	s.prod.Run(v.rate)
	fixedAt := time.Now()
	s.startConnector()
	toRunning := time.Since(fixedAt)
	s.awaitFlowing(v.deadline)
	expectTaskConfigsFrom(t, s, connectors.TaskConfigsCurrent, kafkatest.Bootstrap(t, "A"))

	// 3. Broken again: the tasks keep running the previous config, and the status and /tasks say so.
	brokenAt := time.Now()
	s.c.putConfig(s.name, broken)
	st = s.c.awaitStatus(s.name, "saying that the tasks run the previous config", 10*time.Second, func(st connectorStatus) bool {
		return strings.Contains(st.Connector.Trace, "previous config")
	})
	t.Logf("broken again: %.1f s after the PUT: %s %q", time.Since(brokenAt).Seconds(), st.Connector.State, st.Connector.Trace)
	st = awaitFailedNaming(t, s, adminTimeout, "cluster A at bootstrap.servers="+unreachable)
	toFailedAgain := time.Since(brokenAt)
	if !strings.Contains(st.Connector.Trace, "still run the task configs of its previous config") {
		t.Errorf("the trace does not say that the tasks run the previous config:\n%s", st.Connector.Trace)
	}
	expectTaskConfigsFrom(t, s, connectors.TaskConfigsPrevious, kafkatest.Bootstrap(t, "A"))
	s.awaitFlowing(v.deadline)
	st, _ = s.c.status(s.name)
	t.Logf("broken again: FAILED after %.1f s, records still flow from A; status %s", toFailedAgain.Seconds(), st.states())

	// 4. Fixed again.
	fixedAt = time.Now()
	s.c.putConfig(s.name, fixed)
	s.c.awaitRunning(s.name, taskCount, v.deadline)
	toRunningAgain := time.Since(fixedAt)
	expectTaskConfigsFrom(t, s, connectors.TaskConfigsCurrent, kafkatest.Bootstrap(t, "A"))
	s.awaitFlowing(v.deadline)

	waitFor(t.Context(), v.settle)
	res := s.finish(v.deadline)
	t.Logf("SUMMARY %s: admin timeout %s; unreachable source FAILED after %.1f s, RUNNING %.1f s after the fix; broken again: FAILED after %.1f s (tasks on the previous config, records flowing), RUNNING %.1f s after the fix; missing %d, duplicated %d, reordered %d, stale %d, not written by the producer %d",
		t.Name(), adminTimeout, toFailed.Seconds(), toRunning.Seconds(), toFailedAgain.Seconds(), toRunningAgain.Seconds(),
		res.Missing, res.Duplicated, res.Reordered, res.Stale, res.Unparsed)
	expectClean(t, res, "missing", "reordered", "stale")
}

// awaitFailedNaming waits until the connector is FAILED with a trace that contains want, within the admin
// timeout and the time its first retries take.
func awaitFailedNaming(t *testing.T, s *scenario, adminTimeout time.Duration, want string) connectorStatus {
	t.Helper()
	return s.c.awaitStatus(s.name, "FAILED with a trace naming "+want, adminTimeout+15*time.Second, func(st connectorStatus) bool {
		return st.Connector.State == "FAILED" && strings.Contains(st.Connector.Trace, want)
	})
}

// expectTaskConfigsFrom checks GET /connectors/{c}/tasks: the header, and that every task config reads from
// sourceBootstrap.
func expectTaskConfigsFrom(t *testing.T, s *scenario, from, sourceBootstrap string) {
	t.Helper()
	header, configs, err := s.c.taskConfigs(s.name)
	if err != nil {
		t.Fatalf("GET tasks: %v", err)
	}
	if header != from {
		t.Errorf("GET /connectors/%s/tasks: %s %q, want %q", s.name, connectors.TaskConfigsHeader, header, from)
	}
	if len(configs) != taskCount {
		t.Errorf("GET /connectors/%s/tasks: %d tasks, want %d", s.name, len(configs), taskCount)
	}
	for i, cfg := range configs {
		if got := cfg["source.cluster.bootstrap.servers"]; got != sourceBootstrap {
			t.Errorf("task %d reads from %q, want %q", i, got, sourceBootstrap)
		}
	}
}

// taskConfigs is GET /connectors/{c}/tasks: the Kmirror-Task-Configs header and the task configs by task id.
func (c *cluster) taskConfigs(name string) (string, []map[string]string, error) {
	for _, w := range c.workers {
		if !w.running() {
			continue
		}
		resp, err := restClient.Get(w.url() + "/connectors/" + name + "/tasks")
		if err != nil {
			continue
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return "", nil, err
		}
		if resp.StatusCode != http.StatusOK {
			return "", nil, fmt.Errorf("status %d: %s", resp.StatusCode, body)
		}
		var tasks []struct {
			Config map[string]string `json:"config"`
		}
		if err := json.Unmarshal(body, &tasks); err != nil {
			return "", nil, fmt.Errorf("%w: %s", err, body)
		}
		configs := make([]map[string]string, len(tasks))
		for i, tk := range tasks {
			configs[i] = tk.Config
		}
		return resp.Header.Get(connectors.TaskConfigsHeader), configs, nil
	}
	return "", nil, errNoWorker
}

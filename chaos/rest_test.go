package chaos

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"
)

var restClient = &http.Client{Timeout: 15 * time.Second}

// do sends a request to a running worker (any worker answers any request), trying the next one when a worker
// cannot be reached, and returns the status code and body.
func (c *cluster) do(method, path string, body any) (int, []byte, error) {
	var raw []byte
	if body != nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			return 0, nil, err
		}
	}
	var lastErr error = errNoWorker
	for i := range c.workers {
		w := c.workers[(c.next+i)%len(c.workers)]
		if !w.running() {
			continue
		}
		req, err := http.NewRequest(method, w.url()+path, bytes.NewReader(raw))
		if err != nil {
			return 0, nil, err
		}
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := restClient.Do(req)
		if err != nil {
			lastErr = fmt.Errorf("%s %s on %s: %w", method, path, w.id, err)
			continue
		}
		out, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			lastErr = fmt.Errorf("%s %s on %s: read body: %w", method, path, w.id, err)
			continue
		}
		c.next++
		return resp.StatusCode, out, nil
	}
	return 0, nil, lastErr
}

// must sends a request and fails the test unless the answer has one of the wanted status codes.
func (c *cluster) must(method, path string, body any, want ...int) []byte {
	c.t.Helper()
	code, out, err := c.do(method, path, body)
	if err != nil {
		c.t.Fatalf("%v", err)
	}
	for _, w := range want {
		if code == w {
			return out
		}
	}
	c.t.Fatalf("%s %s: status %d, want %v: %s", method, path, code, want, out)
	return nil
}

// putConfig creates or updates a connector.
func (c *cluster) putConfig(name string, cfg map[string]string) {
	c.t.Helper()
	c.must(http.MethodPut, "/connectors/"+name+"/config", cfg, http.StatusCreated, http.StatusOK)
}

func (c *cluster) pause(name string) {
	c.t.Helper()
	c.must(http.MethodPut, "/connectors/"+name+"/pause", nil, http.StatusAccepted)
}

func (c *cluster) resume(name string) {
	c.t.Helper()
	c.must(http.MethodPut, "/connectors/"+name+"/resume", nil, http.StatusAccepted)
}

func (c *cluster) stop(name string) {
	c.t.Helper()
	c.must(http.MethodPut, "/connectors/"+name+"/stop", nil, http.StatusNoContent)
}

// unitStatus is the status of a connector instance or a task, as GET /connectors/{c}/status reports it.
type unitStatus struct {
	ID       int    `json:"id"`
	State    string `json:"state"`
	WorkerID string `json:"worker_id"`
	Trace    string `json:"trace"`
}

type connectorStatus struct {
	Name      string       `json:"name"`
	Connector unitStatus   `json:"connector"`
	Tasks     []unitStatus `json:"tasks"`
}

func (c *cluster) status(name string) (connectorStatus, error) {
	var st connectorStatus
	code, body, err := c.do(http.MethodGet, "/connectors/"+name+"/status", nil)
	if err != nil {
		return st, err
	}
	if code != http.StatusOK {
		return st, fmt.Errorf("GET status of %s: %d %s", name, code, body)
	}
	if err := json.Unmarshal(body, &st); err != nil {
		return st, fmt.Errorf("GET status of %s: %w: %s", name, err, body)
	}
	return st, nil
}

// states renders a status as "RUNNING RUNNING@w1 RUNNING@w2 ..." (connector, then tasks by id).
func (st connectorStatus) states() string {
	var b strings.Builder
	b.WriteString(st.Connector.State + "@" + st.Connector.WorkerID)
	for _, tk := range st.Tasks {
		fmt.Fprintf(&b, " %d:%s@%s", tk.ID, tk.State, tk.WorkerID)
	}
	return b.String()
}

// allIn reports whether the connector and exactly n tasks are in state.
func (st connectorStatus) allIn(state string, n int) bool {
	if st.Connector.State != state || len(st.Tasks) != n {
		return false
	}
	for _, tk := range st.Tasks {
		if tk.State != state {
			return false
		}
	}
	return true
}

// taskWorkers maps each task id to the worker its status names.
func (st connectorStatus) taskWorkers() map[int]string {
	out := map[int]string{}
	for _, tk := range st.Tasks {
		out[tk.ID] = tk.WorkerID
	}
	return out
}

// tasksOf returns the ids of the tasks that the status says run on the worker.
func (st connectorStatus) tasksOf(worker string) []int {
	var ids []int
	for _, tk := range st.Tasks {
		if tk.WorkerID == worker {
			ids = append(ids, tk.ID)
		}
	}
	sort.Ints(ids)
	return ids
}

// traces joins the non-empty traces of the connector and its tasks.
func (st connectorStatus) traces() string {
	var out []string
	for _, u := range append([]unitStatus{st.Connector}, st.Tasks...) {
		if u.Trace != "" {
			out = append(out, fmt.Sprintf("[%d@%s %s] %s", u.ID, u.WorkerID, u.State, u.Trace))
		}
	}
	return strings.Join(out, "\n")
}

// awaitStatus polls the connector's status until cond holds, and returns that status.
func (c *cluster) awaitStatus(name, what string, within time.Duration, cond func(connectorStatus) bool) connectorStatus {
	c.t.Helper()
	deadline := time.Now().Add(within)
	var st connectorStatus
	var err error
	for {
		st, err = c.status(name)
		if err == nil && cond(st) {
			return st
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("connector %s: not %s within %s (last status %q, error %v)", name, what, within, st.states(), err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// awaitRunning waits until the connector and its n tasks are RUNNING.
func (c *cluster) awaitRunning(name string, n int, within time.Duration) connectorStatus {
	c.t.Helper()
	return c.awaitStatus(name, fmt.Sprintf("RUNNING with %d RUNNING tasks", n), within,
		func(st connectorStatus) bool { return st.allIn("RUNNING", n) })
}

// awaitSpread waits until the connector and its n tasks are RUNNING and every running worker runs at least
// one task, so that any worker a test picks has work to lose.
func (c *cluster) awaitSpread(name string, n int, within time.Duration) connectorStatus {
	c.t.Helper()
	return c.awaitStatus(name, fmt.Sprintf("RUNNING with %d RUNNING tasks spread over every worker", n), within,
		func(st connectorStatus) bool {
			if !st.allIn("RUNNING", n) {
				return false
			}
			for _, w := range c.workers {
				if w.running() && len(st.tasksOf(w.id)) == 0 {
					return false
				}
			}
			return true
		})
}

// offsets returns the connector's committed offsets: source topic and partition -> last replicated offset.
func (c *cluster) offsets(name string) (map[string]map[int]int64, error) {
	code, body, err := c.do(http.MethodGet, "/connectors/"+name+"/offsets", nil)
	if err != nil {
		return nil, err
	}
	if code != http.StatusOK {
		return nil, fmt.Errorf("GET offsets of %s: %d %s", name, code, body)
	}
	var resp struct {
		Offsets []struct {
			Partition struct {
				Topic     string `json:"topic"`
				Partition int    `json:"partition"`
			} `json:"partition"`
			Offset struct {
				Offset int64 `json:"offset"`
			} `json:"offset"`
		} `json:"offsets"`
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		return nil, fmt.Errorf("GET offsets of %s: %w: %s", name, err, body)
	}
	out := map[string]map[int]int64{}
	for _, o := range resp.Offsets {
		if out[o.Partition.Topic] == nil {
			out[o.Partition.Topic] = map[int]int64{}
		}
		out[o.Partition.Topic][o.Partition.Partition] = o.Offset.Offset
	}
	return out, nil
}

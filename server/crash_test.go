package server_test

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
	"github.com/kmirror/kmirror/store/storetest"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// kmirrorBinary builds cmd/kmirror once per test binary: a crash test needs a process it can kill.
func kmirrorBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "kmirror-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "kmirror")
		out, err := exec.Command("go", "build", "-o", binPath, "../cmd/kmirror").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	require.NoError(t, buildErr)
	return binPath
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().String()
}

// process is a kmirror started as a child process.
type process struct {
	cmd *exec.Cmd
}

func startProcess(t *testing.T, bin, dbURL, addr string) *process {
	t.Helper()
	logf, err := os.Create(filepath.Join(t.TempDir(), "kmirror.log"))
	require.NoError(t, err)
	cmd := exec.Command(bin, "serve", "--database-url", dbURL, "--listen", addr, "--worker-id", "crash-test-worker",
		"--log-level", "INFO")
	cmd.Stdout, cmd.Stderr = logf, logf
	require.NoError(t, cmd.Start())
	p := &process{cmd: cmd}
	t.Cleanup(func() { p.kill() })
	require.Eventually(t, func() bool {
		resp, err := http.Get("http://" + addr + "/health")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 60*time.Second, 100*time.Millisecond, "kmirror process became healthy")
	return p
}

func (p *process) kill() {
	if p.cmd.ProcessState == nil {
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		_ = p.cmd.Wait()
	}
}

// TestSourceSurvivesKill kills kmirror with SIGKILL while it replicates and records keep arriving, starts it
// again on the same database, and checks that no record is lost and each partition's order holds (records that
// were in flight at the kill may arrive twice: delivery is at least once).
func TestSourceSurvivesKill(t *testing.T) {
	t.Parallel()
	bin := kmirrorBinary(t)
	dbURL := storetest.NewURL(t)
	addr := freeAddr(t)
	k := &kmirror{t: t, url: "http://" + addr, client: &http.Client{Timeout: 30 * time.Second}}

	proc := startProcess(t, bin, dbURL, addr)
	prefix := "kil" + uniqueAlias("")
	topics := createSourceTopics(t, prefix, 6)
	all := makeRecords(topics, 120_000, 0)
	kafkatest.Produce(t, "A", all[:40_000])

	name := "mm2-" + prefix
	code, body := k.do(http.MethodPut, "/connectors/"+name+"/config", mirrorConfig(t, prefix+".*", map[string]any{"tasks.max": "3"}))
	require.Equal(t, http.StatusCreated, code, "%v", body)

	// Keep producing while replication runs, and kill kmirror in the middle of it. The last third is held
	// back until after the kill: replication is fast enough to catch up with any producer before a poll of
	// the target notices, and the test must see records that only the restarted process can replicate.
	produced := make(chan error, 1)
	go func() { produced <- kafkatest.ProduceTo(kafkatest.Bootstrap(t, "A"), all[40_000:80_000]) }()
	// Kill once some progress is committed, so that the restart has offsets to resume from.
	remote := prefixA(topics[0].name)
	var committed int64
	require.Eventually(t, func() bool {
		committed = k.committedRecords(name)
		return committed >= 10_000 && kafkatest.EndOffsets(t, "B", remote, 6) >= 30_000
	}, 2*time.Minute, 20*time.Millisecond)
	proc.kill()
	require.NoError(t, <-produced)
	kafkatest.Produce(t, "A", all[80_000:])
	// Counted while no kmirror runs, so that no request still in flight at the kill lands afterwards.
	atKill := kafkatest.EndOffsets(t, "B", remote, 6)

	startProcess(t, bin, dbURL, addr)
	// Re-sent records count twice, so wait for every distinct record rather than for a record count.
	var got map[partitionKey][]kafkatest.Record
	require.Eventually(t, func() bool {
		got = readRemote(t, prefixA, topics)
		distinct := 0
		for _, rs := range got {
			seen := map[string]bool{}
			for _, r := range rs {
				seen[string(r.Headers[0].Value)] = true
			}
			distinct += len(seen)
		}
		return distinct >= len(all)
	}, 3*time.Minute, 500*time.Millisecond, "every record replicated after the restart")

	dups := 0
	for key, want := range groupByPartition(all) {
		have := got[key]
		seen := map[string]bool{}
		var firsts []int
		for i, r := range have {
			id := string(r.Headers[0].Value)
			if seen[id] {
				dups++
				continue
			}
			seen[id] = true
			firsts = append(firsts, i)
		}
		require.Len(t, firsts, len(want), "every record of %s [%d] arrived", key.topic, key.partition)
		for i, w := range want {
			require.True(t, sameRecord(w, have[firsts[i]]), "record %d of %s [%d] in order", i, key.topic, key.partition)
		}
	}
	// The restart resumed from the committed offsets: only records on B past them can have been sent again
	// (a restart from the beginning would re-send all atKill of them).
	require.LessOrEqual(t, int64(dups), atKill-committed, "re-sent only what was not committed before the kill")
	t.Logf("killed at %d of %d records on B, %d committed before; %d records re-sent after the restart", atKill, len(all), committed, dups)
}

// committedRecords returns how many source records the connector's committed offsets cover (offset + 1 per
// partition).
func (k *kmirror) committedRecords(name string) int64 {
	_, offs := k.do(http.MethodGet, "/connectors/"+name+"/offsets", nil)
	var n int64
	for _, o := range offs.(map[string]any)["offsets"].([]any) {
		n += mustInt(k.t, o.(map[string]any)["offset"].(map[string]any)["offset"]) + 1
	}
	return n
}

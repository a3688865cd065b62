package chaos

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// worker is one `kmirror serve` child process of a cluster. It keeps its id, listen address and log file
// across restarts, so a restarted worker rejoins as itself.
type worker struct {
	t         *testing.T
	id        string
	addr      string // the REST API's listener
	pprofAddr string // the pprof listener, whose goroutines dumpStacks reads
	args      []string
	logPath   string

	mu      sync.Mutex
	cmd     *exec.Cmd
	exited  chan struct{} // closed when the current process has exited
	stopped bool          // SIGSTOPped
	starts  int
}

func newWorker(t *testing.T, id, logPath string, args []string) *worker {
	return &worker{t: t, id: id, addr: freeAddr(t), pprofAddr: freeAddr(t), args: args, logPath: logPath}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func (w *worker) url() string { return "http://" + w.addr }

// start starts the process and waits until it reports healthy.
func (w *worker) start() {
	w.t.Helper()
	w.mu.Lock()
	if w.cmd != nil && !isClosed(w.exited) {
		w.mu.Unlock()
		w.t.Fatalf("worker %s: start while it runs", w.id)
	}
	w.starts++
	logf, err := os.OpenFile(w.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		w.mu.Unlock()
		w.t.Fatalf("worker %s: open log: %v", w.id, err)
	}
	args := append([]string{"serve", "--listen", w.addr, "--pprof-listen", w.pprofAddr, "--worker-id", w.id, "--log-level", "INFO"}, dataPathArgs()...)
	args = append(args, w.args...)
	fmt.Fprintf(logf, "==== chaos: %s start #%d at %s: kmirror %s\n", w.id, w.starts, time.Now().Format(time.TimeOnly+".000"),
		strings.Join(redactURL(args), " "))
	cmd := exec.Command(suite.bin, args...)
	cmd.Env = workerEnv()
	cmd.Stdout, cmd.Stderr = logf, logf
	// A worker dies with the test binary, however that ends (a go test timeout runs no cleanup).
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		w.mu.Unlock()
		w.t.Fatalf("worker %s: start: %v", w.id, err)
	}
	exited := make(chan struct{})
	w.cmd, w.exited, w.stopped = cmd, exited, false
	w.mu.Unlock()
	go func() {
		err := cmd.Wait()
		fmt.Fprintf(logf, "==== chaos: %s exited at %s: %v\n", w.id, time.Now().Format(time.TimeOnly+".000"), exitText(err))
		logf.Close()
		close(exited)
	}()
	w.awaitHealthy(60 * time.Second)
}

func exitText(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// dataPathArgs passes KMIRROR_TEST_DATA_PATH (auto, c or go), as the server tests take it, to the workers as
// --data-path: workerEnv keeps KMIRROR_DATA_PATH from them, so without it the suite runs the default path only.
func dataPathArgs() []string {
	if dp := os.Getenv("KMIRROR_TEST_DATA_PATH"); dp != "" {
		return []string{"--data-path", dp}
	}
	return nil
}

// workerEnv drops KMIRROR_* variables of the caller's environment: every flag kmirror takes has one, and the
// workers must run exactly the flags the tests give.
func workerEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "KMIRROR_") {
			env = append(env, kv)
		}
	}
	return env
}

func redactURL(args []string) []string {
	out := append([]string(nil), args...)
	for i := range out {
		if i > 0 && out[i-1] == "--database-url" {
			if j := strings.LastIndexByte(out[i], '/'); j >= 0 {
				out[i] = ".../" + out[i][j+1:]
			}
		}
	}
	return out
}

func (w *worker) awaitHealthy(within time.Duration) {
	w.t.Helper()
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(within)
	for {
		if isClosed(w.exitedChan()) {
			w.t.Fatalf("worker %s exited during start-up:\n%s", w.id, w.logTail(40))
		}
		resp, err := client.Get(w.url() + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("worker %s not healthy within %s (last: %v):\n%s", w.id, within, err, w.logTail(40))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (w *worker) exitedChan() chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.exited
}

// running is true while the process lives and is not stopped: it can answer requests.
func (w *worker) running() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.cmd != nil && !isClosed(w.exited) && !w.stopped
}

func (w *worker) signal(sig syscall.Signal) {
	w.t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cmd == nil || isClosed(w.exited) {
		w.t.Fatalf("worker %s: %v to a worker that does not run", w.id, sig)
	}
	if err := w.cmd.Process.Signal(sig); err != nil {
		w.t.Fatalf("worker %s: %v: %v", w.id, sig, err)
	}
	switch sig {
	case syscall.SIGSTOP:
		w.stopped = true
	case syscall.SIGCONT:
		w.stopped = false
	}
}

// Kill9 kills the process with SIGKILL and waits until it is gone.
func (w *worker) Kill9() {
	w.t.Helper()
	w.signal(syscall.SIGKILL)
	<-w.exitedChan()
}

// Stop freezes the process (SIGSTOP): it holds its connections and state but does nothing, like a long GC
// pause or a VM that lost its CPU.
func (w *worker) Stop() { w.t.Helper(); w.signal(syscall.SIGSTOP) }

// Cont resumes a stopped process (SIGCONT).
func (w *worker) Cont() { w.t.Helper(); w.signal(syscall.SIGCONT) }

// Term asks the process to stop gracefully (SIGTERM) and waits for it to exit; past within it kills it and
// fails the test. It returns how long the graceful stop took.
func (w *worker) Term(within time.Duration) time.Duration {
	w.t.Helper()
	if w.isStopped() {
		w.Cont()
	}
	start := time.Now()
	w.signal(syscall.SIGTERM)
	select {
	case <-w.exitedChan():
		return time.Since(start)
	case <-time.After(within):
		w.t.Errorf("worker %s did not exit within %s of SIGTERM; killing it", w.id, within)
		w.Kill9()
		return time.Since(start)
	}
}

func (w *worker) isStopped() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stopped
}

// Restart starts the process again after it exited (killed or terminated).
func (w *worker) Restart() {
	w.t.Helper()
	select {
	case <-w.exitedChan():
	default:
		w.t.Fatalf("worker %s: restart while it runs", w.id)
	}
	w.start()
}

// shutdown ends the process at the end of a test: gracefully if it can, killed if it takes too long.
func (w *worker) shutdown() {
	w.mu.Lock()
	cmd, exited, stopped := w.cmd, w.exited, w.stopped
	w.mu.Unlock()
	if cmd == nil || isClosed(exited) {
		return
	}
	if stopped {
		_ = cmd.Process.Signal(syscall.SIGCONT)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
		return
	case <-time.After(stopTimeout - 2*time.Second):
		w.saveSlowStop()
	}
	select {
	case <-exited:
	case <-time.After(17 * time.Second):
		w.t.Logf("worker %s did not exit within %s of SIGTERM at the end of the test; killing it", w.id, stopTimeout+15*time.Second)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-exited
	}
}

// logTail returns the last n lines of the worker's log.
func (w *worker) logTail(n int) string {
	b, err := os.ReadFile(w.logPath)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// logCount counts the lines of the worker's log that contain s.
func (w *worker) logCount(s string) int {
	b, err := os.ReadFile(w.logPath)
	if err != nil {
		return 0
	}
	n := 0
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		if bytes.Contains(line, []byte(s)) {
			n++
		}
	}
	return n
}

func isClosed(ch chan struct{}) bool {
	if ch == nil {
		return false
	}
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

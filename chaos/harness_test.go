package chaos

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// harness is this package's private scripts/harness: its own PostgreSQL and Kafka clusters A and B in a
// directory of their own, so that the faults injected here never reach the harness the other packages share.
type harness struct {
	dir    string
	script string
	env    map[string]string // what `up` wrote to DIR/env
	once   sync.Once
}

// startHarness runs `scripts/harness up --dir dir`. It returns the harness even when up fails, so that the
// caller's down stops whatever was started.
func startHarness(dir string) (*harness, error) {
	script, err := filepath.Abs(filepath.Join("..", "scripts", "harness"))
	if err != nil {
		return nil, err
	}
	h := &harness{dir: dir, script: script}
	start := time.Now()
	if _, err := h.run("up"); err != nil {
		return h, err
	}
	env, err := parseEnvFile(filepath.Join(dir, "env"))
	if err != nil {
		return h, err
	}
	for _, k := range []string{"KMIRROR_TEST_DATABASE_URL", "KAFKA_A_BOOTSTRAP", "KAFKA_B_BOOTSTRAP"} {
		if env[k] == "" {
			return h, fmt.Errorf("%s/env has no %s", dir, k)
		}
	}
	h.env = env
	fmt.Fprintf(os.Stderr, "chaos: private harness up in %s (%.1f s): A %s, B %s, PostgreSQL %s\n", dir,
		time.Since(start).Seconds(), env["KAFKA_A_BOOTSTRAP"], env["KAFKA_B_BOOTSTRAP"], env["KMIRROR_TEST_DATABASE_URL"])
	return h, nil
}

// exportEnv points this process's helpers (kafkatest, storetest) at the private harness, overriding the shared
// one that scripts/test exported.
func (h *harness) exportEnv() error {
	for _, k := range []string{"KMIRROR_TEST_DATABASE_URL", "KAFKA_A_BOOTSTRAP", "KAFKA_B_BOOTSTRAP"} {
		if err := os.Setenv(k, h.env[k]); err != nil {
			return err
		}
	}
	return nil
}

// run runs a harness subcommand on this harness's directory and returns its output.
func (h *harness) run(args ...string) (string, error) {
	cmd := exec.Command(h.script, append(args, "--dir", h.dir)...)
	cmd.Env = harnessEnv()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("scripts/harness %s: %w\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String(), nil
}

// harnessEnv is this process's environment without the fixed ports and the harness dir that a caller (such
// as scripts/test) may have set for the shared harness: this one must pick its own free ports.
func harnessEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "KMIRROR_PG_PORT", "KMIRROR_KAFKA_A_PORT", "KMIRROR_KAFKA_B_PORT", "KMIRROR_HARNESS_DIR":
			continue
		}
		env = append(env, kv)
	}
	return env
}

// down stops the harness and removes its directory; safe to call more than once.
func (h *harness) down() {
	h.once.Do(func() {
		if out, err := h.run("down"); err != nil {
			fmt.Fprintf(os.Stderr, "chaos: %v\n", err)
		} else {
			fmt.Fprintf(os.Stderr, "chaos: private harness down\n%s", out)
		}
	})
}

// fault runs a fault subcommand (kafka kill A, pg start, ...) and fails the test if it fails.
func (h *harness) fault(t *testing.T, args ...string) time.Duration {
	t.Helper()
	start := time.Now()
	out, err := h.run(args...)
	if err != nil {
		t.Fatalf("%v", err)
	}
	took := time.Since(start)
	t.Logf("harness %s: %.1f s (%s)", strings.Join(args, " "), took.Seconds(), strings.TrimSpace(lastLine(out)))
	return took
}

func (h *harness) killKafka(t *testing.T, cluster string) time.Duration {
	return h.fault(t, "kafka", "kill", cluster)
}

func (h *harness) startKafka(t *testing.T, cluster string) time.Duration {
	return h.fault(t, "kafka", "start", cluster)
}

// freezeKafka stops broker cluster's process (SIGSTOP): its connections stay open and nothing it was asked
// gets an answer. The returned function lets it go on (SIGCONT); the test's cleanup does so in any case. The
// PID is the one scripts/harness recorded, checked against the process's command line.
func (h *harness) freezeKafka(t *testing.T, cluster string) (thaw func()) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(h.dir, "kafka-"+cluster+".pid"))
	if err != nil {
		t.Fatalf("broker %s's PID: %v", cluster, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatalf("broker %s's PID file: %v", cluster, err)
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || !bytes.Contains(cmdline, []byte("kafka.Kafka")) || !bytes.Contains(cmdline, []byte(filepath.Join(h.dir, cluster, "server.properties"))) {
		t.Fatalf("PID %d is not broker %s of this harness (%v)", pid, cluster, err)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatalf("SIGSTOP broker %s: %v", cluster, err)
	}
	var once sync.Once
	thaw = func() {
		once.Do(func() {
			if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
				t.Errorf("SIGCONT broker %s: %v", cluster, err)
			}
		})
	}
	t.Cleanup(thaw)
	return thaw
}

func (h *harness) killPostgres(t *testing.T) time.Duration { return h.fault(t, "pg", "kill") }

func (h *harness) startPostgres(t *testing.T) time.Duration { return h.fault(t, "pg", "start") }

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// parseEnvFile reads the `export K='v'` lines scripts/harness writes (values single-quoted by its shq).
func parseEnvFile(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read harness env: %w", err)
	}
	defer f.Close()
	env := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "export ")
		if !ok {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("%s: malformed line %q", path, sc.Text())
		}
		if env[k], err = unquoteShell(v); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", path, k, err)
		}
	}
	return env, sc.Err()
}

// unquoteShell undoes shq, which single-quotes a value and writes each quote inside it as quote, backslash,
// quote, quote.
func unquoteShell(s string) (string, error) {
	var b strings.Builder
	for len(s) > 0 {
		switch {
		case s[0] == '\'':
			end := strings.IndexByte(s[1:], '\'')
			if end < 0 {
				return "", fmt.Errorf("unterminated quote")
			}
			b.WriteString(s[1 : 1+end])
			s = s[2+end:]
		case strings.HasPrefix(s, `\'`):
			b.WriteByte('\'')
			s = s[2:]
		default:
			b.WriteByte(s[0])
			s = s[1:]
		}
	}
	return b.String(), nil
}

package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// harness drives scripts/harness for one harness directory.
type harness struct {
	script string
	dir    string
	env    map[string]string // DIR/env
	// started is true when this program brought the harness up (and so takes it down at the end).
	started bool
}

func (h *harness) run(extraEnv []string, args ...string) (string, error) {
	cmd := exec.Command(h.script, args...)
	cmd.Env = append(os.Environ(), extraEnv...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("harness %s: %w\n%s", strings.Join(args, " "), err, tail(errb.String(), 40))
	}
	return out.String(), nil
}

func tail(s string, lines int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > lines {
		l = l[len(l)-lines:]
	}
	return strings.Join(l, "\n")
}

// up starts the harness unless it already runs; brokers get a 1 GiB heap unless KMIRROR_KAFKA_HEAP says else.
func (h *harness) up() error {
	if _, err := h.run(nil, "status", "--dir", h.dir); err != nil {
		env := []string{}
		if os.Getenv("KMIRROR_KAFKA_HEAP") == "" {
			env = append(env, "KMIRROR_KAFKA_HEAP=1g")
		}
		logf("starting the harness in %s (brokers A and B, PostgreSQL)", h.dir)
		if _, err := h.run(env, "up", "--dir", h.dir); err != nil {
			return err
		}
		h.started = true
	} else {
		logf("using the running harness in %s", h.dir)
	}
	return h.loadEnv()
}

func (h *harness) loadEnv() error {
	f, err := os.Open(filepath.Join(h.dir, "env"))
	if err != nil {
		return err
	}
	defer f.Close()
	h.env = map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "export ")
		if !ok {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		h.env[k] = strings.Trim(v, "'")
	}
	for _, k := range []string{"KAFKA_A_BOOTSTRAP", "KAFKA_B_BOOTSTRAP", "KMIRROR_TEST_DATABASE_URL"} {
		if h.env[k] == "" {
			return fmt.Errorf("%s/env has no %s", h.dir, k)
		}
	}
	return sc.Err()
}

func (h *harness) down() error {
	_, err := h.run(nil, "down", "--dir", h.dir)
	return err
}

func (h *harness) psql(sql string) error {
	_, err := h.run(nil, "psql", "--dir", h.dir, "-q", "-v", "ON_ERROR_STOP=1", "-c", sql)
	return err
}

// databaseURL is the harness PostgreSQL URL for database db.
func (h *harness) databaseURL(db string) string {
	return strings.Replace(h.env["KMIRROR_TEST_DATABASE_URL"], "/postgres?", "/"+db+"?", 1)
}

// pid reads DIR/NAME.pid (kafka-A, kafka-B, mm2, postgres).
func (h *harness) pid(name string) int {
	b, err := os.ReadFile(filepath.Join(h.dir, name+".pid"))
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

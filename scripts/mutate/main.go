// Command mutate shows that the tests guard the source task's invariants: it breaks each guard listed in a
// mutations file, one at a time, runs the tests named for it, and reports whether they failed (the mutation
// is killed) or passed (it survived). Every file is restored after its run, also when the command is stopped.
//
//	go run ./scripts/mutate [-only SUBSTRING] [scripts/mutate/mutations.txt]
//
// The file holds blocks separated by blank lines; lines starting with # are comments:
//
//	guard: what the mutation breaks (for the report)
//	file: path/from/the/repository/root.go
//	from: "Go-quoted text that occurs exactly once in the file"
//	to: "Go-quoted text that replaces it"
//	test: the -run pattern of the tests that must fail
//
// The tests run with -short (no brokers, no database). The exit status is 1 if a mutation survived or could
// not be applied.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

type mutation struct {
	guard, file, from, to, test string
}

func main() {
	only := flag.String("only", "", "run only the mutations whose guard contains this")
	flag.Parse()
	path := "scripts/mutate/mutations.txt"
	if flag.NArg() > 0 {
		path = flag.Arg(0)
	}
	muts, err := parse(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mutate:", err)
		os.Exit(2)
	}
	failed := false
	fmt.Println("| guard | file | failing tests |")
	fmt.Println("|---|---|---|")
	for _, m := range muts {
		if *only != "" && !strings.Contains(m.guard, *only) {
			continue
		}
		killedBy, err := run(m)
		switch {
		case err != nil:
			failed = true
			fmt.Printf("| %s | %s | NOT APPLIED: %v |\n", m.guard, m.file, err)
		case len(killedBy) == 0:
			failed = true
			fmt.Printf("| %s | %s | SURVIVED (no test of %q failed) |\n", m.guard, m.file, m.test)
		default:
			fmt.Printf("| %s | %s | %s |\n", m.guard, m.file, strings.Join(killedBy, ", "))
		}
	}
	if failed {
		os.Exit(1)
	}
}

var failLine = regexp.MustCompile(`(?m)^\s*--- FAIL: (\S+)`)

// run applies m, runs its tests, restores the file, and returns the tests that failed.
func run(m mutation) ([]string, error) {
	orig, err := os.ReadFile(m.file)
	if err != nil {
		return nil, err
	}
	if n := strings.Count(string(orig), m.from); n != 1 {
		return nil, fmt.Errorf("the text to replace occurs %d times", n)
	}
	restore := func() { _ = os.WriteFile(m.file, orig, 0o644) }
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt)
	defer signal.Stop(stop)
	go func() {
		if _, ok := <-stop; ok {
			restore()
			os.Exit(130)
		}
	}()
	defer restore()
	// rapid saves a failing case under the package's testdata/rapid: not worth keeping for a mutant.
	failfiles := filepath.Join(filepath.Dir(m.file), "testdata", "rapid")
	if _, err := os.Stat(failfiles); os.IsNotExist(err) {
		if entries, _ := os.ReadDir(filepath.Dir(failfiles)); len(entries) == 0 {
			defer os.Remove(filepath.Dir(failfiles)) // after the next line's (deferred calls run last first)
		}
		defer os.RemoveAll(failfiles)
	}
	if err := os.WriteFile(m.file, []byte(strings.Replace(string(orig), m.from, m.to, 1)), 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command("go", "test", "-short", "-count=1", "-run", m.test, "./"+filepath.Dir(m.file))
	out, err := cmd.CombinedOutput()
	if err == nil {
		return nil, nil
	}
	var names []string
	for _, sub := range failLine.FindAllStringSubmatch(string(out), -1) {
		if !strings.Contains(sub[1], "/") {
			names = append(names, sub[1])
		}
	}
	if len(names) == 0 {
		// It did not build, or failed outside a test: not a demonstration of a guard.
		return nil, fmt.Errorf("go test failed without a failing test:\n%s", out)
	}
	return names, nil
}

func parse(path string) ([]mutation, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []mutation
	var cur mutation
	flush := func() error {
		if cur == (mutation{}) {
			return nil
		}
		if cur.file == "" || cur.from == "" || cur.test == "" {
			return fmt.Errorf("%s: incomplete mutation %q", path, cur.guard)
		}
		out = append(out, cur)
		cur = mutation{}
		return nil
	}
	s := bufio.NewScanner(f)
	for n := 1; s.Scan(); n++ {
		line := strings.TrimSpace(s.Text())
		switch {
		case line == "":
			if err := flush(); err != nil {
				return nil, err
			}
			continue
		case strings.HasPrefix(line, "#"):
			continue
		}
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("%s:%d: want key: value", path, n)
		}
		val = strings.TrimSpace(val)
		switch key {
		case "guard":
			cur.guard = val
		case "file":
			cur.file = val
		case "test":
			cur.test = val
		case "from", "to":
			text, err := strconv.Unquote(val)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %s is not a Go string: %w", path, n, key, err)
			}
			if key == "from" {
				cur.from = text
			} else {
				cur.to = text
			}
		default:
			return nil, fmt.Errorf("%s:%d: unknown key %q", path, n, key)
		}
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	return out, flush()
}

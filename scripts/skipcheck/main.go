// Command skipcheck reads `go test -json` on stdin, prints what plain `go test` would (or everything with -v,
// or the JSON itself with -json), and exits 1 when a test skipped that the list of expected skips does not
// name: a skipped test must never pass for a passing one. scripts/test pipes every go test run through it.
//
//	go test -json ./... | skipcheck -expected scripts/expected-skips [-short] [-v | -json]
//
// The list has one expected skip a line, three tab-separated fields: the package (relative to the module, "."
// for its root), a regular expression the whole test name must match, and one the skip message must match.
// Blank lines and lines starting with # are ignored. With -short, a skip whose message says "skipped under
// -short" is expected as well: that is how a test that needs the harness leaves the suite without it.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
)

const shortMark = "skipped under -short"

type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	ImportPath string
}

type expectation struct {
	pkg       string
	test, msg *regexp.Regexp
}

type skip struct{ pkg, test, msg string }

func main() {
	listPath := flag.String("expected", "", "file listing the expected skips")
	short := flag.Bool("short", false, "the run is go test -short: skips marked \""+shortMark+"\" are expected")
	verbose := flag.Bool("v", false, "print every test's output as it comes")
	raw := flag.Bool("json", false, "print the JSON stream itself")
	module := flag.String("module", "", "module path, stripped from package names (default: read from go.mod)")
	flag.Parse()
	list, err := readList(*listPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "skipcheck:", err)
		os.Exit(2)
	}
	if *module == "" {
		*module = modulePath()
	}
	skips, err := scan(os.Stdin, os.Stdout, *verbose, *raw)
	if err != nil {
		fmt.Fprintln(os.Stderr, "skipcheck:", err)
		os.Exit(2)
	}
	var unexpected []skip
	for _, s := range skips {
		s.pkg = relative(s.pkg, *module)
		if !expected(list, s, *short) {
			unexpected = append(unexpected, s)
		}
	}
	if len(unexpected) == 0 {
		if len(skips) > 0 {
			fmt.Fprintf(os.Stderr, "skipcheck: %d skipped tests, each one expected\n", len(skips))
		}
		return
	}
	sort.Slice(unexpected, func(i, j int) bool {
		return unexpected[i].pkg+" "+unexpected[i].test < unexpected[j].pkg+" "+unexpected[j].test
	})
	fmt.Fprintf(os.Stderr, "skipcheck: %d skipped tests that %s does not expect:\n", len(unexpected), *listPath)
	for _, s := range unexpected {
		fmt.Fprintf(os.Stderr, "  %s %s: %s\n", s.pkg, s.test, s.msg)
	}
	os.Exit(1)
}

func readList(path string) ([]expectation, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []expectation
	for i, line := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 3 {
			return nil, fmt.Errorf("%s:%d: want 3 tab-separated fields (package, test, message), got %d", path, i+1, len(f))
		}
		test, err := regexp.Compile("^(?:" + f[1] + ")$")
		if err != nil {
			return nil, fmt.Errorf("%s:%d: test: %w", path, i+1, err)
		}
		msg, err := regexp.Compile(f[2])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: message: %w", path, i+1, err)
		}
		out = append(out, expectation{pkg: f[0], test: test, msg: msg})
	}
	return out, nil
}

func expected(list []expectation, s skip, short bool) bool {
	if short && strings.Contains(s.msg, shortMark) {
		return true
	}
	for _, e := range list {
		if e.pkg == s.pkg && e.test.MatchString(s.test) && e.msg.MatchString(s.msg) {
			return true
		}
	}
	return false
}

// scan copies the stream to out as go test would print it and returns the skipped tests.
func scan(in io.Reader, out io.Writer, verbose, raw bool) ([]skip, error) {
	w := bufio.NewWriter(out)
	defer w.Flush()
	held := map[[2]string]*strings.Builder{} // a test's output, printed if it fails
	var skips []skip
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if raw {
			w.Write(line)
			w.WriteByte('\n')
		}
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			if !raw {
				w.Write(line)
				w.WriteByte('\n')
			}
			continue
		}
		if e.Test == "" {
			// Package lines (ok, FAIL), build output, panics outside a test; the PASS line only -v prints.
			if !raw && (verbose || e.Output != "PASS\n") {
				w.WriteString(e.Output)
			}
			if e.Action == "fail" || e.Action == "build-fail" {
				w.Flush()
			}
			continue
		}
		key := [2]string{e.Package, e.Test}
		switch e.Action {
		case "output":
			if verbose && !raw {
				w.WriteString(e.Output)
			}
			b := held[key]
			if b == nil {
				b = &strings.Builder{}
				held[key] = b
			}
			if verbose || !progress(e.Output) {
				b.WriteString(e.Output)
			}
		case "fail":
			if !verbose && !raw && held[key] != nil {
				w.WriteString(held[key].String())
			}
			delete(held, key)
		case "skip":
			text := ""
			if held[key] != nil {
				text = held[key].String()
			}
			skips = append(skips, skip{pkg: e.Package, test: e.Test, msg: message(text)})
			delete(held, key)
		case "pass":
			delete(held, key)
		}
	}
	return skips, sc.Err()
}

// progress tells the lines -v adds about a test's progress, which plain go test does not print.
func progress(line string) bool {
	for _, p := range []string{"=== RUN", "=== PAUSE", "=== CONT", "=== NAME"} {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	return false
}

// message is what a test logged, without the lines go test adds (=== RUN, --- SKIP) and the file:line prefix.
func message(output string) string {
	var parts []string
	for _, l := range strings.Split(output, "\n") {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- ") {
			continue
		}
		if i := strings.Index(t, ".go:"); i > 0 && !strings.ContainsAny(t[:i], " \t") {
			if j := strings.Index(t[i+4:], ": "); j >= 0 {
				t = t[i+4+j+2:]
			}
		}
		parts = append(parts, t)
	}
	return strings.Join(parts, " | ")
}

func relative(pkg, module string) string {
	if pkg == module {
		return "."
	}
	return strings.TrimPrefix(pkg, module+"/")
}

func modulePath() string {
	b, err := os.ReadFile("go.mod")
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "module ") {
			return strings.TrimSpace(strings.TrimPrefix(l, "module "))
		}
	}
	return ""
}

// Package alertrules holds no code: its test checks kmirror's Prometheus alert rules (kmirror-rules.yaml)
// with promtool, and that they read only series kmirror exports.
package alertrules

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const (
	rulesFile = "kmirror-rules.yaml"
	testsFile = "kmirror-rules.test.yaml"
)

// promtool returns a promtool from scripts/promtool. Where none can be had the test skips, except in CI, which
// must never pass without it.
func promtool(t *testing.T) string {
	t.Helper()
	out, err := exec.Command(filepath.Join("..", "..", "scripts", "promtool")).Output()
	if err != nil {
		msg := "scripts/promtool found no promtool: " + err.Error()
		if ee, ok := err.(*exec.ExitError); ok {
			msg += ": " + strings.TrimSpace(string(ee.Stderr))
		}
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return strings.TrimSpace(string(out))
}

// TestAlertRules runs promtool's syntax check and the rules' unit tests (each alert firing and not firing).
func TestAlertRules(t *testing.T) {
	bin := promtool(t)
	for _, args := range [][]string{{"check", "rules", rulesFile}, {"test", "rules", testsFile}} {
		out, err := exec.Command(bin, args...).CombinedOutput()
		require.NoError(t, err, "promtool %s:\n%s", strings.Join(args, " "), out)
	}
}

// TestAlertRulesTestEveryAlert checks that the unit tests cover every alert.
func TestAlertRulesTestEveryAlert(t *testing.T) {
	t.Parallel()
	alerts := matches(t, rulesFile, `(?m)^\s+- alert: (\w+)$`)
	tested := matches(t, testsFile, `(?m)^\s+alertname: (\w+)$`)
	require.NotEmpty(t, alerts)
	for _, a := range alerts {
		require.Contains(t, tested, a, "no promtool unit test for alert %s", a)
	}
}

// TestAlertRulesUseExportedSeries checks that every kmirror_* series a rule reads is a name the metrics
// package exports, so that a renamed series cannot leave an alert that never fires.
func TestAlertRulesUseExportedSeries(t *testing.T) {
	t.Parallel()
	var src strings.Builder
	files, err := filepath.Glob(filepath.Join("..", "..", "metrics", "*.go"))
	require.NoError(t, err)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		src.Write(b)
	}
	series := matches(t, rulesFile, `\b(kmirror_[a-z_]+)\b`)
	require.NotEmpty(t, series)
	for _, s := range series {
		require.Contains(t, src.String(), `"`+s+`"`, "rule reads %s, which package metrics does not export", s)
	}
}

func matches(t *testing.T, file, pattern string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	var out []string
	for _, m := range regexp.MustCompile(pattern).FindAllStringSubmatch(string(b), -1) {
		out = append(out, m[1])
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// TestChartCarriesTheRules checks that the Helm chart's copy of the rules (its PrometheusRule) is this file.
func TestChartCarriesTheRules(t *testing.T) {
	t.Parallel()
	want, err := os.ReadFile(rulesFile)
	require.NoError(t, err)
	got, err := os.ReadFile(filepath.Join("..", "helm", "kmirror", "files", rulesFile))
	require.NoError(t, err)
	require.Equal(t, string(want), string(got), "copy %s to deploy/helm/kmirror/files/", rulesFile)
}

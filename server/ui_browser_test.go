package server_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// browser is one headless Chromium tab driven by chromedp, with a place to keep screenshots.
type browser struct {
	t   *testing.T
	ctx context.Context
	dir string // where screenshots go
}

// chromiumPath finds Debian's chromium (or KMIRROR_CHROMIUM). Without one the test fails in CI (CI=true) and
// is skipped elsewhere with what to install: scripts/test installs it, so a skip only happens when the tests
// run outside it.
func chromiumPath(t *testing.T) string {
	t.Helper()
	candidates := []string{os.Getenv("KMIRROR_CHROMIUM"), "chromium", "chromium-browser", "google-chrome", "headless-shell"}
	for _, c := range candidates {
		if c == "" {
			continue
		}
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	msg := "no Chromium found (set KMIRROR_CHROMIUM, or install it: apt-get install -y chromium; scripts/test installs it)"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// screenshotDir is KMIRROR_UI_SCREENSHOTS, or a directory under the system's temp dir that outlives the test,
// so the screenshots stay as artifacts.
func screenshotDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("KMIRROR_UI_SCREENSHOTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "kmirror-ui-screenshots")
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	return dir
}

// newBrowser starts a headless Chromium for the test, with extra flags if given; it stops when the test ends.
func newBrowser(t *testing.T, extra ...chromedp.ExecAllocatorOption) *browser {
	t.Helper()
	path := chromiumPath(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox, // Chromium refuses to run as root with its sandbox, and CI runs as root
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	)
	opts = append(opts, extra...)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithLogf(func(string, ...any) {}))
	t.Cleanup(func() { cancel(); cancelAlloc() })
	// The first Run starts the browser; it must not carry a timeout (that would end the browser with it).
	require.NoError(t, chromedp.Do(ctx), "start Chromium at %s", path)
	return &browser{t: t, ctx: ctx, dir: screenshotDir(t)}
}

// do runs steps within a minute, failing the test with what was being done.
func (b *browser) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.shot("failed-" + strings.ReplaceAll(b.t.Name(), "/", "_"))
		b.t.Fatalf("%s: %v", what, err)
	}
}

// text is the text content of the first element matching the CSS selector, waiting until it exists.
func (b *browser) text(sel string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS(sel)))
	require.NoError(b.t, err, "text of %s", sel)
	return strings.TrimSpace(s)
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](b *browser, expr string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	require.NoError(b.t, err, "evaluate %s", expr)
	return v
}

// await waits until the JavaScript predicate is truthy, within timeout.
func (b *browser) await(what, predicate string, timeout time.Duration) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, timeout+5*time.Second)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](predicate,
		chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(timeout)))
	if err != nil {
		b.shot("failed-" + strings.ReplaceAll(b.t.Name(), "/", "_"))
		b.t.Fatalf("waiting until %s (%s): %v", what, predicate, err)
	}
}

// shot saves a full-page screenshot as name.png in the screenshot directory, and, with
// KMIRROR_UPDATE_DOCS_SCREENSHOTS=1, in docs/screenshots as well (how the screenshots of the README and docs/dashboard.md are made).
func (b *browser) shot(name string) {
	b.t.Helper()
	b.capture(name, chromedp.FullScreenshot(100))
}

// shotTop saves what the window shows, for pages too long to be worth a full screenshot (the create form).
func (b *browser) shotTop(name string) {
	b.t.Helper()
	b.capture(name, chromedp.CaptureScreenshot())
}

func (b *browser) capture(name string, action chromedp.Action[[]byte]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, action)
	if err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
		return
	}
	path := filepath.Join(b.dir, name+".png")
	require.NoError(b.t, os.WriteFile(path, png, 0o644))
	b.t.Logf("screenshot %s", path)
	if os.Getenv("KMIRROR_UPDATE_DOCS_SCREENSHOTS") == "1" && docsScreenshots[name] {
		require.NoError(b.t, os.MkdirAll("../docs/screenshots", 0o755))
		require.NoError(b.t, os.WriteFile(filepath.Join("../docs/screenshots", name+".png"), png, 0o644))
	}
}

// docsScreenshots are the pages the README and docs/dashboard.md show.
var docsScreenshots = map[string]bool{"connectors": true, "connector": true, "edit-validation-error": true,
	"create": true, "groups": true, "workers": true, "failed-connector": true}

// jsString quotes s as a JavaScript string literal (JSON's rules are a subset of JavaScript's).
func jsString(s string) string {
	return fmt.Sprintf("%q", s) // Go's quoting of printable UTF-8 is valid JSON for the names the tests use
}

// byID is a CSS selector for an element whose id holds characters CSS would read as syntax (dots).
func byID(id string) string {
	return fmt.Sprintf("[id=%q]", id)
}

// open navigates to url and waits until sel is visible.
func (b *browser) open(url, sel string) {
	b.t.Helper()
	b.do("open "+url, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS(sel)))
}

// submit clicks a form's button and waits until the page it leads to has loaded and shows sel. The old page
// is marked first, so that its own copy of sel does not count.
func (b *browser) submit(button, sel string) {
	b.t.Helper()
	b.do("click "+button,
		chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := chromedp.Evaluate[chromedp.Void](`document.body.dataset.left = "1"`)(ctx, t)
			return err
		}),
		chromedp.Click(chromedp.CSS(button)))
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](
			`document.readyState === "complete" && document.body && !document.body.dataset.left && document.querySelector(`+jsString(sel)+`)`,
			chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(4*time.Second)))
		cancel()
		if err == nil {
			return
		}
		// The navigation may destroy the poll's execution context: poll again on the new page.
		if time.Now().After(deadline) {
			b.shot("failed-" + strings.ReplaceAll(b.t.Name(), "/", "_"))
			b.t.Fatalf("after clicking %s, no page with %s: %v", button, sel, err)
		}
	}
}

// setValues sets form inputs by id; SetValue reaches inputs inside closed <details> groups too.
func (b *browser) setValues(values map[string]string) {
	b.t.Helper()
	var steps []chromedp.Action[chromedp.Void]
	for id, v := range values {
		steps = append(steps, chromedp.SetValue(chromedp.CSS(byID(id)), v))
	}
	b.do("fill the form", steps...)
}

func (b *browser) value(sel string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(sel)))
	require.NoError(b.t, err, "value of %s", sel)
	return v
}

package server_test

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
)

// TestDashboardOverHTTPSReadOnly opens the dashboard in a real Chromium over HTTPS as the read-only user bob:
// he sees the connectors, a connector's page and the workers, no control that would change something, and a
// write he makes anyway answers with the API's 403, changing nothing.
func TestDashboardOverHTTPSReadOnly(t *testing.T) {
	t.Parallel()
	s := startSecured(t)
	// Chromium trusts the server's key, and only it, rather than every certificate (--ignore-certificate-errors).
	pair, err := tls.LoadX509KeyPair(s.certFile, s.keyFile)
	require.NoError(t, err)
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	require.NoError(t, err)
	spki := sha256.Sum256(leaf.RawSubjectPublicKeyInfo)
	b := newBrowser(t, chromedp.Flag("ignore-certificate-errors-spki-list", base64.StdEncoding.EncodeToString(spki[:])))

	topic := kafkatest.TopicName(t, "uisec")
	kafkatest.CreateTopic(t, "A", topic, 1, nil)
	name := "secured " + topic[len(topic)-6:]
	resp, body := s.send(http.MethodPost, "/connectors", basicAuth("alice", "alice-pw"),
		map[string]any{"name": name, "config": sourceConfig(t, topic)})
	require.Equal(t, http.StatusCreated, resp.StatusCode, body)
	s.awaitStates(name, "RUNNING RUNNING", 60*time.Second)

	// Chromium asks for a password when a page answers 401 with a Basic challenge; the test answers the
	// prompt as a user would, first by cancelling it, then as bob.
	var creds atomic.Pointer[[2]string]
	answerPrompts(t, b, &creds)
	b.open(s.url+"/ui/", "body")
	require.Equal(t, "User cannot access the resource.", b.text("body"), "a cancelled prompt shows Connect's 401 body")
	creds.Store(&[2]string{"bob", "bob-pw"})
	b.open(s.url+"/ui/", "#connector-rows .connector-link")
	require.Equal(t, name, b.text("#connector-rows .connector-link"))
	b.await("the live list refreshes through the authenticated fragment", `document.querySelector("#connector-rows").textContent.includes("1/1 running")`, 30*time.Second)
	b.open(s.url+"/ui/workers", "main")
	require.Contains(t, b.text("main"), "https://", "the worker's advertised URL")
	b.open(s.url+"/ui/connectors/"+url.PathEscape(name), "#connector-name")
	require.Equal(t, name, b.text("#connector-name"))
	require.Equal(t, "RUNNING", b.text("#connector-state"))
	b.shotTop("read-only-connector")
	require.Equal(t, "You may read everything here and change nothing (read-only user).", b.text("#read-only"))
	require.Equal(t, 0, eval[int](b, `document.querySelectorAll("form[method=post], #pause, #delete, a[href='/ui/new']").length`),
		"a read-only user is shown no write controls")
	require.Equal(t, "Configuration", b.text("#edit-link"))
	b.open(s.url+"/ui/connectors/"+url.PathEscape(name)+"/edit", "#read-only")
	require.Equal(t, 0, eval[int](b, `document.querySelectorAll("#save").length`), "no save button for a read-only user")

	// A write he makes himself (the form the page no longer shows) is still refused by the API.
	b.open(s.url+"/ui/connectors/"+url.PathEscape(name), "#connector-name")
	eval[bool](b, `(() => { const f = document.createElement("form"); f.method = "post"; f.action = location.pathname + "/action";
		const i = document.createElement("input"); i.type = "hidden"; i.name = "action"; i.value = "pause"; f.appendChild(i);
		const btn = document.createElement("button"); btn.type = "submit"; btn.id = "pause"; f.appendChild(btn);
		document.body.appendChild(f); return true })()`)
	b.submit("#pause", "#error")
	require.Equal(t, "The server said: User bob has the read-only role, which may only read (GET); PUT /connectors/"+
		url.PathEscape(name)+"/pause needs the admin role", b.text("#error"))
	b.shotTop("read-only-refused")
	require.Equal(t, "RUNNING RUNNING", s.states(name), "the refused pause changed nothing")
	resp, body = s.send(http.MethodGet, "/connectors/"+url.PathEscape(name)+"/status", basicAuth("bob", "bob-pw"), nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	require.False(t, strings.Contains(body, "PAUSED"), body)
}

// answerPrompts answers the browser's basic-auth prompts with creds (user and password), or cancels them
// while creds is nil, until the test ends. Chromium then keeps the credentials for the realm, as it does
// when a person types them in.
func answerPrompts(t *testing.T, b *browser, creds *atomic.Pointer[[2]string]) {
	t.Helper()
	ctx, cancel := context.WithCancel(b.ctx)
	paused := chromedp.Events(ctx, fetch.RequestPaused)
	challenges := chromedp.Events(ctx, fetch.AuthRequired)
	handle := true
	b.do("intercept basic-auth prompts", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, fetch.Enable, fetch.EnableParams{HandleAuthRequests: &handle})
		return err
	}))
	call := func(f func(ctx context.Context, tg *chromedp.Target) error) {
		if err := chromedp.Do(ctx, chromedp.Func(f)); err != nil && ctx.Err() == nil {
			t.Errorf("answer the browser: %v", err)
		}
	}
	done := make(chan struct{}, 2)
	go func() {
		defer func() { done <- struct{}{} }()
		// With the Fetch domain on, every request waits for a word from the test: let them all go.
		for ev, err := range paused {
			if err != nil {
				return
			}
			call(func(ctx context.Context, tg *chromedp.Target) error {
				_, err := cdp.Call(ctx, tg, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID})
				return err
			})
		}
	}()
	go func() {
		defer func() { done <- struct{}{} }()
		for ev, err := range challenges {
			if err != nil {
				return
			}
			answer := &fetch.AuthChallengeResponse{Response: fetch.AuthChallengeResponseResponseCancelAuth}
			if c := creds.Load(); c != nil {
				answer = &fetch.AuthChallengeResponse{Response: fetch.AuthChallengeResponseResponseProvideCredentials,
					Username: c[0], Password: c[1]}
			}
			call(func(ctx context.Context, tg *chromedp.Target) error {
				_, err := cdp.Call(ctx, tg, fetch.ContinueWithAuth, fetch.ContinueWithAuthParams{RequestID: ev.RequestID, AuthChallengeResponse: answer})
				return err
			})
		}
	}()
	t.Cleanup(func() { cancel(); <-done; <-done })
}

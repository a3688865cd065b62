package web

import (
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// fakeAPI answers the few REST calls the edit page makes, for one connector, and records the PUT config.
type fakeAPI struct {
	config     map[string]string
	put        map[string]string
	declaredBy string
	takenOver  *takenOver
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.EscapedPath()
	name := "/connectors/" + url.PathEscape("a/b c")
	switch {
	case r.Method == http.MethodGet && p == name:
		// As the API does: secrets [hidden] unless the caller asks for them.
		cfg := maps.Clone(f.config)
		if _, ok := cfg["secret.key"]; ok && r.URL.Query().Get("revealSecrets") != "true" {
			cfg["secret.key"] = "[hidden]"
		}
		_ = json.NewEncoder(w).Encode(connectorInfo{Name: "a/b c", Config: cfg, Type: "source", DeclaredBy: f.declaredBy,
			TakenOver: f.takenOver})
	case r.Method == http.MethodGet && strings.HasSuffix(p, "/config") && strings.HasPrefix(p, "/connector-plugins/"):
		_ = json.NewEncoder(w).Encode([]configKey{{Name: "tasks.max", Type: "INT"}, {Name: "secret.key", Type: "PASSWORD"}})
	case r.Method == http.MethodPut && strings.HasSuffix(p, "/config/validate"):
		_ = json.NewEncoder(w).Encode(map[string]any{"name": "x", "error_count": 0, "configs": []any{}})
	case r.Method == http.MethodPut && p == name+"/config":
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &f.put)
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("{}"))
	default:
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"error_code":404,"message":"no route ` + r.Method + " " + p + `"}`))
	}
}

// TestEditKeepsUnshownKeysAndStoredPasswords: a save starts from the stored config, so a key the form did not
// post survives, and an empty password field keeps the stored secret, which the form never contained.
func TestEditKeepsUnshownKeysAndStoredPasswords(t *testing.T) {
	api := &fakeAPI{config: map[string]string{"connector.class": "X", "name": "a/b c", "tasks.max": "2",
		"secret.key": "hunter2", "producer.override.acks": "all"}}
	h, err := New(Config{API: api})
	if err != nil {
		t.Fatal(err)
	}
	editURL := "/ui/connectors/" + url.PathEscape("a/b c") + "/edit"

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, editURL, nil))
	if rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), "hunter2") {
		t.Fatalf("GET edit: %d, password in page: %v", rec.Code, strings.Contains(rec.Body.String(), "hunter2"))
	}

	form := url.Values{"k": {"tasks.max", "secret.key"}, "v": {"3", ""}, "extra": {"x.new=1"}}
	req := httptest.NewRequest(http.MethodPost, editURL, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("POST edit: %d %s", rec.Code, rec.Body.String())
	}
	want := map[string]string{"connector.class": "X", "name": "a/b c", "tasks.max": "3", "secret.key": "hunter2",
		"producer.override.acks": "all", "x.new": "1"}
	if len(api.put) != len(want) {
		t.Fatalf("PUT config %v, want %v", api.put, want)
	}
	for k, v := range want {
		if api.put[k] != v {
			t.Errorf("PUT config[%s] = %q, want %q", k, api.put[k], v)
		}
	}
	if loc := rec.Header().Get("Location"); !strings.HasPrefix(loc, "/ui/connectors/a%2Fb%20c?") {
		t.Errorf("redirect to %q: the name must stay one escaped path segment", loc)
	}
}

func TestParseExtra(t *testing.T) {
	got, err := parseExtra("a=1\n\n# comment\n b = x=y\r\n")
	if err != nil || len(got) != 2 || got["a"] != "1" || got["b"] != " x=y" {
		t.Fatalf("parseExtra = %v, %v", got, err)
	}
	if _, err := parseExtra("no equals sign"); err == nil {
		t.Fatal("a line without = must be refused, not dropped")
	}
}

// TestCrossOriginFormPostRefused: a page elsewhere cannot make the browser delete a connector through the
// dashboard's forms; the same post from the dashboard's own origin goes through.
func TestCrossOriginFormPostRefused(t *testing.T) {
	api := &fakeAPI{config: map[string]string{"connector.class": "X", "name": "a/b c"}}
	h, err := New(Config{API: api})
	if err != nil {
		t.Fatal(err)
	}
	post := func(site string) int {
		form := url.Values{"action": {"delete"}, "confirm": {"a/b c"}}
		req := httptest.NewRequest(http.MethodPost, "/ui/connectors/"+url.PathEscape("a/b c")+"/action", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", site)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	if code := post("cross-site"); code != http.StatusForbidden {
		t.Fatalf("cross-site post: %d, want 403", code)
	}
	// The fake API has no DELETE route, so a post that passes the check reaches it and shows its 404 message.
	if code := post("same-origin"); code == http.StatusForbidden {
		t.Fatalf("same-origin post refused")
	}
}

// TestVerdictsAnyKind: a verdict of a kind the dashboard has never heard of is read by severity and message,
// and one that names a partition carries it, so its row can be marked.
func TestVerdictsAnyKind(t *testing.T) {
	var vs []verdict
	err := json.Unmarshal([]byte(`[{"kind":"capacity_advice_v9","severity":"warning","message":"raise linger.ms","rtt_ms":45},
		{"kind":"straggler","severity":"info","message":"partition orders-3 carries 61%","topic":"orders","partition":3,"share":0.61}]`), &vs)
	if err != nil {
		t.Fatal(err)
	}
	if vs[0].Severity != "warning" || vs[0].Message != "raise linger.ms" || vs[0].Partition != nil {
		t.Errorf("unknown kind read as %+v", vs[0])
	}
	if vs[1].Topic != "orders" || vs[1].Partition == nil || *vs[1].Partition != 3 {
		t.Errorf("straggler read as %+v", vs[1])
	}
}

// TestReadOnlyPagesHaveNoWriteControls: for a caller CanWrite refuses, the edit page shows the configuration
// without its save button and the layout no "New connector" link; for one it allows, both are there.
func TestReadOnlyPagesHaveNoWriteControls(t *testing.T) {
	api := &fakeAPI{config: map[string]string{"connector.class": "X", "name": "a/b c", "tasks.max": "2"}}
	editURL := "/ui/connectors/" + url.PathEscape("a/b c") + "/edit"
	for _, canWrite := range []bool{false, true} {
		h, err := New(Config{API: api, CanWrite: func(*http.Request) bool { return canWrite }})
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, editURL, nil))
		body := rec.Body.String()
		if rec.Code != http.StatusOK || !strings.Contains(body, `value="2"`) {
			t.Fatalf("can write %v: GET edit: %d, the configuration shown: %v", canWrite, rec.Code, strings.Contains(body, `value="2"`))
		}
		for _, control := range []string{`id="save"`, `href="/ui/new"`} {
			if strings.Contains(body, control) != canWrite {
				t.Errorf("can write %v: page has %s: %v", canWrite, control, !canWrite)
			}
		}
		if strings.Contains(body, `id="read-only"`) == canWrite {
			t.Errorf("can write %v: the read-only notice shown: %v", canWrite, !canWrite)
		}
	}
}

// TestLagAge: the lag in seconds when the API knows it; for a partition behind whose next record is not read
// yet, a bound from the last replicated record (rounded up); "–" when nothing is known.
func TestLagAge(t *testing.T) {
	i64 := func(v int64) *int64 { return &v }
	f64 := func(v float64) *float64 { return &v }
	str := func(v string) *string { return &v }
	cases := []struct {
		name string
		row  partitionRow
		want string
	}{
		{"known", partitionRow{LagRecords: i64(3), LagSeconds: f64(1.25)}, "1.2 s"},
		{"caught up", partitionRow{LagRecords: i64(0), LagSeconds: f64(0)}, "0.0 s"},
		{"next record not read yet", partitionRow{LagRecords: i64(1), LastReplicatedAt: str("2026-12-06T10:00:00.040Z"),
			UpdatedAt: "2026-12-06T10:00:00.100Z"}, "≤ 0.1 s"},
		{"a bound of seconds", partitionRow{LagRecords: i64(1), LastReplicatedAt: str("2026-12-06T10:00:00.000Z"),
			UpdatedAt: "2026-12-06T10:00:02.310Z"}, "≤ 2.4 s"},
		{"nothing replicated yet", partitionRow{LagRecords: i64(5), UpdatedAt: "2026-12-06T10:00:00.100Z"}, "–"},
		{"end unknown", partitionRow{UpdatedAt: "2026-12-06T10:00:00.100Z"}, "–"},
	}
	for _, c := range cases {
		if got := c.row.LagAge(); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestConnectorPageNamesItsFile: a connector declared from an mm2.properties says so on its page, and what it
// took over from Java MM2.
func TestConnectorPageNamesItsFile(t *testing.T) {
	const took = "took over from Java MM2: offsets of 3 partitions imported from mm2-offsets.A.internal at 2026-12-06T14:02:45Z"
	api := &fakeAPI{config: map[string]string{"connector.class": "X", "name": "a/b c"}, declaredBy: "/etc/kmirror/mm2.properties",
		takenOver: &takenOver{Message: took}}
	h, err := New(Config{API: api})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/ui/connectors/"+url.PathEscape("a/b c"), nil))
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `id="declared-by"`) ||
		!strings.Contains(rec.Body.String(), "from /etc/kmirror/mm2.properties") {
		t.Fatalf("GET connector page: %d, declared-by shown: %v\n%s", rec.Code, strings.Contains(rec.Body.String(), "declared-by"), rec.Body.String())
	}
	if !strings.Contains(rec.Body.String(), `id="taken-over"`) || !strings.Contains(rec.Body.String(), took) {
		t.Fatalf("GET connector page: the takeover is not shown\n%s", rec.Body.String())
	}
}

// TestConnectorPageShowsMoves: the moves by load the partitions endpoint lists are shown with their reason.
func TestConnectorPageShowsMoves(t *testing.T) {
	pages, err := parsePages(false)
	if err != nil {
		t.Fatal(err)
	}
	d := liveData{Name: "c", Source: true, Partitions: &partitions{Moves: []partMove{{At: "2026-12-01T12:00:00Z", FromTask: 0, ToTask: 3,
		Out: []string{"hot-1"}, In: []string{"cold-0"}, Reason: "task 0 carried 4.0x the mean load"}}}}
	var b strings.Builder
	if err := pages["connector"].ExecuteTemplate(&b, "live", d); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`id="moves"`, "task 0 → task 3", "<code>hot-1</code>", "<code>cold-0</code>", "carried 4.0x the mean load"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// TestAPIForbiddenShownAs403: when the API refuses a write with 403 (a read-only user pressing a button), the
// page shows its message with 403, not 400. Every page says it may not be framed.
func TestAPIForbiddenShownAs403(t *testing.T) {
	api := &fakeAPI{config: map[string]string{"connector.class": "X", "name": "a/b c", "tasks.max": "2"}}
	const refusal = "User bob has the read-only role, which may only read (GET)"
	readOnly := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			api.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"error_code":403,"message":"` + refusal + `"}`))
	})
	h, err := New(Config{API: readOnly})
	if err != nil {
		t.Fatal(err)
	}
	editURL := "/ui/connectors/" + url.PathEscape("a/b c") + "/edit"
	req := httptest.NewRequest(http.MethodPost, editURL, strings.NewReader(url.Values{"k": {"tasks.max"}, "v": {"3"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), refusal) {
		t.Fatalf("POST edit as a read-only user: %d, refusal shown: %v", rec.Code, strings.Contains(rec.Body.String(), refusal))
	}
	if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") ||
		rec.Header().Get("X-Frame-Options") != "DENY" || rec.Header().Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("headers: %v", rec.Header())
	}
}

// TestOperationFragments: the fragment the failover and failback pages show and poll renders the latest operation
// under the ids of its kind (or says there is none), from the page's data or from its operationData alone, and a
// failback names the failover it undoes.
func TestOperationFragments(t *testing.T) {
	pages, err := parsePages(true)
	if err != nil {
		t.Fatal(err)
	}
	of, phase := "a2b", "draining"
	cases := []struct {
		page string
		data any
		want []string
	}{
		{"failover", failoverData{operationData: operationData{Name: "c", Kind: "failover"}}, []string{`id="no-failover"`, "never failed over"}},
		{"failback", failbackData{operationData: operationData{Name: "c", Kind: "failback"}}, []string{`id="no-failback"`, "never failed back"}},
		{"failover", operationData{Kind: "failover", Op: &failoverOp{State: "running", Phase: &phase}},
			[]string{`id="failover-op"`, "Latest failover</h2>", `id="failover-state-value">running<`, "(draining)"}},
		{"failback", operationData{Kind: "failback", Op: &failoverOp{State: "failed", FailoverOf: &of, Error: &phase}},
			[]string{`id="failback-op"`, `Latest failback of <a href="/ui/connectors/a2b/failover">a2b</a>'s failover`,
				`id="failback-error">draining<`}},
	}
	for _, c := range cases {
		var b strings.Builder
		if err := pages[c.page].ExecuteTemplate(&b, "opState", c.data); err != nil {
			t.Fatal(err)
		}
		for _, want := range c.want {
			if !strings.Contains(b.String(), want) {
				t.Errorf("%s: the fragment lacks %q:\n%s", c.page, want, b.String())
			}
		}
	}
}

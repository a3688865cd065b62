package api_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/api"
	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/store"
	"github.com/kmirror/kmirror/store/storetest"
)

func checkpointConfig() map[string]string {
	return withClass(sourceConfig(), "org.apache.kafka.connect.mirror.MirrorCheckpointConnector")
}

// claimCheckpointTask gives the connector one task, owned by the test worker, and returns the claim of that
// task's run: what a checkpoint task writes its translations under.
func (f *fixture) claimCheckpointTask(name string) store.Claim {
	f.t.Helper()
	f.setTasks(name, 1)
	unit := store.Unit{Connector: name, Task: 0}
	epoch, ok := f.assignAll()[unit]
	require.True(f.t, ok, "task 0 of %s is claimed", name)
	return store.Claim{Unit: unit, Epoch: epoch}
}

// millisAgo is an instant d before now, at the millisecond precision the API prints.
func millisAgo(d time.Duration) time.Time {
	return time.Now().Add(-d).Truncate(time.Millisecond).UTC()
}

// requireAge checks an age_ms member (d ago, give or take the test's own run time) and removes it, so that the
// rest of the object can be compared exactly.
func requireAge(t *testing.T, m map[string]any, d time.Duration) {
	t.Helper()
	age, ok := m["age_ms"].(float64)
	require.True(t, ok, "age_ms is a number: %v", m)
	require.GreaterOrEqual(t, age, float64(d.Milliseconds()))
	require.Less(t, age, float64((d + time.Minute).Milliseconds()))
	delete(m, "age_ms")
}

func TestConsumerGroupsNotFound(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	requireError(t, f.do("GET", "/connectors/nope/groups", ""), http.StatusNotFound, "Connector nope not found")
	requireError(t, f.do("GET", "/connectors/nope/groups/g/offsets", ""), http.StatusNotFound, "Connector nope not found")
	requireError(t, f.do("GET", "/connectors/a%2Fb/groups", ""), http.StatusNotFound, "Connector a/b not found")

	f.create("mm2-source", sourceConfig())
	f.create("mm2-heartbeat", withClass(sourceConfig(), "MirrorHeartbeat"))
	for name, class := range map[string]string{"mm2-source": sourceClass, "mm2-heartbeat": "MirrorHeartbeat"} {
		msg := "Connector " + name + " is not a MirrorCheckpointConnector (connector.class is " + class +
			"); only a MirrorCheckpointConnector translates consumer groups"
		requireError(t, f.do("GET", "/connectors/"+name+"/groups", ""), http.StatusNotFound, msg)
		requireError(t, f.do("GET", "/connectors/"+name+"/groups/g/offsets", ""), http.StatusNotFound, msg)
	}

	f.create("ckpt", checkpointConfig())
	requireJSON(t, f.do("GET", "/connectors/ckpt/groups", ""), http.StatusOK, `{"name":"ckpt","groups":[]}`)
	requireError(t, f.do("GET", "/connectors/ckpt/groups/orders-app/offsets", ""), http.StatusNotFound,
		"Consumer group orders-app is not translated by connector ckpt")
	requireError(t, f.do("GET", "/connectors/ckpt/groups/team%2Fa%20b/offsets", ""), http.StatusNotFound,
		"Consumer group team/a b is not translated by connector ckpt")

	// Any name Connect accepts for the class is a checkpoint connector.
	f.create("by-alias", withClass(sourceConfig(), "MirrorCheckpoint"))
	requireJSON(t, f.do("GET", "/connectors/by-alias/groups", ""), http.StatusOK, `{"name":"by-alias","groups":[]}`)

	r := f.do("POST", "/connectors/ckpt/groups", "")
	requireError(t, r, http.StatusMethodNotAllowed, "HTTP 405 Method Not Allowed")
	require.Equal(t, []string{"GET", "HEAD"}, r.header.Values("Allow"))
	requireError(t, f.do("GET", "/connectors/ckpt/groups/g", ""), http.StatusNotFound, "HTTP 404 Not Found")
}

func TestConsumerGroupsAndOffsets(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	f.create("ckpt", checkpointConfig())
	claim := f.claimCheckpointTask("ckpt")

	readOld, readNew, replicated := millisAgo(90*time.Second), millisAgo(5*time.Second), millisAgo(7*time.Second)
	at := func(o int64) *int64 { return &o }
	const team = "team/a b%+"
	require.NoError(t, f.store.PutGroupOffsets(ctx, claim, []string{"orders-app", team}, []kmtype.GroupOffset{
		{Group: "orders-app", Topic: "orders", Partition: 0, UpstreamOffset: 120, DownstreamTopic: "A.orders", DownstreamOffset: at(118),
			Exact: true, Basis: kmtype.BasisOffsetMap, Metadata: `{"app":"a<b>&c"}`, ReadAt: readNew, ReplicatedAt: &replicated, Emitted: true},
		{Group: "orders-app", Topic: "orders", Partition: 1, UpstreamOffset: 0, DownstreamTopic: "A.orders", DownstreamOffset: at(0),
			Exact: true, Basis: kmtype.BasisOffsetMap, Metadata: "abc\x00\xff", ReadAt: readOld, ReplicatedAt: &replicated, Emitted: false},
		{Group: team, Topic: "audit", Partition: 0, UpstreamOffset: 50, DownstreamTopic: "A.audit", DownstreamOffset: at(41),
			Exact: false, Basis: kmtype.BasisOffsetSyncs, ReadAt: readNew, Emitted: true},
		{Group: team, Topic: "audit", Partition: 3, UpstreamOffset: 7, DownstreamTopic: "A.audit",
			Exact: false, Basis: kmtype.BasisNone, ReadAt: readNew},
	}))
	ts := func(t time.Time) string { return t.Format("2006-01-02T15:04:05.000Z") }

	body := decode[map[string]any](t, f.do("GET", "/connectors/ckpt/groups", ""))
	groups := body["groups"].([]any)
	require.Len(t, groups, 2)
	requireAge(t, groups[0].(map[string]any), 90*time.Second) // the oldest read of the group's partitions
	requireAge(t, groups[1].(map[string]any), 5*time.Second)
	require.JSONEq(t, `{"name":"ckpt","groups":[`+
		`{"group":"orders-app","partitions":2,"inexact_partitions":0,"exact":true,"read_at":"`+ts(readOld)+`"},`+
		`{"group":"team/a b%+","partitions":2,"inexact_partitions":2,"exact":false,"read_at":"`+ts(readNew)+`"}]}`,
		jsonText(t, body))

	r := f.do("GET", "/connectors/ckpt/groups/orders-app/offsets", "")
	require.Equal(t, http.StatusOK, r.status, r.body)
	require.Contains(t, r.body, `"metadata":"{\"app\":\"a<b>&c\"}"`, "no HTML escaping, as everywhere in the API")
	body = decode[map[string]any](t, r)
	offsets := body["offsets"].([]any)
	require.Len(t, offsets, 2)
	requireAge(t, offsets[0].(map[string]any), 5*time.Second)
	requireAge(t, offsets[1].(map[string]any), 90*time.Second)
	require.JSONEq(t, `{"name":"ckpt","group":"orders-app","offsets":[`+
		`{"source_topic":"orders","partition":0,"source_offset":120,"target_topic":"A.orders","target_offset":118,"exact":true,`+
		`"basis":"offset_map","metadata":"{\"app\":\"a<b>&c\"}","metadata_base64":null,"read_at":"`+ts(readNew)+`","replicated_at":"`+ts(replicated)+`","checkpoint_emitted":true},`+
		`{"source_topic":"orders","partition":1,"source_offset":0,"target_topic":"A.orders","target_offset":0,"exact":true,`+
		// Metadata that is not UTF-8: JSON text shows what it can, base64 the exact bytes.
		`"basis":"offset_map","metadata":"abc\u0000\ufffd","metadata_base64":"YWJjAP8=","read_at":"`+ts(readOld)+`","replicated_at":"`+ts(replicated)+`","checkpoint_emitted":false}]}`,
		jsonText(t, body))

	// A group name routes as one escaped path segment, whatever it holds; a trailing slash is ignored.
	for _, path := range []string{url.PathEscape(team), "team%2Fa%20b%25%2B", "team%2Fa%20b%25+"} {
		r = f.do("GET", "/connectors/ckpt/groups/"+path+"/offsets/", "")
		require.Equal(t, http.StatusOK, r.status, "%s: %s", path, r.body)
		body = decode[map[string]any](t, r)
		require.Equal(t, team, body["group"], path)
		offsets = body["offsets"].([]any)
		require.Len(t, offsets, 2)
		for _, o := range offsets {
			requireAge(t, o.(map[string]any), 5*time.Second)
		}
		require.JSONEq(t, `{"name":"ckpt","group":"team/a b%+","offsets":[`+
			`{"source_topic":"audit","partition":0,"source_offset":50,"target_topic":"A.audit","target_offset":41,"exact":false,`+
			`"basis":"offset_syncs","metadata":"","metadata_base64":null,"read_at":"`+ts(readNew)+`","replicated_at":null,"checkpoint_emitted":true},`+
			`{"source_topic":"audit","partition":3,"source_offset":7,"target_topic":"A.audit","target_offset":null,"exact":false,`+
			`"basis":"none","metadata":"","metadata_base64":null,"read_at":"`+ts(readNew)+`","replicated_at":null,"checkpoint_emitted":false}]}`,
			jsonText(t, body))
	}
	// The unescaped '/' splits the name and matches no route.
	requireError(t, f.do("GET", "/connectors/ckpt/groups/team/a%20b%25+/offsets", ""), http.StatusNotFound, "HTTP 404 Not Found")
}

// TestConsumerGroupNamesRoute covers group ids that look like path syntax: Kafka puts no limit on the
// characters of a group id.
func TestConsumerGroupNamesRoute(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	f.create("c/1", checkpointConfig())
	claim := f.claimCheckpointTask("c/1")
	names := map[string]string{
		"..":         "%2E%2E",
		".":          "%2E",
		"a/b":        "a%2Fb",
		"50%off":     "50%25off",
		"x y?z#&=":   "x%20y%3Fz%23&=",
		"þ.1><":      "%C3%BE.1%3E%3C",
		"%2F":        "%252F",
		"trailing/":  "trailing%2F",
		"groups":     "groups",
		"offsets":    "offsets",
		"with\"quot": "with%22quot",
	}
	var offsets []kmtype.GroupOffset
	for _, name := range slices.Sorted(maps.Keys(names)) {
		offsets = append(offsets, kmtype.GroupOffset{Group: name, Topic: "t", UpstreamOffset: 1, DownstreamTopic: "A.t",
			Exact: false, Basis: kmtype.BasisNone, ReadAt: millisAgo(0)})
	}
	require.NoError(t, f.store.PutGroupOffsets(ctx, claim, slices.Collect(maps.Keys(names)), offsets))
	for name, escaped := range names {
		r := f.do("GET", "/connectors/c%2F1/groups/"+escaped+"/offsets", "")
		require.Equal(t, http.StatusOK, r.status, "%q: %s", name, r.body)
		body := decode[map[string]any](t, r)
		require.Equal(t, "c/1", body["name"])
		require.Equal(t, name, body["group"])
	}
	body := decode[struct {
		Groups []struct {
			Group string `json:"group"`
		} `json:"groups"`
	}](t, f.do("GET", "/connectors/c%2F1/groups", ""))
	var listed []string
	for _, g := range body.Groups {
		listed = append(listed, g.Group)
	}
	require.ElementsMatch(t, slices.Collect(maps.Keys(names)), listed)
}

// TestConsumerGroupSchemas checks that the OpenAPI document's schemas of the group endpoints name exactly the
// members the endpoints return, all of them required.
func TestConsumerGroupSchemas(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	f.create("ckpt", checkpointConfig())
	claim := f.claimCheckpointTask("ckpt")
	now := millisAgo(0)
	require.NoError(t, f.store.PutGroupOffsets(ctx, claim, []string{"g"}, []kmtype.GroupOffset{{Group: "g", Topic: "t",
		DownstreamTopic: "A.t", Basis: kmtype.BasisNone, ReadAt: now, ReplicatedAt: &now}}))

	var doc struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Schemas map[string]struct {
				Properties map[string]json.RawMessage `json:"properties"`
				Required   []string                   `json:"required"`
			} `json:"schemas"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal([]byte(f.do("GET", "/openapi.json", "").body), &doc))
	require.Contains(t, doc.Paths, "/connectors/{connector}/groups")
	require.Contains(t, doc.Paths, "/connectors/{connector}/groups/{group}/offsets")
	requireSchema := func(schema string, got map[string]any) {
		t.Helper()
		s, ok := doc.Components.Schemas[schema]
		require.True(t, ok, schema)
		members := slices.Sorted(maps.Keys(got))
		require.Equal(t, members, slices.Sorted(maps.Keys(s.Properties)), schema)
		require.Equal(t, members, slices.Sorted(slices.Values(s.Required)), schema)
	}
	groups := decode[map[string]any](t, f.do("GET", "/connectors/ckpt/groups", ""))
	requireSchema("ConsumerGroups", groups)
	requireSchema("ConsumerGroup", groups["groups"].([]any)[0].(map[string]any))
	offsets := decode[map[string]any](t, f.do("GET", "/connectors/ckpt/groups/g/offsets", ""))
	requireSchema("ConsumerGroupOffsets", offsets)
	requireSchema("ConsumerGroupOffset", offsets["offsets"].([]any)[0].(map[string]any))
}

// TestConsumerGroupsDatabaseOutage: with the database gone, both endpoints answer the sanitized 503.
func TestConsumerGroupsDatabaseOutage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	direct, err := url.Parse(storetest.NewURL(t))
	require.NoError(t, err)
	proxy := startProxy(t, direct.Host)
	viaProxy := *direct
	viaProxy.Host = proxy.addr
	st, err := store.Open(ctx, viaProxy.String(), slog.New(slog.DiscardHandler), store.OpenOptions{})
	require.NoError(t, err)
	t.Cleanup(st.Close)
	srv := httptest.NewServer(api.New(api.Config{Store: st}))
	t.Cleanup(srv.Close)
	f := &fixture{t: t, store: st, url: srv.URL}
	f.create("ckpt", checkpointConfig())

	proxy.stop()
	_, proxyPort, _ := net.SplitHostPort(proxy.addr)
	_, pgPort, _ := net.SplitHostPort(direct.Host)
	secrets := []string{"127.0.0.1", proxyPort, pgPort, direct.User.Username(), strings.TrimPrefix(direct.Path, "/")}
	for _, path := range []string{"/connectors/ckpt/groups", "/connectors/ckpt/groups/g/offsets"} {
		r := f.do("GET", path, "")
		requireError(t, r, http.StatusServiceUnavailable, unavailableMessage)
		require.Equal(t, "5", r.header.Get("Retry-After"), path)
		requireNoLeak(t, r, secrets...)
	}
}

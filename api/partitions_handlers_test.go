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
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/api"
	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/store"
	"github.com/kmirror/kmirror/store/storetest"
)

func sourceConfigWith(kv ...string) map[string]string {
	cfg := sourceConfig()
	for i := 0; i+1 < len(kv); i += 2 {
		cfg[kv[i]] = kv[i+1]
	}
	return cfg
}

// runSourceTasks plans the source connector's tasks as its instance would (one task per list of
// "topic-partition"s, in task.assigned.partitions), claims every unit for the test worker, reports the
// connector and its tasks RUNNING, and returns the claims of the tasks' runs: what a source task publishes its
// partition stats under.
func (f *fixture) runSourceTasks(name string, partitions ...[]string) []store.Claim {
	f.t.Helper()
	ctx := context.Background()
	epochs := f.assignAll()
	var cfgs []map[string]string
	for i, tps := range partitions {
		cfgs = append(cfgs, map[string]string{"task.class": "org.apache.kafka.connect.mirror.MirrorSourceTask",
			"task.index": strconv.Itoa(i), "task.assigned.partitions": strings.Join(tps, ",")})
	}
	conn := store.Unit{Connector: name, Task: store.ConnectorUnit}
	_, err := f.store.ReplaceTaskConfigs(ctx, store.Claim{Unit: conn, Epoch: epochs[conn]}, cfgs)
	require.NoError(f.t, err)
	epochs = f.assignAll() // a new session: the claims before it are void
	require.NoError(f.t, f.store.PutStatus(ctx, store.Status{Unit: conn, State: store.StateRunning, WorkerID: worker, Epoch: epochs[conn]}))
	var claims []store.Claim
	for i := range partitions {
		unit := store.Unit{Connector: name, Task: i}
		epoch, ok := epochs[unit]
		require.True(f.t, ok, "task %d of %s is claimed", i, name)
		require.NoError(f.t, f.store.PutStatus(ctx, store.Status{Unit: unit, State: store.StateRunning, WorkerID: worker, Epoch: epoch}))
		claims = append(claims, store.Claim{Unit: unit, Epoch: epoch})
	}
	return claims
}

func TestPartitionsNotFound(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	requireError(t, f.do("GET", "/connectors/nope/partitions", ""), http.StatusNotFound, "Connector nope not found")
	requireError(t, f.do("GET", "/connectors/a%2Fb/partitions", ""), http.StatusNotFound, "Connector a/b not found")

	f.create("ckpt", checkpointConfig())
	f.create("hb", withClass(sourceConfig(), "MirrorHeartbeat"))
	for name, class := range map[string]string{"ckpt": "org.apache.kafka.connect.mirror.MirrorCheckpointConnector", "hb": "MirrorHeartbeat"} {
		requireError(t, f.do("GET", "/connectors/"+name+"/partitions", ""), http.StatusNotFound, "Connector "+name+
			" is not a MirrorSourceConnector (connector.class is "+class+"); only a MirrorSourceConnector replicates partitions")
	}

	r := f.do("POST", "/connectors/ckpt/partitions", "")
	requireError(t, r, http.StatusMethodNotAllowed, "HTTP 405 Method Not Allowed")
	require.Equal(t, []string{"GET", "HEAD"}, r.header.Values("Allow"))
}

// TestPartitionsNoReports: a source connector whose tasks have not reported answers 200 with empty lists and a
// verdict saying so, by any name Connect accepts for the class.
func TestPartitionsNoReports(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.create("by-alias", withClass(sourceConfig(), "MirrorSource"))
	noTotals := `"totals":{"records_per_second":0,"bytes_per_second":0,"lag_records":null,"max_lag_seconds":null,"status":null}`
	requireJSON(t, f.do("GET", "/connectors/by-alias/partitions", ""), http.StatusOK, `{"name":"by-alias","tasks_max":1,"partitions":0,"tasks":0,`+
		noTotals+`,"by_partition":[],"by_task":[],"verdicts":[{"kind":"no_reports","severity":"info","message":"no task has reported yet: `+
		`the connector has no tasks (its source partitions are not listed yet, none passes its topic filters, or it is stopped)","tasks":0}],"moves":[]}`)

	f.create("mm2/wide", sourceConfigWith("tasks.max", "20"))
	f.runSourceTasks("mm2/wide", []string{"orders-0"}, []string{"orders-1"}, []string{"orders-2"})
	requireJSON(t, f.do("GET", "/connectors/mm2%2Fwide/partitions/", ""), http.StatusOK, `{"name":"mm2/wide","tasks_max":20,"partitions":3,"tasks":3,`+
		noTotals+`,"by_partition":[],"by_task":[`+
		`{"task":0,"worker_id":"`+worker+`","state":"RUNNING","partitions":1,"records_per_second":0,"bytes_per_second":0,"pipeline":null,"last_move":null},`+
		`{"task":1,"worker_id":"`+worker+`","state":"RUNNING","partitions":1,"records_per_second":0,"bytes_per_second":0,"pipeline":null,"last_move":null},`+
		`{"task":2,"worker_id":"`+worker+`","state":"RUNNING","partitions":1,"records_per_second":0,"bytes_per_second":0,"pipeline":null,"last_move":null}],"verdicts":[`+
		`{"kind":"no_reports","severity":"info","message":"no task has reported yet: 3 of 3 tasks are RUNNING","partitions":3,"tasks":3},`+
		`{"kind":"unusable_task_slots","severity":"info","message":"tasks.max 20, 3 partitions: 3 tasks run, 17 slots cannot be used",`+
		`"tasks_max":20,"partitions":3,"tasks":3,"unused":17}],"moves":[]}`)
}

func TestPartitions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	f.create("mm2", sourceConfigWith("tasks.max", "2"))
	claims := f.runSourceTasks("mm2", []string{"eu-orders-0", "eu-orders-2"}, []string{"eu-orders-1", "eu-orders-3"})
	_, err := f.store.RegisterWorker(ctx, "10.0.0.6:8083", "http://10.0.0.6:8083") // a second worker, running none of the tasks
	require.NoError(t, err)

	at := func(o int64) *int64 { return &o }
	secs := func(s float64) *float64 { return &s }
	replicated := millisAgo(3 * time.Second)
	stat := func(p int32, repl int64, end *int64, lag *int64, lagSecs *float64, rps float64, status string) kmtype.PartitionStat {
		return kmtype.PartitionStat{Topic: "eu-orders", Partition: p, RemoteTopic: "A.eu-orders", ReplicatedOffset: repl, EndOffset: end,
			LagRecords: lag, LagSeconds: lagSecs, RecordsPerSecond: rps, BytesPerSecond: rps * 100, LastReplicatedAt: &replicated, Status: status}
	}
	task0 := []kmtype.PartitionStat{stat(0, 1000, at(1000), at(0), secs(0), 100, "ok"), stat(2, 500, nil, nil, nil, 100, "")}
	task0[1].LastReplicatedAt = nil // nothing fetched yet
	require.NoError(t, f.store.PutPartitionStats(ctx, claims[0], worker, task0))
	require.NoError(t, f.store.PutPartitionStats(ctx, claims[1], worker, []kmtype.PartitionStat{
		stat(1, 200, at(5200), at(5000), secs(12.5), 100, "warn"),
		stat(3, 9000, at(9000), at(0), secs(0), 700, "ok"),
	}))

	r := f.do("GET", "/connectors/mm2/partitions", "")
	require.Equal(t, http.StatusOK, r.status, r.body)
	body := decode[map[string]any](t, r)
	for _, p := range body["by_partition"].([]any) {
		p := p.(map[string]any)
		updated, err := time.Parse(time.RFC3339, p["updated_at"].(string))
		require.NoError(t, err)
		require.WithinDuration(t, time.Now(), updated, time.Minute)
		require.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`, p["updated_at"])
		delete(p, "updated_at")
	}
	ts := replicated.Format("2006-01-02T15:04:05.000Z")
	partition := func(p, task int, repl, end, lag, lagSecs, rps, share, status, last string) string {
		return `{"topic":"eu-orders","partition":` + strconv.Itoa(p) + `,"remote_topic":"A.eu-orders","task":` + strconv.Itoa(task) +
			`,"worker_id":"` + worker + `","replicated_offset":` + repl + `,"end_offset":` + end + `,"lag_records":` + lag +
			`,"lag_seconds":` + lagSecs + `,"records_per_second":` + rps + `,"bytes_per_second":` + rps + `00,"share":` + share +
			`,"status":"` + status + `","last_replicated_at":` + last + `,"stale":false}`
	}
	require.JSONEq(t, `{"name":"mm2","tasks_max":2,"partitions":4,"tasks":2,`+
		`"totals":{"records_per_second":1000,"bytes_per_second":100000,"lag_records":5000,"max_lag_seconds":12.5,"status":"warn"},`+
		`"by_partition":[`+
		partition(0, 0, "1000", "1000", "0", "0", "100", "0.1", "ok", `"`+ts+`"`)+`,`+
		partition(1, 1, "200", "5200", "5000", "12.5", "100", "0.1", "warn", `"`+ts+`"`)+`,`+
		partition(2, 0, "500", "null", "null", "null", "100", "0.1", "ok", "null")+`,`+
		partition(3, 1, "9000", "9000", "0", "0", "700", "0.7", "ok", `"`+ts+`"`)+`],`+
		`"by_task":[`+
		`{"task":0,"worker_id":"`+worker+`","state":"RUNNING","partitions":2,"records_per_second":200,"bytes_per_second":20000,"pipeline":null,"last_move":null},`+
		`{"task":1,"worker_id":"`+worker+`","state":"RUNNING","partitions":2,"records_per_second":800,"bytes_per_second":80000,"pipeline":null,"last_move":null}],`+
		`"verdicts":[`+
		`{"kind":"straggler","severity":"info","message":"partition eu-orders-3 carries 70% of the connector's traffic: a straggler; `+
		`more tasks will not help, more source partitions will","topic":"eu-orders","partition":3,"share":0.7,"records_per_second":700},`+
		`{"kind":"tasks_max_bound","severity":"warning","message":"tasks.max 2 for 4 partitions and 1 task has lag: raise tasks.max up to 4",`+
		`"tasks_max":2,"partitions":4,"task_ids":[1],"suggested_tasks_max":4},`+
		`{"kind":"workers_bound","severity":"warning","message":"2 tasks run on 1 of 2 workers and 1 task has lag: spread over more workers `+
		`they would get more CPU and network; the leader spreads each connector's tasks evenly, so look in GET /workers for workers that `+
		`are draining or late with their heartbeat","tasks":2,"workers":1,"live_workers":2,"task_ids":[1]}],"moves":[]}`,
		jsonText(t, body))

	// The next report of a task replaces its partitions' figures; once every partition is caught up, the
	// verdict says so.
	caughtUp := func(p int32, off int64, rps float64) kmtype.PartitionStat {
		return stat(p, off, at(off), at(0), secs(0), rps, "ok")
	}
	require.NoError(t, f.store.PutPartitionStats(ctx, claims[0], worker, []kmtype.PartitionStat{caughtUp(0, 1100, 0), caughtUp(2, 600, 0)}))
	require.NoError(t, f.store.PutPartitionStats(ctx, claims[1], worker, []kmtype.PartitionStat{caughtUp(1, 5200, 0), caughtUp(3, 9100, 0)}))
	// A task's pipeline figures show in its entry, stamped by the database.
	require.NoError(t, f.store.PutTaskStat(ctx, claims[1], worker, kmtype.PipelineStat{IntervalSeconds: 2, WaitSourceFraction: 0.9,
		BusyFraction: 0.1, BatchSizeBytes: 1000000, LingerMs: 5, CompressionType: "none", MaxInFlight: 5, WorkerCPUs: 2,
		Producer: &kmtype.ClientFigures{BatchAvgBytes: 2048, Batches: 10, RTTAvgMs: 1.5}}))
	got := decode[struct {
		Totals   map[string]any   `json:"totals"`
		ByTask   []map[string]any `json:"by_task"`
		Verdicts []map[string]any `json:"verdicts"`
	}](t, f.do("GET", "/connectors/mm2/partitions", ""))
	require.Nil(t, got.ByTask[0]["pipeline"], "task 0 has measured nothing")
	pipeline := got.ByTask[1]["pipeline"].(map[string]any)
	require.Regexp(t, `^\d{4}-\d\d-\d\dT`, pipeline["updated_at"])
	delete(pipeline, "updated_at")
	require.Equal(t, map[string]any{"interval_seconds": 2.0, "wait_source_fraction": 0.9, "wait_target_fraction": 0.0,
		"busy_fraction": 0.1, "batch_size_bytes": 1e6, "queue_max_bytes": 0.0, "linger_ms": 5.0, "compression_type": "none",
		"max_in_flight": 5.0, "fetch_max_bytes": 0.0, "max_partition_fetch_bytes": 0.0, "worker_cpu_cores": 0.0, "worker_cpus": 2.0,
		"producer": map[string]any{"batch_avg_bytes": 2048.0, "batches": 10.0, "rtt_avg_ms": 1.5, "throttle_avg_ms": 0.0,
			"in_flight_requests": 0.0, "in_flight_max": 0.0},
		"stale": false}, pipeline)
	require.Equal(t, map[string]any{"records_per_second": 0.0, "bytes_per_second": 0.0, "lag_records": 0.0, "max_lag_seconds": 0.0, "status": "ok"}, got.Totals)
	require.Equal(t, []map[string]any{{"kind": "caught_up", "severity": "ok", "partitions": 4.0, "records_per_second": 0.0,
		"message": "caught up, no traffic: every partition's lag is 0 and no records are arriving"}}, got.Verdicts)
}

// TestPartitionSchemas checks that the OpenAPI document's schemas of the partitions endpoint name exactly the
// members it returns, all of them required, and every member a verdict can carry.
func TestPartitionSchemas(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	f.create("mm2", sourceConfigWith("tasks.max", "1"))
	claims := f.runSourceTasks("mm2", []string{"t-0", "t-1"})
	require.NoError(t, f.store.PutPartitionStats(ctx, claims[0], worker, []kmtype.PartitionStat{
		{Topic: "t", Partition: 0, RemoteTopic: "A.t", RecordsPerSecond: 1000},
		{Topic: "t", Partition: 1, RemoteTopic: "A.t", LagRecords: new(int64), Status: "warn"},
	}))
	figures := &kmtype.ClientFigures{BatchAvgBytes: 1, BatchAvgRecords: 1, Batches: 1}
	require.NoError(t, f.store.PutTaskStat(ctx, claims[0], worker, kmtype.PipelineStat{Producer: figures, Consumer: figures}))

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
	require.Contains(t, doc.Paths, "/connectors/{connector}/partitions")
	requireSchema := func(schema string, got map[string]any) {
		t.Helper()
		s, ok := doc.Components.Schemas[schema]
		require.True(t, ok, schema)
		members := slices.Sorted(maps.Keys(got))
		require.Equal(t, members, slices.Sorted(maps.Keys(s.Properties)), schema)
		require.Equal(t, members, slices.Sorted(slices.Values(s.Required)), schema)
	}
	body := decode[map[string]any](t, f.do("GET", "/connectors/mm2/partitions", ""))
	requireSchema("ConnectorPartitions", body)
	requireSchema("PartitionTotals", body["totals"].(map[string]any))
	requireSchema("PartitionStat", body["by_partition"].([]any)[0].(map[string]any))
	requireSchema("TaskPartitions", body["by_task"].([]any)[0].(map[string]any))
	// The pipeline's optional members (producer, consumer, and the figures librdkafka had no data for) may be
	// absent; everything present is documented, everything required is present.
	for schema, got := range map[string]map[string]any{
		"TaskPipeline":  body["by_task"].([]any)[0].(map[string]any)["pipeline"].(map[string]any),
		"ClientFigures": body["by_task"].([]any)[0].(map[string]any)["pipeline"].(map[string]any)["producer"].(map[string]any),
	} {
		s := doc.Components.Schemas[schema]
		require.Equal(t, slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(s.Properties)), schema)
		for _, r := range s.Required {
			require.Contains(t, got, r, schema)
		}
	}

	verdicts := doc.Components.Schemas["ParallelismVerdict"]
	require.Equal(t, []string{"kind", "severity", "message"}, verdicts.Required)
	require.NotEmpty(t, body["verdicts"])
	for _, v := range body["verdicts"].([]any) {
		for member := range v.(map[string]any) {
			require.Contains(t, verdicts.Properties, member)
		}
	}
}

// TestPartitionsDatabaseOutage: with the database gone, the endpoint answers the sanitized 503.
func TestPartitionsDatabaseOutage(t *testing.T) {
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
	f.create("mm2", sourceConfig())

	proxy.stop()
	_, proxyPort, _ := net.SplitHostPort(proxy.addr)
	_, pgPort, _ := net.SplitHostPort(direct.Host)
	r := f.do("GET", "/connectors/mm2/partitions", "")
	requireError(t, r, http.StatusServiceUnavailable, unavailableMessage)
	require.Equal(t, "5", r.header.Get("Retry-After"))
	requireNoLeak(t, r, "127.0.0.1", proxyPort, pgPort, direct.User.Username(), strings.TrimPrefix(direct.Path, "/"))
}

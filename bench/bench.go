package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kmirror/kmirror/connectors/kafka/kafkabench"
)

// bench is one invocation of the benchmark.
type bench struct {
	cfg        *config
	h          *harness
	out        string
	repo       string
	self       string
	kmirrorBin string
	cpipeBin   string // the C pipe, built at the start when it takes part
	// extraBrokers are brokers' PIDs beyond the harness's A and B (the wan scenario's W): their CPU counts as
	// the brokers'.
	extraBrokers []int
	linkPID      int  // the wan scenario's delay line, measured on its own
	warmedUp     bool // warmUp ran
	args         []string
	started      time.Time

	a, b     string // bootstrap servers of A and B
	adminA   *kafkabench.Admin
	adminB   *kafkabench.Admin
	payload  *kafkabench.Payload
	nonce    string
	seq      int
	results  []*result
	rows     []*result // the tables' rows, from summarize
	env      map[string]string
	failures []string
}

// sample is one observation of a running system.
type sample struct {
	T          float64 `json:"t"`          // seconds since t0
	Replicated int64   `json:"replicated"` // records on the target (per partition at most the source's)
	CPU        float64 `json:"cpu"`        // process CPU seconds since t0
	RSSKB      int64   `json:"rss_kb"`
	BrokerCPU  float64 `json:"broker_cpu"`         // brokers A+B, CPU seconds since t0
	DBCPU      float64 `json:"db_cpu"`             // PostgreSQL, CPU seconds since t0
	OtherCPU   float64 `json:"other_cpu"`          // everything else on the machine, CPU seconds since t0
	LinkCPU    float64 `json:"link_cpu,omitempty"` // the wan scenario's delay line, CPU seconds since t0
}

// result is one system's figures in one scenario variant.
type result struct {
	Scenario string `json:"scenario"`
	Variant  string `json:"variant"`
	System   string `json:"system"`
	Alias    string `json:"alias"`
	Rep      int    `json:"repetition"`     // 0, 1, ... for runs; -1 for a summary of Runs runs
	Runs     int    `json:"runs,omitempty"` // in a summary: how many runs it summarises
	TasksMax int    `json:"tasks_max"`
	// TasksRunning is how many tasks ran, as the system reports it (kmirror's status API, MM2's log, the
	// pipe's pipelines): min(tasks.max, partitions of the run's topics).
	TasksRunning int `json:"tasks_running"`
	Partitions   int `json:"partitions"`
	Linger       int `json:"linger_ms"`
	BatchSize    int `json:"batch_size"`

	Records int64  `json:"records"`
	Bytes   int64  `json:"bytes"`
	Done    bool   `json:"done"`
	Error   string `json:"error,omitempty"`

	StartupS    float64 `json:"startup_s"`     // t0 -> first record on the target
	TotalS      float64 `json:"total_s"`       // t0 -> every partition replicated
	RecordsPerS float64 `json:"records_per_s"` // steady state: between 10% and 90% of the records
	MBPerS      float64 `json:"mb_per_s"`      // the same in 10^6 value bytes per second
	CPUPerGB    float64 `json:"cpu_s_per_gb"`  // process CPU seconds per 10^9 value bytes, steady state
	CPUTotalS   float64 `json:"cpu_total_s"`   // process CPU seconds t0 -> done
	PeakRSSMB   float64 `json:"peak_rss_mb"`   // VmHWM at the end of the run, MiB
	BrokerCPUGB float64 `json:"broker_cpu_s_per_gb"`
	BrokerCores float64 `json:"broker_cores"`         // brokers' CPU seconds per second, steady state
	LinkCores   float64 `json:"link_cores,omitempty"` // the wan scenario's delay line, CPU seconds per second
	OtherCPUPct float64 `json:"other_cpu_pct"`        // CPU of every other process on the machine, % of all cores, steady state
	DBCPUGB     float64 `json:"db_cpu_s_per_gb,omitempty"`
	// CalibrationMs is the machine's speed just before the run (cpuCalibration).
	CalibrationMs float64         `json:"cpu_calibration_ms,omitempty"`
	WindowS       float64         `json:"steady_window_s"`
	RTTms         int             `json:"rtt_ms,omitempty"` // wan: the link's round-trip time
	Layout        string          `json:"layout,omitempty"` // wan: remote-source or remote-target
	Capped        bool            `json:"capped,omitempty"` // wan: stopped at -wan-max-run, measured over what it did
	LatSent       int64           `json:"latency_sent,omitempty"`
	LatReceived   int64           `json:"latency_received,omitempty"`
	Latencies     []time.Duration `json:"-"` // every measured latency of the run (after the warm-up)
	LatP50Ms      float64         `json:"latency_p50_ms,omitempty"`
	LatP99Ms      float64         `json:"latency_p99_ms,omitempty"`
	LatMaxMs      float64         `json:"latency_max_ms,omitempty"`
	BaselineRSS   float64         `json:"baseline_peak_rss_mb,omitempty"`
	RSSPer1000    float64         `json:"rss_mb_per_1000_partitions,omitempty"`
	NewFirstS     float64         `json:"new_topic_first_record_s,omitempty"`
	NewDoneS      float64         `json:"new_topic_replicated_s,omitempty"`
	NewDoneAll    []float64       `json:"new_topic_replicated_s_each,omitempty"`
	CPUProfile    string          `json:"cpu_profile,omitempty"`
	HeapProfile   string          `json:"heap_profile,omitempty"`
	StatsSummary  string          `json:"librdkafka_stats,omitempty"`
	// ThreadCPU is the process's CPU seconds from t0 to done by thread name (threads alive at done).
	ThreadCPU map[string]float64 `json:"thread_cpu_s,omitempty"`
	Samples   []sample           `json:"samples,omitempty"`
	// Checkpoints are the checkpoints scenario's figures (scenario_checkpoints.go).
	Checkpoints *checkpointFigures `json:"checkpoints,omitempty"`
	// Planner is what the hot and skew scenarios measure of kmirror's planner (planner.go).
	Planner *plannerFigures `json:"planner,omitempty"`
	// PG is the pgload scenario's counts (scenario_pgload.go).
	PG *pgFigures `json:"postgresql,omitempty"`
}

func (b *bench) systems() []system {
	var out []system
	for _, s := range b.cfg.systems {
		switch s {
		case "cpipe":
			out = append(out, cpipeSystem{})
		case "pipe":
			out = append(out, pipeSystem{})
		case "kmirror":
			out = append(out, kmirrorSys)
		case "candidate":
			out = append(out, candidateSys)
		case "mm2":
			out = append(out, mm2System{})
		}
	}
	return out
}

// runOrder is the order of the systems in repetition rep of an interleaved scenario. In a fixed order one system
// always ran right after the same other one, and on 2026-12-03 the system right after the C pipe did worse in
// every four-system run, whichever kmirror build it was (the C pipe's 5 GB being written back and its topic's
// logs deleted while the next system ran are the suspects). So each repetition uses a row of a balanced Latin
// square (Williams): with an even number of systems and as many repetitions, every system runs right after
// every other exactly once; with an odd number, odd repetitions run their row backwards, so that who goes
// before whom still changes.
func (b *bench) runOrder(rep int) []system {
	s := b.systems()
	out := make([]system, 0, len(s))
	for _, i := range williamsRow(len(s), rep) {
		out = append(out, s[i])
	}
	return out
}

// williamsRow returns row rep of a Williams design for n treatments: 0, 1, n-1, 2, n-2, … shifted by rep
// (mod n), reversed on odd rows when n is odd.
func williamsRow(n, rep int) []int {
	row := make([]int, n)
	for i := range n {
		k := 0
		switch {
		case i == 0:
		case i%2 == 1:
			k = (i + 1) / 2
		default:
			k = n - i/2
		}
		row[i] = (k + rep) % n
	}
	if n%2 == 1 && rep%2 == 1 {
		slices.Reverse(row)
	}
	return row
}

func (b *bench) prodSettings(linger, batch int) producerSettings {
	return producerSettings{Acks: b.cfg.acks, Idempotence: b.cfg.idempotence, InFlight: b.cfg.inflight,
		Linger: strconv.Itoa(linger), BatchSize: strconv.Itoa(batch), Compression: b.cfg.compression,
		Extra: keyValues(b.cfg.producer)}
}

// alias returns a fresh source alias for a run: system letter, scenario code, a per-invocation nonce and a
// counter, so that reruns against a kept harness never meet an earlier run's topics or MM2 offsets.
func (b *bench) alias(s system, code string) string {
	b.seq++
	return fmt.Sprintf("%s%s%s%02d", s.letter(), code, b.nonce, b.seq)
}

func (b *bench) run(ctx context.Context) error {
	b.a, b.b = b.h.env["KAFKA_A_BOOTSTRAP"], b.h.env["KAFKA_B_BOOTSTRAP"]
	b.nonce = strconv.FormatInt(time.Now().Unix()%(36*36), 36)
	var err error
	if b.adminA, err = kafkabench.NewAdmin(b.a); err != nil {
		return err
	}
	defer b.adminA.Close()
	if b.adminB, err = kafkabench.NewAdmin(b.b); err != nil {
		return err
	}
	defer b.adminB.Close()
	b.payload = kafkabench.NewPayload()
	b.env = environment(b)
	if b.cfg.kmirrorBin != "" {
		b.kmirrorBin = b.cfg.kmirrorBin
	} else if contains(b.cfg.systems, "kmirror") {
		b.kmirrorBin = filepath.Join(b.out, "kmirror")
		logf("building ./cmd/kmirror")
		cmd := exec.Command("go", "build", "-o", b.kmirrorBin, "./cmd/kmirror")
		cmd.Dir, cmd.Stdout, cmd.Stderr = b.repo, os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("build kmirror: %w", err)
		}
	}
	if contains(b.cfg.systems, "cpipe") {
		logf("building the C pipe (bench/cpipe/cpipe.c)")
		if b.cpipeBin, err = b.buildCPipe(); err != nil {
			return err
		}
	}
	logf("results, logs and configs go to %s", b.out)

	for _, sc := range b.cfg.scenarios {
		if ctx.Err() != nil {
			break
		}
		if err := scenarios[sc](b, ctx); err != nil {
			return fmt.Errorf("scenario %s: %w", sc, err)
		}
	}
	return ctx.Err()
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// ---------------------------------------------------------------------------------------------------------
// Source data

func partitionsOf(topics map[string]int) []kafkabench.TP {
	var out []kafkabench.TP
	names := make([]string, 0, len(topics))
	for t := range topics {
		names = append(names, t)
	}
	sort.Strings(names)
	for _, t := range names {
		for p := range topics[t] {
			out = append(out, kafkabench.TP{Topic: t, Partition: int32(p)})
		}
	}
	return out
}

func sum(m map[kafkabench.TP]int64) int64 {
	var s int64
	for _, v := range m {
		s += v
	}
	return s
}

// ensureLoaded makes sure topics exist on A holding exactly records records; it reuses what an earlier run
// loaded, and otherwise (re)creates and loads them.
func (b *bench) ensureLoaded(ctx context.Context, topics map[string]int, records int64) error {
	existing, err := b.adminA.Topics()
	if err != nil {
		return err
	}
	ok := true
	for t, n := range topics {
		if existing[t] != n {
			ok = false
		}
	}
	if ok {
		ends, err := b.adminA.EndOffsets(ctx, topics)
		if err == nil && sum(ends) == records {
			logf("source data: reusing %d topic(s) with %d records", len(topics), records)
			return nil
		}
	}
	var del []string
	for t := range topics {
		if _, ok := existing[t]; ok {
			del = append(del, t)
		}
	}
	if len(del) > 0 {
		if err := b.adminA.DeleteTopics(ctx, del); err != nil {
			return err
		}
		if err := b.waitGone(ctx, b.adminA, del); err != nil {
			return err
		}
	}
	if err := b.createTopics(ctx, b.adminA, topics); err != nil {
		return err
	}
	if err := b.waitLeaders(ctx, b.adminA, topics); err != nil {
		return err
	}
	t0 := time.Now()
	logf("source data: loading %d records of %d bytes into %d topic(s), %d partitions", records, b.cfg.size, len(topics), len(partitionsOf(topics)))
	err = kafkabench.Load(ctx, kafkabench.LoadConfig{Bootstrap: b.a, Partitions: partitionsOf(topics), Records: records,
		Size: b.cfg.size, Compression: b.cfg.compression, Payload: b.payload})
	if err != nil {
		return err
	}
	logf("source data: loaded in %.1f s", time.Since(t0).Seconds())
	return nil
}

// waitLeaders waits until every partition of topics, just created through admin, has a leader that answers ListOffsets:
// a broker creating thousands of partitions takes seconds over it, and the loader's records to partitions it
// does not lead yet fail with UNKNOWN_TOPIC_OR_PARTITION.
func (b *bench) waitLeaders(ctx context.Context, admin *kafkabench.Admin, topics map[string]int) error {
	want := len(partitionsOf(topics))
	for range 480 {
		ends, err := admin.EndOffsets(ctx, topics)
		if err == nil && len(ends) == want {
			return nil
		}
		if err := sleepCtx(ctx, 500*time.Millisecond); err != nil {
			return err
		}
	}
	return fmt.Errorf("partitions of the new topics still have no leader after 4 minutes")
}

func (b *bench) createTopics(ctx context.Context, admin *kafkabench.Admin, topics map[string]int) error {
	var specs []kafkabench.Topic
	for t, n := range topics {
		specs = append(specs, kafkabench.Topic{Name: t, Partitions: n})
	}
	var err error
	for range 30 {
		if err = admin.CreateTopics(ctx, specs); err == nil {
			return nil
		}
		time.Sleep(time.Second) // a topic of the same name may still be being deleted
	}
	return err
}

func (b *bench) waitGone(ctx context.Context, admin *kafkabench.Admin, names []string) error {
	for range 120 {
		existing, err := admin.Topics()
		if err != nil {
			return err
		}
		left := 0
		for _, n := range names {
			if _, ok := existing[n]; ok {
				left++
			}
		}
		if left == 0 {
			return nil
		}
		if err := sleepCtx(ctx, 500*time.Millisecond); err != nil {
			return err
		}
	}
	return fmt.Errorf("topics still exist after deletion")
}

// cleanup deletes a run's topics: on B everything of the alias (remote topics, MM2's internal topics), on A
// the topics whose names carry the alias.
func (b *bench) cleanup(ctx context.Context, alias string) {
	if _, err := b.adminB.DeleteTopicsMatching(ctx, func(t string) bool {
		return strings.HasPrefix(t, alias+".") || strings.Contains(t, "."+alias+".")
	}); err != nil {
		logf("cleanup on B: %v", err)
	}
	if _, err := b.adminA.DeleteTopicsMatching(ctx, func(t string) bool { return strings.Contains(t, alias) }); err != nil {
		logf("cleanup on A: %v", err)
	}
}

// ---------------------------------------------------------------------------------------------------------
// Measuring one run

// waitQuiet waits (up to b.cfg.quietWait) until processes outside the test use less than 10% of the machine
// over a second, so that a run does not start while someone else's build or test suite runs. The share of
// the machine others took during each run is reported anyway (other CPU %).
func (b *bench) waitQuiet(ctx context.Context) {
	if b.cfg.quietWait <= 0 {
		return
	}
	ours := func() float64 {
		t := treeCPUSeconds(b.h.pid("postgres"))
		for _, p := range append([]int{b.h.pid("kafka-A"), b.h.pid("kafka-B")}, b.extraBrokers...) {
			c, _ := cpuSeconds(p)
			t += c
		}
		self, _ := cpuSeconds(os.Getpid())
		link, _ := cpuSeconds(b.linkPID)
		return t + self + link
	}
	deadline := time.Now().Add(b.cfg.quietWait)
	logged := false
	for ctx.Err() == nil {
		busy0, ours0, t0 := machineBusySeconds(), ours(), time.Now()
		time.Sleep(time.Second)
		other := (machineBusySeconds() - busy0 - (ours() - ours0)) / time.Since(t0).Seconds() / float64(runtime.NumCPU())
		if other < 0.10 {
			return
		}
		if time.Now().After(deadline) {
			logf("other processes still use %.0f%% of the machine; going on", 100*other)
			return
		}
		if !logged {
			logf("other processes use %.0f%% of the machine; waiting up to %s for quiet", 100*other, b.cfg.quietWait)
			logged = true
		}
	}
}

// watcher samples a running system and the target's end offsets.
type watcher struct {
	b        *bench
	inst     *instance
	expected map[kafkabench.TP]int64 // remote partition -> source end offset
	remote   map[string]int          // remote topic -> partitions
	ends     map[kafkabench.TP]int64 // once every remote partition exists: the end offsets seen so far
	total    int64

	samples            []sample
	cpu0, broker0, db0 float64
	linkPID            int
	link0              float64
	busy0, self0       float64
	brokerPIDs         []int
	dbPID              int
	firstT, doneT      float64
	onFirst            func()
	threads0, threads  map[string]float64
}

func (b *bench) newWatcher(inst *instance, f flow, source map[kafkabench.TP]int64) *watcher {
	w := &watcher{b: b, inst: inst, expected: map[kafkabench.TP]int64{}, remote: map[string]int{}, firstT: -1, doneT: -1}
	for tp, end := range source {
		r := kafkabench.TP{Topic: f.remote(tp.Topic), Partition: tp.Partition}
		w.expected[r] = end
		w.remote[r.Topic] = max(w.remote[r.Topic], int(tp.Partition)+1)
		w.total += end
	}
	w.brokerPIDs = append([]int{b.h.pid("kafka-A"), b.h.pid("kafka-B")}, b.extraBrokers...)
	w.dbPID = b.h.pid("postgres")
	if b.linkPID > 0 {
		w.linkPID = b.linkPID
		w.link0, _ = cpuSeconds(w.linkPID)
	}
	w.cpu0, _ = cpuSeconds(inst.pid)
	w.broker0 = w.brokerCPU()
	w.db0 = treeCPUSeconds(w.dbPID)
	w.busy0 = machineBusySeconds()
	w.self0, _ = cpuSeconds(os.Getpid())
	w.threads0 = threadCPU(inst.pid)
	return w
}

func (w *watcher) brokerCPU() float64 {
	var s float64
	for _, p := range w.brokerPIDs {
		c, _ := cpuSeconds(p)
		s += c
	}
	return s
}

// poll takes one sample; it reports whether every partition is replicated.
// unfinished returns the remote partitions whose end offset has not reached the source's yet.
func (w *watcher) unfinished() []kafkabench.TP {
	var out []kafkabench.TP
	for tp, want := range w.expected {
		if w.ends[tp] < want {
			out = append(out, tp)
		}
	}
	return out
}

func (w *watcher) poll(ctx context.Context) (bool, error) {
	if !alive(w.inst.pid) {
		return false, fmt.Errorf("the process (pid %d) exited", w.inst.pid)
	}
	var ends map[kafkabench.TP]int64
	var err error
	for try := 0; ; try++ {
		if w.ends == nil {
			ends, err = w.b.adminB.EndOffsets(ctx, w.remote)
		} else {
			ends, err = w.b.adminB.PartitionEnds(ctx, w.unfinished())
		}
		if err == nil {
			break
		}
		if try == 10 || ctx.Err() != nil {
			return false, err
		}
		time.Sleep(200 * time.Millisecond)
	}
	if w.ends == nil && len(ends) >= len(w.expected) {
		// Every remote partition exists: from now on only the unfinished ones are asked about, without
		// metadata. With 10,000 partitions, a full metadata request and ListOffsets every 250 ms were a load
		// on the target broker of their own.
		w.ends = map[kafkabench.TP]int64{}
	}
	if w.ends != nil {
		for tp, end := range ends {
			w.ends[tp] = max(w.ends[tp], end)
		}
		ends = w.ends
	}
	var replicated int64
	done := true
	for tp, want := range w.expected {
		got := ends[tp]
		replicated += min(got, want)
		if got < want {
			done = false
		}
	}
	cpu, _ := cpuSeconds(w.inst.pid)
	rss, _, _ := memKB(w.inst.pid)
	s := sample{T: time.Since(w.inst.t0).Seconds(), Replicated: replicated, CPU: cpu - w.cpu0, RSSKB: rss,
		BrokerCPU: w.brokerCPU() - w.broker0, DBCPU: treeCPUSeconds(w.dbPID) - w.db0}
	if w.linkPID > 0 {
		l, _ := cpuSeconds(w.linkPID)
		s.LinkCPU = l - w.link0
	}
	self, _ := cpuSeconds(os.Getpid())
	s.OtherCPU = max(0, machineBusySeconds()-w.busy0-s.CPU-s.BrokerCPU-s.DBCPU-s.LinkCPU-(self-w.self0))
	w.samples = append(w.samples, s)
	if replicated > 0 && w.firstT < 0 {
		w.firstT = s.T
		if w.onFirst != nil {
			w.onFirst()
		}
	}
	if done && w.doneT < 0 {
		w.doneT = s.T
		w.threads = threadCPU(w.inst.pid)
		for k, v := range w.threads {
			w.threads[k] = v - w.threads0[k]
		}
	}
	return done, nil
}

// waitDone samples every interval until everything is replicated, the run times out or the process dies.
func (w *watcher) waitDone(ctx context.Context, interval, limit time.Duration) error {
	deadline := w.inst.t0.Add(limit)
	for {
		done, err := w.poll(ctx)
		if err != nil {
			return err
		}
		if done {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not replicated after %s (%d of %d records)", limit, w.samples[len(w.samples)-1].Replicated, w.total)
		}
		if err := sleepCtx(ctx, interval); err != nil {
			return err
		}
	}
}

// crossing returns the first sample at which at least n records had been replicated.
func (w *watcher) crossing(n float64) (sample, bool) {
	for _, s := range w.samples {
		if float64(s.Replicated) >= n {
			return s, true
		}
	}
	return sample{}, false
}

// fill computes the throughput figures of r from the samples: the steady window runs from the sample where 10%
// of the records had arrived to the one where 90% had (whole samples, no interpolation).
func (w *watcher) fill(r *result, size int) {
	r.Records = w.total
	r.Bytes = w.total * int64(size)
	r.StartupS = w.firstT
	r.TotalS = w.doneT
	r.Done = w.doneT >= 0
	r.ThreadCPU = w.threads
	if last := len(w.samples) - 1; last >= 0 {
		r.CPUTotalS = w.samples[last].CPU
	}
	s1, ok1 := w.crossing(0.1 * float64(w.total))
	s2, ok2 := w.crossing(0.9 * float64(w.total))
	if !ok1 || !ok2 || s2.T-s1.T < 0.5 {
		// Too fast for a window: use the whole run.
		if len(w.samples) == 0 || w.firstT < 0 {
			return
		}
		s1, s2 = sample{}, w.samples[len(w.samples)-1]
	}
	w.window(r, s1, s2, size)
}

// window sets the rate and cost figures of r from the samples s1 to s2.
func (w *watcher) window(r *result, s1, s2 sample, size int) {
	dt := s2.T - s1.T
	recs := float64(s2.Replicated - s1.Replicated)
	if dt <= 0 || recs <= 0 {
		return
	}
	gb := recs * float64(size) / 1e9
	r.WindowS = dt
	r.RecordsPerS = recs / dt
	r.MBPerS = recs * float64(size) / 1e6 / dt
	r.CPUPerGB = (s2.CPU - s1.CPU) / gb
	r.BrokerCPUGB = (s2.BrokerCPU - s1.BrokerCPU) / gb
	r.BrokerCores = (s2.BrokerCPU - s1.BrokerCPU) / dt
	r.LinkCores = (s2.LinkCPU - s1.LinkCPU) / dt
	r.DBCPUGB = (s2.DBCPU - s1.DBCPU) / gb
	r.OtherCPUPct = 100 * (s2.OtherCPU - s1.OtherCPU) / dt / float64(runtime.NumCPU())
}

func peakRSSMB(pid int) float64 {
	_, hwm, _ := memKB(pid)
	return float64(hwm) / 1024
}

func (b *bench) saveProfile(addr, endpoint, file string) error {
	resp, err := http.Get("http://" + addr + endpoint)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", endpoint, resp.Status)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(f, resp.Body)
	return err
}

// ---------------------------------------------------------------------------------------------------------
// Latency at a fixed offered load

const latencyWarmup = 3 * time.Second

// saveLatencies writes every arrival (seconds since the load started, latency in ms) for plotting.
func (b *bench) saveLatencies(alias string, arrivals []kafkabench.Arrival, start time.Time) {
	var sb strings.Builder
	sb.WriteString("sent_s,latency_ms\n")
	for _, a := range arrivals {
		fmt.Fprintf(&sb, "%.4f,%.3f\n", a.Sent.Sub(start).Seconds(), float64(a.Latency)/float64(time.Millisecond))
	}
	_ = os.WriteFile(filepath.Join(b.out, "logs", alias+".latency.csv"), []byte(sb.String()), 0o644)
}

func percentile(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	i = max(0, min(i, len(sorted)-1))
	return float64(sorted[i]) / float64(time.Millisecond)
}

// latency offers b.cfg.latencyRate records/s for b.cfg.latencyFor to the source topic lat and reads them back
// from its remote topic.
func (b *bench) latency(ctx context.Context, r *result, lat string, remote string, partitions int) error {
	// The system creates the remote topic when it starts; wait until it is there.
	for i := 0; ; i++ {
		t, err := b.adminB.Topics()
		if err != nil {
			return err
		}
		if t[remote] == partitions {
			break
		}
		if i > 600 {
			return fmt.Errorf("remote topic %s was not created", remote)
		}
		time.Sleep(100 * time.Millisecond)
	}
	var parts []kafkabench.TP
	var src []kafkabench.TP
	for p := range partitions {
		parts = append(parts, kafkabench.TP{Topic: remote, Partition: int32(p)})
		src = append(src, kafkabench.TP{Topic: lat, Partition: int32(p)})
	}
	reader, err := kafkabench.NewLatencyReader(b.b, parts)
	if err != nil {
		return err
	}
	defer reader.Close()
	var want int64 = -1
	readCtx, cancelRead := context.WithCancel(ctx)
	defer cancelRead()
	got := make(chan []kafkabench.Arrival, 1)
	wantCh := make(chan int64, 1)
	go func() {
		got <- reader.Read(readCtx, func() int64 {
			select {
			case w := <-wantCh:
				want = w
			default:
			}
			return want
		})
	}()
	// The first seconds are a warm-up (the load producer's own connection and metadata set-up shows there as
	// half-second outliers even without replication): offered like the rest, not counted.
	start := time.Now()
	sent, err := kafkabench.ProduceAtRate(ctx, kafkabench.RateConfig{Bootstrap: b.a, Partitions: src, Rate: b.cfg.latencyRate,
		Duration: latencyWarmup + b.cfg.latencyFor, Size: b.cfg.size, Compression: b.cfg.compression, Payload: b.payload})
	if err != nil {
		return err
	}
	wantCh <- sent
	timer := time.AfterFunc(30*time.Second, cancelRead)
	defer timer.Stop()
	arrivals := <-got
	var ds []time.Duration
	for _, a := range arrivals {
		if a.Sent.Sub(start) >= latencyWarmup {
			ds = append(ds, a.Latency)
		}
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	r.LatSent, r.LatReceived = sent, int64(len(arrivals))
	r.Latencies = ds
	r.LatP50Ms, r.LatP99Ms = percentile(ds, 0.50), percentile(ds, 0.99)
	if len(ds) > 0 {
		r.LatMaxMs = float64(ds[len(ds)-1]) / float64(time.Millisecond)
	}
	b.saveLatencies(r.Alias, arrivals, start)
	if int64(len(arrivals)) < sent {
		return fmt.Errorf("latency: %d of %d records arrived", len(arrivals), sent)
	}
	return nil
}

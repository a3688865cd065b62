package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/connectors/source"
)

// producerSettings are the replication producer settings every system gets, in Java's names.
type producerSettings struct {
	Acks        string `json:"acks"`
	Idempotence string `json:"enable.idempotence"`
	InFlight    string `json:"max.in.flight.requests.per.connection"`
	Linger      string `json:"linger.ms"`
	BatchSize   string `json:"batch.size"`
	Compression string `json:"compression.type"`
	// Extra are further Java producer settings (-producer), for experiments.
	Extra map[string]string `json:"extra,omitempty"`
}

func (p producerSettings) java() map[string]string {
	m := map[string]string{
		"acks": p.Acks, "enable.idempotence": p.Idempotence, "max.in.flight.requests.per.connection": p.InFlight,
		"linger.ms": p.Linger, "batch.size": p.BatchSize, "compression.type": p.Compression,
	}
	for k, v := range p.Extra {
		m[k] = v
	}
	// An empty setting is left to the system's own default (the wan scenario's "MM2 with its defaults").
	for k, v := range m {
		if v == "" {
			delete(m, k)
		}
	}
	return m
}

// flow is one replication job: source topics of A to B under a source alias of its own, so that every run
// writes its own remote topics (<alias>.<topic>) and no system resumes from another run's offsets.
type flow struct {
	alias   string
	filter  []string       // topic regexes (kmirror's and MM2's "topics")
	topics  map[string]int // the source topics the filter matches when the run starts (the pipe's assignment)
	tasks   int
	prod    producerSettings
	refresh int // refresh.topics.interval.seconds
	// consumer, when not nil, replaces -consumer as the source consumers' settings (Java names, and
	// librdkafka-only ones that MM2 does not get, see librdkafkaOnly).
	consumer map[string]string
}

// consumerJava is the source consumers' settings of the flow: its own, or the command line's.
func (f flow) consumerJava(b *bench) map[string]string {
	if f.consumer != nil {
		return f.consumer
	}
	return b.cfg.consumerJava()
}

func (f flow) remote(topic string) string { return f.alias + "." + topic }

// instance is a running system.
type instance struct {
	pid       int
	t0        time.Time // when the system was asked to replicate: connector creation, or process start
	pprofAddr string
	api       string // kmirror: the REST API's base URL
	dbURL     string // kmirror: the URL of its database
	stop      func() error
	// tasks returns how many replication tasks (pipelines) run, as the system reports it.
	tasks func() int
}

type system interface {
	name() string
	letter() string
	start(ctx context.Context, b *bench, f flow, run string) (*instance, error)
}

// connectorConfig is the MirrorSourceConnector config kmirror gets; the pipe's librdkafka properties are
// derived from the same map by kmirror's own translation, so that both run with identical client settings.
func (b *bench) connectorConfig(f flow) map[string]string {
	c := map[string]string{
		"connector.class":                       "org.apache.kafka.connect.mirror.MirrorSourceConnector",
		"source.cluster.alias":                  f.alias,
		"target.cluster.alias":                  "B",
		"source.cluster.bootstrap.servers":      b.a,
		"target.cluster.bootstrap.servers":      b.b,
		"topics":                                strings.Join(f.filter, ","),
		"tasks.max":                             strconv.Itoa(f.tasks),
		"replication.factor":                    "1",
		"offset-syncs.topic.replication.factor": "1",
		"sync.topic.acls.enabled":               "false",
		"refresh.topics.interval.seconds":       strconv.Itoa(f.refresh),
	}
	for k, v := range f.prod.java() {
		c["producer.override."+k] = v
	}
	for k, v := range f.consumerJava(b) {
		c["source.consumer."+k] = v
	}
	return c
}

// ---------------------------------------------------------------------------------------------------------
// (a) the bare librdkafka pipe

type pipeSystem struct{}

func (pipeSystem) name() string   { return "pipe" }
func (pipeSystem) letter() string { return "P" }

// pipeProps translates the connector config as kmirror would for its replication consumer and producer.
func (b *bench) pipeProps(f flow) (consumer, producer map[string]string, err error) {
	cc := b.connectorConfig(f)
	c, err := clientconfig.Translate(clientconfig.ReplicationConsumer, clientconfig.Resolve(clientconfig.ReplicationConsumer, cc, nil))
	if err != nil {
		return nil, nil, err
	}
	p, err := clientconfig.Translate(clientconfig.ReplicationProducer, clientconfig.Resolve(clientconfig.ReplicationProducer, cc, nil))
	if err != nil {
		return nil, nil, err
	}
	// What kmirror's source task adds to the translated properties when the user did not set them: the pipe
	// must run with the same client settings.
	source.PipelineDefaults(c.Props, p.Props, f.tasks)
	c.Props["group.id"] = "kmirror-bench-pipe"
	c.Props["client.id"] = "kmirror-bench-pipe"
	p.Props["client.id"] = "kmirror-bench-pipe"
	return c.Props, p.Props, nil
}

func (pipeSystem) start(_ context.Context, b *bench, f flow, run string) (*instance, error) {
	cons, prod, err := b.pipeProps(f)
	if err != nil {
		return nil, err
	}
	for k, v := range keyValues(b.cfg.pipeProducer) {
		prod[k] = v
	}
	if b.cfg.stats {
		cons["statistics.interval.ms"] = "1000"
		prod["statistics.interval.ms"] = "1000"
	}
	pc := pipeConfig{Consumer: cons, Producer: prod, Target: b.b, Topics: f.topics, Remote: map[string]string{}, Workers: f.tasks}
	for t := range f.topics {
		pc.Remote[t] = f.remote(t)
	}
	if b.cfg.stats {
		pc.StatsFile = filepath.Join(b.out, "stats", run+".jsonl")
	}
	if b.cfg.pprof {
		pp, err := freePort()
		if err != nil {
			return nil, err
		}
		pc.Pprof = fmt.Sprintf("127.0.0.1:%d", pp)
	}
	js, _ := json.MarshalIndent(pc, "", "  ")
	path := filepath.Join(b.out, "config", run+".json")
	if err := os.WriteFile(path, js, 0o644); err != nil {
		return nil, err
	}
	t0 := time.Now()
	c, err := startChild(filepath.Join(b.out, "logs", run+".log"), nil, b.self, "pipe", "-config", path)
	if err != nil {
		return nil, err
	}
	n := 0
	for _, p := range f.topics {
		n += p
	}
	workers := max(1, min(f.tasks, n))
	return &instance{pid: c.pid(), t0: t0, pprofAddr: pc.Pprof, stop: func() error { return c.stop(60 * time.Second) },
		tasks: func() int { return workers }}, nil
}

// ---------------------------------------------------------------------------------------------------------
// (b) kmirror through its REST API

// kmirrorSystem is kmirror; the "candidate" system is a second kmirror binary (-candidate-bin, e.g. a build
// with a fix), run side by side with the first for A/B comparisons.
type kmirrorSystem struct {
	label, short string
	bin          func(b *bench) string
	extra        func(b *bench) string
	env          func(b *bench) string
}

func (k kmirrorSystem) name() string   { return k.label }
func (k kmirrorSystem) letter() string { return k.short }

var (
	kmirrorSys = kmirrorSystem{label: "kmirror", short: "K",
		bin: func(b *bench) string { return b.kmirrorBin }, extra: func(b *bench) string { return b.cfg.kmirrorExtra },
		env: func(b *bench) string { return b.cfg.kmirrorEnv }}
	candidateSys = kmirrorSystem{label: "candidate", short: "C",
		bin: func(b *bench) string { return b.cfg.candidateBin }, extra: func(b *bench) string { return b.cfg.candidateExtra },
		env: func(b *bench) string { return b.cfg.candidateEnv }}
)

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (k kmirrorSystem) start(ctx context.Context, b *bench, f flow, run string) (*instance, error) {
	db := "kmb_" + strings.ToLower(run)
	if err := b.h.psql("CREATE DATABASE " + db); err != nil {
		return nil, err
	}
	dropDB := func() error { return b.h.psql("DROP DATABASE IF EXISTS " + db + " WITH (FORCE)") }
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	listen := fmt.Sprintf("127.0.0.1:%d", port)
	logPath := filepath.Join(b.out, "logs", run+".log")
	args := []string{"serve", "--database-url", b.h.databaseURL(db), "--listen", listen}
	var pprofAddr string
	if b.cfg.pprof && k.label == "kmirror" {
		pp, err := freePort()
		if err != nil {
			_ = dropDB()
			return nil, err
		}
		pprofAddr = fmt.Sprintf("127.0.0.1:%d", pp)
		args = append(args, "--pprof-listen", pprofAddr)
	}
	c, err := startChild(logPath, envList(k.env(b)), k.bin(b), args...)
	if err != nil {
		_ = dropDB()
		return nil, err
	}
	stop := func() error {
		err := c.stop(90 * time.Second)
		if e := dropDB(); e != nil && err == nil {
			err = e
		}
		return err
	}
	base := "http://" + listen
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(base + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if c.exited() || time.Now().After(deadline) || ctx.Err() != nil {
			_ = stop()
			return nil, fmt.Errorf("kmirror did not become healthy (log: %s)", logPath)
		}
		time.Sleep(100 * time.Millisecond)
	}
	cc := b.connectorConfig(f)
	for key, v := range keyValues(k.extra(b)) {
		if v == "\x00" {
			delete(cc, key)
		} else {
			cc[key] = v
		}
	}
	body, _ := json.Marshal(cc)
	t0 := time.Now()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPut, base+"/connectors/bench-"+f.alias+"/config", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		_ = stop()
		return nil, fmt.Errorf("create connector: %w", err)
	}
	rb, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		_ = stop()
		return nil, fmt.Errorf("create connector: %s: %s", resp.Status, rb)
	}
	status := base + "/connectors/bench-" + f.alias + "/status"
	return &instance{pid: c.pid(), t0: t0, pprofAddr: pprofAddr, api: base, dbURL: b.h.databaseURL(db), stop: stop,
		tasks: func() int { return runningTasks(status) }}, nil
}

// runningTasks counts the RUNNING tasks in a connector's status (GET /connectors/{c}/status at url).
func runningTasks(url string) int {
	resp, err := http.Get(url)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	var st struct {
		Tasks []struct {
			State string `json:"state"`
		} `json:"tasks"`
	}
	if json.NewDecoder(resp.Body).Decode(&st) != nil {
		return 0
	}
	n := 0
	for _, t := range st.Tasks {
		if t.State == "RUNNING" {
			n++
		}
	}
	return n
}

// ---------------------------------------------------------------------------------------------------------
// (c) Java MirrorMaker 2, dedicated mode, from the Maven Central jars (through scripts/harness)

type mm2System struct{}

var mm2TaskLine = regexp.MustCompile(`(task-thread-MirrorSourceConnector-\d+) replicating \d+ topic-partitions`)

func (mm2System) name() string   { return "mm2" }
func (mm2System) letter() string { return "M" }

func (b *bench) mm2Properties(f flow) string {
	var s strings.Builder
	p := func(k, v string) { fmt.Fprintf(&s, "%s = %s\n", k, v) }
	fmt.Fprintf(&s, "# MirrorMaker 2 dedicated mode for a kmirror-bench run\n")
	p("clusters", f.alias+", B")
	p(f.alias+".bootstrap.servers", b.a)
	p("B.bootstrap.servers", b.b)
	p(f.alias+"->B.enabled", "true")
	p(f.alias+"->B.topics", strings.Join(f.filter, ","))
	p("B->"+f.alias+".enabled", "false")
	p("emit.heartbeats.enabled", "false")
	p("emit.checkpoints.enabled", "false")
	p("sync.group.offsets.enabled", "false")
	p("tasks.max", strconv.Itoa(f.tasks))
	for _, k := range []string{"replication.factor", "checkpoints.topic.replication.factor", "heartbeats.topic.replication.factor",
		"offset-syncs.topic.replication.factor", "offset.storage.replication.factor", "status.storage.replication.factor",
		"config.storage.replication.factor"} {
		p(k, "1")
	}
	p("sync.topic.acls.enabled", "false")
	p("refresh.topics.interval.seconds", strconv.Itoa(f.refresh))
	p("refresh.groups.interval.seconds", "600")
	p("B.scheduled.rebalance.max.delay.ms", "0")
	// The task producers are the Connect worker's (producer.* of the target cluster's herder).
	keys := make([]string, 0, 6)
	prod := f.prod.java()
	for k := range prod {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p("B.producer."+k, prod[k])
	}
	cons := map[string]string{}
	for k, v := range f.consumerJava(b) {
		if !librdkafkaOnly[k] { // a librdkafka knob: Java has no such setting
			cons[k] = v
		}
	}
	keys = keys[:0]
	for k := range cons {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p(f.alias+".consumer."+k, cons[k])
	}
	for k, v := range keyValues(b.cfg.mm2Extra) {
		p(k, v)
	}
	return s.String()
}

func (mm2System) start(ctx context.Context, b *bench, f flow, run string) (*instance, error) {
	props := filepath.Join(b.out, "config", run+".properties")
	if err := os.WriteFile(props, []byte(b.mm2Properties(f)), 0o644); err != nil {
		return nil, err
	}
	pidFile := filepath.Join(b.h.dir, "mm2.pid")
	_ = os.Remove(filepath.Join(b.h.dir, "mm2", "mm2.log"))
	cmd := exec.Command(b.h.script, "mm2", "start", "--dir", b.h.dir, props)
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &errb, &errb
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	startDone := make(chan struct{})
	var startErr error
	go func() {
		startErr = cmd.Wait()
		close(startDone)
	}()
	stop := func() error {
		<-startDone
		_, err := b.h.run(nil, "mm2", "stop", "--dir", b.h.dir)
		if lb, e := os.ReadFile(filepath.Join(b.h.dir, "mm2", "mm2.log")); e == nil {
			_ = os.WriteFile(filepath.Join(b.out, "logs", run+".log"), lb, 0o644)
		}
		return err
	}
	// The harness writes the JVM's PID as soon as it spawned it, then waits for "Kafka MirrorMaker started";
	// the run is measured from the spawn (MM2 creates its connectors itself when it starts).
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case <-startDone:
			if startErr != nil {
				return nil, fmt.Errorf("mm2 start: %w\n%s", startErr, tail(errb.String(), 30))
			}
		default:
		}
		if pb, err := os.ReadFile(pidFile); err == nil {
			if pid, _ := strconv.Atoi(strings.TrimSpace(string(pb))); pid > 0 && alive(pid) {
				go func() {
					<-startDone
					if startErr != nil {
						logf("mm2 start failed: %v\n%s", startErr, tail(errb.String(), 20))
					}
				}()
				return &instance{pid: pid, t0: t0, stop: stop, tasks: func() int {
					// MirrorSourceTask logs "task-thread-MirrorSourceConnector-N replicating K topic-partitions".
					lb, _ := os.ReadFile(filepath.Join(b.h.dir, "mm2", "mm2.log"))
					seen := map[string]bool{}
					for _, m := range mm2TaskLine.FindAllSubmatch(lb, -1) {
						seen[string(m[1])] = true
					}
					return len(seen)
				}}, nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			_ = stop()
			return nil, fmt.Errorf("mm2 did not start")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func envList(list string) []string {
	var env []string
	for k, v := range keyValues(list) {
		env = append(env, k+"="+v)
	}
	return env
}

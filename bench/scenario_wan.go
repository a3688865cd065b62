package main

// Scenario wan (issue 15, item 5): one of the two clusters reached over a link with a round-trip time of
// 50-150 ms. The bench makes the link itself: a network namespace joined to the host by a point-to-point
// link on addresses of its own (10.77.0.1 on the host, 10.77.0.2 in the namespace), delayed RTT/2 each way,
// and a third single-node Kafka broker W started inside the namespace from the harness's jars, with its own
// data directory and a listener on 10.77.0.2 only. Nothing else on the machine routes through the link, and
// everything — W, the link, the namespace — is removed at the end, also on Ctrl-C (the bench's context is
// cancelled and the deferred teardown runs).
//
// The issue asked for veth and tc netem; this kernel has no netem (CONFIG_NET_SCH_NETEM is not set, no
// modules), so the link is a pair of TUN devices with a delay line between them (bench/wanlink.go), a child
// process of the bench whose CPU is reported as "link cores". It delays packets, not bytes of a stream, so
// TCP over it behaves as over a WAN (windows, slow start, socket buffers). Its MTU is 9000 (-wan-mtu): at
// 1500 the delay line would move ~35,000 packets/s at 50 MB/s on the same two cores as everything else.
//
// Layouts: remote-source — W is the source, the replicator and the target B are local (MM2's recommended
// layout, consume remote and produce local); remote-target — A is the source and W the target, for
// comparison: there one ProduceRequest in flight per partition bounds a partition at about batch.size ÷ RTT.
//
// Systems: the librdkafka ones (cpipe, pipe, kmirror, candidate) with the WAN settings below; Java MM2 twice,
// once with its defaults (no client settings at all) and once ("mm2-wan") with the same Java settings.

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/connectors/kafka/kafkabench"
)

const (
	wanNS       = "kmbench-wan"
	wanHostIf   = "kmbw-h"
	wanNSIf     = "kmbw-n"
	wanHostAddr = "10.77.0.1"
	wanNSAddr   = "10.77.0.2"
	wanNet      = "10.77.0.0/30"
	wanPort     = 9092
)

// librdkafkaOnly are consumer settings of the WAN profile that only librdkafka has; MM2 does not get them.
var librdkafkaOnly = map[string]bool{"queued.max.messages.kbytes": true}

// wanConsumer is the WAN profile of the source consumers (Java names, translated by kmirror's clientconfig
// for the librdkafka systems):
//   - receive.buffer.bytes=-1: the OS's auto-tuned socket buffer. Java's default (64 KiB) caps the TCP window,
//     and so a connection, at 64 KiB per round trip (0.6 MB/s at 100 ms).
//   - max.partition.fetch.bytes=16 MiB, fetch.max.bytes=64 MiB: a consumer has one Fetch per broker in flight,
//     so a partition moves at most max.partition.fetch.bytes per round trip (Java's and librdkafka's 1 MiB
//     default: 10 MB/s at 100 ms).
//   - queued.max.messages.kbytes=65536 (librdkafka only): room for several such fetches in the prefetch
//     queue; librdkafka stops fetching while it is full.
func wanConsumer() map[string]string {
	return map[string]string{"receive.buffer.bytes": "-1", "max.partition.fetch.bytes": "16777216",
		"fetch.max.bytes": "67108864", "queued.max.messages.kbytes": "65536"}
}

// wanProducer is the WAN profile of the replication producers: large batches, lingering long enough to fill
// them, compression, an auto-tuned send buffer (Java's default is 128 KiB) and, for MM2, a larger buffer.
func (b *bench) wanProducer() producerSettings {
	return producerSettings{Acks: b.cfg.acks, Idempotence: b.cfg.idempotence, InFlight: b.cfg.inflight,
		Linger: strconv.Itoa(b.cfg.wan.linger), BatchSize: strconv.Itoa(b.cfg.wan.batch), Compression: b.cfg.wan.compression,
		Extra: map[string]string{"send.buffer.bytes": "-1"}}
}

// wanFlags are the wan scenario's knobs.
type wanFlags struct {
	rtts        []int
	layouts     []string
	partitions  []int
	records     int64
	maxRun      time.Duration
	linger      int
	batch       int
	compression string
	tasks       int
	mtu         int
}

func registerWanFlags(fs *flag.FlagSet, c *config, rtt, layouts, parts *string) {
	fs.StringVar(rtt, "wan-rtt", "50,100,150", "round-trip times of the wan scenario, ms")
	fs.StringVar(layouts, "wan-layouts", "remote-source,remote-target", "wan layouts: remote-source (consume remote, produce local: MM2's recommended layout), remote-target")
	fs.StringVar(parts, "wan-partitions", "1,8", "partition counts of the wan scenario's source topic")
	fs.Int64Var(&c.wan.records, "wan-records", 300_000, "records of the wan scenario's source topics")
	fs.DurationVar(&c.wan.maxRun, "wan-max-run", 60*time.Second, "cap of one wan run, from its first record: a slower system is measured over what it did until then (marked capped)")
	fs.IntVar(&c.wan.linger, "wan-linger", 50, "linger.ms of the WAN profile")
	fs.IntVar(&c.wan.batch, "wan-batch-size", 1000000, "batch.size of the WAN profile (at most the brokers' message.max.bytes, ~1 MB)")
	fs.StringVar(&c.wan.compression, "wan-compression", "lz4", "compression.type of the WAN profile")
	fs.IntVar(&c.wan.tasks, "wan-tasks", 8, "tasks.max of the wan scenario")
	fs.IntVar(&c.wan.mtu, "wan-mtu", 9000, "MTU of the wan scenario's link")
}

func parseWanFlags(c *config, rtt, layouts, parts string) error {
	for _, v := range clientconfig.CommaList(rtt) {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("bad -wan-rtt value %q", v)
		}
		c.wan.rtts = append(c.wan.rtts, n)
	}
	for _, l := range clientconfig.CommaList(layouts) {
		if l != "remote-source" && l != "remote-target" {
			return fmt.Errorf("bad -wan-layouts value %q", l)
		}
		c.wan.layouts = append(c.wan.layouts, l)
	}
	for _, v := range clientconfig.CommaList(parts) {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("bad -wan-partitions value %q", v)
		}
		c.wan.partitions = append(c.wan.partitions, n)
	}
	return nil
}

// wanLink is the namespace, the delayed link into it and the broker W inside.
type wanLink struct {
	b        *bench
	dir      string // W's directory (config, data, logs)
	broker   *child
	link     *exec.Cmd // the delay line (wanlink subcommand)
	ctl      io.WriteCloser
	linkDone chan struct{}
	made     []string // what was made, for the teardown's log
}

// runTool runs a command (ip, java) and, when it fails, returns its output in the error.
func runTool(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// nsRun runs a command inside the scenario's namespace.
func nsRun(args ...string) error {
	return runTool("ip", append([]string{"netns", "exec", wanNS}, args...)...)
}

// wanPrereqs checks root, ip and tc, and that neither the namespace nor the addresses are in use.
func wanPrereqs() error {
	if os.Geteuid() != 0 {
		return errors.New("scenario wan needs root (a network namespace, TUN devices)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return errors.New("scenario wan needs ip: apt-get install -y iproute2")
	}
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		return fmt.Errorf("scenario wan needs TUN devices: %w", err)
	}
	out, _ := exec.Command("ip", "netns", "list").Output()
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == wanNS {
			return fmt.Errorf("network namespace %s exists (an earlier run that was killed?): look at `ip netns pids %s`, stop those processes, then `ip netns del %s`", wanNS, wanNS, wanNS)
		}
	}
	if out, _ := exec.Command("ip", "-o", "addr", "show", "to", wanNet).Output(); len(strings.TrimSpace(string(out))) > 0 {
		return fmt.Errorf("%s is already in use on this machine: %s", wanNet, strings.TrimSpace(string(out)))
	}
	if out, _ := exec.Command("ip", "-o", "link", "show", wanHostIf).Output(); len(out) > 0 {
		return fmt.Errorf("interface %s exists (an earlier run that was killed?): `ip link del %s`", wanHostIf, wanHostIf)
	}
	return nil
}

// up makes the namespace and the link (no delay yet) and starts W.
func (l *wanLink) up(ctx context.Context) error {
	if err := runTool("ip", "netns", "add", wanNS); err != nil {
		return err
	}
	l.made = append(l.made, "namespace "+wanNS)
	logPath := filepath.Join(l.b.out, "logs", "wanlink.log")
	lf, err := os.Create(logPath)
	if err != nil {
		return err
	}
	cmd := exec.Command(l.b.self, "wanlink", "-ns", wanNS, "-host-if", wanHostIf, "-ns-if", wanNSIf, "-mtu", strconv.Itoa(l.b.cfg.wan.mtu))
	cmd.Stderr = lf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // a Ctrl-C reaches it only through down
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if l.ctl, err = cmd.StdinPipe(); err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		lf.Close()
		return err
	}
	l.link, l.linkDone = cmd, make(chan struct{})
	l.made = append(l.made, fmt.Sprintf("delay line (pid %d) with TUN devices %s/%s", cmd.Process.Pid, wanHostIf, wanNSIf))
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		ok := sc.Scan() && sc.Text() == "ready"
		ready <- ok
		for sc.Scan() {
		}
	}()
	go func() {
		_ = cmd.Wait()
		lf.Close()
		close(l.linkDone)
	}()
	select {
	case ok := <-ready:
		if !ok {
			return fmt.Errorf("the delay line did not start (log: %s)", logPath)
		}
	case <-time.After(10 * time.Second):
		return fmt.Errorf("the delay line did not start within 10 s (log: %s)", logPath)
	}
	mtu := strconv.Itoa(l.b.cfg.wan.mtu)
	if err := runTool("ip", "addr", "add", wanHostAddr, "peer", wanNSAddr, "dev", wanHostIf); err != nil {
		return err
	}
	if err := runTool("ip", "link", "set", wanHostIf, "mtu", mtu, "txqueuelen", "10000", "up"); err != nil {
		return err
	}
	for _, s := range [][]string{
		{"ip", "addr", "add", wanNSAddr, "peer", wanHostAddr, "dev", wanNSIf},
		{"ip", "link", "set", wanNSIf, "mtu", mtu, "txqueuelen", "10000", "up"},
		{"ip", "link", "set", "lo", "up"},
		// The namespace has sysctls of its own: let W's sockets auto-tune up to 32 MiB (the kernel's default
		// maximum of 4 MiB would cap a connection at 40 MB/s at 100 ms). The host's are left alone.
		{"sysctl", "-q", "-w", "net.ipv4.tcp_rmem=4096 131072 33554432"},
		{"sysctl", "-q", "-w", "net.ipv4.tcp_wmem=4096 16384 33554432"},
	} {
		if err := nsRun(s...); err != nil {
			return err
		}
	}
	return l.startBroker(ctx)
}

func (l *wanLink) startBroker(ctx context.Context) error {
	h := l.b.h
	libs, java := h.env["KAFKA_LIBS"], h.env["JAVA_BIN"]
	if libs == "" || java == "" {
		return fmt.Errorf("%s/env has no KAFKA_LIBS or JAVA_BIN", h.dir)
	}
	l.dir = filepath.Join(h.dir, "wan-W")
	_ = os.RemoveAll(l.dir)
	for _, d := range []string{"data", "logs"} {
		if err := os.MkdirAll(filepath.Join(l.dir, d), 0o755); err != nil {
			return err
		}
	}
	props := filepath.Join(l.dir, "server.properties")
	// The harness's broker settings, on the namespace's address; the controller listens on the namespace's
	// own loopback. socket.*.buffer.bytes=-1: the OS's auto-tuned buffers instead of Kafka's 100 KiB default,
	// which would cap each connection at ~2 MB/s at 100 ms (what a WAN-facing broker is configured with).
	conf := fmt.Sprintf(`# Kafka broker W (the wan scenario of kmirror-bench), in network namespace %[1]s
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:%[3]d
listeners=PLAINTEXT://%[2]s:%[4]d,CONTROLLER://127.0.0.1:%[3]d
advertised.listeners=PLAINTEXT://%[2]s:%[4]d
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=%[5]s
num.partitions=1
default.replication.factor=1
min.insync.replicas=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=5
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=5
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
log.cleaner.dedupe.buffer.size=2097152
num.network.threads=3
num.io.threads=8
auto.create.topics.enable=false
group.min.session.timeout.ms=1000
socket.send.buffer.bytes=-1
socket.receive.buffer.bytes=-1
`, wanNS, wanNSAddr, wanPort+1, wanPort, filepath.Join(l.dir, "data"))
	if err := os.WriteFile(props, []byte(conf), 0o644); err != nil {
		return err
	}
	id := make([]byte, 16)
	_, _ = rand.Read(id)
	cid := strings.ReplaceAll(base64.RawURLEncoding.EncodeToString(id), "-", "x")
	log4j := filepath.Join(h.dir, "conf", "log4j2.xml")
	if err := runTool(java, "-Xmx256m", "-Dlog4j2.configurationFile="+filepath.Join(h.dir, "conf", "tools-log4j2.xml"), "-cp", libs+"/*",
		"kafka.tools.StorageTool", "format", "--cluster-id", cid, "--config", props); err != nil {
		return fmt.Errorf("format W: %w", err)
	}
	heap := os.Getenv("KMIRROR_KAFKA_HEAP")
	if heap == "" {
		heap = "1g"
	}
	args := []string{"netns", "exec", wanNS, java}
	if strings.HasPrefix(heap, "-") {
		args = append(args, strings.Fields(heap)...)
	} else {
		args = append(args, "-Xms"+heap, "-Xmx"+heap)
	}
	// scripts/harness's JVM_PERF_OPTS, so that W runs like A and B.
	args = append(args, "-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20", "-XX:InitiatingHeapOccupancyPercent=35",
		"-XX:+ExplicitGCInvokesConcurrent", "-XX:MaxInlineLevel=15", "-Djava.awt.headless=true",
		"-Dkafka.logs.dir="+filepath.Join(l.dir, "logs"), "-Dlog4j2.configurationFile="+log4j, "-cp", libs+"/*", "kafka.Kafka", props)
	// ip netns exec execs java after entering the namespace, so the child's PID is the broker's JVM: its CPU
	// is measured like A's and B's.
	c, err := startChild(filepath.Join(l.dir, "logs", "stdout.log"), nil, "ip", args...)
	if err != nil {
		return err
	}
	l.broker = c
	l.made = append(l.made, fmt.Sprintf("broker W (pid %d)", c.pid()))
	deadline := time.Now().Add(120 * time.Second)
	for {
		if c.exited() {
			return fmt.Errorf("broker W exited during start-up (logs in %s)", filepath.Join(l.dir, "logs"))
		}
		a, err := kafkabench.NewAdmin(l.bootstrap())
		if err == nil {
			_, err = a.Topics()
			a.Close()
			if err == nil {
				return nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("broker W did not answer within 120 s (logs in %s)", filepath.Join(l.dir, "logs"))
		}
		time.Sleep(time.Second)
	}
}

func (l *wanLink) bootstrap() string { return fmt.Sprintf("%s:%d", wanNSAddr, wanPort) }

// setRTT sets the link's one-way delay to rtt/2 in both directions.
func (l *wanLink) setRTT(rtt int) error {
	if _, err := fmt.Fprintf(l.ctl, "delay %dus\n", rtt*500); err != nil {
		return fmt.Errorf("the delay line: %w", err)
	}
	return nil
}

// down stops W and the delay line (by their PIDs; the TUN devices vanish with it) and removes the namespace.
func (l *wanLink) down() {
	if l.broker != nil {
		if err := l.broker.stop(60 * time.Second); err != nil {
			logf("wan: stop broker W: %v", err)
		}
	}
	if l.link != nil {
		_ = l.ctl.Close()
		_ = l.link.Process.Signal(syscall.SIGTERM)
		select {
		case <-l.linkDone:
		case <-time.After(10 * time.Second):
			_ = l.link.Process.Kill()
			<-l.linkDone
		}
	}
	if slices.Contains(l.made, "namespace "+wanNS) {
		if err := runTool("ip", "netns", "del", wanNS); err != nil {
			logf("wan: %v", err)
		}
	}
	if l.dir != "" {
		_ = os.RemoveAll(l.dir)
	}
	if len(l.made) > 0 {
		logf("wan: removed %s", strings.Join(l.made, ", "))
	}
}

// mm2WanSystem is Java MM2 with the WAN profile; plain "mm2" runs the wan scenario with MM2's defaults.
type mm2WanSystem struct{ mm2System }

func (mm2WanSystem) name() string   { return "mm2-wan" }
func (mm2WanSystem) letter() string { return "N" }

func (b *bench) scenarioWan(ctx context.Context) error {
	if err := wanPrereqs(); err != nil {
		return err
	}
	l := &wanLink{b: b}
	defer l.down()
	// A Ctrl-C during a system call of the set-up still lands in the deferred teardown: the context is the
	// signal's.
	logf("wan: making namespace %s, link %s/%s (%s, MTU %d), broker W on %s", wanNS, wanHostIf, wanNSIf, wanNet, b.cfg.wan.mtu, l.bootstrap())
	if err := l.up(ctx); err != nil {
		return fmt.Errorf("wan set-up: %w", err)
	}
	adminW, err := kafkabench.NewAdmin(l.bootstrap())
	if err != nil {
		return err
	}
	defer adminW.Close()
	b.extraBrokers = append(b.extraBrokers, l.broker.pid())
	b.linkPID = l.link.Process.Pid
	defer func() {
		b.extraBrokers = slices.DeleteFunc(b.extraBrokers, func(p int) bool { return p == l.broker.pid() })
		b.linkPID = 0
	}()

	var systems []system
	for _, s := range b.systems() {
		systems = append(systems, s)
		if s.name() == "mm2" {
			systems = append(systems, mm2WanSystem{})
		}
	}
	a, adminA, bb, adminB := b.a, b.adminA, b.b, b.adminB
	defer func() { b.a, b.adminA, b.b, b.adminB = a, adminA, bb, adminB }()
	for _, layout := range b.cfg.wan.layouts {
		// The layout swaps W in for A or B for the runs: every system, the loader and the watcher then read
		// b.a/b.b and their admin clients as usual.
		b.a, b.adminA, b.b, b.adminB = a, adminA, bb, adminB
		if layout == "remote-source" {
			b.a, b.adminA = l.bootstrap(), adminW
		} else {
			b.b, b.adminB = l.bootstrap(), adminW
		}
		for _, parts := range b.cfg.wan.partitions {
			// Loading goes over the link without delay.
			if err := l.setRTT(0); err != nil {
				return err
			}
			src := fmt.Sprintf("wan-%dp-%db-%s-%d", parts, b.cfg.size, b.cfg.compression, b.cfg.wan.records)
			if err := b.ensureLoaded(ctx, map[string]int{src: parts}, b.cfg.wan.records); err != nil {
				return err
			}
			for _, rtt := range b.cfg.wan.rtts {
				if err := l.setRTT(rtt); err != nil {
					return err
				}
				variant := fmt.Sprintf("%s, %d partition(s), RTT %d ms", layout, parts, rtt)
				for rep := range b.cfg.repeat {
					for _, s := range systems {
						if ctx.Err() != nil {
							return ctx.Err()
						}
						b.wanRun(ctx, s, variant, src, parts, rep, rtt, layout)
					}
				}
			}
		}
	}
	return nil
}

var errCapped = errors.New("capped")

// wanWait samples until everything is replicated, or -wan-max-run after the first record arrived (errCapped):
// the cap counts from the first record because start-up over the link takes long and varies (MM2's JVM,
// its herder and internal topics took 27-40 s on the loaded machine), and -max-run bounds the wait for it.
func (b *bench) wanWait(ctx context.Context, w *watcher) error {
	deadline := w.inst.t0.Add(b.cfg.maxRun)
	for {
		done, err := w.poll(ctx)
		if err != nil || done {
			return err
		}
		last := w.samples[len(w.samples)-1]
		if w.firstT >= 0 && last.T-w.firstT >= b.cfg.wan.maxRun.Seconds() {
			return errCapped
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("nothing replicated after %s", b.cfg.maxRun)
		}
		if err := sleepCtx(ctx, sampleEvery); err != nil {
			return err
		}
	}
}

// wanRun replicates src once with s over the link; a run still going -wan-max-run after its first record is
// stopped and measured over what it did (10% of the records, or the first record, to the last sample).
func (b *bench) wanRun(ctx context.Context, s system, variant, src string, parts, rep, rtt int, layout string) {
	alias := b.alias(s, "wn")
	tasks := b.cfg.wan.tasks
	r := &result{Scenario: "wan", Variant: variant, System: s.name(), Alias: alias, TasksMax: tasks, Partitions: parts,
		Rep: rep, RTTms: rtt, Layout: layout}
	defer func() { b.finish(r) }()
	defer b.cleanup(context.WithoutCancel(ctx), alias)
	topics := map[string]int{src: parts}
	ends, err := b.adminA.EndOffsets(ctx, topics)
	if err != nil {
		r.Error = err.Error()
		return
	}
	f := flow{alias: alias, filter: []string{src}, topics: topics, tasks: tasks, refresh: b.cfg.refresh}
	switch s.name() {
	case "mm2":
		// MM2 with its defaults: no client settings at all (Connect's own producer defaults apply).
		f.consumer = map[string]string{}
	default:
		f.prod, f.consumer = b.wanProducer(), wanConsumer()
	}
	if s.name() != "mm2" {
		r.Linger, r.BatchSize = b.cfg.wan.linger, b.cfg.wan.batch
	}
	b.waitQuiet(ctx)
	logf("wan / %s / %s: starting (alias %s)", variant, s.name(), alias)
	inst, err := s.start(ctx, b, f, alias)
	if err != nil {
		r.Error = err.Error()
		return
	}
	w := b.newWatcher(inst, f, ends)
	err = b.wanWait(ctx, w)
	w.fill(r, b.cfg.size)
	if errors.Is(err, errCapped) {
		// Measured from 10% of the records (or the first record) to the last sample.
		r.Capped, err = true, nil
		r.ThreadCPU = threadCPU(inst.pid)
		for k, v := range r.ThreadCPU {
			r.ThreadCPU[k] = v - w.threads0[k]
		}
		s1, ok := w.crossing(0.1 * float64(w.total))
		if !ok {
			s1, _ = w.crossing(1)
		}
		w.window(r, s1, w.samples[len(w.samples)-1], b.cfg.size)
	}
	b.saveSamples(alias, w.samples)
	if err != nil {
		r.Error = err.Error()
	}
	b.stopInstance(inst, r, alias, closedChan())
}

// wanMarkdown prints the wan table: MB/s per case, with ratios to the C pipe and to MM2 at its defaults.
func (b *bench) wanMarkdown(w func(string, ...any)) {
	vs := b.variants("wan")
	if len(vs) == 0 {
		return
	}
	wp := b.wanProducer()
	w("### WAN (%s records of %d bytes per source topic, tasks.max=%d)\n\n", thousands(float64(b.cfg.wan.records)), b.cfg.size, b.cfg.wan.tasks)
	w("The cluster on the far side is broker W in a network namespace of its own, reached over a point-to-point link (TUN devices, MTU %d) whose delay line holds every packet RTT/2 each way; W has auto-tuned socket buffers. Medians of %d run(s). "+
		"WAN profile (every system but \"Java MM2, defaults\"): consumer %s; producer linger.ms=%s, batch.size=%s, compression.type=%s, send.buffer.bytes=-1, acks=%s, enable.idempotence=%s, max.in.flight=%s. "+
		"\"Java MM2, defaults\" gets no client settings at all. A run still going %s after its first record is stopped and measured from 10%% of the records (or its first record) to then: *capped*. "+
		"Ratios: to the C pipe, and (second) to MM2 with its defaults. brokers cores: A, B and W together, CPU s per s; link cores: the delay line's.\n\n",
		b.cfg.wan.mtu, b.cfg.repeat, kvList(wanConsumer()), wp.Linger, wp.BatchSize, wp.Compression, wp.Acks, wp.Idempotence, wp.InFlight, b.cfg.wan.maxRun)
	w("| layout | partitions | RTT ms | system | tasks | MB/s | records/s | CPU s/GB | peak RSS MB | brokers cores | link cores | other CPU %% |\n")
	w("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, v := range vs {
		bp := b.baseline("wan", v)
		var md float64
		if m := b.find("wan", v, "mm2"); m != nil && m.Error == "" {
			md = m.MBPerS
		}
		for _, sys := range systemOrder {
			r := b.find("wan", v, sys)
			if r == nil {
				continue
			}
			name := systemNames[sys]
			if sys == "mm2" {
				name = "(c) Java MM2, defaults"
			}
			if r.Error != "" {
				name += " ⚠"
			}
			if r.Capped {
				name += " (capped)"
			}
			if r.OtherCPUPct >= 10 {
				name += " (noisy: other load)"
			}
			mb := cell(r.MBPerS, bp.MBPerS, "%.1f")
			if md > 0 && r.MBPerS > 0 {
				mb += fmt.Sprintf(" (%.1f× MM2)", r.MBPerS/md)
			}
			w("| %s | %d | %d | %s | %d | %s | %s | %s | %s | %.2f | %.2f | %.0f |\n", r.Layout, r.Partitions, r.RTTms, name, r.TasksRunning, mb,
				cellInt(r.RecordsPerS, bp.RecordsPerS), cell(r.CPUPerGB, bp.CPUPerGB, "%.2f"), cell(r.PeakRSSMB, bp.PeakRSSMB, "%.0f"),
				r.BrokerCores, r.LinkCores, max(0, r.OtherCPUPct))
		}
	}
	w("\n")
}

func kvList(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var out []string
	for _, k := range keys {
		out = append(out, k+"="+m[k])
	}
	return strings.Join(out, ", ")
}

// wanGoals: issue 15's WAN goal, one partition at 100 ms RTT consuming remotely: ≥ 50 MB/s and ≥ 5× MM2 at
// its defaults.
func (b *bench) wanGoals() []string {
	var out []string
	for _, v := range b.variants("wan") {
		k, m := b.find("wan", v, "kmirror"), b.find("wan", v, "mm2")
		if k == nil || k.MBPerS == 0 || k.Layout != "remote-source" || k.Partitions != 1 || k.RTTms != 100 {
			continue
		}
		g := fmt.Sprintf("%s: kmirror ≥ 50 MB/s: %.1f — %s", v, k.MBPerS, metOrNot(k.MBPerS >= 50))
		if m != nil && m.MBPerS > 0 {
			g += fmt.Sprintf("; ≥ 5× MM2 at its defaults: %.1f× — %s", k.MBPerS/m.MBPerS, metOrNot(k.MBPerS >= 5*m.MBPerS))
		}
		out = append(out, g)
	}
	return out
}

func metOrNot(ok bool) string {
	if ok {
		return "met"
	}
	return "**not met**"
}

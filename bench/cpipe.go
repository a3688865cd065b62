package main

// System "cpipe": the C pipe (bench/cpipe/cpipe.c), a paced consume -> produce loop against librdkafka's C API,
// linked against the static librdkafka that confluent-kafka-go bundles. It is the floor of issue 15: what
// replication costs when record bytes never enter Go. It runs as a child process like the Go pipe and
// kmirror, so its CPU time and peak RSS are measured the same way.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kmirror/kmirror/connectors/kafka/kafkabench"
)

const confluentModule = "github.com/confluentinc/confluent-kafka-go/v2"

// cpipePace is the bound of produced-but-undelivered bytes per partition of a pipeline, in batch.size units:
// the 1.5 × batch.size × partitions. More lets the idempotent producer's busy broker threads starve
// the brokers on 2 cores; less leaves the one ProduceRequest per partition in flight without a next batch.
const cpipePace = 1.5

// buildCPipe compiles bench/cpipe/cpipe.c with cc against the librdkafka.a and rdkafka.h in the
// confluent-kafka-go module the repository uses (the module cache), with the link flags that module's own
// cgo directives use. Building from the module keeps the C pipe on exactly the librdkafka of the Go systems.
func (b *bench) buildCPipe() (string, error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", confluentModule)
	cmd.Dir = b.repo
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("locate %s: %w (run `go mod download` in the repository)", confluentModule, err)
	}
	vendor := filepath.Join(strings.TrimSpace(string(out)), "kafka", "librdkafka_vendor")
	arch := runtime.GOARCH
	if arch != "amd64" && arch != "arm64" {
		return "", fmt.Errorf("the bundled librdkafka has no static library for linux/%s", arch)
	}
	lib := filepath.Join(vendor, "librdkafka_glibc_linux_"+arch+".a")
	if _, err := os.Stat(lib); err != nil {
		return "", fmt.Errorf("the bundled librdkafka: %w", err)
	}
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	bin := filepath.Join(b.out, "cpipe")
	build := exec.Command(cc, "-O2", "-g", "-Wall", "-std=gnu11", "-DLIBRDKAFKA_STATICLIB", "-I", vendor,
		"-o", bin, filepath.Join(b.repo, "bench", "cpipe", "cpipe.c"), lib, "-lm", "-ldl", "-lpthread", "-lrt")
	var eb bytes.Buffer
	build.Stdout, build.Stderr = &eb, &eb
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("build the C pipe (%s; install gcc if cc is missing): %w\n%s", cc, err, tail(eb.String(), 30))
	}
	if s := strings.TrimSpace(eb.String()); s != "" {
		logf("cc: %s", s)
	}
	return bin, nil
}

type cpipeSystem struct{}

func (cpipeSystem) name() string   { return "cpipe" }
func (cpipeSystem) letter() string { return "X" }

// cpipeConfig writes the C pipe's config: exactly the Go pipe's librdkafka properties (confluent-kafka-go's
// own go.* settings left out: they mean nothing to librdkafka), the pacing bound, and the partitions dealt
// round-robin over min(tasks, partitions) pipelines in the Go pipe's order.
func (b *bench) cpipeConfig(f flow) (string, int, error) {
	cons, prod, err := b.pipeProps(f)
	if err != nil {
		return "", 0, err
	}
	for k, v := range keyValues(b.cfg.pipeProducer) {
		prod[k] = v
	}
	cons["client.id"], prod["client.id"] = "kmirror-bench-cpipe", "kmirror-bench-cpipe"
	cons["group.id"] = "kmirror-bench-cpipe"
	var s strings.Builder
	for _, side := range []struct {
		name  string
		props map[string]string
	}{{"consumer", cons}, {"producer", prod}} {
		keys := make([]string, 0, len(side.props))
		for k := range side.props {
			if !strings.HasPrefix(k, "go.") {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			if strings.ContainsAny(side.props[k], "\n") {
				return "", 0, fmt.Errorf("property %s: a newline in its value", k)
			}
			fmt.Fprintf(&s, "%s %s %s\n", side.name, k, side.props[k])
		}
	}
	batch, _ := strconv.Atoi(f.prod.BatchSize)
	fmt.Fprintf(&s, "pace_bytes %d\n", int64(cpipePace*float64(batch)))
	tps := partitionsOf(f.topics)
	n := max(1, min(f.tasks, len(tps)))
	if b.cfg.cpipeWholeTopics {
		n = max(1, min(f.tasks, len(f.topics)))
	}
	topicIndex := map[string]int{}
	for i, tp := range tps {
		pipeline := i % n
		if b.cfg.cpipeWholeTopics {
			if _, ok := topicIndex[tp.Topic]; !ok {
				topicIndex[tp.Topic] = len(topicIndex)
			}
			pipeline = topicIndex[tp.Topic] % n
		}
		fmt.Fprintf(&s, "part %d %s %d %s\n", pipeline, tp.Topic, tp.Partition, f.remote(tp.Topic))
	}
	return s.String(), n, nil
}

func (cpipeSystem) start(ctx context.Context, b *bench, f flow, run string) (*instance, error) {
	if b.cpipeBin == "" {
		return nil, errors.New("the C pipe was not built")
	}
	conf, workers, err := b.cpipeConfig(f)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(b.out, "config", run+".cpipe.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		return nil, err
	}
	// The remote topics are created here rather than in C (the Go pipe creates them itself, inside its
	// measured process): admin calls are no part of the floor, and the run's clock starts before them.
	t0 := time.Now()
	var topics []kafkabench.Topic
	for t, n := range f.topics {
		topics = append(topics, kafkabench.Topic{Name: f.remote(t), Partitions: n})
	}
	if err := b.adminB.CreateTopics(ctx, topics); err != nil {
		return nil, err
	}
	c, err := startChild(filepath.Join(b.out, "logs", run+".log"), nil, b.cpipeBin, path)
	if err != nil {
		return nil, err
	}
	return &instance{pid: c.pid(), t0: t0, stop: func() error { return c.stop(60 * time.Second) },
		tasks: func() int { return workers }}, nil
}

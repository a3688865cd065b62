package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// defaultAdminTimeout bounds an admin operation unless Admin.Timeout says otherwise (Java's default.api.timeout.ms).
const defaultAdminTimeout = 60 * time.Second

// Admin is an admin client for one cluster.
type Admin struct {
	a *ckafka.AdminClient
	// p is the handle the admin client runs on. A plain AdminClient's librdkafka error events go to a queue
	// nobody reads, so an authentication failure would only show as requests timing out; a producer's
	// events channel carries them. nil for an admin derived from a task's consumer or producer
	// (Consumer.Admin, Producer.Admin): the task watches that client's events itself.
	p *ckafka.Producer
	// auth is the last authentication failure librdkafka reported since the last metadata request that
	// succeeded (the cheapest proof that the credentials work again).
	auth atomic.Pointer[ckafka.Error]
	// pending are the requests in flight, ended with the authentication failure when one arrives: a request
	// would otherwise wait for its whole timeout on a connection that cannot succeed.
	mu      sync.Mutex
	pending map[*int]context.CancelCauseFunc
	// Timeout bounds each admin operation, like Java's default.api.timeout.ms.
	Timeout time.Duration
	// closed stops the log forwarding of an admin client of its own (nil for a derived one).
	closed    chan struct{}
	closeOnce sync.Once
}

// NewAdmin creates an admin client from librdkafka properties; librdkafka's log lines go to log.
func NewAdmin(props map[string]string, log *slog.Logger) (*Admin, error) {
	// The admin client runs on a producer handle, whose log lines can come into Go: left to librdkafka they
	// would be written raw to stderr, past the logger's levels and past what it hides.
	logs := make(chan ckafka.LogEvent, 64)
	cm := configMap(props, logs)
	// The producer only carries the admin client: no records, so no delivery reports, and small channels.
	(*cm)["go.delivery.reports"] = false
	(*cm)["go.events.channel.size"] = 100
	(*cm)["go.produce.channel.size"] = 0
	// With sparse connections a standalone admin client's broker rests in INIT once a connection fails, and
	// each lookup of a request waiting for that broker (DescribeTopics, DescribeConfigs: anything sent to the
	// controller or a given broker) asks for a connection at once, bypassing reconnect.backoff.ms: refused →
	// broker state change → the request's lookup again → connect. With its cluster down that loop took
	// about 1.8 cores of this machine's 2 for a worker of 6 C-path tasks (librdkafka 2.11.1). A connection
	// kept wanted retries with the backoff instead. A task's consumer or producer wants its connections
	// anyway, which is why admin clients derived from them never spun.
	(*cm)["enable.sparse.connections"] = false
	p, err := ckafka.NewProducer(cm)
	if err != nil {
		return nil, fmt.Errorf("create admin client: %w", withoutValues(err))
	}
	a, err := ckafka.NewAdminClientFromProducer(p)
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("create admin client: %w", err)
	}
	ad := &Admin{a: a, p: p, Timeout: defaultAdminTimeout, closed: make(chan struct{})}
	go forwardLogs(logs, ad.closed, log)
	go ad.events()
	return ad, nil
}

// events keeps the last authentication failure (IsAuthentication: a failed SASL or TLS handshake, a refused
// client certificate) until the producer is closed. librdkafka reports it as an error event and then
// retries the connection for ever; requests meanwhile just time out as "broker transport failure".
func (a *Admin) events() {
	for ev := range a.p.Events() {
		if e, ok := ev.(ckafka.Error); ok && IsAuthentication(e) {
			a.auth.Store(&e)
			a.mu.Lock()
			for _, cancel := range a.pending {
				cancel(e)
			}
			a.mu.Unlock()
		}
	}
}

// AuthFailure returns the authentication failure librdkafka reported since the last metadata request that
// succeeded, or nil: when a request fails while it is set, the cause is the credentials, not the network.
func (a *Admin) AuthFailure() error {
	if e := a.auth.Load(); e != nil {
		return *e
	}
	return nil
}

// Close releases the client.
func (a *Admin) Close() {
	a.a.Close()
	if a.p != nil {
		a.p.Close()
	}
	if a.closed != nil {
		a.closeOnce.Do(func() { close(a.closed) })
	}
}

// ctx bounds one request by the admin timeout, and ends it early with the authentication failure if
// librdkafka reports one meanwhile (see cause).
func (a *Admin) ctx(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancelTimeout := context.WithTimeout(ctx, a.Timeout)
	ctx, cancel := context.WithCancelCause(ctx)
	key := new(int)
	a.mu.Lock()
	if a.pending == nil {
		a.pending = map[*int]context.CancelCauseFunc{}
	}
	a.pending[key] = cancel
	a.mu.Unlock()
	return ctx, func() {
		a.mu.Lock()
		delete(a.pending, key)
		a.mu.Unlock()
		cancel(nil)
		cancelTimeout()
	}
}

// cause is the error to report for a request made with a context from ctx: the authentication failure
// when that is what ended it, or what made it time out; err otherwise.
func (a *Admin) cause(ctx context.Context, err error) error {
	var kerr ckafka.Error
	if errors.As(context.Cause(ctx), &kerr) && IsAuthentication(kerr) {
		return kerr
	}
	if auth := a.AuthFailure(); auth != nil && (IsRetriable(err) || errors.Is(err, context.DeadlineExceeded)) {
		return auth
	}
	return err
}

// Topics returns every topic of the cluster with its partition count.
func (a *Admin) Topics(ctx context.Context) (map[string]int, error) {
	md, err := a.metadata(ctx, nil)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int, len(md.Topics))
	for name, t := range md.Topics {
		if t.Error.Code() == ckafka.ErrUnknownTopicOrPart {
			continue
		}
		out[name] = len(t.Partitions)
	}
	return out, nil
}

// PartitionCount returns the number of partitions of topic; an error satisfying IsUnknownTopic if it is missing.
func (a *Admin) PartitionCount(ctx context.Context, topic string) (int, error) {
	md, err := a.metadata(ctx, &topic)
	if err != nil {
		return 0, err
	}
	t, ok := md.Topics[topic]
	if !ok {
		return 0, fmt.Errorf("describe topic %s: %w", topic, ckafka.NewError(ckafka.ErrUnknownTopicOrPart, "unknown topic", false))
	}
	if t.Error.Code() != ckafka.ErrNoError {
		return 0, fmt.Errorf("describe topic %s: %w", topic, t.Error)
	}
	return len(t.Partitions), nil
}

// metadata asks for the metadata of one topic (or all when topic is nil), retrying transient errors until the
// admin timeout: GetMetadata itself does not take a context.
func (a *Admin) metadata(ctx context.Context, topic *string) (*ckafka.Metadata, error) {
	deadline := time.Now().Add(a.Timeout)
	for attempt := 0; ; attempt++ {
		remaining := time.Until(deadline)
		step := min(remaining, 10*time.Second)
		if attempt == 0 {
			// A short first attempt: a failed SASL handshake shows within it (see AuthFailure), and a
			// request that only needed longer is simply sent again with the full step.
			step = min(step, time.Second)
		}
		md, err := a.a.GetMetadata(topic, topic == nil, max(int(step.Milliseconds()), 1))
		if err == nil {
			a.auth.Store(nil)
			return md, nil
		}
		if auth := a.AuthFailure(); auth != nil {
			// Retrying cannot fix credentials: report the cause, not the timeout it produces.
			return nil, fmt.Errorf("read cluster metadata: %w", auth)
		}
		if !IsRetriable(err) || time.Now().After(deadline) || ctx.Err() != nil {
			return nil, fmt.Errorf("read cluster metadata: %w", err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("read cluster metadata: %w", ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// NewTopic describes a topic to create.
type NewTopic struct {
	Name              string
	Partitions        int
	ReplicationFactor int // -1 for the broker default
	Config            map[string]string
}

// createTopicsMaxPartitions bounds the partitions of one CreateTopics request. A KRaft controller refuses a
// request that needs more than 10,000 metadata records at once ("Unable to perform excessively large batch
// operation", Kafka's MAX_RECORDS_PER_USER_OP): one per partition, one per topic and one per config entry.
// 1,000 topics of 10 partitions in one request failed every topic of it.
const createTopicsMaxPartitions = 4000

// CreateTopics creates topics and returns the per-topic errors (nil for success). The returned error is for the
// request as a whole. Many topics are created in several requests of at most createTopicsMaxPartitions
// partitions each; each request has the admin's timeout.
func (a *Admin) CreateTopics(ctx context.Context, topics []NewTopic) (map[string]error, error) {
	if len(topics) == 0 {
		return nil, nil
	}
	out := make(map[string]error, len(topics))
	for _, chunk := range createTopicsChunks(topics, createTopicsMaxPartitions) {
		if err := a.createTopics(ctx, chunk, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// createTopicsChunks splits topics, in order, into runs of at most maxPartitions partitions (a topic larger than
// that is a run of its own).
func createTopicsChunks(topics []NewTopic, maxPartitions int) [][]NewTopic {
	var chunks [][]NewTopic
	start, n := 0, 0
	for i, t := range topics {
		p := max(t.Partitions, 1) + len(t.Config) // -1 (the broker default) counts as one
		if i > start && n+p > maxPartitions {
			chunks = append(chunks, topics[start:i])
			start, n = i, 0
		}
		n += p
	}
	return append(chunks, topics[start:])
}

func (a *Admin) createTopics(ctx context.Context, topics []NewTopic, out map[string]error) error {
	specs := make([]ckafka.TopicSpecification, 0, len(topics))
	for _, t := range topics {
		specs = append(specs, ckafka.TopicSpecification{Topic: t.Name, NumPartitions: t.Partitions, ReplicationFactor: t.ReplicationFactor, Config: t.Config})
	}
	ctx, cancel := a.ctx(ctx)
	defer cancel()
	res, err := a.a.CreateTopics(ctx, specs, ckafka.SetAdminOperationTimeout(a.Timeout))
	if err != nil {
		return fmt.Errorf("create topics: %w", a.cause(ctx, err))
	}
	for _, r := range res {
		if r.Error.Code() != ckafka.ErrNoError {
			out[r.Topic] = r.Error
		} else {
			out[r.Topic] = nil
		}
	}
	return nil
}

// CreatePartitions grows topic to total partitions.
func (a *Admin) CreatePartitions(ctx context.Context, topic string, total int) error {
	ctx, cancel := a.ctx(ctx)
	defer cancel()
	res, err := a.a.CreatePartitions(ctx, []ckafka.PartitionsSpecification{{Topic: topic, IncreaseTo: total}},
		ckafka.SetAdminOperationTimeout(a.Timeout))
	if err != nil {
		return fmt.Errorf("create partitions of %s: %w", topic, a.cause(ctx, err))
	}
	for _, r := range res {
		if r.Error.Code() != ckafka.ErrNoError {
			return fmt.Errorf("create partitions of %s: %w", topic, r.Error)
		}
	}
	return nil
}

// DeleteTopics deletes topics (used by tests and tools).
func (a *Admin) DeleteTopics(ctx context.Context, topics []string) error {
	ctx, cancel := a.ctx(ctx)
	defer cancel()
	res, err := a.a.DeleteTopics(ctx, topics, ckafka.SetAdminOperationTimeout(a.Timeout))
	if err != nil {
		return fmt.Errorf("delete topics: %w", a.cause(ctx, err))
	}
	var errs []error
	for _, r := range res {
		if r.Error.Code() != ckafka.ErrNoError {
			errs = append(errs, fmt.Errorf("delete topic %s: %w", r.Topic, r.Error))
		}
	}
	return errors.Join(errs...)
}

// ConfigSource says where a topic config value comes from.
type ConfigSource string

// Config sources, as Kafka's ConfigEntry.ConfigSource.
const (
	SourceDefault              ConfigSource = "DEFAULT_CONFIG"
	SourceTopic                ConfigSource = "DYNAMIC_TOPIC_CONFIG"
	SourceDynamicBroker        ConfigSource = "DYNAMIC_BROKER_CONFIG"
	SourceDynamicDefaultBroker ConfigSource = "DYNAMIC_DEFAULT_BROKER_CONFIG"
	SourceStaticBroker         ConfigSource = "STATIC_BROKER_CONFIG"
	SourceUnknown              ConfigSource = "UNKNOWN"
)

// ConfigEntry is one topic config value.
type ConfigEntry struct {
	Name      string
	Value     string
	Source    ConfigSource
	ReadOnly  bool
	Sensitive bool
}

// TopicConfigs describes the configs of topics.
func (a *Admin) TopicConfigs(ctx context.Context, topics []string) (map[string][]ConfigEntry, error) {
	if len(topics) == 0 {
		return nil, nil
	}
	res := make([]ckafka.ConfigResource, 0, len(topics))
	for _, t := range topics {
		res = append(res, ckafka.ConfigResource{Type: ckafka.ResourceTopic, Name: t})
	}
	ctx, cancel := a.ctx(ctx)
	defer cancel()
	results, err := a.a.DescribeConfigs(ctx, res, ckafka.SetAdminRequestTimeout(a.Timeout))
	if err != nil {
		return nil, fmt.Errorf("describe topic configs: %w", a.cause(ctx, err))
	}
	out := make(map[string][]ConfigEntry, len(results))
	for _, r := range results {
		if r.Error.Code() != ckafka.ErrNoError {
			if r.Error.Code() == ckafka.ErrUnknownTopicOrPart {
				continue
			}
			return nil, fmt.Errorf("describe configs of %s: %w", r.Name, r.Error)
		}
		entries := make([]ConfigEntry, 0, len(r.Config))
		for _, e := range r.Config {
			entries = append(entries, ConfigEntry{Name: e.Name, Value: e.Value, Source: configSource(e.Source), ReadOnly: e.IsReadOnly, Sensitive: e.IsSensitive})
		}
		out[r.Name] = entries
	}
	return out, nil
}

func configSource(s ckafka.ConfigSource) ConfigSource {
	switch s {
	case ckafka.ConfigSourceDefault:
		return SourceDefault
	case ckafka.ConfigSourceDynamicTopic:
		return SourceTopic
	case ckafka.ConfigSourceDynamicBroker:
		return SourceDynamicBroker
	case ckafka.ConfigSourceDynamicDefaultBroker:
		return SourceDynamicDefaultBroker
	case ckafka.ConfigSourceStaticBroker:
		return SourceStaticBroker
	}
	return SourceUnknown
}

// ConfigOp is one incremental topic config change: set Name to Value, or reset it to the default with Delete.
type ConfigOp struct {
	Name   string
	Value  string
	Delete bool
}

// AlterTopicConfigs applies incremental config changes to topic.
func (a *Admin) AlterTopicConfigs(ctx context.Context, topic string, ops []ConfigOp) error {
	if len(ops) == 0 {
		return nil
	}
	entries := make([]ckafka.ConfigEntry, 0, len(ops))
	for _, op := range ops {
		t := ckafka.AlterConfigOpTypeSet
		if op.Delete {
			t = ckafka.AlterConfigOpTypeDelete
		}
		entries = append(entries, ckafka.ConfigEntry{Name: op.Name, Value: op.Value, IncrementalOperation: t})
	}
	ctx, cancel := a.ctx(ctx)
	defer cancel()
	res, err := a.a.IncrementalAlterConfigs(ctx, []ckafka.ConfigResource{{Type: ckafka.ResourceTopic, Name: topic, Config: entries}},
		ckafka.SetAdminRequestTimeout(a.Timeout))
	if err != nil {
		return fmt.Errorf("alter configs of %s: %w", topic, a.cause(ctx, err))
	}
	for _, r := range res {
		if r.Error.Code() != ckafka.ErrNoError {
			return fmt.Errorf("alter configs of %s: %w", topic, r.Error)
		}
	}
	return nil
}

// ClusterID returns the cluster's id.
func (a *Admin) ClusterID(ctx context.Context) (string, error) {
	ctx, cancel := a.ctx(ctx)
	defer cancel()
	id, err := a.a.ClusterID(ctx)
	if err != nil {
		return "", fmt.Errorf("read cluster id: %w", a.cause(ctx, err))
	}
	return id, nil
}

// DeleteRecordsBefore deletes the records of a partition below offset, as retention would (used by tests and
// tools; kmirror never deletes source data).
func (a *Admin) DeleteRecordsBefore(ctx context.Context, topic string, partition int32, offset int64) error {
	ctx, cancel := a.ctx(ctx)
	defer cancel()
	res, err := a.a.DeleteRecords(ctx, []ckafka.TopicPartition{{Topic: &topic, Partition: partition, Offset: ckafka.Offset(offset)}},
		ckafka.SetAdminRequestTimeout(a.Timeout))
	if err != nil {
		return fmt.Errorf("delete records of %s [%d] before %d: %w", topic, partition, offset, a.cause(ctx, err))
	}
	for _, r := range res.DeleteRecordsResults {
		if r.TopicPartition.Error != nil {
			return fmt.Errorf("delete records of %s [%d] before %d: %w", topic, partition, offset, r.TopicPartition.Error)
		}
	}
	return nil
}

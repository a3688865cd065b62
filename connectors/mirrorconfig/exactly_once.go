package mirrorconfig

import "fmt"

// ExactlyOnceSourceSupport is a worker's exactly.once.source.support (Connect's DistributedConfig), given to
// kmirror as --exactly-once-source-support. Connect's two-step roll-out has three values: "preparing" makes a
// Connect leader write its config topic transactionally but leaves source tasks as they are, so for kmirror
// (no config topic) it is the same as "disabled"; only "enabled" runs source tasks with transactions.
type ExactlyOnceSourceSupport string

// The values of exactly.once.source.support.
const (
	ExactlyOnceSourceDisabled  ExactlyOnceSourceSupport = "disabled"
	ExactlyOnceSourcePreparing ExactlyOnceSourceSupport = "preparing"
	ExactlyOnceSourceEnabled   ExactlyOnceSourceSupport = "enabled"
)

// ParseExactlyOnceSourceSupport reads a value case-insensitively, as Connect's validator does; "" is the
// default, disabled.
func ParseExactlyOnceSourceSupport(s string) (ExactlyOnceSourceSupport, error) {
	if v, ok := ParseChoice(s, ExactlyOnceSourceDisabled, ExactlyOnceSourceDisabled, ExactlyOnceSourcePreparing, ExactlyOnceSourceEnabled); ok {
		return v, nil
	}
	return "", fmt.Errorf("invalid exactly-once source support %q: must be one of disabled, preparing, enabled", s)
}

// Enabled is DistributedConfig.exactlyOnceSourceEnabled: source tasks use transactions only when "enabled".
func (s ExactlyOnceSourceSupport) Enabled() bool { return s == ExactlyOnceSourceEnabled }

// Worker is what a validation needs to know about the worker that answers it; Connect's preflight checks
// depend on it.
type Worker struct {
	ExactlyOnceSource ExactlyOnceSourceSupport
}

// The values of transaction.boundary (SourceTask.TransactionBoundary) and exactly.once.support
// (SourceConnectorConfig.ExactlyOnceSupportLevel), as kmirror reads them: lower case.
const (
	TransactionBoundaryPoll      = "poll"
	TransactionBoundaryInterval  = "interval"
	TransactionBoundaryConnector = "connector"
	ExactlyOnceRequested         = "requested"
	ExactlyOnceRequired          = "required"
)

// transactionalIDMessage explains why a transactional.id for the replication producer is refused.
const transactionalIDMessage = "kmirror sets the replication producer's transactional.id itself when the worker has " +
	"exactly-once source support enabled (kmirror-<connector>-<task>, the same for every owner of a task, so that a " +
	"new owner's initTransactions fences the old one); without exactly-once support a transactional producer would " +
	"fail every send. Remove this setting"

// transactionalIDKeys are the config keys that reach the replication producer's transactional.id: its prefix
// chain target.cluster. -> producer. -> target.producer. -> producer.override. (package clientconfig).
func transactionalIDKeys() []string {
	return []string{"producer.override.transactional.id", "target.producer.transactional.id",
		"producer.transactional.id", "target.cluster.transactional.id"}
}

// ConsumerUsesReadCommitted is MirrorSourceConnector.consumerUsesReadCommitted on a stored config: whether the
// replication consumer's isolation.level (consumer.*, overridden by source.consumer.*) is read_committed.
// MirrorSourceConnector.exactlyOnceSupport answers SUPPORTED exactly then.
func ConsumerUsesReadCommitted(config map[string]string) bool {
	props := make(map[string]*string, 2)
	for _, k := range []string{"consumer.isolation.level", "source.consumer.isolation.level"} {
		if v, ok := config[k]; ok {
			props[k] = &v
		}
	}
	return consumerUsesReadCommitted(props)
}

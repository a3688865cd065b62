package clientconfig

// Role is one of the Kafka clients an MM2 connector builds. The role decides the
// prefix chain that feeds the client, the client kind (consumer, producer or
// admin) whose keys are accepted, and the defaults and forced settings.
type Role int

const (
	// ReplicationConsumer reads the replicated topics on the source cluster.
	// Chain: source.cluster. -> consumer. -> source.consumer.
	ReplicationConsumer Role = iota
	// ReplicationProducer writes replicated records to the target cluster. In Java
	// it is the Connect worker's task producer, so its chain ends with the
	// connector's producer.override. keys:
	// target.cluster. -> producer. -> target.producer. -> producer.override.
	ReplicationProducer
	// OffsetSyncsProducer writes offset syncs on the cluster named by
	// offset-syncs.topic.location (source by default).
	OffsetSyncsProducer
	// HeartbeatsProducer writes heartbeats to the target cluster. Like the
	// replication producer it is a Connect task producer and uses the same chain.
	HeartbeatsProducer
	// SourceAdmin is the admin client on the source cluster.
	SourceAdmin
	// TargetAdmin is the admin client on the target cluster.
	TargetAdmin
	// OffsetSyncsAdmin manages the offset-syncs topic on the cluster named by
	// offset-syncs.topic.location.
	OffsetSyncsAdmin
	// OffsetSyncsConsumer reads the offset-syncs topic for the checkpoint
	// connector, on the cluster named by offset-syncs.topic.location.
	OffsetSyncsConsumer
	// CheckpointsConsumer reads the checkpoints topic on the target cluster.
	// Chain: target.cluster. -> consumer. -> target.consumer.
	CheckpointsConsumer
	// CheckpointsProducer writes checkpoints to the target cluster; a Connect
	// task producer with the same chain as ReplicationProducer.
	CheckpointsProducer
)

// String names the role for logs and errors.
func (r Role) String() string {
	switch r {
	case ReplicationConsumer:
		return "replication consumer"
	case ReplicationProducer:
		return "replication producer"
	case OffsetSyncsProducer:
		return "offset-syncs producer"
	case HeartbeatsProducer:
		return "heartbeats producer"
	case SourceAdmin:
		return "source admin"
	case TargetAdmin:
		return "target admin"
	case OffsetSyncsAdmin:
		return "offset-syncs admin"
	case OffsetSyncsConsumer:
		return "offset-syncs consumer"
	case CheckpointsConsumer:
		return "checkpoints consumer"
	case CheckpointsProducer:
		return "checkpoints producer"
	}
	return "unknown role"
}

// clientKind is the Java client class a role is built as; it decides which Java
// keys and which librdkafka properties (C, P or *) the client accepts.
type clientKind int

const (
	kindConsumer clientKind = iota
	kindProducer
	kindAdmin
)

func (k clientKind) String() string {
	switch k {
	case kindConsumer:
		return "consumer"
	case kindProducer:
		return "producer"
	}
	return "admin"
}

func (r Role) kind() clientKind {
	switch r {
	case ReplicationConsumer, OffsetSyncsConsumer, CheckpointsConsumer:
		return kindConsumer
	case ReplicationProducer, OffsetSyncsProducer, HeartbeatsProducer, CheckpointsProducer:
		return kindProducer
	}
	return kindAdmin
}

// connectProducer reports whether Java runs this client as a Connect task
// producer (configured by the worker and producer.override.) rather than as a
// client MM2 builds itself.
func (r Role) connectProducer() bool {
	return r == ReplicationProducer || r == HeartbeatsProducer || r == CheckpointsProducer
}

package clientconfig

import "strings"

// kindSet is a set of client kinds, as a bit mask.
type kindSet uint8

const (
	onConsumer kindSet = 1 << kindConsumer
	onProducer kindSet = 1 << kindProducer
	onAdmin    kindSet = 1 << kindAdmin
	onAll              = onConsumer | onProducer | onAdmin
)

func (s kindSet) has(k clientKind) bool { return s&(1<<k) != 0 }

// javaKeys lists every key the Java clients of Kafka 3.9 to 4.1 define, with
// the client kinds that define it (ProducerConfig, ConsumerConfig,
// AdminClientConfig, plus the SSL and SASL keys all three share). Whether a key
// is translated, dropped or rejected is decided by the translator; this table
// only says which names are Java names, so that they are never mistaken for
// librdkafka pass-through names, and which client may receive them.
var javaKeys = map[string]kindSet{
	// CommonClientConfigs, present on every client.
	"bootstrap.servers":                        onAll,
	"client.id":                                onAll,
	"client.dns.lookup":                        onAll,
	"send.buffer.bytes":                        onAll,
	"receive.buffer.bytes":                     onAll,
	"connections.max.idle.ms":                  onAll,
	"reconnect.backoff.ms":                     onAll,
	"reconnect.backoff.max.ms":                 onAll,
	"retry.backoff.ms":                         onAll,
	"retry.backoff.max.ms":                     onAll,
	"socket.connection.setup.timeout.ms":       onAll,
	"socket.connection.setup.timeout.max.ms":   onAll,
	"metadata.max.age.ms":                      onAll,
	"request.timeout.ms":                       onAll,
	"metadata.recovery.strategy":               onAll,
	"metadata.recovery.rebootstrap.trigger.ms": onAll,
	"enable.metrics.push":                      onAll,
	"metric.reporters":                         onAll,
	"metrics.sample.window.ms":                 onAll,
	"metrics.num.samples":                      onAll,
	"metrics.recording.level":                  onAll,
	"auto.include.jmx.reporter":                onAll,
	"security.protocol":                        onAll,
	"security.providers":                       onAll,
	"client.rack":                              onConsumer,
	"default.api.timeout.ms":                   onConsumer | onAdmin,
	"retries":                                  onProducer | onAdmin,
	"interceptor.classes":                      onConsumer | onProducer,

	// AdminClientConfig.
	"bootstrap.controllers": onAdmin,

	// ProducerConfig.
	"acks":                                     onProducer,
	"enable.idempotence":                       onProducer,
	"linger.ms":                                onProducer,
	"batch.size":                               onProducer,
	"buffer.memory":                            onProducer,
	"max.block.ms":                             onProducer,
	"compression.type":                         onProducer,
	"compression.gzip.level":                   onProducer,
	"compression.lz4.level":                    onProducer,
	"compression.zstd.level":                   onProducer,
	"max.request.size":                         onProducer,
	"delivery.timeout.ms":                      onProducer,
	"max.in.flight.requests.per.connection":    onProducer,
	"metadata.max.idle.ms":                     onProducer,
	"partitioner.class":                        onProducer,
	"partitioner.ignore.keys":                  onProducer,
	"partitioner.adaptive.partitioning.enable": onProducer,
	"partitioner.availability.timeout.ms":      onProducer,
	"transactional.id":                         onProducer,
	"transaction.timeout.ms":                   onProducer,
	"transaction.two.phase.commit.enable":      onProducer,
	"key.serializer":                           onProducer,
	"value.serializer":                         onProducer,

	// ConsumerConfig.
	"group.id":                      onConsumer,
	"group.instance.id":             onConsumer,
	"session.timeout.ms":            onConsumer,
	"heartbeat.interval.ms":         onConsumer,
	"partition.assignment.strategy": onConsumer,
	"group.protocol":                onConsumer,
	"group.remote.assignor":         onConsumer,
	"enable.auto.commit":            onConsumer,
	"auto.commit.interval.ms":       onConsumer,
	"auto.offset.reset":             onConsumer,
	"fetch.min.bytes":               onConsumer,
	"fetch.max.bytes":               onConsumer,
	"fetch.max.wait.ms":             onConsumer,
	"max.partition.fetch.bytes":     onConsumer,
	"max.poll.records":              onConsumer,
	"max.poll.interval.ms":          onConsumer,
	"check.crcs":                    onConsumer,
	"exclude.internal.topics":       onConsumer,
	"isolation.level":               onConsumer,
	"allow.auto.create.topics":      onConsumer,
	"key.deserializer":              onConsumer,
	"value.deserializer":            onConsumer,
	"internal.leave.group.on.close": onConsumer,
	"internal.throw.on.fetch.stable.offset.unsupported": onConsumer,
	"share.acknowledgement.mode":                        onConsumer,

	// SslConfigs.
	"ssl.protocol":                          onAll,
	"ssl.provider":                          onAll,
	"ssl.cipher.suites":                     onAll,
	"ssl.enabled.protocols":                 onAll,
	"ssl.keystore.type":                     onAll,
	"ssl.keystore.key":                      onAll,
	"ssl.keystore.certificate.chain":        onAll,
	"ssl.truststore.certificates":           onAll,
	"ssl.keystore.location":                 onAll,
	"ssl.keystore.password":                 onAll,
	"ssl.key.password":                      onAll,
	"ssl.truststore.type":                   onAll,
	"ssl.truststore.location":               onAll,
	"ssl.truststore.password":               onAll,
	"ssl.keymanager.algorithm":              onAll,
	"ssl.trustmanager.algorithm":            onAll,
	"ssl.endpoint.identification.algorithm": onAll,
	"ssl.secure.random.implementation":      onAll,
	"ssl.engine.factory.class":              onAll,

	// SaslConfigs.
	"sasl.mechanism":                                      onAll,
	"sasl.jaas.config":                                    onAll,
	"sasl.client.callback.handler.class":                  onAll,
	"sasl.login.callback.handler.class":                   onAll,
	"sasl.login.class":                                    onAll,
	"sasl.kerberos.service.name":                          onAll,
	"sasl.kerberos.kinit.cmd":                             onAll,
	"sasl.kerberos.ticket.renew.window.factor":            onAll,
	"sasl.kerberos.ticket.renew.jitter":                   onAll,
	"sasl.kerberos.min.time.before.relogin":               onAll,
	"sasl.login.refresh.window.factor":                    onAll,
	"sasl.login.refresh.window.jitter":                    onAll,
	"sasl.login.refresh.min.period.seconds":               onAll,
	"sasl.login.refresh.buffer.seconds":                   onAll,
	"sasl.login.connect.timeout.ms":                       onAll,
	"sasl.login.read.timeout.ms":                          onAll,
	"sasl.login.retry.backoff.ms":                         onAll,
	"sasl.login.retry.backoff.max.ms":                     onAll,
	"sasl.oauthbearer.scope.claim.name":                   onAll,
	"sasl.oauthbearer.sub.claim.name":                     onAll,
	"sasl.oauthbearer.token.endpoint.url":                 onAll,
	"sasl.oauthbearer.jwks.endpoint.url":                  onAll,
	"sasl.oauthbearer.jwks.endpoint.refresh.ms":           onAll,
	"sasl.oauthbearer.jwks.endpoint.retry.backoff.ms":     onAll,
	"sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms": onAll,
	"sasl.oauthbearer.clock.skew.seconds":                 onAll,
	"sasl.oauthbearer.expected.audience":                  onAll,
	"sasl.oauthbearer.expected.issuer":                    onAll,
	"sasl.oauthbearer.header.urlencode":                   onAll,
	"sasl.oauthbearer.jwt.retriever.class":                onAll,
	"sasl.oauthbearer.jwt.validator.class":                onAll,
	"sasl.oauthbearer.scope":                              onAll,
	"sasl.oauthbearer.client.credentials.client.id":       onAll,
	"sasl.oauthbearer.client.credentials.client.secret":   onAll,
	"sasl.oauthbearer.assertion.algorithm":                onAll,
	"sasl.oauthbearer.assertion.claim.aud":                onAll,
	"sasl.oauthbearer.assertion.claim.exp.seconds":        onAll,
	"sasl.oauthbearer.assertion.claim.iss":                onAll,
	"sasl.oauthbearer.assertion.claim.jti.include":        onAll,
	"sasl.oauthbearer.assertion.claim.nbf.seconds":        onAll,
	"sasl.oauthbearer.assertion.claim.sub":                onAll,
	"sasl.oauthbearer.assertion.file":                     onAll,
	"sasl.oauthbearer.assertion.private.key.file":         onAll,
	"sasl.oauthbearer.assertion.private.key.passphrase":   onAll,
	"sasl.oauthbearer.assertion.template.file":            onAll,
}

// javaKeyKinds reports the client kinds that define a Java key; ok is false for
// names that are not Java client keys. metrics.context.<anything> is a Java
// key family on every client.
func javaKeyKinds(key string) (kinds kindSet, ok bool) {
	if strings.HasPrefix(key, "metrics.context.") {
		return onAll, true
	}
	kinds, ok = javaKeys[key]
	return kinds, ok
}

// Package clientconfig turns the client settings of an MM2 connector config,
// written with Java Kafka client names, into librdkafka properties.
//
// # Two steps
//
// Resolve builds the Java-named properties of one client (a Role) by MM2's
// prefix chain: the cluster's connection keys (source.cluster.* or
// target.cluster.*, filtered to bootstrap.servers, security.protocol, ssl.*
// and sasl.*), then the generic client prefix (consumer., producer., admin.),
// then the cluster-specific one (source.consumer., target.producer., ...),
// then, for the Connect task producers, producer.override.; later layers win.
// Keys that are connector settings in their own right, such as
// consumer.poll.timeout.ms, never reach a client. ClientID and Label then
// build MM2's client.id around the user's.
//
// Translate maps those properties to librdkafka, one key at a time, through a
// whitelist taken from the mapping reference (client-config-mapping.md). Each
// Java key is
//
//   - passed on, under the same name or renamed (fetch.max.wait.ms becomes
//     fetch.wait.max.ms, metadata.max.age.ms becomes
//     topic.metadata.refresh.interval.ms), with Java's value range checked and
//     clamped to librdkafka's where the two differ;
//   - converted (buffer.memory in bytes becomes queue.buffering.max.kbytes,
//     a JKS trust store becomes PEM in ssl.ca.pem, sasl.jaas.config becomes
//     sasl.username and sasl.password, ...);
//   - kept for the application where librdkafka has no such knob
//     (max.poll.records, max.block.ms, default.api.timeout.ms: see Config);
//   - dropped, when it is a known Java key whose absence changes nothing that
//     is replicated or how: metrics reporters, serializers, JSSE algorithm
//     names, Kerberos tuning, broker-side token validation. Dropped keys are
//     listed in Config.Dropped;
//   - rejected, when it asks for something librdkafka cannot do and ignoring
//     it would change behaviour: interceptors, custom partitioners and
//     assignors, GSSAPI (the bundled librdkafka has no Kerberos), JKS key
//     stores, TLS versions below 1.2.
//
// A key that is neither a Java client key nor a librdkafka property is an
// error. librdkafka names that the Java clients do not have are passed
// through (after a check of their value against librdkafka's range), so
// operators can tune librdkafka-only knobs such as
// source.consumer.queued.max.messages.kbytes; a Java name always means the
// Java setting, never the librdkafka property of the same name.
//
// # Why reject rather than ignore
//
// Java's clients ignore unknown keys with a log line, and MM2 relies on that.
// kmirror does not: an operator who misspells fetch.max.wait.ms, or relies on
// an interceptor that filters records, would otherwise get a replicator that
// quietly does something else. So anything kmirror cannot honour is a
// validation error that names the connector key, and only keys known to be
// without effect are dropped.
//
// # Defaults
//
// Where librdkafka's default differs from Java's in a way that changes what is
// replicated or whether it fails, Java's default is injected:
// isolation.level=read_uncommitted (except on the replication consumer, which
// reads committed records only, on purpose: aborted source transactions are
// never copied), message.max.bytes=1048576 (Java's
// max.request.size), max.in.flight 5, idempotence by Java's rules,
// connections.max.idle.ms, Java's faster reconnect backoff, SO_KEEPALIVE, and
// Java's murmur2 partitioner. Defaults that only affect throughput (linger.ms,
// batch.size, socket buffers) are librdkafka's. The Connect task producers
// (replication, heartbeats, checkpoints) are idempotent, acks=all, and never
// time out a queued record. MM2's consumers never commit: they get a
// synthetic group.id built from their client.id and auto-commit off.
//
// The replication producer must keep each partition's delivery reports in
// produce order, because a source task matches them to source offsets by
// position: enable.idempotence=false with more than one request in flight is
// rejected, whatever retries says (see checkDeliveryOrder).
//
// ssl.* settings are only translated for SSL and SASL_SSL, sasl.* only for
// SASL_PLAINTEXT and SASL_SSL; otherwise they are dropped, as Java ignores
// them, and a key store that would never be opened cannot fail the config.
//
// # Files
//
// A client setting may name a file only inside the directories of Options.Files (--allowed-file-dirs):
// every path that would reach librdkafka, and every store file kmirror reads itself, is checked first (see
// package fileaccess), and a path elsewhere gets one error text, whether the file exists or not, so that
// validation cannot be used to explore the server's files. Inside those directories, Translate reads the trust and key store files named in the config, to learn
// their real format (JDK 9+ opens PKCS12 files declared as JKS and the
// reverse): a JKS trust store is read and passed as PEM, a PKCS12 key store is
// passed to librdkafka as is, a JKS key store's private key is recovered (Sun's
// key protection) and passed with its chain as PEM (ssl.key.pem,
// ssl.certificate.pem), and a PKCS12 trust store is rejected with the openssl
// command that converts it.
//
// # Config provider references
//
// Values may hold Connect's config provider references (${env:VAR}, ${file:/path:key},
// ${directory:/dir:file}; see package configprovider). Validate checks them without resolving anything and
// leaves the checks of their values to the client's start; Options.Client resolves them when a connector
// or task builds its client, and keeps resolved values out of its errors.
package clientconfig

// Package connectors is MirrorMaker 2 for kmirror's runtime. Its three connector plugins live in packages of
// their own, each a connectors.Plugin the Registry here creates connectors and tasks through:
//
//   - source: MirrorSourceConnector and its task, the replication pipeline (Go and C data paths, exactly-once);
//   - checkpoint: MirrorCheckpointConnector, consumer group offset translation;
//   - heartbeat: MirrorHeartbeatConnector.
//
// This package holds only what the three share: the Registry and the Plugin contract, the parsed Config, the
// status of a connector's failing jobs, the topic recorder, the job backoff, and the producer settings and
// topics every connector needs. It imports none of them; they import it. MM2's semantics come from package
// mirror, its config definitions from mirrorconfig, the Java-to-librdkafka client mapping from clientconfig,
// and only the wrappers in package kafka touch librdkafka.
package connectors

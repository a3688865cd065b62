// Package connectors is MirrorMaker 2 for kmirror's runtime: the three MM2 connector plugins
// (MirrorSourceConnector, MirrorCheckpointConnector, MirrorHeartbeatConnector) as tasks.Connector and
// tasks.Task implementations, built from MM2's semantics (package mirror), its config definitions (package
// mirrorconfig), the Java-to-librdkafka client mapping (package clientconfig) and the librdkafka wrappers
// (package kafka).
package connectors

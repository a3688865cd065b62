// Package mm2file reads MirrorMaker 2's dedicated-mode configuration (the mm2.properties of
// connect-mirror-maker.sh) with MirrorMakerConfig's rules of Kafka 4.1.1 and turns it into the
// connector configs kmirror declares.
//
// # What MM2 does with the file
//
// The file is read as java.util.Properties (ISO-8859-1, # and ! comments, continuations). From it:
//
//   - clusters lists the aliases. Every ordered pair (s,t) of distinct aliases gets a herder when
//     "s->t.enabled" is true or heartbeats are on for the pair ("s->t.emit.heartbeats.enabled", else
//     top-level emit.heartbeats.enabled, else true): ClusterPairs. --clusters keeps the herders whose
//     target it lists; none left is MM2's "No source->target replication flows.": Herders.
//   - Each herder runs MirrorSourceConnector, MirrorCheckpointConnector and MirrorHeartbeatConnector with
//     the config of MirrorMakerConfig.connectorBaseConfig (BaseConfig): top-level keys that one of the three
//     connectors defines, config.providers.* and replication.policy*; then the source cluster's "<s>.*"
//     keys as source.cluster.<k> (client-prefixed ones as source.<k>), the target's likewise; name,
//     connector.class and the aliases if absent; the "s->t.*" overrides; enabled=false if absent. A cluster's
//     bootstrap.servers, security.protocol, ssl.* and sasl.* keys (and the top-level ones, as fallbacks) are
//     copied to its producer., consumer. and admin. forms (clusterProps).
//
// # What kmirror declares
//
// Connector configs are BaseConfig's exactly, except their name: MM2 names the three connectors of every
// herder by their simple class names, which kmirror, one connector namespace for all flows, cannot. kmirror
// names them "<source>-><target>.<SimpleClassName>", as Strimzi's KafkaMirrorMaker2 does:
//
//	MM2 herder A->B, connector MirrorSourceConnector      A->B.MirrorSourceConnector
//	MM2 herder A->B, connector MirrorCheckpointConnector  A->B.MirrorCheckpointConnector
//	MM2 herder B->A, connector MirrorHeartbeatConnector   B->A.MirrorHeartbeatConnector
//
// A herder whose flow is not enabled runs only its heartbeat connector in kmirror: MM2 starts all three, but
// its source and checkpoint connectors do nothing when enabled=false, and listing inert connectors would
// only hide the working ones. Connectors sorts by name.
//
// Bad input gets MM2's error text where MM2 has one (a missing clusters key, a malformed security setting,
// no flows) and otherwise a message naming the file, the line and the key; a file that does not parse declares
// nothing. A connector whose config validation refuses is left out (Validate), as MM2's herder leaves it out.
package mm2file

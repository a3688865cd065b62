package mirrorconfig

// Keys of the MM2 definitions (mirror_keys.go) that kmirror's operations on a flow (failover) read of a
// connector's parsed config.
const (
	ConnectorClassKey     = "connector.class"
	SourceClusterAliasKey = "source.cluster.alias"
	TargetClusterAliasKey = "target.cluster.alias"
	AdminTimeoutMsKey     = "admin.timeout.ms"
)

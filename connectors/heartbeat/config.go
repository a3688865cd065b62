package heartbeat

import (
	"github.com/kmirror/kmirror/connectors"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
)

// config is a MirrorHeartbeatConnector config (or one of its tasks'), parsed once: what every connector's
// config has, and its keys typed, so that a misspelt key does not compile.
type config struct {
	connectors.Config
	mirrorconfig.HeartbeatConfig
}

func newConfig(c connectors.Config) config {
	return config{Config: c, HeartbeatConfig: c.MirrorHeartbeat()}
}

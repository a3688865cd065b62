package connectors

import (
	"fmt"

	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/connectors/configdef"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
)

// Config is a parsed connector (or task) config: the raw strings, for client settings and task
// configs, and the typed values of the plugin's definition, which a connector reads through its typed
// struct (MirrorSource, MirrorCheckpoint, MirrorHeartbeat) rather than by key names.
type Config struct {
	// Raw is the config as stored: config provider references stay unresolved here, so the task configs
	// cloned from it (and stored by the leader) never hold a resolved secret.
	Raw map[string]string
	Def *configdef.Def
	// Kmirror holds kmirror's own keys (mirrorconfig.KmirrorDef).
	Kmirror mirrorconfig.KmirrorConfig
	values  configdef.Values
	// clients are the operator's rules for client settings: allowed files, config providers.
	clients clientconfig.Options
}

func ParseConfig(p mirrorconfig.Plugin, raw map[string]string, clients clientconfig.Options) (Config, error) {
	def := mirrorconfig.ConfigDef(p)
	v, err := def.Parse(raw)
	if err != nil {
		return Config{}, fmt.Errorf("parse config: %w", err)
	}
	k, err := mirrorconfig.ParseKmirror(p, raw)
	if err != nil {
		return Config{}, fmt.Errorf("parse config: %w", err)
	}
	return Config{Raw: raw, values: v, Def: def, Kmirror: k, clients: clients}, nil
}

// MirrorSource returns the keys of a MirrorSourceConnector config (or of its tasks), typed; the config of
// another connector is a programming error and panics.
func (c Config) MirrorSource() mirrorconfig.SourceConfig {
	return mirrorconfig.ReadSourceConfig(c.values)
}

// MirrorCheckpoint is MirrorSource for a MirrorCheckpointConnector config.
func (c Config) MirrorCheckpoint() mirrorconfig.CheckpointConfig {
	return mirrorconfig.ReadCheckpointConfig(c.values)
}

// MirrorHeartbeat is MirrorSource for a MirrorHeartbeatConnector config.
func (c Config) MirrorHeartbeat() mirrorconfig.HeartbeatConfig {
	return mirrorconfig.ReadHeartbeatConfig(c.values)
}

func (c Config) SourceAlias() string { return c.values.String(mirrorconfig.SourceClusterAliasConfig) }
func (c Config) TargetAlias() string { return c.values.String(mirrorconfig.TargetClusterAliasConfig) }

// clientProps resolves a client's Java settings through MM2's prefix chain, resolves their config provider
// references (so a changed secret is read again each time a task starts) and translates them to librdkafka.
func (c Config) ClientProps(role clientconfig.Role, connectorName string, taskIndex int) (map[string]string, error) {
	cfg, err := c.clients.Client(role, c.Raw, c.Def.Has, func(userID string) string {
		return clientconfig.ClientID(userID, c.SourceAlias(), c.TargetAlias(), connectorName, taskIndex, clientconfig.Label(role, c.Raw))
	})
	if err != nil {
		return nil, fmt.Errorf("configure the %s: %w", role, err)
	}
	return cfg.Props, nil
}

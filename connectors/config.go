package connectors

import (
	"fmt"

	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/connectors/configdef"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
)

// Config is a parsed connector (or task) config: the raw strings, for client settings and task
// configs, and the typed values of the plugin's definition.
type Config struct {
	// Raw is the config as stored: config provider references stay unresolved here, so the task configs
	// cloned from it (and stored by the leader) never hold a resolved secret.
	Raw    map[string]string
	Values configdef.Values
	Def    *configdef.Def
	// Kmirror holds the typed values of kmirror's own keys (mirrorconfig.KmirrorDef).
	Kmirror configdef.Values
	// clients are the operator's rules for client settings: allowed files, config providers.
	clients clientconfig.Options
}

func ParseConfig(p mirrorconfig.Plugin, raw map[string]string, clients clientconfig.Options) (Config, error) {
	def := mirrorconfig.ConfigDef(p)
	v, err := def.Parse(raw)
	if err != nil {
		return Config{}, fmt.Errorf("parse config: %w", err)
	}
	k, err := mirrorconfig.KmirrorDef(p).Parse(raw)
	if err != nil {
		return Config{}, fmt.Errorf("parse config: %w", err)
	}
	return Config{Raw: raw, Values: v, Def: def, Kmirror: k, clients: clients}, nil
}

func (c Config) SourceAlias() string { return c.Values.String("source.cluster.alias") }
func (c Config) TargetAlias() string { return c.Values.String("target.cluster.alias") }

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

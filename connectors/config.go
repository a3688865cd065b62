package connectors

import (
	"fmt"

	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/connectors/configdef"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
)

// connectorConfig is a parsed connector (or task) config: the raw strings, for client settings and task
// configs, and the typed values of the plugin's definition.
type connectorConfig struct {
	// raw is the config as stored: config provider references stay unresolved here, so the task configs
	// cloned from it (and stored by the leader) never hold a resolved secret.
	raw    map[string]string
	values configdef.Values
	def    *configdef.Def
	// kmirror holds the typed values of kmirror's own keys (mirrorconfig.KmirrorDef).
	kmirror configdef.Values
	// clients are the operator's rules for client settings: allowed files, config providers.
	clients clientconfig.Options
}

func parseConfig(p mirrorconfig.Plugin, raw map[string]string, clients clientconfig.Options) (connectorConfig, error) {
	def := mirrorconfig.ConfigDef(p)
	v, err := def.Parse(raw)
	if err != nil {
		return connectorConfig{}, fmt.Errorf("parse config: %w", err)
	}
	k, err := mirrorconfig.KmirrorDef(p).Parse(raw)
	if err != nil {
		return connectorConfig{}, fmt.Errorf("parse config: %w", err)
	}
	return connectorConfig{raw: raw, values: v, def: def, kmirror: k, clients: clients}, nil
}

func (c connectorConfig) sourceAlias() string { return c.values.String("source.cluster.alias") }
func (c connectorConfig) targetAlias() string { return c.values.String("target.cluster.alias") }

// clientProps resolves a client's Java settings through MM2's prefix chain, resolves their config provider
// references (so a changed secret is read again each time a task starts) and translates them to librdkafka.
func (c connectorConfig) clientProps(role clientconfig.Role, connectorName string, taskIndex int) (map[string]string, error) {
	cfg, err := c.clients.Client(role, c.raw, c.def.Has, func(userID string) string {
		return clientconfig.ClientID(userID, c.sourceAlias(), c.targetAlias(), connectorName, taskIndex, clientconfig.Label(role, c.raw))
	})
	if err != nil {
		return nil, fmt.Errorf("configure the %s: %w", role, err)
	}
	return cfg.Props, nil
}

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
	raw    map[string]string
	values configdef.Values
	def    *configdef.Def
}

func parseConfig(p mirrorconfig.Plugin, raw map[string]string) (connectorConfig, error) {
	def := mirrorconfig.ConfigDef(p)
	v, err := def.Parse(raw)
	if err != nil {
		return connectorConfig{}, fmt.Errorf("parse config: %w", err)
	}
	return connectorConfig{raw: raw, values: v, def: def}, nil
}

func (c connectorConfig) sourceAlias() string { return c.values.String("source.cluster.alias") }
func (c connectorConfig) targetAlias() string { return c.values.String("target.cluster.alias") }

// clientProps resolves a client's Java settings through MM2's prefix chain and translates them to librdkafka.
func (c connectorConfig) clientProps(role clientconfig.Role, connectorName string, taskIndex int) (map[string]string, error) {
	java := clientconfig.Resolve(role, c.raw, c.def.Has)
	java["client.id"] = clientconfig.ClientID(java["client.id"], c.sourceAlias(), c.targetAlias(), connectorName, taskIndex,
		clientconfig.Label(role, c.raw))
	cfg, err := clientconfig.Translate(role, java)
	if err != nil {
		return nil, fmt.Errorf("configure the %s: %w", role, err)
	}
	return cfg.Props, nil
}

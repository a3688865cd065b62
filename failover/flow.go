package failover

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
)

// flow is what an operation needs of one connector's config: the clusters' aliases, admin clients of both
// clusters configured as the connector's own (MM2's prefix chains, config providers), and its naming rules.
type flow struct {
	Class                    string // the connector's class (mirrorconfig's canonical name)
	SourceAlias, TargetAlias string
	Source, Target           *kafka.Admin
	Policy                   mirror.ReplicationPolicy
	Topics                   *mirror.TopicFilter
}

// Close closes the flow's clients.
func (f *flow) Close() {
	if f.Source != nil {
		f.Source.Close()
	}
	if f.Target != nil {
		f.Target.Close()
	}
}

// TargetTopic names a source topic as a consumer finds it on the target (the checkpoint connector's rule): a
// topic that came from the target gets its original name back, any other the remote name.
func (f *flow) TargetTopic(topic string) string {
	if src, ok := f.Policy.TopicSource(topic); ok && src == f.TargetAlias {
		return f.Policy.OriginalTopic(topic)
	}
	return f.Policy.FormatRemoteTopic(f.SourceAlias, topic)
}

// flowAdminTimeout bounds each admin request of an operation (a connector's admin.timeout.ms only shortens it):
// the runner shows a sign of life between requests, and must do so within its stale window.
const flowAdminTimeout = 15 * time.Second

// flows opens flows with the operator's rules for client settings, as the connectors' own clients follow.
type flows struct {
	clients clientconfig.Options
	log     *slog.Logger
}

// open parses connector name's config and opens admin clients on both of its clusters.
func (fs flows) open(name string, config map[string]string) (*flow, error) {
	p, ok := mirrorconfig.LookupPlugin(config[mirrorconfig.ConnectorClassConfig])
	if !ok {
		return nil, fmt.Errorf("unknown connector class %q", config[mirrorconfig.ConnectorClassConfig])
	}
	def := mirrorconfig.ConfigDef(p)
	values, err := def.Parse(config)
	if err != nil {
		return nil, fmt.Errorf("parse the config of %s: %w", name, err)
	}
	policy, err := mirror.NewReplicationPolicy(config)
	if err != nil {
		return nil, err
	}
	topics, err := mirror.NewTopicFilter(config)
	if err != nil {
		return nil, err
	}
	f := &flow{Class: p.Class, SourceAlias: values.String(mirrorconfig.SourceClusterAliasConfig), TargetAlias: values.String(mirrorconfig.TargetClusterAliasConfig),
		Policy: policy, Topics: topics}
	log := fs.log.With("connector", name)
	open := func(role clientconfig.Role) (*kafka.Admin, error) {
		cfg, err := fs.clients.Client(role, config, def.Has, func(userID string) string {
			return clientconfig.ClientID(userID, f.SourceAlias, f.TargetAlias, name, -1, clientconfig.Label(role, config))
		})
		if err != nil {
			return nil, fmt.Errorf("configure the %s: %w", role, err)
		}
		a, err := kafka.NewAdmin(cfg.Props, log)
		if err != nil {
			return nil, fmt.Errorf("create the %s: %w", role, err)
		}
		a.Timeout = flowAdminTimeout
		if ms := values.Long(mirrorconfig.AdminTimeoutMsConfig); ms > 0 && time.Duration(ms)*time.Millisecond < a.Timeout {
			a.Timeout = time.Duration(ms) * time.Millisecond
		}
		return a, nil
	}
	if f.Source, err = open(clientconfig.SourceAdmin); err != nil {
		return nil, err
	}
	if f.Target, err = open(clientconfig.TargetAdmin); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

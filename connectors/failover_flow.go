package connectors

import (
	"fmt"
	"time"

	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
)

// Flow is what an operation on a replication flow (failover) needs of one of its connectors' config: the
// clusters' aliases, admin clients of both clusters, configured as the connector's own, and its naming rules.
type Flow struct {
	Class                    string // the connector's class (mirrorconfig's canonical name)
	SourceAlias, TargetAlias string
	Source, Target           *kafka.Admin
	Policy                   mirror.ReplicationPolicy
	Topics                   *mirror.TopicFilter
}

// Close closes the flow's clients.
func (f *Flow) Close() {
	if f.Source != nil {
		f.Source.Close()
	}
	if f.Target != nil {
		f.Target.Close()
	}
}

// TargetTopic names a source topic as a consumer finds it on the target (the checkpoint connector's rule): a
// topic that came from the target gets its original name back, any other the remote name.
func (f *Flow) TargetTopic(topic string) string {
	if src, ok := f.Policy.TopicSource(topic); ok && src == f.TargetAlias {
		return f.Policy.OriginalTopic(topic)
	}
	return f.Policy.FormatRemoteTopic(f.SourceAlias, topic)
}

// flowAdminTimeout bounds each admin request of an operation, unless the connector sets admin.timeout.ms.
const flowAdminTimeout = 15 * time.Second

// OpenFlow parses connector name's config and opens admin clients on both of its clusters.
func (r *Registry) OpenFlow(name string, config map[string]string) (*Flow, error) {
	p, ok := mirrorconfig.LookupPlugin(config["connector.class"])
	if !ok {
		return nil, fmt.Errorf("unknown connector class %q", config["connector.class"])
	}
	cfg, err := parseConfig(p, config, r.clients)
	if err != nil {
		return nil, err
	}
	policy, err := mirror.NewReplicationPolicy(cfg.raw)
	if err != nil {
		return nil, err
	}
	topics, err := mirror.NewTopicFilter(cfg.raw)
	if err != nil {
		return nil, err
	}
	f := &Flow{Class: p.Class, SourceAlias: cfg.sourceAlias(), TargetAlias: cfg.targetAlias(), Policy: policy, Topics: topics}
	log := r.logger("kmirror.failover").With("connector", name)
	open := func(role clientconfig.Role) (*kafka.Admin, error) {
		props, err := cfg.clientProps(role, name, -1)
		if err != nil {
			return nil, err
		}
		a, err := kafka.NewAdmin(props, log)
		if err != nil {
			return nil, fmt.Errorf("create the %s: %w", role, err)
		}
		a.Timeout = flowAdminTimeout
		if ms := cfg.values.Long("admin.timeout.ms"); ms > 0 && time.Duration(ms)*time.Millisecond < a.Timeout {
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

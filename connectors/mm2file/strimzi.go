package mm2file

import (
	"cmp"
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/kmirror/kmirror/connectors/mirrorconfig"
)

// DefaultSecretsDir is where FromStrimzi expects the resource's Secrets to be mounted, one directory per
// Secret (/etc/kmirror/secrets/<secret>/<key>), as the directory config provider reads them.
const DefaultSecretsDir = "/etc/kmirror/secrets"

// strimziMM2 is the part of a KafkaMirrorMaker2 resource that defines connectors: v1beta2 (clusters,
// connectCluster, mirrors[].sourceCluster/targetCluster) and v1 (target, mirrors[].source).
type strimziMM2 struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Spec       struct {
		ConnectCluster string           `yaml:"connectCluster"`
		Clusters       []strimziCluster `yaml:"clusters"`
		Target         *strimziCluster  `yaml:"target"`
		Mirrors        []struct {
			SourceCluster        string            `yaml:"sourceCluster"`
			TargetCluster        string            `yaml:"targetCluster"`
			Source               *strimziCluster   `yaml:"source"`
			SourceConnector      *strimziConnector `yaml:"sourceConnector"`
			CheckpointConnector  *strimziConnector `yaml:"checkpointConnector"`
			HeartbeatConnector   *strimziConnector `yaml:"heartbeatConnector"`
			TopicsPattern        *string           `yaml:"topicsPattern"`
			TopicsExcludePattern *string           `yaml:"topicsExcludePattern"`
			TopicsBlacklist      *string           `yaml:"topicsBlacklistPattern"`
			GroupsPattern        *string           `yaml:"groupsPattern"`
			GroupsExcludePattern *string           `yaml:"groupsExcludePattern"`
			GroupsBlacklist      *string           `yaml:"groupsBlacklistPattern"`
		} `yaml:"mirrors"`
	} `yaml:"spec"`
}

type strimziCluster struct {
	Alias            string         `yaml:"alias"`
	BootstrapServers string         `yaml:"bootstrapServers"`
	Config           map[string]any `yaml:"config"`
	TLS              *struct {
		TrustedCertificates []struct {
			SecretName  string `yaml:"secretName"`
			Certificate string `yaml:"certificate"`
			Pattern     string `yaml:"pattern"`
		} `yaml:"trustedCertificates"`
	} `yaml:"tls"`
	Authentication *struct {
		Type              string             `yaml:"type"`
		Username          string             `yaml:"username"`
		PasswordSecret    *strimziSecretKey  `yaml:"passwordSecret"`
		CertificateAndKey *strimziCertAndKey `yaml:"certificateAndKey"`
	} `yaml:"authentication"`
}

type strimziSecretKey struct {
	SecretName string `yaml:"secretName"`
	Password   string `yaml:"password"`
}

type strimziCertAndKey struct {
	SecretName  string `yaml:"secretName"`
	Certificate string `yaml:"certificate"`
	Key         string `yaml:"key"`
}

type strimziConnector struct {
	TasksMax *int           `yaml:"tasksMax"`
	Config   map[string]any `yaml:"config"`
}

// FromStrimzi converts a KafkaMirrorMaker2 resource into the connectors Strimzi's operator would create for it
// (KafkaMirrorMaker2Connectors): one per connector spec of each mirror, named "<source>-><target>.<Class>",
// with both clusters' settings as source.cluster.* and target.cluster.*, the connector's config, tasksMax and
// the mirror's topic and group patterns. Secrets become references of the directory config provider to
// secretsDir/<secret>/<key> (kmirror serve --config-providers directory --config-provider-allowed-paths
// secretsDir), never values. Warnings name what does not carry over.
func FromStrimzi(data []byte, secretsDir string) (cs []Connector, warnings []string, err error) {
	var r strimziMM2
	if err := yaml.Unmarshal(data, &r); err != nil {
		return nil, nil, fmt.Errorf("KafkaMirrorMaker2 resource: %w", err)
	}
	if r.Kind != "KafkaMirrorMaker2" || (r.APIVersion != "kafka.strimzi.io/v1beta2" && r.APIVersion != "kafka.strimzi.io/v1") {
		return nil, nil, fmt.Errorf("not a KafkaMirrorMaker2 resource of kafka.strimzi.io/v1beta2 or v1 (apiVersion %q, kind %q)", r.APIVersion, r.Kind)
	}
	secretsDir = cmp.Or(secretsDir, DefaultSecretsDir)
	byAlias := map[string]*strimziCluster{}
	for i := range r.Spec.Clusters {
		byAlias[r.Spec.Clusters[i].Alias] = &r.Spec.Clusters[i]
	}
	for i, m := range r.Spec.Mirrors {
		src, tgt := m.Source, r.Spec.Target
		if src == nil {
			src = byAlias[m.SourceCluster]
		}
		if tgt == nil {
			tgt = byAlias[cmp.Or(m.TargetCluster, r.Spec.ConnectCluster)]
		}
		if src == nil || tgt == nil {
			return nil, nil, fmt.Errorf("mirrors[%d]: source or target cluster not defined (sourceCluster %q, targetCluster %q)", i, m.SourceCluster, m.TargetCluster)
		}
		fl := Flow{Source: src.Alias, Target: tgt.Alias}
		for _, spec := range []struct {
			class string
			c     *strimziConnector
		}{
			{mirrorconfig.SourceConnectorClass, m.SourceConnector},
			{mirrorconfig.CheckpointConnectorClass, m.CheckpointConnector},
			{mirrorconfig.HeartbeatConnectorClass, m.HeartbeatConnector},
		} {
			if spec.c == nil {
				continue
			}
			cfg := map[string]string{}
			w := strimziClusterConfig(cfg, tgt, targetClusterPrefix, secretsDir)
			w = append(w, strimziClusterConfig(cfg, src, sourceClusterPrefix, secretsDir)...)
			for _, x := range w {
				warnings = append(warnings, fmt.Sprintf("mirrors[%d] %s: %s", i, fl, x))
			}
			for k, v := range spec.c.Config {
				cfg[k] = scalar(v)
			}
			for key, v := range map[string]*string{mirrorconfig.TopicsConfig: m.TopicsPattern, mirrorconfig.TopicsExcludeConfig: cmp.Or(m.TopicsExcludePattern, m.TopicsBlacklist),
				mirrorconfig.GroupsConfig: m.GroupsPattern, mirrorconfig.GroupsExcludeConfig: cmp.Or(m.GroupsExcludePattern, m.GroupsBlacklist)} {
				if v != nil {
					cfg[key] = *v
				}
			}
			if spec.c.TasksMax != nil {
				cfg[mirrorconfig.TasksMaxConfig] = strconv.Itoa(*spec.c.TasksMax)
			}
			name := Name(fl, spec.class)
			cfg[keyName], cfg[keyConnectorClass] = name, spec.class
			cs = append(cs, Connector{Name: name, Flow: fl, Class: spec.class, MM2Name: simpleName(spec.class), Config: cfg})
		}
	}
	if len(cs) == 0 {
		return nil, nil, ErrNoFlows
	}
	slices.SortFunc(cs, func(a, b Connector) int { return cmp.Compare(a.Name, b.Name) })
	return cs, warnings, nil
}

// strimziClusterConfig is KafkaMirrorMaker2Connectors.addClusterToMirrorMaker2ConnectorConfig with kmirror's
// secret references.
func strimziClusterConfig(cfg map[string]string, c *strimziCluster, prefix, secretsDir string) (warnings []string) {
	ref := func(secret, key string) string {
		return "${directory:" + path.Join(secretsDir, secret) + ":" + key + "}"
	}
	cfg[prefix+"alias"] = c.Alias
	cfg[prefix+keyBootstrapServers] = c.BootstrapServers
	protocol := "PLAINTEXT"
	if c.TLS != nil {
		protocol = "SSL"
		if certs := c.TLS.TrustedCertificates; len(certs) > 0 {
			key := certs[0].Certificate
			if key == "" {
				key = "ca.crt"
				warnings = append(warnings, fmt.Sprintf("trusted certificates of Secret %s by pattern %q: the reference names %s", certs[0].SecretName, certs[0].Pattern, key))
			}
			if len(certs) > 1 {
				warnings = append(warnings, fmt.Sprintf("%d trusted certificates: only Secret %s's is referenced (concatenate them into one PEM)", len(certs), certs[0].SecretName))
			}
			cfg[prefix+"ssl.truststore.certificates"] = ref(certs[0].SecretName, key)
			cfg[prefix+"ssl.truststore.type"] = "PEM"
		}
	}
	if a := c.Authentication; a != nil {
		switch a.Type {
		case "tls":
			if ck := a.CertificateAndKey; ck != nil {
				cfg[prefix+"ssl.keystore.certificate.chain"] = ref(ck.SecretName, ck.Certificate)
				cfg[prefix+"ssl.keystore.key"] = ref(ck.SecretName, ck.Key)
				cfg[prefix+"ssl.keystore.type"] = "PEM"
			}
		case "plain", "scram-sha-256", "scram-sha-512":
			protocol = "SASL_" + map[bool]string{true: "SSL", false: "PLAINTEXT"}[c.TLS != nil]
			module, mechanism := "org.apache.kafka.common.security.scram.ScramLoginModule", strings.ToUpper(a.Type)
			if a.Type == "plain" {
				module, mechanism = "org.apache.kafka.common.security.plain.PlainLoginModule", "PLAIN"
			}
			password := ""
			if a.PasswordSecret != nil {
				password = ref(a.PasswordSecret.SecretName, a.PasswordSecret.Password)
			}
			cfg[prefix+"sasl.mechanism"] = mechanism
			cfg[prefix+"sasl.jaas.config"] = fmt.Sprintf("%s required username=%q password=%q;", module, a.Username, password)
		default:
			warnings = append(warnings, fmt.Sprintf("authentication type %q of cluster %s is not converted: set it in the cluster's config", a.Type, c.Alias))
		}
	}
	cfg[prefix+keySecurityProtocol] = protocol
	for _, k := range slices.Sorted(maps.Keys(c.Config)) {
		cfg[prefix+k] = scalar(c.Config[k])
	}
	return warnings
}

// scalar renders a YAML value as Strimzi passes it to Connect: strings as they are, numbers and booleans in
// their plain form.
func scalar(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return ""
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

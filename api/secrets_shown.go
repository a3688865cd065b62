package api

import (
	"context"
	"maps"

	"github.com/kmirror/kmirror/auth"
	"github.com/kmirror/kmirror/configprovider"
	"github.com/kmirror/kmirror/connectors/clientconfig"
)

// hiddenValue stands for a secret a caller may not see: the text Kafka Connect prints for a PASSWORD value.
const hiddenValue = "[hidden]"

// shownConfig is a connector or task config as the caller of ctx may see it. An admin (or anyone, while
// authentication is off: see auth.Unauthenticated) sees it exactly as stored, as Connect returns it, so that
// Terraform's read-back finds what it wrote. A read-only caller sees every client secret (clientconfig.IsSecret)
// that is written in the config itself as [hidden]; a config-provider reference is shown, since it names where
// the secret is and never holds it.
func shownConfig(ctx context.Context, cfg map[string]string) map[string]string {
	if p, ok := auth.FromContext(ctx); !ok || p.Role == auth.RoleAdmin {
		return cfg
	}
	var out map[string]string
	for k, v := range cfg {
		if !clientconfig.IsSecret(k) || configprovider.HasReference(v) {
			continue
		}
		if out == nil {
			out = maps.Clone(cfg)
		}
		out[k] = hiddenValue
	}
	if out == nil {
		return cfg
	}
	return out
}

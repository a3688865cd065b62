package api

import (
	"maps"
	"net/http"
	"strings"

	"github.com/kmirror/kmirror/auth"
	"github.com/kmirror/kmirror/configprovider"
	"github.com/kmirror/kmirror/connectors/clientconfig"
)

// hiddenValue stands for a secret a response does not show: the text Kafka Connect prints for a PASSWORD value.
const hiddenValue = "[hidden]"

// revealParam is the query parameter with which an admin asks a GET for the secrets of a config.
const revealParam = "revealSecrets"

// revealSecrets reads ?revealSecrets= of a GET that returns configs. Only an admin may ask (or anyone while
// authentication is off, when every caller is one); a read-only caller who asks gets 403 rather than a
// silently masked answer, so that a script never mistakes "[hidden]" for the value.
func revealSecrets(r *http.Request) (bool, error) {
	// As Connect reads its boolean query parameters (Boolean.valueOf): "true" in any case, anything else false.
	q := r.URL.Query()[revealParam]
	if len(q) == 0 || !strings.EqualFold(q[0], "true") {
		return false, nil
	}
	if p, ok := auth.FromContext(r.Context()); ok && p.Role != auth.RoleAdmin {
		return false, errorf(http.StatusForbidden, "User %s (role %s) may not read secrets: %s=true needs the admin role", p.Name, p.Role, revealParam)
	}
	return true, nil
}

// shownConfig is a connector or task config as a response shows it. Unless reveal, every client secret
// (clientconfig.IsSecret) written in the config itself reads [hidden]; a config-provider reference is shown,
// since it names where the secret is and never holds it. Connect returns PASSWORD values as stored; kmirror
// does not, so that a dashboard, a log of responses or a read-only token never carries a password.
func shownConfig(cfg map[string]string, reveal bool) map[string]string {
	if reveal {
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

// keepStoredSecrets puts back, in a config being written, every secret given as [hidden]: what a GET showed
// for it, so that a client that reads a config, changes one key and writes it back (kcctl, scripts, the
// dashboard) keeps the password instead of storing "[hidden]". stored is the connector's current config (nil
// when it does not exist yet); a [hidden] that stands for nothing stored is refused, naming the key.
func keepStoredSecrets(sent *props, stored map[string]string, connector string) (*props, error) {
	cfg := sent.clone()
	for _, k := range hiddenSecrets(cfg) {
		old, ok := stored[k]
		if !ok {
			return nil, errorf(http.StatusBadRequest, "Connector configuration is invalid and contains the following 1 error(s):\n"+
				"%s: %q stands for the secret stored under this key, and connector %s has none stored; send the value itself",
				k, hiddenValue, connector)
		}
		cfg.set(k, &old)
	}
	return cfg, nil
}

// hiddenSecrets are the keys of cfg that give a secret as [hidden].
func hiddenSecrets(cfg *props) []string {
	var keys []string
	for _, k := range cfg.keys {
		if v := cfg.values[k]; v != nil && *v == hiddenValue && clientconfig.IsSecret(k) {
			keys = append(keys, k)
		}
	}
	return keys
}

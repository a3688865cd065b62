package clientconfig

import (
	"slices"
	"sort"
	"strings"

	"github.com/kmirror/kmirror/configprovider"
)

// Validate checks every client setting of a connector config, for the REST
// /validate endpoint and before a config is stored. It resolves and translates
// each client the connector class builds (see Resolve and Translate) and
// reports each problem under the connector key the operator wrote, e.g.
// source.consumer.fetch.max.wiat.ms; a missing required setting is reported
// under the key that should hold it, e.g. source.cluster.bootstrap.servers.
// Client-prefixed keys that no client of this connector reads (say
// target.consumer.* for a source connector, which builds no target consumer)
// are still checked by name, so that a misspelt key is never silently ignored.
// An empty map means valid; a config whose connector.class is not one of
// MM2's has no client settings to check.
//
// Validate allows no file: use Options.Validate for configs that name key stores or CA files.
func Validate(connectorConfig map[string]string, isConnectorKey func(string) bool) map[string][]string {
	return validate(Options{}, connectorConfig, isConnectorKey)
}

func validate(opts Options, connectorConfig map[string]string, isConnectorKey func(string) bool) map[string][]string {
	if isConnectorKey == nil {
		isConnectorKey = func(string) bool { return false }
	}
	result := map[string][]string{}
	add := func(key, msg string) {
		msg = key + ": " + msg
		if !slices.Contains(result[key], msg) {
			result[key] = append(result[key], msg)
		}
	}
	typ := connectorTypeOf(connectorConfig[keyConnectorClass])
	if typ == connectorUnknown {
		return result
	}

	read := map[string]bool{}
	for _, role := range rolesOf(typ, connectorConfig) {
		props, origin := resolve(role, connectorConfig, isConnectorKey)
		for _, k := range origin {
			read[k] = true
		}
		_, errs := translate(opts, role, props)
		for _, e := range errs {
			key := origin[e.Key]
			if key == "" {
				key = homeKey(role, connectorConfig, e.Key)
			}
			if configprovider.HasReference(connectorConfig[key]) {
				// The value is only known when a client is built; its references are checked below.
				continue
			}
			add(key, e.Msg)
		}
	}

	for key, v := range connectorConfig {
		if IsSecret(key) && strings.HasPrefix(v, sealedValuePrefix) {
			add(key, "values starting with "+sealedValuePrefix+" are reserved for secrets kmirror encrypts at rest")
		}
	}

	// References are checked, never resolved: validation reads no file, so it cannot tell what one holds.
	for key, v := range connectorConfig {
		if !configprovider.HasReference(v) {
			continue
		}
		if isClientIDKey(key) {
			add(key, clientIDReferenceMsg)
			continue
		}
		if _, _, client := clientPrefix(key); !read[key] && (!client || isConnectorKey(key)) {
			add(key, "config provider references are resolved in client settings only (source.cluster.*, target.cluster.*, "+
				"consumer.*, producer.*, admin.* and their source./target. forms, producer.override.*)")
			continue
		}
		if err := opts.Providers.Check(v); err != nil {
			add(key, err.Error())
		}
	}

	for key := range connectorConfig {
		if read[key] || isConnectorKey(key) {
			continue
		}
		kind, name, ok := clientPrefix(key)
		switch {
		case !ok:
			if nk, prefix, nested, isNested := nestedClientPrefix(key); isNested {
				msg := codeLoadingMsg(nk, nested, connectorConfig[key])
				if msg == "" {
					msg = nestedPrefixMsg(prefix, nk)
				}
				add(key, msg)
				continue
			}
			// No client reads it, but a code-loading key is refused anyway.
			if msg := reservedAnywhere(key); msg != "" {
				add(key, msg)
			}
		case strings.HasPrefix(name, "override.") && strings.HasPrefix(key, kind.String()+"."):
			if kind != kindProducer {
				msg := codeLoadingMsg(kind, strings.TrimPrefix(name, "override."), connectorConfig[key])
				if msg == "" {
					msg = "has no effect: Connect's " + kind.String() + ".override. prefix configures a client MM2 connectors do not have"
				}
				add(key, msg)
			}
		default:
			if msg := nameProblem(kind, name); msg != "" {
				add(key, msg)
			}
		}
	}
	for k := range result {
		sort.Strings(result[k])
	}
	return result
}

// sealedValuePrefix starts the values the store writes for secrets encrypted at rest (store's sealedPrefix,
// without the version). A config may not hold one itself: it would be taken for an encrypted value.
const sealedValuePrefix = "kmirror:aesgcm:"

// homeKey is where a setting missing from a client belongs: the cluster prefix
// for connection settings, the client's own prefix otherwise.
func homeKey(role Role, cfg map[string]string, javaKey string) string {
	side := clusterSide(role, cfg)
	if isConnectionKey(javaKey) {
		return side + ".cluster." + javaKey
	}
	return side + "." + role.kind().String() + "." + javaKey
}

// clientPrefix finds the client prefix of a connector key and the client kind
// it configures. Cluster prefixes count only for connection keys, the ones MM2
// passes on to clients.
func clientPrefix(key string) (kind clientKind, name string, ok bool) {
	for _, side := range []string{"source.", "target.", ""} {
		for _, k := range []clientKind{kindConsumer, kindProducer, kindAdmin} {
			if name, ok := strings.CutPrefix(key, side+k.String()+"."); ok && name != "" {
				return k, name, true
			}
		}
	}
	for _, side := range []string{"source.", "target."} {
		if name, ok := strings.CutPrefix(key, side+"cluster."); ok && isConnectionKey(name) {
			// Every kind takes the connection keys; admin is the strictest.
			return kindAdmin, name, true
		}
	}
	return 0, "", false
}

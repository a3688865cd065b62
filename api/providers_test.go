package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/api"
	"github.com/kmirror/kmirror/configprovider"
	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/fileaccess"
)

// TestValidateChecksConfigProviderReferences: /validate and PUT check a reference (enabled provider, allowed
// path) under the key that holds it, read nothing, and store the config with its references as written.
func TestValidateChecksConfigProviderReferences(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	paths, err := fileaccess.New("--config-provider-allowed-paths", []string{dir}, false)
	require.NoError(t, err)
	providers, err := configprovider.New(configprovider.Config{Enabled: []string{"env", "file"}, AllowedPaths: paths})
	require.NoError(t, err)
	f := newFixtureWith(t, func(c *api.Config) { c.Clients = clientconfig.Options{Providers: providers} })

	cfg := sourceConfig()
	cfg["source.cluster.sasl.jaas.config"] = "${file:/etc/kafka/jaas.properties:jaas}"
	cfg["target.producer.linger.ms"] = "${directory:" + dir + ":linger}"
	r := f.do("PUT", "/connector-plugins/MirrorSource/config/validate", jsonText(t, cfg))
	require.Equal(t, http.StatusOK, r.status, r.body)
	for _, want := range []string{
		`"error_count":3`, // and the missing name, as in Connect
		"source.cluster.sasl.jaas.config: ${file:/etc/kafka/jaas.properties:jaas}: the path is outside the directories config providers may read",
		"target.producer.linger.ms: ${directory:" + dir + ":linger}: the directory config provider is not enabled on this worker (--config-providers: env, file only)",
	} {
		require.True(t, strings.Contains(r.body, want), "no %q in the answer", want)
	}
	r = f.do("PUT", "/connectors/refs/config", jsonText(t, cfg))
	require.Equal(t, http.StatusBadRequest, r.status, r.body)
	require.Equal(t, http.StatusNotFound, f.do("GET", "/connectors/refs", "").status, "a refused write leaves nothing")

	cfg["source.cluster.sasl.jaas.config"] = "${file:" + dir + "/jaas.properties:jaas}" // does not exist: found at task start
	cfg["target.producer.linger.ms"] = "${env:LINGER_MS}"
	r = f.do("PUT", "/connectors/refs/config", jsonText(t, cfg))
	require.Equal(t, http.StatusCreated, r.status, r.body)
	r = f.do("GET", "/connectors/refs/config", "")
	require.Contains(t, r.body, `"target.producer.linger.ms":"${env:LINGER_MS}"`)
}

package connectors

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/configprovider"
	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
	"github.com/kmirror/kmirror/fileaccess"
)

// The failure of a connector job names the cluster and its address as the operator wrote it: a config provider
// reference stays one, and the resolved servers never appear, not even where the client's error quotes them.
func TestClusterFailureNamesTheAddressAsWritten(t *testing.T) {
	paths, err := fileaccess.New("--config-provider-allowed-paths", []string{t.TempDir()}, false)
	require.NoError(t, err)
	providers, err := configprovider.New(configprovider.Config{Enabled: configprovider.Names, AllowedPaths: paths,
		LookupEnv: func(k string) (string, bool) { return "secret-host.internal:9093", k == "SRC_SERVERS" }})
	require.NoError(t, err)
	p, ok := mirrorconfig.LookupPlugin(mirrorconfig.SourceConnectorClass)
	require.True(t, ok)
	raw := map[string]string{"name": "m", "connector.class": mirrorconfig.SourceConnectorClass,
		"source.cluster.alias": "A", "target.cluster.alias": "B",
		"source.cluster.bootstrap.servers": "${env:SRC_SERVERS}", "target.cluster.bootstrap.servers": "b:9092"}
	cfg, err := ParseConfig(p, raw, clientconfig.Options{Providers: providers})
	require.NoError(t, err)

	cause := errors.New("secret-host.internal:9093/bootstrap: Connect failed: context deadline exceeded")
	failure := cfg.clusterFailure("m", fmt.Errorf("list topics on source cluster A: %w", cause))
	require.Equal(t, "list topics on source cluster A: ${env:SRC_SERVERS}/bootstrap: Connect failed: context deadline exceeded"+
		" (cluster A at bootstrap.servers=${env:SRC_SERVERS})", failure.Error())
	require.Nil(t, errors.Unwrap(failure), "the causes quote the resolved address")

	failure = cfg.clusterFailure("m", fmt.Errorf("create remote topics on target cluster B: %w", cause))
	require.Contains(t, failure.Error(), "(cluster B at bootstrap.servers=b:9092)")
	require.ErrorIs(t, failure, cause, "without a reference the causes stay")
}

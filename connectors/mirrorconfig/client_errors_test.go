package mirrorconfig

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/connectors/configdef"
)

// validateWithClients validates a source connector config as the REST layer does for both
// PUT /connector-plugins/{class}/config/validate and, before storing it, PUT /connectors/{c}/config,
// which answers 400 with ErrorMessage when ErrorCount > 0.
func validateWithClients(t *testing.T, extra map[string]*string) configdef.ConfigInfos {
	t.Helper()
	p := mustPlugin(t, SourceConnectorClass)
	isConnectorKey := ConfigDef(p).Has
	props := config(SourceConnectorClass, map[string]*string{
		"target.cluster.alias":             ptr("B"),
		"source.cluster.bootstrap.servers": ptr("a:9092"),
		"target.cluster.bootstrap.servers": ptr("b:9092"),
	})
	for k, v := range extra {
		props[k] = v
	}
	return Validate(p, props, func(c map[string]string) map[string][]string { return clientconfig.Validate(c, isConnectorKey) })
}

func TestValidateReportsInFlightWithoutIdempotenceOnTheKey(t *testing.T) {
	const key = "producer.override.max.in.flight.requests.per.connection"
	want := key + ": max.in.flight.requests.per.connection=5 with enable.idempotence=false can reorder deliveries, " +
		"so kmirror could commit past a record the target never acknowledged; " +
		"set enable.idempotence=true or max.in.flight.requests.per.connection=1"

	got := validateWithClients(t, map[string]*string{
		"producer.override.enable.idempotence": ptr("false"),
		key:                                    ptr("5"),
	})
	require.Equal(t, 1, got.ErrorCount)
	require.Equal(t, []string{want}, entry(got, key).Value.Errors)
	require.Equal(t, ptr("5"), entry(got, key).Value.Value)
	require.Contains(t, ErrorMessage(got), "contains the following 1 error(s):\n"+want+"\n")

	ordered := validateWithClients(t, map[string]*string{
		"producer.override.enable.idempotence": ptr("false"),
		key:                                    ptr("1"),
	})
	require.Zero(t, ordered.ErrorCount, ErrorMessage(ordered))
}

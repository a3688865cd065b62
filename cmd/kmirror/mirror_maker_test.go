package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMirrorMakerArgsTakeConnectMirrorMakersShape(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	m := registerMM2Flags(fs)
	path, err := mirrorMakerArgs(fs, []string{"mm2.properties", "--clusters", "B", "C"})
	require.NoError(t, err)
	require.Equal(t, "mm2.properties", path)
	require.Equal(t, "B,C", *m.clusters)

	_, err = mirrorMakerArgs(fs, []string{"mm2.properties", "extra"})
	require.ErrorContains(t, err, `unexpected argument "extra"`)
}

func TestMirrorMakerPrint(t *testing.T) {
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"mirror-maker", "--print", "../../connectors/mm2file/testdata/files/connect-mirror-maker.properties",
		"--clusters", "A"}, &out, &errOut)
	require.NoError(t, err, errOut.String())
	dec := json.NewDecoder(&out)
	var names []string
	for dec.More() {
		var doc struct{ Name string }
		require.NoError(t, dec.Decode(&doc))
		names = append(names, doc.Name)
	}
	require.Equal(t, []string{"B->A.MirrorCheckpointConnector", "B->A.MirrorHeartbeatConnector", "B->A.MirrorSourceConnector"}, names)

	err = run(context.Background(), []string{"mirror-maker", "--print", "../../connectors/mm2file/testdata/files/no-flows.properties"}, &out, &errOut)
	require.ErrorContains(t, err, "No source->target replication flows.")
}

func TestMirrorMakerPrintStrimzi(t *testing.T) {
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"mirror-maker", "--print", "--format", "hcl", "--strimzi",
		"../../connectors/mm2file/testdata/strimzi/v1beta2.yaml"}, &out, &errOut)
	require.NoError(t, err, errOut.String())
	require.Contains(t, out.String(), `resource "kafka-connect_connector" "cluster-a_to_cluster-b_MirrorSourceConnector"`)
	require.Contains(t, out.String(), `"source.cluster.sasl.jaas.config" = "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"mm2-user\" password=\"$${directory:/etc/kmirror/secrets/mm2-user:password}\";"`)
	require.Contains(t, errOut.String(), "warning:")
}

package server_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
	"github.com/kmirror/kmirror/connectors/mirror"
)

// TestCheckpointKeepsCommitMetadataByteForByte commits offsets whose metadata PostgreSQL text refuses (a NUL, as
// confluent-kafka-python terminates its metadata; bytes that are not UTF-8; 4 KB of both) and checks that the
// checkpoints, the groups API and the offsets synced to B carry exactly the bytes Kafka keeps on A, and that
// every group is shown.
func TestCheckpointKeepsCommitMetadataByteForByte(t *testing.T) {
	t.Parallel()
	k := startKmirror(t, "")
	alias := uniqueAlias("A")
	topic := kafkatest.TopicName(t, "ckmeta")
	kafkatest.CreateTopic(t, "A", topic, 1, nil)
	producePlain(t, topic, 0, 0, 200)
	p := kafkatest.Partition{Topic: topic, Partition: 0}

	big := strings.Repeat("m\x00\xffü", 1024) // 4,096+ bytes: NULs, an invalid byte, a two-byte character
	committed := map[string]string{           // group -> metadata the client commits
		"nul-" + alias:     "abc\x00",
		"invalid-" + alias: "x\xff\xfey",
		"big-" + alias:     big,
		"plain-" + alias:   "plain",
	}
	admin := kafkatest.Admin(t, "A")
	for g, meta := range committed {
		list := []kafka.GroupOffset{{Topic: topic, Partition: 0, Offset: 150, Metadata: meta}}
		var err error
		require.Eventually(t, func() bool {
			err = admin.AlterGroupOffsets(context.Background(), g, list)
			return err == nil || !kafka.IsRetriable(err)
		}, 30*time.Second, 200*time.Millisecond, "commit offsets of %s: %v", g, err)
		require.NoError(t, err)
	}
	// What Kafka keeps is the truth to copy: the broker holds metadata as a Java string.
	groups := make([]string, 0, len(committed))
	for g := range committed {
		groups = append(groups, g)
	}
	onA, failed, err := admin.GroupOffsets(context.Background(), groups)
	require.NoError(t, err)
	require.Empty(t, failed)
	kept := map[string]string{}
	for g, offs := range onA {
		require.Len(t, offs, 1, g)
		kept[g] = offs[0].Metadata
	}
	require.Equal(t, "abc\x00", kept["nul-"+alias], "Kafka keeps a NUL")
	require.GreaterOrEqual(t, len(kept["big-"+alias]), 4096)

	code, body := k.do(http.MethodPut, "/connectors/src-"+alias+"/config", mirrorConfig(t, topic, map[string]any{"source.cluster.alias": alias}))
	require.Equal(t, http.StatusCreated, code, "%v", body)
	code, body = k.do(http.MethodPut, "/connectors/ck-"+alias+"/config", checkpointConfig(t, alias, ".*-"+alias,
		map[string]any{"topics": topic, "sync.group.offsets.enabled": "true", "sync.group.offsets.interval.seconds": "1"}))
	require.Equal(t, http.StatusCreated, code, "%v", body)

	// Every group is shown, each translated exactly, with its metadata.
	for g, meta := range kept {
		got := k.awaitTranslation("ck-"+alias, g, map[kafkatest.Partition]int64{p: 150}, 90*time.Second)
		require.Equal(t, int64(150), got[p].target)
		_, body := k.do(http.MethodGet, "/connectors/ck-"+alias+"/groups/"+url.PathEscape(g)+"/offsets", nil)
		o := body.(map[string]any)["offsets"].([]any)[0].(map[string]any)
		if b64, ok := o["metadata_base64"].(string); ok {
			raw, err := base64.StdEncoding.DecodeString(b64)
			require.NoError(t, err)
			require.Equal(t, meta, string(raw), "group %s: metadata_base64", g)
		} else {
			require.Equal(t, meta, o["metadata"], "group %s: metadata", g)
		}
	}
	_, body = k.do(http.MethodGet, "/connectors/ck-"+alias+"/groups", nil)
	require.Len(t, body.(map[string]any)["groups"], len(kept), "every group is listed: %v", body)
	_, body = k.do(http.MethodGet, "/connectors/ck-"+alias+"/notices", nil)
	raw, err := json.Marshal(body)
	require.NoError(t, err)
	require.NotContains(t, string(raw), "group_not_shown", "no group is left out")

	// The checkpoints on B carry the bytes.
	latest := map[string]mirror.Checkpoint{}
	for _, r := range kafkatest.ReadAll(t, "B", alias+".checkpoints.internal", 0) {
		c, err := mirror.DecodeCheckpoint(r.Key, r.Value)
		require.NoError(t, err)
		latest[c.Group] = c
	}
	for g, meta := range kept {
		require.Equal(t, meta, latest[g].Metadata, "checkpoint of %s", g)
	}

	// The offsets synced to the groups on B carry them too.
	adminB := kafkatest.Admin(t, "B")
	var last map[string][]kafka.GroupOffset
	require.Eventually(t, func() bool {
		got, failed, err := adminB.GroupOffsets(context.Background(), groups)
		if err != nil || len(failed) > 0 {
			return false
		}
		last = got
		for g, meta := range kept {
			if len(got[g]) != 1 || got[g][0].Offset != 150 || got[g][0].Metadata != meta {
				return false
			}
		}
		return true
	}, 60*time.Second, 200*time.Millisecond, "synced offsets on B never carried the metadata: %q", last)
}

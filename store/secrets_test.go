package store_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"log/slog"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/store"
	"github.com/kmirror/kmirror/store/storetest"
)

func newSecretKey(t *testing.T) store.SecretKey {
	t.Helper()
	raw := make([]byte, 32)
	_, err := rand.Read(raw)
	require.NoError(t, err)
	k, err := store.ParseSecretKey([]byte(base64.StdEncoding.EncodeToString(raw) + "\n"))
	require.NoError(t, err)
	return k
}

func isSecret(key string) bool { return strings.HasSuffix(key, ".password") }

func openWith(t *testing.T, url string, secrets *store.Secrets) (*store.Store, error) {
	t.Helper()
	s, err := store.Open(context.Background(), url, slog.New(slog.DiscardHandler), store.OpenOptions{Secrets: secrets, IsSecret: isSecret})
	if err == nil {
		t.Cleanup(s.Close)
	}
	return s, err
}

// rawConfigs returns every stored config as PostgreSQL holds it, as text.
func rawConfigs(t *testing.T, url string) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(ctx)
	var raw string
	require.NoError(t, conn.QueryRow(ctx, `SELECT coalesce(string_agg(c, ' '), '') FROM (
		SELECT config::text AS c FROM connectors UNION ALL SELECT config::text FROM connector_history
		UNION ALL SELECT config::text FROM task_configs) x`).Scan(&raw))
	return raw
}

// TestSecretsEncryptedAtRest: with a key, a connector's passwords are sealed in every table that holds
// configs (connectors, connector_history, task_configs) and read back in clear; a rotation re-seals them
// under the new key; a missing or wrong key stops start-up with a message saying which key is needed.
func TestSecretsEncryptedAtRest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := storetest.NewURL(t)
	const password = "pa55w0rd-at-rest"
	oldKey, newKey := newSecretKey(t), newSecretKey(t)

	s, err := openWith(t, url, &store.Secrets{Current: oldKey})
	require.NoError(t, err)
	require.NoError(t, s.CheckSecrets(ctx))
	cfg := map[string]string{"name": "c", "source.cluster.ssl.key.password": password, "tasks.max": "1"}
	_, err = s.CreateConnector(ctx, "c", cfg, store.TargetStarted)
	require.NoError(t, err)
	w1, err := s.RegisterWorker(ctx, "w1", "http://w1")
	require.NoError(t, err)
	assignAll(t, s, "w1")
	conn, err := s.ClaimUnit(ctx, workOf(t, s, "w1", store.Unit{Connector: "c", Task: store.ConnectorUnit}), w1)
	require.NoError(t, err)
	_, err = s.ReplaceTaskConfigs(ctx, conn, []map[string]string{cfg})
	require.NoError(t, err)
	changed, err := s.ReplaceTaskConfigs(ctx, conn, []map[string]string{cfg})
	require.NoError(t, err)
	require.False(t, changed, "the same task set, though sealed with a fresh nonce, is not rewritten")

	raw := rawConfigs(t, url)
	require.NotContains(t, raw, password)
	require.Equal(t, 3, strings.Count(raw, "kmirror:aesgcm:v1:"+oldKey.ID()+":"), raw)
	require.Contains(t, raw, `"tasks.max": "1"`, "only secrets are sealed")

	got, err := s.GetConnector(ctx, "c")
	require.NoError(t, err)
	require.Equal(t, cfg, got.Config)
	h, err := s.ConnectorHistory(ctx, "c")
	require.NoError(t, err)
	require.Equal(t, password, h[0].Config["source.cluster.ssl.key.password"])
	tcs, err := s.TaskConfigs(ctx, "c")
	require.NoError(t, err)
	require.Equal(t, password, tcs[0].Config["source.cluster.ssl.key.password"])
	assignAll(t, s, "w1")
	require.Equal(t, password, workOf(t, s, "w1", store.Unit{Connector: "c", Task: 0}).TaskConfig["source.cluster.ssl.key.password"])

	// Without the key, or with another one, kmirror does not start.
	plain, err := openWith(t, url, nil)
	require.NoError(t, err)
	require.ErrorContains(t, plain.CheckSecrets(ctx), "connector configs in the database are encrypted (key "+oldKey.ID()+"): start kmirror with --secrets-key")
	wrong, err := openWith(t, url, &store.Secrets{Current: newKey})
	require.NoError(t, err)
	require.ErrorContains(t, wrong.CheckSecrets(ctx), "encrypted with key "+oldKey.ID()+", but the keys given are "+newKey.ID())
	_, err = wrong.GetConnector(ctx, "c")
	require.ErrorContains(t, err, "source.cluster.ssl.key.password is encrypted with key "+oldKey.ID()+", which is neither --secrets-key nor --secrets-key-previous")
	require.NotContains(t, err.Error(), password)

	// Rotation: the new key with the old one as previous reads everything; rotate re-seals it all.
	rotating, err := openWith(t, url, &store.Secrets{Current: newKey, Previous: []store.SecretKey{oldKey}})
	require.NoError(t, err)
	require.NoError(t, rotating.CheckSecrets(ctx))
	got, err = rotating.GetConnector(ctx, "c")
	require.NoError(t, err)
	require.Equal(t, cfg, got.Config)
	n, err := rotating.RotateSecrets(ctx)
	require.NoError(t, err)
	require.Equal(t, 3, n, "the connector, its history entry and its task config")
	n, err = rotating.RotateSecrets(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "nothing left under the old key")
	raw = rawConfigs(t, url)
	require.NotContains(t, raw, oldKey.ID())
	require.NotContains(t, raw, password)

	rotated, err := openWith(t, url, &store.Secrets{Current: newKey})
	require.NoError(t, err)
	require.NoError(t, rotated.CheckSecrets(ctx), "the old key is no longer needed")
	got, err = rotated.GetConnector(ctx, "c")
	require.NoError(t, err)
	require.Equal(t, cfg, got.Config)
	require.NoError(t, rotated.DeleteConnector(ctx, "c"))
}

// TestSecretsTurnedOnLater: configs stored in clear stay readable once a key is given, and rotate seals them.
func TestSecretsTurnedOnLater(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := storetest.NewURL(t)
	const password = "stored-in-clear"
	plain, err := openWith(t, url, nil)
	require.NoError(t, err)
	// A look-alike of a sealed value in a key that is no secret is the user's text: it blocks neither reads
	// nor start-up.
	const lookAlike = "kmirror:aesgcm:v1:deadbeef:AAAA"
	_, err = plain.CreateConnector(ctx, "c", map[string]string{"name": "c", "sasl.password": password, "x.note": lookAlike}, store.TargetStarted)
	require.NoError(t, err)
	require.Contains(t, rawConfigs(t, url), password)
	require.NoError(t, plain.CheckSecrets(ctx))
	_, err = plain.CreateConnector(ctx, "d", map[string]string{"name": "d", "sasl.password": lookAlike}, store.TargetStarted)
	require.ErrorContains(t, err, "config key sasl.password: a value starting with kmirror:aesgcm:v1: is reserved for encrypted secrets",
		"stored in clear it would stop the next start-up")

	key := newSecretKey(t)
	s, err := openWith(t, url, &store.Secrets{Current: key})
	require.NoError(t, err)
	require.NoError(t, s.CheckSecrets(ctx))
	got, err := s.GetConnector(ctx, "c")
	require.NoError(t, err)
	require.Equal(t, password, got.Config["sasl.password"])
	require.Equal(t, lookAlike, got.Config["x.note"])
	n, err := s.RotateSecrets(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.NotContains(t, rawConfigs(t, url), password)
}

func TestParseSecretKey(t *testing.T) {
	raw := make([]byte, 32)
	for i := range raw {
		raw[i] = byte(i)
	}
	b64, err := store.ParseSecretKey([]byte(base64.StdEncoding.EncodeToString(raw)))
	require.NoError(t, err)
	hx, err := store.ParseSecretKey([]byte("  " + hex.EncodeToString(raw) + "\n"))
	require.NoError(t, err)
	require.Equal(t, b64.ID(), hx.ID(), "one key, whichever way it is written")
	for _, bad := range []string{"", "short", base64.StdEncoding.EncodeToString(raw[:16]), string(raw)} {
		_, err := store.ParseSecretKey([]byte(bad))
		require.ErrorContains(t, err, "a secrets key is 32 bytes written as base64 or as 64 hex digits")
	}
}

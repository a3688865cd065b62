package server_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/server"
	"github.com/kmirror/kmirror/store/storetest"
)

func writeKeyFile(t *testing.T) string {
	t.Helper()
	raw := make([]byte, 32)
	_, err := rand.Read(raw)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "secrets.key")
	require.NoError(t, os.WriteFile(path, []byte(hex.EncodeToString(raw)+"\n"), 0o600))
	return path
}

// TestSecretsKeyEncryptsAtRest: with --secrets-key the password of a connector created over REST is not in
// PostgreSQL, GET /config?revealSecrets=true returns it as written, and a restart with another key refuses to start, naming the
// key it needs.
func TestSecretsKeyEncryptsAtRest(t *testing.T) {
	t.Parallel()
	const password = "rest-pa55w0rd-sealed"
	dbURL := storetest.NewURL(t)
	keyFile := writeKeyFile(t)
	secrets, err := server.LoadSecrets(keyFile, nil)
	require.NoError(t, err)
	k := startKmirrorWith(t, dbURL, func(c *server.Config) { c.Secrets = secrets })
	code, body := k.do(http.MethodPut, "/connectors/sealed/config", map[string]any{
		"connector.class":                  "MirrorHeartbeatConnector",
		"source.cluster.alias":             "a",
		"target.cluster.alias":             "b",
		"target.cluster.bootstrap.servers": "127.0.0.1:1",
		"target.cluster.ssl.key.password":  password,
	})
	require.Equal(t, http.StatusCreated, code, "%v", body)
	_, got := k.do(http.MethodGet, "/connectors/sealed/config?revealSecrets=true", nil)
	require.Equal(t, password, got.(map[string]any)["target.cluster.ssl.key.password"], "an admin who asks reads the secret decrypted")
	_, got = k.do(http.MethodGet, "/connectors/sealed/config", nil)
	require.Equal(t, "[hidden]", got.(map[string]any)["target.cluster.ssl.key.password"], "nobody reads it without asking")

	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	require.NoError(t, err)
	defer conn.Close(ctx)
	var raw string
	require.NoError(t, conn.QueryRow(ctx, "SELECT config::text FROM connectors WHERE name = 'sealed'").Scan(&raw))
	require.NotContains(t, raw, password)
	require.Contains(t, raw, "kmirror:aesgcm:v1:"+secrets.Current.ID()+":")
	k.stop()

	other, err := server.LoadSecrets(writeKeyFile(t), nil)
	require.NoError(t, err)
	loggers, err := server.NewLoggers(slog.DiscardHandler, "ERROR")
	require.NoError(t, err)
	err = server.Run(ctx, server.Config{Listen: "127.0.0.1:0", DatabaseURL: dbURL, Loggers: loggers, Secrets: other})
	require.ErrorContains(t, err, "connector configs in the database are encrypted with key "+secrets.Current.ID()+
		", but the keys given are "+other.Current.ID())
}

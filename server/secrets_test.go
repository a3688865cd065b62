package server_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
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

// TestSecretsInClearLoggedOnceAtStart: a worker without --secrets-key says once, at start, that the secrets
// of connector configs are stored in clear, WAL and backups included; one with a key says nothing of it.
func TestSecretsInClearLoggedOnceAtStart(t *testing.T) {
	t.Parallel()
	for _, withKey := range []bool{false, true} {
		var logs syncBuffer
		k := startKmirrorWith(t, "", func(c *server.Config) {
			loggers, err := server.NewLoggers(slog.NewTextHandler(&logs, nil), "INFO")
			require.NoError(t, err)
			c.Loggers = loggers
			if withKey {
				secrets, err := server.LoadSecrets(writeKeyFile(t), nil)
				require.NoError(t, err)
				c.Secrets = secrets
			}
		})
		code, _ := k.do(http.MethodGet, "/connectors", nil)
		require.Equal(t, http.StatusOK, code)
		k.stop()
		want := 1
		if withKey {
			want = 0
		}
		require.Equal(t, want, strings.Count(logs.String(), "stored in clear in PostgreSQL"), "with a key: %v", withKey)
		if !withKey {
			require.Contains(t, logs.String(), "write-ahead log and every backup")
		}
	}
}

// Package storetest gives each test its own freshly migrated kmirror database on the harness's PostgreSQL
// (KMIRROR_TEST_DATABASE_URL, set by scripts/harness).
package storetest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kmirror/kmirror/harnessenv"
	"github.com/kmirror/kmirror/migrations"
	"github.com/kmirror/kmirror/store"
)

// EnvURL names the variable holding a superuser URL of the test PostgreSQL.
const EnvURL = "KMIRROR_TEST_DATABASE_URL"

// AdminURL returns the test PostgreSQL's superuser URL or fails the test with instructions; under -short it
// skips the test instead, as every test that needs the harness does.
func AdminURL(t testing.TB) string {
	t.Helper()
	return harnessenv.Require(t, "PostgreSQL", EnvURL)
}

// NewURL creates a new database migrated to the latest schema, drops it when the test ends, and returns its URL.
func NewURL(t testing.TB) string {
	t.Helper()
	admin := AdminURL(t)
	tmpl := templateName()
	if err := ensureTemplate(context.Background(), admin, tmpl); err != nil {
		t.Fatalf("prepare template database: %v", err)
	}
	return createDatabase(t, admin, "TEMPLATE "+tmpl)
}

// NewEmptyURL creates a new database with no schema at all, dropped when the test ends.
func NewEmptyURL(t testing.TB) string {
	t.Helper()
	return createDatabase(t, AdminURL(t), "")
}

func createDatabase(t testing.TB, admin, options string) string {
	t.Helper()
	ctx := context.Background()
	name := "kmirror_test_" + randomHex(6)
	conn := connect(t, admin)
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, fmt.Sprintf("CREATE DATABASE %s %s", name, options)); err != nil {
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, admin)
		if err != nil {
			t.Logf("drop test database %s: %v", name, err)
			return
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, fmt.Sprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", name)); err != nil {
			t.Logf("drop test database %s: %v", name, err)
		}
	})
	return withDatabase(t, admin, name)
}

// New opens a Store on a fresh database (see NewURL), closed when the test ends.
func New(t testing.TB) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), NewURL(t), slog.New(slog.DiscardHandler), store.OpenOptions{})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// templateName is unique per set of migrations, so a template built by older code is never reused.
func templateName() string {
	h := sha256.New()
	_ = fs.WalkDir(migrations.FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(migrations.FS, path)
		if err != nil {
			return err
		}
		h.Write([]byte(path))
		h.Write(b)
		return nil
	})
	return "kmirror_template_" + hex.EncodeToString(h.Sum(nil))[:12]
}

// ensureTemplate creates and migrates the template database once; an advisory lock serialises the test binaries
// that run in parallel.
func ensureTemplate(ctx context.Context, admin, name string) error {
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock(7415)"); err != nil {
		return err
	}
	defer conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(7415)") //nolint:errcheck
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return err
	}
	if exists {
		return nil
	}
	build := name + "_build"
	if _, err := conn.Exec(ctx, fmt.Sprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", build)); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+build); err != nil {
		return err
	}
	u, err := databaseURL(admin, build)
	if err != nil {
		return err
	}
	s, err := store.Open(ctx, u, slog.New(slog.DiscardHandler), store.OpenOptions{})
	if err != nil {
		return err
	}
	_, err = s.Migrate(ctx)
	s.Close()
	if err != nil {
		return err
	}
	// Renaming makes the template appear complete or not at all.
	_, err = conn.Exec(ctx, fmt.Sprintf("ALTER DATABASE %s RENAME TO %s", build, name))
	return err
}

func connect(t testing.TB, u string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), u)
	if err != nil {
		t.Fatalf("connect to test PostgreSQL: %v", err)
	}
	return c
}

func withDatabase(t testing.TB, admin, name string) string {
	t.Helper()
	u, err := databaseURL(admin, name)
	if err != nil {
		t.Fatalf("build database URL: %v", err)
	}
	return u
}

func databaseURL(admin, name string) (string, error) {
	u, err := url.Parse(admin)
	if err != nil {
		return "", err
	}
	u.Path = "/" + name
	return u.String(), nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

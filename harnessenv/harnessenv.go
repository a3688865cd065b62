// Package harnessenv reads the addresses scripts/harness gives tests in the environment (PostgreSQL, Kafka A
// and B), so that every helper that needs the harness skips and fails alike.
package harnessenv

import (
	"os"
	"testing"
)

// Require returns the value of env, which names where the harness's service runs (what, for the message). Under
// -short it skips the test, as every test that needs the harness does; unset, it fails the test with
// instructions.
func Require(t testing.TB, what, env string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("needs " + what + " (" + env + "): skipped under -short, the suite without brokers or PostgreSQL")
	}
	v := os.Getenv(env)
	if v == "" {
		t.Fatalf("%s is not set: run the tests with ./scripts/test, which starts PostgreSQL and Kafka", env)
	}
	return v
}

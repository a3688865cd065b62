package server

import (
	"fmt"
	"os"

	"github.com/kmirror/kmirror/store"
)

// SecretsInClear is logged once at start by a worker without --secrets-key.
const SecretsInClear = "connector secrets (passwords, sasl.jaas.config, private keys) are stored in clear in PostgreSQL: " +
	"in its tables, its write-ahead log and every backup, where a deleted connector's stay until the WAL is recycled and the backups expire; " +
	"set --secrets-key to encrypt them (docs/security-secrets-at-rest.md)"

// LoadSecrets reads the key files of --secrets-key and --secrets-key-previous into the store's Secrets
// (which seal the values clientconfig.IsSecret recognises: see the store's OpenOptions.IsSecret). No current key means no encryption (nil), and then
// previous keys make no sense.
func LoadSecrets(currentFile string, previousFiles []string) (*store.Secrets, error) {
	if currentFile == "" {
		if len(previousFiles) > 0 {
			return nil, fmt.Errorf("--secrets-key-previous needs --secrets-key: the key new values are encrypted with")
		}
		return nil, nil
	}
	load := func(flag, path string) (store.SecretKey, error) {
		data, err := os.ReadFile(path)
		if err != nil {
			return store.SecretKey{}, fmt.Errorf("%s: %w", flag, err)
		}
		k, err := store.ParseSecretKey(data)
		if err != nil {
			return store.SecretKey{}, fmt.Errorf("%s %s: %w", flag, path, err)
		}
		return k, nil
	}
	cur, err := load("--secrets-key", currentFile)
	if err != nil {
		return nil, err
	}
	s := &store.Secrets{Current: cur}
	for _, p := range previousFiles {
		k, err := load("--secrets-key-previous", p)
		if err != nil {
			return nil, err
		}
		s.Previous = append(s.Previous, k)
	}
	return s, nil
}

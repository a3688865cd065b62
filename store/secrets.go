package store

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// sealedPrefix starts every value encrypted at rest: kmirror:aesgcm:v1:<key id>:<base64 of nonce and
// sealed value>. The key id says which key opens it, so that values written under a previous key stay
// readable during a rotation.
const sealedPrefix = "kmirror:aesgcm:v1:"

// SecretKey is one AES-256 key for connector config secrets at rest.
type SecretKey struct {
	id   string
	aead cipher.AEAD
}

// ParseSecretKey reads a key file's content: 32 bytes as base64 (standard or URL alphabet, padded or not)
// or as 64 hex digits, surrounding white space ignored. Raw bytes are not accepted, so that a file cut short
// or holding something else is an error rather than a weak key.
func ParseSecretKey(content []byte) (SecretKey, error) {
	text := strings.TrimSpace(string(content))
	var raw []byte
	if b, err := hex.DecodeString(text); err == nil && len(b) == 32 {
		raw = b
	} else {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			if b, err := enc.DecodeString(text); err == nil && len(b) == 32 {
				raw = b
				break
			}
		}
	}
	if raw == nil {
		return SecretKey{}, errors.New("a secrets key is 32 bytes written as base64 or as 64 hex digits (make one with `openssl rand -base64 32`)")
	}
	block, err := aes.NewCipher(raw)
	if err != nil {
		return SecretKey{}, fmt.Errorf("secrets key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return SecretKey{}, fmt.Errorf("secrets key: %w", err)
	}
	// The id is a short digest of the key: it names the key in stored values and errors without revealing it.
	sum := sha256.Sum256(append([]byte("kmirror secrets key id\x00"), raw...))
	return SecretKey{id: hex.EncodeToString(sum[:4]), aead: aead}, nil
}

// ID names the key in stored values and messages.
func (k SecretKey) ID() string { return k.id }

// Secrets encrypts the secret values of connector configs (in connectors, connector_history and
// task_configs) with AES-256-GCM, and decrypts them on read: only the store sees them sealed.
type Secrets struct {
	// Current encrypts every value written.
	Current SecretKey
	// Previous keys still decrypt values written before a rotation (--secrets-key-previous).
	Previous []SecretKey
}

func (s *Secrets) key(id string) (SecretKey, bool) {
	if s == nil {
		return SecretKey{}, false
	}
	for _, k := range append([]SecretKey{s.Current}, s.Previous...) {
		if k.id == id && k.aead != nil {
			return k, true
		}
	}
	return SecretKey{}, false
}

// seal returns config with its secret values encrypted; without Secrets it returns config unchanged. The
// config key is bound to each value as additional data, so a sealed value copied under another key does not
// open.
func (st *Store) seal(config map[string]string) (map[string]string, error) {
	s := st.secrets
	if s == nil || config == nil {
		for k, v := range config {
			// Stored in clear, it would later be taken for a sealed value (validation refuses it first).
			if strings.HasPrefix(v, sealedPrefix) && st.isSecret(k) {
				return nil, fmt.Errorf("config key %s: a value starting with %s is reserved for encrypted secrets", k, sealedPrefix)
			}
		}
		return config, nil
	}
	out := maps.Clone(config)
	for k, v := range config {
		if !st.isSecret(k) {
			continue
		}
		nonce := make([]byte, s.Current.aead.NonceSize())
		if _, err := rand.Read(nonce); err != nil {
			return nil, fmt.Errorf("encrypt %s: %w", k, err)
		}
		sealed := s.Current.aead.Seal(nonce, nonce, []byte(v), []byte(k))
		out[k] = sealedPrefix + s.Current.id + ":" + base64.StdEncoding.EncodeToString(sealed)
	}
	return out, nil
}

// open returns config with its sealed secret values decrypted. Values that are not sealed are returned as
// they are (written before encryption was turned on), and so is any value of a key that is not a secret:
// only seal writes sealed values, and only for secret keys, so a look-alike elsewhere is the user's text.
// Without Secrets nothing is opened; CheckSecrets has refused to start if anything needed to be.
func (st *Store) open(config map[string]string) (map[string]string, error) {
	s := st.secrets
	if s == nil {
		return config, nil
	}
	var out map[string]string
	for k, v := range config {
		rest, sealed := strings.CutPrefix(v, sealedPrefix)
		if !sealed || !st.isSecret(k) {
			continue
		}
		if out == nil {
			out = maps.Clone(config)
		}
		id, payload, _ := strings.Cut(rest, ":")
		key, ok := s.key(id)
		if !ok {
			return nil, fmt.Errorf("config key %s is encrypted with key %s, which is neither --secrets-key nor --secrets-key-previous", k, id)
		}
		data, err := base64.StdEncoding.DecodeString(payload)
		n := key.aead.NonceSize()
		if err != nil || len(data) < n {
			return nil, fmt.Errorf("config key %s: malformed encrypted value", k)
		}
		plain, err := key.aead.Open(nil, data[:n], data[n:], []byte(k))
		if err != nil {
			return nil, fmt.Errorf("config key %s: encrypted value does not open with key %s (altered, or moved from another key)", k, id)
		}
		out[k] = string(plain)
	}
	if out == nil {
		return config, nil
	}
	return out, nil
}

// sealedKeyIDsQuery lists, per config key, the ids of the keys that sealed a stored value.
const sealedKeyIDsQuery = `
	SELECT DISTINCT k, split_part(substr(v, length($1) + 1), ':', 1) FROM (
		SELECT e.key AS k, e.value AS v FROM connectors, jsonb_each_text(config) e
		UNION ALL SELECT e.key, e.value FROM connector_history, jsonb_each_text(coalesce(config, '{}'::jsonb)) e
		UNION ALL SELECT e.key, e.value FROM task_configs, jsonb_each_text(config) e
	) stored WHERE starts_with(v, $1) ORDER BY 2, 1`

// CheckSecrets verifies at start-up that every stored encrypted value can be decrypted with the keys given,
// so that a wrong or missing --secrets-key stops kmirror at once instead of failing requests and tasks later.
func (s *Store) CheckSecrets(ctx context.Context) error {
	rows, err := s.pool.Query(ctx, sealedKeyIDsQuery, sealedPrefix)
	if err != nil {
		return fmt.Errorf("check encrypted configs: %w", err)
	}
	type sealedBy struct{ key, id string }
	found, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (sealedBy, error) {
		var f sealedBy
		err := r.Scan(&f.key, &f.id)
		return f, err
	})
	if err != nil {
		return fmt.Errorf("check encrypted configs: %w", err)
	}
	var missing []string
	for _, f := range found {
		if _, ok := s.secrets.key(f.id); !ok && s.isSecret(f.key) && !slices.Contains(missing, f.id) {
			missing = append(missing, f.id)
		}
	}
	switch {
	case len(missing) == 0:
		return nil
	case s.secrets == nil:
		return fmt.Errorf("connector configs in the database are encrypted (key %s): start kmirror with --secrets-key", strings.Join(missing, ", "))
	}
	have := []string{s.secrets.Current.id}
	for _, k := range s.secrets.Previous {
		have = append(have, k.id)
	}
	return fmt.Errorf("connector configs in the database are encrypted with key %s, but the keys given are %s: "+
		"check --secrets-key, and after a rotation pass the old key as --secrets-key-previous until `kmirror secrets rotate` has run",
		strings.Join(missing, ", "), strings.Join(have, ", "))
}

// RotateSecrets re-encrypts every stored config secret with the current key (and encrypts those stored in
// clear before encryption was turned on), in one transaction. It returns how many rows changed. Rows are
// rewritten without bumping connector versions: the configs mean the same, so no task restarts.
func (s *Store) RotateSecrets(ctx context.Context) (int, error) {
	if s.secrets == nil {
		return 0, errors.New("no --secrets-key: nothing to encrypt with")
	}
	changed := 0
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		for _, table := range []struct{ name, id string }{
			{"connectors", "name"},
			{"connector_history", "id::text"},
			{"task_configs", "connector_name || '/' || task_id::text"},
		} {
			rows, err := tx.Query(ctx, "SELECT "+table.id+", config FROM "+table.name+" WHERE config IS NOT NULL FOR UPDATE")
			if err != nil {
				return fmt.Errorf("read %s: %w", table.name, err)
			}
			type row struct {
				id     string
				config map[string]string
			}
			all, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
				var x row
				err := r.Scan(&x.id, &x.config)
				return x, err
			})
			if err != nil {
				return fmt.Errorf("read %s: %w", table.name, err)
			}
			for _, x := range all {
				if !s.needsRotation(x.config) {
					continue
				}
				plain, err := s.open(x.config)
				if err != nil {
					return fmt.Errorf("%s %s: %w", table.name, x.id, err)
				}
				sealed, err := s.seal(plain)
				if err != nil {
					return err
				}
				if _, err := tx.Exec(ctx, "UPDATE "+table.name+" SET config = $2 WHERE "+table.id+" = $1", x.id, sealed); err != nil {
					return fmt.Errorf("update %s %s: %w", table.name, x.id, err)
				}
				changed++
			}
		}
		return nil
	})
	return changed, err
}

// needsRotation tells whether a stored config has a secret that is in clear or sealed by another key than
// the current one.
func (s *Store) needsRotation(config map[string]string) bool {
	for _, k := range slices.Sorted(maps.Keys(config)) {
		if !s.isSecret(k) {
			continue
		}
		rest, sealed := strings.CutPrefix(config[k], sealedPrefix)
		if !sealed || !strings.HasPrefix(rest, s.secrets.Current.id+":") {
			return true
		}
	}
	return false
}

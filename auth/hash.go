package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
	"golang.org/x/crypto/bcrypt"
)

// verifier checks a password against its slow hash, in time that does not depend on where they differ.
type verifier interface {
	verify(password []byte) bool
	// cost names the scheme and parameters, which alone decide how long verify takes.
	cost() string
}

type bcryptHash []byte

func (h bcryptHash) verify(password []byte) bool {
	return bcrypt.CompareHashAndPassword(h, password) == nil
}

func (h bcryptHash) cost() string {
	c, _ := bcrypt.Cost(h) // checked by parseHash
	return fmt.Sprintf("bcrypt:%d", c)
}

// argon2idHash is a decoded PHC string: $argon2id$v=19$m=<KiB>,t=<passes>,p=<lanes>$<salt>$<key>.
type argon2idHash struct {
	memory, time uint32
	threads      uint8
	salt, key    []byte
}

func (h argon2idHash) verify(password []byte) bool {
	k := argon2.IDKey(password, h.salt, h.time, h.memory, h.threads, uint32(len(h.key)))
	return subtle.ConstantTimeCompare(k, h.key) == 1
}

func (h argon2idHash) cost() string {
	return fmt.Sprintf("argon2id:m=%d,t=%d,p=%d,k=%d", h.memory, h.time, h.threads, len(h.key))
}

// Bounds on argon2id parameters read from the file: a typo such as m=65536000 (62 GiB) would otherwise make
// every login allocate it.
const (
	maxArgonMemoryKiB = 1 << 20 // 1 GiB
	maxArgonTime      = 32
)

func parseHash(s string) (verifier, error) {
	switch {
	case strings.HasPrefix(s, "$2a$"), strings.HasPrefix(s, "$2b$"), strings.HasPrefix(s, "$2y$"):
		if _, err := bcrypt.Cost([]byte(s)); err != nil {
			return nil, fmt.Errorf("bcrypt hash: %w", err)
		}
		return bcryptHash(s), nil
	case strings.HasPrefix(s, "$argon2id$"):
		return parseArgon2id(s)
	}
	return nil, errors.New("the hash is neither bcrypt ($2a$, $2b$, $2y$), argon2id ($argon2id$...) nor a bearer token's sha256:<hex>; make one with kmirror passwd")
}

func parseArgon2id(s string) (verifier, error) {
	parts := strings.Split(s, "$") // "", "argon2id", "v=19", "m=..,t=..,p=..", salt, key
	if len(parts) != 6 {
		return nil, errors.New("argon2id hash: want $argon2id$v=19$m=<KiB>,t=<passes>,p=<lanes>$<salt>$<key>")
	}
	if parts[2] != fmt.Sprintf("v=%d", argon2.Version) {
		return nil, fmt.Errorf("argon2id hash: version %q is not v=%d", parts[2], argon2.Version)
	}
	var h argon2idHash
	var threads uint32
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &h.memory, &h.time, &threads); err != nil {
		return nil, fmt.Errorf("argon2id hash: parameters %q are not m=<KiB>,t=<passes>,p=<lanes>: %w", parts[3], err)
	}
	if h.memory < 8 || h.memory > maxArgonMemoryKiB || h.time < 1 || h.time > maxArgonTime || threads < 1 || threads > 255 {
		return nil, fmt.Errorf("argon2id hash: parameters %q out of range (m 8..%d KiB, t 1..%d, p 1..255)", parts[3], maxArgonMemoryKiB, maxArgonTime)
	}
	h.threads = uint8(threads)
	var err error
	if h.salt, err = base64.RawStdEncoding.DecodeString(parts[4]); err != nil {
		return nil, fmt.Errorf("argon2id hash: salt is not unpadded base64: %w", err)
	}
	if h.key, err = base64.RawStdEncoding.DecodeString(parts[5]); err != nil {
		return nil, fmt.Errorf("argon2id hash: key is not unpadded base64: %w", err)
	}
	if len(h.salt) < 8 || len(h.key) < 16 {
		return nil, errors.New("argon2id hash: the salt must be at least 8 bytes and the key at least 16")
	}
	return h, nil
}

// Scheme names a password hash kmirror passwd can make.
type Scheme string

const (
	// Bcrypt is bcrypt at cost BcryptCost: what htpasswd -B makes too.
	Bcrypt Scheme = "bcrypt"
	// Argon2id is argon2id with RFC 9106's second recommended parameters (64 MiB, 3 passes, 4 lanes).
	Argon2id Scheme = "argon2id"
)

// BcryptCost is the cost of the bcrypt hashes kmirror passwd makes: about a quarter of a second on a server
// core, paid once per user and users file version thanks to the verified-password cache.
const BcryptCost = 12

// HashPassword hashes password for the users file.
func HashPassword(password string, scheme Scheme) (string, error) {
	if password == "" {
		return "", errors.New("the password is empty")
	}
	switch scheme {
	case Bcrypt:
		h, err := bcrypt.GenerateFromPassword([]byte(password), BcryptCost)
		if err != nil {
			return "", fmt.Errorf("bcrypt: %w", err) // ErrPasswordTooLong past 72 bytes
		}
		return string(h), nil
	case Argon2id:
		salt := make([]byte, 16)
		if _, err := rand.Read(salt); err != nil {
			return "", fmt.Errorf("argon2id salt: %w", err)
		}
		const memory, passes, lanes = 64 * 1024, 3, 4
		key := argon2.IDKey([]byte(password), salt, passes, memory, lanes, 32)
		return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, memory, passes, lanes,
			base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key)), nil
	}
	return "", fmt.Errorf("hash scheme %q is neither %s nor %s", scheme, Bcrypt, Argon2id)
}

// NewToken makes a bearer token and the hash the users file stores for it. The prefix lets secret scanners
// and people recognise a kmirror token.
func NewToken() (token, hash string, err error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", "", fmt.Errorf("random token: %w", err)
	}
	token = "kmirror_" + base64.RawURLEncoding.EncodeToString(b)
	return token, TokenHash(token), nil
}

// TokenHash is what the users file stores for a bearer token.
func TokenHash(token string) string {
	s := sha256.Sum256([]byte(token))
	return tokenPrefix + hex.EncodeToString(s[:])
}

// Entry is one line of the users file.
func Entry(name string, role Role, hash string) (string, error) {
	if err := checkName(name); err != nil {
		return "", err
	}
	if strings.Contains(name, ":") {
		return "", fmt.Errorf("name %q holds a colon, which separates the fields", name)
	}
	if role != RoleAdmin && role != RoleReadOnly {
		return "", fmt.Errorf("role %s is neither %s nor %s", role, roleAdminName, roleReadOnlyName)
	}
	return name + ":" + role.String() + ":" + hash, nil
}

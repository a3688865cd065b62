package auth

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode"
)

// Role is what a caller may do.
type Role int

const (
	// RoleNone is no role: the caller may only reach open endpoints.
	RoleNone Role = iota
	// RoleReadOnly may read (GET, HEAD) everything, the dashboard's pages included, and change nothing.
	RoleReadOnly
	// RoleAdmin may do everything.
	RoleAdmin
)

// The roles as the users file spells them.
const (
	roleAdminName    = "admin"
	roleReadOnlyName = "read-only"
)

func (r Role) String() string {
	switch r {
	case RoleAdmin:
		return roleAdminName
	case RoleReadOnly:
		return roleReadOnlyName
	}
	return "none"
}

// ParseRole reads a role as the users file spells it.
func ParseRole(s string) (Role, error) {
	switch s {
	case roleAdminName:
		return RoleAdmin, nil
	case roleReadOnlyName:
		return RoleReadOnly, nil
	}
	return RoleNone, fmt.Errorf("role %q is neither %s nor %s", s, roleAdminName, roleReadOnlyName)
}

// tokenPrefix marks a bearer token's hash in the users file.
const tokenPrefix = "sha256:"

// users is one parsed users file. It is never changed once parsed, except for the cache of verified
// passwords, which belongs to it so that a reload forgets every cached password at once.
type users struct {
	passwords map[string]passwordUser
	tokens    []tokenUser
	// decoys hold one hash of each cost the file's password users have (scheme and parameters). A refused
	// password is also checked against every decoy of another cost than the one it was checked against, and
	// the results thrown away: every refusal — unknown name, wrong password of a bcrypt or an argon2id user —
	// costs the same, so the time to refuse tells neither which names exist nor how they are hashed.
	decoys []verifier
	// verified maps a user's name to the keyed SHA-256 of the last password that verified against the slow
	// hash (see Authenticator.checkPassword).
	verified sync.Map
}

type passwordUser struct {
	role Role
	hash verifier
}

type tokenUser struct {
	name string
	role Role
	sum  [sha256.Size]byte
}

// parseUsers reads a users file (see the package documentation); file names it in errors.
func parseUsers(file string, data []byte) (*users, error) {
	u := &users{passwords: map[string]passwordUser{}}
	seen := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, rest, ok1 := strings.Cut(line, ":")
		roleName, hash, ok2 := strings.Cut(rest, ":")
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("users file %s line %d: want name:role:hash, got %d field(s)", file, n, strings.Count(line, ":")+1)
		}
		if err := checkName(name); err != nil {
			return nil, fmt.Errorf("users file %s line %d: %w", file, n, err)
		}
		if prev, dup := seen[name]; dup {
			return nil, fmt.Errorf("users file %s line %d: %q is already defined on line %d", file, n, name, prev)
		}
		seen[name] = n
		role, err := ParseRole(roleName)
		if err != nil {
			return nil, fmt.Errorf("users file %s line %d (%s): %w", file, n, name, err)
		}
		if hexSum, isToken := strings.CutPrefix(hash, tokenPrefix); isToken {
			sum, err := hex.DecodeString(hexSum)
			if err != nil || len(sum) != sha256.Size {
				return nil, fmt.Errorf("users file %s line %d (%s): a bearer token's hash is sha256: and 64 hex digits", file, n, name)
			}
			t := tokenUser{name: name, role: role}
			copy(t.sum[:], sum)
			u.tokens = append(u.tokens, t)
			continue
		}
		v, err := parseHash(hash)
		if err != nil {
			return nil, fmt.Errorf("users file %s line %d (%s): %w", file, n, name, err)
		}
		u.passwords[name] = passwordUser{role: role, hash: v}
		if !slices.ContainsFunc(u.decoys, func(d verifier) bool { return d.cost() == v.cost() }) {
			u.decoys = append(u.decoys, v)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("users file %s: %w", file, err)
	}
	return u, nil
}

// checkName refuses names that basic auth or the file format could not carry, and names that would be
// ambiguous in a log line.
func checkName(name string) error {
	if name == "" {
		return fmt.Errorf("the name is empty")
	}
	for _, r := range name {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return fmt.Errorf("name %q holds a space or control character", name)
		}
	}
	return nil
}

// count is how many callers the file lists.
func (u *users) count() int { return len(u.passwords) + len(u.tokens) }

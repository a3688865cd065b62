package auth_test

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/argon2"
	"golang.org/x/crypto/bcrypt"

	"github.com/kmirror/kmirror/auth"
)

// limitsServer serves an Authenticator with the users file lines over loopback.
func limitsServer(t *testing.T, cfg auth.Config, lines ...string) *httptest.Server {
	t.Helper()
	cfg.UsersFile = filepath.Join(t.TempDir(), "users")
	writeUsers(t, cfg.UsersFile, lines...)
	cfg.Logger = slog.New(slog.DiscardHandler)
	a, err := auth.New(cfg)
	require.NoError(t, err)
	srv := httptest.NewServer(a.Authenticate(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
	t.Cleanup(srv.Close)
	return srv
}

// clientFrom is an HTTP client whose connections come from the loopback address ip (127.0.0.0/8 is all
// loopback on Linux), so that a test can play several clients.
func clientFrom(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	return &http.Client{Timeout: time.Minute, Transport: &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 64}}
}

// login sends one basic-auth GET and returns its status and how long the answer took.
func login(t *testing.T, c *http.Client, url, user, password string) (int, time.Duration) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	req.SetBasicAuth(user, password)
	start := time.Now()
	resp, err := c.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, time.Since(start)
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func bcryptLine(t *testing.T, name string, cost int, password string) string {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte(password), cost)
	require.NoError(t, err)
	return name + ":admin:" + string(h)
}

// argon2idLine hashes with chosen parameters (kmirror passwd always uses RFC 9106's).
func argon2idLine(name, password string, memoryKiB, passes uint32) string {
	salt := make([]byte, 16)
	_, _ = rand.Read(salt)
	key := argon2.IDKey([]byte(password), salt, passes, memoryKiB, 1, 32)
	return fmt.Sprintf("%s:admin:$argon2id$v=%d$m=%d,t=%d,p=1$%s$%s", name, argon2.Version, memoryKiB, passes,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key))
}

// TestAuthFailuresCostTheSame: a wrong password for a bcrypt user, a wrong password for an argon2id user whose
// hash costs several times as much, and an unknown name take the same time to refuse (medians of interleaved
// rounds within a factor of 1.6), so the time tells neither which names exist nor how they are hashed.
//
// Not parallel, as the other timing test: each needs the machine's cores to itself as much as it can get.
func TestAuthFailuresCostTheSame(t *testing.T) {
	srv := limitsServer(t, auth.Config{FailureBurst: 1000},
		bcryptLine(t, "alice", 8, "alice-pw"), argon2idLine("carol", "carol-pw", 16*1024, 3))
	c := clientFrom("127.0.0.1")
	cases := []string{"alice", "carol", "mallory"}
	took := map[string][]time.Duration{}
	for round := range 9 {
		for i := range cases {
			user := cases[(round+i)%len(cases)]
			code, d := login(t, c, srv.URL, user, "wrong")
			require.Equal(t, http.StatusUnauthorized, code)
			took[user] = append(took[user], d)
		}
	}
	var medians []time.Duration
	for _, u := range cases {
		medians = append(medians, median(took[u]))
	}
	ratio := float64(slices.Max(medians)) / float64(slices.Min(medians))
	t.Logf("median time to refuse: alice (bcrypt) %s, carol (argon2id) %s, unknown %s; max/min %.2f",
		medians[0].Round(time.Millisecond), medians[1].Round(time.Millisecond), medians[2].Round(time.Millisecond), ratio)
	require.Less(t, ratio, 1.6, "refusals cost the same whoever is named")
}

// TestFailedAttemptsLimitedPerClient: 40 concurrent wrong passwords from one client do not hold up the first
// logins of five other clients (median within 4 times what the same five logins take on a quiet server; queued
// behind all 40 hashes they would take ten times as long or more), and past its budget the flooding client
// gets 429 with Retry-After without any hashing.
func TestFailedAttemptsLimitedPerClient(t *testing.T) {
	const legit = 5
	lines := []string{bcryptLine(t, "alice", 10, "alice-pw")}
	for i := range 2 * legit {
		lines = append(lines, bcryptLine(t, fmt.Sprintf("user%d", i), 10, fmt.Sprintf("pw%d", i)))
	}
	srv := limitsServer(t, auth.Config{}, lines...)
	attacker := clientFrom("127.0.0.1")
	others := make([]*http.Client, legit)
	for i := range others {
		others[i] = clientFrom(fmt.Sprintf("127.0.0.%d", 2+i))
	}
	// Five clients log in at once, each a user that has not logged in before: a verified password is cached,
	// and the time under test is a first login's.
	logins := func(first int) []time.Duration {
		took := make([]time.Duration, legit)
		var wg sync.WaitGroup
		for i := range legit {
			wg.Add(1)
			go func() {
				defer wg.Done()
				code, d := login(t, others[i], srv.URL, fmt.Sprintf("user%d", first+i), fmt.Sprintf("pw%d", first+i))
				require.Equal(t, http.StatusOK, code)
				took[i] = d
			}()
		}
		wg.Wait()
		return took
	}
	quiet := logins(0)

	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	flooding := make(chan struct{})
	var once sync.Once
	for range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, _ := login(t, attacker, srv.URL, "alice", "guess")
			once.Do(func() { close(flooding) })
			mu.Lock()
			codes[code]++
			mu.Unlock()
		}()
	}
	<-flooding // the first guess is answered: the others are queued, or already refused
	flooded := logins(legit)
	wg.Wait()
	ratio := float64(median(flooded)) / float64(median(quiet))
	t.Logf("first logins of five other clients at once: median %s quiet, %s during 40 concurrent wrong passwords from one client (%.2fx); the flood got %v",
		median(quiet).Round(time.Millisecond), median(flooded).Round(time.Millisecond), ratio, codes)
	require.Less(t, ratio, 4.0, "other clients' logins are not queued behind the flood")
	// The budget refills by one per DefaultFailureInterval while the flood is being checked.
	require.GreaterOrEqual(t, codes[http.StatusUnauthorized], auth.DefaultFailureBurst, "the budget's worth of passwords was checked")
	require.Equal(t, 40, codes[http.StatusUnauthorized]+codes[http.StatusTooManyRequests])
	require.Greater(t, codes[http.StatusTooManyRequests], 40/2, "the rest was refused unchecked")

	req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	req.SetBasicAuth("alice", "alice-pw")
	resp, err := attacker.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "out of budget, even the right password is not checked")
	require.NotEmpty(t, resp.Header.Get("Retry-After"))
	code, _ := login(t, others[0], srv.URL, "alice", "alice-pw")
	require.Equal(t, http.StatusOK, code, "from another client alice logs in")
}

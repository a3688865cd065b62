package auth

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/kmirror/kmirror/filewatch"
	"github.com/kmirror/kmirror/lograte"
)

// Principal is who sent a request.
type Principal struct {
	Name string
	Role Role
	// Method is how the caller proved it: "basic", "bearer", or "none" when authentication is off.
	Method string
}

type principalKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// FromContext returns the principal of the request whose context ctx is, if it was authenticated (or
// authentication is off, see Unauthenticated).
func FromContext(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}

// Unauthenticated is the middleware of a listener without authentication: every request is an admin named
// "anonymous", so code that asks FromContext behaves as it does for an admin, and never as for a stranger.
func Unauthenticated(next http.Handler) http.Handler {
	p := Principal{Name: "anonymous", Role: RoleAdmin, Method: "none"}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(WithPrincipal(r.Context(), p)))
	})
}

// Config configures an Authenticator.
type Config struct {
	// UsersFile is the path of the users file. Required.
	UsersFile string
	// ReloadInterval is how often the file is read for changes (filewatch.DefaultInterval when zero).
	ReloadInterval time.Duration
	// Open reports the requests served without credentials. Nil means none.
	Open func(r *http.Request) bool
	// Logger receives reloads and failed authentications (rate-limited). Nil discards them.
	Logger *slog.Logger
	// FailureBurst is how many wrong passwords one client (IP address) may send before it must wait
	// FailureInterval for each next one; meanwhile it gets 429 without any password being checked.
	// DefaultFailureBurst and DefaultFailureInterval when zero.
	FailureBurst    int
	FailureInterval time.Duration
}

// Authenticator checks the credentials of requests against the users file it keeps loaded.
type Authenticator struct {
	cfg   Config
	log   *slog.Logger
	users atomic.Pointer[users]
	sum   [32]byte // of the file as first loaded, for Run
	// cacheKey keys the hashes of verified passwords, so that the cache holds nothing a memory dump could
	// test guesses against without also having the key.
	cacheKey [32]byte
	failures *lograte.Limiter
	csrf     *http.CrossOriginProtection
	// slow bounds how many slow hashes are computed at once. Each costs a core for a good part of a second,
	// so a client guessing passwords as fast as it can would otherwise take every core from the replication;
	// with the bound it takes at most half of them, and waits.
	slow chan struct{}
	// clients keeps each client to one slow check at a time, and to a budget of failures.
	clients *clientLimits
}

// failureLogInterval is how often one kind of failed authentication for one name is logged at most: a
// password-guessing client would otherwise write a line per guess.
const failureLogInterval = time.Minute

// New loads the users file; an unreadable or invalid file is an error naming it and the line.
func New(cfg Config) (*Authenticator, error) {
	if cfg.UsersFile == "" {
		return nil, fmt.Errorf("auth: Config.UsersFile is required")
	}
	a := &Authenticator{cfg: cfg, log: cfg.Logger,
		failures: lograte.New(failureLogInterval, lograte.WithMaxKeys(256)),
		csrf:     http.NewCrossOriginProtection(),
		slow:     make(chan struct{}, max(1, runtime.GOMAXPROCS(0)/2)),
		clients:  newClientLimits(cmp.Or(cfg.FailureBurst, DefaultFailureBurst), cmp.Or(cfg.FailureInterval, DefaultFailureInterval))}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	if a.cfg.Open == nil {
		a.cfg.Open = func(*http.Request) bool { return false }
	}
	if _, err := rand.Read(a.cacheKey[:]); err != nil {
		return nil, fmt.Errorf("auth: random cache key: %w", err)
	}
	contents, err := filewatch.Read(cfg.UsersFile)
	if err != nil {
		return nil, fmt.Errorf("users file: %w", err)
	}
	u, err := parseUsers(cfg.UsersFile, contents[0])
	if err != nil {
		return nil, err
	}
	a.users.Store(u)
	a.sum = filewatch.Sum(contents)
	a.logLoaded("loaded the REST users file", u)
	return a, nil
}

func (a *Authenticator) logLoaded(msg string, u *users) {
	if u.count() == 0 {
		a.log.Warn(msg+": it lists nobody, so every request but the open ones is refused", "file", a.cfg.UsersFile)
		return
	}
	a.log.Info(msg, "file", a.cfg.UsersFile, "password_users", len(u.passwords), "token_users", len(u.tokens))
}

// Run re-reads the users file whenever its bytes change, until ctx is done. A version that does not parse is
// logged and ignored: the users loaded before stay, since refusing everyone (or no one) because of a typo
// would be worse.
func (a *Authenticator) Run(ctx context.Context) {
	filewatch.Reload(ctx, a.log, a.cfg.ReloadInterval, a.sum, []string{a.cfg.UsersFile}, func(contents [][]byte) error {
		u, err := parseUsers(a.cfg.UsersFile, contents[0])
		if err != nil {
			return err
		}
		a.users.Store(u)
		a.logLoaded("reloaded the REST users file", u)
		return nil
	}, "the REST users file changed but does not parse; still using its previous version",
		"cannot read the REST users file; still using its previous version")
}

// Unauthorized is the plain-text body of a 401, word for word Connect's (JaasBasicAuthFilter).
const Unauthorized = "User cannot access the resource."

// Realm is the protection space named in the WWW-Authenticate challenge.
const Realm = "kmirror"

// Authenticate establishes the principal of every request that is not open, and answers 401 to those it
// cannot authenticate. An open request passes without a principal, whatever its credentials.
func (a *Authenticator) Authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a.cfg.Open(r) {
			next.ServeHTTP(w, r)
			return
		}
		p, why, ok := a.authenticate(r)
		if !ok && why.retryAfter > 0 {
			a.logFailure(r, why)
			w.Header().Set("Retry-After", strconv.Itoa(int(why.retryAfter.Round(time.Second)/time.Second)+1))
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Header().Set("Cache-Control", "no-store")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(TooManyFailures))
			return
		}
		if !ok {
			a.logFailure(r, why)
			w.Header().Add("WWW-Authenticate", `Basic realm="`+Realm+`", charset="UTF-8"`)
			w.Header().Add("WWW-Authenticate", `Bearer realm="`+Realm+`"`)
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Header().Set("Cache-Control", "no-store")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(Unauthorized))
			return
		}
		// A browser sends a basic-auth password it has cached with every request to this origin, whichever
		// page asked for it, so a form on another site could otherwise make a logged-in operator's browser
		// delete a connector. Programs (curl, Terraform) send no Origin or Sec-Fetch-Site and pass.
		if p.Method == "basic" {
			if err := a.csrf.Check(r); err != nil {
				WriteForbidden(w, "Refused a cross-origin request: "+err.Error())
				return
			}
		}
		next.ServeHTTP(w, r.WithContext(WithPrincipal(r.Context(), p)))
	})
}

// TooManyFailures is the plain-text body of a 429: the client has sent too many wrong passwords.
const TooManyFailures = "Too many failed authentications from this address; retry later."

// failure is why a request was not authenticated, for the log.
type failure struct {
	reason string // one of a few fixed texts: it keys the rate limit
	name   string // the name the request claimed, if any
	detail string // what else the client sent that explains it, if anything
	// retryAfter, when positive, says the client is out of its failure budget: answered 429, nothing checked.
	retryAfter time.Duration
}

func (a *Authenticator) authenticate(r *http.Request) (Principal, failure, bool) {
	header := r.Header.Get("Authorization")
	if header == "" {
		return Principal{}, failure{reason: "no credentials"}, false
	}
	scheme, creds, _ := strings.Cut(header, " ")
	creds = strings.TrimSpace(creds)
	u := a.users.Load()
	switch {
	case strings.EqualFold(scheme, "basic"):
		// As Connect's BasicAuthCallBackHandler: standard base64 of name:password, split at the first colon.
		raw, err := base64.StdEncoding.DecodeString(creds)
		if err != nil {
			return Principal{}, failure{reason: "malformed basic credentials (not base64)"}, false
		}
		name, password, found := strings.Cut(string(raw), ":")
		if !found || name == "" || !utf8.ValidString(name) {
			return Principal{}, failure{reason: "malformed basic credentials (no name:password)"}, false
		}
		role, why := a.checkPassword(r.Context(), u, clientAddr(r), name, password)
		if role == RoleNone {
			why.name = name
			return Principal{}, why, false
		}
		return Principal{Name: name, Role: role, Method: "basic"}, failure{}, true
	case strings.EqualFold(scheme, "bearer"):
		t, ok := checkToken(u, creds)
		if !ok {
			return Principal{}, failure{reason: "unknown bearer token"}, false
		}
		return Principal{Name: t.name, Role: t.role, Method: "bearer"}, failure{}, true
	}
	return Principal{}, failure{reason: "unsupported authorization scheme", detail: scheme}, false
}

// checkPassword returns the role of name if password is its password, or RoleNone and why not. A password
// verified before passes at once; any other is checked in addr's turn, and a refusal costs every decoy too
// (see users.decoys) and one of addr's failures.
func (a *Authenticator) checkPassword(ctx context.Context, u *users, addr, name, password string) (Role, failure) {
	pu, known := u.passwords[name]
	sum := a.keyedSum(name, password)
	if known {
		if cached, ok := u.verified.Load(name); ok {
			c := cached.([32]byte)
			if subtle.ConstantTimeCompare(c[:], sum[:]) == 1 {
				return pu.role, failure{}
			}
		}
	}
	if wait := a.clients.retryAfter(addr); wait > 0 {
		return RoleNone, failure{reason: "too many failed authentications from this address", retryAfter: wait}
	}
	release, err := a.clients.take(ctx, addr)
	if err != nil {
		return RoleNone, failure{reason: "request ended while waiting for a password check"}
	}
	defer release()
	// Again in the client's turn: the checks it waited behind may have spent its budget.
	if wait := a.clients.retryAfter(addr); wait > 0 {
		return RoleNone, failure{reason: "too many failed authentications from this address", retryAfter: wait}
	}
	var ok bool
	checked := a.slowly(ctx, func() {
		spent := ""
		if known {
			ok = pu.hash.verify([]byte(password))
			spent = pu.hash.cost()
		}
		if ok {
			return
		}
		for _, d := range u.decoys {
			if d.cost() != spent {
				d.verify([]byte(password))
			}
		}
	})
	switch {
	case !checked:
		return RoleNone, failure{reason: "request ended while waiting for a password check"}
	case ok:
		u.verified.Store(name, sum)
		return pu.role, failure{}
	}
	a.clients.failed(addr)
	if !known {
		return RoleNone, failure{reason: "unknown user"}
	}
	return RoleNone, failure{reason: "wrong password"}
}

// slowly runs check once a slot for slow hashes is free, or returns false when ctx ends first.
func (a *Authenticator) slowly(ctx context.Context, check func()) bool {
	select {
	case a.slow <- struct{}{}:
	case <-ctx.Done():
		return false
	}
	defer func() { <-a.slow }()
	check()
	return true
}

func (a *Authenticator) keyedSum(name, password string) [32]byte {
	h := sha256.New()
	h.Write(a.cacheKey[:])
	fmt.Fprintf(h, "%d:%s:%s", len(name), name, password)
	var s [32]byte
	copy(s[:], h.Sum(nil))
	return s
}

// checkToken finds the token's user, comparing against every token in constant time so that the time taken
// tells nothing about which, or how much, of a hash matched.
func checkToken(u *users, token string) (tokenUser, bool) {
	sum := sha256.Sum256([]byte(token))
	var found tokenUser
	match := 0
	for _, t := range u.tokens {
		if subtle.ConstantTimeCompare(t.sum[:], sum[:]) == 1 {
			found, match = t, 1
		}
	}
	return found, match == 1
}

func (a *Authenticator) logFailure(r *http.Request, f failure) {
	ctx := r.Context()
	args := []any{"reason", f.reason, "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr}
	if f.name != "" {
		args = append(args, "user", quoteShort(f.name))
	}
	if f.detail != "" {
		args = append(args, "detail", quoteShort(f.detail))
	}
	if f.reason == "no credentials" {
		// What every browser sends first, before it has asked for a password: not worth a warning.
		a.failures.Log(ctx, a.log, slog.LevelDebug, "none", "request without credentials refused", args...)
		return
	}
	// Wrong passwords are limited per user, whose names come from the users file, so a guess at one user
	// does not hide guesses at another; every other failure per reason only, since its names and schemes are
	// whatever the client made up, and a client making up a new one per request must not get a line each.
	key := f.reason
	if f.reason == "wrong password" {
		key += "\x00" + f.name
	}
	a.failures.Log(ctx, a.log, slog.LevelWarn, key, "REST authentication failed", args...)
}

// quoteShort bounds what a client chose to send before it goes into a log line.
func quoteShort(s string) string {
	const max = 64
	if len(s) > max {
		s = s[:max] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}

// Authorize lets a request through if its principal's role allows it: open requests always, GET and HEAD for
// read-only and admin, anything else for admin only. A request that reached it without a principal (nothing
// authenticated it) gets 401: it fails closed.
func Authorize(open func(r *http.Request) bool) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if open != nil && open(r) {
				next.ServeHTTP(w, r)
				return
			}
			p, ok := FromContext(r.Context())
			switch {
			case !ok || p.Role == RoleNone:
				w.Header().Set("Content-Type", "text/plain; charset=utf-8")
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = w.Write([]byte(Unauthorized))
			case p.Role == RoleAdmin, Reads(r.Method):
				next.ServeHTTP(w, r)
			default:
				WriteForbidden(w, fmt.Sprintf("User %s has the %s role, which may only read (GET); %s %s needs the %s role",
					p.Name, p.Role, r.Method, r.URL.EscapedPath(), RoleAdmin))
			}
		})
	}
}

// Reads reports whether method only reads, which is all the read-only role may do.
func Reads(method string) bool {
	return method == http.MethodGet || method == http.MethodHead
}

// WriteForbidden answers 403 with Connect's error body, {"error_code":403,"message":...}.
func WriteForbidden(w http.ResponseWriter, message string) {
	body, _ := json.Marshal(struct {
		ErrorCode int    `json:"error_code"`
		Message   string `json:"message"`
	}{http.StatusForbidden, message})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusForbidden)
	_, _ = w.Write(body)
}

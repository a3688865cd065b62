package auth

import (
	"context"
	"net"
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Defaults of Config.FailureBurst and Config.FailureInterval: ten wrong passwords at once from one client,
// then one per 6 s (ten a minute): enough for a person who mistyped, far too few to guess.
const (
	DefaultFailureBurst    = 10
	DefaultFailureInterval = 6 * time.Second
)

// maxTrackedClients bounds the clients remembered; past it, those that have spent none of their budget and
// are not being checked are forgotten first.
const maxTrackedClients = 10000

// clientLimits keeps each client (by IP address) to one slow password check at a time and to a budget of
// failed ones: a client that floods the login queues behind itself, not in front of others, and a client
// out of budget is refused without any hashing until the budget refills.
type clientLimits struct {
	burst    int
	interval time.Duration

	mu      sync.Mutex
	clients map[string]*client
}

type client struct {
	failures *rate.Limiter // tokens are the failures still allowed
	turn     chan struct{} // holds one token while the client's password check runs
	waiting  int           // requests holding or waiting for the turn
}

func newClientLimits(burst int, interval time.Duration) *clientLimits {
	return &clientLimits{burst: burst, interval: interval, clients: map[string]*client{}}
}

// clientAddr is the IP address of r's client, or its /64 for IPv6, where one host commonly has a whole /64
// to pick addresses from. Behind a reverse proxy it is the proxy's: its clients then share one budget.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	ip := net.ParseIP(host)
	if ip == nil || ip.To4() != nil {
		return host
	}
	return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
}

// retryAfter is how long addr must wait before another failure is allowed, zero if it may try now.
func (l *clientLimits) retryAfter(addr string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	c, ok := l.clients[addr]
	if !ok {
		return 0
	}
	tokens := c.failures.TokensAt(time.Now())
	if tokens >= 1 {
		return 0
	}
	return time.Duration((1 - tokens) * float64(l.interval))
}

// failed spends one failure of addr's budget.
func (l *clientLimits) failed(addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.get(addr).failures.Allow()
}

// take waits for addr's turn to run a password check; release gives it back. An error when ctx ends first.
func (l *clientLimits) take(ctx context.Context, addr string) (release func(), err error) {
	l.mu.Lock()
	c := l.get(addr)
	c.waiting++
	l.mu.Unlock()
	done := func() {
		l.mu.Lock()
		c.waiting--
		l.mu.Unlock()
	}
	select {
	case c.turn <- struct{}{}:
		return func() { <-c.turn; done() }, nil
	case <-ctx.Done():
		done()
		return nil, ctx.Err()
	}
}

// get returns addr's state, creating it; l.mu is held.
func (l *clientLimits) get(addr string) *client {
	c, ok := l.clients[addr]
	if ok {
		return c
	}
	if len(l.clients) >= maxTrackedClients {
		now := time.Now()
		for a, old := range l.clients {
			if old.waiting == 0 && old.failures.TokensAt(now) >= float64(l.burst) {
				delete(l.clients, a)
			}
		}
	}
	c = &client{failures: rate.NewLimiter(rate.Every(l.interval), l.burst), turn: make(chan struct{}, 1)}
	l.clients[addr] = c
	return c
}

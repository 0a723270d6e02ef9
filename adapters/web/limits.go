package web

import (
	"math"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// What the session requests may cost. Every request takes a token of its client address's
// bucket (a page asks once when it opens; a reload keeps its session); a Discord code also takes
// one of the bot's own bucket for code exchanges, which bounds the requests made with the client
// secret however many addresses ask (Discord bans an IP that makes 10,000 invalid requests in
// 10 minutes, Developer docs, Rate Limits: "Invalid Request Limit"); and a Discord user gets a few
// sessions in a row, whatever addresses they come from.
const (
	sessionBurst  = 10
	sessionEvery  = 6 * time.Second // a token back: 10 a minute
	exchangeBurst = 20
	exchangeEvery = 200 * time.Millisecond // 5 a second, 300 a minute: far below the ban's 1,000
	userBurst     = 3
	userEvery     = 20 * time.Second
	// A network's share of the code exchanges (IPv6 by /48, what one site gets from its
	// provider; IPv4 by address, which are scarce), so that one network with many addresses (a
	// new /64 per request) cannot take all of them and lock real players out: a quarter of the
	// burst and the rate.
	exchangeShareBurst = exchangeBurst / 4
	exchangeShareEvery = 4 * exchangeEvery
)

// shareKey is the network whose share of the code exchanges a client takes (see
// exchangeShareBurst); client is its address as httpserve.Client gives it.
func shareKey(client netip.Prefix) string {
	if !client.Addr().Is6() {
		return client.String()
	}
	p, err := client.Addr().Prefix(48)
	if err != nil {
		return client.String()
	}
	return p.String()
}

// maxKeys bounds the keys a limiters holds; a new key beyond it is refused (until idle keys go):
// many addresses at once must not grow the bot's memory without end.
const maxKeys = 20000

// limiters are token buckets by key (an address, a player at a table), all alike, made when a
// key is first seen and dropped once full again: a dropped bucket is what a new one would be, so
// forgetting it changes nothing, and memory follows the keys in use. Time is the caller's.
type limiters struct {
	every rate.Limit
	burst int

	mu    sync.Mutex
	m     map[string]*rate.Limiter
	swept time.Time
}

func newLimiters(every rate.Limit, burst int) *limiters {
	return &limiters{every: every, burst: burst, m: map[string]*rate.Limiter{}}
}

// refill is how long an empty bucket takes to be full again.
func (l *limiters) refill() time.Duration {
	if l.every <= 0 || l.every == rate.Inf {
		return 0
	}
	return time.Duration(float64(l.burst) / float64(l.every) * float64(time.Second))
}

// allow takes a token of key's bucket at now; if there is none it says how long until there is.
func (l *limiters) allow(key string, now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if since := now.Sub(l.swept); since >= l.refill() || len(l.m) >= maxKeys && since >= time.Second {
		l.sweep(now)
	}
	lim := l.m[key]
	if lim == nil {
		if len(l.m) >= maxKeys {
			return false, l.refill()
		}
		lim = rate.NewLimiter(l.every, l.burst)
		l.m[key] = lim
	}
	if lim.AllowN(now, 1) {
		return true, 0
	}
	return false, wait(lim, now)
}

// sweep drops the buckets that are full again.
func (l *limiters) sweep(now time.Time) {
	for k, lim := range l.m {
		if lim.TokensAt(now) >= float64(l.burst) {
			delete(l.m, k)
		}
	}
	l.swept = now
}

// wait is how long until lim has a token, at least a second (a Retry-After counts in seconds).
func wait(lim *rate.Limiter, now time.Time) time.Duration {
	missing := 1 - lim.TokensAt(now)
	if missing <= 0 || lim.Limit() <= 0 {
		return time.Second
	}
	return max(time.Second, time.Duration(math.Ceil(missing/float64(lim.Limit())))*time.Second)
}

// waitUntil is the moment until which Discord asked the bot to wait (a 429's Retry-After): a
// code exchange before then is refused without asking Discord.
type waitUntil struct {
	mu sync.Mutex
	t  time.Time
}

func (w *waitUntil) set(t time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if t.After(w.t) {
		w.t = t
	}
}

// left is how long there is still to wait at now, 0 for none.
func (w *waitUntil) left(now time.Time) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return max(0, w.t.Sub(now))
}

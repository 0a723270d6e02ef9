package discord

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"

	"github.com/kontermatt/kontermatt/core/table"
)

// Pacing the IDENTIFYs. discordgo v0.29.0 answers an Invalid Session (op 9) with an IDENTIFY at
// once, on the same connection: it ignores max_concurrency ("If your app exceeds this limit,
// Discord will respond with a Invalid Session", developer docs, Gateway: Max Concurrency, which
// makes an op 9 answered so a storm), the day's session starts (Gateway: Session Start Limit;
// running out resets the token), and the docs' "your app should disconnect" and identify on a
// new connection (Gateway: Resuming). Its own reconnect loop, after a failed RESUME, opens again
// at once. The library's reconnecting is therefore off (ShouldReconnectOnError) and the adapter
// reconnects each shard itself (keepShard), and every IDENTIFY any session writes passes the
// identifyGate first: the gate sits in the websocket's own connection (the Dialer's dial
// functions, the library's seam for it), reads the frames the client writes, and holds an
// IDENTIFY until its bucket's window is free and the shard's backoff is over, or refuses it when
// it would leave fewer session starts than the reserve. An IDENTIFY on a connection that already
// carried one (or a RESUME) is the library answering an op 9: the gate closes the connection
// instead, and keepShard starts a new session on a new one.

// identifyBackoffMax bounds the wait between IDENTIFYs of a shard that get no READY.
const identifyBackoffMax = 10 * time.Minute

var (
	errIdentifyStopped = errors.New("discord: stopping: IDENTIFY not sent")
	errReidentify      = errors.New("discord: an IDENTIFY answering an Invalid Session on its connection: reconnecting instead")
)

// identifyGate paces the IDENTIFYs of every shard of an adapter.
//
// With several copies (Config.Cluster) the window is the application's, not a copy's (Discord
// counts max_concurrency per bot token): an IDENTIFY first takes the bucket's lease
// IdentifyLease(bucket), and the copy keeps it for a window after the IDENTIFY went out, so
// that no copy identifies in that bucket within the window. The day's session starts are
// Discord's count for the token too; each copy knows it as of its last GET /gateway/bot (at its
// start and whenever it takes a shard over: runHeldShard) less its own IDENTIFYs since, so
// between those a copy does not see the others' starts, and the reserve it keeps is its own.
type identifyGate struct {
	window time.Duration // Discord's window per bucket, 5 s
	leases table.Leases  // the copies' leases (Config.Cluster); nil: the only copy

	mu             sync.Mutex
	maxConcurrency int
	shards         int
	left           int // session starts left today, as last told and counted since; -1: unknown
	renew          time.Time
	last           map[int]time.Time // bucket (shard_id % max_concurrency) → its last IDENTIFY
	tries          map[int]int       // shard → IDENTIFYs since its last READY
	lastTry        map[int]time.Time // shard → its last IDENTIFY
	sent           int               // IDENTIFYs let through, for tests
}

func newIdentifyGate(window time.Duration) *identifyGate {
	return &identifyGate{window: window, maxConcurrency: 1, left: -1, last: map[int]time.Time{}, tries: map[int]int{},
		lastTry: map[int]time.Time{}}
}

// learn takes what GET /gateway/bot says of the session starts.
func (g *identifyGate) learn(l discordgo.SessionInformation, shards int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.maxConcurrency, g.shards = max(l.MaxConcurrency, 1), shards
	if l.Total == 0 && l.Remaining == 0 && l.MaxConcurrency == 0 {
		g.left = -1 // nothing to go by (see checkSessionStarts)
		return
	}
	g.left, g.renew = l.Remaining, time.Now().Add(time.Duration(l.ResetAfter)*time.Millisecond)
}

// ready notes a shard's READY: its next IDENTIFY waits for its bucket only.
func (g *identifyGate) ready(shard int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.tries, shard)
}

// IdentifyLease is the lease a copy holds from an IDENTIFY in bucket (shard_id %
// max_concurrency) until the bucket's window after it is over (Config.Cluster).
func IdentifyLease(bucket int) string { return fmt.Sprintf("discord/identify/%d", bucket) }

// take waits until shard may IDENTIFY, and counts it; or says why it may not. With several
// copies it holds the bucket's lease first, and gives it up a window after the IDENTIFY.
func (g *identifyGate) take(ctx context.Context, shard int) error {
	g.mu.Lock()
	leases, bucket := g.leases, shard%g.maxConcurrency
	window := g.window + max(g.window/10, 100*time.Millisecond) // as in takeLocal
	g.mu.Unlock()
	if leases == nil {
		return g.takeLocal(ctx, shard)
	}
	held, release, err := leases.Hold(ctx, IdentifyLease(bucket))
	if err != nil {
		return errIdentifyStopped // Hold waits for the lease until ctx ends
	}
	if err := g.takeLocal(held, shard); err != nil {
		release()
		return err
	}
	time.AfterFunc(window, release)
	return nil
}

// takeLocal waits until shard may IDENTIFY as far as this copy knows, and counts it.
func (g *identifyGate) takeLocal(ctx context.Context, shard int) error {
	g.mu.Lock()
	for {
		if g.left >= 0 && time.Now().After(g.renew) {
			g.left = -1 // renewed: the next GET /gateway/bot says how many
		}
		// What a start by hand needs (checkSessionStarts: the shards and the reserve) is kept.
		if keep := g.shards + max(g.shards, minSessionStartsLeft); g.left >= 0 && g.left-1 < keep {
			err := fmt.Errorf("discord: shard %d: not identifying: only %d of the day's session starts are left (they renew in %v), and fewer than %d would leave too few to start the bot by hand",
				shard, g.left, time.Until(g.renew).Round(time.Second), keep)
			g.mu.Unlock()
			return err
		}
		// Discord counts the window when an IDENTIFY arrives, which may be a little later than
		// when it left, and a little earlier for the next one: a tenth more (a tenth of a second
		// at least) keeps clear of it.
		now, window := time.Now(), g.window+max(g.window/10, 100*time.Millisecond)
		at := g.last[shard%g.maxConcurrency].Add(window)
		if n := g.tries[shard]; n > 0 {
			// IDENTIFYs that got no READY: each waits twice as long as the one before.
			at = later(at, g.lastTry[shard].Add(min(window<<min(n-1, 20), identifyBackoffMax)))
		}
		if !now.Before(at) {
			g.last[shard%g.maxConcurrency], g.lastTry[shard] = now, now
			g.tries[shard]++
			g.sent++
			if g.left > 0 {
				g.left--
			}
			g.mu.Unlock()
			return nil
		}
		g.mu.Unlock()
		t := time.NewTimer(at.Sub(now))
		select {
		case <-ctx.Done():
			t.Stop()
			return errIdentifyStopped
		case <-t.C:
		}
		g.mu.Lock()
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// dialer is the websocket dialer of one shard's sessions: connections whose client frames pass
// the gate. Behind an HTTPS proxy (HTTPS_PROXY) a wss:// connection is encrypted before the gate
// could read it, and goes unpaced as before.
func (a *Adapter) dialer(ctx context.Context, shard int, redo func()) *websocket.Dialer {
	d := &websocket.Dialer{HandshakeTimeout: 45 * time.Second}
	wrap := func(c net.Conn) net.Conn {
		return &gatedConn{Conn: c, gate: a.gate, ctx: ctx, shard: shard, redo: redo}
	}
	d.NetDialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return wrap(c), nil
	}
	probe := &http.Request{URL: &url.URL{Scheme: "https", Host: "gateway.discord.gg"}}
	if p, err := http.ProxyFromEnvironment(probe); err == nil && p != nil {
		d.Proxy, d.NetDialContext = http.ProxyFromEnvironment, nil
		return d
	}
	d.NetDialTLSContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		host, _, _ := net.SplitHostPort(addr)
		tc := tls.Client(c, &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12})
		if err := tc.HandshakeContext(ctx); err != nil {
			c.Close()
			return nil, err
		}
		return wrap(tc), nil
	}
	return d
}

// gatedConn is a gateway connection whose IDENTIFYs wait for the gate. A websocket client
// writes each frame with a header, a mask key and the masked payload (RFC 6455, 5.2); gorilla
// writes a small message (an IDENTIFY is a few hundred bytes) in one Write, so a frame that
// starts a Write is looked at: a text frame whose payload begins {"op":2 is an IDENTIFY, {"op":6
// a RESUME (encoding/json writes discordgo's op structs with "op" first).
type gatedConn struct {
	net.Conn
	gate  *identifyGate
	ctx   context.Context
	shard int
	redo  func() // the session is to start anew (an IDENTIFY answering an op 9)

	mu     sync.Mutex
	skip   int  // bytes of the current frame's payload still to come in later writes
	authed bool // an IDENTIFY or RESUME went out on this connection
}

func (c *gatedConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	op, ok := -1, c.skip == 0
	if ok {
		var n int
		op, n = clientFrameOp(p)
		c.skip = max(n-len(p), 0)
	} else {
		c.skip = max(c.skip-len(p), 0)
	}
	authed := c.authed
	if op == 2 || op == 6 {
		c.authed = true
	}
	c.mu.Unlock()
	switch {
	case op == 2 && authed:
		c.redo()
		c.Conn.Close()
		return 0, errReidentify
	case op == 2:
		if err := c.gate.take(c.ctx, c.shard); err != nil {
			c.redo()
			c.Conn.Close()
			return 0, err
		}
	}
	return c.Conn.Write(p)
}

// clientFrameOp reads the start of a masked client frame: the gateway opcode in its JSON
// payload, or -1, and the frame's length (header and payload).
func clientFrameOp(p []byte) (op, frameLen int) {
	if len(p) < 2 || p[1]&0x80 == 0 {
		return -1, 0
	}
	n, h := int(p[1]&0x7f), 2
	switch n {
	case 126:
		if len(p) < 4 {
			return -1, 0
		}
		n, h = int(p[2])<<8|int(p[3]), 4
	case 127:
		if len(p) < 10 {
			return -1, 0
		}
		n = 0
		for _, b := range p[2:10] {
			n = n<<8 | int(b)
		}
		h = 10
	}
	if p[0]&0x0f != websocket.TextMessage || len(p) < h+4+7 {
		return -1, h + 4 + n
	}
	mask := p[h : h+4]
	var head [7]byte
	for i := range head {
		head[i] = p[h+4+i] ^ mask[i%4]
	}
	switch string(head[:]) {
	case `{"op":2`:
		return 2, h + 4 + n
	case `{"op":6`:
		return 6, h + 4 + n
	}
	return -1, h + 4 + n
}

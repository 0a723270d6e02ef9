// Package httpserve builds every HTTP server the bot runs (the web table, the Telegram webhook,
// the admin door, the Discord interactions endpoint to come) with the limits net/http's docs ask
// of a server facing the internet, so that one client cannot starve the process of its file
// descriptors:
//
//   - read, write and idle timeouts (http.Server's ReadHeaderTimeout, ReadTimeout, WriteTimeout,
//     IdleTimeout): a client that drips its request is cut, an idle keep-alive is closed;
//   - a body limit for every request (a handler may set a smaller one with http.MaxBytesReader);
//   - a bound on the connections open at once from one address, and on all of them together.
//
// The connections are counted by a listener that wraps the server's (Serve): a connection over
// a bound is answered at once (429 or 503, with Retry-After) and closed, so the others go on
// being served. Counting at the listener, not by http.Server.ConnState, also counts the
// connections a handler hijacked: a WebSocket is an open file like any other. Hijacked
// connections leave http.Server's deadlines behind (net/http clears them at Hijack), so a
// server's WriteTimeout never cuts a long-lived socket.
//
// Why a bound on all connections too: a bound per address alone leaves the total to the
// number of addresses a client has (an IPv6 network has millions), and the process's descriptors
// are shared with the database, backups and the platforms' own connections. Each server holds at
// most an eighth of the process's open-files limit (RLIMIT_NOFILE), so that the bot's servers
// together never take all of it.
//
// Behind a reverse proxy every request comes from the proxy's address. For peers in
// Limits.Proxies the client is the address the proxy puts in X-Forwarded-For, and the bound per
// address applies to that client's requests in flight (a WebSocket is in flight while it is
// open); Client gives a handler the same address, for its own rate limits.
//
// A new server, e.g. the Discord interactions endpoint:
//
//	srv := httpserve.New("discord interactions", mux, httpserve.Limits{MaxBody: 64 << 10, Proxies: proxies}, log)
//	go srv.Serve(ln)
//	...
//	srv.Shutdown(ctx)
package httpserve

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Limits are what a server grants its clients. A zero field takes the default beside it.
type Limits struct {
	ReadHeaderTimeout time.Duration // the request's headers; default 10 s
	ReadTimeout       time.Duration // the whole request with its body; default 30 s
	WriteTimeout      time.Duration // from the end of the headers to the end of the answer; default 30 s
	IdleTimeout       time.Duration // a kept-alive connection between requests; default 2 minutes
	MaxHeaderBytes    int           // default 16 KiB
	MaxBody           int64         // a request's body; default 64 KiB
	// MaxConns bounds the connections open at once (default 512), and MaxConnsPerAddr those of
	// one client address (default 32); an IPv6 address counts as its /64, the network one host
	// gets. Both shrink when the process's open-files limit is low (see package doc).
	MaxConns        int
	MaxConnsPerAddr int
	// Proxies are the reverse proxies whose X-Forwarded-For names the client (see Client).
	Proxies []netip.Prefix
}

// Or is l with d's values where l has none: a server's own defaults under what its host set.
func (l Limits) Or(d Limits) Limits {
	or := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	or(&l.ReadHeaderTimeout, d.ReadHeaderTimeout)
	or(&l.ReadTimeout, d.ReadTimeout)
	or(&l.WriteTimeout, d.WriteTimeout)
	or(&l.IdleTimeout, d.IdleTimeout)
	if l.MaxHeaderBytes <= 0 {
		l.MaxHeaderBytes = d.MaxHeaderBytes
	}
	if l.MaxBody <= 0 {
		l.MaxBody = d.MaxBody
	}
	if l.MaxConns <= 0 {
		l.MaxConns = d.MaxConns
	}
	if l.MaxConnsPerAddr <= 0 {
		l.MaxConnsPerAddr = d.MaxConnsPerAddr
	}
	if l.Proxies == nil {
		l.Proxies = d.Proxies
	}
	return l
}

// Loopback is the proxies of a bot behind a reverse proxy on the same machine.
var Loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

// fdLimit is the process's open-files limit, 0 where it has none or it is unknown.
var fdLimit = openFilesLimit

// withDefaults fills in the zero fields and applies the share of the open-files limit.
func (l Limits) withDefaults() Limits {
	l = l.Or(Limits{ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second,
		IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 16 << 10, MaxBody: 64 << 10, MaxConns: 512, MaxConnsPerAddr: 32})
	if n := fdLimit(); n > 0 && l.MaxConns > max(8, n/8) {
		// A quarter of the server's share per address: four addresses are needed to fill it.
		l.MaxConns = max(8, n/8)
		l.MaxConnsPerAddr = min(l.MaxConnsPerAddr, max(2, l.MaxConns/4))
	}
	l.MaxConnsPerAddr = min(l.MaxConnsPerAddr, l.MaxConns)
	return l
}

// Server is an http.Server with Limits. Serve it with Serve (not the http.Server's own methods,
// which would not count the connections).
type Server struct {
	name string
	lim  Limits
	log  *slog.Logger
	http *http.Server

	mu       sync.Mutex
	open     int                  // connections open
	perAddr  map[netip.Prefix]int // connections open by direct peer
	inFlight map[netip.Prefix]int // requests in flight by proxied client
	refused  atomic.Uint64

	noted    rateLog // refusals
	errs     rateLog // http.Server's own error lines
	noXFFMsg sync.Once
}

// New makes a server named for its log lines (e.g. "web table") that serves h within lim.
func New(name string, h http.Handler, lim Limits, logger *slog.Logger) *Server {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{name: name, lim: lim.withDefaults(), log: logger.With("server", name),
		perAddr: map[netip.Prefix]int{}, inFlight: map[netip.Prefix]int{}}
	s.noted.every, s.errs.every = time.Minute, time.Minute
	s.http = &http.Server{
		Handler:           s.wrap(h),
		ReadHeaderTimeout: s.lim.ReadHeaderTimeout,
		ReadTimeout:       s.lim.ReadTimeout,
		WriteTimeout:      s.lim.WriteTimeout,
		IdleTimeout:       s.lim.IdleTimeout,
		MaxHeaderBytes:    s.lim.MaxHeaderBytes,
		ErrorLog:          log.New(errorLog{s}, "", 0),
		// The request's connection (our *conn) goes into its context, and a hijacked one is
		// marked: see wrap.
		ConnContext: func(ctx context.Context, c net.Conn) context.Context { return context.WithValue(ctx, connKey{}, c) },
		ConnState: func(c net.Conn, st http.ConnState) {
			if cc, ok := c.(*conn); ok && st == http.StateHijacked {
				cc.hijacked.Store(true)
			}
		},
	}
	return s
}

// Limits are the server's limits, defaults filled in.
func (s *Server) Limits() Limits { return s.lim }

// Serve accepts connections on ln within the limits, until Shutdown or Close (then it returns
// http.ErrServerClosed).
func (s *Server) Serve(ln net.Listener) error { return s.http.Serve(&listener{Listener: ln, s: s}) }

// Shutdown stops accepting and waits for the requests in flight (not hijacked connections) until
// ctx ends; see http.Server.Shutdown.
func (s *Server) Shutdown(ctx context.Context) error { return s.http.Shutdown(ctx) }

// Close closes the listeners and every connection not hijacked.
func (s *Server) Close() error { return s.http.Close() }

// Stats are a server's connections now and its refusals so far.
type Stats struct {
	Open    int    // connections open, hijacked ones included
	Refused uint64 // connections and proxied requests refused over a bound
}

// Stats says how many connections are open and how many were refused.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Stats{Open: s.open, Refused: s.refused.Load()}
}

// addrKey is what the bound per address counts: an IPv4 address, or an IPv6 address's /64.
func addrKey(a netip.Addr) netip.Prefix {
	a = a.Unmap()
	bits := 32
	if a.Is6() {
		bits = 64
	}
	p, _ := a.Prefix(bits)
	return p
}

func (s *Server) isProxy(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range s.lim.Proxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// peerOf gives a connection's TCP peer; false for anything else (a unix socket's peer).
func peerOf(a net.Addr) (netip.Addr, bool) {
	if t, ok := a.(*net.TCPAddr); ok {
		ap := t.AddrPort()
		return ap.Addr().Unmap(), ap.Addr().IsValid()
	}
	return netip.Addr{}, false
}

// Why a connection or a request is refused.
const (
	overAddr  = "too many connections from one address"
	overTotal = "too many connections"
)

// take counts a new connection from peer; it gives why not, or "".
func (s *Server) take(peer netip.Addr, tcp bool) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open >= s.lim.MaxConns {
		return overTotal
	}
	if tcp && !s.isProxy(peer) {
		k := addrKey(peer)
		if s.perAddr[k] >= s.lim.MaxConnsPerAddr {
			return overAddr
		}
		s.perAddr[k]++
	}
	s.open++
	return ""
}

func (s *Server) release(peer netip.Addr, tcp bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.open--
	if tcp && !s.isProxy(peer) {
		k := addrKey(peer)
		if s.perAddr[k]--; s.perAddr[k] <= 0 {
			delete(s.perAddr, k)
		}
	}
}

// listener counts the connections it hands out; one over a bound is answered and closed.
type listener struct {
	net.Listener
	s *Server
}

func (l *listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		peer, tcp := peerOf(c.RemoteAddr())
		if why := l.s.take(peer, tcp); why != "" {
			l.s.refuseConn(c, peer, why)
			continue
		}
		return &conn{Conn: c, s: l.s, peer: peer, tcp: tcp}, nil
	}
}

// refuseConn answers a connection over a bound without reading its request, and closes it. The
// answer is a few bytes into a fresh socket's buffer: it does not wait.
func (s *Server) refuseConn(c net.Conn, peer netip.Addr, why string) {
	status := "503 Service Unavailable"
	if why == overAddr {
		status = "429 Too Many Requests"
	}
	body := why + "; try again later\n"
	_ = c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	fmt.Fprintf(c, "HTTP/1.1 %s\r\nContent-Type: text/plain; charset=utf-8\r\nRetry-After: 10\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s",
		status, len(body), body)
	_ = c.Close()
	s.refused.Add(1)
	if n, ok := s.noted.allow(); ok {
		s.log.Warn("refusing connections over the server's bounds", "why", why, "remote", peer.String(),
			"refused_since_last_line", n, "max_conns", s.lim.MaxConns, "max_conns_per_address", s.lim.MaxConnsPerAddr)
	}
}

// conn gives its place back when it closes, whoever closes it (the server, or a handler that
// hijacked it).
type conn struct {
	net.Conn
	s        *Server
	peer     netip.Addr
	tcp      bool
	once     sync.Once
	hijacked atomic.Bool // a handler took it over
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.s.release(c.peer, c.tcp) })
	return err
}

// clientKey holds a request's client in its context, connKey its connection.
type (
	clientKey struct{}
	connKey   struct{}
)

// readBody is a request's body that knows whether it was read to its end.
type readBody struct {
	io.ReadCloser
	eof atomic.Bool
}

func (b *readBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.eof.Store(true)
	}
	return n, err
}

// dropBody makes the server read no more of a request's body: net/http reads up to 256 KiB of
// a body the handler left, as slowly as the client sends it, before it answers or closes; past
// the deadline it closes the connection instead. A hijacked connection is left alone.
func dropBody(r *http.Request) {
	if c, ok := r.Context().Value(connKey{}).(*conn); ok && !c.hijacked.Load() {
		_ = c.SetReadDeadline(time.Now())
	}
}

// wrap gives every request its body limit and its client; a proxied client over the bound per
// address is refused. A body the handler did not read to its end is not waited for.
func (s *Server) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := &readBody{ReadCloser: http.MaxBytesReader(w, r.Body, s.lim.MaxBody)}
		r.Body = body
		defer func() {
			if r.ContentLength != 0 && !body.eof.Load() {
				dropBody(r)
			}
		}()
		ap, err := netip.ParseAddrPort(r.RemoteAddr)
		if err != nil || !s.isProxy(ap.Addr()) {
			h.ServeHTTP(w, r)
			return
		}
		client, named := forwardedClient(r.Header.Values("X-Forwarded-For"), s.isProxy)
		if !named {
			client = ap.Addr().Unmap()
			s.noXFFMsg.Do(func() {
				s.log.Info("a request from a trusted proxy names no client in X-Forwarded-For: its clients count as one address",
					"proxy", client.String())
			})
		}
		k := addrKey(client)
		s.mu.Lock()
		over := s.inFlight[k] >= s.lim.MaxConnsPerAddr
		if !over {
			s.inFlight[k]++
		}
		s.mu.Unlock()
		if over {
			s.refused.Add(1)
			if n, ok := s.noted.allow(); ok {
				s.log.Warn("refusing requests over the server's bounds", "why", overAddr, "client", client.String(),
					"refused_since_last_line", n, "max_conns_per_address", s.lim.MaxConnsPerAddr)
			}
			dropBody(r)
			w.Header().Set("Connection", "close")
			w.Header().Set("Retry-After", "10")
			http.Error(w, overAddr+"; try again later", http.StatusTooManyRequests)
			return
		}
		defer func() {
			s.mu.Lock()
			if s.inFlight[k]--; s.inFlight[k] <= 0 {
				delete(s.inFlight, k)
			}
			s.mu.Unlock()
		}()
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), clientKey{}, client)))
	})
}

// forwardedClient reads X-Forwarded-For from the right: the first address that is not one of
// the proxies is the client (the ones left of it were written by the client itself and prove
// nothing). false if the header names none.
func forwardedClient(values []string, proxy func(netip.Addr) bool) (netip.Addr, bool) {
	hops := strings.Split(strings.Join(values, ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		h := strings.TrimSpace(hops[i])
		a, err := netip.ParseAddr(h)
		if err != nil {
			ap, err2 := netip.ParseAddrPort(h) // "1.2.3.4:5678", "[::1]:80"
			if err2 != nil {
				return netip.Addr{}, false // a hop the proxy did not write: trust nothing left of it
			}
			a = ap.Addr()
		}
		if a = a.Unmap(); !proxy(a) {
			return a, true
		}
	}
	return netip.Addr{}, false
}

// Client is the address of the client that made r: the peer's, or behind a trusted proxy the
// client it names. An IPv6 address is given as its /64 (what one host gets), for rate limits by
// address; the zero Prefix when the peer is no IP address (a unix socket).
func Client(r *http.Request) netip.Prefix {
	if a, ok := r.Context().Value(clientKey{}).(netip.Addr); ok {
		return addrKey(a)
	}
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Prefix{}
	}
	return addrKey(ap.Addr())
}

// ParseProxies reads a list of proxies: addresses or networks (CIDR), separated by commas or
// spaces, e.g. "127.0.0.1, 10.0.0.0/8, ::1".
func ParseProxies(text string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.FieldsFunc(text, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		if p, err := netip.ParsePrefix(f); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("%q is neither an address nor a network like 10.0.0.0/8", f)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

// rateLog lets a log line through at most once per period and counts the ones held back.
type rateLog struct {
	every time.Duration
	mu    sync.Mutex
	last  time.Time
	held  int
}

// allow reports whether to log now, and how many were held back since the last line (this one
// included).
func (r *rateLog) allow() (int, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.held++
	now := time.Now()
	if !r.last.IsZero() && now.Sub(r.last) < r.every {
		return 0, false
	}
	n := r.held
	r.last, r.held = now, 0
	return n, true
}

// errorLog takes http.Server's own error lines (an accept error, a handler's panic) at warn
// level, at most one a minute: a client may cause them.
type errorLog struct{ s *Server }

func (e errorLog) Write(p []byte) (int, error) {
	if n, ok := e.s.errs.allow(); ok {
		e.s.log.Warn(strings.TrimSpace(string(p)), "lines_since_last", n)
	}
	return len(p), nil
}

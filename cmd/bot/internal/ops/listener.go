package ops

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/kontermatt/kontermatt/adapters/httpserve"
)

// ErrMetricsToken is a metrics listener on an address other hosts reach, without a token: anyone
// on the network would read the bot's metrics.
var ErrMetricsToken = errors.New("a metrics listener on an address other hosts reach needs metrics_token (or KONTERMATT_METRICS_TOKEN)")

// CheckMetrics refuses a metrics listener that is not loopback and has no token long enough, and
// an address that is not host:port. Its errors never show the token.
func CheckMetrics(addr, token string) error {
	if addr == "" {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("metrics_addr %q: %v", addr, err)
	}
	switch {
	case token != "" && len(token) < MinToken:
		return fmt.Errorf("metrics_token (or KONTERMATT_METRICS_TOKEN) needs at least %d characters, e.g. from `openssl rand -hex 16`", MinToken)
	case token == "" && !IsLoopback(host):
		return fmt.Errorf("metrics_addr %q: %w of at least %d characters, e.g. from `openssl rand -hex 16`", addr, ErrMetricsToken, MinToken)
	}
	return nil
}

// IsLoopback tells whether a host is this machine only: localhost or a loopback address. An empty
// host (":9464") is every address, not loopback.
func IsLoopback(host string) bool {
	ip := net.ParseIP(host)
	return host == "localhost" || ip != nil && ip.IsLoopback()
}

// MetricsListener serves GET /metrics on its own address, apart from the admin door, so that a
// Prometheus in another container or on another host can scrape it, and /readyz and /livez, so
// that a reverse proxy's active health check skips a copy that is not ready. Off loopback every
// request needs the bearer token (Prometheus' authorization: credentials, Caddy's
// health_headers); on loopback too when one is set.
type MetricsListener struct {
	Addr    string
	Token   string // never logged
	Handler http.Handler
	Health  http.Handler // /readyz; nil: not served
	Log     *slog.Logger

	srv *httpserve.Server
	ln  net.Listener
}

// metricsLimits are the metrics listener's: GETs from a scraper or two.
var metricsLimits = httpserve.Limits{ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
	WriteTimeout: 30 * time.Second, IdleTimeout: time.Minute, MaxHeaderBytes: 16 << 10, MaxBody: 1 << 10,
	MaxConns: 16, MaxConnsPerAddr: 8, Proxies: []netip.Prefix{}}

// Start listens, or says why not: a listener that CheckMetrics refuses never opens.
func (m *MetricsListener) Start() error {
	if err := CheckMetrics(m.Addr, m.Token); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", m.Addr)
	if err != nil {
		return fmt.Errorf("metrics_addr %s: %w", m.Addr, err)
	}
	m.ln = ln
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler)
	if m.Health != nil {
		mux.Handle("GET /readyz", m.Health)
	}
	mux.HandleFunc("GET /livez", live)
	m.srv = httpserve.New("metrics", m.guard(mux), metricsLimits, m.Log)
	go func() {
		if err := m.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			m.Log.Error("metrics listener stopped", "addr", ln.Addr().String(), "err", err)
		}
	}()
	return nil
}

// ListenAddr is where it listens (its port when Addr asks for port 0); nil before Start.
func (m *MetricsListener) ListenAddr() net.Addr {
	if m.ln == nil {
		return nil
	}
	return m.ln.Addr()
}

// Close stops the listener.
func (m *MetricsListener) Close() {
	if m.srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second) // Close owns its short wait
	defer cancel()
	_ = m.srv.Shutdown(ctx)
	_ = m.srv.Close()
}

// guard wants the token when one is set (compared as hashes in constant time); without one (on
// loopback only) it wants a Host header naming a loopback host, which a web page cannot make a
// browser send (DNS rebinding).
func (m *MetricsListener) guard(next http.Handler) http.Handler {
	want := sha256.Sum256([]byte(m.Token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m.Token == "" {
			if host, _, err := net.SplitHostPort(r.Host); err != nil || !IsLoopback(host) {
				http.Error(w, "forbidden: the Host header must name this loopback listener", http.StatusForbidden)
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		got := sha256.Sum256([]byte(token))
		if !ok || subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			m.Log.Warn("metrics request refused: no or wrong token", "remote", r.RemoteAddr)
			w.Header().Set("WWW-Authenticate", `Bearer realm="kontermatt metrics"`)
			http.Error(w, "unauthorized: send the header Authorization: Bearer <metrics_token>", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

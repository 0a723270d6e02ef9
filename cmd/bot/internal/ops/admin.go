// Package ops is what a host runs beside the game: the admin door (live backups, health,
// metrics over a unix socket and a loopback TCP port), the metrics listener, the Prometheus
// metrics and the health answer, and the client side the one-shot commands (backup, health) use
// to reach a running bot. cmd/bot wires it; nothing in it knows the game's rules.
package ops

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kontermatt/kontermatt/adapters/httpserve"
	"github.com/kontermatt/kontermatt/storage"
)

// The admin door serves a running bot's live backup, its health and its metrics:
//
//	GET /backup       a consistent copy of the database (a bbolt file)
//	GET /readyz       readiness: 200 when the database takes a write and every platform is connected, else 503
//	GET /healthz      the same as /readyz (kept for the probes written before it)
//	GET /livez        liveness: 200 while the process answers, whatever its store and platforms say
//	GET /metrics      Prometheus metrics (the one metrics system: expvar's /debug/vars is gone)
//
// It listens on a unix socket (with bbolt beside the database, DATABASE.sock; mode 0600), so that
// `kontermatt backup -db DATABASE` reaches the bot holding that very file, and only its user can connect.
// Only if configured does it also listen on a loopback TCP port; there every request needs the
// admin token and a Host header naming the listener, which a web page cannot make a browser send
// (DNS rebinding).
type Admin struct {
	Store  BackupSource
	Log    *slog.Logger
	Socket string // the unix socket's path; empty: none
	Addr   string // a loopback TCP address; empty: none
	Token  string // the bearer token the TCP listener requires; never logged
	// SharedSocket is a store several copies share (etcd): a socket another live copy listens on
	// is that copy's, and this one runs without a socket rather than refusing to start.
	SharedSocket bool
	// Metrics and Health, when set, serve GET /metrics (Prometheus) and GET /healthz.
	Metrics, Health http.Handler

	// Backups, when set, hears of each live backup sent (the last-backup series).
	Backups interface {
		BackupSent(ctx context.Context, at time.Time)
	}

	// BackupTime is how long a client gets to take a backup of size bytes; nil: backupTime.
	BackupTime func(size int64) time.Duration
	// Grace is how long Close lets downloads go on; 0: 5 s.
	Grace time.Duration

	// backupSlot holds the one backup being sent: a snapshot costs a copy of the database on
	// disk, so two at once are refused rather than queued.
	backupSlot chan struct{}
	servers    []*httpserve.Server
	listeners  []net.Listener // closed by Close itself: a Serve not yet running would close them late
	tcpAddr    net.Addr       // where the TCP listener listens (its port when Addr asks for port 0)
	closeOnce  sync.Once
}

// BackupSource is what the admin door backs up: the bbolt store, or an etcd store's snapshots.
type BackupSource interface {
	// Backup writes a bbolt file of the data now to w.
	Backup(w io.Writer) (int64, error)
	// Path is where the snapshot files go beside (the database's path).
	Path() string
}

// backupTimeFor is generous: a minute plus a second per MiB, as slow as 1 MiB/s over loopback.
func backupTimeFor(size int64) time.Duration {
	return time.Minute + time.Duration(size>>20)*time.Second
}

// ErrSocketTooLong is a socket path longer than a unix socket address holds.
var ErrSocketTooLong = errors.New("too long for a unix socket")

// listening is a socket in the way that something listens on (ErrSocketInTheWay inside).
type listening struct{ error }

func (l listening) Unwrap() error { return l.error }

// ErrSocketInTheWay is a file at the admin socket's path that is not this bot's stale socket:
// something else's, left alone, and the bot does not start.
var ErrSocketInTheWay = errors.New("is in the way of the admin socket")

// Start opens the listeners. It only warns about one it cannot open: that costs live backups and
// metrics, not the game. A file at the socket's path that is not this bot's own stale socket
// stops the start (ErrSocketInTheWay): it may be another program's, or another user's.
func (a *Admin) Start() error {
	a.backupSlot = make(chan struct{}, 1)
	mux := a.routes()
	ownSnapshots := true // whoever holds the socket (or the database's lock) owns the snapshots' names
	if a.Socket != "" {
		ln, err := listenSocket(a.Socket)
		switch {
		case errors.Is(err, ErrSocketInTheWay) && a.SharedSocket && errors.As(err, new(listening)):
			// Another copy of the same cluster, with the same configuration, on this host: it
			// answers `kontermatt backup` and `health` for the cluster; this one runs without.
			a.Log.Warn("the admin socket is another copy's: this copy runs without one (set admin_socket to give each copy its own)", "socket", a.Socket)
			ownSnapshots = false
		case errors.Is(err, ErrSocketInTheWay):
			return err
		case errors.Is(err, ErrSocketTooLong):
			a.Log.Warn("the admin socket path is too long for a unix socket, so this bot runs without it: `bot backup` cannot reach it; move the database to a shorter path (or set admin_addr and admin_token)",
				"socket", a.Socket, "err", err)
		case err != nil:
			a.Log.Warn("no admin socket: `bot backup` cannot reach this bot", "socket", a.Socket, "err", err)
		default:
			a.serve(ln, mux)
		}
	}
	if ownSnapshots {
		a.removeStaleSnapshots()
	}
	if a.Addr != "" && len(a.Token) < MinToken {
		// loadConfig refuses this; the check here keeps an empty token from ever opening the port.
		a.Log.Error("no admin TCP listener: it needs an admin_token", "addr", a.Addr)
		return nil
	}
	if a.Addr != "" {
		ln, err := net.Listen("tcp", a.Addr)
		if err != nil {
			a.Log.Warn("no admin TCP listener", "err", err)
			return nil
		}
		a.tcpAddr = ln.Addr()
		_, port, _ := net.SplitHostPort(ln.Addr().String())
		a.serve(ln, a.guardTCP(mux, port))
	}
	return nil
}

// routes are the admin endpoints, served on both listeners (TCP behind guardTCP).
func (a *Admin) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /backup", a.serveBackup)
	if a.Metrics != nil {
		mux.Handle("GET /metrics", a.Metrics)
	}
	if a.Health != nil {
		mux.Handle("GET /readyz", a.Health)
		mux.Handle("GET /healthz", a.Health)
	}
	// Live needs nothing but the process: a store without a quorum, or a platform down, makes a
	// copy not ready (no traffic), never "dead" (restarted, which mends neither).
	mux.HandleFunc("GET /livez", live)
	return mux
}

// TCPAddr is where the TCP listener listens (its port when Addr asks for port 0); nil: none.
func (a *Admin) TCPAddr() net.Addr { return a.tcpAddr }

// live answers /livez: the process answers.
func live(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"live":"ok"}`+"\n")
}

// Endpoints says where the admin door listens: the socket's path and the TCP address.
func (a *Admin) Endpoints() []string {
	var out []string
	for _, ln := range a.listeners {
		if ln.Addr().Network() == "unix" {
			out = append(out, a.Socket)
		} else {
			out = append(out, "http://"+ln.Addr().String())
		}
	}
	return out
}

// adminLimits are the admin door's: every request is a GET (no body), its clients a few local
// tools (a backup, a metrics scraper, a health check); /backup sets its own, longer write
// deadline. No proxy stands in front of it.
var adminLimits = httpserve.Limits{ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
	WriteTimeout: 30 * time.Second, IdleTimeout: time.Minute, MaxHeaderBytes: 16 << 10, MaxBody: 1 << 10,
	MaxConns: 32, MaxConnsPerAddr: 16, Proxies: []netip.Prefix{}}

func (a *Admin) serve(ln net.Listener, h http.Handler) {
	name := "admin socket"
	if ln.Addr().Network() != "unix" {
		name = "admin TCP"
	}
	srv := httpserve.New(name, h, adminLimits, a.Log)
	a.servers = append(a.servers, srv)
	a.listeners = append(a.listeners, ln)
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.Log.Error("admin listener stopped", "addr", ln.Addr().String(), "err", err)
		}
	}()
}

// Close stops the listeners, lets downloads go on for the grace period, then cuts them, and
// returns once the backup being sent (if any) has ended and its snapshot is removed; no backup
// starts after that, so the database can close.
func (a *Admin) Close() {
	if a.backupSlot == nil {
		return // never started
	}
	a.closeOnce.Do(a.close)
}

func (a *Admin) close() {
	grace := a.Grace
	if grace == 0 {
		grace = 5 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	for _, srv := range a.servers {
		_ = srv.Shutdown(ctx)
	}
	for _, srv := range a.servers {
		_ = srv.Close()
	}
	for _, ln := range a.listeners {
		_ = ln.Close() // removes the socket file
	}
	a.backupSlot <- struct{}{}
}

// guardTCP lets a request through only if its Host header names this loopback listener (else 403)
// and it carries the token (else 401). The tokens are compared as hashes in constant time, so
// neither their bytes nor their lengths show in the timing.
func (a *Admin) guardTCP(next http.Handler, port string) http.Handler {
	want := sha256.Sum256([]byte(a.Token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isListenerHost(r.Host, port) {
			a.Log.Warn("admin request refused: its Host header names another server", "remote", r.RemoteAddr, "path", r.URL.Path)
			http.Error(w, "forbidden: the Host header must name this listener (a loopback address and port "+port+")", http.StatusForbidden)
			return
		}
		token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		got := sha256.Sum256([]byte(token))
		if !ok || subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			a.Log.Warn("admin request refused: no or wrong token", "remote", r.RemoteAddr, "path", r.URL.Path)
			w.Header().Set("WWW-Authenticate", `Bearer realm="kontermatt admin"`)
			http.Error(w, "unauthorized: send the header Authorization: Bearer <admin_token>", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// isListenerHost tells whether a Host header names a loopback host with the listener's port.
func isListenerHost(hostport, port string) bool {
	host, p, err := net.SplitHostPort(hostport)
	if err != nil || p != port {
		return false
	}
	return IsLoopback(host)
}

// snapshotPrefix names the snapshot files beside the database: hidden, and easy to recognise as
// the bot's own.
func (a *Admin) snapshotPrefix() (dir, prefix string) {
	dir, base := filepath.Split(a.Store.Path())
	if dir == "" {
		dir = "."
	}
	return dir, "." + base + ".snapshot-"
}

// removeStaleSnapshots deletes snapshots a crashed bot left: this bot holds the database's lock,
// so no other is sending one.
func (a *Admin) removeStaleSnapshots() {
	dir, prefix := a.snapshotPrefix()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasPrefix(e.Name(), prefix) {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// serveBackup sends a snapshot: the database is first copied (in one short read transaction) to a
// file beside it, and that file is sent. Streaming from the transaction itself would let a client
// that stops reading hold the transaction open, and bbolt cannot grow the file past its mapping
// while a reader holds it: every commit would wait, and so would shutdown.
func (a *Admin) serveBackup(w http.ResponseWriter, r *http.Request) {
	select {
	case a.backupSlot <- struct{}{}:
		defer func() { <-a.backupSlot }()
	default:
		w.Header().Set("Retry-After", "30")
		http.Error(w, "another backup is being sent; try again when it has finished", http.StatusServiceUnavailable)
		return
	}
	start := time.Now()
	dir, prefix := a.snapshotPrefix()
	f, err := os.CreateTemp(dir, prefix+"*") // mode 0600
	if err != nil {
		a.Log.Error("live backup: no snapshot file", "err", err)
		http.Error(w, "backup failed: the bot could not write its snapshot (see its log)", http.StatusInternalServerError)
		return
	}
	defer os.Remove(f.Name())
	defer f.Close()
	size, err := a.Store.Backup(f)
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		a.Log.Error("live backup failed", "err", err)
		if errors.Is(err, storage.ErrDamaged) { // found while the copy was compacted
			w.Header().Set(damagedHeader, "1")
		}
		http.Error(w, "backup failed (see the bot's log)", http.StatusInternalServerError)
		return
	}
	if err := http.NewResponseController(w).SetWriteDeadline(time.Now().Add(a.backupTime(size))); err != nil {
		a.Log.Warn("live backup: no write deadline", "err", err)
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
	if _, err := io.Copy(w, f); err != nil {
		a.Log.Warn("live backup not fully sent", "remote", r.RemoteAddr, "err", err)
		return
	}
	if a.Backups != nil {
		a.Backups.BackupSent(r.Context(), time.Now())
	}
	a.Log.Info("live backup sent", "bytes", size, "took", time.Since(start).Round(time.Millisecond), "via", via(r))
}

// via names the listener a request came through: the socket, or the TCP address.
func via(r *http.Request) string {
	if addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		return addr.String()
	}
	return ""
}

func (a *Admin) backupTime(size int64) time.Duration {
	if a.BackupTime != nil {
		return a.BackupTime(size)
	}
	return backupTimeFor(size)
}

// listenSocket listens on a unix socket at path, mode 0600. A socket already there is removed
// only if it is this bot's stale one: this user's, and nothing listens on it (the caller holds
// the database's lock, so it was a crashed bot's). Anything else is left alone and refused with
// ErrSocketInTheWay, in one line that says what to do.
func listenSocket(path string) (net.Listener, error) {
	if len(path) > MaxSocketPath {
		return nil, fmt.Errorf("%s is %d bytes: %w (at most %d)", path, len(path), ErrSocketTooLong, MaxSocketPath)
	}
	inTheWay := func(why string) error {
		return fmt.Errorf("%s %w: %s, so it is not this bot's stale socket; it is left as it is: remove it, or move the database", path, ErrSocketInTheWay, why)
	}
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return listenPrivate(path)
	case err != nil:
		return nil, inTheWay(err.Error())
	case fi.Mode().Type() != fs.ModeSocket:
		return nil, inTheWay("it is not a socket")
	case !ownedByMe(fi):
		return nil, inTheWay("it belongs to another user")
	}
	c, err := net.DialTimeout("unix", path, time.Second)
	switch {
	case err == nil:
		c.Close()
		return nil, listening{inTheWay("something listens on it")}
	case !nobodyListens(err):
		return nil, inTheWay("whether something listens on it cannot be told (" + err.Error() + ")")
	}
	if err := os.Remove(path); err != nil {
		return nil, fmt.Errorf("stale admin socket: %w", err)
	}
	return listenPrivate(path)
}

// MinToken is the shortest bearer token accepted (admin_token, metrics_token): whoever reaches
// the port may knock on it, so a short token is one they can guess (`openssl rand -hex 16` gives
// 32 characters).
const MinToken = 16

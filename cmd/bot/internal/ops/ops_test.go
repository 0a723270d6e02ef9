package ops

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// openStore opens a new bbolt store in a test directory.
func openStore(t *testing.T) (*storage.Store, string) {
	t.Helper()
	db := filepath.Join(t.TempDir(), "k.db")
	st, err := storage.Open(db, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, db
}

// start starts a on a logger that writes into the returned buffer.
func start(t *testing.T, a *Admin) (*tabletest.Buffer, error) {
	t.Helper()
	logs := &tabletest.Buffer{}
	a.Log = slog.New(slog.NewTextHandler(logs, nil))
	err := a.Start()
	t.Cleanup(a.Close)
	return logs, err
}

// get asks a handler for path and gives the status and body.
func get(h http.Handler, path string) (int, string) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	return rec.Code, rec.Body.String()
}

// TestAnotherUsersStaleSocket: a dead socket at the path that another user owns is left alone,
// and the bot does not start.
func TestAnotherUsersStaleSocket(t *testing.T) {
	st, db := openStore(t)
	ln, err := net.Listen("unix", db+".sock")
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	me := currentUID
	currentUID = func() int { return me() + 1 } // the socket's owner is someone else now
	defer func() { currentUID = me }()
	_, err = start(t, &Admin{Store: st, Socket: db + ".sock"})
	if !errors.Is(err, ErrSocketInTheWay) || !strings.Contains(err.Error(), "it belongs to another user") {
		t.Fatalf("Start: %v", err)
	}
	if _, err := os.Lstat(db + ".sock"); err != nil {
		t.Errorf("the socket was removed: %v", err)
	}
}

// TestLiveAndReady (issue 32): the admin door splits health in two, as Kubernetes' probes want:
// /readyz (and /healthz, as before) says whether the copy can take traffic, /livez only that the
// process answers, so a copy whose store lost its quorum is taken out of rotation, not killed.
func TestLiveAndReady(t *testing.T) {
	notReady := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, `{"quorum":"lost"}`)
	})
	mux := (&Admin{Health: notReady}).routes()
	for path, want := range map[string]int{"/readyz": 503, "/healthz": 503, "/livez": 200} {
		if code, _ := get(mux, path); code != want {
			t.Errorf("%s: %d, want %d", path, code, want)
		}
	}
}

// TestOneMetricsSystem (issue 30): the admin door serves Prometheus' /metrics and no longer
// expvar's /debug/vars.
func TestOneMetricsSystem(t *testing.T) {
	mux := (&Admin{Metrics: NewMetrics("v", "r", "go").Handler()}).routes()
	if code, body := get(mux, "/metrics"); code != 200 || !strings.Contains(body, "kontermatt_build_info") {
		t.Errorf("/metrics: %d %.200s", code, body)
	}
	if code, _ := get(mux, "/debug/vars"); code != 404 {
		t.Errorf("/debug/vars: %d, want 404 (expvar is gone)", code)
	}
}

// TestSharedSocket (issue 32): with a store several copies share (etcd), the same configuration
// on two copies on one host works: the second finds the first's socket live, says so and runs
// without one; with bbolt the same socket stops the start.
func TestSharedSocket(t *testing.T) {
	st, db := openStore(t)
	sock := filepath.Join(filepath.Dir(db), "kontermatt.sock")
	first := &Admin{Store: st, Socket: sock, SharedSocket: true}
	if _, err := start(t, first); err != nil {
		t.Fatal(err)
	}
	second := &Admin{Store: st, Socket: sock, SharedSocket: true}
	logs, err := start(t, second)
	if err != nil || len(second.Endpoints()) != 0 || !strings.Contains(logs.String(), "another copy's") {
		t.Errorf("a second copy with a shared store: %v, endpoints %v, log %s", err, second.Endpoints(), logs)
	}
	if _, err := start(t, &Admin{Store: st, Socket: sock}); !errors.Is(err, ErrSocketInTheWay) {
		t.Errorf("a second copy with bbolt: %v, want ErrSocketInTheWay", err)
	}
	if len(first.Endpoints()) != 1 {
		t.Errorf("the first copy's endpoints: %v", first.Endpoints())
	}
}

// scrape reads a metrics listener's /metrics as a Prometheus on another host would.
func scrape(t *testing.T, addr, host, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", "http://"+addr+"/metrics", nil)
	if host != "" {
		req.Host = host
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// TestMetricsListener (issue 32): metrics_addr serves /metrics on its own address. On loopback it
// needs no token (but a Host header naming loopback); on an address other hosts reach it does
// not start without a token, and with one every scrape needs it; the token is in no log line
// and no answer.
func TestMetricsListener(t *testing.T) {
	h := NewMetrics("v", "r", "go").Handler()
	logs := &tabletest.Buffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))

	t.Run("loopback without a token", func(t *testing.T) {
		m := &MetricsListener{Addr: "127.0.0.1:0", Handler: h, Log: log}
		if err := m.Start(); err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		addr := m.ListenAddr().String()
		if code, body := scrape(t, addr, "", ""); code != 200 || !strings.Contains(body, "kontermatt_commits_total") {
			t.Errorf("scrape: %d %.200s", code, body)
		}
		for path, want := range map[string]int{"/livez": 200, "/readyz": 404} { // no Health handler given
			resp, err := http.Get("http://" + addr + path)
			if err != nil || resp.StatusCode != want {
				t.Errorf("%s: %v %v, want %d", path, resp, err, want)
			} else {
				resp.Body.Close()
			}
		}
		if code, _ := scrape(t, addr, "evil.example:80", ""); code != 403 {
			t.Errorf("a rebound DNS name: %d, want 403", code)
		}
	})
	t.Run("every address without a token", func(t *testing.T) {
		for _, addr := range []string{":0", "0.0.0.0:0", "10.1.2.3:9464", "[::]:0"} {
			m := &MetricsListener{Addr: addr, Handler: h, Log: log}
			if err := m.Start(); !errors.Is(err, ErrMetricsToken) {
				m.Close()
				t.Errorf("%s: %v, want ErrMetricsToken", addr, err)
			}
		}
	})
	t.Run("every address with a token", func(t *testing.T) {
		token := "SECRET-metrics-0123456789"
		m := &MetricsListener{Addr: ":0", Token: token, Handler: h, Log: log}
		if err := m.Start(); err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		_, port, _ := net.SplitHostPort(m.ListenAddr().String())
		addr := net.JoinHostPort(outwardIP(t), port) // as another host reaches it
		for _, tc := range []struct {
			token string
			want  int
		}{{"", 401}, {"SECRET-metrics-012345678X", 401}, {token, 200}} {
			code, body := scrape(t, addr, "prometheus.example:"+port, tc.token)
			if code != tc.want {
				t.Errorf("token %q: %d, want %d", tc.token, code, tc.want)
			}
			if tc.want != 200 && strings.Contains(body, "SECRET") {
				t.Errorf("the answer shows the token: %s", body)
			}
		}
	})
	if strings.Contains(logs.String(), "SECRET") {
		t.Errorf("the log shows the token:\n%s", logs)
	}
	if !strings.Contains(logs.String(), "no or wrong token") {
		t.Errorf("refused scrapes are not logged:\n%s", logs)
	}
	if err := CheckMetrics("10.0.0.1:9464", "short"); err == nil || strings.Contains(err.Error(), "short") {
		t.Errorf("a short token: %v", err)
	}
}

// outwardIP is an address of this machine other than loopback, if it has one; else loopback.
func outwardIP(t *testing.T) string {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && !ipn.IP.IsLoopback() && ipn.IP.To4() != nil {
			return ipn.IP.String()
		}
	}
	t.Log("no address but loopback: scraping over 127.0.0.1")
	return "127.0.0.1"
}

// platform reports every series a platform can give.
type platform struct {
	name     string
	sockets  int
	refused  uint64
	lastSeen time.Time
}

func (p *platform) Name() string            { return p.name }
func (p *platform) Sockets() int            { return p.sockets }
func (p *platform) WebhookRefusals() uint64 { return p.refused }
func (p *platform) LastUpdate() time.Time   { return p.lastSeen }
func (p *platform) Connected() error        { return nil }

// TestNewSeries (issue 32): web sockets open, webhook refusals, the last update received and the
// last backup each have a series, at 0 from the start, and move when the thing happens (a live
// backup sent through the admin door sets the last backup's).
func TestNewSeries(t *testing.T) {
	met := NewMetrics("v", "r", "go")
	svc := tabletest.New(table.Config{Store: mem.New()})
	defer svc.Close()
	p := &platform{name: "telegram"}
	met.Watch(svc, []Platform{p})
	series := func() string { _, body := get(met.Handler(), "/metrics"); return body }
	for _, want := range []string{`kontermatt_websockets_open{platform="telegram"} 0`, `kontermatt_webhook_refusals_total{platform="telegram"} 0`,
		`kontermatt_last_update_timestamp_seconds{platform="telegram"} 0`, `kontermatt_last_backup_timestamp_seconds 0`} {
		if !strings.Contains(series(), want+"\n") {
			t.Errorf("a fresh bot's metrics lack %s", want)
		}
	}
	p.sockets, p.refused, p.lastSeen = 3, 2, time.Unix(1700000000, 500e6)
	st, db := openStore(t)
	a := &Admin{Store: st, Socket: db + ".sock", Backups: met}
	if _, err := start(t, a); err != nil {
		t.Fatal(err)
	}
	before := time.Now().Unix()
	if _, err := FetchBackup(Target{Socket: db + ".sock", Holds: db}, filepath.Join(t.TempDir(), "b.db")); err != nil {
		t.Fatal(err)
	}
	got := series()
	for _, want := range []string{`kontermatt_websockets_open{platform="telegram"} 3`, `kontermatt_webhook_refusals_total{platform="telegram"} 2`,
		`kontermatt_last_update_timestamp_seconds{platform="telegram"} 1.7000000005e+09`} {
		if !strings.Contains(got, want+"\n") {
			t.Errorf("metrics lack %s", want)
		}
	}
	var at float64
	for _, line := range strings.Split(got, "\n") {
		if v, ok := strings.CutPrefix(line, "kontermatt_last_backup_timestamp_seconds "); ok {
			if _, err := fmt.Sscan(v, &at); err != nil {
				t.Fatal(err)
			}
		}
	}
	if int64(at) < before || int64(at) > time.Now().Unix() {
		t.Errorf("last backup at %v, want about %d", at, before)
	}
}

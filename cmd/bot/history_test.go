package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	stdlog "log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.yaml.in/yaml/v3"

	"github.com/kontermatt/kontermatt/cmd/bot/internal/ops"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage/etcdstore/etcdtest"
)

// openOnEtcd opens a bot (its Main) on the cluster as configured through the environment, its
// config changed by tweak, its log in the buffer given; it closes when the test ends.
func openOnEtcd(t *testing.T, log io.Writer, tweak func(*Config)) *Main {
	t.Helper()
	cfg, err := loadConfig("", os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Database = filepath.Join(t.TempDir(), "k.db")
	if tweak != nil {
		tweak(&cfg)
	}
	m := &Main{Config: cfg, Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: log}
	if err := m.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// TestBotCompactsHistory (issue 32): a bot on etcd whose user may compact keeps the cluster's
// history to etcd.history: a revision older than it cannot be read any more.
func TestBotCompactsHistory(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{Members: 1})
	useEtcd(t, c, "compacts/")
	m := openOnEtcd(t, io.Discard, func(cfg *Config) { cfg.Etcd.History = 300 * time.Millisecond })
	cli := m.Store.(interface{ Client() *clientv3.Client }).Client()
	put, err := cli.Put(context.Background(), "compacts/mark", "1")
	if err != nil {
		t.Fatal(err)
	}
	tabletest.WaitUntil(t, 10*time.Second, "the revision of a put is compacted", func() bool {
		_, err := cli.Get(context.Background(), "compacts/mark", clientv3.WithRev(put.Header.Revision))
		return errors.Is(err, rpctypes.ErrCompacted)
	})
}

// TestBotWarnsWhenNobodyCompacts (issue 32): a bot whose etcd user has no root role may not
// compact; its history upkeep says so once, and, when etcd does not compact either
// (--auto-compaction off), says it with one warning that names the flags to set.
func TestBotWarnsWhenNobodyCompacts(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{Members: 1})
	c.EnableAuth("kontermatt", "secret", "warns/")
	useEtcd(t, c, "warns/")
	t.Setenv("KONTERMATT_ETCD_USERNAME", "kontermatt")
	t.Setenv("KONTERMATT_ETCD_PASSWORD", "secret")
	cfg, err := loadConfig("", os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	st, err := openEtcd(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	leases := st.Leases("warns", 2*time.Second)
	defer leases.Close()
	var log tabletest.Buffer
	stop := startHistory(st, leases, 300*time.Millisecond, newLogger(&log, "info", "text"))
	defer stop()
	log.WaitFor(t, "etcd refuses this bot's user compaction", 10*time.Second)
	log.WaitFor(t, "--auto-compaction-mode=periodic --auto-compaction-retention to etcd.history on every member", 10*time.Second)
	time.Sleep(time.Second) // more trims: the warning is not said again
	if n := strings.Count(log.String(), "etcd history is not compacted"); n != 1 {
		t.Errorf("the warning is said %d times, want once:\n%s", n, log.String())
	}
	if strings.Contains(log.String(), "secret") {
		t.Errorf("the log shows the password:\n%s", log.String())
	}
}

// TestHealthSaysNOSPACE (issue 32): when a member's database reaches its quota, /healthz says the
// NOSPACE alarm and is not healthy, and kontermatt_etcd_alarm{alarm="NOSPACE"} goes from 0 to 1.
func TestHealthSaysNOSPACE(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{Members: 1, QuotaBytes: 2 << 20})
	useEtcd(t, c, "full/")
	m := openOnEtcd(t, io.Discard, nil)
	alarm := func() string {
		rec := httptest.NewRecorder()
		m.admin.Metrics.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		for _, line := range strings.Split(rec.Body.String(), "\n") {
			if strings.HasPrefix(line, `kontermatt_etcd_alarm{alarm="NOSPACE"}`) {
				return line
			}
		}
		return ""
	}
	if a := alarm(); !strings.HasSuffix(a, " 0") {
		t.Errorf("before the quota is full: %q, want the NOSPACE series at 0", a)
	}
	cli := m.Store.(interface{ Client() *clientv3.Client }).Client()
	filler := strings.Repeat("x", 64<<10)
	for i := 0; ; i++ {
		_, err := cli.Put(context.Background(), fmt.Sprintf("full/filler/%d", i), filler)
		if errors.Is(err, rpctypes.ErrNoSpace) {
			break
		}
		if err != nil || i > 1000 {
			t.Fatalf("filling the quota: put %d: %v", i, err)
		}
	}
	rec := httptest.NewRecorder()
	m.admin.Health.ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
	var state map[string]string
	if err := json.Unmarshal(rec.Body.Bytes(), &state); err != nil {
		t.Fatal(err)
	}
	if rec.Code != 503 || !strings.Contains(state["alarms"], "NOSPACE") {
		t.Errorf("/healthz with the quota full: %d %v", rec.Code, state)
	}
	if a := alarm(); !strings.HasSuffix(a, " 1") {
		t.Errorf("with the quota full: %q, want the NOSPACE series at 1", a)
	}
}

// TestShippedEtcdCompacts (issue 32): every etcd member a file in the repository starts (compose
// files, systemd units, Kubernetes manifests) compacts its history on its own and has an
// explicit quota, as docs/cluster.md says.
func TestShippedEtcdCompacts(t *testing.T) {
	members := 0
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			if d != nil && d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return err
		}
		if !strings.HasSuffix(path, ".yaml") && !strings.HasSuffix(path, ".yml") && !strings.HasSuffix(path, ".service") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		// Each member's command line: from the etcd binary to the end of its flags.
		starts := regexp.MustCompile(`/usr/local/bin/etcd"?[, ]+"?--name`).FindAllStringIndex(string(data), -1)
		for i, at := range starts {
			end := len(data)
			if i+1 < len(starts) {
				end = starts[i+1][0]
			}
			cmd := string(data[at[0]:end])
			members++
			for _, flag := range []string{"--auto-compaction-mode", "--auto-compaction-retention", "--quota-backend-bytes"} {
				if !strings.Contains(cmd, flag) {
					t.Errorf("%s: the etcd member %d lacks %s", path, i+1, flag)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if members < 3 {
		t.Errorf("found %d etcd members in the shipped files, want at least deploy/cluster's 3", members)
	}
}

// TestEveryKeyHasAVariable (issue 32): every key of the config file can be set by an environment
// variable too (compose files and Kubernetes configure the bot so), and docs/hosting.md names it
// in the key's row.
func TestEveryKeyHasAVariable(t *testing.T) {
	byKey := map[string]string{}
	for name, key := range envKeys {
		byKey[key] = name
	}
	doc := readRepoFile(t, "docs/hosting.md")
	var walk func(tp reflect.Type, prefix string)
	walk = func(tp reflect.Type, prefix string) {
		for i := range tp.NumField() {
			f := tp.Field(i)
			tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if tag == "" || tag == "-" {
				continue
			}
			if f.Type.Kind() == reflect.Struct {
				walk(f.Type, prefix+tag+".")
				continue
			}
			key := prefix + tag
			name, ok := byKey[key]
			if !ok {
				t.Errorf("%s has no environment variable", key)
				continue
			}
			if !regexp.MustCompile("(?m)^\\| `" + regexp.QuoteMeta(key) + "`.*`" + name + "`").MatchString(doc) {
				t.Errorf("docs/hosting.md has no row for %s naming %s", key, name)
			}
		}
	}
	walk(reflect.TypeOf(Config{}), "")

	// A duration, a number, a flag and a list, read as the file reads them.
	env := map[string]string{"KONTERMATT_ETCD_TIMEOUT": "7s", "KONTERMATT_DISCORD_SHARD_COUNT": "2",
		"KONTERMATT_TELEGRAM_WEBHOOK_DROP_PENDING_UPDATES": "true", "KONTERMATT_DISCORD_INTERACTIONS_LISTEN": "0.0.0.0:8490",
		"KONTERMATT_DISCORD_INTERACTIONS_URL": "https://bot.example.org/discord/interactions", "KONTERMATT_DISCORD_TOKEN": "t",
		"KONTERMATT_DISCORD_PUBLIC_KEY": strings.Repeat("ab", 32)}
	cfg, err := loadConfig("", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Etcd.Timeout != 7*time.Second || cfg.Discord.ShardCount != 2 || !cfg.Telegram.Webhook.DropPendingUpdates ||
		cfg.Discord.Interactions.Listen != "0.0.0.0:8490" || cfg.Discord.Interactions.URL == "" {
		t.Errorf("from the environment: %+v %+v", cfg.Etcd, cfg.Discord)
	}
	env["KONTERMATT_THINK"] = "soon"
	if _, err := loadConfig("", func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), "KONTERMATT_THINK") {
		t.Errorf("KONTERMATT_THINK=soon: %v, want a refusal that names the variable", err)
	}
}

// TestEtcdTLSMistakesSaid (issue 32): a member whose certificate etcd.ca does not vouch for is
// said as the certificate error, not as a cluster that does not answer; a password sent to
// http:// endpoints is warned about at start.
func TestEtcdTLSMistakesSaid(t *testing.T) {
	member := httptest.NewUnstartedServer(nil)
	member.EnableHTTP2 = true
	member.Config.ErrorLog = stdlog.New(io.Discard, "", 0)
	member.StartTLS()
	defer member.Close()
	var cfg Config
	cfg.Store = "etcd"
	cfg.Etcd.Endpoints = []string{member.URL}
	cfg.Etcd.Timeout = time.Second
	_, err := openEtcd(cfg)
	if err == nil || !strings.Contains(err.Error(), "certificate") || !strings.Contains(err.Error(), "TLS") {
		t.Errorf("a member with a certificate nobody vouches for: %v", err)
	}
	t.Log(err)

	env := map[string]string{"KONTERMATT_STORE": "etcd", "KONTERMATT_ETCD_ENDPOINTS": "http://10.0.0.1:2379",
		"KONTERMATT_ETCD_USERNAME": "kontermatt", "KONTERMATT_ETCD_PASSWORD": "secret"}
	c, err := loadConfig("", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(c.Warnings, func(w string) bool { return strings.Contains(w, "http://") && !strings.Contains(w, "secret") }) {
		t.Errorf("a password over http:// is not warned about: %q", c.Warnings)
	}
}

// TestCountersStartAtZero (issue 32): every counter has each label value from the start, at 0, so
// an alert on increase() sees the first failed commit, not only the second.
func TestCountersStartAtZero(t *testing.T) {
	rec := httptest.NewRecorder()
	ops.NewMetrics(buildLabels()).Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, want := range []string{`kontermatt_commits_total{result="failed"} 0`, `kontermatt_commits_total{result="unavailable"} 0`,
		`kontermatt_table_reloads_total{why="conflict"} 0`, `kontermatt_commands_total{outcome="refused",verb="play"} 0`} {
		if !strings.Contains(rec.Body.String(), want+"\n") {
			t.Errorf("a fresh bot's metrics lack %s", want)
		}
	}
}

// TestShippedAlertRules (issue 32): deploy/prometheus's rules are valid YAML, and every series they
// name is one the bot exports (or Prometheus' own up), spelled as metrics.go spells it.
func TestShippedAlertRules(t *testing.T) {
	text := readRepoFile(t, "deploy/prometheus/kontermatt-rules.yaml")
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert string `yaml:"alert"`
				Expr  string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal([]byte(text), &rules); err != nil || len(rules.Groups) == 0 {
		t.Fatalf("the rules do not read: %v", err)
	}
	code := readRepoFile(t, "cmd/bot/internal/ops/metrics.go")
	n := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			n++
			for _, name := range regexp.MustCompile(`kontermatt_[a-z_]+`).FindAllString(r.Expr, -1) {
				base := strings.TrimSuffix(name, "_bucket")
				if !strings.Contains(code, `"`+base+`"`) {
					t.Errorf("%s: %s is not a series the bot exports", r.Alert, name)
				}
			}
		}
	}
	if n < 5 {
		t.Errorf("%d rules", n)
	}
}

// TestGrafanaDashboard (issue 32): deploy/grafana's dashboard is valid JSON, every expression in
// it names only series the bot exports (spelled as metrics.go spells them, a histogram's _bucket,
// _count and _sum included), and it shows the series a host watches: the new ones too.
func TestGrafanaDashboard(t *testing.T) {
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal([]byte(readRepoFile(t, "deploy/grafana/kontermatt.json")), &dash); err != nil || len(dash.Panels) == 0 {
		t.Fatalf("the dashboard does not read: %v", err)
	}
	code := readRepoFile(t, "cmd/bot/internal/ops/metrics.go")
	shown := map[string]bool{}
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, q := range p.Targets {
			names := regexp.MustCompile(`kontermatt_[a-z_]+`).FindAllString(q.Expr, -1)
			if len(names) == 0 {
				t.Errorf("panel %q: %q names no kontermatt series", p.Title, q.Expr)
			}
			for _, name := range names {
				base := name
				for _, suffix := range []string{"_bucket", "_count", "_sum"} {
					base = strings.TrimSuffix(base, suffix)
				}
				if !strings.Contains(code, `"`+base+`"`) {
					t.Errorf("panel %q: %s is not a series the bot exports", p.Title, name)
				}
				shown[base] = true
			}
		}
	}
	for _, name := range []string{"kontermatt_websockets_open", "kontermatt_webhook_refusals_total", "kontermatt_last_update_timestamp_seconds",
		"kontermatt_last_backup_timestamp_seconds", "kontermatt_commits_total", "kontermatt_etcd_alarm", "kontermatt_platform_connected"} {
		if !shown[name] {
			t.Errorf("the dashboard does not show %s", name)
		}
	}
}

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage"
	"github.com/kontermatt/kontermatt/storage/etcdstore"
	"github.com/kontermatt/kontermatt/storage/etcdstore/etcdtest"
)

// useEtcd points the bot at the cluster under its own prefix, through the environment.
func useEtcd(t *testing.T, c *etcdtest.Cluster, prefix string) {
	t.Setenv("KONTERMATT_STORE", "etcd")
	t.Setenv("KONTERMATT_ETCD_ENDPOINTS", strings.Join(c.Endpoints(), ","))
	t.Setenv("KONTERMATT_ETCD_PREFIX", prefix)
	// Not kontermatt.sock in the package's directory, where the in-process bots would start.
	t.Setenv("KONTERMATT_ADMIN_SOCKET", filepath.Join(t.TempDir(), "kontermatt.sock"))
}

// TestBotPlaysOnEtcd: with store etcd the bot (its Main, as `bot` runs it) plays a whole match on a
// three-member cluster, keeps its record there and makes no database file; a second run finds the
// finished match there and plays a new one.
func TestBotPlaysOnEtcd(t *testing.T) {
	ctx := t.Context()
	c := etcdtest.Start(t, etcdtest.Options{})
	useEtcd(t, c, "bot/")
	db := filepath.Join(t.TempDir(), "k.db")
	args := []string{"-db", db, "-humans", "0", "-pace", "0", "-level", "easy", "-options", "stripes=1"}
	code, stdout, stderr := runIn("", args...)
	if code != 0 || !strings.Contains(stdout, "wins the match") {
		t.Fatalf("exit %d, stderr %q\n%s", code, stderr, tail(stdout))
	}
	if code, stdout, stderr := runIn("", args...); code != 0 || !strings.Contains(stdout, "The last match here is over") {
		t.Errorf("second run: exit %d, stderr %q\n%s", code, stderr, tail(stdout))
	}
	if _, err := os.Stat(db); err == nil {
		t.Error("the bot on etcd made a bbolt file")
	}
	st, err := etcdstore.Open(ctx, etcdstore.Options{Endpoints: c.Endpoints(), Prefix: "bot/"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	n := 0
	if err := st.Records(ctx, func(string, []byte) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("the cluster keeps %d match records, want 2", n)
	}
}

// TestMigrateKeepsTheNumbers: a stopped bot's data moves from bbolt to etcd and back, and stats
// rebuild gives the same numbers on every side, with every league entry the same; a backup of the
// etcd-backed bot is a bbolt file with the same numbers too; a migration into a store that holds
// data is refused.
func TestMigrateKeepsTheNumbers(t *testing.T) {
	ctx := t.Context()
	c := etcdtest.Start(t, etcdtest.Options{})
	dir := t.TempDir()
	db := filepath.Join(dir, "k.db")
	st, err := storage.Open(db, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svc := tabletest.New(table.Config{Store: st, KV: st, Seed: 5})
	for i := range 3 {
		tb, err := tabletest.Open(svc, i)
		if err != nil {
			t.Fatal(err)
		}
		for steps := 0; steps < 40 || i == 0; steps++ { // the first to its match's end, the others midway
			if who, _, _ := svc.Turn(tb.ID); who == "" {
				break
			}
			if _, err := tabletest.Step(svc, tb); err != nil {
				t.Fatal(err)
			}
		}
	}
	svc.Close()
	before := leagueEntries(t, st)
	st.Close()

	timing := regexp.MustCompile(` in \d+(\.\d+)?m?s:`)
	stats := func(args ...string) string {
		t.Helper()
		code, stdout, stderr := runIn("", append([]string{"stats"}, append(args, "rebuild")...)...)
		if code != 0 {
			t.Fatalf("stats rebuild %v: exit %d: %s", args, code, stderr)
		}
		return timing.ReplaceAllString(stdout, " in …:")
	}
	want := stats("-db", db)
	if !strings.Contains(want, "from 1 kept matches") || !strings.Contains(want, "every number was already the same") {
		t.Fatalf("stats rebuild on bbolt: %q", want)
	}
	useEtcd(t, c, "migrated/")
	if code, stdout, stderr := runIn("", "migrate", "-from", "bbolt", "-to", "etcd", "-db", db); code != 0 || !strings.Contains(stdout, "moved ") {
		t.Fatalf("migrate to etcd: exit %d, %q %q", code, stdout, stderr)
	}
	if got := stats(); got != want {
		t.Errorf("stats rebuild on etcd:\n got %q\nwant %q", got, want)
	}
	if code, _, stderr := runIn("", "migrate", "-from", "bbolt", "-to", "etcd", "-db", db); code != 1 || !strings.Contains(stderr, "already holds data") {
		t.Errorf("a second migration into the same prefix: exit %d, %q", code, stderr)
	}

	backup := filepath.Join(dir, "backup.db")
	if code, stdout, stderr := runIn("", "backup", backup); code != 0 || !strings.Contains(stdout, "one revision") {
		t.Fatalf("backup of the etcd store: exit %d, %q %q", code, stdout, stderr)
	}
	back := filepath.Join(dir, "back.db")
	if code, stdout, stderr := runIn("", "migrate", "-from", "etcd", "-to", "bbolt", "-db", back); code != 0 {
		t.Fatalf("migrate back: exit %d, %q %q", code, stdout, stderr)
	}
	t.Setenv("KONTERMATT_STORE", "bbolt")
	for _, file := range []string{backup, back} {
		if got := stats("-db", file); got != want {
			t.Errorf("stats rebuild on %s:\n got %q\nwant %q", filepath.Base(file), got, want)
		}
		f, err := storage.Open(file, storage.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		if got := leagueEntries(t, f); !maps.Equal(got, before) {
			t.Errorf("%s: the league differs from the original's", filepath.Base(file))
		}
		var tables int
		_ = f.Tables(ctx, func(string, []byte) error { tables++; return nil })
		f.Close()
		if tables != 3 {
			t.Errorf("%s holds %d live tables, want 3", filepath.Base(file), tables)
		}
	}
	// The migrated bot plays on where it stopped, on etcd.
	t.Setenv("KONTERMATT_STORE", "etcd")
	es, err := etcdstore.Open(ctx, etcdstore.Options{Endpoints: c.Endpoints(), Prefix: "migrated/"})
	if err != nil {
		t.Fatal(err)
	}
	defer es.Close()
	svc = tabletest.New(table.Config{Store: es, KV: es, Seed: 6})
	defer svc.Close()
	if err := svc.Resume(t.Context()); err != nil {
		t.Fatal(err)
	}
	tb := tabletest.Table{Place: api.Place{Platform: "bench", Chat: "1"}, ID: svc.TableAt(api.Place{Platform: "bench", Chat: "1"})}
	for s := range 4 {
		tb.Players = append(tb.Players, api.Player{ID: fmt.Sprintf("b1-%d", s), Name: fmt.Sprintf("P%d", s+1)})
	}
	for range 5 {
		if _, err := tabletest.Step(svc, tb); err != nil {
			t.Fatalf("a move on the migrated table: %v", err)
		}
	}
}

// TestEtcdConfig: the etcd keys and variables, and what is refused, in the config's own words.
func TestEtcdConfig(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	c, err := loadConfig("", env("KONTERMATT_STORE", "etcd", "KONTERMATT_ETCD_ENDPOINTS", "https://10.0.0.1:2379, https://10.0.0.2:2379",
		"KONTERMATT_ETCD_USERNAME", "bot", "KONTERMATT_ETCD_PASSWORD", "pw"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Store != "etcd" || len(c.Etcd.Endpoints) != 2 || c.Etcd.Endpoints[1] != "https://10.0.0.2:2379" ||
		c.Etcd.Prefix != "kontermatt/" || c.Etcd.Username != "bot" || c.Etcd.Password != "pw" {
		t.Errorf("config from the environment: %+v", c.Etcd)
	}
	if c, err := loadConfig("", env()); err != nil || c.Store != "bbolt" {
		t.Errorf("the default store: %q, %v", c.Store, err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(file, []byte("store: etcd\netcd:\n  endpoints: [\"http://127.0.0.1:2379\"]\n  prefix: bot2/\n  timeout: 2s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if c, err := loadConfig(file, env()); err != nil || c.Etcd.Prefix != "bot2/" || c.Etcd.Endpoints[0] != "http://127.0.0.1:2379" {
		t.Errorf("config from the file: %+v, %v", c.Etcd, err)
	}
	for _, tc := range []struct {
		name, yaml string
		env        []string
		want       string
	}{
		{"no endpoints", "store: etcd\n", nil, "store etcd needs etcd.endpoints"},
		{"unknown store", "store: postgres\n", nil, `store "postgres": use bbolt`},
		{"store from the environment", "", []string{"KONTERMATT_STORE", "mysql"}, `KONTERMATT_STORE: store "mysql"`},
		{"not a URL", "store: etcd\netcd:\n  endpoints: [\"10.0.0.1\"]\n", nil, `"10.0.0.1" is not a client URL`},
		{"endpoints not a list", "store: etcd\netcd:\n  endpoints: http://a:2379\n", nil, "etcd.endpoints should be a list"},
		{"cert without key", "store: etcd\netcd:\n  endpoints: [\"https://a:2379\"]\n  cert: c.pem\n", nil, "etcd.cert and etcd.key go together"},
		{"user without password", "store: etcd\netcd:\n  endpoints: [\"https://a:2379\"]\n", []string{"KONTERMATT_ETCD_USERNAME", "bot"}, "KONTERMATT_ETCD_PASSWORD go together"},
		{"password in the file", "etcd:\n  password: x\n", nil, `unknown key "etcd.password"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := ""
			if tc.yaml != "" {
				path = filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".yaml")
				if err := os.WriteFile(path, []byte(tc.yaml), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			_, err := loadConfig(path, env(tc.env...))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want it to say %q", err, tc.want)
			}
		})
	}
}

// TestHealthNamesTheStore: /healthz of a bot on etcd names the store, says the cluster has a
// quorum and which leases the copy holds (every place's partition, once it took them); with two
// members of three stopped it says the quorum is lost and is not healthy. A bot on bbolt names
// its file and holds the lease of every place alone.
func TestHealthNamesTheStore(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{})
	useEtcd(t, c, "health/")
	db := filepath.Join(t.TempDir(), "k.db")
	cfg, err := loadConfig("", os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Database = db
	m := &Main{Config: cfg, Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard}
	if err := m.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	get := func() (int, map[string]string) {
		rec := httptest.NewRecorder()
		m.admin.Health.ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
		var state map[string]string
		if err := json.Unmarshal(rec.Body.Bytes(), &state); err != nil {
			t.Fatalf("/healthz: %v: %s", err, rec.Body)
		}
		return rec.Code, state
	}
	deadline := time.Now().Add(10 * time.Second)
	code, state := get()
	// The only copy owns every place: it holds each partition's lease.
	allPlaces := func() bool { return strings.Count(state["leases"], "places/") == table.Partitions }
	for !allPlaces() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		code, state = get()
	}
	if code != 200 || !strings.HasPrefix(state["store"], "etcd ") || state["quorum"] != "ok" || !allPlaces() {
		t.Errorf("/healthz: %d %v", code, state)
	}
	c.Stop(1)
	c.Stop(2)
	if code, state := get(); code != 503 || !strings.HasPrefix(state["quorum"], "lost") {
		t.Errorf("/healthz without a quorum: %d %v", code, state)
	}
	c.RestartAll()
}

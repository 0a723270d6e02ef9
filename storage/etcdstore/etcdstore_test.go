package etcdstore_test

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage"
	"github.com/kontermatt/kontermatt/storage/etcdstore"
	"github.com/kontermatt/kontermatt/storage/etcdstore/etcdtest"
	"github.com/kontermatt/kontermatt/storage/storagetest"
)

var prefixes atomic.Int64

// open opens a store on the cluster under a prefix of its own.
func open(t *testing.T, c *etcdtest.Cluster, opts etcdstore.Options) *etcdstore.Store {
	ctx := t.Context()
	t.Helper()
	opts.Endpoints = c.Endpoints()
	if opts.Prefix == "" {
		opts.Prefix = fmt.Sprintf("test%d/", prefixes.Add(1))
	}
	s, err := etcdstore.Open(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func etcdLog(t *testing.T, s storagetest.Store, id string) []table.LogEntry {
	ctx := t.Context()
	t.Helper()
	var out []table.LogEntry
	if err := s.(*etcdstore.Store).Log(ctx, id, func(e table.LogEntry) error { out = append(out, e); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestEtcdConforms: the etcd store keeps the contract every store keeps, on a 3-member cluster,
// with pages of 3 keys so every listing takes several.
func TestEtcdConforms(t *testing.T) {
	ctx := t.Context()
	c := etcdtest.Start(t, etcdtest.Options{})
	storagetest.Suite{
		Open:   func(t *testing.T) storagetest.Store { return open(t, c, etcdstore.Options{Page: 3}) },
		Log:    etcdLog,
		BadKey: storage.ErrBadKey,
	}.Run(t)
	t.Run("prefixes apart", func(t *testing.T) {
		a, b := open(t, c, etcdstore.Options{}), open(t, c, etcdstore.Options{})
		if err := a.Commit(ctx, table.Change{TableID: "t", State: []byte("a"), Log: table.LogEntry{Seq: 1, Verb: api.VerbNew}}); err != nil {
			t.Fatal(err)
		}
		if _, ok, err := b.Table(ctx, "t"); err != nil || ok {
			t.Errorf("a bot under another prefix sees the table: %v, %v", ok, err)
		}
	})
}

// A change larger than one etcd transaction is refused whole.
func TestCommitTooLarge(t *testing.T) {
	ctx := t.Context()
	c := etcdtest.Start(t, etcdtest.Options{Members: 1})
	s := open(t, c, etcdstore.Options{})
	var kv []table.KVEntry
	for i := range 200 {
		kv = append(kv, table.KVEntry{Bucket: "b", Key: fmt.Sprint(i), Value: []byte("v")})
	}
	err := s.Commit(ctx, table.Change{TableID: "t", State: []byte("s"), Log: table.LogEntry{Seq: 1, Verb: api.VerbNew}, KV: kv})
	if !errors.Is(err, etcdstore.ErrTooLarge) {
		t.Fatalf("a change of 200 KV entries: %v, want ErrTooLarge", err)
	}
	if _, ok, _ := s.Table(ctx, "t"); ok {
		t.Error("the refused change made its table")
	}
}

// TestQuorum: with one member of three killed while tables are being played, every command still
// goes through; with two killed, a command fails within the timeout with ErrUnavailable (no hang)
// and nothing is half-applied; with the members back, play goes on by itself.
func TestQuorum(t *testing.T) {
	ctx := t.Context()
	c := etcdtest.Start(t, etcdtest.Options{})
	const timeout = 2 * time.Second
	s := open(t, c, etcdstore.Options{Timeout: timeout})
	svc := tabletest.New(table.Config{Store: s, KV: s, Seed: 7, Log: slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelError}))})
	defer svc.Close()
	var tables []tabletest.Table
	for i := range 4 {
		tt, err := tabletest.Open(svc, i)
		if err != nil {
			t.Fatal(err)
		}
		tables = append(tables, tt)
	}
	play := func(rounds int) error {
		var wg sync.WaitGroup
		errs := make(chan error, len(tables))
		for _, tt := range tables {
			wg.Go(func() {
				for range rounds {
					if _, err := tabletest.Step(svc, tt); err != nil {
						errs <- fmt.Errorf("table %s: %w", tt.ID, err)
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		return <-errs
	}
	if err := play(5); err != nil {
		t.Fatal(err)
	}
	// One member dies mid-play.
	done := make(chan error, 1)
	go func() { done <- play(20) }()
	time.Sleep(100 * time.Millisecond)
	c.Stop(0)
	if err := <-done; err != nil {
		t.Fatalf("with one member of three down: %v", err)
	}

	// A second dies: no quorum.
	c.Stop(1)
	id := tables[0].ID
	before, _, err := s.Table(ctx, id)
	if err == nil {
		t.Log("the read still answered (the survivor had not noticed yet)")
	}
	_ = before
	start := time.Now()
	err = s.Commit(ctx, table.Change{TableID: "probe", State: []byte("x"), Log: table.LogEntry{Seq: 1, Verb: api.VerbNew}})
	took := time.Since(start)
	if !errors.Is(err, table.ErrUnavailable) {
		t.Fatalf("a commit without quorum: %v, want ErrUnavailable", err)
	}
	if took > timeout+time.Second {
		t.Errorf("the commit without quorum took %v; the timeout is %v", took, timeout)
	}
	t.Logf("without quorum a commit failed in %v: %v", took.Round(time.Millisecond), err)
	if _, _, err := s.Table(ctx, id); !errors.Is(err, table.ErrUnavailable) {
		t.Errorf("a read without quorum: %v, want ErrUnavailable", err)
	}
	// The service refuses the move (it rolls back) rather than hang.
	start = time.Now()
	if _, err := tabletest.Step(svc, tables[0]); err == nil {
		t.Error("a move without quorum was accepted")
	} else if !strings.Contains(err.Error(), i18n.T("en", "err.unavailable")) {
		t.Errorf("the player is told %q, not that the database is unreachable", err)
	} else if d := time.Since(start); d > timeout+time.Second {
		t.Errorf("the refused move took %v", d)
	}

	c.RestartAll()
	// Nothing half-applied: each table's state, its sequence key and its log agree.
	for _, tt := range tables {
		var log []table.LogEntry
		var err error
		for range 50 { // the restarted members elect a leader first
			log = nil
			err = s.Log(ctx, tt.ID, func(e table.LogEntry) error { log = append(log, e); return nil })
			if !errors.Is(err, table.ErrUnavailable) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil {
			t.Fatal(err)
		}
		state, ok, err := s.Table(ctx, tt.ID)
		if err != nil || !ok {
			t.Fatalf("table %s after the restart: %v, %v", tt.ID, ok, err)
		}
		if last := log[len(log)-1].Seq; !strings.Contains(string(state), fmt.Sprintf(`"seq":%d,`, last)) {
			t.Errorf("table %s: its state is not that of its last log entry %d", tt.ID, last)
		}
	}
	// Play goes on (a command refused while the cluster was down may have been applied on its
	// return; the service then refuses on a conflict until the later task reloads it, so only the
	// other tables are played here).
	tables = tables[1:]
	if err := play(5); err != nil {
		t.Fatalf("after the members came back: %v", err)
	}
}

// TestOpenUnreachable: a cluster that does not answer is said within the timeout.
func TestOpenUnreachable(t *testing.T) {
	ctx := t.Context()
	c := etcdtest.Start(t, etcdtest.Options{Members: 1})
	c.Stop(0)
	start := time.Now()
	_, err := etcdstore.Open(ctx, etcdstore.Options{Endpoints: c.Endpoints(), Timeout: time.Second})
	if !errors.Is(err, table.ErrUnavailable) {
		t.Fatalf("Open of a stopped cluster: %v, want ErrUnavailable", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Open took %v with a timeout of 1 s", d)
	}
}

// TestForgetLeavesNoCopy: after Forget, the forgotten name is in no member's database file: the
// store compacted the history and defragmented each member. (Their write-ahead logs keep the
// requests until etcd cuts them; that is the host's to bound, docs/hosting.md.)
func TestForgetLeavesNoCopy(t *testing.T) {
	ctx := t.Context()
	c := etcdtest.Start(t, etcdtest.Options{})
	s := open(t, c, etcdstore.Options{})
	const name = "Forgetme Annabella"
	commit := func(ch table.Change) {
		t.Helper()
		if err := s.Commit(ctx, ch); err != nil {
			t.Fatal(err)
		}
	}
	commit(table.Change{TableID: "t1", State: []byte(`{"seat":"` + name + `"}`), Closed: true,
		Log:     table.LogEntry{Seq: 1, Time: 5, Actor: "tg:42", Verb: api.VerbClose},
		Records: []table.Record{{Key: "t1/m1", Data: []byte(`{"name":"` + name + `"}`)}},
		KV:      []table.KVEntry{{Bucket: "people", Key: "42", Value: []byte(name)}}})
	// The name is in the members' files before (etcd's backend writes within 100 ms).
	deadline := time.Now().Add(5 * time.Second)
	for memberTraces(t, c, name) < len(c.Members) && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if n := memberTraces(t, c, name); n < len(c.Members) {
		t.Fatalf("the name is in %d of %d members' database files before Forget; the test cannot see it", n, len(c.Members))
	}
	err := s.Forget(ctx, table.Forgetting{Records: []table.Record{{Key: "t1/m1", Data: []byte(`{"name":"someone"}`)}},
		Closed: map[string][]byte{"t1": []byte(`{"seat":"someone"}`)}, Actor: "tg:42", As: "anon:1",
		KV: []table.KVEntry{{Bucket: "people", Key: "42"}}})
	if err != nil {
		t.Fatal(err)
	}
	if n := memberTraces(t, c, name); n > 0 {
		t.Errorf("after Forget the name is in %d members' database files", n)
	}
	wal := 0
	for _, m := range c.Members {
		wal += len(tabletest.Traces(t, firstWAL(t, m.Dir), name))
	}
	t.Logf("the members' write-ahead logs still hold the name: %d of %d (until etcd cuts them)", wal, len(c.Members))
}

// memberTraces counts the members whose data files outside the write-ahead log show word.
func memberTraces(t *testing.T, c *etcdtest.Cluster, word string) int {
	t.Helper()
	n := 0
	for _, m := range c.Members {
		found := false
		err := filepath.WalkDir(m.Dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				if d != nil && d.IsDir() && d.Name() == "wal" {
					return filepath.SkipDir
				}
				return err
			}
			if len(tabletest.Traces(t, path, word)) > 0 {
				t.Logf("%s holds %q", path, word)
				found = true
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if found {
			n++
		}
	}
	return n
}

func firstWAL(t *testing.T, dir string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "member", "wal", "*.wal"))
	if len(files) == 0 {
		t.Fatalf("no write-ahead log in %s", dir)
	}
	return files[0]
}

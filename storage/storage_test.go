package storage

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// TestMain doubles as the helper process of TestOpenLockedByOtherProcess: with
// STORAGE_TEST_HOLD set it opens that database, says "open", and holds it until stdin closes.
func TestMain(m *testing.M) {
	if path := os.Getenv("STORAGE_TEST_HOLD"); path != "" {
		s, err := Open(path, Options{})
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(2)
		}
		fmt.Println("open")
		io.Copy(io.Discard, os.Stdin)
		s.Close()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func openTemp(t testing.TB, opts Options) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kontermatt.db")
	s, err := Open(path, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

func reopen(t *testing.T, s *Store) *Store {
	t.Helper()
	path := s.Path()
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func entry(seq uint64, verb api.Verb, args ...string) table.LogEntry {
	return table.LogEntry{Seq: seq, Time: 1700000000000 + int64(seq), Actor: "tg:42", Verb: verb, Args: args, EventID: fmt.Sprint("ev", seq)}
}

func commit(t *testing.T, s *Store, c table.Change) {
	ctx := t.Context()
	t.Helper()
	if err := s.Commit(ctx, c); err != nil {
		t.Fatalf("Commit(%q): %v", c.TableID, err)
	}
}

func allTables(t *testing.T, s *Store) map[string]string {
	ctx := t.Context()
	t.Helper()
	got := map[string]string{}
	if err := s.Tables(ctx, func(id string, state []byte) error {
		got[id] = string(state)
		return nil
	}); err != nil {
		t.Fatalf("Tables: %v", err)
	}
	return got
}

func allRecords(t *testing.T, s *Store) map[string]string {
	ctx := t.Context()
	t.Helper()
	got := map[string]string{}
	if err := s.Records(ctx, func(key string, rec []byte) error {
		got[key] = string(rec)
		return nil
	}); err != nil {
		t.Fatalf("Records: %v", err)
	}
	return got
}

func allLog(t *testing.T, s *Store, id string) []table.LogEntry {
	ctx := t.Context()
	t.Helper()
	var got []table.LogEntry
	if err := s.Log(ctx, id, func(e table.LogEntry) error {
		got = append(got, e)
		return nil
	}); err != nil {
		t.Fatalf("Log(%q): %v", id, err)
	}
	return got
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func equalJSON(t *testing.T, what string, got, want any) {
	t.Helper()
	if g, w := jsonOf(t, got), jsonOf(t, want); g != w {
		t.Errorf("%s:\n got %s\nwant %s", what, g, w)
	}
}

func TestCommitRoundTrip(t *testing.T) {
	s, _ := openTemp(t, Options{})
	commit(t, s, table.Change{TableID: "dc:1", State: []byte("state-a1"), Log: entry(1, api.VerbNew)})
	commit(t, s, table.Change{TableID: "dc:1", State: []byte("state-a2"), Log: entry(2, api.VerbJoin)})
	commit(t, s, table.Change{TableID: "tg:2", State: []byte("state-b1"), Log: entry(1, api.VerbPlay, "q♠"),
		Records: []table.Record{{Key: "tg:2/m1/g1", Data: []byte(`{"game":1}`)}, {Key: "tg:2/m1/match", Data: []byte(`{"match":1}`)}}})
	commit(t, s, table.Change{TableID: "dc:1", State: []byte("state-a3"), Log: entry(3, api.VerbDeal)})

	check := func(t *testing.T, s *Store) {
		equalJSON(t, "tables", allTables(t, s), map[string]string{"dc:1": "state-a3", "tg:2": "state-b1"})
		equalJSON(t, "records", allRecords(t, s), map[string]string{"tg:2/m1/g1": `{"game":1}`, "tg:2/m1/match": `{"match":1}`})
		equalJSON(t, "log dc:1", allLog(t, s, "dc:1"), []table.LogEntry{entry(1, api.VerbNew), entry(2, api.VerbJoin), entry(3, api.VerbDeal)})
		equalJSON(t, "log tg:2", allLog(t, s, "tg:2"), []table.LogEntry{entry(1, api.VerbPlay, "q♠")})
		equalJSON(t, "log of unknown table", allLog(t, s, "nope"), []table.LogEntry(nil))
	}
	t.Run("open", func(t *testing.T) { check(t, s) })
	t.Run("reopened", func(t *testing.T) { check(t, reopen(t, s)) })
}

func TestCommitStateOnly(t *testing.T) {
	s, _ := openTemp(t, Options{})
	commit(t, s, table.Change{TableID: "a", State: []byte("1"), Log: entry(1, api.VerbNew)})
	commit(t, s, table.Change{TableID: "a", State: []byte("2")}) // no Verb: no log entry
	commit(t, s, table.Change{TableID: "b", State: []byte{}})    // empty state is a state
	equalJSON(t, "tables", allTables(t, s), map[string]string{"a": "2", "b": ""})
	equalJSON(t, "log a", allLog(t, s, "a"), []table.LogEntry{entry(1, api.VerbNew)})
	equalJSON(t, "log b", allLog(t, s, "b"), []table.LogEntry(nil))
}

func TestCommitDelete(t *testing.T) {
	s, _ := openTemp(t, Options{})
	commit(t, s, table.Change{TableID: "a", State: []byte("a"), Log: entry(1, api.VerbNew)})
	commit(t, s, table.Change{TableID: "a", State: []byte("a"), Log: entry(2, api.VerbDeal)})
	commit(t, s, table.Change{TableID: "b", State: []byte("b"), Log: entry(1, api.VerbNew)})
	commit(t, s, table.Change{TableID: "a", State: nil, Log: entry(3, api.VerbStop),
		Records: []table.Record{{Key: "a/m1/match", Data: []byte("final")}}})

	equalJSON(t, "tables", allTables(t, s), map[string]string{"b": "b"})
	equalJSON(t, "log a", allLog(t, s, "a"), []table.LogEntry(nil))
	equalJSON(t, "log b", allLog(t, s, "b"), []table.LogEntry{entry(1, api.VerbNew)})
	equalJSON(t, "records", allRecords(t, s), map[string]string{"a/m1/match": "final"})

	t.Run("absent table", func(t *testing.T) {
		commit(t, s, table.Change{TableID: "never", State: nil})
		equalJSON(t, "tables", allTables(t, s), map[string]string{"b": "b"})
	})
	t.Run("recreated table starts a new log", func(t *testing.T) {
		commit(t, s, table.Change{TableID: "a", State: []byte("a again"), Log: entry(1, api.VerbNew)})
		equalJSON(t, "log a", allLog(t, s, "a"), []table.LogEntry{entry(1, api.VerbNew)})
	})
}

// TestCommitLogSeqMustGrow: a change is guarded by its Seq, one after the table's last; any
// other (a stale copy's, or one that skips) is ErrConflict (also matched as ErrLogSeq, its old
// name) and writes nothing.
func TestCommitLogSeqMustGrow(t *testing.T) {
	ctx := t.Context()
	s, _ := openTemp(t, Options{})
	for seq := uint64(1); seq <= 5; seq++ {
		commit(t, s, table.Change{TableID: "a", State: fmt.Appendf(nil, "a%d", seq), Log: entry(seq, api.VerbPlay, "AS")})
	}
	for _, seq := range []uint64{5, 4, 0, 7} {
		t.Run(fmt.Sprint("seq ", seq), func(t *testing.T) {
			err := s.Commit(ctx, table.Change{TableID: "a", State: []byte("bad"), Log: entry(seq, api.VerbPlay, "KH"),
				Records: []table.Record{{Key: "a/m/g1", Data: []byte("rec")}}})
			if !errors.Is(err, table.ErrConflict) || !errors.Is(err, ErrLogSeq) {
				t.Fatalf("Commit with seq %d after 5: got %v, want table.ErrConflict", seq, err)
			}
			// Nothing of the refused change is written.
			equalJSON(t, "tables", allTables(t, s), map[string]string{"a": "a5"})
			equalJSON(t, "records", allRecords(t, s), map[string]string{})
			if log := allLog(t, s, "a"); len(log) != 5 || log[4].Seq != 5 {
				t.Errorf("log: %+v, want 5 entries up to 5", log)
			}
		})
	}
}

func TestCommitBadKey(t *testing.T) {
	ctx := t.Context()
	s, _ := openTemp(t, Options{})
	for _, tc := range []struct {
		name string
		c    table.Change
	}{
		{"empty table id", table.Change{State: []byte("x")}},
		{"huge table id", table.Change{TableID: strings.Repeat("x", bolt.MaxKeySize+1), State: []byte("x")}},
		{"empty record key", table.Change{TableID: "a", State: []byte("x"), Records: []table.Record{{Data: []byte("r")}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := s.Commit(ctx, tc.c); !errors.Is(err, ErrBadKey) {
				t.Fatalf("got %v, want ErrBadKey", err)
			}
		})
	}
	equalJSON(t, "tables", allTables(t, s), map[string]string{})
}

func TestOpenLocked(t *testing.T) {
	s, path := openTemp(t, Options{})
	start := time.Now()
	s2, err := Open(path, Options{})
	took := time.Since(start)
	if err == nil {
		s2.Close()
		t.Fatal("second Open of the same file succeeded")
	}
	if !errors.Is(err, ErrLocked) || !errors.Is(err, berrors.ErrTimeout) {
		t.Fatalf("got %v, want ErrLocked wrapping bbolt's ErrTimeout", err)
	}
	if !strings.Contains(err.Error(), "another instance") {
		t.Errorf("error %q does not say another instance is running", err)
	}
	if took > 2*time.Second {
		t.Errorf("second Open took %v, want about %v", took, DefaultTimeout)
	}
	t.Logf("second Open failed after %v: %v", took.Round(time.Millisecond), err)

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s3, err := Open(path, Options{Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	s3.Close()
}

func TestOpenLockedByOtherProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kontermatt.db")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "STORAGE_TEST_HOLD="+path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("helper process: %v", err)
		}
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "open\n" {
		t.Fatalf("helper process said %q, %v", line, err)
	}

	start := time.Now()
	s, err := Open(path, Options{Timeout: 300 * time.Millisecond})
	if err == nil {
		s.Close()
		t.Fatal("Open succeeded while another process holds the database")
	}
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("got %v, want ErrLocked", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("Open took %v", took)
	}
}

func TestOpenNotABoltFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "junk.db")
	secret := bytes.Repeat([]byte("SECRET-CONTENT "), 1000)
	if err := os.WriteFile(path, secret, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(path, Options{})
	if err == nil {
		s.Close()
		t.Fatal("Open of a non-bbolt file succeeded")
	}
	if strings.Contains(err.Error(), "SECRET") {
		t.Errorf("error quotes the file: %v", err)
	}
}

func TestTablesSkipsCorruptTable(t *testing.T) {
	ctx := t.Context()
	s, _ := openTemp(t, Options{})
	for _, id := range []string{"a", "b", "c", "d"} {
		state := "good " + id
		if id == "b" || id == "d" {
			state = "corrupt"
		}
		commit(t, s, table.Change{TableID: id, State: []byte(state), Log: entry(1, api.VerbNew)})
	}
	errDecode := errors.New("cannot decode state")
	var served []string
	err := s.Tables(ctx, func(id string, state []byte) error {
		if string(state) == "corrupt" {
			return errDecode
		}
		served = append(served, id)
		return nil
	})
	if got, want := strings.Join(served, ","), "a,c"; got != want {
		t.Errorf("served %s, want %s", got, want)
	}
	if !errors.Is(err, errDecode) {
		t.Fatalf("Tables returned %v, want the decode errors", err)
	}
	var ids []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var te *TableError
		if !errors.As(e, &te) {
			t.Fatalf("error %v is not a *TableError", e)
		}
		ids = append(ids, te.ID)
	}
	if got, want := strings.Join(ids, ","), "b,d"; got != want {
		t.Errorf("reported tables %s, want %s", got, want)
	}
}

func TestTablesManyInChunks(t *testing.T) {
	ctx := t.Context()
	s, _ := openTemp(t, Options{})
	const n = 3*chunk + 17
	err := s.db.Update(func(tx *bolt.Tx) error {
		for i := range n {
			c := table.Change{TableID: fmt.Sprintf("t%05d", i), State: []byte(fmt.Sprint(i)), Log: entry(1, api.VerbNew)}
			e, err := prepare(c)
			if err != nil {
				return err
			}
			if err := apply(tx, c, e); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// fn commits to the store while Tables runs: Tables holds no transaction while fn runs.
	i := 0
	err = s.Tables(ctx, func(id string, state []byte) error {
		if want := fmt.Sprintf("t%05d", i); id != want || string(state) != fmt.Sprint(i) {
			return fmt.Errorf("got %s=%s, want %s=%d", id, state, want, i)
		}
		i++
		return s.Commit(ctx, table.Change{TableID: id, State: append(state, '+'), Log: entry(2, api.VerbJoin)})
	})
	if err != nil {
		t.Fatal(err)
	}
	if i != n {
		t.Fatalf("served %d tables, want %d", i, n)
	}
	got := allTables(t, s)
	if len(got) != n || got["t00300"] != "300+" {
		t.Errorf("after rewriting: %d tables, t00300=%q", len(got), got["t00300"])
	}
}

func TestLogAndRecordsCallbackError(t *testing.T) {
	ctx := t.Context()
	s, _ := openTemp(t, Options{})
	for seq := uint64(1); seq <= 3; seq++ {
		commit(t, s, table.Change{TableID: "a", State: []byte("a"), Log: entry(seq, api.VerbPlay),
			Records: []table.Record{{Key: fmt.Sprint("a/m/g", seq), Data: []byte("r")}}})
	}
	stop := errors.New("stop")
	n := 0
	if err := s.Log(ctx, "a", func(table.LogEntry) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
		t.Errorf("Log: %v after %d entries, want stop after 1", err, n)
	}
	n = 0
	if err := s.Records(ctx, func(string, []byte) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
		t.Errorf("Records: %v after %d records, want stop after 1", err, n)
	}
}

func TestLogCorruptEntry(t *testing.T) {
	ctx := t.Context()
	s, _ := openTemp(t, Options{})
	commit(t, s, table.Change{TableID: "a", State: []byte("a"), Log: entry(1, api.VerbNew)})
	err := s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketLogs).Bucket([]byte("a")).Put(seqKey(2), []byte("SECRET{not json"))
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []table.LogEntry
	err = s.Log(ctx, "a", func(e table.LogEntry) error { got = append(got, e); return nil })
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("got %v, want ErrCorrupt", err)
	}
	if strings.Contains(err.Error(), "SECRET") {
		t.Errorf("error quotes stored bytes: %v", err)
	}
	if len(got) != 1 {
		t.Errorf("served %d entries before the corrupt one, want 1", len(got))
	}
}

func TestBackup(t *testing.T) {
	ctx := t.Context()
	s, _ := openTemp(t, Options{})
	want := map[string]string{}
	for i := range 50 {
		id := fmt.Sprint("table-", i)
		want[id] = strings.Repeat(id, 100)
		commit(t, s, table.Change{TableID: id, State: []byte(want[id]), Log: entry(1, api.VerbNew),
			Records: []table.Record{{Key: id + "/m/g1", Data: []byte("r")}}})
	}
	if err := s.Put(ctx, "discord", "msg:1", []byte("123")); err != nil {
		t.Fatal(err)
	}

	// Commits go on while the backups are taken; they may or may not be in the copy.
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for seq := uint64(1); ; seq++ {
			select {
			case <-done:
				return
			default:
			}
			if err := s.Commit(ctx, table.Change{TableID: "busy", State: []byte(fmt.Sprint(seq)), Log: entry(seq, api.VerbPlay)}); err != nil {
				t.Error(err)
				return
			}
		}
	})

	dir := t.TempDir()
	var buf bytes.Buffer
	n, err := s.Backup(&buf)
	if err != nil || n != int64(buf.Len()) {
		t.Fatalf("Backup: %d bytes (buffer %d), %v", n, buf.Len(), err)
	}
	streamed := filepath.Join(dir, "streamed.db")
	if err := os.WriteFile(streamed, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "backup.db")
	if err := os.WriteFile(file, []byte("an older backup"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.BackupFile(file); err != nil {
		t.Fatalf("BackupFile: %v", err)
	}
	close(done)
	wg.Wait()

	for _, path := range []string{streamed, file} {
		t.Run(filepath.Base(path), func(t *testing.T) {
			raw, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second, ReadOnly: true})
			if err != nil {
				t.Fatalf("backup is not a bbolt file: %v", err)
			}
			err = raw.View(func(tx *bolt.Tx) error {
				var errs []error
				for err := range tx.Check() {
					errs = append(errs, err)
				}
				return errors.Join(errs...)
			})
			raw.Close()
			if err != nil {
				t.Fatalf("backup fails bbolt's check: %v", err)
			}
			b, err := Open(path, Options{})
			if err != nil {
				t.Fatalf("Open backup: %v", err)
			}
			defer b.Close()
			got := allTables(t, b)
			delete(got, "busy")
			equalJSON(t, "tables", got, want)
			if n := len(allRecords(t, b)); n != 50 {
				t.Errorf("backup has %d records, want 50", n)
			}
			if v, ok, err := b.Get(ctx, "discord", "msg:1"); string(v) != "123" || !ok || err != nil {
				t.Errorf("backup kv: %q %v %v", v, ok, err)
			}
		})
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Errorf("backup dir has %d files, want 2 (no temporary file left)", len(entries))
	}
}

func TestBackupFileMissingDir(t *testing.T) {
	s, _ := openTemp(t, Options{})
	if err := s.BackupFile(filepath.Join(t.TempDir(), "missing-dir", "backup.db")); err == nil {
		t.Fatal("BackupFile into a missing directory succeeded")
	}
}

func TestConcurrentCommits(t *testing.T) {
	ctx := t.Context()
	for _, solo := range []bool{false, true} {
		t.Run(fmt.Sprint("solo=", solo), func(t *testing.T) {
			s, _ := openTemp(t, Options{NoGroupCommit: solo})
			const goroutines, commits = 32, 15
			var wg sync.WaitGroup
			for g := range goroutines {
				wg.Go(func() {
					id := fmt.Sprint("t", g)
					for seq := uint64(1); seq <= commits; seq++ {
						c := table.Change{TableID: id, State: fmt.Appendf(nil, "%s@%d", id, seq), Log: entry(seq, api.VerbPlay),
							Records: []table.Record{{Key: fmt.Sprintf("%s/m/g%d", id, seq), Data: []byte("r")}}}
						if err := s.Commit(ctx, c); err != nil {
							t.Error(err)
							return
						}
						if err := s.Put(ctx, "shared", fmt.Sprint(g%4), []byte(id)); err != nil {
							t.Error(err)
							return
						}
					}
				})
			}
			// Readers run alongside the writers.
			wg.Go(func() {
				for range 5 {
					if err := s.Tables(ctx, func(string, []byte) error { return nil }); err != nil {
						t.Error(err)
					}
					if _, _, err := s.Get(ctx, "shared", "0"); err != nil {
						t.Error(err)
					}
				}
			})
			wg.Wait()

			tables := allTables(t, s)
			if len(tables) != goroutines {
				t.Fatalf("%d tables, want %d", len(tables), goroutines)
			}
			for g := range goroutines {
				id := fmt.Sprint("t", g)
				if want := fmt.Sprintf("%s@%d", id, commits); tables[id] != want {
					t.Errorf("table %s = %q, want %q", id, tables[id], want)
				}
				if n := len(allLog(t, s, id)); n != commits {
					t.Errorf("table %s has %d log entries, want %d", id, n, commits)
				}
			}
			if n := len(allRecords(t, s)); n != goroutines*commits {
				t.Errorf("%d records, want %d", n, goroutines*commits)
			}
		})
	}
}

func TestKV(t *testing.T) {
	ctx := t.Context()
	s, _ := openTemp(t, Options{})
	get := func(bucket, key string) (string, bool) {
		t.Helper()
		v, ok, err := s.Get(ctx, bucket, key)
		if err != nil {
			t.Fatalf("Get(%q, %q): %v", bucket, key, err)
		}
		return string(v), ok
	}
	if v, ok := get("discord", "missing"); ok || v != "" {
		t.Errorf("missing bucket: %q %v", v, ok)
	}
	for _, p := range [][3]string{{"discord", "live:t1", "m-1"}, {"discord", "live:t2", "m-2"}, {"telegram", "live:t1", "77"}, {"telegram", "nodm:tg:5", ""}} {
		if err := s.Put(ctx, p[0], p[1], []byte(p[2])); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Put(ctx, "discord", "live:t1", []byte("m-3")); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "telegram", "nil", nil); err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s)
	for _, tc := range []struct {
		bucket, key, want string
		ok                bool
	}{
		{"discord", "live:t1", "m-3", true},
		{"discord", "live:t2", "m-2", true},
		{"telegram", "live:t1", "77", true},
		{"telegram", "nodm:tg:5", "", true},
		{"telegram", "nil", "", true},
		{"telegram", "live:t2", "", false},
	} {
		if v, ok := get(tc.bucket, tc.key); v != tc.want || ok != tc.ok {
			t.Errorf("Get(%q, %q) = %q %v, want %q %v", tc.bucket, tc.key, v, ok, tc.want, tc.ok)
		}
	}

	// Get returns a copy the caller may keep and change.
	v, _, _ := s.Get(ctx, "discord", "live:t2")
	v[0] = 'X'
	if v, _ := get("discord", "live:t2"); v != "m-2" {
		t.Errorf("changing Get's bytes changed the store: %q", v)
	}

	for _, d := range [][2]string{{"discord", "live:t1"}, {"discord", "never"}, {"nobucket", "x"}} {
		if err := s.Delete(ctx, d[0], d[1]); err != nil {
			t.Errorf("Delete(%q, %q): %v", d[0], d[1], err)
		}
	}
	if _, ok := get("discord", "live:t1"); ok {
		t.Error("deleted key still there")
	}
	if _, ok := get("discord", "live:t2"); !ok {
		t.Error("other key gone")
	}
	// Adapter buckets are separate from the tables.
	equalJSON(t, "tables", allTables(t, s), map[string]string{})

	for _, bad := range [][2]string{{"", "k"}, {"b", ""}} {
		if err := s.Put(ctx, bad[0], bad[1], []byte("v")); !errors.Is(err, ErrBadKey) {
			t.Errorf("Put(%q, %q): %v, want ErrBadKey", bad[0], bad[1], err)
		}
		if _, _, err := s.Get(ctx, bad[0], bad[1]); !errors.Is(err, ErrBadKey) {
			t.Errorf("Get(%q, %q): %v, want ErrBadKey", bad[0], bad[1], err)
		}
		if err := s.Delete(ctx, bad[0], bad[1]); !errors.Is(err, ErrBadKey) {
			t.Errorf("Delete(%q, %q): %v, want ErrBadKey", bad[0], bad[1], err)
		}
	}
}

func TestClosed(t *testing.T) {
	ctx := t.Context()
	s, _ := openTemp(t, Options{})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, table.Change{TableID: "a", State: []byte("a")}); !errors.Is(err, berrors.ErrDatabaseNotOpen) {
		t.Errorf("Commit after Close: %v", err)
	}
	if err := s.Tables(ctx, func(string, []byte) error { return nil }); !errors.Is(err, berrors.ErrDatabaseNotOpen) {
		t.Errorf("Tables after Close: %v", err)
	}
	if _, _, err := s.Get(ctx, "b", "k"); !errors.Is(err, berrors.ErrDatabaseNotOpen) {
		t.Errorf("Get after Close: %v", err)
	}
}

package storage

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// TestForgetCompactsWhileCommitting: Forget swaps a compacted file in while other goroutines
// commit and read; every commit that returned is in the new file, and the store reopens.
func TestForgetCompactsWhileCommitting(t *testing.T) {
	ctx := t.Context()
	for _, solo := range []bool{false, true} {
		t.Run(fmt.Sprint("solo=", solo), func(t *testing.T) {
			s, _ := openTemp(t, Options{NoGroupCommit: solo})
			var last [4]atomic.Uint64
			stop := make(chan struct{})
			var wg sync.WaitGroup
			for w := range last {
				id := fmt.Sprint("busy-", w)
				wg.Go(func() {
					for seq := uint64(1); ; seq++ {
						select {
						case <-stop:
							return
						default:
						}
						if err := s.Commit(ctx, table.Change{TableID: id, State: []byte(fmt.Sprint(seq)), Log: entry(seq, api.VerbPlay)}); err != nil {
							t.Error(err)
							return
						}
						last[w].Store(seq)
						if _, _, err := s.Get(ctx, "kv", "k"); err != nil {
							t.Error(err)
							return
						}
					}
				})
			}
			for range 5 {
				if err := forgetOne(s); err != nil {
					t.Fatal(err)
				}
			}
			close(stop)
			wg.Wait()
			s = reopen(t, s)
			tables := allTables(t, s)
			for w := range last {
				id := fmt.Sprint("busy-", w)
				if want := fmt.Sprint(last[w].Load()); tables[id] != want {
					t.Errorf("%s: state %q after the compactions, last commit %s", id, tables[id], want)
				}
				if n := len(allLog(t, s, id)); uint64(n) != last[w].Load() {
					t.Errorf("%s: %d log entries, %d commits", id, n, last[w].Load())
				}
			}
		})
	}
}

// TestBackupHoldsOnlyLiveData: a value deleted or replaced before a backup is not in the backup
// (bbolt leaves it in the page it freed, and tx.WriteTo, which Backup used before, copies free
// pages too).
func TestBackupHoldsOnlyLiveData(t *testing.T) {
	ctx := t.Context()
	s, _ := openTemp(t, Options{})
	const gone = "a value deleted before the backup"
	for i := range 20 {
		if err := s.Put(ctx, "b", fmt.Sprint("k", i), []byte(fmt.Sprint(gone, i))); err != nil {
			t.Fatal(err)
		}
	}
	commit(t, s, table.Change{TableID: "t1", State: []byte("state: " + gone), Log: entry(1, api.VerbNew)})
	for i := range 20 {
		if err := s.Delete(ctx, "b", fmt.Sprint("k", i)); err != nil {
			t.Fatal(err)
		}
	}
	commit(t, s, table.Change{TableID: "t1", State: []byte("state now"), Log: entry(2, api.VerbJoin)})
	var buf bytes.Buffer
	if _, err := s.Backup(&buf); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "backup.db")
	if err := s.BackupFile(file); err != nil {
		t.Fatal(err)
	}
	saved, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"Backup": buf.Bytes(), "BackupFile": saved} {
		if n := bytes.Count(b, []byte(gone)); n > 0 {
			t.Errorf("%s holds the deleted value %d times", name, n)
		}
		if !bytes.Contains(b, []byte("state now")) {
			t.Errorf("%s lacks what is kept", name)
		}
	}
}

// forgetOne makes Forget delete one entry about a person, which makes it compact the file.
func forgetOne(s *Store) error {
	ctx := context.Background()
	if err := s.Put(ctx, "test.people", "p1", []byte("1")); err != nil {
		return err
	}
	return s.Forget(ctx, table.Forgetting{KV: []table.KVEntry{{Bucket: "test.people", Key: "p1"}}})
}

// TestForgetCompactsOnlyWhatItChanged: a Forget that finds nothing of the person leaves the file
// as it is (a "forget yes" repeated costs no compaction); one that deletes something swaps a
// compacted file in.
func TestForgetCompactsOnlyWhatItChanged(t *testing.T) {
	ctx := t.Context()
	s, path := openTemp(t, Options{})
	commit(t, s, table.Change{TableID: "t1", State: []byte("state"), Log: entry(1, api.VerbNew)})
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Forget(ctx, table.Forgetting{Actor: "tg:9", As: "forgotten:x", KV: []table.KVEntry{{Bucket: "test.people", Key: "9"}}}); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.Stat(path); !os.SameFile(before, after) {
		t.Error("a Forget that changed nothing compacted the file")
	}
	if err := forgetOne(s); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.Stat(path); os.SameFile(before, after) {
		t.Error("a Forget that deleted something left the file as it was")
	}
	if got := allTables(t, s); got["t1"] != "state" {
		t.Errorf("tables after the compaction: %v", got)
	}
}

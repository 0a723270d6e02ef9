package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/storage/storagetest"
)

// fill writes enough tables, logs and records that every bucket spans several pages, with branch
// pages and a value over several pages.
func fill(s *Store) error {
	ctx := context.Background()
	for i := range 400 {
		id := fmt.Sprintf("table-%03d", i)
		if err := s.Commit(ctx, table.Change{TableID: id, State: []byte(strings.Repeat("s", 300)), Log: entry(1, api.VerbNew),
			Records: []table.Record{{Key: id + "/m/g1", Data: []byte(strings.Repeat("r", 500))}}}); err != nil {
			return err
		}
		if err := s.Commit(ctx, table.Change{TableID: id, State: []byte(strings.Repeat("t", 300)), Log: entry(2, api.VerbPlay, "AS")}); err != nil {
			return err
		}
	}
	return s.Commit(ctx, table.Change{TableID: "big", State: []byte("s"), Records: []table.Record{{Key: "big/m/match", Data: bytes.Repeat([]byte("big "), 20000)}}})
}

// filledBytes is a healthy filled database file, made once: each of its 801 commits costs fsyncs.
var filledBytes = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "storage-filled-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	s, err := Open(filepath.Join(dir, "k.db"), Options{})
	if err != nil {
		return nil, err
	}
	if err := fill(s); err != nil {
		s.Close()
		return nil, err
	}
	if err := s.Close(); err != nil {
		return nil, err
	}
	return os.ReadFile(filepath.Join(dir, "k.db"))
})

// filledFile makes a closed, healthy, filled database file.
func filledFile(t *testing.T) string {
	t.Helper()
	data, err := filledBytes()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kontermatt.db")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// openFilled opens a filled database.
func openFilled(t *testing.T) (*Store, string) {
	t.Helper()
	path := filledFile(t)
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

func TestOpenDamaged(t *testing.T) {
	for _, d := range storagetest.Damages {
		for _, readOnly := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/readonly=%v", d.Name, readOnly), func(t *testing.T) {
				path := filledFile(t)
				d.Apply(t, path)
				before, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				s, err := Open(path, Options{ReadOnly: readOnly})
				if err == nil {
					s.Close()
					t.Fatal("Open of a damaged file succeeded")
				}
				if !errors.Is(err, ErrDamaged) {
					t.Fatalf("got %v, want ErrDamaged", err)
				}
				if !strings.Contains(err.Error(), path) {
					t.Errorf("error %q does not name the file", err)
				}
				after, _ := os.ReadFile(path)
				if !bytes.Equal(before, after) {
					t.Error("Open wrote into the damaged file")
				}
				t.Logf("%v", err)
			})
		}
	}
}

// usedPages lists the pages of the given type that the open Store's file has in use.
func usedPages(t *testing.T, s *Store, typ string) []int {
	t.Helper()
	var ids []int
	err := s.db.View(func(tx *bolt.Tx) error {
		for id := 2; ; id++ {
			info, err := tx.Page(id)
			if err != nil || info == nil {
				return err
			}
			if info.Type == typ {
				ids = append(ids, id)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestReadsOfAFileDamagedWhileOpen damages the file under an open Store (bbolt maps it, so the
// Store sees the change): every read path gives ErrDamaged instead of a panic or a fatal fault,
// and the Store still closes.
func TestReadsOfAFileDamagedWhileOpen(t *testing.T) {
	ctx := t.Context()
	reads := []struct {
		name string
		read func(s *Store) error
	}{
		{"Tables", func(s *Store) error { return s.Tables(ctx, func(string, []byte) error { return nil }) }},
		{"Records", func(s *Store) error { return s.Records(ctx, func(string, []byte) error { return nil }) }},
		{"Log", func(s *Store) error { return s.Log(ctx, "table-200", func(table.LogEntry) error { return nil }) }},
	}
	t.Run("garbage over every leaf page", func(t *testing.T) {
		s, path := openFilled(t)
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		size := s.db.Info().PageSize
		for _, id := range usedPages(t, s, "leaf") {
			if _, err := f.WriteAt(bytes.Repeat([]byte{0xa5}, size), int64(id*size)); err != nil {
				t.Fatal(err)
			}
		}
		f.Close()
		for _, r := range reads {
			if err := r.read(s); !errors.Is(err, ErrDamaged) {
				t.Errorf("%s: got %v, want ErrDamaged", r.name, err)
			}
		}
		if err := s.Close(); err != nil {
			t.Errorf("Close after the damage: %v", err)
		}
	})
	t.Run("truncated", func(t *testing.T) {
		s, path := openFilled(t)
		// Pages beyond the end are still mapped: reading them is a fault (SIGBUS), which only
		// the guard keeps from ending the process.
		if err := os.Truncate(path, int64(3*s.db.Info().PageSize)); err != nil {
			t.Fatal(err)
		}
		for _, r := range reads {
			if err := r.read(s); !errors.Is(err, ErrDamaged) {
				t.Errorf("%s: got %v, want ErrDamaged", r.name, err)
			}
		}
		if _, err := s.Backup(io.Discard); !errors.Is(err, ErrDamaged) {
			t.Errorf("Backup: got %v, want ErrDamaged", err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("Close after the damage: %v", err)
		}
	})
}

// TestDamageGuardLeavesCallbackPanics checks that a panic in the caller's own callback is not
// taken for a damaged file: it reaches the caller.
func TestDamageGuardLeavesCallbackPanics(t *testing.T) {
	ctx := t.Context()
	s, _ := openTemp(t, Options{})
	commit(t, s, table.Change{TableID: "a", State: []byte("a")})
	defer func() {
		if r := recover(); r != "callback bug" {
			t.Errorf("recovered %v, want the callback's own panic", r)
		}
	}()
	s.Tables(ctx, func(string, []byte) error { panic("callback bug") })
	t.Error("Tables returned after its callback panicked")
}

func TestOpenReadOnly(t *testing.T) {
	ctx := t.Context()
	t.Run("missing file is not created", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "none.db")
		_, err := Open(path, Options{ReadOnly: true})
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("got %v, want fs.ErrNotExist", err)
		}
		if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the file exists after a read-only Open: %v", err)
		}
	})
	t.Run("empty file stays empty", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "empty.db")
		if err := os.WriteFile(path, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := Open(path, Options{ReadOnly: true}); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("got %v, want fs.ErrNotExist", err)
		}
		if fi, err := os.Stat(path); err != nil || fi.Size() != 0 {
			t.Errorf("after a read-only Open: %v, %v", fi, err)
		}
	})
	t.Run("reads, refuses writes, writes nothing", func(t *testing.T) {
		path := filledFile(t)
		before, _ := os.ReadFile(path)
		s, err := Open(path, Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(allRecords(t, s)); n != 401 {
			t.Errorf("%d records, want 401", n)
		}
		if err := s.Commit(ctx, table.Change{TableID: "x", State: []byte("x")}); !errors.Is(err, berrors.ErrDatabaseReadOnly) {
			t.Errorf("Commit: %v, want ErrDatabaseReadOnly", err)
		}
		s.Close()
		if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
			t.Error("a read-only Store changed the file")
		}
	})
	t.Run("locked by a running bot", func(t *testing.T) {
		_, path := openTemp(t, Options{})
		if _, err := Open(path, Options{ReadOnly: true, Timeout: 50e6}); !errors.Is(err, ErrLocked) {
			t.Errorf("got %v, want ErrLocked", err)
		}
	})
	t.Run("older schema", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "v0.db")
		db, err := bolt.Open(path, 0o600, nil) // a bbolt file the bot never migrated: version 0
		if err != nil {
			t.Fatal(err)
		}
		db.Close()
		if _, err := Open(path, Options{ReadOnly: true}); !errors.Is(err, ErrOlderSchema) {
			t.Errorf("got %v, want ErrOlderSchema", err)
		}
	})
	t.Run("newer schema", func(t *testing.T) {
		path := filledFile(t)
		db, err := bolt.Open(path, 0o600, nil)
		if err != nil {
			t.Fatal(err)
		}
		db.Update(func(tx *bolt.Tx) error {
			return tx.Bucket(bucketMeta).Put(keySchema, seqKey(SchemaVersion()+1))
		})
		db.Close()
		if _, err := Open(path, Options{ReadOnly: true}); !errors.Is(err, ErrNewerSchema) {
			t.Errorf("got %v, want ErrNewerSchema", err)
		}
	})
}

package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
)

func rawOpen(t *testing.T, path string) *bolt.DB {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatalf("bolt.Open: %v", err)
	}
	return db
}

func storedVersion(t *testing.T, db *bolt.DB) uint64 {
	t.Helper()
	var v uint64
	if err := db.View(func(tx *bolt.Tx) (err error) { v, err = schemaVersion(tx); return err }); err != nil {
		t.Fatal(err)
	}
	return v
}

func setVersion(t *testing.T, db *bolt.DB, v uint64) {
	t.Helper()
	err := db.Update(func(tx *bolt.Tx) error {
		meta, err := tx.CreateBucketIfNotExists(bucketMeta)
		if err != nil {
			return err
		}
		return meta.Put(keySchema, binary.BigEndian.AppendUint64(nil, v))
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestSchemaNewFile(t *testing.T) {
	s, path := openTemp(t, Options{})
	s.Close()
	db := rawOpen(t, path)
	defer db.Close()
	if v := storedVersion(t, db); v != SchemaVersion() || v != 2 {
		t.Errorf("new file has schema %d, want %d (= 2)", v, SchemaVersion())
	}
	if err := db.View(checkLayout); err != nil {
		t.Error(err)
	}
}

func TestSchemaV0FileIsMigrated(t *testing.T) {
	ctx := t.Context()
	for _, tc := range []struct {
		name  string
		setup func(tx *bolt.Tx) error
	}{
		{"empty bbolt file", func(*bolt.Tx) error { return nil }},
		{"meta without version", func(tx *bolt.Tx) error { _, err := tx.CreateBucket(bucketMeta); return err }},
		{"some buckets already there", func(tx *bolt.Tx) error {
			b, err := tx.CreateBucket(bucketTables)
			if err != nil {
				return err
			}
			return b.Put([]byte("old"), []byte("state"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "v0.db")
			db := rawOpen(t, path)
			if err := db.Update(tc.setup); err != nil {
				t.Fatal(err)
			}
			if v := storedVersion(t, db); v != 0 {
				t.Fatalf("setup has version %d", v)
			}
			db.Close()

			s, err := Open(path, Options{})
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			if err := s.Commit(ctx, table.Change{TableID: "a", State: []byte("a"), Log: entry(1, api.VerbNew)}); err != nil {
				t.Fatal(err)
			}
			s.Close()
			db = rawOpen(t, path)
			defer db.Close()
			if v := storedVersion(t, db); v != SchemaVersion() {
				t.Errorf("after Open: version %d, want %d", v, SchemaVersion())
			}
		})
	}
}

func TestSchemaMigrationsRunInOrderOnce(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "m.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, table.Change{TableID: "a", State: []byte("v1 state")}); err != nil {
		t.Fatal(err)
	}
	s.Close()

	var ran []int
	step := func(n int) migration {
		return func(tx *bolt.Tx) error {
			ran = append(ran, n)
			// A real step rewrites data: here every state gets a version suffix.
			b := tx.Bucket(bucketTables)
			c := b.Cursor()
			for k, v := c.First(); k != nil; k, v = c.Next() {
				if err := b.Put(k, append(bytes.Clone(v), byte('0'+n))); err != nil {
					return err
				}
			}
			return nil
		}
	}
	cur := len(migrations)
	future := append(append([]migration(nil), migrations...), step(cur), step(cur+1))

	db := rawOpen(t, path)
	defer db.Close()
	if err := migrate(db, future); err != nil {
		t.Fatal(err)
	}
	if v := storedVersion(t, db); v != uint64(cur+2) {
		t.Errorf("version %d, want %d", v, cur+2)
	}
	if err := migrate(db, future); err != nil {
		t.Fatal(err)
	}
	if got := ran; len(got) != 2 || got[0] != cur || got[1] != cur+1 {
		t.Errorf("ran steps %v, want [%d %d] once", got, cur, cur+1)
	}
	err = db.View(func(tx *bolt.Tx) error {
		if got := string(tx.Bucket(bucketTables).Get([]byte("a"))); got != "v1 state"+string(rune('0'+cur))+string(rune('0'+cur+1)) {
			t.Errorf("migrated state %q", got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// This binary does not know the two future versions.
	if err := migrate(db, migrations); !errors.Is(err, ErrNewerSchema) {
		t.Errorf("older binary on migrated file: %v, want ErrNewerSchema", err)
	}
}

func TestSchemaFailedMigrationWritesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	db := rawOpen(t, path)
	defer db.Close()
	if err := migrate(db, migrations); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	future := append(append([]migration(nil), migrations...),
		func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("from-step-2")); return err }, // the next step

		func(tx *bolt.Tx) error { return boom },
	)
	if err := migrate(db, future); !errors.Is(err, boom) {
		t.Fatalf("got %v, want boom", err)
	}
	if v := storedVersion(t, db); v != SchemaVersion() {
		t.Errorf("version %d after failed migration, want %d", v, SchemaVersion())
	}
	db.View(func(tx *bolt.Tx) error {
		if tx.Bucket([]byte("from-step-2")) != nil {
			t.Error("step 2 of a failed migration was kept")
		}
		return nil
	})
}

func TestSchemaNewerRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "newer.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	db := rawOpen(t, path)
	setVersion(t, db, SchemaVersion()+1)
	db.Close()
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	s, err = Open(path, Options{})
	if err == nil {
		s.Close()
		t.Fatal("Open of a newer schema succeeded")
	}
	if !errors.Is(err, ErrNewerSchema) {
		t.Fatalf("got %v, want ErrNewerSchema", err)
	}
	t.Log(err)
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Error("refusing a newer schema changed the file")
	}
	// The refused Open released the lock.
	db, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("file still locked after refused Open: %v", err)
	}
	db.Close()
}

func TestSchemaCorruptVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.db")
	db := rawOpen(t, path)
	err := db.Update(func(tx *bolt.Tx) error {
		meta, err := tx.CreateBucket(bucketMeta)
		if err != nil {
			return err
		}
		return meta.Put(keySchema, []byte("1"))
	})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if s, err := Open(path, Options{}); !errors.Is(err, ErrCorrupt) {
		if err == nil {
			s.Close()
		}
		t.Fatalf("got %v, want ErrCorrupt", err)
	}
}

func TestSchemaMissingBucket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	db := rawOpen(t, path)
	if err := db.Update(func(tx *bolt.Tx) error { return tx.DeleteBucket(bucketLogs) }); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if s, err := Open(path, Options{}); !errors.Is(err, ErrCorrupt) {
		if err == nil {
			s.Close()
		}
		t.Fatalf("got %v, want ErrCorrupt", err)
	}
}

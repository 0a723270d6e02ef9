package storage

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/kontermatt/kontermatt/core/store"
)

// ClosedTables calls fn for every closed table not yet pruned, in ID order, outside any
// transaction.
func (s *Store) ClosedTables(ctx context.Context, fn func(id string, state []byte) error) error {
	return s.each(ctx, bucketClosed, nil, func(k, v []byte) error {
		if len(v) < 8 {
			return fmt.Errorf("storage: closed table %q of %d bytes: %w", k, len(v), ErrCorrupt)
		}
		return fn(string(k), v[8:])
	})
}

// Forget makes the changes in one transaction (see store.Forgetting), then compacts the file:
// bbolt keeps what a transaction replaced in the pages it freed, so a compacted copy of the live
// data is written beside the file, synced, and renamed over it, and the Store goes on in it. Every
// other use of the Store waits meanwhile (about a second for 100 MB). The old file's blocks go
// back to the file system as they are; overwriting them is the disk's business, not the file's.
// A Forgetting that finds nothing of the person to replace or delete (the KV entries it writes
// aside) leaves the file as it is. If the compaction fails, the changes are made all the same and
// Forget says so: calling it again compacts again.
func (s *Store) Forget(ctx context.Context, f store.Forgetting) error {
	if s.readOnly {
		return fmt.Errorf("storage: forget: %w", berrors.ErrDatabaseReadOnly)
	}
	if err := CheckKeys(f.Records, f.KV); err != nil {
		return err
	}
	var changed bool // something that named the person was replaced or deleted
	err := s.update(func(tx *bolt.Tx) error {
		changed = len(f.Records) > 0
		for _, r := range f.Records {
			if err := tx.Bucket(bucketRecords).Put([]byte(r.Key), r.Data); err != nil {
				return err
			}
		}
		closed := tx.Bucket(bucketClosed)
		for id, state := range f.Closed {
			v := closed.Get([]byte(id))
			if len(v) < 8 {
				continue // pruned meanwhile
			}
			changed = true
			if err := closed.Put([]byte(id), append(bytes.Clone(v[:8]), state...)); err != nil {
				return err
			}
		}
		renamed, err := renameActor(tx.Bucket(bucketLogs), f.Actor, f.As)
		if err != nil {
			return err
		}
		kv := tx.Bucket(bucketKV)
		for _, id := range f.Drop {
			if err := deleteTableKeys(kv, []byte(id)); err != nil {
				return err
			}
		}
		deleted, err := deletePersonKeys(kv, f)
		if err != nil {
			return err
		}
		for _, e := range f.KV {
			if b := kv.Bucket([]byte(e.Bucket)); e.Value == nil && b != nil && b.Get([]byte(e.Key)) != nil {
				deleted++
			}
		}
		changed = changed || renamed+deleted > 0 || len(f.Drop) > 0
		return rewriteKV(tx, f.Emptied, f.KV)
	}, nil)
	if err != nil {
		return fmt.Errorf("storage: forget: %w", err)
	}
	if !changed {
		return nil
	}
	if err := s.compact(); err != nil {
		return fmt.Errorf("storage: forget: the changes are made, but the file was not compacted: %w", err)
	}
	return nil
}

// renameActor rewrites every log entry by actor as by as, and counts them.
func renameActor(logs *bolt.Bucket, actor, as string) (int, error) {
	if actor == "" {
		return 0, nil
	}
	want := []byte(`"actor":` + string(mustJSON(actor)))
	n := 0
	err := logs.ForEachBucket(func(id []byte) error {
		log := logs.Bucket(id)
		changed := map[string][]byte{}
		err := log.ForEach(func(k, v []byte) error {
			if !bytes.Contains(v, want) {
				return nil
			}
			var e store.LogEntry
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("log of table %q: %w", id, ErrCorrupt)
			}
			if e.Actor != actor {
				return nil
			}
			e.Actor = as
			b, err := json.Marshal(e)
			changed[string(k)] = b
			return err
		})
		if err != nil {
			return err
		}
		for k, v := range changed { // bbolt's cursors do not survive a Put in the bucket they walk
			if err := log.Put([]byte(k), v); err != nil {
				return err
			}
		}
		n += len(changed)
		return nil
	})
	return n, err
}

func mustJSON(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}

// deletePersonKeys deletes, in every adapter bucket, the keys of f.Tables that name the person,
// and counts them.
func deletePersonKeys(kv *bolt.Bucket, f store.Forgetting) (int, error) {
	if len(f.Tables) == 0 {
		return 0, nil
	}
	var buckets [][]byte
	if err := kv.ForEachBucket(func(name []byte) error { buckets = append(buckets, bytes.Clone(name)); return nil }); err != nil {
		return 0, err
	}
	n := 0
	for _, name := range buckets {
		b := kv.Bucket(name)
		var doomed [][]byte
		for _, id := range f.Tables {
			prefix := []byte(id + "/")
			c := b.Cursor()
			for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
				if f.NamesPersonAt(id, string(k)) {
					doomed = append(doomed, bytes.Clone(k))
				}
			}
		}
		for _, k := range doomed {
			if err := b.Delete(k); err != nil {
				return n, err
			}
		}
		n += len(doomed)
	}
	return n, nil
}

// rewriteKV empties adapter buckets, then writes the entries.
func rewriteKV(tx *bolt.Tx, emptied []string, entries []store.KVEntry) error {
	kv := tx.Bucket(bucketKV)
	for _, b := range emptied {
		if err := kv.DeleteBucket([]byte(b)); err != nil && !errors.Is(err, berrors.ErrBucketNotFound) {
			return err
		}
	}
	for _, e := range entries {
		if err := kvWrite(tx, e.Bucket, e.Key, e.Value); err != nil {
			return err
		}
	}
	return nil
}

// compactPath is where compact writes the new file: beside the database, so the rename stays on
// one file system.
func compactPath(path string) string { return path + ".compact" }

// compact replaces the file with a compacted copy of its live data, with every other use of the
// Store waiting. The copy is opened (and so locked) before it is renamed over the file, so another
// process never finds the database unlocked; it is synced before, and the directory after.
func (s *Store) compact() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	tmp := compactPath(s.path)
	_ = os.Remove(tmp) // a crashed compaction's
	dst, err := openBolt(tmp, &bolt.Options{Timeout: time.Second, NoSync: true})
	if err != nil {
		return err
	}
	if err := copyLive(dst, s.db); err != nil {
		dst.Close()
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, s.path); err != nil {
		dst.Close()
		os.Remove(tmp)
		return err
	}
	syncDir(filepath.Dir(s.path))
	old := s.db
	s.db = dst
	if err := old.Close(); err != nil {
		return fmt.Errorf("closing the file it replaced: %w", err)
	}
	return nil
}

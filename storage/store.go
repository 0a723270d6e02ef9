package storage

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/kontermatt/kontermatt/core/store"
)

// chunk is how many entries Tables, Records and Log copy out of one read transaction before they
// call fn outside it.
const chunk = 256

// TableError is one table that Tables could not serve: fn refused its state. Tables joins them.
type TableError struct {
	ID  string
	Err error
}

func (e *TableError) Error() string { return fmt.Sprintf("storage: table %q: %v", e.ID, e.Err) }

// Unwrap gives fn's error.
func (e *TableError) Unwrap() error { return e.Err }

// Commit writes one change in one transaction: the table's new state, its log entry and the
// records (a nil record Data is stored as empty). A nil State deletes the table and its whole log
// (the change's log entry is then not written); the records are kept either way. A Closed change
// moves the table's state among the closed tables, stamped with the log entry's time, where
// Tables no longer lists it and Prune finds it. A Log with an empty Verb writes no log entry. A
// change with a log entry is guarded: its Seq must be one more than the table's last logged Seq (0
// for a table without a log), else it fails with store.ErrConflict and nothing of it is written.
// A PruneLog change deletes the table's log before its own entry (a finished match: its record is
// what is kept). The log entry is stored as JSON, so its strings must be valid UTF-8 (invalid bytes
// come back as U+FFFD). When Commit returns nil the change is on disk; changes committed at the
// same time share a transaction (queue.go).
func (s *Store) Commit(ctx context.Context, c store.Change) error {
	entry, err := prepare(c)
	if err != nil {
		return err
	}
	w := &write{
		check:  func(tx *bolt.Tx) error { return check(tx, c, entry) },
		apply:  func(tx *bolt.Tx) error { return apply(tx, c, entry) },
		change: changeOf(c, entry != nil),
	}
	if err := s.do(ctx, w); err != nil {
		return fmt.Errorf("storage: commit table %q: %w", c.TableID, err)
	}
	return nil
}

// changeOf is what a watch hears of a committed change.
func changeOf(c store.Change, logged bool) store.TableChange {
	tc := store.TableChange{TableID: c.TableID, State: c.State, Closed: c.Closed && c.State != nil}
	if logged {
		tc.Seq = c.Log.Seq
	}
	return tc
}

// check refuses, before anything is written, a change whose log entry is not the one after the
// table's last or whose Expect entries changed (store.ErrConflict) and a table whose stored form is broken (ErrCorrupt).
func check(tx *bolt.Tx, c store.Change, entry []byte) error {
	id := []byte(c.TableID)
	if v := tx.Bucket(bucketClosed).Get(id); v != nil && len(v) < 8 {
		return fmt.Errorf("closed table %q of %d bytes: %w", id, len(v), ErrCorrupt)
	}
	for _, e := range c.Expect {
		var cur []byte
		if b := tx.Bucket(bucketKV).Bucket([]byte(e.Bucket)); b != nil {
			cur = b.Get([]byte(e.Key))
		}
		if (cur == nil) != (e.Value == nil) || !bytes.Equal(cur, e.Value) {
			return fmt.Errorf("%w (kv %q/%q changed)", store.ErrConflict, e.Bucket, e.Key)
		}
	}
	if entry == nil {
		return nil
	}
	last, err := lastSeq(tx, id)
	if err != nil {
		return err
	}
	if c.Log.Seq != last+1 {
		return fmt.Errorf("%w (change %d after %d)", store.ErrConflict, c.Log.Seq, last)
	}
	return nil
}

// lastSeq is the Seq of a table's last log entry; 0 without a log.
func lastSeq(tx *bolt.Tx, id []byte) (uint64, error) {
	log := tx.Bucket(bucketLogs).Bucket(id)
	if log == nil {
		return 0, nil
	}
	last, _ := log.Cursor().Last()
	if last == nil {
		return 0, nil
	}
	if len(last) != 8 {
		return 0, fmt.Errorf("log key of %d bytes: %w", len(last), ErrCorrupt)
	}
	return binary.BigEndian.Uint64(last), nil
}

// prepare checks a change's keys and encodes its log entry (nil when none is to be written).
func prepare(c store.Change) ([]byte, error) {
	if err := CheckKey("table id", c.TableID); err != nil {
		return nil, err
	}
	if err := CheckKeys(c.Records, c.KV, c.Expect); err != nil {
		return nil, err
	}
	if c.State == nil || c.Log.Verb == "" {
		return nil, nil
	}
	entry, err := json.Marshal(c.Log)
	if err != nil {
		return nil, fmt.Errorf("storage: table %q: encode log entry %d: %w", c.TableID, c.Log.Seq, err)
	}
	return entry, nil
}

// apply writes a prepared change in tx, after check. It only reads and writes tx, so running it
// again in a fresh transaction (as the commit queue may) gives the same result.
func apply(tx *bolt.Tx, c store.Change, entry []byte) error {
	id := []byte(c.TableID)
	tables, logs, records := tx.Bucket(bucketTables), tx.Bucket(bucketLogs), tx.Bucket(bucketRecords)
	if err := unclose(tx, id); err != nil {
		return err
	}
	if c.State == nil {
		if err := tables.Delete(id); err != nil {
			return err
		}
		if err := logs.DeleteBucket(id); err != nil && !errors.Is(err, berrors.ErrBucketNotFound) {
			return err
		}
	} else {
		var err error
		if c.Closed {
			if err = tables.Delete(id); err == nil {
				err = closeTable(tx, id, c.State, c.Log.Time)
			}
		} else {
			err = tables.Put(id, c.State)
		}
		if err != nil {
			return err
		}
		if entry != nil {
			log, err := logs.CreateBucketIfNotExists(id)
			if err != nil {
				return err
			}
			if c.PruneLog {
				if err := logs.DeleteBucket(id); err != nil {
					return err
				}
				if log, err = logs.CreateBucket(id); err != nil {
					return err
				}
			}
			// Entries only ever come at the end: full pages, not bbolt's half-full splits.
			log.FillPercent = 1
			if err := log.Put(seqKey(c.Log.Seq), entry); err != nil {
				return err
			}
		}
	}
	for _, r := range c.Records {
		data := r.Data
		if data == nil {
			data = []byte{}
		}
		if err := records.Put([]byte(r.Key), data); err != nil {
			return fmt.Errorf("record %q: %w", r.Key, err)
		}
	}
	for _, e := range c.KV {
		if err := kvWrite(tx, e.Bucket, e.Key, e.Value); err != nil {
			return fmt.Errorf("kv %q/%q: %w", e.Bucket, e.Key, err)
		}
	}
	return nil
}

// Tables calls fn for every stored table in id order, outside any transaction (fn may Commit).
// If fn returns an error for a table (it cannot read the state), Tables records it as a
// *TableError and goes on with the next table, so one corrupt table does not keep the others from
// being served; it returns all of them joined. A storage failure stops the iteration. Tables
// committed while Tables runs may or may not be seen.
func (s *Store) Tables(ctx context.Context, fn func(id string, state []byte) error) error {
	var errs []error
	err := s.each(ctx, bucketTables, nil, func(k, v []byte) error {
		if err := fn(string(k), v); err != nil {
			errs = append(errs, &TableError{ID: string(k), Err: err})
		}
		return nil
	})
	if err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Table gives one table's last state, live or closed.
func (s *Store) Table(ctx context.Context, id string) ([]byte, bool, error) {
	if err := CheckKey("table id", id); err != nil {
		return nil, false, err
	}
	var val []byte
	err := s.view(func(tx *bolt.Tx) error {
		if v := tx.Bucket(bucketTables).Get([]byte(id)); v != nil {
			val = clone(v)
		} else if v := tx.Bucket(bucketClosed).Get([]byte(id)); v != nil {
			if len(v) < 8 {
				return fmt.Errorf("closed table of %d bytes: %w", len(v), ErrCorrupt)
			}
			val = clone(v[8:])
		}
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("storage: table %q: %w", id, err)
	}
	return val, val != nil, nil
}

// Revision is the revision of the last change committed since the Store was opened.
func (s *Store) Revision(ctx context.Context) (uint64, error) { return s.feed.Revision() }

// Watch tells of the table changes committed from revision from on, in commit order (see
// store.Watcher): in this process only, which is every writer a bbolt file has. It keeps the last
// mem.FeedKeep changes for a watch that starts in the past or falls behind.
func (s *Store) Watch(ctx context.Context, from uint64) <-chan store.TableChange {
	return s.feed.Watch(ctx, from)
}

// Records calls fn for every kept record in key order, outside any transaction. An error from fn
// stops the iteration and is returned.
func (s *Store) Records(ctx context.Context, fn func(key string, record []byte) error) error {
	return s.each(ctx, bucketRecords, nil, func(k, v []byte) error { return fn(string(k), v) })
}

// Record gives one kept record.
func (s *Store) Record(ctx context.Context, key string) ([]byte, bool, error) {
	var val []byte
	err := s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketRecords)
		if b == nil {
			return fmt.Errorf("bucket %s is missing: %w", bucketRecords, ErrCorrupt)
		}
		if v := b.Get([]byte(key)); v != nil {
			val = clone(v)
		}
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("storage: record %q: %w", key, err)
	}
	return val, val != nil, nil
}

// Log calls fn for every entry of a table's log in Seq order, outside any transaction. A table
// without a log has no entries. An error from fn stops the iteration and is returned; an entry
// that does not decode fails with ErrCorrupt.
func (s *Store) Log(ctx context.Context, tableID string, fn func(store.LogEntry) error) error {
	if err := CheckKey("table id", tableID); err != nil {
		return err
	}
	return s.each(ctx, bucketLogs, []byte(tableID), func(k, v []byte) error {
		if len(k) != 8 {
			return fmt.Errorf("storage: log of table %q: key of %d bytes: %w", tableID, len(k), ErrCorrupt)
		}
		seq := binary.BigEndian.Uint64(k)
		var e store.LogEntry
		if err := json.Unmarshal(v, &e); err != nil {
			// Not wrapped: a JSON error quotes the stored bytes.
			return fmt.Errorf("storage: log of table %q, entry %d: %w", tableID, seq, ErrCorrupt)
		}
		return fn(e)
	})
}

// each calls fn for every key and value of a top-level bucket, or of its nested bucket sub when
// sub is not nil (a missing nested bucket is empty). It copies up to chunk entries at a time out of
// a read transaction and calls fn outside it. Nested buckets inside the walked bucket are skipped.
// It stops with ctx's error when ctx ends between two chunks.
func (s *Store) each(ctx context.Context, top, sub []byte, fn func(k, v []byte) error) error {
	type kv struct{ k, v []byte }
	var after []byte // the last key handed out
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		batch := make([]kv, 0, chunk)
		err := s.view(func(tx *bolt.Tx) error { // guarded: a damaged page gives ErrDamaged
			b := tx.Bucket(top)
			if b == nil {
				return fmt.Errorf("bucket %s is missing: %w", top, ErrCorrupt)
			}
			if sub != nil {
				if b = b.Bucket(sub); b == nil {
					return nil
				}
			}
			c := b.Cursor()
			var k, v []byte
			if after == nil {
				k, v = c.First()
			} else if k, v = c.Seek(after); k != nil && bytes.Equal(k, after) {
				k, v = c.Next()
			}
			for ; k != nil && len(batch) < chunk; k, v = c.Next() {
				if v == nil {
					continue // a nested bucket
				}
				batch = append(batch, kv{clone(k), clone(v)})
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("storage: read %s: %w", top, err)
		}
		for _, e := range batch {
			if err := fn(e.k, e.v); err != nil {
				return err
			}
		}
		if len(batch) < chunk {
			return nil
		}
		after = batch[len(batch)-1].k
	}
}

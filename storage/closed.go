package storage

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/kontermatt/kontermatt/core/store"
)

// Closed tables wait in their own bucket until the retention period is over, so that start-up,
// which reads every live table, costs nothing for them:
//
//	closed     table id → big-endian uint64 unix ms it closed, then its last state
//	closed_at  big-endian uint64 unix ms, then table id → empty: the closed tables in time order

// closeTable files a table's last state among the closed ones.
func closeTable(tx *bolt.Tx, id, state []byte, at int64) error {
	val := binary.BigEndian.AppendUint64(make([]byte, 0, 8+len(state)), uint64(at))
	if err := tx.Bucket(bucketClosed).Put(id, append(val, state...)); err != nil {
		return err
	}
	return tx.Bucket(bucketClosedAt).Put(closedAtKey(at, id), []byte{})
}

func closedAtKey(at int64, id []byte) []byte {
	return append(binary.BigEndian.AppendUint64(make([]byte, 0, 8+len(id)), uint64(at)), id...)
}

// unclose takes a table out of the closed ones, if it is there (a table written again).
func unclose(tx *bolt.Tx, id []byte) error {
	closed := tx.Bucket(bucketClosed)
	v := closed.Get(id)
	if v == nil {
		return nil
	}
	if len(v) < 8 {
		return fmt.Errorf("closed table %q of %d bytes: %w", id, len(v), ErrCorrupt)
	}
	if err := tx.Bucket(bucketClosedAt).Delete(closedAtKey(int64(binary.BigEndian.Uint64(v)), id)); err != nil {
		return err
	}
	return closed.Delete(id)
}

// Rewrite writes kept records again, empties the given adapter buckets and writes the entries, in
// one transaction: making anew what is derived from the records.
func (s *Store) Rewrite(ctx context.Context, records []store.Record, emptied []string, entries []store.KVEntry) error {
	if err := CheckKeys(records, entries); err != nil {
		return err
	}
	err := s.update(func(tx *bolt.Tx) error {
		for _, r := range records {
			if err := tx.Bucket(bucketRecords).Put([]byte(r.Key), r.Data); err != nil {
				return err
			}
		}
		return rewriteKV(tx, emptied, entries)
	}, nil)
	if err != nil {
		return fmt.Errorf("storage: rewrite: %w", err)
	}
	return nil
}

// pruneBatch is how many tables one Prune transaction deletes: a few milliseconds of work, so
// commits of live tables are not held up for long.
const pruneBatch = 128

// Prune deletes the tables closed before the given time: their last state, their command log and
// every KV entry of theirs (a key that is the table ID or begins with it and "/", in any bucket).
// Match records stay. It works in small transactions and gives how many tables it deleted.
func (s *Store) Prune(ctx context.Context, before time.Time) (int, error) {
	limit := uint64(before.UnixMilli())
	total := 0
	for {
		var pruned []store.TableChange
		err := s.update(func(tx *bolt.Tx) error {
			pruned = pruned[:0]
			index := tx.Bucket(bucketClosedAt)
			c := index.Cursor()
			var ids [][]byte
			for k, _ := c.First(); k != nil && len(ids) < pruneBatch; k, _ = c.Next() {
				if len(k) < 8 {
					return fmt.Errorf("closed_at key of %d bytes: %w", len(k), ErrCorrupt)
				}
				if binary.BigEndian.Uint64(k) >= limit {
					break
				}
				ids = append(ids, bytes.Clone(k))
			}
			for _, k := range ids {
				id := k[8:]
				if err := index.Delete(k); err != nil {
					return err
				}
				if err := tx.Bucket(bucketClosed).Delete(id); err != nil {
					return err
				}
				if err := tx.Bucket(bucketLogs).DeleteBucket(id); err != nil && !errors.Is(err, berrors.ErrBucketNotFound) {
					return err
				}
				if err := deleteTableKeys(tx.Bucket(bucketKV), id); err != nil {
					return err
				}
				pruned = append(pruned, store.TableChange{TableID: string(id)})
			}
			return nil
		}, func() []store.TableChange { return pruned })
		if err != nil {
			return total, fmt.Errorf("storage: prune: %w", err)
		}
		total += len(pruned)
		if len(pruned) < pruneBatch {
			return total, nil
		}
	}
}

// deleteTableKeys deletes a table's keys from every adapter bucket under kv.
func deleteTableKeys(kv *bolt.Bucket, id []byte) error {
	var buckets [][]byte
	if err := kv.ForEachBucket(func(name []byte) error { buckets = append(buckets, bytes.Clone(name)); return nil }); err != nil {
		return err
	}
	scoped := append(bytes.Clone(id), '/')
	for _, name := range buckets {
		b := kv.Bucket(name)
		var doomed [][]byte
		c := b.Cursor()
		for k, _ := c.Seek(id); k != nil && bytes.HasPrefix(k, id); k, _ = c.Next() {
			if bytes.Equal(k, id) || bytes.HasPrefix(k, scoped) {
				doomed = append(doomed, bytes.Clone(k))
			}
		}
		for _, k := range doomed {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
	}
	return nil
}

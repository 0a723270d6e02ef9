package etcdstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kontermatt/kontermatt/core/store"
	"github.com/kontermatt/kontermatt/storage"
)

// Commit writes the change in one transaction, as the bbolt store's Commit does (same rules: a
// nil State deletes the table and its log, Closed files it among the closed tables, PruneLog
// drops the log before its entry, no Verb writes no log entry). A change with a log entry is
// guarded: its If compares the table's sequence key with Log.Seq-1 (for Seq 1: the key must not
// exist), and its Expect entries each compare their key's value (or, for a nil Value, that the
// key does not exist); it fails with store.ErrConflict, writing nothing, when another commit came
// first. A change with a Fence compares that its lease's key still has the creation revision
// fenced, and fails with store.ErrFenced when it has not (the lease ran out: another copy may own
// the table's place). A change larger than a transaction fails with ErrTooLarge; a cluster
// without quorum with store.ErrUnavailable (see there for what a timed-out commit may still do).
func (s *Store) Commit(ctx context.Context, c store.Change) error {
	if err := storage.CheckKey("table id", c.TableID); err != nil {
		return err
	}
	if err := storage.CheckKeys(c.Records, c.KV, c.Expect); err != nil {
		return err
	}
	logged := c.State != nil && c.Log.Verb != ""
	var entry []byte
	if logged {
		if c.Log.Seq == 0 {
			return fmt.Errorf("etcdstore: commit table %q: %w (change 0)", c.TableID, store.ErrConflict)
		}
		var err error
		if entry, err = json.Marshal(c.Log); err != nil {
			return fmt.Errorf("etcdstore: table %q: encode log entry %d: %w", c.TableID, c.Log.Seq, err)
		}
	}
	// First as if the table is not closed (it never is when the service writes it); if it is,
	// again with what takes it out of the closed ones.
	b := s.commitBatch(c, entry, nil)
	b.guard(clientv3.Compare(clientv3.CreateRevision(s.closedKey(c.TableID)), "=", 0), len(s.closedKey(c.TableID)))
	for attempt := 0; ; attempt++ {
		if err := s.fitsOne(b); err != nil {
			return fmt.Errorf("etcdstore: commit table %q: %w", c.TableID, err)
		}
		els := []clientv3.Op{clientv3.OpGet(s.seqKey(c.TableID)), clientv3.OpGet(s.closedKey(c.TableID))}
		if logged {
			els = append(els, clientv3.OpGet(s.logKey(c.TableID, c.Log.Seq)))
		}
		fence := len(els)
		if c.Fence.Key != "" {
			els = append(els, clientv3.OpGet(c.Fence.Key))
		}
		resp, again, err := s.txn(ctx, b.cmps, b.ops, els)
		if err != nil {
			return fmt.Errorf("etcdstore: commit table %q: %w", c.TableID, err)
		}
		if resp.Succeeded {
			return nil
		}
		seqKVs := resp.Responses[0].GetResponseRange().Kvs
		var last uint64
		if len(seqKVs) > 0 {
			last, _ = strconv.ParseUint(string(seqKVs[0].Value), 10, 64)
		}
		if logged && again && last == c.Log.Seq {
			// An attempt whose answer was lost (its member died under it) was applied: the
			// entry at this Seq is this change's own, byte for byte.
			if kvs := resp.Responses[2].GetResponseRange().Kvs; len(kvs) > 0 && bytes.Equal(kvs[0].Value, entry) {
				return nil
			}
		}
		if c.Fence.Key != "" {
			if kvs := resp.Responses[fence].GetResponseRange().Kvs; len(kvs) == 0 || kvs[0].CreateRevision != c.Fence.Rev {
				return fmt.Errorf("etcdstore: commit table %q: %w (lease %s)", c.TableID, store.ErrFenced, c.Fence.Key)
			}
		}
		if logged && c.Log.Seq != last+1 {
			return fmt.Errorf("etcdstore: commit table %q: %w (change %d after %d)", c.TableID, store.ErrConflict, c.Log.Seq, last)
		}
		closed := resp.Responses[1].GetResponseRange().Kvs
		if attempt > 2 || len(closed) == 0 {
			// Neither stale nor closed, yet refused: changed between the two readings, again
			// and again.
			return fmt.Errorf("etcdstore: commit table %q: %w", c.TableID, store.ErrConflict)
		}
		if len(closed[0].Value) < 8 {
			return fmt.Errorf("etcdstore: closed table %q of %d bytes: %w", c.TableID, len(closed[0].Value), storage.ErrCorrupt)
		}
		at := int64(binary.BigEndian.Uint64(closed[0].Value))
		b = s.commitBatch(c, entry, &at)
		b.guard(clientv3.Compare(clientv3.ModRevision(s.closedKey(c.TableID)), "=", closed[0].ModRevision), len(s.closedKey(c.TableID)))
	}
}

// fitsOne refuses a transaction over the cluster's limits.
func (s *Store) fitsOne(b *batch) error {
	var empty batch
	if !s.fits(&empty, b) {
		return fmt.Errorf("%w: %d operations, about %d bytes (the cluster takes %d and %d)", ErrTooLarge, len(b.ops), b.size, s.maxOps, s.maxBytes)
	}
	return nil
}

// commitBatch is the transaction of a change: its guard and its operations. closedAt is when the
// table closed, if it is among the closed ones now.
func (s *Store) commitBatch(c store.Change, entry []byte, closedAt *int64) *batch {
	id := c.TableID
	b := &batch{}
	if entry != nil {
		seq := s.seqKey(id)
		if c.Log.Seq == 1 {
			b.guard(clientv3.Compare(clientv3.CreateRevision(seq), "=", 0), len(seq))
		} else {
			prev := strconv.FormatUint(c.Log.Seq-1, 10)
			b.guard(clientv3.Compare(clientv3.Value(seq), "=", prev), len(seq)+len(prev))
		}
	}
	if c.Fence.Key != "" {
		// The owner's lease, as it was when the copy won it (see Leases.Fence).
		b.guard(clientv3.Compare(clientv3.CreateRevision(c.Fence.Key), "=", c.Fence.Rev), len(c.Fence.Key))
	}
	for _, e := range c.Expect {
		// As Swap compares: a missing key by its creation, a value by its bytes.
		k := s.kvKey(e.Bucket, e.Key)
		if e.Value == nil {
			b.guard(clientv3.Compare(clientv3.CreateRevision(k), "=", 0), len(k))
		} else {
			b.guard(clientv3.Compare(clientv3.Value(k), "=", string(e.Value)), len(k)+len(e.Value))
		}
	}
	if c.State == nil {
		b.del(s.liveKey(id))
		b.del(s.closedKey(id))
		b.del(s.seqKey(id))
		b.delPrefix(s.logPrefix(id))
		if closedAt != nil {
			b.del(s.closedAtKey(*closedAt, id))
		}
	} else {
		reclosed := closedAt != nil && c.Closed && *closedAt == c.Log.Time
		if closedAt != nil && !reclosed {
			b.del(s.closedAtKey(*closedAt, id))
		}
		if c.Closed {
			b.del(s.liveKey(id))
			b.put(s.closedKey(id), closedValue(c.Log.Time, c.State))
			if !reclosed {
				b.put(s.closedAtKey(c.Log.Time, id), nil)
			}
		} else {
			b.put(s.liveKey(id), c.State)
			if closedAt != nil {
				b.del(s.closedKey(id))
			}
		}
		if entry != nil {
			key := s.logKey(id, c.Log.Seq)
			if c.PruneLog {
				b.delRange(s.logPrefix(id), key) // the entries before this one
			}
			b.put(key, entry)
			b.put(s.seqKey(id), []byte(strconv.FormatUint(c.Log.Seq, 10)))
		}
	}
	for _, r := range c.Records {
		b.put(s.recordKey(r.Key), r.Data)
	}
	// The last write of a key wins, as in bbolt; etcd takes each key once per transaction.
	last := map[string]int{}
	for i, e := range c.KV {
		last[e.Bucket+"\x00"+e.Key] = i
	}
	for i, e := range c.KV {
		if last[e.Bucket+"\x00"+e.Key] != i {
			continue
		}
		if e.Value == nil {
			b.del(s.kvKey(e.Bucket, e.Key))
		} else {
			b.put(s.kvKey(e.Bucket, e.Key), e.Value)
		}
	}
	return b
}

func closedValue(at int64, state []byte) []byte {
	return append(binary.BigEndian.AppendUint64(make([]byte, 0, 8+len(state)), uint64(at)), state...)
}

// Table gives one table's last state, live or closed, from one reading.
func (s *Store) Table(ctx context.Context, id string) ([]byte, bool, error) {
	if err := storage.CheckKey("table id", id); err != nil {
		return nil, false, err
	}
	resp, _, err := s.txn(ctx, nil, []clientv3.Op{clientv3.OpGet(s.liveKey(id)), clientv3.OpGet(s.closedKey(id))}, nil)
	if err != nil {
		return nil, false, fmt.Errorf("etcdstore: table %q: %w", id, err)
	}
	if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 {
		return stored(kvs[0]), true, nil
	}
	if kvs := resp.Responses[1].GetResponseRange().Kvs; len(kvs) > 0 {
		if len(kvs[0].Value) < 8 {
			return nil, false, fmt.Errorf("etcdstore: closed table %q of %d bytes: %w", id, len(kvs[0].Value), storage.ErrCorrupt)
		}
		return kvs[0].Value[8:], true, nil
	}
	return nil, false, nil
}

// stored is a stored value, empty rather than nil (etcd sends an empty value as none).
func stored(kv *mvccpb.KeyValue) []byte {
	if kv.Value == nil {
		return []byte{}
	}
	return kv.Value
}

// Tables calls fn for every live table in ID order, as of one revision, going on past tables fn
// cannot read (their errors joined, each a *storage.TableError).
func (s *Store) Tables(ctx context.Context, fn func(id string, state []byte) error) error {
	prefix := s.liveKey("")
	var errs []error
	_, err := s.scanPrefix(ctx, prefix, false, func(kv *mvccpb.KeyValue) error {
		id := string(kv.Key[len(prefix):])
		if err := fn(id, stored(kv)); err != nil {
			errs = append(errs, &storage.TableError{ID: id, Err: err})
		}
		return nil
	})
	if err != nil {
		errs = append(errs, fmt.Errorf("etcdstore: read tables: %w", err))
	}
	return errors.Join(errs...)
}

// ClosedTables calls fn for every closed table not yet pruned, in ID order.
func (s *Store) ClosedTables(ctx context.Context, fn func(id string, state []byte) error) error {
	prefix := s.closedKey("")
	_, err := s.scanPrefix(ctx, prefix, false, func(kv *mvccpb.KeyValue) error {
		if len(kv.Value) < 8 {
			s.skipMalformed(kv.Key, "a closed table: 8 bytes of its closing time, then its state")
			return nil
		}
		return fn(string(kv.Key[len(prefix):]), kv.Value[8:])
	})
	return err
}

// Records calls fn for every kept record in key order; an error from fn stops it.
func (s *Store) Records(ctx context.Context, fn func(key string, record []byte) error) error {
	prefix := s.recordKey("")
	_, err := s.scanPrefix(ctx, prefix, false, func(kv *mvccpb.KeyValue) error {
		return fn(string(kv.Key[len(prefix):]), stored(kv))
	})
	return err
}

// Record gives one kept record.
func (s *Store) Record(ctx context.Context, key string) ([]byte, bool, error) {
	resp, err := s.get(ctx, s.recordKey(key))
	if err != nil {
		return nil, false, fmt.Errorf("etcdstore: record %q: %w", key, err)
	}
	if len(resp.Kvs) == 0 {
		return nil, false, nil
	}
	return stored(resp.Kvs[0]), true, nil
}

// Log calls fn for every entry of a table's log in Seq order.
func (s *Store) Log(ctx context.Context, tableID string, fn func(store.LogEntry) error) error {
	if err := storage.CheckKey("table id", tableID); err != nil {
		return err
	}
	_, err := s.scanPrefix(ctx, s.logPrefix(tableID), false, func(kv *mvccpb.KeyValue) error {
		var e store.LogEntry
		if err := json.Unmarshal(kv.Value, &e); err != nil {
			return fmt.Errorf("etcdstore: log of table %q: %w", tableID, storage.ErrCorrupt)
		}
		return fn(e)
	})
	return err
}

package etcdstore

import (
	"context"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kontermatt/kontermatt/core/store"
	"github.com/kontermatt/kontermatt/storage"
)

// Revision is the cluster's revision now.
func (s *Store) Revision(ctx context.Context) (uint64, error) {
	resp, err := s.get(ctx, s.p+"schema", clientv3.WithKeysOnly())
	if err != nil {
		return 0, fmt.Errorf("etcdstore: revision: %w", err)
	}
	return uint64(resp.Header.Revision), nil
}

// Watch tells of every table change from revision from on (0: from now), by any copy, with an
// etcd watch of the tables' keys: a commit's keys change in one revision, and come together. A
// watch whose revision was compacted ends with store.ErrCompacted; one whose member lost its
// leader, or that the cluster cancelled, with store.ErrUnavailable.
func (s *Store) Watch(ctx context.Context, from uint64) <-chan store.TableChange {
	out := make(chan store.TableChange, 16)
	opts := []clientv3.OpOption{clientv3.WithPrefix()}
	if from > 0 {
		opts = append(opts, clientv3.WithRev(int64(from)))
	}
	ctx, cancel := context.WithCancel(ctx)
	w := s.cli.Watch(clientv3.WithRequireLeader(ctx), s.p+"tables/", opts...)
	go func() {
		defer close(out)
		defer cancel()
		send := func(c store.TableChange) bool {
			select {
			case out <- c:
				return true
			case <-ctx.Done():
				return false
			}
		}
		for resp := range w {
			if err := resp.Err(); err != nil {
				if ctx.Err() == nil {
					if resp.CompactRevision > 0 {
						err = fmt.Errorf("%w (compacted up to %d)", store.ErrCompacted, resp.CompactRevision)
					} else {
						err = fmt.Errorf("%w: the watch ended: %w", store.ErrUnavailable, err)
					}
					send(store.TableChange{Err: err})
				}
				return
			}
			for _, c := range s.changes(resp.Events) {
				if !send(c) {
					return
				}
			}
		}
		if ctx.Err() == nil {
			send(store.TableChange{Err: fmt.Errorf("%w: the watch ended", store.ErrUnavailable)})
		}
	}()
	return out
}

// changes folds the events of a response into one change per table and revision, in order.
func (s *Store) changes(events []*clientv3.Event) []store.TableChange {
	var out []store.TableChange
	index := map[string]int{} // "<rev>/<id>" → its change in out
	live, closed, seq := s.liveKey(""), s.closedKey(""), s.seqKey("")
	for _, ev := range events {
		key := string(ev.Kv.Key)
		var id string
		var kind string
		switch {
		case strings.HasPrefix(key, live):
			id, kind = key[len(live):], "live"
		case strings.HasPrefix(key, closed):
			id, kind = key[len(closed):], "closed"
		case strings.HasPrefix(key, seq):
			id, kind = key[len(seq):], "seq"
		default:
			continue
		}
		rev := ev.Kv.ModRevision
		k := strconv.FormatInt(rev, 10) + "/" + id
		i, ok := index[k]
		if !ok {
			i = len(out)
			index[k] = i
			out = append(out, store.TableChange{Rev: uint64(rev), TableID: id})
		}
		c := &out[i]
		put := ev.Type == mvccpb.PUT
		switch {
		case kind == "seq" && put:
			c.Seq, _ = strconv.ParseUint(string(ev.Kv.Value), 10, 64)
		case kind == "live" && put:
			c.State, c.Closed = stored(ev.Kv), false
		case kind == "closed" && put && len(ev.Kv.Value) >= 8:
			c.State, c.Closed = ev.Kv.Value[8:], true
		}
	}
	return out
}

// Dump gives everything under the prefix as of one revision, a page at a time: a consistent
// snapshot, whatever copies write meanwhile (a revision compacted while it reads fails with
// store.ErrCompacted; try again).
func (s *Store) Dump(ctx context.Context, fn func(storage.Item) error) error {
	p := s.p
	_, err := s.scanPrefix(ctx, p, false, func(kv *mvccpb.KeyValue) error {
		key := string(kv.Key[len(p):])
		section, rest, _ := strings.Cut(key, "/")
		switch section {
		case "tables":
			kind, id, _ := strings.Cut(rest, "/")
			switch kind {
			case "live":
				return fn(storage.Item{Kind: storage.ItemTable, Key: id, Value: stored(kv)})
			case "closed":
				if len(kv.Value) < 8 {
					return fmt.Errorf("closed table %q: %w", id, storage.ErrCorrupt)
				}
				return fn(storage.Item{Kind: storage.ItemClosed, Key: id, At: int64(binary.BigEndian.Uint64(kv.Value)), Value: kv.Value[8:]})
			}
			return nil // seq: derived from the logs by a Load
		case "logs":
			id, hex, ok := strings.Cut(rest, "\x00")
			seq, err := strconv.ParseUint(hex, 16, 64)
			if !ok || err != nil {
				return fmt.Errorf("log key %q: %w", kv.Key, storage.ErrCorrupt)
			}
			return fn(storage.Item{Kind: storage.ItemLog, Key: id, Seq: seq, Value: stored(kv)})
		case "records":
			return fn(storage.Item{Kind: storage.ItemRecord, Key: rest, Value: stored(kv)})
		case "kv":
			bucket, k, ok := strings.Cut(rest, "\x00")
			if !ok {
				return fmt.Errorf("kv key %q: %w", kv.Key, storage.ErrCorrupt)
			}
			return fn(storage.Item{Kind: storage.ItemKV, Bucket: bucket, Key: k, Value: stored(kv)})
		}
		return nil // schema, closed_at: derived
	})
	if err != nil {
		return fmt.Errorf("etcdstore: dump: %w", err)
	}
	return nil
}

// Load writes what from dumps under the prefix, which must hold nothing but the layout version
// (storage.ErrNotEmpty otherwise), in transactions that fit the limits; each table's sequence key
// comes from its last log entry, as the bbolt store reads it. It gives how many items it wrote.
func (s *Store) Load(ctx context.Context, from storage.Dumper) (int, error) {
	resp, err := s.get(ctx, s.p, clientv3.WithPrefix(), clientv3.WithKeysOnly(), clientv3.WithLimit(3))
	if err != nil {
		return 0, fmt.Errorf("etcdstore: load: %w", err)
	}
	for _, kv := range resp.Kvs {
		if k := string(kv.Key); k != s.p+"schema" && k != s.p+"compacted" { // Compact's marker holds no data
			return 0, fmt.Errorf("etcdstore: load under %q: %w", s.p, storage.ErrNotEmpty)
		}
	}
	n := 0
	var units []*batch
	size := 0
	last := map[string]uint64{}
	flush := func() error {
		err := s.run(ctx, units)
		units, size = units[:0], 0
		return err
	}
	add := func(b *batch) error {
		units = append(units, b)
		if size += b.size; size >= 8<<20 {
			return flush()
		}
		return nil
	}
	err = from.Dump(ctx, func(it storage.Item) error {
		n++
		b := &batch{}
		switch it.Kind {
		case storage.ItemTable:
			b.put(s.liveKey(it.Key), it.Value)
		case storage.ItemClosed:
			b.put(s.closedKey(it.Key), closedValue(it.At, it.Value))
			b.put(s.closedAtKey(it.At, it.Key), nil)
		case storage.ItemLog:
			b.put(s.logKey(it.Key, it.Seq), it.Value)
			last[it.Key] = max(last[it.Key], it.Seq)
		case storage.ItemRecord:
			b.put(s.recordKey(it.Key), it.Value)
		case storage.ItemKV:
			b.put(s.kvKey(it.Bucket, it.Key), it.Value)
		}
		return add(b)
	})
	if err == nil {
		for id, seq := range last {
			b := &batch{}
			b.put(s.seqKey(id), []byte(strconv.FormatUint(seq, 10)))
			if err = add(b); err != nil {
				break
			}
		}
	}
	if err == nil {
		err = flush()
	}
	if err != nil {
		return n, fmt.Errorf("etcdstore: load: %w", err)
	}
	return n, nil
}

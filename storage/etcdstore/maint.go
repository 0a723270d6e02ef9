package etcdstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kontermatt/kontermatt/core/store"
	"github.com/kontermatt/kontermatt/storage"
)

// Prune deletes the tables closed before the given time: their last state, their sequence key,
// their log and their KV entries (the table ID, or the ID and "/" and more, in every bucket).
// Each table goes in one transaction with others, guarded by its closed state being unchanged
// since it was listed; its KV entries go first, in the same transaction or, if they are more than
// one holds, before it. It gives how many tables it deleted.
func (s *Store) Prune(ctx context.Context, before time.Time) (int, error) {
	total := 0
	for range 10 { // a table written again while being pruned: list once more
		type doomed struct {
			id string
			at int64
		}
		var tables []doomed
		root := s.p + "closed_at/"
		rev, err := s.scan(ctx, root, root+fmt.Sprintf("%016x", uint64(before.UnixMilli())), true, func(kv *mvccpb.KeyValue) error {
			rest := string(kv.Key[len(root):])
			hex, id, ok := strings.Cut(rest, "/")
			at, err := strconv.ParseUint(hex, 16, 64)
			if !ok || err != nil {
				s.skipMalformed(kv.Key, "closed_at/<16 hex digits>/<table>")
				return nil
			}
			tables = append(tables, doomed{id, int64(at)})
			return nil
		})
		if err != nil {
			return total, fmt.Errorf("etcdstore: prune: %w", err)
		}
		if len(tables) == 0 {
			return total, nil
		}
		buckets, err := s.buckets(ctx)
		if err != nil {
			return total, fmt.Errorf("etcdstore: prune: %w", err)
		}
		var units []*batch
		for _, t := range tables {
			b := &batch{}
			for _, bucket := range buckets {
				b.del(s.kvKey(bucket, t.id))
				b.delPrefix(s.kvKey(bucket, t.id+"/"))
			}
			b.delPrefix(s.logPrefix(t.id))
			b.del(s.seqKey(t.id))
			b.del(s.closedAtKey(t.at, t.id))
			b.del(s.closedKey(t.id))
			closed := s.closedKey(t.id)
			b.guard(clientv3.Compare(clientv3.Version(closed), ">", 0), len(closed))
			b.guard(clientv3.Compare(clientv3.ModRevision(closed), "<", rev+1), len(closed))
			units = append(units, b)
		}
		err = s.run(ctx, units)
		switch {
		case err == nil:
			return total + len(tables), nil
		case !errors.Is(err, errGuard):
			return total, fmt.Errorf("etcdstore: prune: %w", err)
		}
		// Some went before their table changed: count what is gone, list again.
		for _, t := range tables {
			if _, ok, err := s.Table(ctx, t.id); err == nil && !ok {
				total++
			}
		}
	}
	return total, fmt.Errorf("etcdstore: prune: the closed tables kept changing: %w", store.ErrConflict)
}

// Rewrite writes records again and makes each emptied bucket hold exactly the entries given for
// it: a key not among them is deleted, the others written, so no reader ever finds a bucket empty
// that is only being made anew. Split into transactions as the limits want (see the package).
func (s *Store) Rewrite(ctx context.Context, records []store.Record, emptied []string, entries []store.KVEntry) error {
	if err := storage.CheckKeys(records, entries); err != nil {
		return err
	}
	units, err := s.rewriteUnits(ctx, records, emptied, entries)
	if err == nil {
		err = s.run(ctx, units)
	}
	if err != nil {
		return fmt.Errorf("etcdstore: rewrite: %w", err)
	}
	return nil
}

// rewriteUnits are Rewrite's operations, one unit each.
func (s *Store) rewriteUnits(ctx context.Context, records []store.Record, emptied []string, entries []store.KVEntry) ([]*batch, error) {
	var units []*batch
	for _, r := range records {
		b := &batch{}
		b.put(s.recordKey(r.Key), r.Data)
		units = append(units, b)
	}
	written := map[string]bool{}
	for _, e := range entries {
		written[s.kvKey(e.Bucket, e.Key)] = e.Value != nil
	}
	for _, bucket := range emptied {
		_, err := s.scanPrefix(ctx, s.bucketPrefix(bucket), true, func(kv *mvccpb.KeyValue) error {
			if _, ok := written[string(kv.Key)]; !ok {
				b := &batch{}
				b.del(string(kv.Key))
				units = append(units, b)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	seen := map[string]bool{}
	for i := len(entries) - 1; i >= 0; i-- { // the last write of a key wins
		e := entries[i]
		k := s.kvKey(e.Bucket, e.Key)
		if seen[k] {
			continue
		}
		seen[k] = true
		b := &batch{}
		if e.Value == nil {
			b.del(k)
		} else {
			b.put(k, e.Value)
		}
		units = append(units, b)
	}
	return units, nil
}

// Forget makes the changes that forget a person (see store.Forgetting), in transactions that fit
// the cluster's limits; calling it again completes one cut short. Then, every time (a call cut
// short after its changes found nothing to change the next time, and compacted nothing), it leaves no copy readable in the cluster's keyspace or its members' database
// files: it compacts etcd's history to the current revision (every older version of every key
// goes, for every client: a watch behind it ends with store.ErrCompacted) and defragments each
// member, which writes its bbolt file anew with the live keys alone. The members' write-ahead logs
// (member/wal) still hold the requests themselves until etcd cuts them after its next snapshots
// (--snapshot-count, --max-wals): that part is the etcd host's to bound (docs/hosting.md). A user
// without etcd's root role may not compact: Forget then fails with a *store.ForgetPending, whose
// By is when the cluster's own compaction has removed the older versions (Options.History).
func (s *Store) Forget(ctx context.Context, f store.Forgetting) error {
	if err := storage.CheckKeys(f.Records, f.KV); err != nil {
		return err
	}
	units, changed, err := s.forgetUnits(ctx, f)
	if err == nil {
		err = s.run(ctx, units)
	}
	if err != nil {
		return fmt.Errorf("etcdstore: forget: %w", err)
	}
	_ = changed // compacted even so: an earlier call may have made the changes and not compacted
	err = s.Compact(ctx)
	if err != nil && noRights(err) {
		// The changes are made; the older versions go with the cluster's own compaction, which
		// keeps no revision past two windows (TrimHistory's check, docs/cluster.md).
		return &store.ForgetPending{By: time.Now().Add(2 * s.history), Cause: err}
	}
	if err != nil {
		return fmt.Errorf("etcdstore: forget: the changes are made, but the cluster was not compacted: %w", err)
	}
	return nil
}

// forgetUnits are Forget's operations, and whether any replaces or deletes something that named
// the person.
func (s *Store) forgetUnits(ctx context.Context, f store.Forgetting) ([]*batch, bool, error) {
	var units []*batch
	changed := len(f.Records) > 0 || len(f.Drop) > 0
	for _, r := range f.Records {
		b := &batch{}
		b.put(s.recordKey(r.Key), r.Data)
		units = append(units, b)
	}
	for id, state := range f.Closed {
		resp, err := s.get(ctx, s.closedKey(id))
		if err != nil {
			return nil, false, err
		}
		if len(resp.Kvs) == 0 || len(resp.Kvs[0].Value) < 8 {
			continue // pruned meanwhile
		}
		changed = true
		b := &batch{}
		b.put(s.closedKey(id), closedValue(int64(binary.BigEndian.Uint64(resp.Kvs[0].Value)), state))
		units = append(units, b)
	}
	if f.Actor != "" {
		want := []byte(`"actor":` + string(mustJSON(f.Actor)))
		_, err := s.scanPrefix(ctx, s.p+"logs/", false, func(kv *mvccpb.KeyValue) error {
			if !bytes.Contains(kv.Value, want) {
				return nil
			}
			var e store.LogEntry
			if err := json.Unmarshal(kv.Value, &e); err != nil {
				s.skipMalformed(kv.Key, "a log entry in JSON")
				return nil
			}
			if e.Actor != f.Actor {
				return nil
			}
			e.Actor = f.As
			v, err := json.Marshal(e)
			if err != nil {
				return err
			}
			changed = true
			b := &batch{}
			b.put(string(kv.Key), v)
			units = append(units, b)
			return nil
		})
		if err != nil {
			return nil, false, err
		}
	}
	buckets, err := s.buckets(ctx)
	if err != nil {
		return nil, false, err
	}
	for _, bucket := range buckets {
		for _, id := range f.Drop {
			b := &batch{}
			b.del(s.kvKey(bucket, id))
			b.delPrefix(s.kvKey(bucket, id+"/"))
			units = append(units, b)
		}
		for _, id := range f.Tables {
			_, err := s.scanPrefix(ctx, s.kvKey(bucket, id+"/"), true, func(kv *mvccpb.KeyValue) error {
				if f.NamesPersonAt(id, string(kv.Key[len(s.bucketPrefix(bucket)):])) {
					changed = true
					b := &batch{}
					b.del(string(kv.Key))
					units = append(units, b)
				}
				return nil
			})
			if err != nil {
				return nil, false, err
			}
		}
	}
	for _, e := range f.KV {
		if e.Value == nil {
			if _, ok, err := s.Get(ctx, e.Bucket, e.Key); err != nil {
				return nil, false, err
			} else if ok {
				changed = true
			}
		}
	}
	kv, err := s.rewriteUnits(ctx, nil, f.Emptied, f.KV)
	if err != nil {
		return nil, false, err
	}
	return append(units, kv...), changed, nil
}

func mustJSON(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}

// Compact drops etcd's history up to the current revision and defragments every member, so what
// was replaced or deleted is in no member's database file any more (see Forget). A compaction is
// applied by each member on its own, in the background, and only the member that serves the
// request waits for it ("physical"): so each member in turn gets a compaction of its own, at a
// revision moved on by a marker write, through a client that reaches that member alone, and is
// defragmented once its own compaction is done (compactions run in order, so the forget's is
// done too). A member that is down is skipped and said in the error.
func (s *Store) Compact(ctx context.Context) error {
	var members *clientv3.MemberListResponse
	err := s.call(ctx, func(ctx context.Context, _ bool) error {
		var err error
		members, err = s.cli.MemberList(ctx)
		return err
	})
	if err != nil {
		return fmt.Errorf("list the members: %w", err)
	}
	var errs []error
	for _, m := range members.Members {
		if len(m.ClientURLs) == 0 {
			continue // a learner not started yet
		}
		if err := s.compactMember(ctx, m.ClientURLs[0]); err != nil {
			errs = append(errs, fmt.Errorf("compact member %s (%s): %w", m.Name, m.ClientURLs[0], err))
		}
	}
	return errors.Join(errs...)
}

// compactMember compacts the history to a fresh revision through the member at url alone, waits
// until that member has applied it physically, then defragments it.
func (s *Store) compactMember(ctx context.Context, url string) error {
	conf := s.conf
	conf.Endpoints = []string{url}
	cli, err := clientv3.New(conf)
	if err != nil {
		return s.classify(err)
	}
	defer cli.Close()
	var rev int64
	err = s.call(ctx, func(ctx context.Context, _ bool) error {
		resp, err := cli.Put(ctx, s.p+"compacted", time.Now().UTC().Format(time.RFC3339Nano))
		if err == nil {
			rev = resp.Header.Revision
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("mark the revision: %w", err)
	}
	err = s.call(ctx, func(ctx context.Context, _ bool) error {
		_, err := cli.Compact(ctx, rev, clientv3.WithCompactPhysical())
		return err
	})
	if err != nil && !errors.Is(err, store.ErrCompacted) {
		return fmt.Errorf("compact to revision %d: %w", rev, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*s.timeout)
	defer cancel()
	if _, err := cli.Defragment(ctx, url); err != nil {
		return fmt.Errorf("defragment: %w", s.classify(err))
	}
	return nil
}

// Package mem is the store that keeps everything in memory, and the watch hub (Feed) of the stores
// that live in one process. It speaks core/store's vocabulary, as its siblings storage (bbolt)
// and storage/etcdstore do.
package mem

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kontermatt/kontermatt/core/store"
)

// Store keeps everything in memory: for tests, benchmarks of the service's own cost, and trying
// the bot without a database file. It satisfies store.Store, KV, Swapper and Watcher, and guards
// commits as every store does (store.ErrConflict).
type Store struct {
	mu      sync.Mutex
	feed    Feed
	tables  map[string][]byte
	closed  map[string]closedTable
	logs    map[string][]store.LogEntry
	records map[string][]byte
	kv      map[string][]byte
	// Fail, when set, makes the next Commit fail with it (tests of the rollback path); FailN more
	// commits after that fail too.
	Fail  error
	FailN int
}

type closedTable struct {
	state []byte
	at    int64 // unix ms
}

// New makes an empty Store.
func New() *Store {
	return &Store{tables: map[string][]byte{}, closed: map[string]closedTable{}, logs: map[string][]store.LogEntry{},
		records: map[string][]byte{}, kv: map[string][]byte{}}
}

var (
	_ store.Store   = (*Store)(nil)
	_ store.KV      = (*Store)(nil)
	_ store.Swapper = (*Store)(nil)
	_ store.Watcher = (*Store)(nil)
)

// Commit stores a change atomically; a stale one fails with store.ErrConflict.
func (m *Store) Commit(ctx context.Context, c store.Change) error {
	if err := ctx.Err(); err != nil {
		return err // as a store that waits would: nothing is written
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.Fail; err != nil {
		if m.FailN > 0 {
			m.FailN--
		} else {
			m.Fail = nil
		}
		return err
	}
	logged := c.State != nil && c.Log.Verb != ""
	if logged {
		var last uint64
		if l := m.logs[c.TableID]; len(l) > 0 {
			last = l[len(l)-1].Seq
		}
		if c.Log.Seq != last+1 {
			return fmt.Errorf("table %q: change %d after %d: %w", c.TableID, c.Log.Seq, last, store.ErrConflict)
		}
	}
	for _, e := range c.Expect {
		cur, ok := m.kv[e.Bucket+"\x00"+e.Key]
		if ok != (e.Value != nil) || !bytes.Equal(cur, e.Value) {
			return fmt.Errorf("table %q: kv %q/%q changed: %w", c.TableID, e.Bucket, e.Key, store.ErrConflict)
		}
	}
	if c.PruneLog && logged {
		delete(m.logs, c.TableID)
	}
	switch {
	case c.State == nil:
		delete(m.tables, c.TableID)
		delete(m.closed, c.TableID)
		delete(m.logs, c.TableID)
	case c.Closed:
		delete(m.tables, c.TableID)
		m.closed[c.TableID] = closedTable{state: slices.Clone(c.State), at: c.Log.Time}
	default:
		delete(m.closed, c.TableID) // a closed table written again is live again
		m.tables[c.TableID] = slices.Clone(c.State)
	}
	if logged { // a change without a Verb writes no log entry, as on disk
		m.logs[c.TableID] = append(m.logs[c.TableID], c.Log)
	}
	for _, r := range c.Records {
		m.records[r.Key] = slices.Clone(r.Data)
	}
	for _, e := range c.KV {
		if e.Value == nil {
			delete(m.kv, e.Bucket+"\x00"+e.Key)
		} else {
			m.kv[e.Bucket+"\x00"+e.Key] = slices.Clone(e.Value)
		}
	}
	change := store.TableChange{TableID: c.TableID, State: c.State, Closed: c.Closed && c.State != nil}
	if logged {
		change.Seq = c.Log.Seq
	}
	m.feed.Publish(change)
	return nil
}

// Table gives one table's state, live or closed.
func (m *Store) Table(_ context.Context, id string) ([]byte, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if st, ok := m.tables[id]; ok {
		return slices.Clone(st), true, nil
	}
	if c, ok := m.closed[id]; ok {
		return slices.Clone(c.state), true, nil
	}
	return nil, false, nil
}

// Revision is the revision of the last commit.
func (m *Store) Revision(context.Context) (uint64, error) { return m.feed.Revision() }

// Watch tells of the commits from revision from on (see store.Watcher and Feed).
func (m *Store) Watch(ctx context.Context, from uint64) <-chan store.TableChange {
	return m.feed.Watch(ctx, from)
}

// Swap writes value at bucket/key if it holds old (see store.Swapper).
func (m *Store) Swap(_ context.Context, bucket, key string, old, value []byte) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := bucket + "\x00" + key
	cur, ok := m.kv[k]
	if ok != (old != nil) || ok && !bytes.Equal(cur, old) {
		if !ok {
			return nil, store.ErrConflict
		}
		return slices.Clone(cur), store.ErrConflict
	}
	if value == nil {
		delete(m.kv, k)
	} else {
		m.kv[k] = slices.Clone(value)
	}
	return nil, nil
}

// Tables calls fn for every table in ID order, going on past tables fn cannot read.
func (m *Store) Tables(_ context.Context, fn func(id string, state []byte) error) error {
	m.mu.Lock()
	snapshot := maps.Clone(m.tables)
	m.mu.Unlock()
	var first error
	for _, id := range slices.Sorted(maps.Keys(snapshot)) {
		if err := fn(id, snapshot[id]); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Rewrite writes records again, empties buckets and writes entries, at once.
func (m *Store) Rewrite(_ context.Context, records []store.Record, emptied []string, entries []store.KVEntry) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range records {
		m.records[r.Key] = slices.Clone(r.Data)
	}
	m.rewriteKV(emptied, entries)
	return nil
}

// ClosedTables calls fn for every closed table in ID order.
func (m *Store) ClosedTables(_ context.Context, fn func(id string, state []byte) error) error {
	m.mu.Lock()
	snapshot := maps.Clone(m.closed)
	m.mu.Unlock()
	for _, id := range slices.Sorted(maps.Keys(snapshot)) {
		if err := fn(id, snapshot[id].state); err != nil {
			return err
		}
	}
	return nil
}

// Forget makes the changes at once; nothing is left in memory of what they replaced.
func (m *Store) Forget(_ context.Context, f store.Forgetting) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range f.Records {
		m.records[r.Key] = slices.Clone(r.Data)
	}
	for id, st := range f.Closed {
		if c, ok := m.closed[id]; ok {
			m.closed[id] = closedTable{state: slices.Clone(st), at: c.at}
		}
	}
	for _, log := range m.logs {
		for i := range log {
			if log[i].Actor == f.Actor {
				log[i].Actor = f.As
			}
		}
	}
	for k := range m.kv {
		_, key, _ := strings.Cut(k, "\x00")
		for _, id := range f.Drop {
			if key == id || strings.HasPrefix(key, id+"/") {
				delete(m.kv, k)
			}
		}
		for _, id := range f.Tables {
			if f.NamesPersonAt(id, key) {
				delete(m.kv, k)
			}
		}
	}
	m.rewriteKV(f.Emptied, f.KV)
	return nil
}

// rewriteKV empties buckets and writes entries (m.mu held).
func (m *Store) rewriteKV(emptied []string, entries []store.KVEntry) {
	for _, b := range emptied {
		for k := range m.kv {
			if strings.HasPrefix(k, b+"\x00") {
				delete(m.kv, k)
			}
		}
	}
	for _, e := range entries {
		if e.Value == nil {
			delete(m.kv, e.Bucket+"\x00"+e.Key)
		} else {
			m.kv[e.Bucket+"\x00"+e.Key] = slices.Clone(e.Value)
		}
	}
}

// Prune deletes the tables closed before the given time, their logs and their KV keys.
func (m *Store) Prune(_ context.Context, before time.Time) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for id, c := range m.closed {
		if c.at >= before.UnixMilli() {
			continue
		}
		n++
		delete(m.closed, id)
		delete(m.logs, id)
		m.feed.Publish(store.TableChange{TableID: id})
		for k := range m.kv {
			_, key, _ := strings.Cut(k, "\x00")
			if key == id || strings.HasPrefix(key, id+"/") {
				delete(m.kv, k)
			}
		}
	}
	return n, nil
}

// Closed gives how many closed tables the store keeps (tests of pruning).
func (m *Store) Closed() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.closed)
}

// KVLen gives how many KV entries the store keeps (tests of pruning).
func (m *Store) KVLen() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.kv)
}

// Bucket gives every entry of a KV bucket, by key (tests that look at what is kept).
func (m *Store) Bucket(bucket string) map[string][]byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string][]byte{}
	for k, v := range m.kv {
		if b, key, _ := strings.Cut(k, "\x00"); b == bucket {
			out[key] = slices.Clone(v)
		}
	}
	return out
}

// Records calls fn for every kept record in key order.
func (m *Store) Records(_ context.Context, fn func(key string, record []byte) error) error {
	m.mu.Lock()
	snapshot := maps.Clone(m.records)
	m.mu.Unlock()
	for _, k := range slices.Sorted(maps.Keys(snapshot)) {
		if err := fn(k, snapshot[k]); err != nil {
			return err
		}
	}
	return nil
}

// Record gives one kept record.
func (m *Store) Record(_ context.Context, key string) ([]byte, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	data, ok := m.records[key]
	return slices.Clone(data), ok, nil
}

// Log gives a table's log entries.
func (m *Store) Log(id string) []store.LogEntry {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.logs[id])
}

// Put stores raw state for a table (tests use it to plant a corrupt table).
func (m *Store) Put(_ context.Context, bucket, key string, value []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.kv[bucket+"\x00"+key] = append([]byte{}, value...) // nil is stored as empty, as on disk
	return nil
}

// Get reads a KV value.
func (m *Store) Get(_ context.Context, bucket, key string) ([]byte, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.kv[bucket+"\x00"+key]
	return slices.Clone(v), ok, nil
}

// Delete removes a KV value.
func (m *Store) Delete(_ context.Context, bucket, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.kv, bucket+"\x00"+key)
	return nil
}

// PutTable plants raw table state, as a corrupt database would hold it.
func (m *Store) PutTable(id string, state []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.tables[id] = slices.Clone(state)
}

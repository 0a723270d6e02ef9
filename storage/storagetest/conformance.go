package storagetest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/core/store"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// Store is what every store of the bot is: the service's Store and KV, with compare-and-swap on
// KV keys and watches of table changes.
type Store interface {
	store.Store
	store.Swapper
	store.Watcher
}

// Suite runs one store kind through the conformance tests.
type Suite struct {
	// Open gives a new, empty store; it is closed when the test ends.
	Open func(t *testing.T) Store
	// Log reads a table's log.
	Log func(t *testing.T, s Store, id string) []store.LogEntry
	// BadKey is the error of a key the store cannot keep (storage.ErrBadKey, which this package
	// cannot import: the storage package's own tests use it): the durable stores refuse the same
	// keys. Nil for a store that keeps any key (in memory), which is then not asked.
	BadKey error
}

// Run runs every conformance test against the suite's store: what the bbolt store, the in-memory
// store and the etcd store must do alike.
func (su Suite) Run(t *testing.T) {
	type test struct {
		name string
		run  func(t *testing.T, su Suite, s Store)
	}
	tests := []test{
		{"commits", testCommits},
		{"conflicts", testConflicts},
		{"racing writers", testRacingWriters},
		{"closed and pruned", testClosedAndPruned},
		{"delete", testDelete},
		{"prune log", testPruneLog},
		{"rewrite", testRewrite},
		{"kv", testKV},
		{"swap", testSwap},
		{"racing swaps", testRacingSwaps},
		{"expect", testExpect},
		{"racing expects", testRacingExpects},
		{"watch", testWatch},
		{"forget", testForget},
	}
	if su.BadKey != nil {
		tests = append(tests, test{"bad keys", testBadKeys})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, su, su.Open(t)) })
	}
}

func entry(seq uint64, verb api.Verb, actor string) store.LogEntry {
	return store.LogEntry{Seq: seq, Time: 1767225600000 + int64(seq), Actor: actor, Verb: verb}
}

func commit(t *testing.T, s Store, c store.Change) {
	ctx := t.Context()
	t.Helper()
	if err := s.Commit(ctx, c); err != nil {
		t.Fatalf("Commit(%q, seq %d): %v", c.TableID, c.Log.Seq, err)
	}
}

func tables(t *testing.T, s Store) map[string]string {
	ctx := t.Context()
	t.Helper()
	out := map[string]string{}
	if err := s.Tables(ctx, func(id string, st []byte) error { out[id] = string(st); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

func closedTables(t *testing.T, s Store) map[string]string {
	ctx := t.Context()
	t.Helper()
	out := map[string]string{}
	if err := s.ClosedTables(ctx, func(id string, st []byte) error { out[id] = string(st); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

func records(t *testing.T, s Store) map[string]string {
	ctx := t.Context()
	t.Helper()
	out := map[string]string{}
	if err := s.Records(ctx, func(k string, r []byte) error { out[k] = string(r); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

func same[T comparable](t *testing.T, what string, got, want map[string]T) {
	t.Helper()
	if !maps.Equal(got, want) {
		t.Errorf("%s:\n got %v\nwant %v", what, got, want)
	}
}

func seqs(log []store.LogEntry) []uint64 {
	var out []uint64
	for _, e := range log {
		out = append(out, e.Seq)
	}
	return out
}

func table1(t *testing.T, s Store, id string) (string, bool) {
	ctx := t.Context()
	t.Helper()
	st, ok, err := s.Table(ctx, id)
	if err != nil {
		t.Fatalf("Table(%q): %v", id, err)
	}
	return string(st), ok
}

func kv(t *testing.T, s Store, bucket, key string) (string, bool) {
	ctx := t.Context()
	t.Helper()
	v, ok, err := s.Get(ctx, bucket, key)
	if err != nil {
		t.Fatalf("Get(%q, %q): %v", bucket, key, err)
	}
	return string(v), ok
}

func testCommits(t *testing.T, su Suite, s Store) {
	ctx := t.Context()
	for seq := uint64(1); seq <= 3; seq++ {
		commit(t, s, store.Change{TableID: "dc:1", State: fmt.Appendf(nil, "a%d", seq), Log: entry(seq, api.VerbPlay, "tg:1")})
	}
	commit(t, s, store.Change{TableID: "tg:2", State: []byte("b1"), Log: entry(1, api.VerbNew, "tg:2"),
		Records: []store.Record{{Key: "tg:2/m1", Data: []byte("rec")}},
		KV:      []store.KVEntry{{Bucket: "league.place", Key: "tg:2", Value: []byte("L")}}})
	commit(t, s, store.Change{TableID: "e", State: []byte{}})              // an empty state is a state
	commit(t, s, store.Change{TableID: "dc:1", State: []byte("a3 again")}) // no Verb: no log entry, no guard
	for i := range 7 {                                                     // more than a page of a small-paged store
		commit(t, s, store.Change{TableID: fmt.Sprintf("p%d", i), State: []byte("p"), Log: entry(1, api.VerbNew, "")})
	}
	want := map[string]string{"dc:1": "a3 again", "tg:2": "b1", "e": ""}
	for i := range 7 {
		want[fmt.Sprintf("p%d", i)] = "p"
	}
	same(t, "tables", tables(t, s), want)
	if st, ok := table1(t, s, "dc:1"); !ok || st != "a3 again" {
		t.Errorf("Table(dc:1) = %q, %v", st, ok)
	}
	if st, ok := table1(t, s, "e"); !ok || st != "" {
		t.Errorf("Table(e) = %q, %v; want the empty state", st, ok)
	}
	if _, ok := table1(t, s, "never"); ok {
		t.Error("Table(never) found a table")
	}
	same(t, "records", records(t, s), map[string]string{"tg:2/m1": "rec"})
	if r, ok, err := s.Record(ctx, "tg:2/m1"); err != nil || !ok || string(r) != "rec" {
		t.Errorf("Record = %q, %v, %v", r, ok, err)
	}
	if _, ok, err := s.Record(ctx, "nope"); err != nil || ok {
		t.Errorf("Record(nope) = %v, %v", ok, err)
	}
	if v, ok := kv(t, s, "league.place", "tg:2"); !ok || v != "L" {
		t.Errorf("the change's KV entry: %q, %v", v, ok)
	}
	if got := seqs(su.Log(t, s, "dc:1")); !slices.Equal(got, []uint64{1, 2, 3}) {
		t.Errorf("log of dc:1: %v", got)
	}
	if log := su.Log(t, s, "dc:1"); len(log) == 3 && (log[2].Actor != "tg:1" || log[2].Verb != api.VerbPlay) {
		t.Errorf("log entry: %+v", log[2])
	}
}

// Two changes from the same state: exactly one is written. A change that skips ahead, or has no
// Seq, is refused too; nothing of a refused change is written.
func testConflicts(t *testing.T, su Suite, s Store) {
	ctx := t.Context()
	commit(t, s, store.Change{TableID: "t", State: []byte("s1"), Log: entry(1, api.VerbNew, "a")})
	if err := s.Commit(ctx, store.Change{TableID: "fresh", State: []byte("x"), Log: entry(2, api.VerbNew, "a")}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("a new table's first change at Seq 2: %v, want ErrConflict", err)
	}
	commit(t, s, store.Change{TableID: "t", State: []byte("s2 by A"), Log: entry(2, api.VerbPlay, "a")})
	for _, seq := range []uint64{2, 1, 0, 4} {
		err := s.Commit(ctx, store.Change{TableID: "t", State: []byte("stale"), Log: entry(seq, api.VerbPlay, "b"),
			Records: []store.Record{{Key: "t/m1", Data: []byte("no")}}, KV: []store.KVEntry{{Bucket: "b", Key: "t/x", Value: []byte("no")}}})
		if !errors.Is(err, store.ErrConflict) {
			t.Errorf("Seq %d after 2: %v, want ErrConflict", seq, err)
		}
	}
	if st, _ := table1(t, s, "t"); st != "s2 by A" {
		t.Errorf("state after the refused changes: %q", st)
	}
	same(t, "records", records(t, s), map[string]string{})
	if _, ok := kv(t, s, "b", "t/x"); ok {
		t.Error("a refused change's KV entry was written")
	}
	if _, ok := table1(t, s, "fresh"); ok {
		t.Error("a refused first change made its table")
	}
	if got := seqs(su.Log(t, s, "t")); !slices.Equal(got, []uint64{1, 2}) {
		t.Errorf("log: %v", got)
	}
	commit(t, s, store.Change{TableID: "t", State: []byte("s3"), Log: entry(3, api.VerbPlay, "a")})
}

// Many writers press the same table at the same Seq, round after round: exactly one wins each.
func testRacingWriters(t *testing.T, su Suite, s Store) {
	ctx := t.Context()
	const writers, rounds = 8, 15
	for round := uint64(1); round <= rounds; round++ {
		var wins sync.WaitGroup
		var mu sync.Mutex
		won := 0
		start := make(chan struct{})
		for w := range writers {
			wins.Add(1)
			go func() {
				defer wins.Done()
				<-start
				err := s.Commit(ctx, store.Change{TableID: "hot", State: fmt.Appendf(nil, "r%d w%d", round, w), Log: entry(round, api.VerbPlay, strconv.Itoa(w))})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					won++
				case !errors.Is(err, store.ErrConflict):
					t.Errorf("round %d writer %d: %v", round, w, err)
				}
			}()
		}
		close(start)
		wins.Wait()
		if won != 1 {
			t.Fatalf("round %d: %d writers won, want exactly 1", round, won)
		}
	}
	log := su.Log(t, s, "hot")
	if len(log) != rounds {
		t.Errorf("log has %d entries, want %d", len(log), rounds)
	}
	st, _ := table1(t, s, "hot")
	if want := fmt.Sprintf("r%d w%s", rounds, log[len(log)-1].Actor); st != want {
		t.Errorf("state %q is not the last winner's (%q)", st, want)
	}
}

func testClosedAndPruned(t *testing.T, su Suite, s Store) {
	ctx := t.Context()
	at := time.UnixMilli(1767225600000)
	commit(t, s, store.Change{TableID: "old", State: []byte("o1"), Log: entry(1, api.VerbNew, "a"),
		KV: []store.KVEntry{{Bucket: "msgs", Key: "old", Value: []byte("1")}, {Bucket: "msgs", Key: "old/live", Value: []byte("2")},
			{Bucket: "other", Key: "old/hand/tg:1", Value: []byte("3")}, {Bucket: "msgs", Key: "older", Value: []byte("keep")},
			{Bucket: "msgs", Key: "old2/x", Value: []byte("keep")}}})
	commit(t, s, store.Change{TableID: "old", State: []byte("o closed"), Closed: true, Log: store.LogEntry{Seq: 2, Time: at.UnixMilli(), Verb: api.VerbClose},
		Records: []store.Record{{Key: "old/m1", Data: []byte("kept for ever")}}})
	commit(t, s, store.Change{TableID: "later", State: []byte("l closed"), Closed: true, Log: store.LogEntry{Seq: 1, Time: at.Add(time.Hour).UnixMilli(), Verb: api.VerbClose}})
	commit(t, s, store.Change{TableID: "live", State: []byte("playing"), Log: entry(1, api.VerbNew, "a")})

	same(t, "live tables", tables(t, s), map[string]string{"live": "playing"})
	same(t, "closed tables", closedTables(t, s), map[string]string{"old": "o closed", "later": "l closed"})
	if st, ok := table1(t, s, "old"); !ok || st != "o closed" {
		t.Errorf("Table(old), closed: %q, %v", st, ok)
	}
	if err := s.Commit(ctx, store.Change{TableID: "old", State: []byte("x"), Log: entry(2, api.VerbPlay, "b")}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("a stale change to a closed table: %v, want ErrConflict", err)
	}

	if n, err := s.Prune(ctx, at); err != nil || n != 0 {
		t.Fatalf("Prune(at the close) = %d, %v; want 0 (closed before, not at)", n, err)
	}
	if n, err := s.Prune(ctx, at.Add(time.Minute)); err != nil || n != 1 {
		t.Fatalf("Prune = %d, %v; want 1", n, err)
	}
	same(t, "closed tables after Prune", closedTables(t, s), map[string]string{"later": "l closed"})
	if _, ok := table1(t, s, "old"); ok {
		t.Error("the pruned table is still there")
	}
	if log := su.Log(t, s, "old"); len(log) != 0 {
		t.Errorf("the pruned table's log: %v", seqs(log))
	}
	for _, k := range [][2]string{{"msgs", "old"}, {"msgs", "old/live"}, {"other", "old/hand/tg:1"}} {
		if _, ok := kv(t, s, k[0], k[1]); ok {
			t.Errorf("KV %s/%s of the pruned table is still there", k[0], k[1])
		}
	}
	for _, k := range []string{"older", "old2/x"} {
		if _, ok := kv(t, s, "msgs", k); !ok {
			t.Errorf("KV msgs/%s, not the pruned table's, is gone", k)
		}
	}
	same(t, "records after Prune", records(t, s), map[string]string{"old/m1": "kept for ever"})
	// The ID is free: a new table there starts at 1.
	commit(t, s, store.Change{TableID: "old", State: []byte("new"), Log: entry(1, api.VerbNew, "c")})
	// A closed table written again is live again.
	commit(t, s, store.Change{TableID: "later", State: []byte("reopened"), Log: entry(2, api.VerbRematch, "c")})
	same(t, "closed tables at the end", closedTables(t, s), map[string]string{})
	if n, err := s.Prune(ctx, at.Add(48*time.Hour)); err != nil || n != 0 {
		t.Errorf("Prune after the reopening = %d, %v; want 0", n, err)
	}
	same(t, "live tables at the end", tables(t, s), map[string]string{"live": "playing", "old": "new", "later": "reopened"})
}

func testDelete(t *testing.T, su Suite, s Store) {
	commit(t, s, store.Change{TableID: "a", State: []byte("a"), Log: entry(1, api.VerbNew, "x")})
	commit(t, s, store.Change{TableID: "a", State: []byte("a2"), Log: entry(2, api.VerbDeal, "x")})
	commit(t, s, store.Change{TableID: "a", Records: []store.Record{{Key: "a/m1", Data: []byte("final")}}})
	if _, ok := table1(t, s, "a"); ok {
		t.Error("the deleted table is there")
	}
	if log := su.Log(t, s, "a"); len(log) != 0 {
		t.Errorf("the deleted table's log: %v", seqs(log))
	}
	same(t, "records", records(t, s), map[string]string{"a/m1": "final"})
	commit(t, s, store.Change{TableID: "a", State: []byte("again"), Log: entry(1, api.VerbNew, "y")})
}

func testPruneLog(t *testing.T, su Suite, s Store) {
	ctx := t.Context()
	for seq := uint64(1); seq <= 5; seq++ {
		commit(t, s, store.Change{TableID: "m", State: []byte("playing"), Log: entry(seq, api.VerbPlay, "x")})
	}
	commit(t, s, store.Change{TableID: "m", State: []byte("over"), Log: entry(6, api.VerbPlay, "x"), PruneLog: true,
		Records: []store.Record{{Key: "m/m1", Data: []byte("match")}}})
	if got := seqs(su.Log(t, s, "m")); !slices.Equal(got, []uint64{6}) {
		t.Errorf("log after the match: %v, want [6]", got)
	}
	if err := s.Commit(ctx, store.Change{TableID: "m", State: []byte("x"), Log: entry(6, api.VerbRematch, "x")}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("Seq 6 again after a pruned log: %v", err)
	}
	commit(t, s, store.Change{TableID: "m", State: []byte("next"), Log: entry(7, api.VerbRematch, "x")})
	if got := seqs(su.Log(t, s, "m")); !slices.Equal(got, []uint64{6, 7}) {
		t.Errorf("log in the next match: %v", got)
	}
}

func testRewrite(t *testing.T, _ Suite, s Store) {
	ctx := t.Context()
	for _, e := range [][3]string{{"league", "p1", "old"}, {"league", "p2", "gone"}, {"ratings", "x", "old"}, {"keep", "k", "v"}} {
		if err := s.Put(ctx, e[0], e[1], []byte(e[2])); err != nil {
			t.Fatal(err)
		}
	}
	commit(t, s, store.Change{TableID: "t", Records: []store.Record{{Key: "t/m1", Data: []byte("v1")}}})
	var entries []store.KVEntry
	for i := range 300 { // more than a transaction of etcd holds
		entries = append(entries, store.KVEntry{Bucket: "ratings", Key: fmt.Sprintf("r%03d", i), Value: []byte("n")})
	}
	entries = append(entries, store.KVEntry{Bucket: "league", Key: "p1", Value: []byte("new")})
	if err := s.Rewrite(ctx, []store.Record{{Key: "t/m1", Data: []byte("v2")}}, []string{"league", "ratings"}, entries); err != nil {
		t.Fatal(err)
	}
	same(t, "records", records(t, s), map[string]string{"t/m1": "v2"})
	if v, _ := kv(t, s, "league", "p1"); v != "new" {
		t.Errorf("league/p1 = %q", v)
	}
	for _, k := range [][2]string{{"league", "p2"}, {"ratings", "x"}} {
		if _, ok := kv(t, s, k[0], k[1]); ok {
			t.Errorf("%s/%s survived its bucket's rewrite", k[0], k[1])
		}
	}
	if v, _ := kv(t, s, "ratings", "r299"); v != "n" {
		t.Errorf("ratings/r299 = %q", v)
	}
	if v, _ := kv(t, s, "keep", "k"); v != "v" {
		t.Errorf("a bucket not rewritten changed: %q", v)
	}
}

func testKV(t *testing.T, _ Suite, s Store) {
	ctx := t.Context()
	if _, ok := kv(t, s, "b", "k"); ok {
		t.Fatal("a key never written is there")
	}
	if err := s.Put(ctx, "b", "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "b", "empty", nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "b2", "k", []byte("other bucket")); err != nil {
		t.Fatal(err)
	}
	if v, ok := kv(t, s, "b", "k"); !ok || v != "v" {
		t.Errorf("Get = %q, %v", v, ok)
	}
	if v, ok := kv(t, s, "b", "empty"); !ok || v != "" {
		t.Errorf("a nil Put: %q, %v; want an empty value", v, ok)
	}
	if err := s.Delete(ctx, "b", "k"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "b", "never"); err != nil {
		t.Errorf("Delete of a missing key: %v", err)
	}
	if _, ok := kv(t, s, "b", "k"); ok {
		t.Error("a deleted key is there")
	}
	if v, _ := kv(t, s, "b2", "k"); v != "other bucket" {
		t.Errorf("b2/k = %q", v)
	}
}

func testSwap(t *testing.T, _ Suite, s Store) {
	ctx := t.Context()
	swap := func(old, value []byte, wantErr bool, wantCur string) {
		t.Helper()
		cur, err := s.Swap(ctx, "out", "t/live", old, value)
		if wantErr != errors.Is(err, store.ErrConflict) || !wantErr && err != nil {
			t.Fatalf("Swap(%q → %q): %v, want a conflict: %v", old, value, err, wantErr)
		}
		if string(cur) != wantCur {
			t.Fatalf("Swap(%q → %q) gives current %q, want %q", old, value, cur, wantCur)
		}
	}
	swap(nil, []byte("v1"), false, "")
	swap(nil, []byte("again"), true, "v1")
	swap([]byte("v0"), []byte("x"), true, "v1")
	swap([]byte("v1"), []byte("v2"), false, "")
	swap([]byte{}, []byte("x"), true, "v2")
	swap([]byte("v2"), nil, false, "")
	if _, ok := kv(t, s, "out", "t/live"); ok {
		t.Error("a swap to nil left the key")
	}
	swap([]byte("v2"), []byte("x"), true, "")
	swap(nil, []byte{}, false, "")
	swap(nil, []byte("x"), true, "")
	swap([]byte{}, []byte("v3"), false, "")
	if v, _ := kv(t, s, "out", "t/live"); v != "v3" {
		t.Errorf("after the swaps: %q", v)
	}
}

// Writers add to one counter by compare-and-swap, reading again after each conflict: no
// addition is lost.
func testRacingSwaps(t *testing.T, _ Suite, s Store) {
	ctx := t.Context()
	const writers, each = 6, 10
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			cur, _, err := s.Get(ctx, "c", "n")
			if err != nil {
				t.Error(err)
				return
			}
			for range each {
				for {
					n, _ := strconv.Atoi(string(cur))
					old := cur
					next := []byte(strconv.Itoa(n + 1))
					got, err := s.Swap(ctx, "c", "n", old, next)
					if err == nil {
						cur = next
						break
					}
					if !errors.Is(err, store.ErrConflict) {
						t.Error(err)
						return
					}
					cur = got
				}
			}
		})
	}
	wg.Wait()
	if v, _ := kv(t, s, "c", "n"); v != strconv.Itoa(writers*each) {
		t.Errorf("counter = %s, want %d", v, writers*each)
	}
}

// A change with Expect is written only while each of those KV entries holds what it was made
// from (a nil Value: absent, an empty one: empty); otherwise it fails with ErrConflict and writes
// nothing, the table's Seq guard included: the same change then goes through once it expects
// what is there.
func testExpect(t *testing.T, su Suite, s Store) {
	ctx := t.Context()
	if err := s.Put(ctx, "league.place", "p", []byte("v1")); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "league.person", "empty", nil); err != nil {
		t.Fatal(err)
	}
	change := func(seq uint64, expect ...store.KVEntry) store.Change {
		return store.Change{TableID: "t", State: fmt.Appendf(nil, "s%d", seq), Log: entry(seq, api.VerbPlay, "a"),
			Records: []store.Record{{Key: fmt.Sprintf("t/m%d", seq), Data: []byte("rec")}},
			KV:      []store.KVEntry{{Bucket: "league.place", Key: "p", Value: fmt.Appendf(nil, "after %d", seq)}},
			Expect:  expect}
	}
	place := func(v string) store.KVEntry { return store.KVEntry{Bucket: "league.place", Key: "p", Value: []byte(v)} }
	absent := func(bucket, key string) store.KVEntry { return store.KVEntry{Bucket: bucket, Key: key} }
	empty := store.KVEntry{Bucket: "league.person", Key: "empty", Value: []byte{}}
	commit(t, s, change(1, place("v1"), absent("league.person", "new"), empty))
	for _, tc := range []struct {
		name   string
		expect []store.KVEntry
	}{
		{"an old value", []store.KVEntry{place("v1")}},
		{"an absent key that holds a value", []store.KVEntry{absent("league.place", "p")}},
		{"a value of an absent key", []store.KVEntry{place("after 1"), {Bucket: "league.person", Key: "new", Value: []byte("x")}}},
		{"an empty value of an absent key", []store.KVEntry{place("after 1"), {Bucket: "league.person", Key: "new", Value: []byte{}}}},
		{"an absent key that holds an empty value", []store.KVEntry{place("after 1"), absent("league.person", "empty")}},
		{"one of several changed", []store.KVEntry{empty, place("v1"), absent("league.month", "2026-01")}},
	} {
		if err := s.Commit(ctx, change(2, tc.expect...)); !errors.Is(err, store.ErrConflict) {
			t.Errorf("expecting %s: %v, want ErrConflict", tc.name, err)
		}
	}
	if st, _ := table1(t, s, "t"); st != "s1" {
		t.Errorf("state after the refused changes: %q", st)
	}
	if v, _ := kv(t, s, "league.place", "p"); v != "after 1" {
		t.Errorf("a refused change wrote its KV entry: %q", v)
	}
	same(t, "records", records(t, s), map[string]string{"t/m1": "rec"})
	if got := seqs(su.Log(t, s, "t")); !slices.Equal(got, []uint64{1}) {
		t.Errorf("log: %v", got)
	}
	commit(t, s, change(2, place("after 1"), empty, absent("league.month", "2026-01")))
	// A change without a log entry is guarded by Expect alone.
	unlogged := store.Change{TableID: "u", State: []byte("u"), Expect: []store.KVEntry{place("after 1")}}
	if err := s.Commit(ctx, unlogged); !errors.Is(err, store.ErrConflict) {
		t.Errorf("an unlogged change expecting an old value: %v, want ErrConflict", err)
	}
	if _, ok := table1(t, s, "u"); ok {
		t.Error("a refused unlogged change made its table")
	}
	unlogged.Expect = []store.KVEntry{place("after 2")}
	commit(t, s, unlogged)
}

// Writers at tables of their own each add to one shared counter in the commits of their tables,
// each commit expecting the counter as it was read, reading it again after each conflict (as
// copies of the bot do with the league of a person who plays at two tables): no addition is lost.
func testRacingExpects(t *testing.T, _ Suite, s Store) {
	ctx := t.Context()
	const writers, each = 6, 10
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			id := fmt.Sprint("w", w)
			for seq := uint64(1); seq <= each; seq++ {
				for {
					cur, found, err := s.Get(ctx, "league.person", "shared")
					if err != nil {
						t.Error(err)
						return
					}
					n, _ := strconv.Atoi(string(cur))
					expect := store.KVEntry{Bucket: "league.person", Key: "shared"}
					if found {
						expect.Value = cur
					}
					err = s.Commit(ctx, store.Change{TableID: id, State: []byte("s"), Log: entry(seq, api.VerbPlay, id),
						KV: []store.KVEntry{{Bucket: "league.person", Key: "shared", Value: []byte(strconv.Itoa(n + 1))}}, Expect: []store.KVEntry{expect}})
					if err == nil {
						break
					}
					if !errors.Is(err, store.ErrConflict) {
						t.Error(err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	if v, _ := kv(t, s, "league.person", "shared"); v != strconv.Itoa(writers*each) {
		t.Errorf("counter = %s, want %d", v, writers*each)
	}
}

// A watch hears every commit after its revision, in order, with the state and Seq of each.
func testWatch(t *testing.T, _ Suite, s Store) {
	ctx := t.Context()
	commit(t, s, store.Change{TableID: "before", State: []byte("b"), Log: entry(1, api.VerbNew, "")})
	rev, err := s.Revision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	w := s.Watch(ctx, rev+1)
	type step struct {
		id    string
		seq   uint64
		state string
	}
	var want []step
	for seq := uint64(1); seq <= 5; seq++ {
		for _, id := range []string{"x", "y", "z"} {
			st := fmt.Sprintf("%s%d", id, seq)
			commit(t, s, store.Change{TableID: id, State: []byte(st), Log: entry(seq, api.VerbPlay, "")})
			want = append(want, step{id, seq, st})
		}
	}
	commit(t, s, store.Change{TableID: "x", State: []byte("x closed"), Closed: true, Log: store.LogEntry{Seq: 6, Time: 1, Verb: api.VerbClose}})
	commit(t, s, store.Change{TableID: "y"}) // deleted
	last := map[string]uint64{}
	var lastRev uint64
	for i := range len(want) + 2 {
		var c store.TableChange
		select {
		case c = <-w:
		case <-ctx.Done():
			t.Fatalf("change %d did not come", i)
		}
		if c.Err != nil {
			t.Fatalf("change %d: %v", i, c.Err)
		}
		if c.Rev <= lastRev {
			t.Errorf("change %d has revision %d after %d", i, c.Rev, lastRev)
		}
		lastRev = c.Rev
		switch {
		case i < len(want):
			if got := (step{c.TableID, c.Seq, string(c.State)}); got != want[i] || c.Closed {
				t.Errorf("change %d: %+v closed %v, want %+v", i, got, c.Closed, want[i])
			}
			if c.Seq != last[c.TableID]+1 {
				t.Errorf("table %s: Seq %d after %d", c.TableID, c.Seq, last[c.TableID])
			}
			last[c.TableID] = c.Seq
		case i == len(want):
			if c.TableID != "x" || !c.Closed || string(c.State) != "x closed" || c.Seq != 6 {
				t.Errorf("the close: %+v", c)
			}
		default:
			if c.TableID != "y" || c.State != nil {
				t.Errorf("the delete: %+v", c)
			}
		}
	}
	// A watch from now hears what comes next only; ending its context closes it.
	ctx2, cancel2 := context.WithCancel(ctx)
	w2 := s.Watch(ctx2, 0)
	time.Sleep(50 * time.Millisecond) // let a remote watch be set up before the commit
	commit(t, s, store.Change{TableID: "z", State: []byte("z6"), Log: entry(6, api.VerbPlay, "")})
	select {
	case c := <-w2:
		if c.TableID != "z" || c.Seq != 6 {
			t.Errorf("a watch from now heard %+v first", c)
		}
	case <-ctx.Done():
		t.Fatal("a watch from now heard nothing")
	}
	cancel2()
	for range w2 {
	}
}

func testForget(t *testing.T, su Suite, s Store) {
	ctx := t.Context()
	commit(t, s, store.Change{TableID: "t1", State: []byte("s"), Log: entry(1, api.VerbJoin, "tg:42"),
		KV: []store.KVEntry{{Bucket: "hands", Key: "t1/hand/tg:42", Value: []byte("h")}, {Bucket: "hands", Key: "t1/hand/tg:7", Value: []byte("h7")},
			{Bucket: "tg.people", Key: "42", Value: []byte("p")}}})
	commit(t, s, store.Change{TableID: "t1", State: []byte("s"), Log: entry(2, api.VerbPlay, "tg:7")})
	commit(t, s, store.Change{TableID: "t2", State: []byte("c"), Closed: true, Log: store.LogEntry{Seq: 1, Time: 5, Actor: "tg:42", Verb: api.VerbClose},
		Records: []store.Record{{Key: "t2/m1", Data: []byte("Anna sat here")}},
		KV:      []store.KVEntry{{Bucket: "msgs", Key: "t2/live", Value: []byte("m")}}})
	err := s.Forget(ctx, store.Forgetting{Records: []store.Record{{Key: "t2/m1", Data: []byte("someone sat here")}},
		Closed: map[string][]byte{"t2": []byte("c anonymous")}, Actor: "tg:42", As: "anon:1", Drop: []string{"t2"},
		Tables: []string{"t1"}, Names: []string{"tg:42", "42"}, KV: []store.KVEntry{{Bucket: "tg.people", Key: "42"}}})
	if err != nil {
		t.Fatal(err)
	}
	same(t, "records", records(t, s), map[string]string{"t2/m1": "someone sat here"})
	same(t, "closed", closedTables(t, s), map[string]string{"t2": "c anonymous"})
	for _, id := range []string{"t1", "t2"} {
		for _, e := range su.Log(t, s, id) {
			if e.Actor == "tg:42" {
				t.Errorf("log of %s still names the person: %+v", id, e)
			}
		}
	}
	if log := su.Log(t, s, "t1"); len(log) != 2 || log[0].Actor != "anon:1" || log[1].Actor != "tg:7" {
		t.Errorf("log of t1: %+v", log)
	}
	for _, k := range [][2]string{{"hands", "t1/hand/tg:42"}, {"tg.people", "42"}, {"msgs", "t2/live"}} {
		if _, ok := kv(t, s, k[0], k[1]); ok {
			t.Errorf("%s/%s is still there", k[0], k[1])
		}
	}
	if _, ok := kv(t, s, "hands", "t1/hand/tg:7"); !ok {
		t.Error("another person's key went")
	}
	// The closed table can still be pruned when its time comes.
	if n, err := s.Prune(ctx, time.UnixMilli(6)); err != nil || n != 1 {
		t.Errorf("Prune after Forget = %d, %v", n, err)
	}
}

// testBadKeys: every store refuses the same keys (storage.CheckKey), in every call that writes
// one, and writes nothing: so data moves between stores (migrate, backup) whole.
func testBadKeys(t *testing.T, su Suite, s Store) {
	ctx := t.Context()
	long := strings.Repeat("k", 32769) // longer than bbolt's bolt.MaxKeySize
	ok := store.Change{TableID: "bk", State: []byte("s"), Log: entry(1, "new", "")}
	bad := map[string]store.Change{
		"an empty table ID":   {TableID: "", State: []byte("s"), Log: entry(1, "new", "")},
		"a long record key":   {TableID: "bk", State: []byte("s"), Log: entry(1, "new", ""), Records: []store.Record{{Key: long, Data: []byte("r")}}},
		"an empty KV bucket":  {TableID: "bk", State: []byte("s"), Log: entry(1, "new", ""), KV: []store.KVEntry{{Bucket: "", Key: "k", Value: []byte("v")}}},
		"a long expected key": {TableID: "bk", State: []byte("s"), Log: entry(1, "new", ""), Expect: []store.KVEntry{{Bucket: "b", Key: long}}},
	}
	for what, c := range bad {
		if err := s.Commit(ctx, c); !errors.Is(err, su.BadKey) {
			t.Errorf("a commit with %s: %v, want ErrBadKey", what, err)
		}
	}
	if err := s.Rewrite(ctx, []store.Record{{Key: "", Data: []byte("r")}}, nil, nil); !errors.Is(err, su.BadKey) {
		t.Errorf("a rewrite with an empty record key: %v, want ErrBadKey", err)
	}
	if err := s.Forget(ctx, store.Forgetting{KV: []store.KVEntry{{Bucket: "b", Key: ""}}}); !errors.Is(err, su.BadKey) {
		t.Errorf("a forget with an empty KV key: %v, want ErrBadKey", err)
	}
	if err := s.Put(ctx, "", "k", []byte("v")); !errors.Is(err, su.BadKey) {
		t.Errorf("a put into an empty bucket name: %v, want ErrBadKey", err)
	}
	if _, ok := table1(t, s, "bk"); ok {
		t.Error("a refused commit wrote its table")
	}
	commit(t, s, ok) // the same change with good keys is taken
}

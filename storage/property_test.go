package storage

import (
	"errors"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
)

var (
	seedFlag  = flag.Uint64("storage.seed", 0, "seed for TestPropertyModel (0: a random one, printed)")
	stepsFlag = flag.Int("storage.steps", 600, "operations per TestPropertyModel run")
)

// model is what the store should hold.
type model struct {
	tables  map[string]string
	logs    map[string][]table.LogEntry
	records map[string]string
	kv      map[string]map[string]string
}

// TestPropertyModel runs a random sequence of commits, deletes, refused commits, KV writes and
// reopenings against the store and an in-memory model, comparing them often. Replay a failure
// with: go test ./storage -run TestPropertyModel -storage.seed=N
func TestPropertyModel(t *testing.T) {
	ctx := t.Context()
	seed := *seedFlag
	if seed == 0 {
		seed = rand.Uint64()
	}
	t.Logf("seed %d (replay with -storage.seed=%d)", seed, seed)
	r := rand.New(rand.NewPCG(seed, 0x6b6d))

	s, _ := openTemp(t, Options{NoGroupCommit: r.IntN(2) == 0})
	m := model{tables: map[string]string{}, logs: map[string][]table.LogEntry{}, records: map[string]string{}, kv: map[string]map[string]string{}}
	ids := []string{"dc:1", "dc:1:th", "tg:-100", "local:x", "t5", "t6"}
	verbs := []api.Verb{api.VerbJoin, api.VerbPlay, api.VerbTrump, api.VerbTimeout}
	randBytes := func(max int) string {
		b := make([]byte, r.IntN(max+1))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return string(b)
	}
	// Log fields are text: JSON keeps valid UTF-8 only (other bytes become U+FFFD).
	runes := []rune("aZ09 |/:-_\"\\\n\x00äöüé♠♥♦♣🂡")
	randText := func(max int) string {
		rs := make([]rune, r.IntN(max+1))
		for i := range rs {
			rs[i] = runes[r.IntN(len(runes))]
		}
		return string(rs)
	}
	randRecords := func() []table.Record {
		var recs []table.Record
		for range r.IntN(3) {
			recs = append(recs, table.Record{Key: fmt.Sprintf("%s/m%d/g%d", ids[r.IntN(len(ids))], r.IntN(3), r.IntN(4)), Data: []byte(randBytes(300))})
		}
		return recs
	}
	lastSeq := func(id string) (uint64, bool) {
		l := m.logs[id]
		if len(l) == 0 {
			return 0, false
		}
		return l[len(l)-1].Seq, true
	}

	var commits, stale, deletes, kvs, reopens, checks int
	defer func() {
		t.Logf("%d commits, %d stale commits refused, %d deletes, %d kv writes, %d reopenings, %d checks",
			commits, stale, deletes, kvs, reopens, checks)
	}()
	for step := range *stepsFlag {
		id := ids[r.IntN(len(ids))]
		switch op := r.IntN(100); {
		case op < 50: // a commit that must succeed
			commits++
			c := table.Change{TableID: id, State: []byte(randBytes(3000)), Records: randRecords()}
			if r.IntN(10) > 0 {
				seq := uint64(1)
				if last, ok := lastSeq(id); ok {
					seq = last + 1
				}
				e := table.LogEntry{Seq: seq, Time: r.Int64(), Actor: fmt.Sprint("tg:", r.IntN(9)), Verb: verbs[r.IntN(len(verbs))], EventID: randText(12)}
				for range r.IntN(3) {
					e.Args = append(e.Args, randText(4))
				}
				c.Log = e
				c.PruneLog = r.IntN(8) == 0 // a match ended
			}
			if err := s.Commit(ctx, c); err != nil {
				t.Fatalf("step %d: Commit(%q): %v", step, id, err)
			}
			m.tables[id] = string(c.State)
			if c.PruneLog {
				m.logs[id] = nil
			}
			if c.Log.Verb != "" {
				m.logs[id] = append(m.logs[id], c.Log)
			}
			for _, rec := range c.Records {
				m.records[rec.Key] = string(rec.Data)
			}
		case op < 58: // a commit with a stale sequence number: refused, nothing written
			last, ok := lastSeq(id)
			if !ok {
				continue
			}
			stale++
			c := table.Change{TableID: id, State: []byte("stale"), Log: table.LogEntry{Seq: last - uint64(r.IntN(int(min(last, 3))+1)) + 2*uint64(r.IntN(2)), Verb: api.VerbPlay}, Records: randRecords()}
			if c.Log.Seq == last+1 {
				c.Log.Seq += 2 // a stale one, or one that skips ahead: not the next
			}
			if err := s.Commit(ctx, c); !errors.Is(err, table.ErrConflict) {
				t.Fatalf("step %d: stale Commit(%q) seq %d after %d: %v, want table.ErrConflict", step, id, c.Log.Seq, last, err)
			}
		case op < 68: // delete
			deletes++
			c := table.Change{TableID: id, Log: table.LogEntry{Seq: 99, Verb: api.VerbStop}, Records: randRecords()}
			if err := s.Commit(ctx, c); err != nil {
				t.Fatalf("step %d: delete %q: %v", step, id, err)
			}
			delete(m.tables, id)
			delete(m.logs, id)
			for _, rec := range c.Records {
				m.records[rec.Key] = string(rec.Data)
			}
		case op < 80: // kv
			kvs++
			bucket, key := fmt.Sprint("b", r.IntN(3)), fmt.Sprint("k", r.IntN(5))
			if r.IntN(3) == 0 {
				if err := s.Delete(ctx, bucket, key); err != nil {
					t.Fatalf("step %d: Delete: %v", step, err)
				}
				delete(m.kv[bucket], key)
			} else {
				v := randBytes(40)
				if err := s.Put(ctx, bucket, key, []byte(v)); err != nil {
					t.Fatalf("step %d: Put: %v", step, err)
				}
				if m.kv[bucket] == nil {
					m.kv[bucket] = map[string]string{}
				}
				m.kv[bucket][key] = v
			}
		case op < 84:
			reopens++
			s = reopen(t, s)
		default:
			checks++
			checkModel(t, step, s, m, ids)
		}
	}
	checkModel(t, *stepsFlag, s, m, ids)
	checkModel(t, *stepsFlag, reopen(t, s), m, ids)
}

func checkModel(t *testing.T, step int, s *Store, m model, ids []string) {
	ctx := t.Context()
	t.Helper()
	if got := allTables(t, s); !maps.Equal(got, m.tables) {
		t.Fatalf("step %d: tables %v, want %v", step, slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(m.tables)))
	}
	if got := allRecords(t, s); !maps.Equal(got, m.records) {
		t.Fatalf("step %d: %d records, want %d", step, len(got), len(m.records))
	}
	for _, id := range ids {
		if g, w := jsonOf(t, allLog(t, s, id)), jsonOf(t, m.logs[id]); g != w {
			t.Fatalf("step %d: log of %q:\n got %s\nwant %s", step, id, g, w)
		}
	}
	for bucket, want := range m.kv {
		for key, v := range want {
			got, ok, err := s.Get(ctx, bucket, key)
			if err != nil || !ok || string(got) != v {
				t.Fatalf("step %d: Get(%q, %q) = %q %v %v, want %q", step, bucket, key, got, ok, err, v)
			}
		}
		for k := range 5 {
			key := fmt.Sprint("k", k)
			if _, inModel := want[key]; !inModel {
				if _, ok, err := s.Get(ctx, bucket, key); ok || err != nil {
					t.Fatalf("step %d: Get(%q, %q) found a deleted key (%v)", step, bucket, key, err)
				}
			}
		}
	}
}

package table_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/core/league"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// copies starts n services on one store and KV, as n copies of the bot on one database, each
// resumed (watching the store); they close when the test ends.
func copies(t *testing.T, st tabletest.SharedStore, n int, tweak func(i int, c *table.Config)) []*table.Service {
	t.Helper()
	var out []*table.Service
	for i := range n {
		cfg := table.Config{Store: st, KV: st, Seed: uint64(i + 1), Shared: true, Robots: tabletest.RandomRobots}
		if tweak != nil {
			tweak(i, &cfg)
		}
		svc := tabletest.New(cfg)
		t.Cleanup(svc.Close)
		if err := svc.Resume(context.Background()); err != nil {
			t.Fatal(err)
		}
		out = append(out, svc)
	}
	return out
}

// seqAt is a table's sequence number as a copy holds it (0: not held).
func seqAt(svc *table.Service, id string) uint64 {
	ctx := context.Background()
	v, ok := svc.Seen(ctx, id, api.Player{ID: "nobody"})
	if !ok {
		return 0
	}
	return v.Seq
}

// converge waits until every copy holds the table at the same sequence number.
func converge(t *testing.T, svcs []*table.Service, id string) uint64 {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		seqs := make([]uint64, len(svcs))
		same := true
		for i, s := range svcs {
			seqs[i] = seqAt(s, id)
			same = same && seqs[i] == seqs[0]
		}
		if same {
			return seqs[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("the copies hold table %s at %v", id, seqs)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestCopiesTakeTurns: two copies on one store play a table with every command sent to the copy
// that did not apply the one before (which may not have heard of it yet): every command is
// applied, once, in order, and both copies end with the same table.
func TestCopiesTakeTurns(t *testing.T) {
	ledger := tabletest.NewLedger(mem.New())
	svcs := copies(t, ledger, 2, nil)
	tb, err := tabletest.Open(svcs[0], 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := tabletest.Alternate(svcs, tb, 300, "e"); err != nil {
		t.Fatal(err)
	}
	ledger.Check(t)
	for i := range 300 {
		if !ledger.Applied(tb.ID, fmt.Sprint("e", i)) {
			t.Errorf("command %d was answered but is not stored", i)
		}
	}
	if seq := converge(t, svcs, tb.ID); seq != uint64(len(ledger.Entries(tb.ID))) {
		t.Errorf("the copies hold seq %d, the store %d changes", seq, len(ledger.Entries(tb.ID)))
	}
}

// TestDoublePressIsAppliedOnce: the player to move presses their move's button twice at once,
// each press reaching another copy: one is applied, the other refused, at every table and turn.
func TestDoublePressIsAppliedOnce(t *testing.T) {
	ledger := tabletest.NewLedger(mem.New())
	svcs := copies(t, ledger, 2, nil)
	var tables []tabletest.Table
	for i := range 20 {
		tb, err := tabletest.Open(svcs[i%2], i)
		if err != nil {
			t.Fatal(err)
		}
		tables = append(tables, tb)
	}
	once, err := tabletest.DoublePresses(t.Context(), svcs, tables, 10)
	if err != nil || once != 200 {
		t.Errorf("%d of 200 double presses applied one press: %v", once, err)
	}
	ledger.Check(t)
}

// TestOneTableAtAPlace: two copies asked at once to open a table at one place open one; the
// other copy refuses, and both then know the table.
func TestOneTableAtAPlace(t *testing.T) {
	ledger := tabletest.NewLedger(mem.New())
	svcs := copies(t, ledger, 2, nil)
	for i := range 50 {
		place := api.Place{Platform: "test", Chat: fmt.Sprint("g", i)}
		var wg sync.WaitGroup
		opened := make([]bool, 2)
		for c := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p := api.Player{ID: fmt.Sprintf("p%d-%d", i, c), Name: "P"}
				r, _ := svcs[c].Handle(context.Background(), api.Command{Place: place, Actor: p, Verb: api.VerbNew})
				opened[c] = len(r) > 0 && r[0].Kind != api.KindError
			}()
		}
		wg.Wait()
		if opened[0] == opened[1] {
			t.Fatalf("place %d: opened at copy 0 %v, at copy 1 %v", i, opened[0], opened[1])
		}
		for c := range 2 {
			if id := svcs[c].TableAt(place); id == "" {
				// Not heard of yet: a command there finds it in the store.
				p := api.Player{ID: "x", Name: "X"}
				r, _ := svcs[c].Handle(context.Background(), api.Command{Place: place, Actor: p, Verb: api.VerbBoard})
				if len(r) == 0 || r[0].Kind == api.KindError && r[0].Reason == "err.no_table" {
					t.Errorf("place %d: copy %d does not find the table: %v", i, c, r)
				}
			}
		}
	}
}

// TestAnotherCopysChangeIsShown: a copy that holds a table shows what another copy applied to
// it (its outbox gets the table's new live message, so the web table's hub hears of it too), and
// a table another copy opened appears at it.
func TestAnotherCopysChangeIsShown(t *testing.T) {
	ledger := tabletest.NewLedger(mem.New())
	outs := []*tabletest.Outbox{{}, {}}
	svcs := copies(t, ledger, 2, func(i int, c *table.Config) {
		c.Outboxes = map[string]table.Outbox{"bench": outs[i]}
	})
	tb, err := tabletest.Open(svcs[0], 0)
	if err != nil {
		t.Fatal(err)
	}
	converge(t, svcs, tb.ID)
	if svcs[1].TableAt(tb.Place) != tb.ID {
		t.Fatalf("the table opened at copy 0 is not at copy 1")
	}
	if _, err := tabletest.Step(svcs[0], tb); err != nil {
		t.Fatal(err)
	}
	seq := converge(t, svcs, tb.ID)
	if m, ok := outs[1].Latest(api.KindLive); !ok || m.Version != seq {
		t.Errorf("copy 1 showed the live message at version %d (found %v), the table is at %d", m.Version, ok, seq)
	}
}

// TestTimersMoveToTheCopyWithTheLease: of two copies, the one holding the timers' lease plays the
// computer players; when it stops, the other takes the lease and the match goes on there to its
// end, each change applied once.
func TestTimersMoveToTheCopyWithTheLease(t *testing.T) {
	ledger := tabletest.NewLedger(mem.New())
	var leases table.LocalLeases // one process: as one lease service for both copies
	first := tabletest.New(table.Config{Store: ledger, KV: ledger, Seed: 1, Shared: true, Leases: &leases,
		Robots: tabletest.SlowRobots(time.Millisecond)})
	if err := first.Resume(context.Background()); err != nil {
		t.Fatal(err)
	}
	tabletest.WaitUntil(t, 20*time.Second, "the first copy holds the timers", func() bool { return len(first.Leases()) == 1 })
	second := copies(t, ledger, 1, func(_ int, c *table.Config) {
		c.Leases, c.Robots = &leases, tabletest.SlowRobots(time.Millisecond)
	})[0]
	if got := second.Leases(); len(got) != 0 {
		t.Fatalf("both copies hold the timers' lease: %v", got)
	}
	id := tabletest.OpenRobots(t, second, api.Place{Platform: "test", Chat: "robots"}, "stripes=3")
	tabletest.WaitUntil(t, 20*time.Second, "the computer players play", func() bool { return len(ledger.Entries(id)) > 20 })
	first.Close() // its computer players stop; the second copy takes over
	tabletest.WaitUntil(t, 20*time.Second, "the second copy holds the timers", func() bool { return len(second.Leases()) == 1 })
	tabletest.WaitUntil(t, 20*time.Second, "the match ends at the second copy", func() bool { st, _ := second.Status(id); return st == api.StatusOver })
	ledger.Check(t)
}

// TestLeagueAcrossCopies: two copies end matches of one person at two tables at the same
// instant, each copy's league worked out before the other's is stored, round after round: the
// league the copies stored is exactly what stats rebuild makes from the records, no rating
// update lost.
func TestLeagueAcrossCopies(t *testing.T) {
	endTogether(t, 2, true, 12)
}

// TestMatchEndsOfOnePersonAtOnce: at one copy, two matches of one person end at the same instant
// (their last commands stored together): neither waits for the other's league update (the
// league is compare-and-swap, not a lock across the commit), the store takes one and refuses the
// other, which is learned again, and the league is exactly what stats rebuild makes.
func TestMatchEndsOfOnePersonAtOnce(t *testing.T) {
	endTogether(t, 1, false, 6)
}

// endTogether plays rounds of two matches of one person that end at the same instant, at two
// tables served by n copies (shared: the copies share the store), and checks that every pair went
// together (a match end that waited for the other's would wait 2 s alone) and that the league is
// what stats rebuild makes from the records.
func endTogether(t *testing.T, n int, shared bool, rounds int) {
	t.Helper()
	gate := tabletest.NewTogether(tabletest.NewLedger(mem.New()))
	gate.Wait = 2 * time.Second
	clock := tabletest.NewTicking(time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC))
	svcs := copies(t, gate, n, func(_ int, c *table.Config) { c.Now, c.Shared = clock.Now, shared })
	tables, err := tabletest.OnePersonTwoTables(svcs)
	if err != nil {
		t.Fatal(err)
	}
	if err := tabletest.EndTogether(svcs, gate, tables, rounds); err != nil {
		t.Fatal(err)
	}
	if gate.Paired() != rounds {
		t.Fatalf("%d of %d pairs of match ends went together: one waited for the other", gate.Paired(), rounds)
	}
	records, err := tabletest.LeagueAsRebuilt(gate)
	if err != nil {
		t.Error(err)
	}
	if records != 2*rounds {
		t.Errorf("%d records, want %d", records, 2*rounds)
	}
	gate.SharedStore.(*tabletest.Ledger).Check(t)
}

// forgetsTogether is a store whose first Forget waits for a second one (or a moment, wait) and
// then both are written: two copies' forgets, each made from the records as they were before the
// other was written.
type forgetsTogether struct {
	tabletest.SharedStore
	wait   time.Duration
	mu     sync.Mutex
	first  chan struct{}
	paired int
}

func (g *forgetsTogether) Forget(ctx context.Context, f table.Forgetting) error {
	g.mu.Lock()
	if g.first == nil {
		held := make(chan struct{})
		g.first = held
		g.mu.Unlock()
		select {
		case <-held:
		case <-time.After(g.wait):
			g.mu.Lock()
			if g.first == held {
				g.first = nil
			}
			g.mu.Unlock()
		}
	} else {
		close(g.first)
		g.first = nil
		g.paired++
		g.mu.Unlock()
	}
	return g.SharedStore.Forget(ctx, f)
}

// TestForgetsOnTwoCopies: two people who played a match together are forgotten at the same
// moment, each at another copy (a store that would write both forgets together if both were
// made at once): both are gone from the record and the league, and the table they sat at
// forgets both. The forgets take turns under the lease "forget", the second made from what the
// first wrote.
func TestForgetsOnTwoCopies(t *testing.T) {
	ctx := t.Context()
	store := mem.New()
	gate := &forgetsTogether{SharedStore: store, wait: 300 * time.Millisecond}
	var leases table.LocalLeases // one process: as one lease service for both copies
	svcs := copies(t, gate, 2, func(_ int, c *table.Config) { c.Leases = &leases })
	var players []api.Player
	for _, id := range []string{"x", "y", "z", "w"} {
		players = append(players, api.Player{ID: id, Name: "Name-" + id})
	}
	tb, err := tabletest.OpenWith(svcs[0], api.Place{Platform: "test", Chat: "forget"}, players, "stripes=1")
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := tabletest.Step(svcs[0], tb); err != nil {
			t.Fatal(err)
		}
		if who, _, _ := svcs[0].Turn(tb.ID); who == "" {
			break
		}
	}
	converge(t, svcs, tb.ID)
	var wg sync.WaitGroup
	for i, id := range []string{"x", "y"} {
		wg.Go(func() {
			if n, err := svcs[i].Forget(ctx, id); err != nil || n != 1 {
				t.Errorf("copy %d forgetting %s: %d records, %v", i, id, n, err)
			}
		})
	}
	wg.Wait()
	if gate.paired != 0 {
		t.Errorf("%d pairs of forgets were made at once", gate.paired)
	}
	n := 0
	_ = store.Records(ctx, func(key string, data []byte) error {
		n++
		for _, p := range players[:2] {
			if strings.Contains(string(data), `"`+p.ID+`"`) || strings.Contains(string(data), p.Name) {
				t.Errorf("record %s names %s: %s", key, p.ID, data)
			}
		}
		return nil
	})
	if n != 1 {
		t.Errorf("%d records, want 1", n)
	}
	if _, err := tabletest.LeagueAsRebuilt(store); err != nil {
		t.Error(err)
	}
	for _, id := range []string{"x", "y"} {
		if _, ok, _ := store.Get(ctx, league.BucketRatings, id); ok {
			t.Errorf("%s still has a rating", id)
		}
	}
	st, _, _ := store.Table(ctx, tb.ID)
	for _, id := range []string{"x", "y"} {
		if strings.Contains(string(st), `"`+id+`"`) {
			t.Errorf("the table still names %s", id)
		}
	}
}

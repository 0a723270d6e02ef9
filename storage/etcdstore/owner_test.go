package etcdstore_test

// One owner per place (issue 31): the places' partitions spread over the copies, a dead copy's
// are taken over, and an owner that lost its lease cannot commit for its places afterwards.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage/etcdstore"
	"github.com/kontermatt/kontermatt/storage/etcdstore/etcdtest"
)

// waitSpread waits until the copies hold every partition of the places between them, each at
// most its fair share (the partitions divided by the copies, rounded up) and none held twice.
func waitSpread(tb testing.TB, within time.Duration, copies ...*botCopy) {
	tb.Helper()
	share := (table.Partitions + len(copies) - 1) / len(copies)
	var held []int
	spread := func() bool {
		seen := map[string]bool{}
		held = held[:0]
		fine := true
		for _, bc := range copies {
			names := bc.svc.Leases()
			held = append(held, len(names))
			fine = fine && len(names) <= share
			for _, name := range names {
				fine = fine && !seen[name]
				seen[name] = true
			}
		}
		return fine && len(seen) == table.Partitions
	}
	deadline := time.Now().Add(within)
	for !spread() {
		if time.Now().After(deadline) {
			tb.Fatalf("not within %v: the places spread over %d copies (they hold %v of %d partitions)", within, len(copies), held, table.Partitions)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestFencedCommit: a change fenced by a lease is written while the copy holds it; once the
// copy's etcd lease is gone (as after a pause past its time to live), the same fence fails with
// table.ErrFenced and writes nothing, and so does a fence from another claim to the lease.
func TestFencedCommit(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{})
	st := open(t, c, etcdstore.Options{Prefix: "fence/"})
	l := st.Leases("a", 2*time.Second)
	hold(t, l, "places/07", 5*time.Second)
	fence, ok := l.Fence("places/07")
	if !ok || !strings.HasPrefix(fence.Key, "fence/leases/places/07/") || fence.Rev == 0 {
		t.Fatalf("the fence of a held lease: %+v %v", fence, ok)
	}
	if _, ok := l.Fence("places/08"); ok {
		t.Fatal("a fence of a lease this copy does not hold")
	}
	change := func(seq uint64, f table.Fence) table.Change {
		return table.Change{TableID: "t1", State: []byte(fmt.Sprintf(`{"seq":%d}`, seq)),
			Log: table.LogEntry{Seq: seq, Time: 1, Verb: api.VerbPlay}, Fence: f}
	}
	if err := st.Commit(t.Context(), change(1, fence)); err != nil {
		t.Fatalf("a commit under a held lease: %v", err)
	}
	if err := st.Commit(t.Context(), change(2, table.Fence{Key: fence.Key, Rev: fence.Rev + 1})); !errors.Is(err, table.ErrFenced) {
		t.Fatalf("a commit under another claim to the lease: %v, want ErrFenced", err)
	}

	cli := rawClient(t, c)
	resp, err := cli.Get(t.Context(), fence.Key)
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("reading the lease's key: %v", err)
	}
	if _, err := cli.Revoke(t.Context(), clientv3.LeaseID(resp.Kvs[0].Lease)); err != nil {
		t.Fatal(err)
	}
	if err := st.Commit(t.Context(), change(2, fence)); !errors.Is(err, table.ErrFenced) {
		t.Fatalf("a commit after the lease ran out: %v, want ErrFenced", err)
	}
	if data, _, _ := st.Table(t.Context(), "t1"); string(data) != `{"seq":1}` {
		t.Errorf("a fenced commit wrote the table: %s", data)
	}
	if err := st.Commit(t.Context(), change(2, table.Fence{})); err != nil {
		t.Errorf("a commit without a fence: %v", err)
	}
}

// rawClient is a client of the cluster of the test's own, for what no copy would do.
func rawClient(tb testing.TB, c *etcdtest.Cluster) *clientv3.Client {
	tb.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 5 * time.Second})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cli.Close() })
	return cli
}

// TestPlacesSpreadOverCopies: three copies hold a third of the places' partitions each; when one
// is killed, the two others hold half each within 15 s, and a copy that joins gets its share.
func TestPlacesSpreadOverCopies(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{})
	robots := tabletest.SlowRobots(5 * time.Millisecond)
	a := startCopy(t, c, "spread/", "a", robots)
	waitSpread(t, 10*time.Second, a)
	b := startCopy(t, c, "spread/", "b", robots)
	d := startCopy(t, c, "spread/", "c", robots)
	waitSpread(t, 15*time.Second, a, b, d)
	for _, bc := range []*botCopy{a, b, d} {
		if n := len(bc.svc.Leases()); n < 20 {
			t.Errorf("a copy of three holds %d partitions of %d", n, table.Partitions)
		}
	}
	d.kill()
	killed := time.Now()
	waitSpread(t, 15*time.Second, a, b)
	t.Logf("the killed copy's places were taken over in %v (its lease lives 2 s)", time.Since(killed).Round(10*time.Millisecond))
	e := startCopy(t, c, "spread/", "e", robots)
	waitSpread(t, 15*time.Second, a, b, e)
}

// pause is a switch that freezes a copy: its computer players' decisions and its leases' calls
// wait while it is on, as in a process stopped (SIGSTOP, a long GC pause, a frozen VM).
type pause struct {
	mu      sync.Mutex
	on      bool
	resumed chan struct{}
	waiting atomic.Int32 // decisions waiting now
}

func (p *pause) freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.on, p.resumed = true, make(chan struct{})
}

func (p *pause) thaw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.on {
		p.on = false
		close(p.resumed)
	}
}

// wait returns once the copy is not frozen, or ctx ends.
func (p *pause) wait(ctx context.Context) {
	p.mu.Lock()
	on, resumed := p.on, p.resumed
	p.mu.Unlock()
	if on {
		select {
		case <-resumed:
		case <-ctx.Done():
		}
	}
}

// pausedRobots are computer players that think d, and wait while the copy is frozen.
func pausedRobots(p *pause, d time.Duration) func(level string, seed uint64) table.Decider {
	inner := tabletest.SlowRobots(d)
	return func(level string, seed uint64) table.Decider {
		return pausedPlayer{inner(level, seed), p}
	}
}

type pausedPlayer struct {
	table.Decider
	p *pause
}

func (pp pausedPlayer) Decide(ctx context.Context, v core.View) core.Move {
	pp.p.waiting.Add(1)
	pp.p.wait(ctx)
	pp.p.waiting.Add(-1)
	return pp.Decider.Decide(ctx, v)
}

// pausedLeases are a copy's leases as a frozen process sees them: while frozen, nothing it asks
// of them answers, and it learns of a lease lost (its session's lease ran out in the cluster)
// only lateBy after it is thawed, as a process does once it runs again and its keep-alive is
// answered. Meanwhile it believes it holds the lease, and keeps the fence it was given.
type pausedLeases struct {
	*etcdstore.Leases
	p      *pause
	lateBy time.Duration
	mu     sync.Mutex
	fences map[string]table.Fence
}

func (pl *pausedLeases) Hold(ctx context.Context, name string) (context.Context, func(), error) {
	pl.p.wait(ctx)
	held, release, err := pl.Leases.Hold(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	f, _ := pl.Leases.Fence(name)
	pl.mu.Lock()
	pl.fences[name] = f
	pl.mu.Unlock()
	view, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-view.Done():
			return
		case <-held.Done():
		}
		pl.p.wait(view)
		select {
		case <-view.Done():
		case <-time.After(pl.lateBy):
		}
		cancel()
	}()
	return view, func() {
		cancel()
		release()
		pl.mu.Lock()
		delete(pl.fences, name)
		pl.mu.Unlock()
	}, nil
}

func (pl *pausedLeases) Copies(ctx context.Context) (int, error) {
	pl.p.wait(ctx)
	return pl.Leases.Copies(ctx)
}

func (pl *pausedLeases) Taken(ctx context.Context, prefix string) (map[string]bool, error) {
	pl.p.wait(ctx)
	return pl.Leases.Taken(ctx, prefix)
}

func (pl *pausedLeases) Fence(name string) (table.Fence, bool) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	f, ok := pl.fences[name]
	return f, ok
}

// ownerObserver counts a copy's computer decisions and its commits the store refused under
// their fence.
type ownerObserver struct {
	decisions, fenced atomic.Int64
}

func (o *ownerObserver) Command(api.Verb, string, time.Duration) {}
func (o *ownerObserver) Decision(string, time.Duration)          { o.decisions.Add(1) }
func (o *ownerObserver) Commit(_ time.Duration, err error) {
	if errors.Is(err, table.ErrFenced) {
		o.fenced.Add(1)
	}
}

// TestPausedOwnerIsFenced: the owner of a table of computer players is frozen in the middle of
// a decision past its lease's time to live; the other copy takes the place over and plays on.
// Thawed, the old owner still believes it owns the place and finishes its decision: the store
// refuses the move under the lease it lost, the copy stops acting for the place, and it commits
// nothing for it afterwards; the match ends at the new owner, every change applied once.
func TestPausedOwnerIsFenced(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{})
	var p pause
	obs := &ownerObserver{}
	a := startCopyWith(t, c, "paused/", "a", func(cfg *table.Config) {
		cfg.Robots, cfg.Observe = pausedRobots(&p, 5*time.Millisecond), obs
		cfg.Leases = &pausedLeases{Leases: cfg.Leases.(*etcdstore.Leases), p: &p, lateBy: 3 * time.Second, fences: map[string]table.Fence{}}
	})
	waitSpread(t, 10*time.Second, a)
	b := startCopy(t, c, "paused/", "b", tabletest.SlowRobots(20*time.Millisecond))
	waitSpread(t, 15*time.Second, a, b)
	// A place of copy a's in the lower half of the partitions: a copy that has more than its
	// share gives the upper ones up, so the new owner keeps this one when copy a is back.
	var place api.Place
	for i := 0; ; i++ {
		place = api.Place{Platform: "test", Chat: fmt.Sprintf("paused-%d", i)}
		if a.svc.Owns(place) && table.PlaceLease(place) < fmt.Sprintf("places/%02d", table.Partitions/2) {
			break
		}
	}
	id := tabletest.OpenRobots(t, b.svc, place, "stripes=10")
	tabletest.WaitUntil(t, 20*time.Second, "copy a plays", func() bool { return len(a.ledger.Entries(id)) > 10 })
	p.freeze()
	tabletest.WaitUntil(t, 10*time.Second, "copy a thinks, frozen", func() bool { return p.waiting.Load() > 0 })
	byA := len(a.ledger.Entries(id))
	byB := len(b.ledger.Entries(id))

	// Its session's lease runs out in the cluster (revoked, as the cluster does after the time
	// to live): its keys go, among the members and in the elections.
	cli := rawClient(t, c)
	resp, err := cli.Get(t.Context(), "paused/members/a/", clientv3.WithPrefix())
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("copy a among the members: %v %v", resp, err)
	}
	lease, err := strconv.ParseInt(string(resp.Kvs[0].Key[len("paused/members/a/"):]), 16, 64)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Revoke(t.Context(), clientv3.LeaseID(lease)); err != nil {
		t.Fatal(err)
	}
	tabletest.WaitUntil(t, 15*time.Second, "copy b owns the place and plays on", func() bool {
		return b.svc.Owns(place) && len(b.ledger.Entries(id)) > byB+3
	})
	if !a.svc.Owns(place) {
		t.Fatal("the frozen copy learned of its loss: the test does not show the fence")
	}
	p.thaw()
	tabletest.WaitUntil(t, 10*time.Second, "the store refuses copy a's move", func() bool { return obs.fenced.Load() > 0 })
	tabletest.WaitUntil(t, 10*time.Second, "copy a no longer owns the place", func() bool { return !a.svc.Owns(place) })
	waitSpread(t, 15*time.Second, a, b)
	tabletest.WaitUntil(t, 120*time.Second, "the match ends", func() bool { st, _ := b.svc.Status(id); return st == api.StatusOver })
	if n := len(a.ledger.Entries(id)); n != byA {
		t.Errorf("copy a committed %d changes at the place after it lost its lease", n-byA)
	}
	if b.svc.Owns(place) == a.svc.Owns(place) {
		t.Errorf("copy a owns the place: %v, copy b: %v", a.svc.Owns(place), b.svc.Owns(place))
	}
	checkLedgers(t, []string{id}, a, b)
}

// BenchmarkOwners plays 200 tables of computer players on 1, 2 and 3 copies of the bot on a
// three-member cluster: each copy plays the tables of the places it owns. An operation is one
// computer decision, at any copy; each copy's share of the decisions is reported (share-a, ...)
// and must be 40–60% of them with 2 copies and 25–42% with 3 (checked from 2,000 decisions on:
// run with -benchtime=4000x). The tables are opened through the copies in turn, with the
// computers held until all are open, so where a table is opened says nothing of who plays it.
func BenchmarkOwners(b *testing.B) {
	c := etcdtest.Start(b, etcdtest.Options{})
	const tables = 200
	bounds := map[int][2]float64{2: {0.40, 0.60}, 3: {0.25, 0.42}}
	for _, n := range []int{1, 2, 3} {
		prefix := fmt.Sprintf("owners%d/", prefixes.Add(1))
		obs := make([]*ownerObserver, n)
		var hold pause
		hold.freeze()
		var copies []*botCopy
		for i := range n {
			obs[i] = &ownerObserver{}
			copies = append(copies, startCopyPatient(b, c, prefix, string(rune('a'+i)), 30*time.Second, etcdstore.DefaultLeaseTTL, func(cfg *table.Config) {
				cfg.Robots, cfg.Observe = pausedRobots(&hold, 0), obs[i]
			}))
		}
		waitSpread(b, 60*time.Second, copies...)
		for i := range tables {
			tabletest.OpenRobots(b, copies[i%n].svc, api.Place{Platform: "bench", Chat: fmt.Sprintf("t%03d", i)}, "stripes=20")
		}
		hold.thaw()
		b.Run(fmt.Sprintf("copies=%d", n), func(b *testing.B) {
			from := make([]int64, n)
			for i, o := range obs {
				from[i] = o.decisions.Load()
			}
			made := func() (total int64, each []int64) {
				for i, o := range obs {
					d := o.decisions.Load() - from[i]
					each, total = append(each, d), total+d
				}
				return total, each
			}
			deadline := time.Now().Add(5 * time.Minute)
			for total, _ := made(); total < int64(b.N) && time.Now().Before(deadline); total, _ = made() {
				time.Sleep(5 * time.Millisecond)
			}
			b.StopTimer()
			total, each := made()
			b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "decisions/s")
			var shares []string
			for i, d := range each {
				share := float64(d) / float64(max(total, 1))
				b.ReportMetric(100*share, "%share-"+string(rune('a'+i)))
				shares = append(shares, fmt.Sprintf("%c %.1f%% (%d)", 'a'+i, 100*share, d))
				if bound, ok := bounds[n]; ok && total >= 2000 && (share < bound[0] || share > bound[1]) {
					b.Errorf("copy %c made %.1f%% of %d decisions, want %.0f–%.0f%%", 'a'+i, 100*share, total, 100*bound[0], 100*bound[1])
				}
			}
			b.Logf("%d copies, %d tables: %d decisions in %v: %s", n, tables, total, b.Elapsed().Round(time.Millisecond), strings.Join(shares, ", "))
		})
		for _, bc := range copies {
			bc.stop() // before the next copies start: their tables would play on
		}
	}
}

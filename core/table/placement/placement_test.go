package placement_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/core/store"
	"github.com/kontermatt/kontermatt/core/table/placement"
)

// waitUntil fails the test unless cond holds within d.
func waitUntil(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(d); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("not within %v: %s", d, what)
		}
	}
}

// told keeps what an Owner told its Config.Changed and Janitor: the leases held, as told.
type told struct {
	mu      sync.Mutex
	held    map[string]bool
	in      map[string]func(string) bool
	janitor int
}

func (tl *told) config(leases store.Leases) placement.Config {
	return placement.Config{Leases: leases,
		Changed: func(lease string, held bool, in func(string) bool) {
			tl.mu.Lock()
			defer tl.mu.Unlock()
			if tl.held == nil {
				tl.held, tl.in = map[string]bool{}, map[string]func(string) bool{}
			}
			if tl.held[lease] == held {
				panic(fmt.Sprintf("told twice that lease %s is held %v", lease, held))
			}
			tl.held[lease], tl.in[lease] = held, in
		},
		Janitor: func(context.Context) {
			tl.mu.Lock()
			defer tl.mu.Unlock()
			tl.janitor++
		}}
}

// leases lists the leases told held, sorted.
func (tl *told) leases() []string {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	var out []string
	for name, held := range tl.held {
		if held {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// covers reports whether a lease told held covers the place.
func (tl *told) covers(placeKey string) bool {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	for name, held := range tl.held {
		if held && tl.in[name](placeKey) {
			return true
		}
	}
	return false
}

// running is an Owner whose Run goes on until stop.
type running struct {
	*placement.Owner
	told *told
	stop func() // ends Run and waits for it
}

func run(leases store.Leases) *running {
	tl := &told{}
	o := placement.New(tl.config(leases))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		o.Run(ctx)
	}()
	return &running{Owner: o, told: tl, stop: func() { cancel(); <-done }}
}

// keys are place keys, spread over every partition.
func keys() []string {
	out := make([]string, 64*20)
	for i := range out {
		out[i] = fmt.Sprintf("telegram:%d", -1001000000-i)
	}
	return out
}

func TestPlacesSpreadOverThePartitions(t *testing.T) {
	count := map[string]int{}
	for _, k := range keys() {
		if got := placement.Lease(k); got != fmt.Sprintf("places/%02d", placement.Partition(k)) {
			t.Fatalf("the lease of %s is %s, of partition %d", k, got, placement.Partition(k))
		}
		count[placement.Lease(k)]++
	}
	if len(count) != placement.Partitions {
		t.Fatalf("places fell in %d partitions, want %d", len(count), placement.Partitions)
	}
	for name, n := range count {
		if n < 5 || n > 40 {
			t.Errorf("partition %s has %d places of %d", name, n, len(keys()))
		}
	}
}

// TestWithoutLeasesEveryPlaceIsOwned: the only copy, without leases, owns every place from the
// start, runs the janitor, holds no lease and fences nothing; Run has nothing to do.
func TestWithoutLeasesEveryPlaceIsOwned(t *testing.T) {
	o := placement.New(placement.Config{})
	for _, k := range keys()[:64] {
		if !o.Owns(k) {
			t.Fatalf("%s is not owned", k)
		}
		if f, err := o.Fence(k); err != nil || f != (store.Fence{}) {
			t.Fatalf("the fence of %s: %v, %v", k, f, err)
		}
	}
	if !o.RunsJanitor() || o.Leases() != nil {
		t.Errorf("janitor %v, leases %v", o.RunsJanitor(), o.Leases())
	}
	done := make(chan struct{})
	go func() { o.Run(t.Context()); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run without leases does not return")
	}
}

// TestOneLeaseForEveryPlace: with leases that do not spread (bbolt's, one process), the copy that
// holds the lease of every place owns them all and runs the janitor, and is told so once; a
// second copy owns none until the first stops, and is told it gained them then.
func TestOneLeaseForEveryPlace(t *testing.T) {
	var leases store.LocalLeases
	first := run(&leases)
	waitUntil(t, 10*time.Second, "the first copy owns the places", func() bool { return first.RunsJanitor() })
	second := run(&leases)
	defer second.stop()
	for _, k := range keys()[:64] {
		if !first.Owns(k) || second.Owns(k) || !first.told.covers(k) {
			t.Fatalf("%s: the first copy owns it %v (told %v), the second %v", k, first.Owns(k), first.told.covers(k), second.Owns(k))
		}
	}
	if got := first.Leases(); !slices.Equal(got, []string{"places"}) || !slices.Equal(first.told.leases(), got) {
		t.Errorf("the first copy holds %v, was told %v", got, first.told.leases())
	}
	if first.told.janitor != 1 || second.Leases() != nil || second.RunsJanitor() {
		t.Errorf("janitor ran %d times; the second copy holds %v", first.told.janitor, second.Leases())
	}
	first.stop()
	if first.Owns(keys()[0]) || len(first.told.leases()) != 0 {
		t.Errorf("the stopped copy owns %v, was told it holds %v", first.Leases(), first.told.leases())
	}
	waitUntil(t, 10*time.Second, "the second copy owns the places", func() bool { return second.Owns(keys()[1]) })
	if !second.told.covers(keys()[1]) || !second.RunsJanitor() {
		t.Errorf("the second copy was told %v, runs the janitor %v", second.told.leases(), second.RunsJanitor())
	}
}

// cluster is a store.Spread of copies in one process: LocalLeases shared by every copy, as
// many copies alive as copies says.
type cluster struct {
	leases store.LocalLeases
	copies atomic.Int32
	rev    atomic.Int64
}

// member is one copy's view of the cluster: the leases it holds are its own, with their fences.
type member struct {
	*cluster
	mu     sync.Mutex
	fences map[string]store.Fence
}

func (c *cluster) join() *member {
	c.copies.Add(1)
	return &member{cluster: c, fences: map[string]store.Fence{}}
}

func (m *member) Hold(ctx context.Context, name string) (context.Context, func(), error) {
	held, release, err := m.leases.Hold(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	f := store.Fence{Key: name, Rev: m.rev.Add(1)}
	m.mu.Lock()
	m.fences[name] = f
	m.mu.Unlock()
	context.AfterFunc(held, func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.fences[name] == f {
			delete(m.fences, name)
		}
	})
	return held, release, nil
}

func (m *member) Held() []string { return m.leases.Held() }

func (m *member) Copies(context.Context) (int, error) { return int(m.copies.Load()), nil }

func (m *member) Taken(_ context.Context, prefix string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, name := range m.leases.Held() {
		if len(name) > len(prefix) && name[:len(prefix)] == prefix {
			out[name] = true
		}
	}
	return out, nil
}

func (m *member) Fence(name string) (store.Fence, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f, ok := m.fences[name]
	return f, ok
}

// owners counts the copies that own the place, and whether each was told of it.
func owners(t *testing.T, k string, copies ...*running) int {
	t.Helper()
	n := 0
	for _, c := range copies {
		if c.Owns(k) {
			n++
			if !c.told.covers(k) {
				t.Errorf("a copy owns %s but was not told so (told %v)", k, c.told.leases())
			}
		}
	}
	return n
}

// TestPartitionsSpreadOverTheCopies: two copies on one store hold half the partitions each, each
// place owned by one, told of what it holds, one running the janitor; when one stops, the other
// takes its partitions over. Each copy's fence for a place it owns is its partition's lease.
func TestPartitionsSpreadOverTheCopies(t *testing.T) {
	var c cluster
	a, b := run(c.join()), run(c.join())
	defer b.stop()
	half := func() bool {
		return len(a.Leases()) == placement.Partitions/2 && len(b.Leases()) == placement.Partitions/2
	}
	waitUntil(t, 30*time.Second, "the copies hold half the partitions each", half)
	for _, k := range keys() {
		if n := owners(t, k, a, b); n != 1 {
			t.Fatalf("%s is owned by %d copies", k, n)
		}
	}
	if a.RunsJanitor() == b.RunsJanitor() {
		t.Errorf("the janitor runs at copy a %v, b %v", a.RunsJanitor(), b.RunsJanitor())
	}
	for _, c := range []*running{a, b} {
		if !slices.Equal(c.Leases(), c.told.leases()) {
			t.Errorf("a copy holds %v, was told %v", c.Leases(), c.told.leases())
		}
	}
	k := keys()[0]
	owner, other := a, b
	if !a.Owns(k) {
		owner, other = b, a
	}
	if f, err := owner.Fence(k); err != nil || f.Key != placement.Lease(k) {
		t.Errorf("the owner's fence of %s: %+v, %v", k, f, err)
	}
	if _, err := other.Fence(k); err != store.ErrFenced {
		t.Errorf("the other copy's fence of %s: %v, want ErrFenced", k, err)
	}

	a.stop()
	c.copies.Add(-1)
	if len(a.Leases()) != 0 || len(a.told.leases()) != 0 {
		t.Errorf("the stopped copy holds %v, was told %v", a.Leases(), a.told.leases())
	}
	waitUntil(t, 30*time.Second, "the other copy holds every partition", func() bool { return len(b.Leases()) == placement.Partitions })
	for _, k := range keys() {
		if n := owners(t, k, b); n != 1 {
			t.Fatalf("%s is not owned by the copy left", k)
		}
	}
	if !b.RunsJanitor() {
		t.Error("the copy left does not run the janitor")
	}
}

// TestFencedGivesThePlaceUp: a place whose change the store refused under its fence is not owned
// from that moment, its partition's lease is given up and the copy told so; alone on the store,
// the copy takes it again at its next look.
func TestFencedGivesThePlaceUp(t *testing.T) {
	var c cluster
	a := run(c.join())
	defer a.stop()
	waitUntil(t, 30*time.Second, "the copy holds every partition", func() bool { return len(a.Leases()) == placement.Partitions })
	k := keys()[3]
	lease := placement.Lease(k)
	a.Fenced(k)
	if a.Owns(k) {
		t.Fatal("a fenced place is still owned")
	}
	if _, err := a.Fence(k); err != store.ErrFenced {
		t.Errorf("the fence of a fenced place: %v", err)
	}
	waitUntil(t, 10*time.Second, "the copy is told it lost the lease", func() bool { return !slices.Contains(a.told.leases(), lease) })
	waitUntil(t, 30*time.Second, "the copy owns the place again", func() bool { return a.Owns(k) && a.told.covers(k) })
}

package table

// One owner per place (issue 31). Every copy of the bot takes commands for every table (commit
// by compare-and-swap, cluster.go), but what happens to a place over time without a command, its
// timers and its computer players, and the telling of its story (the adapters ask Owns), is the
// work of one copy: the owner of the place's partition. Places are hashed into Partitions
// partitions, and each partition is a lease (Config.Leases). With Leases that spread (Spread,
// etcd's), the partitions spread evenly over the live copies, as Kafka's consumer groups spread
// a topic's partitions: each copy holds about its fair share, gives the excess up when copies
// join, and takes over partitions nobody holds (a copy that died or stopped). What an owner
// commits as owner is fenced by the partition's lease (Change.Fence): a copy paused past its
// lease cannot write for the place afterwards. With Leases that do not spread (LocalLeases: the
// only copy, on bbolt) the copy holds one lease for every place, allLease.

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Partitions is how many partitions the places are hashed into: enough to spread evenly over a
// handful of copies (with 3, each holds 21 or 22), few enough that a copy holds each one's lease
// at little cost (an etcd key, and a watch while it waits).
const Partitions = 64

// placeLeases is the common prefix of the partitions' lease names.
const placeLeases = "places/"

// allLease is the lease of every place at once, held with Leases that do not spread: one copy
// owns everything, and a second copy in the same process (tests) waits for it.
const allLease = "places"

// spreadEvery is how often a copy looks at the copies and the partitions' leases: the longest it
// waits to take over partitions a copy that died left (after their time to live) or to give its
// excess up to a copy that joined.
const spreadEvery = 500 * time.Millisecond

// tryHoldFor is how long a copy waits in line for a partition it found free: another copy that
// asked at the same moment has it then, and this one gives up its place in line. Long enough
// for a store slow to answer (a copy that asks for many partitions at once, on a busy machine,
// waited longer than a second for every one and gave them all up again), short enough that a
// dead copy's partitions are taken over within 15 s.
const tryHoldFor = 3 * time.Second

// partitionOf gives the partition of a place key.
func partitionOf(placeKey string) int {
	h := fnv.New32a()
	h.Write([]byte(placeKey))
	return int(h.Sum32() % Partitions)
}

// partitionLease names the lease of partition i.
func partitionLease(i int) string { return fmt.Sprintf("%s%02d", placeLeases, i) }

// PlaceLease names the lease whose holder owns the place (with Leases that spread): for tests and
// for a host reading /healthz.
func PlaceLease(p Place) string { return partitionLease(partitionOf(p.Key())) }

// ownership is what this copy owns now.
type ownership struct {
	all   atomic.Bool             // every place: allLease held
	parts [Partitions]atomic.Bool // the partitions held (Spread)
	mu    sync.Mutex
	held  map[int]*holding // each partition held
}

// holding is one hold of a partition's lease: a partition given up and won again is another.
type holding struct {
	release func() // gives the lease up; may be called more than once
}

// Owns reports whether this copy owns the place now: it fires the place's timers, runs its
// computer players and tells its story. Always true for the only copy (no Config.Leases); with
// Leases, while this copy holds the place's partition (or allLease). Owning is a promise about
// now only: a copy may lose a place a moment later, which the store's fence then enforces.
func (s *Service) Owns(p Place) bool { return s.ownsKey(p.Key()) }

func (s *Service) ownsKey(placeKey string) bool {
	return s.cfg.Leases == nil || s.own.all.Load() || s.own.parts[partitionOf(placeKey)].Load()
}

// ownsTable reports whether this copy owns the table's place (table lock held).
func (s *Service) ownsTable(t *tbl) bool { return s.ownsKey(t.st.Place.Key()) }

// runsJanitor reports whether this copy prunes the closed tables and posts the month's tables:
// the owner of partition 0, so that exactly one copy does.
func (s *Service) runsJanitor() bool {
	return s.cfg.Leases == nil || s.own.all.Load() || s.own.parts[0].Load()
}

// keepPlaces holds this copy's places until the service closes: its share of the partitions
// with Leases that spread, else allLease.
func (s *Service) keepPlaces() {
	defer s.wg.Done()
	if sp, ok := s.cfg.Leases.(Spread); ok {
		s.spread(sp)
		return
	}
	s.keepAll()
}

// keepAll holds allLease whenever it can until the service closes: on taking it the copy arms
// every table's timer, lets the computer players think and runs the janitor once; on losing it
// it stops them until it holds the lease again.
func (s *Service) keepAll() {
	for {
		held, release, err := s.cfg.Leases.Hold(s.ctx, allLease)
		if err != nil {
			if s.ctx.Err() != nil {
				return
			}
			s.cfg.Log.Warn("waiting for the places' lease", "err", err)
			select {
			case <-s.ctx.Done():
				return
			case <-time.After(time.Second):
			}
			continue
		}
		s.own.all.Store(true)
		s.observeLease(allLease, true)
		s.cfg.Log.Info("this copy owns every place now", "lease", allLease)
		s.rearm(func(*tbl) bool { return true })
		s.prune(held)
		s.postSeasons(held)
		<-held.Done()
		release()
		s.own.all.Store(false)
		s.observeLease(allLease, false)
		if s.ctx.Err() != nil {
			return
		}
		s.cfg.Log.Warn("this copy lost the places' lease; another copy owns them", "lease", allLease)
		s.rearm(func(*tbl) bool { return true }) // stops them: arm does nothing without the lease
	}
}

// spread keeps this copy's fair share of the partitions until the service closes: every
// spreadEvery it counts the live copies, gives up what it holds beyond ceil(Partitions/copies),
// and takes partitions nobody holds up to that share. A copy that died loses its leases with its
// time to live, and the survivors take its partitions at their next look.
func (s *Service) spread(sp Spread) {
	// Each copy tries the free partitions from a place of its own, so that copies taking over
	// at the same moment seldom ask for the same one.
	start := rand.IntN(Partitions)
	tick := time.NewTicker(spreadEvery)
	defer tick.Stop()
	for {
		s.balance(sp, start)
		select {
		case <-s.ctx.Done():
			return // each held partition ends with the service's context
		case <-tick.C:
		}
	}
}

// balance takes or gives up partitions once, towards this copy's fair share.
func (s *Service) balance(sp Spread, start int) {
	n, err := sp.Copies(s.ctx)
	if err != nil || n < 1 {
		if s.ctx.Err() == nil {
			s.cfg.Log.Debug("counting the copies", "err", err)
		}
		return
	}
	share := (Partitions + n - 1) / n
	mine := s.heldPartitions()
	if len(mine) > share {
		// A copy joined: the highest partitions go back, and the copies below their share take
		// them at their next look.
		var wg sync.WaitGroup
		for _, i := range mine[share:] {
			wg.Go(func() { s.giveUp(i) }) // each a call to the store: all at once
		}
		wg.Wait()
		s.cfg.Log.Info("this copy gave places up to another copy", "partitions", len(mine)-share, "copies", n)
		return
	}
	if len(mine) == share {
		return
	}
	taken, err := sp.Taken(s.ctx, placeLeases)
	if err != nil {
		s.cfg.Log.Debug("reading the partitions' leases", "err", err)
		return
	}
	// The free partitions up to the share, asked for all at once: a copy taking over waits for
	// one round, not one per partition another copy asked for at the same moment.
	var free []int
	for k := range Partitions {
		i := (start + k) % Partitions
		if len(mine)+len(free) >= share {
			break
		}
		if !taken[partitionLease(i)] && !s.own.parts[i].Load() {
			free = append(free, i)
		}
	}
	var took atomic.Int32
	var wg sync.WaitGroup
	for _, i := range free {
		wg.Go(func() {
			if s.tryHold(sp, i) {
				took.Add(1)
			}
		})
	}
	wg.Wait()
	if more := int(took.Load()); more > 0 {
		s.cfg.Log.Info("this copy owns more places now", "partitions", len(mine)+more, "copies", n)
	}
}

// heldPartitions lists the partitions this copy holds, in order.
func (s *Service) heldPartitions() []int {
	s.own.mu.Lock()
	defer s.own.mu.Unlock()
	out := make([]int, 0, len(s.own.held))
	for i := range s.own.held {
		out = append(out, i)
	}
	slices.Sort(out)
	return out
}

// tryHold asks for partition i's lease, waiting in line at most tryHoldFor; it reports whether
// this copy holds it now.
func (s *Service) tryHold(sp Spread, i int) bool {
	name := partitionLease(i)
	ctx, cancel := context.WithCancel(s.ctx)
	type answer struct {
		held    context.Context
		release func()
		err     error
	}
	got := make(chan answer, 1)
	go func() {
		held, release, err := sp.Hold(ctx, name)
		got <- answer{held, release, err}
	}()
	var a answer
	select {
	case a = <-got:
	case <-time.After(tryHoldFor):
		cancel() // another copy has it: this one leaves the line
		a = <-got
	}
	if a.err != nil || a.held.Err() != nil {
		if a.release != nil {
			a.release()
		}
		cancel()
		return false
	}
	h := &holding{release: func() { a.release(); cancel() }}
	s.own.mu.Lock()
	if s.own.held == nil {
		s.own.held = map[int]*holding{}
	}
	s.own.held[i] = h
	s.own.parts[i].Store(true)
	s.own.mu.Unlock()
	s.observeLease(name, true)
	s.cfg.Log.Debug("this copy owns a partition of the places", "lease", name)
	s.rearm(inPartition(i))
	if i == 0 {
		s.prune(a.held)
		s.postSeasons(a.held)
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		<-a.held.Done()
		s.lost(i, h)
	}()
	return true
}

// giveUp gives partition i's lease up (held: another copy may take it at once).
func (s *Service) giveUp(i int) {
	s.own.mu.Lock()
	h := s.own.held[i]
	s.own.mu.Unlock()
	if h != nil {
		h.release() // its held context ends: lost follows
	}
}

// lost notes that hold h of partition i's lease ended (given up, lost with the store out of
// reach, or the service closing): the place's timers stop and its computer players stop
// thinking.
func (s *Service) lost(i int, h *holding) {
	h.release()
	s.own.mu.Lock()
	current := s.own.held[i] == h
	if current {
		delete(s.own.held, i)
		s.own.parts[i].Store(false)
	}
	s.own.mu.Unlock()
	if !current {
		return // the partition was won again meanwhile
	}
	name := partitionLease(i)
	s.observeLease(name, false)
	if s.ctx.Err() != nil {
		return
	}
	s.cfg.Log.Debug("this copy no longer owns a partition of the places", "lease", name)
	s.rearm(inPartition(i))
}

// inPartition selects the tables whose place is in partition i (table lock held).
func inPartition(i int) func(*tbl) bool {
	return func(t *tbl) bool { return partitionOf(t.st.Place.Key()) == i }
}

// rearm arms the timer and schedules the computer players of the tables which, as this copy's
// leases now say: started where it owns the place, stopped where it does not.
func (s *Service) rearm(which func(*tbl) bool) {
	for _, t := range s.all() {
		t.mu.Lock()
		if which(t) {
			s.arm(t)
			s.scheduleRobot(t)
		}
		t.mu.Unlock()
	}
}

// fence gives the fence of the owner's work at the table (table lock held): none without Leases
// that spread, the place's partition's lease with them; ErrFenced when this copy no longer holds
// it.
func (s *Service) fence(t *tbl) (Fence, error) {
	sp, ok := s.cfg.Leases.(Spread)
	if !ok {
		return Fence{}, nil
	}
	i := partitionOf(t.st.Place.Key())
	if s.own.parts[i].Load() {
		if f, ok := sp.Fence(partitionLease(i)); ok {
			return f, nil
		}
	}
	return Fence{}, fmt.Errorf("table %q: %w", t.st.ID, ErrFenced)
}

// PlaceFence gives the fence under which this copy owns a place now: its partition's lease as
// this copy holds it (with Leases that spread); false without one (the only copy, or a place
// another copy owns). An adapter marks what it sends for the place with it (a message record's
// claim), so that the copy that holds the place next knows a mark of another fence for one of a
// copy that lost the place.
func (s *Service) PlaceFence(p Place) (Fence, bool) {
	sp, ok := s.cfg.Leases.(Spread)
	i := partitionOf(p.Key())
	if !ok || !s.own.parts[i].Load() {
		return Fence{}, false
	}
	return sp.Fence(partitionLease(i))
}

// fenced notes that the store refused the owner's work at the table under its partition's lease
// (table lock held): this copy lost the place, whatever its own view says, and stops acting for
// it; the copy that holds the lease now plays on.
func (s *Service) fenced(t *tbl, err error) {
	i := partitionOf(t.st.Place.Key())
	s.cfg.Log.Warn("this copy lost the place's lease before its change was stored; the new owner plays on",
		"table", t.st.ID, "lease", partitionLease(i), "err", err)
	s.own.parts[i].Store(false) // at once: the release below ends in lost, in a goroutine of its own
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.giveUp(i)
	}()
}

// errFencedRefusal is commit's answer for a change the store refused under its fence.
var errFencedRefusal = &userError{key: "err.internal"}

// isFenced tells a commit's error is the store's refusal of a fence.
func isFenced(err error) bool { return errors.Is(err, ErrFenced) }

// Leases are the leases the service holds now (of Config.Leases; the adapters may hold others
// there), sorted; nil without any.
func (s *Service) Leases() []string {
	if s.cfg.Leases == nil {
		return nil
	}
	if s.own.all.Load() {
		return []string{allLease}
	}
	var out []string
	for _, i := range s.heldPartitions() {
		out = append(out, partitionLease(i))
	}
	return out
}

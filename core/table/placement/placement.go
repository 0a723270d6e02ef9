// Package placement decides which copy of the bot owns which place (issue 31), apart from the
// tables it owns them for: it knows places by their keys only.
//
// Every copy of the bot takes commands for every table (the engine commits by compare-and-swap),
// but what happens to a place over time without a command, its timers and its computer players,
// and the telling of its story (the adapters ask Owns), is the work of one copy: the owner of the
// place's partition. Places are hashed into Partitions partitions, and each partition is a lease
// (Config.Leases). With Leases that spread (store.Spread, etcd's), the partitions spread evenly
// over the live copies, as Kafka's consumer groups spread a topic's partitions: each copy holds
// about its fair share, gives the excess up when copies join, and takes over partitions nobody
// holds (a copy that died or stopped). What an owner commits as owner is fenced by the
// partition's lease (Fence, store.Change.Fence): a copy paused past its lease cannot write for
// the place afterwards. With Leases that do not spread (store.LocalLeases: the only copy, on
// bbolt) the copy holds one lease for every place. Without Leases it owns every place from its
// start.
//
// The seam exists so that ownership can be read and tested without a table: the engine (package
// table) keeps thin glue, which starts and stops the timers of the places an Owner tells it it
// gained or lost (Config.Changed).
package placement

import (
	"context"
	"fmt"
	"hash/fnv"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kontermatt/kontermatt/core/store"
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

// janitorPartition is the partition whose owner runs the janitor (RunsJanitor), so that exactly
// one copy does.
const janitorPartition = 0

// Partition gives the partition of a place key.
func Partition(placeKey string) int {
	h := fnv.New32a()
	h.Write([]byte(placeKey))
	return int(h.Sum32() % Partitions)
}

// partitionLease names the lease of partition i.
func partitionLease(i int) string { return fmt.Sprintf("%s%02d", placeLeases, i) }

// Lease names the lease whose holder owns the place (with Leases that spread).
func Lease(placeKey string) string { return partitionLease(Partition(placeKey)) }

// inPartition selects the place keys of partition i.
func inPartition(i int) func(placeKey string) bool {
	return func(placeKey string) bool { return Partition(placeKey) == i }
}

// every selects every place key.
func every(string) bool { return true }

// Config wires an Owner.
type Config struct {
	// Leases are where the copy holds the places' leases: a store.Spread spreads the partitions
	// over the copies; other Leases give this copy every place at once while it holds one lease.
	// Nil: this copy owns every place, as the only copy, and Run has nothing to do.
	Leases store.Leases
	Log    *slog.Logger
	// Changed is told each time this copy takes (held) or loses a lease of places, once Owns
	// answers accordingly: lease is its name ("places/<nn>", or "places" for every place), and
	// in selects the places (by key) it covers. The engine starts or stops those places' timers
	// and computer players. It is called from Run's goroutines, with no lock of the Owner's
	// held, and must not call Run.
	Changed func(lease string, held bool, in func(placeKey string) bool)
	// Janitor is called when this copy takes the lease of the janitor's partition (or of every
	// place), after Changed; held ends with the lease.
	Janitor func(held context.Context)
}

// Owner is what this copy owns now, and the work of keeping it: New, then Run until the service
// closes. Its methods are safe to call from any goroutine and never wait on the store.
type Owner struct {
	cfg   Config
	all   atomic.Bool             // every place: allLease held
	parts [Partitions]atomic.Bool // the partitions held (Spread)

	mu     sync.Mutex
	held   map[int]*holding // each partition held
	closed bool             // Run ended: Fenced starts nothing
	wg     sync.WaitGroup   // Run's goroutines and Fenced's
}

// holding is one hold of a partition's lease: a partition given up and won again is another.
type holding struct {
	release func() // gives the lease up; may be called more than once
}

// New makes an Owner of cfg.
func New(cfg Config) *Owner {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Changed == nil {
		cfg.Changed = func(string, bool, func(string) bool) {}
	}
	if cfg.Janitor == nil {
		cfg.Janitor = func(context.Context) {}
	}
	return &Owner{cfg: cfg}
}

// Owns reports whether this copy owns the place now: it fires the place's timers, runs its
// computer players and tells its story. Always true without Config.Leases; with them, while this
// copy holds the place's partition (or every place). Owning is a promise about now only: a copy
// may lose a place a moment later, which the store's fence then enforces.
func (o *Owner) Owns(placeKey string) bool {
	return o.cfg.Leases == nil || o.all.Load() || o.parts[Partition(placeKey)].Load()
}

// RunsJanitor reports whether this copy prunes the closed tables and posts the month's tables:
// the owner of the janitor's partition, so that exactly one copy does.
func (o *Owner) RunsJanitor() bool {
	return o.cfg.Leases == nil || o.all.Load() || o.parts[janitorPartition].Load()
}

// Fence gives the fence of the owner's work at the place: the zero Fence (which fences nothing)
// without Leases that spread, the place's partition's lease with them; store.ErrFenced when this
// copy does not hold it now.
func (o *Owner) Fence(placeKey string) (store.Fence, error) {
	sp, ok := o.cfg.Leases.(store.Spread)
	if !ok {
		return store.Fence{}, nil
	}
	i := Partition(placeKey)
	if o.parts[i].Load() {
		if f, ok := sp.Fence(partitionLease(i)); ok {
			return f, nil
		}
	}
	return store.Fence{}, store.ErrFenced
}

// Fenced notes that the store refused the owner's work at the place under its partition's lease:
// this copy lost the place, whatever its own view says. Owns says so at once; the lease is given
// up in a goroutine of the Owner's (Changed follows there), so Fenced never waits.
func (o *Owner) Fenced(placeKey string) {
	i := Partition(placeKey)
	o.parts[i].Store(false)
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return // Run ended: every lease ended with its ctx
	}
	o.wg.Go(func() { o.giveUp(i) })
}

// Leases are the leases of places this copy holds now, sorted; nil without any (and without
// Config.Leases).
func (o *Owner) Leases() []string {
	if o.cfg.Leases == nil {
		return nil
	}
	if o.all.Load() {
		return []string{allLease}
	}
	var out []string
	for _, i := range o.heldPartitions() {
		out = append(out, partitionLease(i))
	}
	return out
}

// Run holds this copy's places until ctx ends: its share of the partitions with Leases that
// spread, else the lease of every place. It returns once every lease it held is given up and
// Changed told so. Without Config.Leases it returns at once.
func (o *Owner) Run(ctx context.Context) {
	defer func() {
		o.mu.Lock()
		o.closed = true
		o.mu.Unlock()
		o.wg.Wait()
	}()
	switch l := o.cfg.Leases.(type) {
	case nil:
	case store.Spread:
		o.spread(ctx, l)
	default:
		o.keepAll(ctx)
	}
}

// keepAll holds allLease whenever it can until ctx ends: on taking it the copy owns every place
// and runs the janitor once; on losing it it owns none until it holds the lease again.
func (o *Owner) keepAll(ctx context.Context) {
	for {
		held, release, err := o.cfg.Leases.Hold(ctx, allLease)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			o.cfg.Log.Warn("waiting for the places' lease", "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
			continue
		}
		o.all.Store(true)
		o.cfg.Log.Info("this copy owns every place now", "lease", allLease)
		o.cfg.Changed(allLease, true, every)
		o.cfg.Janitor(held)
		<-held.Done()
		release()
		o.all.Store(false)
		if ctx.Err() == nil {
			o.cfg.Log.Warn("this copy lost the places' lease; another copy owns them", "lease", allLease)
		}
		o.cfg.Changed(allLease, false, every)
		if ctx.Err() != nil {
			return
		}
	}
}

// spread keeps this copy's fair share of the partitions until ctx ends: every spreadEvery it
// counts the live copies, gives up what it holds beyond ceil(Partitions/copies), and takes
// partitions nobody holds up to that share. A copy that died loses its leases with its time to
// live, and the survivors take its partitions at their next look.
func (o *Owner) spread(ctx context.Context, sp store.Spread) {
	// Each copy tries the free partitions from a place of its own, so that copies taking over
	// at the same moment seldom ask for the same one.
	start := rand.IntN(Partitions)
	tick := time.NewTicker(spreadEvery)
	defer tick.Stop()
	for {
		o.balance(ctx, sp, start)
		select {
		case <-ctx.Done():
			return // each held partition ends with ctx
		case <-tick.C:
		}
	}
}

// balance takes or gives up partitions once, towards this copy's fair share.
func (o *Owner) balance(ctx context.Context, sp store.Spread, start int) {
	n, err := sp.Copies(ctx)
	if err != nil || n < 1 {
		if ctx.Err() == nil {
			o.cfg.Log.Debug("counting the copies", "err", err)
		}
		return
	}
	share := (Partitions + n - 1) / n
	mine := o.heldPartitions()
	if len(mine) > share {
		// A copy joined: the highest partitions go back, and the copies below their share take
		// them at their next look.
		var wg sync.WaitGroup
		for _, i := range mine[share:] {
			wg.Go(func() { o.giveUp(i) }) // each a call to the store: all at once
		}
		wg.Wait()
		o.cfg.Log.Info("this copy gave places up to another copy", "partitions", len(mine)-share, "copies", n)
		return
	}
	if len(mine) == share {
		return
	}
	taken, err := sp.Taken(ctx, placeLeases)
	if err != nil {
		o.cfg.Log.Debug("reading the partitions' leases", "err", err)
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
		if !taken[partitionLease(i)] && !o.parts[i].Load() {
			free = append(free, i)
		}
	}
	var took atomic.Int32
	var wg sync.WaitGroup
	for _, i := range free {
		wg.Go(func() {
			if o.tryHold(ctx, sp, i) {
				took.Add(1)
			}
		})
	}
	wg.Wait()
	if more := int(took.Load()); more > 0 {
		o.cfg.Log.Info("this copy owns more places now", "partitions", len(mine)+more, "copies", n)
	}
}

// heldPartitions lists the partitions this copy holds, in order.
func (o *Owner) heldPartitions() []int {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([]int, 0, len(o.held))
	for i := range o.held {
		out = append(out, i)
	}
	slices.Sort(out)
	return out
}

// tryHold asks for partition i's lease, waiting in line at most tryHoldFor; it reports whether
// this copy holds it now.
func (o *Owner) tryHold(ctx context.Context, sp store.Spread, i int) bool {
	name := partitionLease(i)
	hold, cancel := context.WithCancel(ctx)
	type answer struct {
		held    context.Context
		release func()
		err     error
	}
	got := make(chan answer, 1)
	go func() {
		held, release, err := sp.Hold(hold, name)
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
	o.mu.Lock()
	if o.held == nil {
		o.held = map[int]*holding{}
	}
	o.held[i] = h
	o.parts[i].Store(true)
	o.mu.Unlock()
	o.cfg.Log.Debug("this copy owns a partition of the places", "lease", name)
	o.cfg.Changed(name, true, inPartition(i))
	if i == janitorPartition {
		o.cfg.Janitor(a.held)
	}
	// Watched only now, so that Changed hears of the loss after it heard of the gain.
	o.wg.Go(func() {
		<-a.held.Done()
		o.lost(ctx, i, h)
	})
	return true
}

// giveUp gives partition i's lease up (held: another copy may take it at once).
func (o *Owner) giveUp(i int) {
	o.mu.Lock()
	h := o.held[i]
	o.mu.Unlock()
	if h != nil {
		h.release() // its held context ends: lost follows
	}
}

// lost notes that hold h of partition i's lease ended (given up, lost with the store out of
// reach, or ctx ending): Changed is told, unless the partition was won again meanwhile.
func (o *Owner) lost(ctx context.Context, i int, h *holding) {
	h.release()
	o.mu.Lock()
	current := o.held[i] == h
	if current {
		delete(o.held, i)
		o.parts[i].Store(false)
	}
	o.mu.Unlock()
	if !current {
		return // the partition was won again meanwhile
	}
	name := partitionLease(i)
	if ctx.Err() == nil {
		o.cfg.Log.Debug("this copy no longer owns a partition of the places", "lease", name)
	}
	o.cfg.Changed(name, false, inPartition(i))
}

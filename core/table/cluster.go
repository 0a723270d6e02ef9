package table

// Several copies of the bot on one store (issue 24): none is special. Each holds the live tables
// in memory, as one bot alone does, and each may take any command for any table, so what a copy
// holds may be behind what another committed. Three things keep them one bot:
//
//   - A commit is guarded by the table's Seq (Store.Commit, ErrConflict): a copy whose table is
//     behind writes nothing, reads the table back (reload) and applies the command again from
//     there, up to maxAttempts times. A button pressed on two copies at once is applied once: the
//     second finds it stale, or its event already taken, in the state the first committed.
//   - The copy hears every table change any copy commits (Watcher, follow) and takes a newer
//     state in at once: its timers, computer players and the adapters' editable messages follow
//     the table as it stands, and a table another copy opened appears (as it does when a command
//     or a web socket names it first: lookup).
//   - What belongs to a place across tables, which table it has, is claimed in the store by
//     compare-and-swap (Swapper): of two copies opening a table at one place, one does.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/kontermatt/kontermatt/core/table/api"
)

// maxAttempts is how many times a command is applied, from a state read anew each time, before
// it is refused: each conflict means another copy's commit was applied meanwhile, so a few
// suffice even at a table pressed from everywhere at once.
const maxAttempts = 5

// errConflicted is commit's answer when another copy committed the table first (ErrConflict):
// the table rolled back, and its caller reads it again (reload) and decides afresh. A command
// that keeps losing gets its text, "something went wrong, nothing was changed".
var errConflicted = &userError{key: "err.internal", cause: fmt.Errorf("%w: %w", ErrNotStored, ErrConflict)}

// ClusterObserver is an Observer that also hears what keeps copies of the bot on one store in
// step: the service's Observe may have these methods too. They are called like Observer's.
type ClusterObserver interface {
	Observer
	// Reloaded is a table read again from the store or taken in from another copy's change; why
	// is "conflict" (a commit lost to another copy's: the command is applied again), "watch"
	// (another copy's change heard) or "compacted" (the watch fell behind; every table read).
	Reloaded(why string)
	// Lease is a lease of this copy's taken (held) or lost. The places' partitions are leases
	// too ("places/<nn>": the copy owns the places whose PlaceLease it is; "places": every
	// place): an adapter told of one taken starts telling those places from what it stored of
	// them, and stops when told it is lost.
	Lease(name string, held bool)
}

// clusterObserver is Config.Observe as a ClusterObserver: itself when it is one, else it hears
// nothing of the cluster.
func clusterObserver(o Observer) ClusterObserver {
	if co, ok := o.(ClusterObserver); ok {
		return co
	}
	return noClusterObserver{o}
}

type noClusterObserver struct{ Observer }

func (noClusterObserver) Reloaded(string)    {}
func (noClusterObserver) Lease(string, bool) {}

// follower keeps the tables this copy holds in step with the store the other copies write to:
// it loads a table another copy opened when a command, a socket or the watch names it (lookup,
// claimedTable, heard), reads a table back when its commit lost to another copy's (reload),
// takes in the changes the store's watch reports (heard, fed by changeFeed) and every live
// table when the watch fell behind (reloadAll). It exists so that keeping copies in step is
// apart from what a command does, with its dependencies in sight: the store's reads, the index
// of the tables in memory, the places' claims, what a table loaded needs (a secret drawn for an
// old state without one, its computer players, the languages an old state kept), the cluster's
// observer, and the engine's side (followed). reload, replace and gone work under the table's
// lock, held by their caller; lookup, heard and reloadAll take each table's lock themselves.
type follower struct {
	store  Store
	index  *tableIndex
	placed placeClaims
	draw   *source                                 // a secret for a state stored before tables had one
	robots func(level string, seed uint64) Decider // Config.Robots
	adopt  func(playerID, lang string)             // people's languages a schema 1 state kept (privacy.Book.Adopt)
	told   ClusterObserver
	log    *slog.Logger
	engine followed
	// ctx and wg are the service's: what the watch brings runs on its ctx (no command waits for
	// it), and the index changes in a goroutine of the service's (the index's lock comes first).
	ctx context.Context
	wg  *sync.WaitGroup
}

// followed is what the follower asks of the engine for a table whose state it took in (table
// lock held): that its messages, timer and computer players follow it (caughtUp), or that it
// leaves memory (forget).
type followed interface {
	caughtUp(ctx context.Context, t *tbl)
	forget(t *tbl)
}

// load takes a table read from the store into memory (the index), unless one by its ID is there
// already, which it gives instead; a closed table it leaves out (nil).
func (f follower) load(data []byte) (*tbl, error) {
	st, opts, m, err := decodeState(data)
	if err != nil {
		return nil, err
	}
	if st.Status == api.StatusClosed {
		return nil, nil // its messages were final when it closed; it only waits to be pruned
	}
	// Schema 1 kept people's language choices in each table; they are the people's own now.
	for id, l := range st.Langs {
		f.adopt(id, l)
	}
	st.Langs = nil
	if len(st.Secret) != secretSize {
		// Stored before tables had secrets (a 64-bit seed then): its games so far are in its state,
		// its next ones come from a secret of its own. A rollback returns to the state with it.
		st.Secret = f.draw.secret()
		if data, err = json.Marshal(st); err != nil {
			return nil, err
		}
	}
	return f.index.add(st.ID, func() *tbl {
		t := &tbl{placeKey: st.Place.Key(), tableID: st.ID, created: st.Created, st: st, opts: opts, match: m, committed: data, sent: map[string]uint64{}}
		t.makeRobots(f.robots)
		t.noteStored()
		return t
	}), nil
}

// lookup gives a table by ID: the one in memory, or else the store's, loaded now (another copy
// opened it, and this one has not heard of it yet). Nil, with no refusal, when the store has no
// live table by that ID.
func (f follower) lookup(ctx context.Context, id string) (*tbl, *userError) {
	if t, ok := f.index.get(id); ok {
		return t, nil
	}
	data, ok, err := f.store.Table(ctx, id)
	if err != nil {
		f.log.Error("reading a table", "table", id, "err", err)
		return nil, storeRefusal(err)
	}
	if !ok {
		return nil, nil
	}
	t, err := f.load(data)
	if err != nil {
		f.log.Error("a stored table does not read", "table", id, "err", err)
		return nil, refuse("err.internal")
	}
	if t != nil {
		t.mu.Lock()
		f.engine.caughtUp(f.ctx, t)
		t.mu.Unlock()
	}
	return t, nil
}

// reload reads the table back from the store and takes its state in (table lock held): another
// copy committed it since this one's state. A table the store no longer keeps live leaves memory.
func (f follower) reload(ctx context.Context, t *tbl, why string) *userError {
	data, ok, err := f.store.Table(ctx, t.st.ID)
	if err != nil {
		f.log.Warn("reading a table again", "table", t.st.ID, "err", err)
		return storeRefusal(err)
	}
	f.told.Reloaded(why)
	if !ok {
		f.gone(t)
		return nil
	}
	if err := f.replace(t, data, true); err != nil {
		f.log.Error("a stored table does not read", "table", t.st.ID, "err", err)
		return refuse("err.internal")
	}
	f.engine.caughtUp(ctx, t)
	return nil
}

// replace takes a stored state of the table in (table lock held): when it is newer than the
// one in memory, or always with force. It reports whether it did.
func (f follower) replace(t *tbl, data []byte, force bool) error {
	st, opts, m, err := decodeState(data)
	if err != nil {
		return err
	}
	if st.ID != t.st.ID {
		return errors.New("table: the stored state is another table's")
	}
	if !force && st.Seq <= t.st.Seq {
		return nil
	}
	if len(st.Secret) != secretSize {
		return errors.New("table: a stored state without its secret") // every copy stores it since it loaded it
	}
	old := t.st.Place.Key()
	t.st, t.opts, t.match, t.committed = st, opts, m, data
	t.noteStored()
	t.failures = 0
	t.makeRobots(f.robots)
	if key := st.Place.Key(); key != old {
		// Another copy moved the table (MovePlace). The index's lock comes before a table's,
		// so the index changes in a goroutine of its own.
		f.wg.Go(func() { f.index.moved(t, key) })
	}
	return nil
}

// gone takes a table the store no longer keeps (deleted, or pruned) out of memory (table lock
// held).
func (f follower) gone(t *tbl) {
	t.st.Status = api.StatusClosed
	f.engine.forget(t)
}

// heard takes in one table change heard from the store: a newer state of a table in memory, or
// a live table this copy did not hold.
func (f follower) heard(c TableChange) {
	t, ok := f.index.get(c.TableID)
	if !ok {
		if c.State == nil || c.Closed {
			return // never held here, or out of memory already
		}
		nt, err := f.load(c.State)
		if err != nil {
			f.log.Error("a table another copy stored does not read", "table", c.TableID, "err", err)
			return
		}
		if nt != nil {
			nt.mu.Lock()
			f.engine.caughtUp(f.ctx, nt)
			nt.mu.Unlock()
		}
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if c.Seq != 0 && c.Seq <= t.st.Seq {
		return // this copy's own commit, or one it took in already
	}
	if c.State == nil {
		f.gone(t)
		return
	}
	before := t.st.Seq
	if err := f.replace(t, c.State, false); err != nil {
		f.log.Error("a table another copy stored does not read", "table", c.TableID, "err", err)
		return
	}
	if t.st.Seq != before {
		f.told.Reloaded("watch")
		f.engine.caughtUp(f.ctx, t)
	}
}

// reloadAll reads every live table again, after the watch fell too far behind: newer states are
// taken in, new tables loaded, and the tables in memory the store no longer lists as live are
// read one by one (closed, or gone).
func (f follower) reloadAll() {
	listed := map[string]bool{}
	err := f.store.Tables(f.ctx, func(id string, data []byte) error {
		listed[id] = true
		f.heard(TableChange{TableID: id, State: data})
		return nil
	})
	if err != nil {
		f.log.Error("reading the tables again", "err", err)
		return
	}
	for _, t := range f.index.all() {
		if listed[t.id()] {
			continue
		}
		t.mu.Lock()
		if t.st.Status != api.StatusClosed {
			f.reload(f.ctx, t, "compacted")
		}
		t.mu.Unlock()
	}
}

// claimedTable gives the live table the store says the place has, loaded into memory if this
// copy did not hold it; nil when the place has none.
func (f follower) claimedTable(ctx context.Context, placeKey string) (*tbl, *userError) {
	_, c, err := f.placed.read(ctx, placeKey)
	if err != nil {
		f.log.Error("reading a place's table", "place", placeKey, "err", err)
		return nil, storeRefusal(err)
	}
	if c.Table == "" {
		return nil, nil
	}
	t, uerr := f.lookup(ctx, c.Table)
	if t == nil || uerr != nil {
		return nil, uerr
	}
	if key, current := f.index.placed(t); key != placeKey || !current {
		return nil, nil // the table moved away (MovePlace), or a newer one took the place
	}
	return t, nil
}

// storeRefusal is what a player is told when the store failed.
// Handle gives it with its cause, ErrNotStored wrapping err.
func storeRefusal(err error) *userError {
	key := "err.internal"
	if errors.Is(err, ErrUnavailable) {
		key = "err.unavailable"
	}
	return &userError{key: key, cause: fmt.Errorf("%w: %w", ErrNotStored, err)}
}

// caughtUp brings what follows from a table's state taken in from the store up to date (table
// lock held): its messages (the adapters' and the web table's), its timer and its computer
// players; a closed table leaves memory.
func (s *Service) caughtUp(ctx context.Context, t *tbl) {
	s.pub.send(ctx, t, nil, false)
	if t.st.Status == api.StatusClosed {
		s.forget(t)
		return
	}
	s.timers.start(t)
}

// changeFeed keeps a watch of the store's table changes going, from a revision on, until its
// ctx ends: each change to heard, in order. A watch that ends early is started again: from where
// it stopped after a pause when the store was unreachable (doubling up to 5 s), and after resync
// (every table read again) when the changes since are no longer kept. It knows no table: the
// engine's heard and reloadAll are what it feeds.
type changeFeed struct {
	w      Watcher
	log    *slog.Logger
	heard  func(TableChange)
	resync func() // the changes since the last heard are no longer kept: read every table again
}

// run follows the changes from revision from on until ctx ends.
func (f changeFeed) run(ctx context.Context, from uint64) {
	const firstPause, longestPause = 100 * time.Millisecond, 5 * time.Second
	pause := firstPause
	for ctx.Err() == nil {
		var ended error
		for c := range f.w.Watch(ctx, from) {
			if c.Err != nil {
				ended = c.Err
				break
			}
			from, pause = c.Rev+1, firstPause
			f.heard(c)
		}
		if ctx.Err() != nil {
			return
		}
		if errors.Is(ended, ErrCompacted) || from == 0 {
			rev, err := f.w.Revision(ctx)
			if err == nil {
				f.log.Warn("the store no longer keeps the changes since this copy's last; reading every table again", "err", ended)
				f.resync()
				from = rev + 1
				continue
			}
			ended = err
		}
		f.log.Warn("the watch of the store's changes ended; watching again", "in", pause, "err", ended)
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
		pause = min(2*pause, longestPause)
	}
}

// id is the table's ID, which never changes.
func (t *tbl) id() string { return t.tableID }

// bucketClaims is the service's KV bucket of which table each place has: place key → placeClaim.
// It moves by compare-and-swap (Swapper), so of two copies opening a table at one place at once,
// one does.
const bucketClaims = "table.claim"

// placeClaim is a place's entry in bucketClaims: its table, and since when it claims the place.
type placeClaim struct {
	Table string `json:"table"`
	At    int64  `json:"at"` // unix ms
}

// claimPending is how long a claim stands for a table that is not stored yet: its copy is storing
// it (a commit gives up within the store's timeout, seconds), or died before it did.
const claimPending = 30 * time.Second

// placeClaims are the places' claims (bucketClaims), moved by compare-and-swap over the KV's
// Swapper: all a claim needs is the KV, the clock and the log, not the tables. Without a Swapper
// no claim is kept, and the service's own index decides, as the only copy's may.
type placeClaims struct {
	sw  Swapper // nil: no claims kept
	now func() time.Time
	log *slog.Logger
}

// newPlaceClaims gives the claims kept on the service's KV.
func newPlaceClaims(cfg Config) placeClaims {
	sw, _ := cfg.KV.(Swapper)
	return placeClaims{sw: sw, now: cfg.Now, log: cfg.Log}
}

// read gives a place's claim as stored (raw, for the swap) and decoded; a nil raw: none.
func (c placeClaims) read(ctx context.Context, placeKey string) (raw []byte, pc placeClaim, err error) {
	if c.sw == nil {
		return nil, pc, nil
	}
	raw, found, err := c.sw.Get(ctx, bucketClaims, placeKey)
	if err != nil || !found {
		return nil, pc, err
	}
	if err := json.Unmarshal(raw, &pc); err != nil {
		c.log.Warn("a place's claim does not read; it is taken anew", "place", placeKey, "err", err)
		return raw, placeClaim{}, nil
	}
	return raw, pc, nil
}

// swap moves a place's claim from old (as read) to the table id (none: ""); ErrConflict when
// another copy moved it meanwhile.
func (c placeClaims) swap(ctx context.Context, placeKey string, old []byte, id string) error {
	if c.sw == nil {
		return nil
	}
	var value []byte
	if id != "" {
		value, _ = json.Marshal(placeClaim{Table: id, At: c.now().UnixMilli()})
	}
	_, err := c.sw.Swap(ctx, bucketClaims, placeKey, old, value)
	return err
}

// giveBack gives the place's claim back from the table id to what it was before (raw), if no
// other copy moved it since.
func (c placeClaims) giveBack(ctx context.Context, placeKey, id string, raw []byte) {
	cur, pc, err := c.read(ctx, placeKey)
	if err != nil || pc.Table != id {
		return
	}
	if _, err := c.sw.Swap(ctx, bucketClaims, placeKey, cur, raw); err != nil && !errors.Is(err, ErrConflict) {
		c.log.Warn("giving a place's claim back", "place", placeKey, "err", err)
	}
}

// moved claims the new place of a table that moved, whatever claimed it before: the platform
// says the place is the table's old one under a new ID.
func (c placeClaims) moved(ctx context.Context, placeKey, id string) {
	for range maxAttempts {
		raw, _, err := c.read(ctx, placeKey)
		if err == nil {
			err = c.swap(ctx, placeKey, raw, id)
		}
		if !errors.Is(err, ErrConflict) {
			if err != nil {
				c.log.Warn("claiming a moved table's place", "place", placeKey, "err", err)
			}
			return
		}
	}
}

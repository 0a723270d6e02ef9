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
	"time"
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

// lookup gives a table by ID: the one in memory, or else the store's, loaded now (another copy
// opened it, and this one has not heard of it yet). Nil, with no refusal, when the store has no
// live table by that ID.
func (s *Service) lookup(ctx context.Context, id string) (*tbl, *userError) {
	if t, ok := s.table(id); ok {
		return t, nil
	}
	data, ok, err := s.cfg.Store.Table(ctx, id)
	if err != nil {
		s.cfg.Log.Error("reading a table", "table", id, "err", err)
		return nil, storeRefusal(err)
	}
	if !ok {
		return nil, nil
	}
	t, err := s.load(data)
	if err != nil {
		s.cfg.Log.Error("a stored table does not read", "table", id, "err", err)
		return nil, refuse("err.internal")
	}
	if t != nil {
		t.mu.Lock()
		s.caughtUp(s.ctx, t)
		t.mu.Unlock()
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

// reload reads the table back from the store and takes its state in (table lock held): another
// copy committed it since this one's state. A table the store no longer keeps live leaves memory.
func (s *Service) reload(ctx context.Context, t *tbl, why string) *userError {
	data, ok, err := s.cfg.Store.Table(ctx, t.st.ID)
	if err != nil {
		s.cfg.Log.Warn("reading a table again", "table", t.st.ID, "err", err)
		return storeRefusal(err)
	}
	s.clustered.Reloaded(why)
	if !ok {
		s.gone(t)
		return nil
	}
	if err := s.replace(t, data, true); err != nil {
		s.cfg.Log.Error("a stored table does not read", "table", t.st.ID, "err", err)
		return refuse("err.internal")
	}
	s.caughtUp(ctx, t)
	return nil
}

// replace takes a stored state of the table in (table lock held): when it is newer than the
// one in memory, or always with force. It reports whether it did.
func (s *Service) replace(t *tbl, data []byte, force bool) error {
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
	t.makeRobots(s.cfg.Robots)
	if key := st.Place.Key(); key != old {
		// Another copy moved the table (MovePlace). The index's lock comes before a table's,
		// so the index changes in a goroutine of its own.
		s.wg.Go(func() { s.index.moved(t, key) })
	}
	return nil
}

// caughtUp brings what follows from a table's state taken in from the store up to date (table
// lock held): its messages (the adapters' and the web table's), its timer and its computer
// players; a closed table leaves memory.
func (s *Service) caughtUp(ctx context.Context, t *tbl) {
	s.send(ctx, t, nil, false)
	if t.st.Status == StatusClosed {
		s.forget(t)
		return
	}
	s.arm(t)
	s.scheduleRobot(t)
}

// gone takes a table the store no longer keeps (deleted, or pruned) out of memory (table lock
// held).
func (s *Service) gone(t *tbl) {
	t.st.Status = StatusClosed
	s.forget(t)
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

// heard takes in one table change heard from the store: a newer state of a table in memory, or
// a live table this copy did not hold.
func (s *Service) heard(c TableChange) {
	t, ok := s.table(c.TableID)
	if !ok {
		if c.State == nil || c.Closed {
			return // never held here, or out of memory already
		}
		nt, err := s.load(c.State)
		if err != nil {
			s.cfg.Log.Error("a table another copy stored does not read", "table", c.TableID, "err", err)
			return
		}
		if nt != nil {
			nt.mu.Lock()
			s.caughtUp(s.ctx, nt)
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
		s.gone(t)
		return
	}
	before := t.st.Seq
	if err := s.replace(t, c.State, false); err != nil {
		s.cfg.Log.Error("a table another copy stored does not read", "table", c.TableID, "err", err)
		return
	}
	if t.st.Seq != before {
		s.clustered.Reloaded("watch")
		s.caughtUp(s.ctx, t)
	}
}

// reloadAll reads every live table again, after the watch fell too far behind: newer states are
// taken in, new tables loaded, and the tables in memory the store no longer lists as live are
// read one by one (closed, or gone).
func (s *Service) reloadAll() {
	listed := map[string]bool{}
	err := s.cfg.Store.Tables(s.ctx, func(id string, data []byte) error {
		listed[id] = true
		s.heard(TableChange{TableID: id, State: data})
		return nil
	})
	if err != nil {
		s.cfg.Log.Error("reading the tables again", "err", err)
		return
	}
	for _, t := range s.all() {
		if listed[t.id()] {
			continue
		}
		t.mu.Lock()
		if t.st.Status != StatusClosed {
			s.reload(s.ctx, t, "compacted")
		}
		t.mu.Unlock()
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

// claimedTable gives the live table the store says the place has, loaded into memory if this
// copy did not hold it; nil when the place has none.
func (s *Service) claimedTable(ctx context.Context, placeKey string) (*tbl, *userError) {
	_, c, err := s.placed.read(ctx, placeKey)
	if err != nil {
		s.cfg.Log.Error("reading a place's table", "place", placeKey, "err", err)
		return nil, storeRefusal(err)
	}
	if c.Table == "" {
		return nil, nil
	}
	t, uerr := s.lookup(ctx, c.Table)
	if t == nil || uerr != nil {
		return nil, uerr
	}
	if key, current := s.index.placed(t); key != placeKey || !current {
		return nil, nil // the table moved away (MovePlace), or a newer one took the place
	}
	return t, nil
}

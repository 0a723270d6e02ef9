package table

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/placement"
)

// committer is the commit path: it writes a table's new state, its log entry, the records of a
// match that ended and what the league learns from it, as one Change, and takes the table back
// to its last stored state when the store refuses. It exists so that what a commit needs is
// explicit and small: the store, the league that learns with the change, the clock, the metrics
// and the log, and the place's owner for the fence of an owner's work. It neither tells anyone
// nor re-arms anything: what follows a stored change (publish, reviews, timers, computer players)
// is the Service's (commit), and what follows a refused one is its caller's (exec reloads and
// applies the command again, timers.background tries later).
type committer struct {
	store   Store
	league  League // nil: no league learns
	observe Observer
	now     func() time.Time
	log     *slog.Logger
	place   *placement.Owner // this copy's places: the fence of an owner's work
}

// write stores the table's new state with its log entry in one transaction (table lock held).
// If the store fails, the table rolls back to its last stored state, and the refusal says why:
// errConflicted when another copy committed first, errFencedRefusal when this copy lost the
// place's lease. acted is the kind of command whose buttons the actor has now used up; restart
// starts the turn's timer again.
func (c committer) write(ctx context.Context, t *tbl, cmd api.Command, out *outcome, acted actedKind, restart bool) *userError {
	st := t.st
	now := c.now()
	st.Seq++
	if cmd.EventID != "" {
		st.Events = append(st.Events, cmd.EventID)
		if len(st.Events) > maxEvents {
			st.Events = st.Events[len(st.Events)-maxEvents:]
		}
	}
	if restart {
		st.TurnAt, st.Reminded = now.UnixMilli(), false
	}
	if acted != actedNone && cmd.Actor.ID != "" && !strings.HasPrefix(cmd.Actor.ID, "robot:") {
		if st.Acted == nil {
			st.Acted = map[string]uint64{}
		}
		st.Acted[acted.key(cmd.Actor.ID)] = st.Seq
	}
	if t.match != nil {
		// Finished games never change: only the last one is encoded again.
		games := t.match.Games()
		if len(st.Games) > len(games) {
			st.Games = st.Games[:0]
		}
		for i := max(len(st.Games)-1, 0); i < len(games); i++ {
			enc := encodeGame(games[i])
			if i < len(st.Games) {
				st.Games[i] = enc
			} else {
				st.Games = append(st.Games, enc)
			}
		}
	}
	var fence Fence
	data, err := json.Marshal(st)
	if err == nil && out.owner {
		fence, err = c.fence(t)
	}
	if err == nil {
		// A match that ends is kept in its record: its commands' log goes with this change.
		err = c.commit(ctx, Change{TableID: st.ID, State: data, Records: out.records, Closed: st.Status == api.StatusClosed, PruneLog: len(out.records) > 0,
			Log:   LogEntry{Seq: st.Seq, Time: now.UnixMilli(), Actor: cmd.Actor.ID, Verb: cmd.Verb, Args: cmd.Args, EventID: cmd.EventID},
			Fence: fence}, out.league)
	}
	if err != nil {
		t.rollback()
		if isFenced(err) {
			c.fenced(t, err)
			return errFencedRefusal
		}
		if errors.Is(err, ErrConflict) {
			// Another copy changed the table first, or another match end the league entries this
			// one learned from: decided again from the store.
			c.log.Info("the table or its league changed since it was read; reading it again", "table", st.ID, "seq", st.Seq)
			return errConflicted
		}
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			// Its caller's context ended (the bot stops, or the request went away): not the
			// store's failure. Nothing was changed in memory, and the store is the truth.
			c.log.Info("commit cut short; rolling back", "table", st.ID, "err", err)
			return storeRefusal(err)
		}
		c.log.Error("commit failed; rolling back", "table", st.ID, "err", err)
		return storeRefusal(err)
	}
	t.committed = data
	t.noteStored()
	t.failures = 0
	return nil
}

// commit writes a change; the league (Config.League) learns a match that ended in the same
// transaction, under its compare-and-swap: ErrConflict when another match end changed the
// league meanwhile, and the command is applied again (League.Learn).
func (c committer) commit(ctx context.Context, ch Change, ended *learnedMatch) error {
	if ended == nil || c.league == nil {
		return c.timed(ctx, ch)
	}
	u, err := c.league.Learn(ctx, ended.rec, ended.match)
	if err != nil {
		c.log.Error("the league could not learn a match; stats rebuild repairs it", "table", ch.TableID, "err", err)
		return c.timed(ctx, ch)
	}
	ch.KV, ch.Expect = u.KV, u.Expect
	err = c.timed(ctx, ch)
	u.Done(err == nil)
	return err
}

// timed is one Store.Commit, its time told to the observer.
func (c committer) timed(ctx context.Context, ch Change) error {
	start := time.Now()
	err := c.store.Commit(ctx, ch)
	c.observe.Commit(time.Since(start), err)
	return err
}

// behind reports whether the store holds a newer state of the table than this copy (table lock
// held); a store that cannot say is taken as not.
func (c committer) behind(ctx context.Context, t *tbl) bool {
	data, ok, err := c.store.Table(ctx, t.id())
	if err != nil || !ok {
		return ok
	}
	var st struct {
		Seq uint64 `json:"seq"`
	}
	return json.Unmarshal(data, &st) == nil && st.Seq > t.st.Seq
}

// rollback takes the table back to its last stored state (table lock held).
func (t *tbl) rollback() {
	if t.committed == nil {
		return // never stored: the caller discards the table
	}
	st, opts, m, err := decodeState(t.committed)
	if err != nil {
		// The bytes were written by this process a moment ago; failing to read them is a bug.
		panic(fmt.Sprintf("table %s: cannot reload own state: %v", t.st.ID, err))
	}
	t.st, t.opts, t.match = st, opts, m
}

// fence gives the fence of the owner's work at the table (table lock held): none without Leases
// that spread, the place's partition's lease with them; ErrFenced when this copy no longer holds
// it.
func (c committer) fence(t *tbl) (Fence, error) {
	f, err := c.place.Fence(t.st.Place.Key())
	if err != nil {
		return Fence{}, fmt.Errorf("table %q: %w", t.st.ID, err)
	}
	return f, nil
}

// fenced notes that the store refused the owner's work at the table under its partition's lease
// (table lock held): this copy lost the place, whatever its own view says, and stops acting for
// it; the copy that holds the lease now plays on.
func (c committer) fenced(t *tbl, err error) {
	c.log.Warn("this copy lost the place's lease before its change was stored; the new owner plays on",
		"table", t.st.ID, "lease", PlaceLease(t.st.Place), "err", err)
	c.place.Fenced(t.st.Place.Key()) // Owns says so at once; the lease goes in a goroutine of the Owner's
}

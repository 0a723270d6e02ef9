package table

import (
	"time"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/pace"
)

// A human pace (package pace): the game never runs ahead of what its place can show. The
// arithmetic of waiting is package pace's; what waits is the engine's, here: a computer's move
// held until the place shows what came before (playWhenShown), the players' hands held at a
// finished trick or a new deal (holdHands), and what an adapter's report lets go (Shown).

// Pace is what a preset means in time (pace.Pace).
type Pace = pace.Pace

// DefaultPaces are the presets' times (pace.Defaults).
var DefaultPaces = pace.Defaults

// moment is where the table's game is, as far as its pace cares (table lock held).
func (t *tbl) moment() pace.Moment { return pace.At(t.match, t.game()) }

// shownState is what the adapters have said the place's public table message shows (Shown), and
// what the service last gave them to show there (pace.Place), with what waits for it. Its fields
// are the table's lock's, but place's reports, which have a lock of their own.
type shownState struct {
	place pace.Place
	// held is a computer's move decided and waiting for its moment (playWhenShown).
	held *heldMove
	// hands are the private hand messages of a finished trick or a new deal, waiting until the
	// place shows it (holdHands).
	hands *heldHands
}

// heldHands are hand messages of the table at seq, delivered once the place shows it, or when
// timer fires (Pace.Wait).
type heldHands struct {
	seq   uint64
	msgs  []api.Message
	timer *time.Timer
}

// heldMove is a computer's move for the position at seq, waiting for the place to show what
// came before; timer plays it when its wait is over, unless Shown does so sooner.
type heldMove struct {
	seat  core.Seat
	seq   uint64
	move  core.Move
	timer *time.Timer
}

// Reports tells the service that the adapter of platform reports what its places' table messages
// show (Shown), from its start: their tables are paced before the first report too. What a place
// shows is not stored; after a restart the service has published every table message again
// (Resume), and a place is taken to show nothing until its adapter says (having sent it, or
// found it shown already), so a restarted owner's computers and held hands wait for that as for
// any other report, within Pace.Wait. An adapter calls it before the service resumes.
func (s *Service) Reports(platform string) { s.pacer.Report(platform) }

// Shown tells the service that the public table message of place p now shows the table at seq
// (the Version of the Message the adapter edited or posted there). Adapters call it once the
// platform has taken the edit or the post. Computer players and the next deal at that place then
// wait, within bounds, until the place shows what came before (pace.go); a place whose adapter
// never calls Shown is not held back. A seq lower than one reported before, or for a place with
// no table in memory, changes nothing. It is safe to call from any goroutine, and never waits
// for the table's lock: what the report lets go (held hands, a computer's held move) goes at once
// when the table is free, else as soon as it is (a commit in progress ends).
func (s *Service) Shown(p api.Place, seq uint64) {
	id := s.TableAt(p)
	if id == "" {
		return
	}
	t, ok := s.index.get(id)
	if !ok {
		return
	}
	pl := &t.shown.place
	if !pl.Note(seq, s.cfg.Now()) {
		return
	}
	if t.mu.TryLock() {
		defer t.mu.Unlock()
		s.afterShown(t)
		return
	}
	if !pl.Wake() {
		return // the goroutine waiting acts on this report too
	}
	// Not one of the service's goroutines (s.wg): an adapter may report after Close; what it
	// lets go then does nothing (releaseHands and playWhenShown look at the service's ctx).
	go func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		pl.Woken()
		s.afterShown(t)
	}()
}

// afterShown lets go what the place's reports allow (table lock held): the hands held until it
// shows their state, and a computer's held move, whose wait may be over now.
func (s *Service) afterShown(t *tbl) {
	seq, _ := t.shown.place.Last()
	if h := t.shown.hands; h != nil && seq >= h.seq {
		s.pub.releaseHands(t, h)
	}
	if h := t.shown.held; h != nil {
		// Its wait may be over now, or shorter: its timer looks again at once, in a goroutine of
		// its own, so that the move's commit does not hold up the adapter that reported.
		h.timer.Reset(0)
	}
}

// published notes that msgs, handed to the outbox for the table's current state, include its
// public table message (table lock held).
func (t *tbl) published(pc *pace.Pacer, msgs []api.Message) {
	for _, m := range msgs {
		if m.Target.Kind == api.ToPlace && m.Key != "" {
			pc.Published(&t.shown.place, m.Version)
		}
	}
}

// paceWait is how long a computer's move must still wait for the place (table lock held).
func (t *tbl) paceWait(pc *pace.Pacer) time.Duration {
	return pc.Wait(&t.shown.place, t.st.Place.Platform, pc.Of(t.opts.Pace), t.moment())
}

// playWhenShown plays a computer's move m, decided for the position at seq, once the place has
// shown what came before (paceWait); meanwhile the table counts as thinking, and Shown or a timer
// tries again (table lock held).
func (tm timers) playWhenShown(t *tbl, seat core.Seat, seq uint64, m core.Move) {
	if t.st.Seq != seq || t.st.Paused || tm.life.Err() != nil || !tm.owns(t) {
		t.thinking = false
		tm.schedule(t) // the table moved on meanwhile (or the lease): think again about the new position
		return
	}
	if wait := t.paceWait(tm.pacer); wait > 0 {
		h := &heldMove{seat: seat, seq: seq, move: m}
		h.timer = time.AfterFunc(wait, func() {
			t.mu.Lock()
			defer t.mu.Unlock()
			if t.shown.held == h {
				t.shown.held = nil
				tm.playWhenShown(t, seat, seq, m)
			}
		})
		t.shown.held = h
		return
	}
	t.thinking = false
	tm.robotMove(t, seat, m)
}

// dropHeld lets go of a computer's held move whose position is gone (table lock held): the
// table's computers may think afresh.
func (t *tbl) dropHeld() {
	if h := t.shown.held; h != nil && h.seq != t.st.Seq {
		h.timer.Stop()
		t.shown.held = nil
		t.thinking = false
	}
}

// holdHands takes out of msgs, about to be delivered for the table as it is now, the private hand
// messages that must wait for the place (table lock held): at a finished trick or a new deal,
// until the place shows it (Shown), at most Pace.Wait. Whoever acts next sees their turn only
// then, so the place never trails a person who plays at once by a trick or a game. Hands held
// for an earlier state go out now, ahead of msgs, or wait on with them.
func (p *publisher) holdHands(t *tbl, msgs []api.Message) []api.Message {
	sh := &t.shown
	if h := sh.hands; h != nil {
		h.timer.Stop()
		sh.hands = nil
		msgs = append(h.msgs, msgs...)
	}
	if shown, _ := sh.place.Last(); !p.pacer.Gated(&sh.place, t.st.Place.Platform) || shown >= t.st.Seq || !t.atBoundary() {
		return msgs
	}
	var now, later []api.Message
	for _, m := range msgs {
		if m.Kind == api.KindHand && m.Target.Kind != api.ToPlace {
			later = append(later, m)
		} else {
			now = append(now, m)
		}
	}
	if len(later) == 0 {
		return msgs
	}
	h := &heldHands{seq: t.st.Seq, msgs: later}
	h.timer = time.AfterFunc(sh.place.WaitLimit(p.pacer.Of(t.opts.Pace)), func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		p.releaseHands(t, h)
	})
	sh.hands = h
	return now
}

// releaseHands delivers held hands, unless they went out already (table lock held).
func (p *publisher) releaseHands(t *tbl, h *heldHands) {
	if t.shown.hands != h {
		return
	}
	h.timer.Stop()
	t.shown.hands = nil
	if p.life.Err() == nil {
		p.deliver(p.life, t.st.Place.Platform, h.msgs)
	}
}

// atBoundary reports whether the table is at a finished trick or a new deal of a match under
// way: what the place must show before anyone plays on (table lock held).
func (t *tbl) atBoundary() bool { return t.moment().Boundary() && !t.match.Over() }

// holdFor is how long the public table message should stay in view before the next edit
// replaces it (Message.HoldFor): a finished trick, Pace.TrickShown (table lock held).
func (t *tbl) holdFor(pc *pace.Pacer) time.Duration { return t.moment().HoldFor(pc.Of(t.opts.Pace)) }

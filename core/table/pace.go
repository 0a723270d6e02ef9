package table

import (
	"sync"
	"time"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/options"
)

// A human pace: the game never runs ahead of what its place can show. Where an adapter reports
// what the place's public table message shows (Shown), a computer player's move waits until the
// place shows the table as it was before it (within Pace.Wait), and then as long as the moment
// asks: a finished trick stays in view with its winner (Pace.Trick), a game's result before the
// next game's first move (Pace.Game), and any card a moment (Pace.Card). A person's own move
// never waits; but a person who plays at once is not let run ahead of the place either: the
// prompt that lets them (their hand, with "your turn") waits, within Pace.Wait, until the place
// shows a finished trick or a game's result (holdHands), so that the place is never a trick or a
// game behind. A place whose adapter never reports (the terminal) is not held back.

// Pace is what a preset means in time.
type Pace struct {
	// Card is how long a card (or a call) is in view before a computer plays the next one.
	Card time.Duration
	// Trick is how long a finished trick is in view, with its winner, before a computer plays on.
	Trick time.Duration
	// Game is how long a game's result is in view before a computer makes the next game's first
	// move.
	Game time.Duration
	// TrickShown is how long a finished trick stays in view before anything replaces it, even a
	// person's card: adapters hold the next edit of the table message that long
	// (Message.HoldFor).
	TrickShown time.Duration
	// Wait bounds how long a computer waits for the place to show what came before: a surface
	// that is slow or stuck does not stop the table.
	Wait time.Duration
}

// DefaultPaces are the presets' times.
var DefaultPaces = map[options.PacePreset]Pace{
	options.PaceFast:    {Card: 0, Trick: time.Second, Game: 2 * time.Second, TrickShown: time.Second, Wait: 6 * time.Second},
	options.PaceNormal:  {Card: 600 * time.Millisecond, Trick: 2 * time.Second, Game: 4 * time.Second, TrickShown: time.Second, Wait: 8 * time.Second},
	options.PaceRelaxed: {Card: 1500 * time.Millisecond, Trick: 3 * time.Second, Game: 6 * time.Second, TrickShown: 1500 * time.Millisecond, Wait: 10 * time.Second},
}

// pacer is what the pace asks of a table, worked out from the table alone: it needs the presets'
// times (Config.Paces), the clock, and which platforms report what their places show (Reports),
// none of the service's I/O. Its methods are called with the table's lock held.
type pacer struct {
	paces     map[options.PacePreset]Pace
	now       func() time.Time
	reporting *sync.Map // platform → true (Reports)
}

// pace is the table's pace in time (Config.Paces, else DefaultPaces).
func (s *Service) pace(t *tbl) Pace { return s.pacer.pace(t) }

// pace is the table's pace in time (Config.Paces, else DefaultPaces).
func (pc pacer) pace(t *tbl) Pace {
	if p, ok := pc.paces[t.opts.Pace]; ok {
		return p
	}
	if p, ok := DefaultPaces[t.opts.Pace]; ok {
		return p
	}
	return DefaultPaces[options.PaceNormal]
}

// shownState is what the adapters have said the place's public table message shows (Shown), and
// what the service last gave them to show there. It lives in memory: after a restart the place is
// not gated until its adapter reports again. Its fields are the table's lock's, but report, which
// has a lock of its own.
type shownState struct {
	// report is what the adapters reported.
	report shownReport
	// published is the Version of the last public table message handed to the outbox, at
	// publishedAt.
	published   uint64
	publishedAt time.Time
	// many is how many public messages were published with it (a new deal's: the last game's
	// table, its result, the new table).
	many int
	// held is a computer's move decided and waiting for its moment (playWhenShown).
	held *heldMove
	// hands are the private hand messages of a finished trick or a new deal, waiting until the
	// place shows it (holdHands).
	hands *heldHands
}

// shownReport is what the adapters reported a place's public table message shows, under a lock
// of its own, which guards memory only: an adapter's report (Shown) never waits for the table's
// lock, which a command holds through the table's commit.
type shownReport struct {
	mu sync.Mutex
	// reports says an adapter reported this place's shown-ness (or its platform's adapter said
	// it will, Reports): only then does the game wait for it. A place whose surface never
	// reports (the terminal) is never gated.
	reports bool
	// shown is the highest Version an adapter reported shown, at shownAt (the report's time).
	shown   uint64
	shownAt time.Time
	// waiting says a goroutine waits for the table's lock to act on the reports (afterShown).
	waiting bool
}

// note takes a report of seq shown at now; false when an equal or newer one came before.
func (r *shownReport) note(seq uint64, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reports = true
	if seq <= r.shown {
		return false
	}
	r.shown, r.shownAt = seq, now
	return true
}

// last gives the highest Version reported shown, and when.
func (r *shownReport) last() (uint64, time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.shown, r.shownAt
}

// heldHands are hand messages of the table at seq, delivered once the place shows it, or when
// timer fires (Pace.Wait).
type heldHands struct {
	seq   uint64
	msgs  []Message
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
func (s *Service) Reports(platform string) { s.pacer.reporting.Store(platform, true) }

// gated reports whether the table's place reports what it shows (table lock held).
func (pc pacer) gated(t *tbl) bool {
	r := &t.shown.report
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.reports {
		_, r.reports = pc.reporting.Load(t.st.Place.Platform)
	}
	return r.reports
}

// Shown tells the service that the public table message of place p now shows the table at seq
// (the Version of the Message the adapter edited or posted there). Adapters call it once the
// platform has taken the edit or the post. Computer players and the next deal at that place then
// wait, within bounds, until the place shows what came before (pace.go); a place whose adapter
// never calls Shown is not held back. A seq lower than one reported before, or for a place with
// no table in memory, changes nothing. It is safe to call from any goroutine, and never waits
// for the table's lock: what the report lets go (held hands, a computer's held move) goes at once
// when the table is free, else as soon as it is (a commit in progress ends).
func (s *Service) Shown(p Place, seq uint64) {
	id := s.TableAt(p)
	if id == "" {
		return
	}
	t, ok := s.table(id)
	if !ok {
		return
	}
	r := &t.shown.report
	if !r.note(seq, s.cfg.Now()) {
		return
	}
	if t.mu.TryLock() {
		defer t.mu.Unlock()
		s.afterShown(t)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.waiting {
		return // the goroutine waiting acts on this report too
	}
	r.waiting = true
	// Not one of the service's goroutines (s.wg): an adapter may report after Close; what it
	// lets go then does nothing (releaseHands and playWhenShown look at the service's ctx).
	go func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		r.mu.Lock()
		r.waiting = false
		r.mu.Unlock()
		s.afterShown(t)
	}()
}

// afterShown lets go what the place's reports allow (table lock held): the hands held until it
// shows their state, and a computer's held move, whose wait may be over now.
func (s *Service) afterShown(t *tbl) {
	seq, _ := t.shown.report.last()
	if h := t.shown.hands; h != nil && seq >= h.seq {
		s.releaseHands(t, h)
	}
	if h := t.shown.held; h != nil {
		// Its wait may be over now, or shorter: its timer looks again at once, in a goroutine of
		// its own, so that the move's commit does not hold up the adapter that reported.
		h.timer.Reset(0)
	}
}

// notePublished notes that msgs, handed to the outbox for the table's current state, include its
// public table message (table lock held).
func (pc pacer) notePublished(t *tbl, msgs []Message) {
	for _, m := range msgs {
		switch {
		case m.Target.Kind != ToPlace || m.Key == "" || m.Version < t.shown.published:
		case m.Version > t.shown.published:
			t.shown.many = 1
			t.shown.published, t.shown.publishedAt = m.Version, pc.now()
		default:
			t.shown.many++
		}
	}
}

// paceWait is how long a computer's move must still wait for the place (table lock held): until
// the place shows the last public version (at most Pace.Wait after it was published), then as
// long as what it shows asks to stay in view.
func (pc pacer) paceWait(t *tbl) time.Duration {
	sh := &t.shown
	if !pc.gated(t) || sh.published == 0 {
		return 0
	}
	p, now := pc.pace(t), pc.now()
	shown, shownAt := sh.report.last()
	var from time.Time // since when the place shows the table as it is
	switch giveUp := sh.publishedAt.Add(pc.waitLimit(t, p)); {
	case shown >= sh.published:
		from = shownAt
	case now.Before(giveUp):
		return giveUp.Sub(now) // Shown plays it sooner
	default:
		from = giveUp // not shown in time: the table goes on
	}
	return max(from.Add(pc.inView(t, p)).Sub(now), 0)
}

// inView is how long the table as it is now should be in view before a computer moves.
func (pacer) inView(t *tbl, p Pace) time.Duration {
	g := t.game()
	switch {
	case g == nil:
		return 0
	case t.match.NumGames() > 1 && len(g.Moves()) == 0:
		return p.Game // the last game's result, and the new deal
	case g.Phase() == core.PhasePlay && g.TricksDone() > 0 && g.CurrentTrick().N == 0:
		return p.Trick // the trick just finished, and who won it
	}
	return p.Card
}

// playWhenShown plays a computer's move m, decided for the position at seq, once the place has
// shown what came before (paceWait); meanwhile the table counts as thinking, and Shown or a timer
// tries again (table lock held).
func (s *Service) playWhenShown(t *tbl, seat core.Seat, seq uint64, m core.Move) {
	if t.st.Seq != seq || t.st.Paused || s.ctx.Err() != nil || !s.ownsTable(t) {
		t.thinking = false
		s.scheduleRobot(t) // the table moved on meanwhile (or the lease): think again about the new position
		return
	}
	if wait := s.pacer.paceWait(t); wait > 0 {
		h := &heldMove{seat: seat, seq: seq, move: m}
		h.timer = time.AfterFunc(wait, func() {
			t.mu.Lock()
			defer t.mu.Unlock()
			if t.shown.held == h {
				t.shown.held = nil
				s.playWhenShown(t, seat, seq, m)
			}
		})
		t.shown.held = h
		return
	}
	t.thinking = false
	s.robotMove(t, seat, m)
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
func (s *Service) holdHands(t *tbl, msgs []Message) []Message {
	sh := &t.shown
	if h := sh.hands; h != nil {
		h.timer.Stop()
		sh.hands = nil
		msgs = append(h.msgs, msgs...)
	}
	if shown, _ := sh.report.last(); !s.pacer.gated(t) || shown >= t.st.Seq || !s.pacer.atBoundary(t) {
		return msgs
	}
	var now, later []Message
	for _, m := range msgs {
		if m.Kind == KindHand && m.Target.Kind != ToPlace {
			later = append(later, m)
		} else {
			now = append(now, m)
		}
	}
	if len(later) == 0 {
		return msgs
	}
	h := &heldHands{seq: t.st.Seq, msgs: later}
	h.timer = time.AfterFunc(s.pacer.waitLimit(t, s.pace(t)), func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		s.releaseHands(t, h)
	})
	sh.hands = h
	return now
}

// waitLimit bounds how long the table waits for its place to show the last version published:
// Pace.Wait for each public message published with it, which the place shows one after another
// (table lock held).
func (pacer) waitLimit(t *tbl, p Pace) time.Duration {
	return p.Wait * time.Duration(max(t.shown.many, 1))
}

// releaseHands delivers held hands, unless they went out already (table lock held).
func (s *Service) releaseHands(t *tbl, h *heldHands) {
	if t.shown.hands != h {
		return
	}
	h.timer.Stop()
	t.shown.hands = nil
	if s.ctx.Err() == nil {
		s.deliver(s.ctx, t.st.Place.Platform, h.msgs)
	}
}

// atBoundary reports whether the table is at a finished trick or a new deal of a match under
// way: what the place must show before anyone plays on (table lock held).
func (pacer) atBoundary(t *tbl) bool {
	g := t.game()
	if g == nil || t.match.Over() {
		return false
	}
	return t.match.NumGames() > 1 && len(g.Moves()) == 0 ||
		g.Phase() == core.PhasePlay && g.TricksDone() > 0 && g.CurrentTrick().N == 0
}

// holdFor is how long the public table message m should stay in view before the next edit
// replaces it (Message.HoldFor): a finished trick, Pace.TrickShown (table lock held).
func (s *Service) holdFor(t *tbl) time.Duration {
	if g := t.game(); g != nil && g.Phase() == core.PhasePlay && g.TricksDone() > 0 && g.CurrentTrick().N == 0 {
		return s.pace(t).TrickShown
	}
	return 0
}

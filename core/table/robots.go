package table

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/pace"
	"github.com/kontermatt/kontermatt/core/table/placement"
)

// timers are what moves a table with no command: its deadline's timer (arm, fire), its computer
// players' decisions (schedule; a decision then waits for the place to show what came before,
// playWhenShown), and a change of theirs the store did not take, tried again later (background).
// It exists so that what a table does by itself, and all it needs for that, is one place and
// explicit: the service's life and goroutines, the clock, the deadlines' and the decisions'
// lengths, whether this copy owns the place, the pace, the rules (play), the metrics and the
// log; back into the engine go only commit (store and tell what it did, which starts the timers
// again: Service.commit) and reload (take in another copy's newer state: follower.reload).
type timers struct {
	life    context.Context // the service's: nothing moves once it ends
	wg      *sync.WaitGroup // the service's: Close waits for a decision in flight
	now     func() time.Time
	overFor time.Duration    // Config.OverFor
	think   time.Duration    // Config.Think
	place   *placement.Owner // this copy's places: only their owner moves them
	pacer   *pace.Pacer
	play    play
	observe Observer
	log     *slog.Logger
	commit  func(ctx context.Context, t *tbl, cmd api.Command, out *outcome, acted actedKind, restart bool) *userError
	reload  func(ctx context.Context, t *tbl, why string) *userError
}

// start (re)starts what the table does by itself (table lock held): its deadline's timer and a
// computer's decision when one is due.
func (tm timers) start(t *tbl) {
	tm.arm(t)
	tm.schedule(t)
}

// stop stops the table's timers (table lock held): its deadline's and a retry's.
func (tm timers) stop(t *tbl) {
	if t.timer != nil {
		t.timer.Stop()
	}
	if t.retry != nil {
		t.retry.Stop()
	}
}

// owns reports whether this copy owns the table's place (table lock held).
func (tm timers) owns(t *tbl) bool { return tm.place.Owns(t.st.Place.Key()) }

// actsForItself reports whether a computer decides for the seat: a computer player, or a human
// marked away after a timeout.
func (t *tbl) actsForItself(seat core.Seat) bool {
	st := t.st.Seats[seat]
	return st.Robot || st.Away
}

// schedule starts a computer decision when one is due (table lock held). The decision runs
// off the command path: the human command that led here has already been stored and answered.
func (tm timers) schedule(t *tbl) {
	t.dropHeld()
	g := t.game()
	if g == nil || t.thinking || t.st.Paused || tm.life.Err() != nil || !tm.owns(t) {
		return
	}
	seat := g.ToMove()
	if !t.actsForItself(seat) {
		return
	}
	d := t.robots[seat]
	if d == nil {
		return
	}
	t.thinking = true
	// The match's view: with the board, so that the computer plays for the match.
	view, seq, level := t.match.View(seat), t.st.Seq, t.opts.Level
	tm.wg.Add(1)
	go func() {
		defer tm.wg.Done()
		ctx, cancel := context.WithTimeout(tm.life, tm.think)
		start := time.Now()
		m := d.Decide(ctx, view)
		tm.observe.Decision(level, time.Since(start))
		cancel()
		t.mu.Lock()
		defer t.mu.Unlock()
		tm.playWhenShown(t, seat, seq, m) // once the place shows what came before (pace.go)
	}()
}

// robotMove applies a computer decision like a command, falling back to the first legal move if
// the decider returned something illegal (a bug there must not stall the table).
func (tm timers) robotMove(t *tbl, seat core.Seat, m core.Move) {
	g := t.game()
	if g == nil {
		return
	}
	if m.Seat != seat || g.Check(m) != nil {
		tm.log.Warn("computer player chose an illegal move; playing a legal one", "table", t.st.ID, "seat", seat)
		m = fallbackMove(g, seat)
	}
	cmd := api.Command{Place: t.st.Place, Table: t.st.ID, Actor: api.Player{ID: robotID(seat)}, Verb: verbOf(m), Args: []string{moveArg(m)}}
	var out outcome
	if uerr := tm.play.applyMove(t, g, m, &out); uerr != nil {
		tm.log.Error("computer move refused", "table", t.st.ID, "err", uerr.key)
		return
	}
	tm.background(t, cmd, &out, true)
}

func robotID(seat core.Seat) string { return "robot:" + seat.String() }

func fallbackMove(g *core.Game, seat core.Seat) core.Move {
	if g.Phase() == core.PhaseTrump {
		return core.NameTrump(seat, g.FirstPacket(seat).First().Suit())
	}
	return core.Play(seat, g.LegalCards(seat).First())
}

func verbOf(m core.Move) api.Verb {
	switch m.Kind {
	case core.MoveTrump:
		return api.VerbTrump
	case core.MoveAnnounce:
		return api.VerbAnnounce
	}
	return api.VerbPlay
}

func moveArg(m core.Move) string {
	switch m.Kind {
	case core.MoveTrump:
		return m.Suit.String()
	case core.MoveAnnounce:
		return m.Call.String()
	}
	return m.Card.String()
}

// deadline gives the table's next timer: what is due and when (zero time: none); a finished
// match waits overFor (Config.OverFor) for a rematch.
func (t *tbl) deadline(overFor time.Duration) (time.Time, api.Verb) {
	st := t.st
	if st.Paused { // nobody can see the table: nobody's time runs out
		return time.Time{}, ""
	}
	reminder, timeout, lobby := t.opts.Timer.Durations()
	start := time.UnixMilli(st.TurnAt)
	switch st.Status {
	case api.StatusLobby:
		return start.Add(lobby), api.VerbTimeout
	case api.StatusOver:
		return start.Add(overFor), api.VerbTimeout
	case api.StatusPlaying:
		g := t.game()
		if g == nil || timeout == 0 || t.actsForItself(g.ToMove()) {
			return time.Time{}, ""
		}
		if !st.Reminded {
			return start.Add(reminder), api.VerbTimeout
		}
		return start.Add(timeout), api.VerbTimeout
	}
	return time.Time{}, ""
}

// arm (re)starts the table's timer for its next deadline (table lock held). Deadlines derive from
// stored state, so a restart re-arms them exactly.
func (tm timers) arm(t *tbl) {
	if t.timer != nil {
		t.timer.Stop()
		t.timer = nil
	}
	at, _ := t.deadline(tm.overFor)
	if at.IsZero() || tm.life.Err() != nil || !tm.owns(t) {
		return // no deadline; or the copy owning the place fires it
	}
	seq := t.st.Seq
	t.timer = time.AfterFunc(max(at.Sub(tm.now()), 0), func() { tm.fire(t, seq) })
}

// fire handles a deadline (play.timeout says what it does) and stores what it did.
func (tm timers) fire(t *tbl, seq uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.st.Seq != seq || tm.life.Err() != nil || !tm.owns(t) {
		return
	}
	cmd := api.Command{Place: t.st.Place, Table: t.st.ID, Verb: api.VerbTimeout}
	var out outcome
	args, due := tm.play.timeout(t, &out)
	if !due {
		return
	}
	cmd.Args = args
	tm.background(t, cmd, &out, false)
}

// background commits what a computer player or a timer did (table lock held). No one is waiting
// for an answer, so a failed commit (a passing disk error) is tried again later instead of
// leaving the table stalled until a restart: the state rolled back, so the retry decides afresh.
func (tm timers) background(t *tbl, cmd api.Command, out *outcome, restart bool) {
	out.owner = true
	uerr := tm.commit(tm.life, t, cmd, out, actedNone, restart)
	if uerr == nil || uerr == errFencedRefusal {
		return // stored; or refused as this copy no longer owns the place
	}
	// Another copy moved the table on: what is due now follows from its state (reload re-arms
	// the timer and lets the computer players think again).
	if uerr == errConflicted && tm.reload(tm.life, t, "conflict") == nil {
		return
	}
	if tm.life.Err() != nil {
		return // the service stops: the table goes on from the store when it starts again
	}
	t.failures++
	if t.retry != nil {
		t.retry.Stop()
	}
	wait := retryDelay(t.failures)
	tm.log.Warn("will try the table's next step again", "table", t.st.ID, "in", wait, "failures", t.failures)
	t.retry = time.AfterFunc(wait, func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		if tm.life.Err() != nil {
			return
		}
		tm.start(t)
	})
}

// retryDelay grows from 250 ms to a minute with the failures in a row.
func retryDelay(failures int) time.Duration {
	d := 250 * time.Millisecond << min(failures-1, 8)
	return min(d, time.Minute)
}

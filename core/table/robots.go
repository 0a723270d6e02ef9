package table

import (
	"context"
	"time"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// actsForItself reports whether a computer decides for the seat: a computer player, or a human
// marked away after a timeout.
func (t *tbl) actsForItself(seat core.Seat) bool {
	st := t.st.Seats[seat]
	return st.Robot || st.Away
}

// scheduleRobot starts a computer decision when one is due (table lock held). The decision runs
// off the command path: the human command that led here has already been stored and answered.
func (s *Service) scheduleRobot(t *tbl) {
	t.dropHeld()
	g := t.game()
	if g == nil || t.thinking || t.st.Paused || s.ctx.Err() != nil || !s.ownsTable(t) {
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
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		ctx, cancel := context.WithTimeout(s.ctx, s.cfg.Think)
		start := time.Now()
		m := d.Decide(ctx, view)
		s.cfg.Observe.Decision(level, time.Since(start))
		cancel()
		t.mu.Lock()
		defer t.mu.Unlock()
		s.playWhenShown(t, seat, seq, m) // once the place shows what came before (pace.go)
	}()
}

// robotMove applies a computer decision like a command, falling back to the first legal move if
// the decider returned something illegal (a bug there must not stall the table).
func (s *Service) robotMove(t *tbl, seat core.Seat, m core.Move) {
	g := t.game()
	if g == nil {
		return
	}
	if m.Seat != seat || g.Check(m) != nil {
		s.cfg.Log.Warn("computer player chose an illegal move; playing a legal one", "table", t.st.ID, "seat", seat)
		m = fallbackMove(g, seat)
	}
	cmd := api.Command{Place: t.st.Place, Table: t.st.ID, Actor: api.Player{ID: robotID(seat)}, Verb: verbOf(m), Args: []string{moveArg(m)}}
	var out outcome
	if uerr := s.play.applyMove(t, g, m, &out); uerr != nil {
		s.cfg.Log.Error("computer move refused", "table", t.st.ID, "err", uerr.key)
		return
	}
	s.commitBackground(t, cmd, &out, actedNone, true)
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
func (s *Service) arm(t *tbl) {
	if t.timer != nil {
		t.timer.Stop()
		t.timer = nil
	}
	at, _ := t.deadline(s.cfg.OverFor)
	if at.IsZero() || s.ctx.Err() != nil || !s.ownsTable(t) {
		return // no deadline; or the copy owning the place fires it
	}
	seq := t.st.Seq
	t.timer = time.AfterFunc(max(at.Sub(s.cfg.Now()), 0), func() { s.fire(t, seq) })
}

// fire handles a deadline (play.timeout says what it does) and stores what it did.
func (s *Service) fire(t *tbl, seq uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.st.Seq != seq || s.ctx.Err() != nil || !s.ownsTable(t) {
		return
	}
	cmd := api.Command{Place: t.st.Place, Table: t.st.ID, Verb: api.VerbTimeout}
	var out outcome
	args, due := s.play.timeout(t, &out)
	if !due {
		return
	}
	cmd.Args = args
	s.commitBackground(t, cmd, &out, actedNone, false)
}

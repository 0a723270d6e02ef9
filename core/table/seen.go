package table

import (
	"context"
	"time"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/render"
)

// Seen gives what the person p may see of a table now, for a surface that draws the table itself
// (the web table): its model is render's (render.Seen), made from the same sight as every message,
// under the table's lock. false when the table is unknown or closed.
func (s *Service) Seen(ctx context.Context, tableID string, p api.Player) (render.Seen, bool) {
	t, _ := s.follow.lookup(ctx, tableID) // a socket may come to this copy for a table another opened
	if t == nil {
		return render.Seen{}, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.st.Status == api.StatusClosed {
		return render.Seen{}, false
	}
	reader := seatOf(t.st, p.ID)
	var own *core.View
	var clock *render.TurnClock
	if g := t.game(); g != nil {
		if reader.Valid() {
			v := g.View(reader)
			own = &v
		}
		clock = t.turnClock(g.ToMove(), s.cfg.Now)
	}
	return s.view.Seen(s.pub.sight(t), p, reader, own, clock, s.pacer.Of(t.opts.Pace)), true
}

// turnClock is the turn's time of the seat to move, or nil when none runs for it: no timer, a
// computer to move (or one playing for an absent person), a paused table.
func (t *tbl) turnClock(seat core.Seat, now func() time.Time) *render.TurnClock {
	_, timeout, _ := t.opts.Timer.Durations()
	if timeout == 0 || t.st.Paused || !seat.Valid() || t.actsForItself(seat) {
		return nil
	}
	left := time.UnixMilli(t.st.TurnAt).Add(timeout).Sub(now())
	return &render.TurnClock{Seat: seat, Left: max(left, 0), Total: timeout, Reminded: t.st.Reminded}
}

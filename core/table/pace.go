package table

import "time"

// shownState is what the adapters have said the place's public table message shows (Shown), and
// what the service last gave them to show there. It lives in memory: after a restart the place is
// not gated until its adapter reports again.
type shownState struct {
	// reports says an adapter reports this place's shown-ness: only then does the game wait for
	// it. A place whose surface never reports (the terminal) is never gated.
	reports bool
	// published is the Version of the last public table message handed to the outbox, at
	// publishedAt.
	published   uint64
	publishedAt time.Time
	// shown is the highest Version an adapter reported shown, at shownAt (the report's time).
	shown   uint64
	shownAt time.Time
}

// Shown tells the service that the public table message of place p now shows the table at seq
// (the Version of the Message the adapter edited or posted there). Adapters call it once the
// platform has taken the edit or the post. Computer players and the next deal at that place then
// wait, within bounds, until the place shows what came before (pace.go); a place whose adapter
// never calls Shown is not held back. A seq lower than one reported before, or for a place with
// no table in memory, changes nothing. It is safe to call from any goroutine.
func (s *Service) Shown(p Place, seq uint64) {
	id := s.TableAt(p)
	if id == "" {
		return
	}
	t, ok := s.table(id)
	if !ok {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.shown.reports = true
	if seq <= t.shown.shown {
		return
	}
	t.shown.shown, t.shown.shownAt = seq, s.cfg.Now()
}

// notePublished notes that msgs, handed to the outbox for the table's current state, include its
// public table message (table lock held).
func (s *Service) notePublished(t *tbl, msgs []Message) {
	for _, m := range msgs {
		if m.Target.Kind == ToPlace && m.Key != "" && m.Version > t.shown.published {
			t.shown.published, t.shown.publishedAt = m.Version, s.cfg.Now()
		}
	}
}

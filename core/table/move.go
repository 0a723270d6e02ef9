package table

import (
	"context"
	"errors"
	"fmt"

	"github.com/kontermatt/kontermatt/core/table/api"
)

// What a platform does to a table's place: it gets a new ID, the bot is removed from it, or the
// bot may no longer write there. Each is stored like a command (with an internal verb), so it
// outlasts a restart.

// ErrPlaceTaken is MovePlace's answer when the new place has a live table of its own.
var ErrPlaceTaken = errors.New("table: the new place has a table of its own")

// errStore is returned when the store refused the change (it was rolled back and logged).
var errStore = errors.New("table: the change could not be stored")

// MovePlace moves the current table of a place to another place: the chat got a new ID (a
// Telegram group upgraded to a supergroup). The move is stored like any change, the service
// finds the table at the new place from then on, and the table's messages are published anew
// there: the old place's messages cannot be edited from the new one. A place without a table
// moves nothing; a table that moved already stays where it is.
func (s *Service) MovePlace(ctx context.Context, from, to api.Place) error {
	if from.Key() == to.Key() {
		return nil
	}
	if s.ctx.Err() != nil {
		return errors.New("table: the service is closed")
	}
	// The place index is the service's (tableIndex), and a table's place is read under the
	// index's lock alone (find). That lock is not held through the commit (no other table waits
	// for it): the index changes once the move is stored, under the table's lock.
	id, t, ok := s.index.current(from.Key())
	other, _, taken := s.index.current(to.Key())
	if !ok {
		return nil
	}
	if taken && other != id {
		return fmt.Errorf("%w: %s has table %s", ErrPlaceTaken, to.Key(), other)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for attempt := 1; ; attempt++ {
		if t.st.Status == api.StatusClosed || t.st.Place.Key() != from.Key() {
			return nil // closed, or moved by another copy meanwhile
		}
		old := t.st.Place
		if to.Title == "" {
			to.Title = old.Title
		}
		t.st.Place = to
		// Every message is new at the new place: nothing the old place showed counts as sent.
		clear(t.sent)
		t.handSig = [4]handSig{}
		cmd := api.Command{Place: to, Table: id, Verb: api.VerbMove, Args: []string{old.Key()}}
		uerr := s.commit(ctx, t, cmd, &outcome{changed: true}, actedNone, false)
		if uerr == errConflicted && attempt < maxAttempts && s.follow.reload(ctx, t, "conflict") == nil {
			continue
		}
		if uerr != nil {
			return errStore // the state rolled back to the old place
		}
		s.index.move(t, from.Key(), to.Key())
		s.placed.moved(ctx, to.Key(), id)
		s.placed.giveBack(ctx, from.Key(), id, nil)
		s.cfg.Log.Info("table moved", "table", id, "from", old.Key(), "to", to.Key())
		return nil
	}
}

// CloseChat closes every live table in a chat of a platform, in any of its threads: the bot was
// removed from the chat. Each is stored closed like a stopped table (a match in progress is kept
// as a record) and its last messages are published as for any closed table; the adapter drops
// those for a chat it may no longer write to, so players learn it from their private messages.
// It gives how many tables it closed.
func (s *Service) CloseChat(ctx context.Context, platform, chat string) (int, error) {
	n, err := s.closeWhere(ctx, func(p api.Place) bool { return p.Platform == platform && p.Chat == chat }, "removed")
	if n > 0 {
		s.cfg.Log.Info("tables closed: the bot was removed from their chat", "platform", platform, "chat", chat, "tables", n)
	}
	return n, err
}

// ClosePlace closes the live table of one place that is gone for good (a deleted forum topic) as
// CloseChat closes a chat's. It gives how many tables it closed (0 or 1).
func (s *Service) ClosePlace(ctx context.Context, place api.Place) (int, error) {
	n, err := s.closeWhere(ctx, func(p api.Place) bool { return p.Key() == place.Key() }, "gone")
	if n > 0 {
		s.cfg.Log.Info("table closed: its place is gone", "place", place.Key())
	}
	return n, err
}

// closeWhere closes the live tables whose place matches, stored with the reason.
func (s *Service) closeWhere(ctx context.Context, match func(api.Place) bool, reason string) (int, error) {
	if s.ctx.Err() != nil {
		return 0, errors.New("table: the service is closed")
	}
	n := 0
	var failed error
	for _, t := range s.index.all() {
		t.mu.Lock()
		for attempt := 1; ; attempt++ {
			p := t.st.Place
			if !match(p) || t.st.Status == api.StatusClosed {
				break
			}
			var out outcome
			s.play.close(t, &out)
			cmd := api.Command{Place: p, Table: t.st.ID, Verb: api.VerbClose, Args: []string{reason}}
			uerr := s.commit(ctx, t, cmd, &out, actedNone, false)
			if uerr == errConflicted && attempt < maxAttempts && s.follow.reload(ctx, t, "conflict") == nil {
				continue
			}
			if uerr != nil {
				failed = errStore
			} else {
				n++
			}
			break
		}
		t.mu.Unlock()
	}
	return n, failed
}

// Pause pauses (or resumes) the current table of a place that cannot be written to: the bot lost
// the right to post there, or its forum topic was closed. While paused no computer player moves
// and no timer runs (nobody can see whose turn it is, so nobody is timed out); people's own
// commands still work, their private hands stay live, and the place's messages catch up when
// it can be written to again. Each seated person is told privately, once per pause, and again
// when it ends; the turn's time then starts afresh. The pause is stored, so it outlasts a
// restart. Pausing a paused table, or resuming a running one, does nothing.
func (s *Service) Pause(ctx context.Context, p api.Place, paused bool) error {
	if s.ctx.Err() != nil {
		return errors.New("table: the service is closed")
	}
	id := s.TableAt(p)
	if id == "" {
		return nil
	}
	t, ok := s.index.get(id)
	if !ok {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for attempt := 1; ; attempt++ {
		err := s.pause(ctx, t, p, paused)
		if err != errConflicted || attempt == maxAttempts || s.follow.reload(ctx, t, "conflict") != nil {
			if err != nil {
				return errStore
			}
			return nil
		}
	}
}

// pause is one attempt of Pause (table lock held).
func (s *Service) pause(ctx context.Context, t *tbl, p api.Place, paused bool) *userError {
	st, id := t.st, t.id()
	if st.Status == api.StatusClosed || st.Paused == paused || st.Place.Key() != p.Key() {
		return nil
	}
	var out outcome
	arg := s.play.pause(t, paused, &out)
	cmd := api.Command{Place: st.Place, Table: id, Verb: api.VerbPause, Args: []string{arg}}
	// Resuming starts the turn's time again: the pause was nobody's delay.
	if uerr := s.commit(ctx, t, cmd, &out, actedNone, !paused); uerr != nil {
		return uerr
	}
	s.cfg.Log.Info("table pause", "table", id, "paused", paused)
	return nil
}

// Paused reports whether a table is paused (see Pause).
func (s *Service) Paused(tableID string) bool {
	t, ok := s.index.get(tableID)
	if !ok {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.st.Paused
}

package table

import (
	"context"
	"strings"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// leftSeat is a seat whose person leaves during the match: a computer player finishes it for
// them, and the record keeps that they left (they forfeit the match: docs/league.md).
func leftSeat(at core.Seat, seat SeatState) SeatState {
	robot := robotSeat(at)
	robot.Left, robot.Moved, robot.Absent = seat.Player, seat.Moved, seat.Absent
	return robot
}

// noteAbsent marks game n, just finished, in the seats of the people who made none of its moves
// themselves: a computer played all of it for them (they were away, or had left), and it does
// not count in their statistics (table lock held).
func (t *tbl) noteAbsent(n int) {
	for i := range t.st.Seats {
		seat := &t.st.Seats[i]
		if (seat.Player != nil || seat.Left != nil) && !seat.Moved {
			seat.Absent = append(seat.Absent, n)
		}
	}
}

// learnedMatch is a match that ended, as kept (its record) and as played.
type learnedMatch struct {
	rec   Record
	match *core.Match
}

// postSeasons has the league post last month's tables (League.PostSeasons), with what it needs
// of the engine: the places' languages, who is never ranked, the outboxes.
func (s *Service) postSeasons(ctx context.Context) {
	if s.cfg.League == nil {
		return
	}
	s.cfg.League.PostSeasons(ctx, Posting{Now: s.cfg.Now(), Hidden: s.hidden, Deliver: s.pub.deliver,
		Lang: func(ctx context.Context, placeKey string) string { return s.places.Get(ctx, placeKey).Lang }})
}

// sayAbout gives the text for key about the person id, named by its first argument; but when
// that person is the one reading their own screen (Surface.Personal), the text's second-person
// variant (key.you) with the other arguments, as say does for a seat: "You have not finished a
// game", not "You has …" with the terminal's "You" as a name.
func sayAbout(surface api.Surface, cmd api.Command, id, lang, key string, name string, args ...any) string {
	if id == cmd.Actor.ID && surface.Personal {
		return i18n.T(lang, key+".you", args...)
	}
	return i18n.T(lang, key, append([]any{name}, args...)...)
}

// placeTitle is how the place is named in the league's texts.
func placeTitle(cmd api.Command, lang string) string {
	if cmd.Place.Title != "" {
		return cmd.Place.Title
	}
	return i18n.T(lang, "league.here")
}

// hidden reports whether a person asked not to be ranked, or is a forgotten person's placeholder
// (rated, so that the others' ratings stay as they were, and never shown).
func (s *Service) hidden(id string) bool { return IsForgotten(id) || s.users.Get(id).Hidden }

// IsForgotten reports whether a player ID is a forgotten person's placeholder (Forget).
func IsForgotten(id string) bool { return strings.HasPrefix(id, forgottenPrefix) }

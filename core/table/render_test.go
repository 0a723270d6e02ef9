package table

import (
	"testing"

	"github.com/kontermatt/kontermatt/core"
)

// seated is a table in memory with the named players in seats 0 and 1 and computers in 2 and 3,
// enough to render texts that name seats.
func seated(lang string, names ...string) *tbl {
	st := &state{Lang: lang, Place: Place{Platform: "test", Chat: "g1"}}
	for i := range st.Seats {
		if i < len(names) {
			st.Seats[i] = SeatState{Player: &Player{ID: "p" + names[i], Name: names[i]}}
		} else {
			st.Seats[i] = SeatState{Robot: true}
		}
	}
	return &tbl{st: st, opts: DefaultOptions()}
}

// trickOf is a finished trick led by seat 0, won by winner.
func trickOf(winner core.Seat, cards string) core.Trick {
	tr := core.Trick{Leader: 0, N: 4, Winner: winner}
	copy(tr.Cards[:], core.MustCards(cards))
	return tr
}

func TestTrickTextCountsPoints(t *testing.T) {
	for _, tc := range []struct {
		name, lang, cards, want string
	}{
		{"one point", "en", "JH 9H 10H 9S", "Trick: Jang J♥ · Mia 9♥ · Computer 3 10♥ · Computer 4 9♠ → Jang wins 1 point"},
		{"points", "en", "AH 9H 10H 9S", "Trick: Jang A♥ · Mia 9♥ · Computer 3 10♥ · Computer 4 9♠ → Jang wins 4 points"},
		{"no points", "en", "10H 9H 10S 9S", "Trick: Jang 10♥ · Mia 9♥ · Computer 3 10♠ · Computer 4 9♠ → Jang wins 0 points"},
		{"french zero is singular", "fr", "10H 9H 10S 9S", "Pli: Jang 10♥ · Mia 9♥ · Ordinateur 3 10♠ · Ordinateur 4 9♠ → Jang remporte 0 point"},
		{"luxembourgish one", "lb", "JH 9H 10H 9S", "Streech: Jang J♥ · Mia 9♥ · Computer 3 10♥ · Computer 4 9♠ → Jang kritt 1 Punkt"},
		{"german", "de", "KH 9H 10H 9S", "Stich: Jang K♥ · Mia 9♥ · Computer 3 10♥ · Computer 4 9♠ → Jang bekommt 3 Punkte"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb := seated(tc.lang, "Jang", "Mia")
			if got := trickText(tb, tc.lang, trickOf(0, tc.cards), "live.trick"); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

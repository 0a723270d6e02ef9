package table

import (
	"strings"
	"testing"
	"testing/synctest"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/options"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/pace"
	"github.com/kontermatt/kontermatt/core/table/render"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// seated is a table in memory with the named players in seats 0 and 1 and computers in 2 and 3,
// enough to render texts that name seats.
func seated(lang string, names ...string) *tbl {
	st := &state{Lang: lang, Place: api.Place{Platform: "test", Chat: "g1"}}
	for i := range st.Seats {
		if i < len(names) {
			st.Seats[i] = SeatState{Player: &api.Player{ID: "p" + names[i], Name: names[i]}}
		} else {
			st.Seats[i] = SeatState{Robot: true}
		}
	}
	return &tbl{st: st, opts: options.Default()}
}

// sightOf is the table as its messages show it.
func sightOf(tb *tbl) *render.Sight { return (&publisher{pacer: &pace.Pacer{}}).sight(tb) }

// trickOf is a finished trick led by seat 0, won by winner.
func trickOf(winner core.Seat, cards string) core.Trick {
	tr := core.Trick{Leader: 0, N: 4, Winner: winner}
	copy(tr.Cards[:], core.MustCards(cards))
	return tr
}

var (
	personal = map[string]api.Surface{"test": {Typed: true, Personal: true}}
	typed    = map[string]api.Surface{"test": {Typed: true}}
)

// publicTexts plays a whole match for one human called "You" (as the terminal calls its player)
// on the harness's platform and gives every text shown at the place.
func publicTexts(t *testing.T, surfaces map[string]api.Surface) string {
	var all strings.Builder
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mem.New(), func(c *Config) { c.Surfaces = surfaces })
		defer h.svc.Close()
		me := api.Player{ID: "p1", Name: "You", Locale: "en"}
		if e := errText(h.do(me, api.VerbNew, "timer=none", "stripes=2")); e != "" {
			t.Fatal(e)
		}
		if e := errText(h.do(me, api.VerbDeal)); e != "" {
			t.Fatal(e)
		}
		h.playAsHuman(me, 10000)
		if last := h.do(me, api.VerbLast); errText(last) == "" {
			all.WriteString(last[0].Text + "\n")
		}
		for _, m := range h.out.all() {
			if m.Target.Kind == api.ToPlace {
				all.WriteString(m.Text + "\n")
			}
		}
	})
	return all.String()
}

// TestAPersonalScreenSpeaksToItsPlayer plays a match at a personal typed surface (the
// terminal's) and at a group with buttons: only the first says "you", and never "press".
func TestAPersonalScreenSpeaksToItsPlayer(t *testing.T) {
	thirdPerson := []string{"You wins", "You is choosing", "You announces", "▶ You to play", "dealer You", "named by You"}
	t.Run("personal screen", func(t *testing.T) {
		got := publicTexts(t, personal)
		for _, bad := range append(thirdPerson, "press", "button", "“Rematch”") {
			if strings.Contains(got, bad) {
				t.Errorf("says %q:\n%s", bad, got)
			}
		}
		for _, want := range []string{"You win", "▶ Your turn", "Type /join to take a seat", "Type /rematch to play again"} {
			if !strings.Contains(got, want) {
				t.Errorf("never says %q:\n%s", want, got)
			}
		}
	})
	t.Run("group", func(t *testing.T) {
		got := publicTexts(t, nil)
		for _, want := range []string{"You wins", "▶ You to play", "Join with the button or /join", "Play again: “Rematch” keeps the teams"} {
			if !strings.Contains(got, want) {
				t.Errorf("never says %q:\n%s", want, got)
			}
		}
		if strings.Contains(got, "Your turn") || strings.Contains(got, "Type /rematch") {
			t.Errorf("a group is spoken to as one person:\n%s", got)
		}
	})
}

// TestPublicStandInsFitTheSurface reads what a place without buttons shows instead of a secret
// answer: the typed command, not a button to press.
func TestPublicStandInsFitTheSurface(t *testing.T) {
	for _, tc := range []struct {
		name      string
		surfaces  map[string]api.Surface
		hand, bad string
	}{
		{"buttons", nil, "Your cards stay private: press “My hand” on the table message, or open a private chat with me.",
			"That card can't be played now: press “My hand” to see what you may play."},
		{"typed", typed, "Your cards stay private: type /hand in a private chat with me.",
			"That card can't be played now: type /hand in a private chat with me to see what you may play."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, mem.New(), func(c *Config) { c.Surfaces = tc.surfaces })
				defer h.svc.Close()
				me := player(1)
				h.do(me, api.VerbNew, "timer=none")
				h.do(me, api.VerbDeal)
				synctest.Wait()
				if r := h.do(me, api.VerbHand); len(r) != 1 || !r[0].Secret || r[0].Public != tc.hand {
					t.Errorf("hand: %+v\nwant the public text %q", r, tc.hand)
				}
				cmd := api.Command{Place: h.place, Actor: me}
				if got := h.svc.view.errorReply(cmd, "en", refuse("err.card_not_in_hand", lit("Q♠")).secret("err.public.play")); got.Public != tc.bad {
					t.Errorf("refusal: %q, want %q", got.Public, tc.bad)
				}
			})
		})
	}
}

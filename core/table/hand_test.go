package table

import (
	"strings"
	"testing"
	"testing/synctest"

	"github.com/kontermatt/kontermatt/core/i18n"
)

// While trump is being named every hand shows its cards as buttons, as it will all game; none is
// a legal move, and pressing one answers why: trump is not named yet.
func TestHandShowsCardButtonsBeforeTrump(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, NewMemStore())
		defer h.svc.Close()
		ps := fourHumans(t, h, "timer=none")
		synctest.Wait()
		fore, _ := h.toMove(ps)
		for _, p := range ps {
			m, ok := h.out.latest(KindHand, p.ID)
			if !ok {
				t.Fatalf("no hand for %s", p.ID)
			}
			var cards []Button
			for _, row := range m.Buttons {
				for _, b := range row {
					if b.Action.Verb == VerbPlay {
						cards = append(cards, b)
					}
				}
			}
			if len(cards) != 3 {
				t.Errorf("%s's hand before trump has %d card buttons, want the 3 of the first packet:\n%s", p.ID, len(cards), m.Text)
			}
			for _, b := range cards {
				if b.Legal {
					t.Errorf("%s's card %s is marked legal before trump", p.ID, b.Label)
				}
				if !strings.Contains(m.Text, b.Label) {
					t.Errorf("the button %s is not a card of the text:\n%s", b.Label, m.Text)
				}
			}
			_, trumpButtons := firstButton(m, VerbTrump, true)
			if trumpButtons != (p.ID == fore.ID) {
				t.Errorf("%s has trump buttons: %v, forehand is %s", p.ID, trumpButtons, fore.ID)
			}
			if len(cards) == 0 {
				continue
			}
			r := h.press(p, cards[0])
			if e := errText(r); e != i18n.T("en", "err.trump_not_named") {
				t.Errorf("%s pressing %s before trump: %q", p.ID, cards[0].Label, e)
			}
		}
	})
}

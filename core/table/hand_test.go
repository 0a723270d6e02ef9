package table

import (
	"strings"
	"testing"
	"testing/synctest"

	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// While trump is being named every hand shows its cards as buttons, as it will all game; none is
// a legal move, and pressing one answers why: trump is not named yet.
func TestHandShowsCardButtonsBeforeTrump(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mem.New())
		defer h.svc.Close()
		ps := fourHumans(t, h, "timer=none")
		synctest.Wait()
		fore, _ := h.toMove(ps)
		for _, p := range ps {
			m, ok := h.out.latest(api.KindHand, p.ID)
			if !ok {
				t.Fatalf("no hand for %s", p.ID)
			}
			var cards []api.Button
			for _, row := range m.Buttons {
				for _, b := range row {
					if b.Action.Verb == api.VerbPlay {
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
			_, trumpButtons := firstButton(m, api.VerbTrump, true)
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

// "last" in the middle of a trick: its caption names the last finished trick, and so must its
// picture, not the trick being played.
func TestLastTrickPictureShowsTheFinishedTrick(t *testing.T) {
	ctx := t.Context()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mem.New())
		defer h.svc.Close()
		ps := fourHumans(t, h, "timer=none")
		for i := 0; i < 40; i++ {
			synctest.Wait()
			p, m := h.toMove(ps)
			b, ok := firstButton(m, api.VerbTrump, true)
			if !ok {
				b, _ = firstButton(m, api.VerbPlay, true)
			}
			if e := errText(h.press(p, b)); e != "" {
				t.Fatalf("%s pressing %s: %s", p.ID, b.Label, e)
			}
			tb, _ := h.svc.index.get(h.svc.TableAt(h.place))
			tb.mu.Lock()
			g := tb.game()
			done, inTrick := len(g.Tricks()), g.CurrentTrick().N
			tb.mu.Unlock()
			if done == 0 || inTrick != 2 {
				continue
			}
			r := h.do(ps[0], api.VerbLast)
			if len(r) != 1 || r[0].Picture != api.PictureLastTrick {
				t.Fatalf("last: %+v", r)
			}
			_, alt, err := h.svc.Picture(ctx, r[0], false)
			if err != nil {
				t.Fatal(err)
			}
			tb.mu.Lock()
			last, _ := tb.lastGame().LastTrick()
			current := tb.lastGame().CurrentTrick()
			tb.mu.Unlock()
			if !strings.Contains(alt, i18n.T("en", "pic.LastTrick")+":") {
				t.Errorf("the picture of last does not show the last trick: %q", alt)
			}
			for i := range last.N {
				if !strings.Contains(alt, last.Cards[i].Chat()) {
					t.Errorf("the picture of last lacks %s of the last trick: %q", last.Cards[i].Chat(), alt)
				}
			}
			for i := range current.N {
				if strings.Contains(alt, current.Cards[i].Chat()) {
					t.Errorf("the picture of last shows %s of the trick in progress: %q", current.Cards[i].Chat(), alt)
				}
			}
			return
		}
		t.Fatal("never in the middle of a trick after a finished one")
	})
}

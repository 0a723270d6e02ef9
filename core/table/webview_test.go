package table

import (
	"encoding/json"
	"regexp"
	"testing"
	"testing/synctest"

	"github.com/kontermatt/kontermatt/core"
)

var cardField = regexp.MustCompile(`"card":"([^"]*)"`)

// checkSeatView fails if the view shows a card that is still held by anyone but its reader.
func checkSeatView(t *testing.T, h *harness, p Player, v SeatView) {
	t.Helper()
	_, held := h.svc.HeldCards(v.Table)
	var own core.CardSet
	for _, c := range v.Hand {
		card, err := core.ParseCard(c.Card)
		if err != nil {
			t.Fatalf("%s's hand holds %q", p.ID, c.Card)
		}
		own = own.Add(card)
	}
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range cardField.FindAllStringSubmatch(string(data), -1) {
		c, err := core.ParseCard(m[1])
		if err != nil {
			t.Fatalf("the view shows %q, not a card", m[1])
		}
		if held.Has(c) && !own.Has(c) {
			t.Fatalf("%s's view shows %s, which another player holds:\n%s", p.ID, c, data)
		}
	}
}

// A whole match played from the four seat views: each player sees their own cards only (the
// first packet while trump is named), the legal ones marked, and the public table; a person who
// does not sit there sees no hand at all.
func TestSeatViewsPlayAWholeMatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, NewMemStore())
		defer h.svc.Close()
		ps := fourHumans(t, h, "timer=none", "stripes=3")
		id := h.svc.TableAt(h.place)
		watcher := Player{ID: "w", Name: "Watcher", Locale: "de"}
		moves := 0
		for ; moves < 2000; moves++ {
			synctest.Wait()
			if st, _ := h.svc.Status(id); st != StatusPlaying {
				break
			}
			wv, ok := h.svc.SeatView(id, watcher)
			if !ok || wv.You != -1 || len(wv.Hand) != 0 || wv.Lang != "de" {
				t.Fatalf("the watcher's view: seat %d, %d cards, lang %s", wv.You, len(wv.Hand), wv.Lang)
			}
			checkSeatView(t, h, watcher, wv)
			acted := false
			for i, p := range ps {
				v, _ := h.svc.SeatView(id, p)
				checkSeatView(t, h, p, v)
				if v.You != i {
					t.Fatalf("%s sits at %d, the view says %d", p.ID, i, v.You)
				}
				g := v.Game
				if g.Phase == "trump" && len(v.Hand) != 3 {
					t.Fatalf("%s sees %d cards while trump is named", p.ID, len(v.Hand))
				}
				if acted || g.ToMove != i {
					continue
				}
				switch {
				case len(v.Trumps) > 0:
					if e := errText(h.do(p, VerbTrump, v.Trumps[moves%4].Arg)); e != "" {
						t.Fatalf("trump: %s", e)
					}
				default:
					var legal []string
					for _, c := range v.Hand {
						if c.Legal {
							legal = append(legal, c.Card)
						}
					}
					if len(legal) == 0 {
						t.Fatalf("%s is to play and has no legal card: %+v", p.ID, v.Hand)
					}
					if e := errText(h.do(p, VerbPlay, legal[moves%len(legal)])); e != "" {
						t.Fatalf("play %s: %s", legal[0], e)
					}
				}
				acted = true
			}
			if !acted {
				t.Fatalf("nobody could act")
			}
		}
		v, _ := h.svc.SeatView(id, ps[0])
		if v.Status != StatusOver || v.Board.Winner == "" || !v.CanRematch || len(v.Hand) != 0 {
			t.Fatalf("after %d moves: status %s, winner %q, rematch %v, %d cards", moves, v.Status, v.Board.Winner, v.CanRematch, len(v.Hand))
		}
		if len(v.Board.Games) == 0 || v.Say == "" {
			t.Fatalf("the board lists %d games; say %q", len(v.Board.Games), v.Say)
		}
	})
}

// In the lobby a view offers to deal to those seated and to join to the others; an unknown
// table has no view.
func TestSeatViewLobby(t *testing.T) {
	h := newHarness(t, NewMemStore())
	defer h.svc.Close()
	me := player(1)
	if e := errText(h.do(me, VerbNew, "timer=none")); e != "" {
		t.Fatal(e)
	}
	id := h.svc.TableAt(h.place)
	v, ok := h.svc.SeatView(id, me)
	if !ok || v.You != 0 || !v.CanDeal || v.CanJoin || v.Game != nil {
		t.Fatalf("the opener's lobby view: %+v", v)
	}
	if v, _ := h.svc.SeatView(id, player(2)); v.You != -1 || v.CanDeal || !v.CanJoin {
		t.Fatalf("another's lobby view: %+v", v)
	}
	if _, ok := h.svc.SeatView("nope", me); ok {
		t.Fatal("a view of a table that does not exist")
	}
}

package robot

import (
	"math/rand/v2"
	"testing"

	"github.com/kontermatt/kontermatt/core"
)

// randomView plays random legal moves (announcing whenever possible) and returns the view of the
// seat to move after `moves` cards, with the game for reference.
func randomView(r *rand.Rand, cards int) (core.View, *core.Game) {
	dealer := core.Seat(r.IntN(4))
	g, _ := core.NewGame(core.DefaultRules(), dealer, core.DealHands(r, dealer))
	if cards < 0 {
		return g.View(g.ToMove()), g
	}
	_ = g.NameTrump(g.Forehand(), core.Suits[r.IntN(4)])
	for n := 0; n < cards; {
		s := g.ToMove()
		if calls := g.PossibleCalls(s); len(calls) > 0 {
			_ = g.Announce(s, calls[r.IntN(len(calls))])
			continue
		}
		legal := g.LegalCards(s)
		_ = g.Play(s, legal.Nth(r.IntN(legal.Len())))
		n++
	}
	return g.View(g.ToMove()), g
}

// checkDeal fails unless hands is a deal the view allows: right sizes, own hand, no played card,
// the voids respected and the announced queens with their announcers.
func checkDeal(t *testing.T, v core.View, hands [4]core.CardSet) {
	t.Helper()
	var all core.CardSet
	for s, h := range hands {
		want := v.HandSizes[s]
		if v.Phase == core.PhaseTrump {
			want = 6
		}
		if h.Len() != want {
			t.Fatalf("seat %d holds %d cards, not %d: %v", s, h.Len(), want, hands)
		}
		if !(all & h).Empty() {
			t.Fatalf("a card is dealt twice: %v", hands)
		}
		all |= h
	}
	if all|v.Played() != core.FullDeck {
		t.Fatalf("cards missing: %v", hands)
	}
	if hands[v.Seat]&v.Hand != v.Hand {
		t.Fatalf("own hand changed: %v", hands)
	}
	vd := voids(v)
	for s := range hands {
		if !(hands[s] & vd[s]).Empty() {
			t.Fatalf("seat %d holds %v though it showed a void in them", s, hands[s]&vd[s])
		}
	}
	for _, a := range v.Announcements {
		if q := a.Call.Queens() &^ v.Played(); hands[a.Seat]&q != q {
			t.Fatalf("announcer %v lacks %v", a.Seat, q)
		}
	}
}

func TestDealsRespectTheView(t *testing.T) {
	seed := uint64(5)
	r := rand.New(rand.NewPCG(seed, 0))
	for i := range 200 {
		v, g := randomView(r, i%22-1)
		d := newDeals(v)
		if d.Count() < 1 {
			t.Fatalf("case %d: no consistent deal, yet the real one is", i)
		}
		// The true deal is consistent.
		var truth [4]core.CardSet
		for s := range truth {
			truth[s] = g.Hand(core.Seat(s))
		}
		if v.Phase != core.PhaseTrump {
			checkDeal(t, v, truth)
		}
		for range 20 {
			checkDeal(t, v, d.Sample(r))
		}
		if d.Count() <= 500 {
			all := d.All()
			if float64(len(all)) != d.Count() {
				t.Fatalf("case %d: %d deals listed, %v counted", i, len(all), d.Count())
			}
			found := false
			for _, h := range all {
				checkDeal(t, v, h)
				found = found || h == truth
			}
			if !found {
				t.Fatalf("case %d: the true deal is not among the %d listed", i, len(all))
			}
		}
	}
}

// TestSamplesAreUniform compares sample frequencies with the listed deals on a small case.
func TestSamplesAreUniform(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 0))
	for tries := 0; ; tries++ {
		v, _ := randomView(r, 14)
		d := newDeals(v)
		if d.Count() < 4 || d.Count() > 40 {
			continue
		}
		all := d.All()
		freq := map[[4]core.CardSet]int{}
		const n = 20000
		for range n {
			freq[d.Sample(r)]++
		}
		want := float64(n) / float64(len(all))
		for _, h := range all {
			if f := float64(freq[h]); f < 0.8*want || f > 1.2*want {
				t.Fatalf("deal drawn %v times, expected about %.0f (%d deals)", f, want, len(all))
			}
		}
		if len(freq) != len(all) {
			t.Fatalf("%d distinct samples, %d deals", len(freq), len(all))
		}
		return
	}
}

func TestVoidInference(t *testing.T) {
	// Trump hearts. Seat 1 leads AS; seat 2 plays JH (a trump: proves nothing); seat 3 plays 9D
	// (no spades); seat 0 plays KS.
	tr := core.Trick{Leader: 1, N: 4}
	copy(tr.Cards[:], core.MustCards("AS JH 9D KS"))
	tr2 := core.Trick{Leader: 1, N: 2}
	copy(tr2.Cards[:], core.MustCards("QS AC")) // a trump led; seat 2 plays a club: no trumps
	v := core.View{Trump: core.Hearts, Tricks: []core.Trick{tr}, Trick: tr2}
	vd := voids(v)
	if vd[2]&core.PlainOf(core.Spades, core.Hearts) != 0 {
		t.Errorf("trumping a plain lead showed a void: %v", vd[2])
	}
	if vd[3] != core.PlainOf(core.Spades, core.Hearts) {
		t.Errorf("seat 3 voids %v, want the plain spades", vd[3])
	}
	if vd[2] != core.Trumps(core.Hearts) {
		t.Errorf("seat 2 voids %v, want the trumps", vd[2])
	}
	if vd[0] != 0 || vd[1] != 0 {
		t.Errorf("followers showed voids: %v %v", vd[0], vd[1])
	}
}

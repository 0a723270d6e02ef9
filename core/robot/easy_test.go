package robot

import (
	"testing"

	"github.com/kontermatt/kontermatt/core"
)

func cardsOf(s string) core.CardSet { return core.SetOf(core.MustCards(s)...) }

// trickView is seat 3's view, trump hearts, of a trick led by leader with the given cards.
func trickView(t *testing.T, hand string, leader core.Seat, played string) core.View {
	t.Helper()
	tr := core.Trick{Leader: leader, Winner: core.NoSeat}
	for _, c := range core.MustCards(played) {
		tr.Cards[tr.N] = c
		tr.N++
	}
	v := core.View{Seat: 3, Phase: core.PhasePlay, Trump: core.Hearts, Hand: cardsOf(hand), Trick: tr, ToMove: 3}
	led := core.NoCard
	if tr.N > 0 {
		led = tr.Cards[0]
	}
	v.Legal = core.Legal(v.Hand, led, v.Trump)
	return v
}

func TestEasyCards(t *testing.T) {
	for _, tc := range []struct {
		name, hand string
		leader     core.Seat
		played     string
		want       string
	}{
		// Seat 3 plays last. Partner (seat 1) wins with AS: throw the most points.
		{"feed partner's trick", "KS 9S AD 10C", 0, "JS AS 10S", "KS"},
		// Opponent (seat 0) wins with AS; seat 3 has no spade but trumps: the cheapest trump.
		{"win cheaply", "9H QS AD 10C", 0, "AS 9S 10S", "9H"},
		// Opponent (seat 2) wins with a trump seat 3 cannot beat: throw the lowest card.
		{"throw low", "AD 10C KC", 0, "JS 9S AH", "10C"},
		// Partner (seat 1) wins with the ace of trumps: the ace of diamonds goes on it.
		{"feed a sure trump", "AD 10C KC", 0, "JS AH 9S", "AD"},
		// Do not overtake a partner whose ace is sure to win, with the ace of trumps left.
		{"do not overtake", "AH 10S KD", 0, "9S AS JS", "10S"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := trickView(t, tc.hand, tc.leader, tc.played)
			got := easyCard(v, 0)
			if want := core.MustCards(tc.want)[0]; got != want {
				t.Errorf("played %v, want %v (legal %v)", got, want, v.Legal)
			}
		})
	}
}

func TestEasyLeads(t *testing.T) {
	// With the top trump and another trump, draw trumps.
	v := trickView(t, "AH KH 9S 10D", 3, "")
	if got := easyCard(v, 0); got != core.MustCards("AH")[0] {
		t.Errorf("led %v, want AH", got)
	}
	// Without the top trump, cash the ace of a side suit.
	v = trickView(t, "KH AS 9S 10D", 3, "")
	if got := easyCard(v, 0); got != core.MustCards("AS")[0] {
		t.Errorf("led %v, want AS", got)
	}
}

func TestEasyTrump(t *testing.T) {
	for packet, want := range map[string]core.Suit{
		"AH KH 9S":  core.Hearts,
		"QS QH 9C":  core.Clubs, // the permanent queens count everywhere; the nine decides
		"QC 9S 10D": core.Clubs, // QC is a trump only in clubs
		"AD 10S 9S": core.Spades,
	} {
		if got := easyTrump(cardsOf(packet)); got != want {
			t.Errorf("%s: named %v, want %v", packet, got, want)
		}
	}
}

func TestEasyAnnounces(t *testing.T) {
	strong := core.View{Seat: 0, Phase: core.PhasePlay, Trump: core.Hearts, TrumpTeam: core.TeamA, Hand: cardsOf("QS QH QD AH KH 9C"),
		Calls: []core.Call{core.CallKonter, core.CallMatt, core.CallKonterAMatt}}
	if !easyAnnounces(strong) {
		t.Error("a hand of five trumps with the three queens did not announce")
	}
	if m := easyMove(strong, 0); m.Kind != core.MoveAnnounce || m.Call != core.CallKonterAMatt {
		t.Errorf("move %v, want Konter a Matt", m)
	}
	weak := core.View{Seat: 1, Phase: core.PhasePlay, Trump: core.Hearts, TrumpTeam: core.TeamA, Hand: cardsOf("QS 9S 10S 9D 10C JC"),
		Calls: []core.Call{core.CallMatt}}
	if easyAnnounces(weak) {
		t.Error("a weak hand announced")
	}
}

package core_test

import (
	"math/rand/v2"
	"testing"

	"github.com/kontermatt/kontermatt/core"
)

// A match's view is the game's view with the board as it stood before the game.
func TestMatchViewHasTheBoardBeforeTheGame(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	m, _ := core.NewMatch(core.DefaultRules(), 0)
	before := [2]int{9, 9}
	for games := 0; games < 4 && !m.Over(); games++ {
		g, err := m.Deal(core.DealHands(r, m.NextDealer()))
		if err != nil {
			t.Fatal(err)
		}
		for g.Phase() != core.PhaseOver {
			s := g.ToMove()
			v := m.View(s)
			want := g.View(s)
			want.Open = before
			if v.Open != before || v.Seat != s || v.Hand != want.Hand || v.Legal != want.Legal {
				t.Fatalf("game %d: match view %+v, want %+v", games+1, v, want)
			}
			if v.Phase == core.PhaseTrump {
				_ = g.NameTrump(s, v.Hand.First().Suit())
				continue
			}
			_ = g.Play(s, v.Legal.First())
		}
		before = m.Board().OpenBoth()
	}
	if g := (core.Game{}); g.View(0).Open != [2]int{} {
		t.Error("a game's own view knows no board")
	}
}

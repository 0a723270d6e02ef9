package core_test

import (
	"math/rand/v2"
	"testing"

	"github.com/kontermatt/kontermatt/core"
)

// playRandomGame deals with r, names a random trump and plays random legal cards to the end,
// reusing g. It is the loop the search players run millions of times.
func playRandomGame(g *core.Game, r *rand.Rand, rules core.Rules, dealer core.Seat) {
	hands := core.DealHands(r, dealer)
	if err := g.Reset(rules, dealer, hands); err != nil {
		panic(err)
	}
	if err := g.NameTrump(g.Forehand(), core.Suits[r.IntN(4)]); err != nil {
		panic(err)
	}
	for g.Phase() == core.PhasePlay {
		s := g.ToMove()
		legal := g.LegalCards(s)
		c := legal.First()
		if n := legal.Len(); n > 1 {
			c = legal.Nth(r.IntN(n))
		}
		if err := g.Play(s, c); err != nil {
			panic(err)
		}
	}
}

func BenchmarkRandomGame(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	rules := core.DefaultRules()
	var g core.Game
	b.ReportAllocs()
	dealer := core.Seat(0)
	for b.Loop() {
		playRandomGame(&g, r, rules, dealer)
		dealer = dealer.Next()
	}
}

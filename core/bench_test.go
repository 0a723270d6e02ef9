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

// midGames are random games stopped at random points of the play phase, for the benchmarks below.
func midGames(n int, lastCard bool) []core.Game {
	r := rand.New(rand.NewPCG(3, 4))
	rules := core.DefaultRules()
	out := make([]core.Game, 0, n)
	for len(out) < n {
		var g core.Game
		dealer := core.Seat(r.IntN(4))
		if err := g.Reset(rules, dealer, core.DealHands(r, dealer)); err != nil {
			panic(err)
		}
		if err := g.NameTrump(g.Forehand(), core.Suits[r.IntN(4)]); err != nil {
			panic(err)
		}
		stop := r.IntN(24)
		if lastCard {
			stop = 4*r.IntN(6) + 3
		}
		for range stop {
			legal := g.LegalCards(g.ToMove())
			if err := g.Play(g.ToMove(), legal.Nth(r.IntN(legal.Len()))); err != nil {
				panic(err)
			}
		}
		out = append(out, g)
	}
	return out
}

var sink core.CardSet

func BenchmarkLegalCards(b *testing.B) {
	games := midGames(1024, false)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		g := &games[i&1023]
		sink |= g.LegalCards(g.ToMove())
		i++
	}
}

var sinkInt int

func BenchmarkTrickWinner(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	type trick struct {
		cards [4]core.Card
		trump core.Suit
	}
	tricks := make([]trick, 1024)
	for i := range tricks {
		d := core.Deck()
		r.Shuffle(len(d), func(i, j int) { d[i], d[j] = d[j], d[i] })
		tricks[i] = trick{[4]core.Card(d[:4]), core.Suits[r.IntN(4)]}
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		t := &tricks[i&1023]
		sinkInt += core.TrickWinner(t.cards[:], t.trump)
		i++
	}
}

// BenchmarkLastCard plays the fourth card of a trick, through Play: the engine checks the card,
// resolves the trick and scores it (and the game, after the sixth).
func BenchmarkLastCard(b *testing.B) {
	games := midGames(1024, true)
	b.ReportAllocs()
	i := 0
	var g core.Game
	for b.Loop() {
		g = games[i&1023]
		if err := g.Play(g.ToMove(), g.LegalCards(g.ToMove()).First()); err != nil {
			b.Fatal(err)
		}
		i++
	}
	sinkInt += g.TricksDone()
}

// BenchmarkPlayGame replays whole games, deal and moves chosen beforehand: the engine's own cost
// of a game (reset, trump, 24 checked cards, scoring) without the random number generator.
func BenchmarkPlayGame(b *testing.B) {
	type game struct {
		dealer core.Seat
		hands  [4][6]core.Card
		moves  []core.Move
	}
	r := rand.New(rand.NewPCG(7, 8))
	rules := core.DefaultRules()
	games := make([]game, 1024)
	var g core.Game
	for i := range games {
		dealer := core.Seat(r.IntN(4))
		playRandomGame(&g, r, rules, dealer)
		games[i] = game{dealer, [4][6]core.Card{g.Dealt(0), g.Dealt(1), g.Dealt(2), g.Dealt(3)}, g.Moves()}
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		gm := &games[i&1023]
		if err := g.Reset(rules, gm.dealer, gm.hands); err != nil {
			b.Fatal(err)
		}
		for _, m := range gm.moves {
			if err := g.Apply(m); err != nil {
				b.Fatal(err)
			}
		}
		i++
	}
	sinkInt += g.Result().Points[0]
}

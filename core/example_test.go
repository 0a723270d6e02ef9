package core_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/kontermatt/kontermatt/core"
)

// Cards are read once, at the edge, in any of the forms players type; inside they are values.
func ExampleParseCard() {
	for _, s := range []string{"QS", "10h", "Q♠", "♥A", "zz"} {
		c, err := core.ParseCard(s)
		if err != nil {
			fmt.Println(s, "→", err)
			continue
		}
		fmt.Println(s, "→", c, c.Chat())
	}
	// Output:
	// QS → QS Q♠
	// 10h → 10H 10♥
	// Q♠ → QS Q♠
	// ♥A → AH A♥
	// zz → not a card: "zz"
}

// A whole game: deal from a seeded shuffle, forehand names trump from its first three cards,
// and every seat plays its first legal card until the sixth trick is done. Team B takes every
// trick against the trump team: two stripes crossed out for B, two added for A.
func ExampleGame() {
	rules := core.DefaultRules()
	g, err := core.NewGame(rules, 3, core.DealHands(rand.New(rand.NewPCG(2024, 11)), 3))
	if err != nil {
		panic(err)
	}
	fore := g.Forehand()
	if err := g.NameTrump(fore, g.FirstPacket(fore).First().Suit()); err != nil {
		panic(err)
	}
	for g.Phase() != core.PhaseOver {
		s := g.ToMove()
		if err := g.Play(s, g.LegalCards(s).First()); err != nil {
			panic(err)
		}
	}
	r := g.Result()
	fmt.Println("trump", g.Trump(), "named by seat", fore)
	fmt.Println("points", r.Points, "tricks", r.TricksWon)
	fmt.Println("outcome", r.Outcome, "stripes", r.Stripes)
	// Output:
	// trump S named by seat 0
	// points [0 40] tricks [0 6]
	// outcome B stripes [2 -2]
}

// Replay checks a record and scores it; an illegal move is an error that names the rule and the
// move.
func ExampleReplay() {
	game := `{"format": "kontermatt-game/1", "dealer": 3,
	 "hands": [["AH","KH","AS","9C","10D","9H"], ["KS","10S","AD","KC","10C","JH"],
	           ["QS","KD","AC","9D","9S","10H"], ["QH","QD","JS","QC","JC","JD"]],
	 "moves": [{"seat": 0, "trump": "H"}, {"seat": 0, "play": "AH"}, {"seat": 1, "play": "KS"}]}`
	_, err := core.Replay([]byte(game))
	fmt.Println(err)
	if re := core.AsReplayError(err); re != nil {
		fmt.Println("move", re.Move)
	}
	// Output:
	// move 2: KS: a trump was led: must play a trump; legal: JH
	// move 2
}

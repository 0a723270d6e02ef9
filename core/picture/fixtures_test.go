package picture

import (
	"math/rand/v2"
	"testing"

	"github.com/kontermatt/kontermatt/core"
)

// sheet builds a score sheet by hand, so the golden pictures do not depend on how the engine
// deals: each line states the dealer, trump, calls, card points and tricks, and the stripes follow
// rules 13 and 14 with the default options.
type sheet struct {
	rules   core.Rules
	board   core.Board
	history []core.GameScore
}

func newSheet(stripes int) *sheet {
	r := core.DefaultRules()
	r.Stripes = stripes
	return &sheet{rules: r, board: core.Board{Start: stripes}}
}

// game adds a finished game. calls are (seat, call) pairs.
func (s *sheet) game(dealer core.Seat, trump core.Suit, pointsA, tricksA int, calls ...core.Announcement) *sheet {
	r := core.Result{Points: [2]int{pointsA, 40 - pointsA}, TricksWon: [2]int{tricksA, 6 - tricksA}, Stake: 1}
	var union core.Call
	for _, a := range calls {
		union |= a.Call
	}
	if union&core.CallKonter != 0 {
		r.Stake++
	}
	if union&core.CallMatt != 0 {
		r.Stake++
	}
	trumpTeam := dealer.Next().Team()
	switch {
	case pointsA > 20 || pointsA < 20:
		win := core.TeamA
		r.Outcome = core.WonByA
		if pointsA < 20 {
			win, r.Outcome = core.TeamB, core.WonByB
		}
		n := r.Stake
		if r.TricksWon[win.Other()] == 0 {
			n++
		}
		r.Stripes[win] = -n
		if win.Other() == trumpTeam {
			r.Stripes[trumpTeam] = n
		}
	default:
		r.Outcome = core.Draw
		r.Stripes[trumpTeam] = r.Stake
	}
	applied := s.board.Apply(r.Stripes)
	s.history = append(s.history, core.GameScore{Result: r, Dealer: dealer, Trump: trump, TrumpTeam: trumpTeam,
		Calls: calls, Applied: applied, Board: s.board})
	return s
}

func ann(s core.Seat, c core.Call) core.Announcement { return core.Announcement{Seat: s, Call: c} }

var names = [4]string{"Anna", "Jos", "Mëlle", "Léon"}

// midMatch is a match after five games: team A has crossed out six, team B four and got two added.
func midMatch() BoardInput {
	s := newSheet(9).
		game(0, core.Hearts, 26, 4).
		game(1, core.Spades, 14, 2, ann(3, core.CallKonter)).
		game(2, core.Clubs, 31, 5, ann(0, core.CallMatt)).
		game(3, core.Diamonds, 20, 3).
		game(0, core.Spades, 40, 6)
	return BoardInput{Rules: s.rules, Board: s.board, History: s.history, Names: names}
}

// longMatch is a long, finished match with 12 stripes each, many lost trump games and draws.
func longMatch() BoardInput {
	s := newSheet(12)
	suits := []core.Suit{core.Hearts, core.Clubs, core.Spades, core.Diamonds}
	pts := []int{18, 23, 20, 12, 25, 19, 22, 14, 17, 24, 20, 16, 27, 11, 23, 19, 26, 15, 22, 30, 24, 21}
	for i, p := range pts {
		tr := 2 + (p-15)/5
		var calls []core.Announcement
		switch i % 5 {
		case 1:
			calls = append(calls, ann(core.Seat(i%4), core.CallKonter))
		case 3:
			calls = append(calls, ann(core.Seat((i+1)%4), core.CallMatt), ann(core.Seat((i+2)%4), core.CallKonter))
		}
		s.game(core.Seat(i%4), suits[i%4], p, max(0, min(6, tr)), calls...)
		if _, over := s.board.Winner(); over {
			break
		}
	}
	for i := 0; ; i++ {
		if _, over := s.board.Winner(); over {
			break
		}
		s.game(core.Seat(i%4), suits[(i+1)%4], 29, 5)
	}
	return BoardInput{Rules: s.rules, Board: s.board, History: s.history,
		Names: [4]string{"Marie-Thérèse Schmit-Wagner", "Jean-Claude", "Françoise", "Björn 🃏"}}
}

// playedMatch plays a whole match with the engine, every seat choosing at random among its legal
// moves, and returns the match.
func playedMatch(t testing.TB, seed uint64) *core.Match {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	m, err := core.NewMatch(core.DefaultRules(), core.Seat(rng.IntN(4)))
	if err != nil {
		t.Fatal(err)
	}
	for !m.Over() {
		g, err := m.Deal(core.DealHands(rng, m.NextDealer()))
		if err != nil {
			t.Fatal(err)
		}
		playGame(t, rng, g, -1)
	}
	return m
}

// playGame plays g at random until it is over or cards cards have been played (-1: to the end).
func playGame(t testing.TB, rng *rand.Rand, g *core.Game, cards int) {
	t.Helper()
	if g.Phase() == core.PhaseTrump {
		if err := g.NameTrump(g.Forehand(), core.Suits[rng.IntN(4)]); err != nil {
			t.Fatal(err)
		}
	}
	for n := 0; g.Phase() == core.PhasePlay && n != cards; n++ {
		s := g.ToMove()
		if calls := g.PossibleCalls(s); len(calls) > 0 && rng.IntN(2) == 0 {
			if err := g.Announce(s, calls[rng.IntN(len(calls))]); err != nil {
				t.Fatal(err)
			}
		}
		legal := g.LegalCards(s)
		if err := g.Play(s, legal.Nth(rng.IntN(legal.Len()))); err != nil {
			t.Fatal(err)
		}
	}
}

// tableGame is a fixed deal (dealer seat 3, so seat 0 names trump) played by a fixed list of
// moves: seat 0 names hearts and calls Konter, seat 1 calls Matt and wins the first trick with
// the queen of spades, and the second trick stands at three cards with seat 0 to play.
func tableGame(t testing.TB, moves int) *core.Game {
	t.Helper()
	var hands [4][6]core.Card
	for s, h := range []string{"QH QD AS 10H 9C KD", "QS AH KS JC 10D 9S", "AC KC QC JH 9H JD", "KH AD 10S 9D JS 10C"} {
		copy(hands[s][:], core.MustCards(h))
	}
	g, err := core.NewGame(core.DefaultRules(), 3, hands)
	if err != nil {
		t.Fatal(err)
	}
	all := []core.Move{
		core.NameTrump(0, core.Hearts),
		core.Announce(0, core.CallKonter), core.Play(0, core.MustCards("10H")[0]),
		core.Announce(1, core.CallMatt), core.Play(1, core.MustCards("QS")[0]),
		core.Play(2, core.MustCards("9H")[0]), core.Play(3, core.MustCards("KH")[0]),
		core.Play(1, core.MustCards("KS")[0]), core.Play(2, core.MustCards("AC")[0]), core.Play(3, core.MustCards("10S")[0]),
	}
	if moves < 0 {
		moves = len(all)
	}
	for _, m := range all[:moves] {
		if err := g.Apply(m); err != nil {
			t.Fatalf("%v: %v", m, err)
		}
	}
	return g
}

package dd

import (
	"math/rand/v2"
	"testing"

	"github.com/kontermatt/kontermatt/core"
)

// naive is plain minimax with core.Legal and core.TrickWinner: the reference the solver must match.
func naive(trump core.Suit, hands [4]core.CardSet, leader core.Seat, trick []core.Card, team core.Team) int {
	return naiveModel(trump, hands, leader, trick, team, 0, nil)
}

// naiveModel is naive with the seats in mask playing m's card alone.
func naiveModel(trump core.Suit, hands [4]core.CardSet, leader core.Seat, trick []core.Card, team core.Team, mask uint8, m Model) int {
	n := len(trick)
	p := leader.Plus(n)
	if n == 0 && hands[p].Empty() {
		return 0
	}
	led := core.NoCard
	if n > 0 {
		led = trick[0]
	}
	maxing := p.Team() == team
	best := -1
	if !maxing {
		best = 99
	}
	moves := core.Legal(hands[p], led, trump)
	if mask&(1<<p) != 0 {
		var others core.CardSet
		for s, h := range hands {
			if core.Seat(s) != p {
				others |= h
			}
		}
		tr := core.Trick{Leader: leader, N: n}
		copy(tr.Cards[:], trick)
		moves = core.SetOf(m(p, hands[p], others, trump, tr))
	}
	for _, c := range moves.Cards() {
		h := hands
		h[p] = h[p].Remove(c)
		t := append(append([]core.Card(nil), trick...), c)
		var v int
		if len(t) == 4 {
			w := leader.Plus(core.TrickWinner(t, trump))
			gain := 0
			if w.Team() == team {
				for _, x := range t {
					gain += x.Points()
				}
			}
			v = gain + naiveModel(trump, h, w, nil, team, mask, m)
		} else {
			v = naiveModel(trump, h, leader, t, team, mask, m)
		}
		if maxing && v > best || !maxing && v < best {
			best = v
		}
	}
	return best
}

// randomPosition deals a random deal, names a random trump and plays random legal cards until
// each hand has at most left cards (and a few more cards into the next trick).
func randomPosition(r *rand.Rand, left int) Position {
	dealer := core.Seat(r.IntN(4))
	g, err := core.NewGame(core.DefaultRules(), dealer, core.DealHands(r, dealer))
	if err != nil {
		panic(err)
	}
	if err := g.NameTrump(g.Forehand(), core.Suits[r.IntN(4)]); err != nil {
		panic(err)
	}
	extra := r.IntN(4)
	for (6-g.TricksDone())*4-g.CurrentTrick().N > left*4-extra {
		s := g.ToMove()
		legal := g.LegalCards(s)
		if err := g.Play(s, legal.Nth(r.IntN(legal.Len()))); err != nil {
			panic(err)
		}
	}
	t := g.CurrentTrick()
	p := Position{Trump: g.Trump(), Leader: t.Leader, Trick: t.Played()}
	for s := range p.Hands {
		p.Hands[s] = g.Hand(core.Seat(s))
	}
	return p
}

func TestSolverMatchesMinimax(t *testing.T) {
	seed := uint64(7)
	r := rand.New(rand.NewPCG(seed, 1))
	s := NewSolver()
	for i := range 300 {
		pos := randomPosition(r, 1+i%4)
		team := core.Team(r.IntN(2))
		want := naive(pos.Trump, pos.Hands, pos.Leader, pos.Trick, team)
		s.Reset(pos, team)
		if got := s.Value(); got != want {
			t.Fatalf("seed %d case %d: %+v team %v: solver %d, minimax %d", seed, i, pos, team, got, want)
		}
		// Narrow windows must agree with the exact value.
		for _, th := range []int{want - 1, want, want + 1} {
			s.Reset(pos, team)
			if got := s.AtLeast(th); got != (want >= th) {
				t.Fatalf("case %d: AtLeast(%d) = %v, value %d", i, th, got, want)
			}
		}
		// Every kept move of Moves is as good as the removed equivalent ones.
		s.Reset(pos, team)
		legal, kept := s.Legal(), s.Moves()
		if kept&^legal != 0 || kept.Empty() {
			t.Fatalf("case %d: moves %v not within legal %v", i, kept, legal)
		}
	}
}

// Seats the solver models play the model's card, in the search and in Moves, and only until the
// next Reset: the value is minimax with those seats' moves fixed.
func TestSolverModel(t *testing.T) {
	seed := uint64(8)
	r := rand.New(rand.NewPCG(seed, 1))
	s := NewSolver()
	// A model no search would be: the lowest legal card in canonical order.
	lowest := func(_ core.Seat, hand, others core.CardSet, trump core.Suit, tr core.Trick) core.Card {
		led := core.NoCard
		if tr.N > 0 {
			led = tr.Cards[0]
		}
		if hand|others == 0 {
			panic("no cards")
		}
		return core.Legal(hand, led, trump).First()
	}
	changed := 0
	for i := range 300 {
		pos := randomPosition(r, 1+i%4)
		team := core.Team(r.IntN(2))
		mask := uint8(1 + r.IntN(15))
		want := naiveModel(pos.Trump, pos.Hands, pos.Leader, pos.Trick, team, mask, lowest)
		s.Reset(pos, team)
		s.SetModel(mask, lowest)
		if got := s.Value(); got != want {
			t.Fatalf("seed %d case %d: %+v team %v mask %b: solver %d, minimax %d", seed, i, pos, team, mask, got, want)
		}
		if mask&(1<<s.ToMove()) != 0 && s.Moves().Len() != 1 {
			t.Fatalf("seed %d case %d: a modelled seat has moves %v", seed, i, s.Moves())
		}
		open := naive(pos.Trump, pos.Hands, pos.Leader, pos.Trick, team)
		if want != open {
			changed++
		}
		s.Reset(pos, team)
		if got := s.Value(); got != open {
			t.Fatalf("seed %d case %d: after Reset the model still plays: %d, minimax %d", seed, i, got, open)
		}
	}
	if changed == 0 {
		t.Fatalf("seed %d: the model changed no value", seed)
	}
}

func TestSolverFullDeals(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 2))
	s := NewSolver()
	for i := range 6 {
		pos := randomPosition(r, 6)
		s.Reset(pos, core.TeamA)
		a := s.Value()
		s.Reset(pos, core.TeamB)
		b := s.Value()
		if a+b != 40-pos.trickPoints() && len(pos.Trick) == 0 || a < 0 || b < 0 || a+b > 40 {
			t.Fatalf("case %d: team A %d + team B %d", i, a, b)
		}
		if len(pos.Trick) == 0 && a+b != 40 {
			t.Fatalf("case %d: full deal values %d + %d != 40", i, a, b)
		}
	}
}

func (p Position) trickPoints() int {
	n := 0
	for _, c := range p.Trick {
		n += c.Points()
	}
	return n
}

func BenchmarkSolveFullDeal(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 3))
	var deals []Position
	for range 64 {
		deals = append(deals, randomPosition(r, 6))
	}
	s := NewSolver()
	b.ResetTimer()
	n0 := s.Nodes()
	for i := 0; b.Loop(); i++ {
		s.Reset(deals[i%len(deals)], core.TeamA)
		s.Value()
	}
	b.ReportMetric(float64(s.Nodes()-n0)/b.Elapsed().Seconds(), "nodes/s")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "solves/s")
}

func BenchmarkWinTestFullDeal(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 3))
	var deals []Position
	for range 64 {
		deals = append(deals, randomPosition(r, 6))
	}
	s := NewSolver()
	b.ResetTimer()
	n0 := s.Nodes()
	for i := 0; b.Loop(); i++ {
		s.Reset(deals[i%len(deals)], core.TeamA)
		s.AtLeast(21)
	}
	b.ReportMetric(float64(s.Nodes()-n0)/b.Elapsed().Seconds(), "nodes/s")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "solves/s")
}

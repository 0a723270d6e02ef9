package robot

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/robot/dd"
)

// The match chances behave like chances: a board where both teams need as much is even-ish
// (naming trump is worth something), fewer open stripes are better, and they lie in 0..1.
func TestMatchChance(t *testing.T) {
	if MatchChance(0, 5, false) != 1 || MatchChance(5, 0, true) != 0 {
		t.Fatal("a finished match is won or lost")
	}
	for a := 1; a <= 12; a++ {
		for b := 1; b <= 12; b++ {
			for _, tr := range []bool{false, true} {
				p := MatchChance(a, b, tr)
				if p <= 0 || p >= 1 {
					t.Fatalf("MatchChance(%d, %d, %v) = %v", a, b, tr, p)
				}
				if a > 1 && MatchChance(a-1, b, tr) <= p {
					t.Errorf("one stripe fewer (%d vs %d) does not help: %v <= %v", a-1, b, MatchChance(a-1, b, tr), p)
				}
				// The two teams' chances add up to one.
				if q := MatchChance(b, a, !tr); math.Abs(p+q-1) > 1e-6 {
					t.Errorf("MatchChance(%d,%d,%v)+MatchChance(%d,%d,%v) = %v", a, b, tr, b, a, !tr, p+q)
				}
			}
		}
	}
	if p := MatchChance(9, 9, false); p < 0.4 || p > 0.6 {
		t.Errorf("an even board gives %v", p)
	}
}

// Outside a match the worth of an end is the stripe difference of RULES.md 14; inside, a win
// that ends the match is worth all of it.
func TestUtilities(t *testing.T) {
	v := core.View{Seat: 1, TrumpTeam: core.TeamB, Rules: core.DefaultRules()}
	if u := utilities(v, 1, false); u != [3]float64{-2, -1, 1} {
		t.Errorf("trump team at stake 1: %v, want loss -2, draw -1, win +1", u)
	}
	v.TrumpTeam = core.TeamA
	if u := utilities(v, 2, false); u != [3]float64{-2, 2, 4} {
		t.Errorf("defenders at stake 2: %v, want loss -2, draw +2, win +4", u)
	}
	v.Open = [2]int{5, 1} // seat 1 is team B, one stripe from the end
	u := utilities(v, 1, false)
	if u[classWin] != 1 || u[classLoss] >= u[classDraw] || u[classDraw] >= u[classWin] {
		t.Errorf("one stripe from the end: %v", u)
	}
	// Announcing raises the stake: worth it to a team that surely wins, not to one that loses.
	v.Open, v.Stake = [2]int{}, 1
	if g := announceGain(v, core.CallKonter, 1, 0, 0); g != 2 {
		t.Errorf("a sure win as defenders: announcing gains %v stripes, want 2", g)
	}
	if g := announceGain(v, core.CallKonter, 0, 0, 1); g != -1 {
		t.Errorf("a sure loss as defenders: announcing gains %v, want -1", g)
	}
}

// Renaming cards as TrumpKey does gives the same game: the solver finds the same points on
// every renamed deal.
func TestTrumpKeyRenamesToTheSameGame(t *testing.T) {
	seed := uint64(21)
	r := rand.New(rand.NewPCG(seed, 0))
	sv := dd.NewSolver()
	for i := range 60 {
		hands := core.DealHands(r, 0)
		var set [4]core.CardSet
		for s := range set {
			set[s] = core.SetOf(hands[s][:]...)
		}
		x := core.Suits[r.IntN(4)]
		packet := core.SetOf(hands[1][:3]...)
		key, y := TrumpKey(packet, x)
		if (x == core.Clubs) != (y == core.Clubs) || key.Len() != 3 {
			t.Fatalf("seed %d deal %d: TrumpKey(%v, %v) = %v, %v", seed, i, packet, x, key, y)
		}
		// Find the renaming that took packet to key and apply it to the whole deal.
		found := false
		for _, perm := range allPerms() {
			if x != core.Clubs && perm[x] != core.Spades {
				continue
			}
			if renameSuits(packet, perm) != key {
				continue
			}
			var renamed [4]core.CardSet
			for s := range set {
				renamed[s] = renameSuits(set[s], perm)
			}
			sv.Reset(dd.Position{Trump: x, Hands: set, Leader: 1}, core.TeamB)
			a := sv.Value()
			sv.Reset(dd.Position{Trump: y, Hands: renamed, Leader: 1}, core.TeamB)
			if b := sv.Value(); a != b {
				t.Fatalf("seed %d deal %d: %v trump %v takes %d, renamed %v trump %v takes %d", seed, i, set, x, a, renamed, y, b)
			}
			found = true
			break
		}
		if !found {
			t.Fatalf("seed %d deal %d: no renaming takes %v to %v", seed, i, packet, key)
		}
	}
}

func allPerms() [][5]core.Suit {
	var out [][5]core.Suit
	for _, p := range [][3]core.Suit{{1, 2, 3}, {1, 3, 2}, {2, 1, 3}, {2, 3, 1}, {3, 1, 2}, {3, 2, 1}} {
		out = append(out, [5]core.Suit{0, p[0], p[1], p[2], core.Clubs})
	}
	return out
}

// The shipped table has a line for every choice and reads back.
func TestTrumpTableIsComplete(t *testing.T) {
	table := trumpTable()
	keys := TrumpKeys()
	if len(table) != len(keys) {
		t.Fatalf("the table has %d lines, the choices need %d", len(table), len(keys))
	}
	for _, k := range keys {
		if _, ok := table[trumpKey{k.Packet, k.Trump}]; !ok {
			t.Fatalf("no line for %v with %v trump", k.Packet, k.Trump)
		}
	}
	// Three top trumps of one suit win that suit far more often than naming another.
	packet := core.SetOf(core.NewCard(core.Hearts, core.Ace), core.QueenSpades, core.NewCard(core.Hearts, core.King))
	h, _ := Odds(packet, core.Hearts)
	c, _ := Odds(packet, core.Clubs)
	if h.Win < 700 || h.Win <= c.Win {
		t.Errorf("A♥ Q♠ K♥: hearts %+v, clubs %+v", h, c)
	}
	if _, err := ParseTrumpTable("zz S 1 2\n"); err == nil {
		t.Error("a bad line was read")
	}
}

// sweep agrees with a plain count of tricks over every line of play.
func TestSweepMatchesBruteForce(t *testing.T) {
	seed := uint64(5)
	r := rand.New(rand.NewPCG(seed, 0))
	sv := dd.NewSolver()
	for i := range 200 {
		_, g := randomView(r, 12+r.IntN(6))
		t0 := g.CurrentTrick()
		pos := dd.Position{Trump: g.Trump(), Leader: t0.Leader, Trick: t0.Played()}
		for s := range pos.Hands {
			pos.Hands[s] = g.Hand(core.Seat(s))
		}
		team := core.Team(r.IntN(2))
		sv.Reset(pos, team)
		nodes := sweepNodes
		got := sweep(sv, team, &nodes)
		if want := bruteSweep(g, team); got != want {
			t.Fatalf("seed %d case %d: sweep %v, brute force %v (%s)", seed, i, got, want, g.Position())
		}
	}
}

// bruteSweep: can team take every trick still to be completed, over all legal plays?
func bruteSweep(g *core.Game, team core.Team) bool {
	if g.Phase() == core.PhaseOver {
		return true
	}
	s := g.ToMove()
	mine := s.Team() == team
	for _, c := range g.LegalCards(s).Cards() {
		h := *g
		done := h.TricksDone()
		_ = h.Play(s, c)
		ok := true
		if h.TricksDone() > done {
			tr := h.Tricks()[done]
			ok = tr.Winner.Team() == team
		}
		if ok {
			ok = bruteSweep(&h, team)
		}
		if ok == mine {
			return mine
		}
	}
	return !mine
}

// A deal's weight from the others' plays: a card Easy would have played weighs more than one it
// would not, and a forced card weighs nothing either way.
func TestPlayLikelihood(t *testing.T) {
	seed := uint64(17)
	r := rand.New(rand.NewPCG(seed, 0))
	for i := range 200 {
		v, g := randomView(r, 2+r.IntN(14))
		if v.Phase != core.PhasePlay {
			continue
		}
		s := &searcher{seed: 1, worlds: 8}
		ws := s.source(v)
		var truth [4]core.CardSet
		for k := range truth {
			truth[k] = g.Hand(core.Seat(k))
		}
		p := ws.playLikelihood(truth)
		if p <= 0 || p > 1 {
			t.Fatalf("seed %d case %d: likelihood %v", seed, i, p)
		}
	}
}

// BenchmarkTrumpChoice measures trump choices on fresh deals against the open-card solver on the
// true deal (forehand leads, no calls): the share of deals where a choice loses a win/draw/loss
// class the best suit had, and its regret in card points, for Easy's rule and for the trump
// table. Each op is one deal (seed 31).
func BenchmarkTrumpChoice(b *testing.B) {
	r := rand.New(rand.NewPCG(31, 0))
	sv := dd.NewSolver()
	var n, lostEasy, lostTable, regEasy, regTable, same float64
	for b.Loop() {
		hands := core.DealHands(r, 0)
		const fh = core.Seat(1)
		var set [4]core.CardSet
		for s := range set {
			set[s] = core.SetOf(hands[s][:]...)
		}
		packet := core.SetOf(hands[fh][:3]...)
		var val [5]int
		best, bestC := -1, -1
		for _, x := range core.Suits {
			sv.Reset(dd.Position{Trump: x, Hands: set, Leader: fh}, fh.Team())
			val[x] = sv.Value()
			best, bestC = max(best, val[x]), max(bestC, class(0, val[x]))
		}
		v := core.View{Seat: fh, Phase: core.PhaseTrump, Forehand: fh, TrumpTeam: fh.Team(), Hand: packet, Rules: core.DefaultRules()}
		e := easyTrump(packet)
		tb := (&searcher{}).decideTrump(context.Background(), v)
		n++
		regEasy += float64(best - val[e])
		regTable += float64(best - val[tb])
		if class(0, val[e]) < bestC {
			lostEasy++
		}
		if class(0, val[tb]) < bestC {
			lostTable++
		}
		if e == tb {
			same++
		}
	}
	b.ReportMetric(lostEasy/n, "easy-class-lost")
	b.ReportMetric(lostTable/n, "table-class-lost")
	b.ReportMetric(regEasy/n, "easy-regret-pts")
	b.ReportMetric(regTable/n, "table-regret-pts")
	b.ReportMetric(same/n, "same-choice")
}

// A game is decided on points when a team has more than 20 of the 40; a draw is still open at
// 20 (the hint and the search both read it).
func TestDecided(t *testing.T) {
	for _, tc := range []struct {
		seat   core.Seat
		points [2]int
		want   bool
	}{
		{0, [2]int{0, 0}, false},
		{0, [2]int{21, 0}, true},  // A has won
		{1, [2]int{21, 0}, true},  // B has lost
		{0, [2]int{0, 21}, true},  // A cannot reach 20
		{0, [2]int{1, 20}, false}, // A can still draw: 1 + 19 left
		{1, [2]int{2, 19}, false},
		{0, [2]int{20, 20}, false}, // a draw
	} {
		v := core.View{Seat: tc.seat, Points: tc.points}
		if got := Decided(v); got != tc.want {
			t.Errorf("seat %d, points %v: Decided %v, want %v", tc.seat, tc.points, got, tc.want)
		}
	}
}

// A sweep stops at the solver's stop as its search does: a decided game's last deal must not run
// past the decision's deadline by a whole sweep (up to sweepNodes positions, some 8 ms). It failed
// before sweep polled the stop: the sweeps below searched all their positions.
func TestSweepStopsWhenTold(t *testing.T) {
	seed := uint64(6)
	r := rand.New(rand.NewPCG(seed, 0))
	sv := dd.NewSolver()
	checked := 0
	for i := 0; i < 3000 && checked < 5; i++ {
		_, g := randomView(r, r.IntN(6))
		t0 := g.CurrentTrick()
		pos := dd.Position{Trump: g.Trump(), Leader: t0.Leader, Trick: t0.Played()}
		for s := range pos.Hands {
			pos.Hands[s] = g.Hand(core.Seat(s))
		}
		team := core.Team(r.IntN(2))
		sv.Reset(pos, team)
		sv.SetStop(nil)
		nodes := sweepNodes
		sweep(sv, team, &nodes)
		if sweepNodes-nodes < 4*sweepPoll {
			continue // a short sweep: nothing to stop
		}
		sv.Reset(pos, team)
		sv.SetStop(func() bool { return true })
		nodes = sweepNodes
		if sweep(sv, team, &nodes) {
			t.Fatalf("seed %d case %d: a stopped sweep reported a sweep", seed, i)
		}
		if used := sweepNodes - nodes; used > sweepPoll || !sv.Stopped() {
			t.Fatalf("seed %d case %d: told to stop, the sweep searched %d positions (stopped %v)", seed, i, used, sv.Stopped())
		}
		checked++
	}
	if checked < 5 {
		t.Fatalf("seed %d: only %d long sweeps found", seed, checked)
	}
}

package core_test

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/kontermatt/kontermatt/core"
)

var (
	simSeed    = flag.Uint64("sim.seed", 0, "seed of TestSimulation (0: a new random seed, which is logged)")
	simGames   = flag.Int("sim.games", 20000, "random games TestSimulation plays")
	simMatches = flag.Int("sim.matches", 1000, "random matches TestSimulation plays")
)

// The reference rules below are written straight from RULES.md, as plainly as possible and
// independently of the engine's bit sets and tables; the simulation checks the engine against
// them on every move.

// refTrumps lists the trumps of suit x from highest to lowest (rule 3).
func refTrumps(x core.Suit) []core.Card {
	s := x.String()
	order := "A" + s + " QS QH QD K" + s
	if x == core.Clubs {
		order += " QC"
	}
	return core.MustCards(order + " J" + s + " 10" + s + " 9" + s)
}

var refTrumpOrder = func() (t [5][]core.Card) {
	for _, x := range core.Suits {
		t[x] = refTrumps(x)
	}
	return t
}()

func refIsTrump(c core.Card, x core.Suit) bool { return slices.Contains(refTrumpOrder[x], c) }

// refLegal is rule 8.
func refLegal(hand []core.Card, led core.Card, x core.Suit) []core.Card {
	if led == core.NoCard {
		return hand
	}
	var trumps, follow []core.Card
	for _, c := range hand {
		switch {
		case refIsTrump(c, x):
			trumps = append(trumps, c)
		case !refIsTrump(led, x) && c.Suit() == led.Suit():
			follow = append(follow, c)
		}
	}
	switch {
	case refIsTrump(led, x) && len(trumps) > 0:
		return trumps
	case !refIsTrump(led, x) && len(follow) > 0:
		return append(follow, trumps...)
	}
	return hand
}

// refWinner is rule 9: the highest trump, else the highest card of the led suit.
func refWinner(cards []core.Card, x core.Suit) int {
	best, bestOrder := -1, len(refTrumpOrder[x])
	for i, c := range cards {
		if o := slices.Index(refTrumpOrder[x], c); o >= 0 && o < bestOrder {
			best, bestOrder = i, o
		}
	}
	if best >= 0 {
		return best
	}
	best = 0
	for i, c := range cards {
		if c.Suit() == cards[0].Suit() && c.Rank() > cards[best].Rank() {
			best = i
		}
	}
	return best
}

// refStripes is rules 11-14.
func refStripes(rules core.Rules, points, tricks [2]int, calls []core.Announcement, trumpTeam core.Team) (core.Outcome, [2]int) {
	stake := 1
	for _, a := range calls {
		if a.Call == core.CallKonter || a.Call == core.CallKonterAMatt {
			stake++
		}
		if a.Call == core.CallMatt || a.Call == core.CallKonterAMatt {
			stake++
		}
	}
	var st [2]int
	for _, win := range []core.Team{core.TeamA, core.TeamB} {
		if points[win] >= 21 {
			lose := win.Other()
			n := stake
			if rules.AllTricksBonus && tricks[lose] == 0 {
				n++
			}
			st[win] = -n
			if lose == trumpTeam {
				st[lose] = n
			}
			return map[core.Team]core.Outcome{core.TeamA: core.WonByA, core.TeamB: core.WonByB}[win], st
		}
	}
	if rules.DrawPenalty == core.DrawFlat1 {
		st[trumpTeam] = 1
	} else {
		st[trumpTeam] = stake
	}
	return core.Draw, st
}

// sim plays random games and checks them; a failure names the seed to run it again with.
type sim struct {
	t    *testing.T
	r    *rand.Rand
	seed uint64
	what string // the game being played, for messages
}

func (s *sim) fatalf(format string, args ...any) {
	s.t.Helper()
	s.t.Fatalf("%s (go test -run=TestSimulation -sim.seed=%d ./core): %s", s.what, s.seed, fmt.Sprintf(format, args...))
}

func randomRules(r *rand.Rand) core.Rules {
	rules := core.DefaultRules()
	rules.Stripes = 1 + r.IntN(12)
	rules.DrawPenalty = core.DrawPenalty(r.IntN(2))
	rules.AllTricksBonus = r.IntN(2) == 0
	rules.Announcements = r.IntN(4) != 0
	rules.Direction = core.Direction(r.IntN(2))
	return rules
}

// tryRandomMove tries a random move and checks that the engine accepts it exactly when the reference
// rules do; a refused move must leave the game as it was.
func (s *sim) tryRandomMove(g *core.Game) {
	seat := core.Seat(s.r.IntN(4))
	c := core.Card(1 + s.r.IntN(24))
	m := core.Play(seat, c)
	want := false
	if g.Phase() == core.PhasePlay && seat == g.ToMove() {
		want = slices.Contains(refLegal(g.Hand(seat).Cards(), g.CurrentTrick().Led(), g.Trump()), c)
	}
	err := g.Check(m)
	if (err == nil) != want {
		s.fatalf("%s: Check says %v, the reference rules say legal=%v at %s", m, err, want, g.Position())
	}
	if err == nil {
		return
	}
	if core.Code(err) == "" {
		s.fatalf("%s: error %v has no code", m, err)
	}
	before := *g
	if err := g.Apply(m); err == nil || *g != before {
		s.fatalf("%s: Apply of a refused move returned %v and changed the game", m, err)
	}
}

// play plays g to its end with random legal moves: random trump, random announcements when
// possible, random legal cards. At a random moment it notes the position and the moves after it.
func (s *sim) play(g *core.Game) (pos string, after []core.Move) {
	mark := s.r.IntN(26)
	for step := 0; g.Phase() != core.PhaseOver; step++ {
		if step == mark {
			pos = g.Position()
		}
		if s.r.IntN(8) == 0 {
			s.tryRandomMove(g)
		}
		seat := g.ToMove()
		var m core.Move
		switch {
		case g.Phase() == core.PhaseTrump:
			m = core.NameTrump(seat, core.Suits[s.r.IntN(4)])
		case len(g.PossibleCalls(seat)) > 0 && s.r.IntN(2) == 0:
			calls := g.PossibleCalls(seat)
			m = core.Announce(seat, calls[s.r.IntN(len(calls))])
		default:
			legal := g.LegalCards(seat)
			want := slices.Sorted(slices.Values(refLegal(g.Hand(seat).Cards(), g.CurrentTrick().Led(), g.Trump())))
			if !slices.Equal(legal.Cards(), want) || core.Legal(g.Hand(seat), g.CurrentTrick().Led(), g.Trump()) != legal {
				s.fatalf("legal cards %v, reference %v, at %s", legal, want, g.Position())
			}
			m = core.Play(seat, legal.Nth(s.r.IntN(legal.Len())))
		}
		if err := g.Apply(m); err != nil {
			s.fatalf("%s refused: %v at %s", m, err, g.Position())
		}
		if pos != "" {
			after = append(after, m)
		}
	}
	return pos, after
}

// checkGame checks a finished game's invariants against the reference rules.
func (s *sim) checkGame(g *core.Game) {
	var dealt core.CardSet
	for seat := core.Seat(0); seat < 4; seat++ {
		for _, c := range g.Dealt(seat) {
			dealt = dealt.Add(c)
		}
		if !g.Hand(seat).Empty() {
			s.fatalf("seat %v still holds %v", seat, g.Hand(seat))
		}
	}
	if dealt != core.FullDeck {
		s.fatalf("the deal %v is not 24 distinct cards", dealt)
	}
	tricks := g.Tricks()
	if len(tricks) != 6 || g.TricksDone() != 6 {
		s.fatalf("%d tricks", len(tricks))
	}
	var played core.CardSet
	var points, won [2]int
	leader := g.Forehand()
	for i, tr := range tricks {
		if tr.N != 4 || tr.Leader != leader {
			s.fatalf("trick %d: %+v, want 4 cards led by %v", i, tr, leader)
		}
		for _, c := range tr.Cards {
			if played.Has(c) {
				s.fatalf("%v played twice", c)
			}
			played = played.Add(c)
		}
		w := tr.Leader.Plus(refWinner(tr.Cards[:], g.Trump()))
		if tr.Winner != w || tr.Leader.Plus(core.TrickWinner(tr.Cards[:], g.Trump())) != w {
			s.fatalf("trick %d %v won by %v, reference %v", i, tr.Played(), tr.Winner, w)
		}
		points[w.Team()] += tr.Points()
		won[w.Team()]++
		leader = w
	}
	if played != core.FullDeck {
		s.fatalf("played %v, not the whole deck", played)
	}
	r := g.Result()
	if points[0]+points[1] != 40 || r.Points != points || won[0]+won[1] != 6 || r.TricksWon != won {
		s.fatalf("points %v tricks %v, from the tricks %v %v", r.Points, r.TricksWon, points, won)
	}
	outcome, stripes := refStripes(g.Rules(), points, won, g.Announcements(), g.TrumpTeam())
	if r.Outcome != outcome || r.Stripes != stripes || r.Stake != g.Stake() {
		s.fatalf("result %+v, reference %v %v", r, outcome, stripes)
	}
	for _, a := range g.Announcements() {
		d := g.Dealt(a.Seat)
		if a.Call.Queens()&^core.SetOf(d[:]...) != 0 {
			s.fatalf("seat %v announced %v without its queens", a.Seat, a.Call)
		}
	}
}

// checkFromPosition replays the moves after pos on a game parsed from pos: a position must hold
// everything the rest of the game depends on.
func (s *sim) checkFromPosition(g *core.Game, pos string, after []core.Move) {
	if pos == "" {
		return
	}
	p, err := core.ParsePosition(pos)
	if err != nil {
		s.fatalf("position %s does not parse: %v", pos, err)
	}
	if got := p.Position(); got != pos {
		s.fatalf("position %s prints as %s", pos, got)
	}
	for _, m := range after {
		if err := p.Apply(m); err != nil {
			s.fatalf("from %s, %s refused: %v", pos, m, err)
		}
	}
	if p.Result() != g.Result() || p.Position() != g.Position() {
		s.fatalf("from %s: %+v, %s; the game: %+v, %s", pos, p.Result(), p.Position(), g.Result(), g.Position())
	}
}

// roundTrip marshals a record, replays it and compares the summary with want.
func (s *sim) roundTrip(rec any, want any) {
	data, err := json.Marshal(rec)
	if err != nil {
		s.fatalf("marshal record: %v", err)
	}
	got, err := core.Replay(data)
	if err != nil {
		s.fatalf("the engine's own record does not replay: %v\n%s", err, data)
	}
	if !reflect.DeepEqual(got, want) {
		a, _ := json.Marshal(got)
		b, _ := json.Marshal(want)
		s.fatalf("replay gives\n%s\nthe game says\n%s", a, b)
	}
}

func (s *sim) games(n int) {
	var g core.Game
	for i := range n {
		s.what = fmt.Sprintf("game %d", i)
		rules := randomRules(s.r)
		dealer := core.Seat(s.r.IntN(4))
		if err := g.Reset(rules, dealer, core.DealHands(s.r, dealer)); err != nil {
			s.fatalf("reset: %v", err)
		}
		pos, after := s.play(&g)
		s.checkGame(&g)
		s.checkFromPosition(&g, pos, after)
		s.roundTrip(g.Record(), g.Summary())
	}
}

func (s *sim) matches(n int) {
	for i := range n {
		s.what = fmt.Sprintf("match %d", i)
		rules := randomRules(s.r)
		m, err := core.NewMatch(rules, core.Seat(s.r.IntN(4)))
		if err != nil {
			s.fatalf("new match: %v", err)
		}
		open := [2]int{rules.Stripes, rules.Stripes}
		for games := 0; !m.Over(); games++ {
			if games == 500 {
				s.fatalf("no end after %d games", games)
			}
			dealer := m.NextDealer()
			if prev := m.Current(); prev != nil && dealer != prev.Dealer().Next() {
				s.fatalf("dealer %v after %v", dealer, prev.Dealer())
			}
			g, err := m.Deal(core.DealHands(s.r, dealer))
			if err != nil {
				s.fatalf("deal: %v", err)
			}
			if _, err := m.Deal(core.DealHands(s.r, dealer)); !errors.Is(err, core.ErrGameOver) {
				s.fatalf("a deal during a game: %v", err)
			}
			s.play(g)
			s.checkGame(g)
			// The board by hand: winners cross out (never below zero), stripes are added.
			for t, d := range g.Result().Stripes {
				open[t] = max(0, open[t]+d)
			}
			if got := m.Board().OpenBoth(); got != open {
				s.fatalf("board %v, by hand %v", got, open)
			}
			if h := m.History(); len(h) != games+1 || h[games].Board.OpenBoth() != open {
				s.fatalf("history %+v", h)
			}
			if (open[0] == 0 || open[1] == 0) != m.Over() {
				s.fatalf("open %v but over=%v", open, m.Over())
			}
			if m.Over() && games+1 < (rules.Stripes+3)/4 {
				s.fatalf("over after %d games with %d stripes", games+1, rules.Stripes)
			}
		}
		w, _ := m.Winner()
		if open[w] != 0 || open[w.Other()] == 0 {
			s.fatalf("winner %v with open %v", w, open)
		}
		if _, err := m.Deal(core.DealHands(s.r, m.NextDealer())); !errors.Is(err, core.ErrMatchOver) {
			s.fatalf("a deal after the match: %v", err)
		}
		s.roundTrip(m.Record(), m.Summary())
	}
}

// TestSimulation plays random legal games and matches and checks every invariant it can think
// of against reference rules written independently of the engine. The work is split over two
// goroutines with seeds derived from the one logged.
func TestSimulation(t *testing.T) {
	seed := *simSeed
	if seed == 0 {
		seed = rand.Uint64()
	}
	t.Logf("seed %d (go test -run=TestSimulation -sim.seed=%d ./core)", seed, seed)
	games, matches := *simGames, *simMatches
	if testing.Short() {
		games, matches = games/10, matches/10
	}
	const workers = 2
	for w := range uint64(workers) {
		t.Run(fmt.Sprintf("worker%d", w), func(t *testing.T) {
			t.Parallel()
			s := &sim{t: t, r: rand.New(rand.NewPCG(seed, w)), seed: seed}
			s.games(games / workers)
			s.matches(matches / workers)
		})
	}
}

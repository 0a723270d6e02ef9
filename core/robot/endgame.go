package robot

import (
	"context"
	"time"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/robot/dd"
)

// The end of a game without strategy fusion. Solving each deal open-handed lets the seat play
// its next card differently in deals it cannot tell apart (strategy fusion: the flaw αμ search,
// Cazenave and Ventos, removes). With three cards in hand the seat has one more real decision
// after this one, so endgameCard searches the two as the seat can make them: in each deal the
// other seats play the card best for their team with all hands open, up to the seat's next turn;
// deals that show the seat the same cards meanwhile are one situation for it, in which it plays
// the one card best over all of them (weighted), and each card now is worth the sum of its
// situations. Its last card is forced. Strong decides so, and Judge measures so for the coach.

// useEndgame switches endgameCard on.
const useEndgame = true

// endgameHand is the hand size at which endgameCard decides. Also searching Strong's fourth-last
// card so (its next card one for the deals it cannot tell apart, sampled deals too) was tried and
// not kept: against Normal 0.5356 ± 0.0195 of games, 0.5325 ± 0.0195 without, on the same 400
// deals (duel -nodes-per-ms 12000 -seed 7201, one core).
const endgameHand = 3

// endgameKey is one situation at the seat's next turn: the card it plays now (its index among
// the candidates) and the cards the others play until its turn comes again (at most 6).
type endgameKey struct {
	cand int
	seen [6]core.Card
}

// endgameCell sums, for one card in one situation, the deals' weighted worth, card points and
// win/draw/loss weights.
type endgameCell struct {
	worth, points float64
	class         [3]float64
}

// endgameStats are endgameSearch's results as cardSearch gives them: per candidate the weight of
// the deals it wins, draws and loses and its weighted points, with the total weight, the deals
// searched and whether the time cut it.
func (s *searcher) endgameStats(ctx context.Context, until time.Time, v core.View, ws *worldSource,
	cands []core.Card) ([]cardStats, float64, int, bool) {
	cells, n, cut := s.endgameSearch(ctx, until, v, ws, cands)
	if cells == nil {
		return nil, 0, 0, cut
	}
	stats := make([]cardStats, len(cands))
	for i, c := range cells {
		stats[i] = cardStats{class: c.class, points: c.points}
	}
	cl := cells[0].class
	return stats, cl[0] + cl[1] + cl[2], n, cut
}

// endgameSearch gives, for each candidate, the weighted worth, points and classes of the deals
// searched when the seat plays it and then, in each situation, the best card there, with the
// deals searched (none: nil) and whether the deadline or the context ended it before every deal
// or the node cap did (as cardSearch's cut).
func (s *searcher) endgameSearch(ctx context.Context, until time.Time, v core.View, ws *worldSource,
	cands []core.Card) (cells []endgameCell, solved int, cut bool) {
	me := v.Seat
	team := me.Team()
	have := v.Points[team]
	u := utilities(v, v.Stake, false)
	pos := dd.Position{Trump: v.Trump, Leader: v.Trick.Leader, Trick: v.Trick.Played()}
	sv := s.solvers[0]
	late := func() bool { return ctx.Err() != nil || time.Now().After(until) }
	sv.SetStop(late)
	start := sv.Nodes()
	situations := map[endgameKey]map[core.Card]*endgameCell{}
	// The situations in the order first met, to sum them in an order of the deals' and not of
	// the map's (which changes from run to run, and float sums with it, in their last bits).
	var keys []endgameKey
	type found struct {
		key   endgameKey
		card  core.Card
		total int
	}
	var results []found
	for i := range ws.max {
		if late() {
			cut = true
			break
		}
		if s.nodes > 0 && sv.Nodes()-start >= s.nodes {
			break
		}
		hands, w := ws.world(i)
		model := ws.modelled(i)
		if w == 0 {
			continue
		}
		results = results[:0]
		for ci, c := range cands {
			p := pos
			p.Hands = hands
			sv.Reset(p, team)
			s.setModel(sv, model)
			got, _, _ := sv.Play(c)
			key := endgameKey{cand: ci}
			for n := 0; sv.ToMove() != me && n < len(key.seen); n++ {
				m, gain := bestOpenCard(sv, team)
				got += gain
				key.seen[n] = m
			}
			for _, m := range sv.Moves().Cards() {
				gain, done, saved := sv.Play(m)
				results = append(results, found{key, m, have + got + gain + sv.Value()})
				sv.Undo(m, done, saved)
			}
		}
		if sv.Stopped() {
			cut = true
			break
		}
		solved++
		for _, r := range results {
			cells := situations[r.key]
			if cells == nil {
				cells = map[core.Card]*endgameCell{}
				situations[r.key] = cells
				keys = append(keys, r.key)
			}
			cell := cells[r.card]
			if cell == nil {
				cell = &endgameCell{}
				cells[r.card] = cell
			}
			k := class(0, r.total)
			cell.worth += w * u[k]
			cell.points += w * float64(r.total)
			cell.class[k] += w
		}
	}
	if solved == 0 {
		return nil, 0, cut
	}
	// Each card now: the sum over its situations of the best card there.
	out := make([]endgameCell, len(cands))
	for _, key := range keys {
		cells := situations[key]
		var best *endgameCell
		for _, m := range sortedCards(cells) {
			c := cells[m]
			if best == nil || c.worth > best.worth+1e-9 || c.worth > best.worth-1e-9 && c.points > best.points+1e-9 {
				best = c
			}
		}
		o := &out[key.cand]
		o.worth += best.worth
		o.points += best.points
		for k := range o.class {
			o.class[k] += best.class[k]
		}
	}
	return out, solved, cut
}

// bestOpenCard plays, for the seat to move in sv, the card best for its team with all hands open
// (the first such card in canonical order), and gives it with the points it brought team.
func bestOpenCard(sv *dd.Solver, team core.Team) (core.Card, int) {
	moves := sv.Moves()
	best := moves.First()
	if moves.Len() > 1 {
		ours := sv.ToMove().Team() == team
		bestV := 0
		for k, m := range moves.Cards() {
			gain, done, saved := sv.Play(m)
			val := gain + sv.Value()
			sv.Undo(m, done, saved)
			if k == 0 || ours && val > bestV || !ours && val < bestV {
				best, bestV = m, val
			}
		}
	}
	gain, _, _ := sv.Play(best)
	return best, gain
}

// sortedCards lists a situation's cards in canonical order, so that ties break the same way
// every time.
func sortedCards(cells map[core.Card]*endgameCell) []core.Card {
	var set core.CardSet
	for c := range cells {
		set = set.Add(c)
	}
	return set.Cards()
}

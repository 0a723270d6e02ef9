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
// situations. Its last card is forced.

// useEndgame switches endgameCard on.
const useEndgame = true

// endgameHand is the hand size at which endgameCard decides.
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

// endgameCard chooses among cands for view v over ws's listed deals, within the deadline and the
// searcher's node cap. It gives the card with the weighted shares of deals won, drawn and lost,
// and false when no deal was searched in time.
func (s *searcher) endgameCard(ctx context.Context, until time.Time, v core.View, ws *worldSource,
	cands []core.Card) (card core.Card, win, draw, loss float64, ok bool) {
	res, ok := s.endgameSearch(ctx, until, v, ws, cands)
	if !ok {
		return core.NoCard, 0, 0, 0, false
	}
	bi := 0
	for i := range cands {
		if res[i].worth > res[bi].worth+1e-9 || res[i].worth > res[bi].worth-1e-9 && res[i].points > res[bi].points+1e-9 {
			bi = i
		}
	}
	cl := res[bi].class
	sum := cl[0] + cl[1] + cl[2]
	if sum == 0 {
		return cands[bi], 0, 0, 0, true
	}
	return cands[bi], cl[classWin] / sum, cl[classDraw] / sum, cl[classLoss] / sum, true
}

// endgameSearch gives, for each candidate, the weighted worth, points and classes of the deals
// searched when the seat plays it and then, in each situation, the best card there; false when no
// deal was searched in time.
func (s *searcher) endgameSearch(ctx context.Context, until time.Time, v core.View, ws *worldSource,
	cands []core.Card) ([]endgameCell, bool) {
	me := v.Seat
	team := me.Team()
	have := v.Points[team]
	u := utilities(v, v.Stake, false)
	pos := dd.Position{Trump: v.Trump, Leader: v.Trick.Leader, Trick: v.Trick.Played()}
	sv := s.solvers[0]
	sv.SetStop(func() bool { return ctx.Err() != nil || time.Now().After(until) })
	start := sv.Nodes()
	situations := map[endgameKey]map[core.Card]*endgameCell{}
	solved := 0
	type found struct {
		key   endgameKey
		card  core.Card
		total int
	}
	var results []found
	for i := range ws.max {
		if ctx.Err() != nil || time.Now().After(until) || s.nodes > 0 && sv.Nodes()-start >= s.nodes {
			break
		}
		hands, w := ws.world(i)
		if w == 0 {
			continue
		}
		results = results[:0]
		for ci, c := range cands {
			p := pos
			p.Hands = hands
			sv.Reset(p, team)
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
			break
		}
		solved++
		for _, r := range results {
			cells := situations[r.key]
			if cells == nil {
				cells = map[core.Card]*endgameCell{}
				situations[r.key] = cells
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
		return nil, false
	}
	// Each card now: the sum over its situations of the best card there.
	out := make([]endgameCell, len(cands))
	for key, cells := range situations {
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
	return out, true
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

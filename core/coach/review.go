package coach

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/robot"
)

// reviewJob is one player's review of one finished game.
type reviewJob struct {
	key    string    // what the review is kept under
	seat   core.Seat // the player's
	game   core.Game // a copy of the finished game
	open   [2]int    // the stripes open before it
	gameNo int
	lang   string
	done   func(text string)
}

// decision is one of a player's decisions in a game, as the review judges it.
type decision struct {
	trick  int // 1..6; 0 for the trump choice
	view   core.View
	move   core.Move // what the player did
	called bool      // the player announced at this decision
	judged robot.Judgement
	ok     bool
}

// reviewDecisions lists the decisions the player in seat made in the game: naming trump, and
// every card played with a choice (or with a call that could be made).
func reviewDecisions(g core.Game, seat core.Seat, open [2]int) []decision {
	var hands [4][6]core.Card
	for s := range hands {
		hands[s] = g.Dealt(core.Seat(s))
	}
	r, err := core.NewGame(g.Rules(), g.Dealer(), hands)
	if err != nil {
		return nil
	}
	var out []decision
	var pending *decision // the view where the player could announce, before their card
	for _, m := range g.Moves() {
		if m.Seat == seat {
			v := r.View(seat)
			v.Open = open
			switch m.Kind {
			case core.MoveTrump:
				out = append(out, decision{view: v, move: m})
			case core.MoveAnnounce:
				if pending == nil {
					pending = &decision{trick: 1, view: v, called: true}
				}
			case core.MovePlay:
				d := decision{trick: r.TricksDone() + 1, view: v, move: m}
				if pending != nil {
					d.view, d.called = pending.view, true
					pending = nil
				}
				if d.view.Legal.Len() > 1 || len(d.view.Calls) > 0 {
					out = append(out, d)
				}
			}
		}
		if err := r.Apply(m); err != nil {
			return out
		}
	}
	return out
}

// reviewText judges a player's decisions in a finished game, within the coach's budget (and the
// context's time), and writes the review: how many matched the strong choice and the costliest
// ones.
func (c *Coach) reviewText(ctx context.Context, j reviewJob) string {
	return renderReview(j, c.judgeDecisions(ctx, j))
}

// judgeDecisions judges the player's decisions, sharing the review's budget of solver nodes
// between them as their positions' sizes ask (early cards have the most deals to judge). The
// last decisions are judged first: what the small ones leave of their share goes to the earlier,
// bigger ones. Everything here depends on the game alone, so a review is the same on any
// machine unless the context's time cuts it, which is logged.
func (c *Coach) judgeDecisions(ctx context.Context, j reviewJob) []decision {
	ds := reviewDecisions(j.game, j.seat, j.open)
	weight := 0.0
	for _, d := range ds {
		weight += weightOf(d)
	}
	left := float64(c.cfg.Nodes)
	cut := 0
	for i := len(ds) - 1; i >= 0; i-- {
		d := &ds[i]
		w := weightOf(*d)
		share := left * w / max(weight, w)
		d.judged, d.ok = robot.Judge(ctx, d.view, uint64(i)+1, robot.Effort{Nodes: max(uint64(share), 1), Worlds: c.cfg.Worlds})
		weight -= w
		left = max(left-float64(d.judged.Nodes), 0)
		if d.judged.Cut {
			cut++
		}
	}
	if cut > 0 && !errors.Is(ctx.Err(), context.Canceled) { // cut by the cap, not by Close
		c.cfg.Log.Warn("the coach's time cap cut a review short: the machine is too busy for its budget, and the review's numbers come from fewer deals",
			"game", j.gameNo, "cap", c.cfg.Cap, "decisions", len(ds), "cut", cut, "budget", c.cfg.Nodes)
	}
	return ds
}

// renderReview writes the review of the judged decisions in the job's language.
func renderReview(j reviewJob, ds []decision) string {
	lang := j.lang
	type finding struct {
		cost   float64 // in win chance, for the order
		text   string
		chance bool // it says a win chance
	}
	var found []finding
	judged, matched := 0, 0
	// The win chance a finding gives counts a 20–20 draw as half a game won (the review says so).
	chance := func(c robot.Choice) float64 { return c.Win + c.Draw/2 }
	for _, d := range ds {
		if !d.ok {
			continue
		}
		if d.move.Kind == core.MovePlay && d.view.Legal.Len() > 1 || d.move.Kind == core.MoveTrump {
			judged++
			chosen, rank, ok := d.judged.Find(d.move)
			best := d.judged.Best()
			if !ok {
				continue
			}
			winCost := chance(best) - chance(chosen)
			// Worth, not points, orders the cards: the better card may keep fewer card points on
			// average than the one played (it gives up a trick for a surer 21), and then no
			// points were lost — ptsCost is negative and is not said.
			ptsCost := best.Points - chosen.Points
			if rank == 0 || (chosen.Worth >= best.Worth-1e-9 && (best.Points < 0 || ptsCost < 0.05)) {
				matched++
			} else if d.move.Kind == core.MoveTrump {
				if winCost >= 0.005 {
					found = append(found, finding{winCost, i18n.T(lang, "review.trump", i18n.SuitLabel(lang, chosen.Move.Suit),
						percent(winCost), i18n.SuitLabel(lang, best.Move.Suit)), true})
				}
			} else if percent(winCost) >= 1 && ptsCost >= 0.05 {
				found = append(found, finding{winCost + ptsCost/100, i18n.T(lang, "review.card", d.trick, i18n.Card(lang, d.move.Card),
					pointsText(lang, ptsCost), percent(winCost), i18n.Card(lang, best.Move.Card)), true})
			} else if percent(winCost) >= 1 {
				found = append(found, finding{winCost, i18n.T(lang, "review.card.chance", d.trick, i18n.Card(lang, d.move.Card),
					percent(winCost), i18n.Card(lang, best.Move.Card)), true})
			} else if ptsCost >= 0.5 {
				found = append(found, finding{ptsCost / 100, i18n.T(lang, "review.card.points", d.trick, i18n.Card(lang, d.move.Card),
					pointsText(lang, ptsCost), i18n.Card(lang, best.Move.Card)), false})
			}
		}
		if d.judged.Call != 0 {
			judged++
			switch should := d.judged.ShouldCall(); {
			case should == d.called:
				matched++
			case should:
				found = append(found, finding{0.5 * math.Abs(d.judged.CallStripes) / 2, i18n.T(lang, "review.could_call",
					d.judged.Call.Title(), stripesText(lang, d.judged.CallStripes)), false})
			default:
				found = append(found, finding{0.5 * math.Abs(d.judged.CallStripes) / 2, i18n.T(lang, "review.called",
					d.judged.Call.Title(), stripesText(lang, d.judged.CallStripes)), false})
			}
		}
	}
	var b strings.Builder
	r := j.game.Result()
	team := j.seat.Team()
	b.WriteString(i18n.T(lang, "review.title", j.gameNo, r.Points[team], r.Points[team.Other()]))
	if judged == 0 {
		b.WriteString("\n" + i18n.T(lang, "review.nothing"))
		return b.String()
	}
	b.WriteString("\n" + i18n.N(lang, "review.matched", judged, matched))
	// The costliest first, at most three.
	slices.SortStableFunc(found, func(a, b finding) int { return cmp.Compare(b.cost, a.cost) })
	for i, f := range found {
		if i == 3 {
			break
		}
		b.WriteString("\n· " + f.text)
	}
	if len(found) == 0 {
		b.WriteString("\n" + i18n.T(lang, "review.clean"))
	}
	b.WriteString("\n" + i18n.T(lang, "review.how"))
	if slices.ContainsFunc(found[:min(len(found), 3)], func(f finding) bool { return f.chance }) {
		b.WriteString(" " + i18n.T(lang, "review.draws"))
	}
	return b.String()
}

// weightOf is a decision's share of the review's time: about the size of its search.
func weightOf(d decision) float64 {
	if d.move.Kind == core.MoveTrump {
		return 0.05 // from the trump table
	}
	n := float64(d.view.Hand.Len())
	return n * n * n
}

// pointsText is an expected number of card points, whole or with one decimal when small.
func pointsText(lang string, x float64) string {
	if x >= 2 {
		return fmt.Sprintf("%d", int(math.Round(x)))
	}
	return i18n.Decimal(lang, x)
}

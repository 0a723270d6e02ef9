package research

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/robot"
)

// divergence is one card decision where A's player and the other level's player, shown the same
// view, chose different cards; each card's game was played to its end by the duel's players.
type divergence struct {
	trick, pos int     // the trick (0-5) and the place in it (0 leads)
	score      float64 // A's card's game score minus the other card's (1 win, 0.5 draw)
	points     int     // the same for A's team's card points
}

// divergences plays the duel's deals (A in both teams) and, at each of A's card decisions with a
// choice, asks a player of level alt (same seat seed, the duel's options for alt) what it would
// play; where they differ it plays alt's card out with the duel's players too. The players are
// deterministic given (seed, view) with one thread and a node cap, so A's card's game is the one
// the duel plays on.
func divergences(ctx context.Context, cfg DuelConfig, alt robot.Level) ([]divergence, int) {
	w := newDuelWorker(cfg)
	var others [4]robot.Player
	for s := range 4 {
		others[s] = robot.NewWith(alt, cfg.Seed*4+uint64(s)+1, cfg.optionsFor(alt))
	}
	var out []divergence
	decisions := 0
	for i := range cfg.Deals {
		dealer, hands := dealFor(cfg.Seed, i)
		for _, aTeam := range []core.Team{core.TeamA, core.TeamB} {
			g, err := core.NewGame(core.DefaultRules(), dealer, hands)
			if err != nil {
				panic(err)
			}
			type branch struct {
				d   divergence
				alt GameOutcome
			}
			var branches []branch
			for g.Phase() != core.PhaseOver {
				s := g.ToMove()
				p := w.b[s]
				if s.Team() == aTeam {
					p = w.a[s]
				}
				v := g.View(s)
				m := p.Decide(ctx, v)
				if s.Team() == aTeam && m.Kind == core.MovePlay && v.Legal.Len() > 1 && len(v.Calls) == 0 {
					decisions++
					if o := others[s].Decide(ctx, v); o.Kind == core.MovePlay && o.Card != m.Card {
						h := *g
						if err := h.Apply(o); err != nil {
							panic(err)
						}
						if err := w.playOut(ctx, cfg, &h, aTeam, h.View); err != nil {
							panic(err)
						}
						branches = append(branches, branch{divergence{trick: g.TricksDone(), pos: g.CurrentTrick().N}, outcomeOf(&h, aTeam)})
					}
				}
				if err := g.Apply(m); err != nil {
					panic(err)
				}
			}
			mine := outcomeOf(g, aTeam)
			for _, b := range branches {
				d := b.d
				d.score = mine.Score - b.alt.Score
				d.points = mine.Margin - b.alt.Margin
				out = append(out, d)
			}
		}
	}
	return out, decisions
}

// BenchmarkDivergence says where Strong and Normal choose differently and who is right, by
// playing both cards out on the true deal with the duel's players (Strong against Normal, 12,000
// solver nodes per ms of budget). KONTERMATT_DIVERGE_DEALS and _SEED set the deals (default 40, 1).
//
//	GOMAXPROCS=1 nice -n 19 go test -run '^$' -bench Divergence -benchtime 1x ./cmd/bot/internal/research/
func BenchmarkDivergence(b *testing.B) {
	deals, seed := 40, uint64(1)
	if n, err := strconv.Atoi(os.Getenv("KONTERMATT_DIVERGE_DEALS")); err == nil {
		deals = n
	}
	if n, err := strconv.ParseUint(os.Getenv("KONTERMATT_DIVERGE_SEED"), 10, 64); err == nil {
		seed = n
	}
	for b.Loop() {
		cfg := DuelConfig{A: robot.Strong, B: robot.Normal, Deals: deals, Seed: seed, Workers: 1, NodesPerMs: 12000}
		ds, decisions := divergences(b.Context(), cfg, robot.Normal)
		var score [6][4]float64
		var points, n [6][4]int
		var total float64
		for _, d := range ds {
			score[d.trick][d.pos] += d.score
			points[d.trick][d.pos] += d.points
			n[d.trick][d.pos]++
			total += d.score
		}
		fmt.Printf("%d deals, seed %d: Strong's card decisions with a choice %d, Normal would play another card in %d; Strong's card minus Normal's, summed game score %+.1f\n",
			deals, seed, decisions, len(ds), total)
		fmt.Printf("trick place  n  score-sum  points-mean\n")
		for t := range 6 {
			for p := range 4 {
				if n[t][p] > 0 {
					fmt.Printf("%5d %5d %3d  %+8.1f  %+8.2f\n", t+1, p+1, n[t][p], score[t][p], float64(points[t][p])/float64(n[t][p]))
				}
			}
		}
	}
}

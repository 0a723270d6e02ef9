package research

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/robot"
)

// MatchOutcome is one whole match from A's side.
type MatchOutcome struct {
	Won   bool // A's team crossed out its last stripe first
	Games int
	Board [2]int // open stripes at the end: A's team, B's team
	Score float64
}

// MatchResult is what a match duel measured.
type MatchResult struct {
	Config  DuelConfig
	Pairs   [][2]MatchOutcome // per match: A as team A, then A as team B, on the same deals
	Games   []GameOutcome     // every game, from A's side
	Times   [2][nKinds][]float64
	Ran     [2][nKinds][]float64 // as DuelResult's
	Elapsed time.Duration
}

// maxMatchGames ends a match that runs away (stripes can be added for ever in principle).
const maxMatchGames = 200

// matchDeal is game k of match i: its deal comes from (seed, i, k), the same for both matches of
// a pair however long the other ran; the first dealer from (seed, i).
func matchDeal(seed uint64, i, k int, dealer core.Seat) [4][6]core.Card {
	r := rand.New(rand.NewPCG(seed^0x6d61746368, uint64(i)<<16|uint64(k)))
	return core.DealHands(r, dealer)
}

func firstDealer(seed uint64, i int) core.Seat {
	return core.Seat(rand.New(rand.NewPCG(seed^0x6d61746368, uint64(i)<<16|0xffff)).IntN(4))
}

// playMatch plays match i to its end with A's players in aTeam; the players see the board
// (Match.View), so they play for the match.
func (w *duelWorker) playMatch(ctx context.Context, cfg DuelConfig, i int, aTeam core.Team) (MatchOutcome, []GameOutcome, error) {
	rules := core.DefaultRules()
	rules.Stripes = cfg.Stripes
	m, err := core.NewMatch(rules, firstDealer(cfg.Seed, i))
	if err != nil {
		return MatchOutcome{}, nil, err
	}
	var games []GameOutcome
	for k := 0; !m.Over(); k++ {
		if k == maxMatchGames {
			return MatchOutcome{}, nil, fmt.Errorf("match %d: no winner after %d games", i, k)
		}
		g, err := m.Deal(matchDeal(cfg.Seed, i, k, m.NextDealer()))
		if err != nil {
			return MatchOutcome{}, nil, err
		}
		if err := w.playOut(ctx, cfg, g, aTeam, m.View); err != nil {
			return MatchOutcome{}, nil, fmt.Errorf("match %d game %d: %w", i, k+1, err)
		}
		games = append(games, outcomeOf(g, aTeam))
	}
	win, _ := m.Winner()
	b := m.Board()
	o := MatchOutcome{Won: win == aTeam, Games: m.NumGames(), Board: [2]int{b.Open(aTeam), b.Open(aTeam.Other())}}
	if o.Won {
		o.Score = 1
	}
	return o, games, nil
}

// MatchDuel plays every match twice, A in team A and then in team B, on the same deals; when ctx
// ends first it gives ctx's error (as Duel).
func MatchDuel(ctx context.Context, cfg DuelConfig) (*MatchResult, error) {
	start := time.Now()
	res := &MatchResult{Config: cfg, Pairs: make([][2]MatchOutcome, cfg.Matches)}
	gamesOf := make([][]GameOutcome, cfg.Matches)
	workers, err := eachPair(ctx, cfg, cfg.Matches, func(w *duelWorker, i, k int, aTeam core.Team) error {
		o, games, err := w.playMatch(ctx, cfg, i, aTeam)
		res.Pairs[i][k] = o
		gamesOf[i] = append(gamesOf[i], games...)
		return err
	})
	for _, w := range workers {
		w.addTimes(&res.Times, &res.Ran)
	}
	for _, g := range gamesOf {
		res.Games = append(res.Games, g...)
	}
	res.Elapsed = time.Since(start)
	return res, err
}

// MatchShare is A's match win share averaged over the pairs, with its 95% interval.
func (r *MatchResult) MatchShare() (float64, float64) {
	xs := make([]float64, len(r.Pairs))
	for i, p := range r.Pairs {
		xs[i] = (p[0].Score + p[1].Score) / 2
	}
	return meanCI(xs)
}

func (r *MatchResult) Print(w io.Writer) {
	c := r.Config
	share, half := r.MatchShare()
	games := make([]float64, 0, 2*len(r.Pairs))
	for _, p := range r.Pairs {
		games = append(games, float64(p[0].Games), float64(p[1].Games))
	}
	meanGames, gh := meanCI(games)
	scores := make([]float64, len(r.Games))
	for i, g := range r.Games {
		scores[i] = g.Score
	}
	gs, gsh := meanCI(scores)
	fmt.Fprintf(w, "duel A=%s B=%s%s: %d matches x 2 (A plays each match's deals in both teams), %d stripes, seed %d, workers %d, %s\n",
		c.A, c.B, c.bNote(), len(r.Pairs), c.Stripes, c.Seed, c.Workers, r.Elapsed.Round(time.Second))
	if c.NodesPerMs > 0 {
		fmt.Fprintf(w, "search decisions bounded by %d solver nodes per ms of the level's budget\n", c.NodesPerMs)
	}
	fmt.Fprintf(w, "A match win share: %.4f ± %.4f (95%% CI over match pairs)\n", share, half)
	fmt.Fprintf(w, "games per match:   %.2f ± %.2f; A game win share in them (draws half): %.4f ± %.4f\n", meanGames, gh, gs, gsh)
	printTimes(w, c, r.Times, r.Ran)
}

// printTimes prints the decision-time table of both sides: the wall clock's and, where it was
// measured, how long the deciding thread ran (p95 and max).
func printTimes(w io.Writer, c DuelConfig, times, ran [2][nKinds][]float64) {
	fmt.Fprintf(w, "decision time ms   %8s %8s %8s %8s %8s %8s\n", "n", "p50", "p95", "max", "ran-p95", "ran-max")
	for side, lvl := range []robot.Level{c.A, c.B} {
		for k := range nKinds {
			ts := slices.Clone(times[side][k])
			slices.Sort(ts)
			if len(ts) == 0 {
				continue
			}
			fmt.Fprintf(w, "  %s %-6s %-8s %8d %8.2f %8.2f %8.2f", "AB"[side:side+1], lvl, kindNames[k], len(ts),
				percentile(ts, 0.5), percentile(ts, 0.95), ts[len(ts)-1])
			if rs := slices.Sorted(slices.Values(ran[side][k])); len(rs) > 0 {
				fmt.Fprintf(w, " %8.2f %8.2f", percentile(rs, 0.95), rs[len(rs)-1])
			}
			fmt.Fprintln(w)
		}
	}
}

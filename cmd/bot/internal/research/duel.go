package research

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/robot"
	"github.com/kontermatt/kontermatt/core/robot/dd"
	"github.com/kontermatt/kontermatt/internal/cpuclock"
)

// DuelConfig says who plays whom, on how many deals.
type DuelConfig struct {
	A, B    robot.Level
	Deals   int
	Seed    uint64
	Workers int           // games played at once
	Options robot.Options // for both players' search levels
	// BPrevious makes B's search players draw deals with the sampler before the policy-based
	// inference, to measure the new one against it on the same deals.
	BPrevious bool
	// AOpenFrom makes A's card play cheat from trick AOpenFrom on (1: every card; 0: none): each
	// card A's seats play there is the best one with every hand open (the solver on the true
	// deal), its trump, announcements and earlier cards A's level's. Against B it measures the
	// most any card play could gain over B's, the ceiling of a level's card play; from a later
	// trick, the most that reading the hidden cards better from then on could gain. It is a
	// measurement, never a player.
	AOpenFrom int
	// AScale multiplies A's search by this factor: its node cap (with NodesPerMs) and its cap on
	// sampled deals. It measures what more search would buy A, the same deals against the same B;
	// 0 and 1 leave A as its level plays.
	AScale int
	// NodesPerMs, when set, bounds each search decision by this many solver nodes per
	// millisecond of its level's budget instead of by time, and no clock cuts it (as the coach's
	// Judge: the node cap is checked after each deal, and one deal's solve is finite): the same
	// seed plays the same games on a busy machine as on an idle one, whatever the threads.
	NodesPerMs int
	Analyze    bool   // measure A's decisions against the open-card solver
	Matches    int    // play this many whole matches (each twice, teams swapped) instead of deals
	Stripes    int    // the matches' open stripes at the start
	Done       func() // called when a deal (or a match) has been played both ways; may be nil
}

// GameOutcome is one game from A's side.
type GameOutcome struct {
	Score   float64 // 1 win, 0.5 draw, 0 loss
	Margin  int     // A's card points minus B's
	Stripes int     // B's stripe change minus A's: positive is good for A
}

// Decision kinds timed separately.
const (
	kindTrump = iota
	kindAnnounce
	kindCard
	nKinds
)

var kindNames = [nKinds]string{"trump", "announce", "card"}

// analysis measures decisions against the true deal with all hands open.
type analysis struct {
	Cards, CardOptimal, CardClassOptimal int // card decisions with a choice; optimal in points / in win-draw-loss
	Trumps                               int
	TrumpRegret                          int // summed points regret
	TrumpClassRegret                     int // trump choices that lose a win/draw/loss class
}

func (a *analysis) add(b analysis) {
	a.Cards += b.Cards
	a.CardOptimal += b.CardOptimal
	a.CardClassOptimal += b.CardClassOptimal
	a.Trumps += b.Trumps
	a.TrumpRegret += b.TrumpRegret
	a.TrumpClassRegret += b.TrumpClassRegret
}

// DuelResult is everything a duel measured.
type DuelResult struct {
	Config DuelConfig
	Pairs  [][2]GameOutcome     // per deal: A as team A, then A as team B
	Times  [2][nKinds][]float64 // decision times in ms, per side (A, B) and kind
	// Ran is, beside each time, how long the deciding thread ran on a CPU meanwhile (Linux; none
	// elsewhere): with one search thread the decision's own time, the wall clock's less what the
	// machine's other work took.
	Ran      [2][nKinds][]float64
	Analysis analysis
	Elapsed  time.Duration
}

// duelWorker holds one set of players; a worker plays one game at a time.
type duelWorker struct {
	a, b   [4]robot.Player
	solver *dd.Solver
	times  [2][nKinds][]float64
	ran    [2][nKinds][]float64
	an     analysis
}

func newDuelWorker(cfg DuelConfig) *duelWorker {
	w := &duelWorker{solver: dd.NewSolver()}
	for s := range 4 {
		// The same seed per seat for both sides: a player against itself plays both games of a
		// pair identically.
		seed := cfg.Seed*4 + uint64(s) + 1
		bo := cfg.optionsFor(cfg.B)
		bo.PreviousSampler = cfg.BPrevious
		w.a[s] = robot.NewWith(cfg.A, seed, cfg.scaled(cfg.optionsFor(cfg.A), cfg.A))
		w.b[s] = robot.NewWith(cfg.B, seed, bo)
	}
	return w
}

// optionsFor are the search options of a level's players in the duel.
func (c DuelConfig) optionsFor(l robot.Level) robot.Options {
	o := c.Options
	if b := robot.DecisionBudget(l); c.NodesPerMs > 0 && b > 0 {
		o.Nodes = uint64(c.NodesPerMs) * uint64(b.Milliseconds())
		o.Budget = unclocked
	}
	return o
}

// scaled is A's options o times AScale: its node cap and its cap on sampled deals.
func (c DuelConfig) scaled(o robot.Options, l robot.Level) robot.Options {
	if c.AScale <= 1 {
		return o
	}
	o.Nodes *= uint64(c.AScale)
	if o.Worlds == 0 {
		o.Worlds = robot.DefaultWorlds(l)
	}
	o.Worlds *= c.AScale
	return o
}

// unclocked is the time cap of a decision the node cap bounds: none that a decision meets.
const unclocked = 24 * time.Hour

// decisionContext is what a decision runs in, within the duel's ctx: a time-bounded one within
// 10 s whatever its budget, a node-bounded one with no deadline of its own (see NodesPerMs).
func (c DuelConfig) decisionContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.NodesPerMs > 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, 10*time.Second)
}

// dealFor is deal i of the duel: a random dealer and a seeded shuffle.
func dealFor(seed uint64, i int) (core.Seat, [4][6]core.Card) {
	r := rand.New(rand.NewPCG(seed, uint64(i)))
	dealer := core.Seat(r.IntN(4))
	return dealer, core.DealHands(r, dealer)
}

// play plays one full game; aTeam is the team A's player sits in.
func (w *duelWorker) play(ctx context.Context, cfg DuelConfig, dealer core.Seat, hands [4][6]core.Card, aTeam core.Team) (GameOutcome, error) {
	g, err := core.NewGame(core.DefaultRules(), dealer, hands)
	if err != nil {
		return GameOutcome{}, err
	}
	if err := w.playOut(ctx, cfg, g, aTeam, g.View); err != nil {
		return GameOutcome{}, err
	}
	return outcomeOf(g, aTeam), nil
}

// playOut plays a game to its end, each seat deciding on view(seat); it gives ctx's error, the
// game unfinished, once ctx ends.
func (w *duelWorker) playOut(ctx context.Context, cfg DuelConfig, g *core.Game, aTeam core.Team, view func(core.Seat) core.View) error {
	for g.Phase() != core.PhaseOver {
		if err := ctx.Err(); err != nil {
			return err
		}
		s := g.ToMove()
		side := 1
		p := w.b[s]
		if s.Team() == aTeam {
			side, p = 0, w.a[s]
		}
		v := view(s)
		kind := kindCard
		switch {
		case v.Phase == core.PhaseTrump:
			kind = kindTrump
		case len(v.Calls) > 0:
			kind = kindAnnounce
		}
		dctx, cancel := cfg.decisionContext(ctx)
		t0 := time.Now()
		r0, sched := cpuclock.Thread() // inside the wall clock's interval: no longer than it
		var m core.Move
		if cfg.AOpenFrom > 0 && side == 0 && v.Phase == core.PhasePlay && g.TricksDone()+1 >= cfg.AOpenFrom {
			m = w.openCard(g, s)
		} else {
			m = p.Decide(dctx, v)
		}
		r1, _ := cpuclock.Thread()
		dt := time.Since(t0)
		cancel()
		w.times[side][kind] = append(w.times[side][kind], float64(dt.Microseconds())/1000)
		if sched {
			w.ran[side][kind] = append(w.ran[side][kind], float64((r1-r0).Microseconds())/1000)
		}
		if cfg.Analyze && side == 0 {
			w.analyze(g, m)
		}
		if err := g.Apply(m); err != nil {
			return fmt.Errorf("seat %v (%s) played %v: %w", s, [2]robot.Level{cfg.A, cfg.B}[side], m, err)
		}
	}
	return nil
}

// outcomeOf is a finished game from the side of A, playing in aTeam.
func outcomeOf(g *core.Game, aTeam core.Team) GameOutcome {
	r := g.Result()
	o := GameOutcome{Margin: r.Points[aTeam] - r.Points[aTeam.Other()], Stripes: r.Stripes[aTeam.Other()] - r.Stripes[aTeam]}
	switch win, ok := r.Outcome.Winner(); {
	case !ok:
		o.Score = 0.5
	case win == aTeam:
		o.Score = 1
	}
	return o
}

// openValue is the points team takes from the position after move m with all hands open.
func (w *duelWorker) openValue(g *core.Game, m core.Move, team core.Team) int {
	h := *g
	if err := h.Apply(m); err != nil {
		panic(err)
	}
	base := h.Points()[team]
	if h.Phase() == core.PhaseOver {
		return base
	}
	t := h.CurrentTrick()
	pos := dd.Position{Trump: h.Trump(), Leader: t.Leader, Trick: t.Played()}
	for s := range pos.Hands {
		pos.Hands[s] = h.Hand(core.Seat(s))
	}
	w.solver.Reset(pos, team)
	return base + w.solver.Value()
}

// openCards are seat s's legal cards, each with the points its team takes playing it with every
// hand open (openValue).
func (w *duelWorker) openCards(g *core.Game, s core.Seat) ([]core.Card, []int) {
	cards := g.LegalCards(s).Cards()
	values := make([]int, len(cards))
	for i, c := range cards {
		values[i] = w.openValue(g, core.Play(s, c), s.Team())
	}
	return cards, values
}

// openCard is the card of seat s worth the most points to its team with every hand open.
func (w *duelWorker) openCard(g *core.Game, s core.Seat) core.Move {
	cards, values := w.openCards(g, s)
	return core.Play(s, cards[slices.Index(values, slices.Max(values))])
}

func outcomeClass(pts int) int {
	switch {
	case pts > 20:
		return 2
	case pts == 20:
		return 1
	}
	return 0
}

// analyze compares A's move with the open-card optimum: the card's points value (and class) or
// the trump suit's.
func (w *duelWorker) analyze(g *core.Game, m core.Move) {
	s := m.Seat
	team := s.Team()
	switch m.Kind {
	case core.MoveTrump:
		best, bestC := -1, -1
		var chosen int
		for _, x := range core.Suits {
			v := w.openValue(g, core.NameTrump(s, x), team)
			best, bestC = max(best, v), max(bestC, outcomeClass(v))
			if x == m.Suit {
				chosen = v
			}
		}
		w.an.Trumps++
		w.an.TrumpRegret += best - chosen
		if outcomeClass(chosen) < bestC {
			w.an.TrumpClassRegret++
		}
	case core.MovePlay:
		if g.LegalCards(s).Len() < 2 {
			return
		}
		cards, values := w.openCards(g, s)
		best := slices.Max(values)
		bestC := outcomeClass(best) // the class grows with the points
		chosen := values[slices.Index(cards, m.Card)]
		w.an.Cards++
		if chosen == best {
			w.an.CardOptimal++
		}
		if outcomeClass(chosen) == bestC {
			w.an.CardClassOptimal++
		}
	}
}

// Duel plays every deal twice, A in team A and then in team B. When ctx ends first it gives ctx's
// error, and the deals not played both ways are not results.
func Duel(ctx context.Context, cfg DuelConfig) (*DuelResult, error) {
	start := time.Now()
	res := &DuelResult{Config: cfg, Pairs: make([][2]GameOutcome, cfg.Deals)}
	workers, err := eachPair(ctx, cfg, cfg.Deals, func(w *duelWorker, i, k int, aTeam core.Team) error {
		dealer, hands := dealFor(cfg.Seed, i)
		o, err := w.play(ctx, cfg, dealer, hands, aTeam)
		res.Pairs[i][k] = o
		if err != nil {
			return fmt.Errorf("deal %d: %w", i, err)
		}
		return nil
	})
	for _, w := range workers {
		w.addTimes(&res.Times, &res.Ran)
		res.Analysis.add(w.an)
	}
	res.Elapsed = time.Since(start)
	return res, err
}

// eachPair calls play for every i below n twice, A in team A (k 0) and then in team B (k 1), on
// cfg.Workers workers with a duelWorker each, and gives the workers, for what they measured,
// and every error joined. play writes only its own i's results. Once ctx ends no pair is begun,
// a pair begun gives up at its next move, and the error is ctx's alone.
func eachPair(ctx context.Context, cfg DuelConfig, n int, play func(w *duelWorker, i, k int, aTeam core.Team) error) ([]*duelWorker, error) {
	jobs := make(chan int)
	workers := make([]*duelWorker, max(cfg.Workers, 1))
	errs := make([]error, len(workers))
	var wg sync.WaitGroup
	for j := range workers {
		workers[j] = newDuelWorker(cfg)
		wg.Go(func() {
			// One thread per worker, so that its running time (threadRun) is its decisions'.
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			for i := range jobs {
				for k, aTeam := range []core.Team{core.TeamA, core.TeamB} {
					errs[j] = errors.Join(errs[j], play(workers[j], i, k, aTeam))
				}
				if cfg.Done != nil && ctx.Err() == nil {
					cfg.Done()
				}
			}
		})
	}
dispatch:
	for i := range n {
		select {
		case jobs <- i:
		case <-ctx.Done():
			break dispatch
		}
	}
	close(jobs)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return workers, err
	}
	return workers, errors.Join(errs...)
}

// addTimes appends the worker's decision times to times, and their threads' running times to ran.
func (w *duelWorker) addTimes(times, ran *[2][nKinds][]float64) {
	for side := range w.times {
		for k := range w.times[side] {
			times[side][k] = append(times[side][k], w.times[side][k]...)
			ran[side][k] = append(ran[side][k], w.ran[side][k]...)
		}
	}
}

// meanCI is the mean of xs and the half-width of its 95% confidence interval.
func meanCI(xs []float64) (mean, half float64) {
	n := float64(len(xs))
	if n == 0 {
		return 0, 0
	}
	for _, x := range xs {
		mean += x
	}
	mean /= n
	if n < 2 {
		return mean, 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, 1.96 * math.Sqrt(ss/(n-1)/n)
}

// WinShare is A's game win share (draws half) averaged over the pairs, with its 95% interval.
func (r *DuelResult) WinShare() (float64, float64) {
	xs := make([]float64, len(r.Pairs))
	for i, p := range r.Pairs {
		xs[i] = (p[0].Score + p[1].Score) / 2
	}
	return meanCI(xs)
}

func (r *DuelResult) pairMeans(f func(GameOutcome) float64) (float64, float64) {
	xs := make([]float64, len(r.Pairs))
	for i, p := range r.Pairs {
		xs[i] = (f(p[0]) + f(p[1])) / 2
	}
	return meanCI(xs)
}

func percentile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func (r *DuelResult) Print(w io.Writer) {
	c := r.Config
	share, half := r.WinShare()
	margin, mh := r.pairMeans(func(o GameOutcome) float64 { return float64(o.Margin) })
	stripes, sh := r.pairMeans(func(o GameOutcome) float64 { return float64(o.Stripes) })
	fmt.Fprintf(w, "duel A=%s B=%s%s: %d deals x 2 games (duplicate: A plays each deal in both teams), seed %d, workers %d, %s\n",
		c.A, c.B, c.bNote(), len(r.Pairs), c.Seed, c.Workers, r.Elapsed.Round(time.Second))
	if c.NodesPerMs > 0 {
		fmt.Fprintf(w, "search decisions bounded by %d solver nodes per ms of the level's budget\n", c.NodesPerMs)
	}
	fmt.Fprintf(w, "A game win share (draws half): %.4f ± %.4f (95%% CI over deal pairs)\n", share, half)
	fmt.Fprintf(w, "A card-point margin per game:  %+.2f ± %.2f\n", margin, mh)
	fmt.Fprintf(w, "A stripe margin per game:      %+.3f ± %.3f (B's stripe change minus A's, per game, not per match)\n", stripes, sh)
	ds, dm := r.Difference()
	fmt.Fprintf(w, "A's side minus B's, per deal (same cards, same seats): score %+.4f (SE %.4f), card points %+.2f (SE %.2f); A better on %d deals, the same on %d, worse on %d\n",
		ds.Mean, ds.SE, dm.Mean, dm.SE, ds.Better, ds.Same, ds.Worse)
	printTimes(w, c, r.Times, r.Ran)
	if c.Analyze {
		a := r.Analysis
		fmt.Fprintf(w, "A against the open-card solver on the true deal:\n")
		if a.Cards > 0 {
			fmt.Fprintf(w, "  card decisions with a choice: %d; optimal in points %.4f, in win/draw/loss %.4f\n",
				a.Cards, float64(a.CardOptimal)/float64(a.Cards), float64(a.CardClassOptimal)/float64(a.Cards))
		}
		if a.Trumps > 0 {
			fmt.Fprintf(w, "  trump choices: %d; mean regret %.3f card points; class lost in %.4f\n",
				a.Trumps, float64(a.TrumpRegret)/float64(a.Trumps), float64(a.TrumpClassRegret)/float64(a.Trumps))
		}
	}
}

// bNote marks in the result's first line what the duel changed in its players: A's search
// scaled, A's cards open, B's previous sampler.
func (c DuelConfig) bNote() string {
	note := ""
	if c.AScale > 1 {
		note += fmt.Sprintf(" (A's search x%d)", c.AScale)
	}
	switch {
	case c.AOpenFrom == 1:
		note += " (A's cards with every hand open)"
	case c.AOpenFrom > 1:
		note += fmt.Sprintf(" (A's cards with every hand open from trick %d)", c.AOpenFrom)
	}
	if c.BPrevious {
		note += " (previous sampler)"
	}
	return note
}

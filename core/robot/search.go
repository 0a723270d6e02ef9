package robot

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/robot/dd"
)

// searcher is the Normal and Strong player: perfect-information Monte Carlo. For each decision
// it draws deals consistent with the view (or lists them all when few are left), solves each
// with all hands open and takes the option that wins (21 points or more) in the most deals,
// a draw counting half.
type searcher struct {
	level   Level
	seed    uint64
	budget  time.Duration
	worlds  int
	nodes   uint64 // solver nodes per decision at most (0: no cap)
	threads int
	solvers []*dd.Solver
	// previous draws deals with the sampler before the policy-based inference (for duels).
	previous bool
	// models makes the solver play Easy's cards for the other team's seats the inference reads
	// as rule players (Strong, not the previous sampler).
	models bool

	// pending is the card chosen together with an announcement, played at the next call.
	pending     core.Card
	pendingHand core.CardSet
}

func newSearcher(level Level, seed uint64, o Options) *searcher {
	budget, worlds := levelDefaults(level)
	if o.Budget > 0 {
		budget = o.Budget
	}
	if o.Worlds > 0 {
		worlds = o.Worlds
	}
	s := &searcher{level: level, seed: seed, budget: budget, worlds: worlds, nodes: o.Nodes, threads: o.threads(),
		previous: o.PreviousSampler, models: level == Strong && !o.PreviousSampler}
	for range s.threads {
		s.solvers = append(s.solvers, dd.NewSolver())
	}
	return s
}

// inferTrump weighs deals by forehand's trump choice. Measured with 40 deals per decision over
// 400 duplicate pairs against Easy: win share 0.630 with it, 0.616 without.
const inferTrump = true

// Outcome classes of a solved deal, counted in half games.
const (
	classLoss = 0
	classDraw = 1
	classWin  = 2
)

// lateLimit: when no more consistent deals than this remain, every one of them is solved, exactly
// (for the points too, which break ties); before that the search samples up to its cap.
const lateLimit = 2000

func (s *searcher) Decide(ctx context.Context, v core.View) core.Move {
	until := searchDeadline(ctx, time.Now(), s.budget)
	if ctx.Err() != nil {
		return easyMove(v, s.seed)
	}
	switch {
	case v.Phase == core.PhaseTrump:
		return core.NameTrump(v.Seat, s.decideTrump(ctx, v))
	case v.Legal.Len() == 1 && len(v.Calls) == 0:
		return core.Play(v.Seat, v.Legal.First())
	}
	if s.pending != core.NoCard && s.pendingHand == v.Hand && v.Legal.Has(s.pending) && v.Trick.N < 4 {
		c := s.pending
		s.pending = core.NoCard
		if len(v.Calls) == 0 {
			return core.Play(v.Seat, c)
		}
	}
	s.pending = core.NoCard
	card, win, draw, loss, ok := s.decideCard(ctx, until, v)
	if !ok {
		return easyMove(v, s.seed)
	}
	if len(v.Calls) > 0 {
		call := biggestCall(v.Calls)
		if announceGain(v, call, win, draw, loss) > announceThreshold(v) {
			s.pending, s.pendingHand = card, v.Hand
			return core.Announce(v.Seat, call)
		}
	}
	return core.Play(v.Seat, card)
}

// worldSource hands out the deals to solve: all of them, or samples drawn from (seed, view, i).
type worldSource struct {
	infer    bool
	maxLR    float64
	playedBy core.CardSet // the cards forehand has played
	plays    []observedPlay
	all      [][4]core.CardSet
	d        *deals
	seed     uint64
	v        core.View
	max      int

	// The policy-based inference (infer.go): listed deals weighed by it, or sampled deals drawn
	// many at a time and resampled in proportion to it (kept with how often they were drawn).
	in      *inference
	drawn   [][4]core.CardSet
	weights []float64
	// models has, per deal, the other team's seats that the inference reads as rule players
	// (bit s for seat s; the same in every deal, modelMasks): the solver plays Easy's card for
	// them (easyModel).
	models []uint8
}

// modelled gives the seats deal i models (see worldSource.models).
func (w *worldSource) modelled(i int) uint8 {
	if w.models == nil {
		return 0
	}
	return w.models[i]
}

// setModel makes the solver play Easy's cards for the seats in mask.
func (s *searcher) setModel(sv *dd.Solver, mask uint8) {
	if mask != 0 && s.models {
		sv.SetModel(mask, easyModel)
	}
}

// observedPlay is a card another seat played, with what it saw when it played it.
type observedPlay struct {
	seat   core.Seat
	card   core.Card
	tricks int          // completed tricks before it
	trick  core.Trick   // the trick so far, before its card
	later  core.CardSet // the cards the seat played after it (still in its hand then)
}

// weighPlays weighs deals by how likely each card the others played was with the hand the deal
// gives them: a card Easy would have played there counts playLikely, any other legal card an
// equal share of the rest. It applies to decisions in tricks 2 to 4, where the deals are sampled
// and the open-card measure of the duel found Strong furthest from the best card; the model is
// kept mild so that a few deals never outweigh all the others. (The previous sampler's.)
const weighPlays = true

// playLikely is the chance the model gives the card Easy would play.
const playLikely = 0.4

// presample is how many deals the policy-based sampler draws per deal it keeps. Eight, keeping
// the likelier deals among more, was tried and not kept: against Normal +0.0187 ± 0.0388 of games,
// deal by deal against this version (duel -a strong -b normal -deals 200 -seed 7601 -nodes-per-ms
// 12000, -pairs/-against, one core; 29 deals better, 27 worse), and the extra weighing made
// Strong's slowest card decision run 105.8 ms on its thread where it ran 84.2 ms.
const presample = 4

func (s *searcher) source(v core.View) *worldSource {
	if s.previous {
		return s.previousSource(v)
	}
	d := newDeals(v)
	ws := &worldSource{d: d, seed: s.seed, v: v, max: s.worlds, in: newInference(v)}
	if d.Count() <= lateLimit {
		ws.all = d.All()
		// Listed in no random order: shuffled, so that a search the clock cuts short has solved
		// a fair sample of them.
		r := rngFor(s.seed, v, 0)
		r.Shuffle(len(ws.all), func(i, j int) { ws.all[i], ws.all[j] = ws.all[j], ws.all[i] })
		ws.max = len(ws.all)
		ws.weights = make([]float64, len(ws.all))
		chances := make([][4]float64, len(ws.all))
		for i, h := range ws.all {
			ws.weights[i], chances[i] = ws.in.weighKinds(h)
		}
		top := 0.0
		if len(ws.weights) > 0 {
			top = slices.Max(ws.weights)
		}
		for i, lw := range ws.weights {
			ws.weights[i] = math.Exp(lw - top)
		}
		ws.models = modelMasks(v, ws.weights, chances)
		return ws
	}
	var chances [][4]float64
	ws.drawn, ws.weights, chances = resample(ws.in, d, rngFor(s.seed, v, 0), s.worlds)
	ws.models = modelMasks(v, ws.weights, chances)
	ws.max = len(ws.drawn)
	return ws
}

// modelMasks gives the other team's seats the solver plays Easy's cards for, the same in every
// deal: those whose chance of playing by rules, over the deals weighed (chances: per deal, per
// seat), is at least modelBelief. Read deal by deal instead, a Normal player was modelled in the
// deals where its hidden hand made its moves look like the rule's, and played against as one
// there: on the same deals (duel -nodes-per-ms 12000, one core) Strong won 0.505 ± 0.017 of games
// against Normal that way (500 deals, seed 7101) and 0.521 ± 0.016 this way, and against Easy
// 0.714 ± 0.024 and 0.713 ± 0.024 (400 deals, seed 7102). Without any model: 0.526 ± 0.016 and
// 0.654 ± 0.024. On fresh deals against Normal: 0.529 ± 0.017 (500 deals, seed 7107). Where the
// two choose differently (BenchmarkDivergence, 150 deals, seed 7001), Strong's cards now score
// +3.5 games over Normal's where they scored -9.0 read deal by deal. Modelling no one in the first
// trick was tried and not kept: 0.5381 ± 0.0200 against Normal and 0.7087 ± 0.0250 against Easy
// where this gives 0.5325 ± 0.0195 and 0.7125 ± 0.0250 on the same deals (400 each, seeds 7201
// and 7202); and modelling no one in the last three cards (BenchmarkDivergence, 300 deals, seed
// 7204, found Strong's leads in tricks 3 and 4 worth 1.6 and 2.1 points less than Normal's):
// 0.5319 ± 0.0189 against Normal. Three changes to Strong's leads in tricks 2 to 4 were tried and
// not kept, measured deal by deal against this version (duel -pairs/-against, 400 deals, seeds
// 7301 against Normal and 7302 against Easy, -nodes-per-ms 12000; change in game win share, 95%
// paired interval): modelling no one for them, +0.0037 ± 0.0104 against Normal and -0.0219 ±
// 0.0155 against Easy; weighing their deals by the square root of the inference's weights
// (resample), +0.0000 ± 0.0140 and -0.0112 ± 0.0116; leading Easy's card when its worth is
// within 0.03 of a game of the best (decideCard), -0.0013 ± 0.0123 and -0.0031 ± 0.0080.
func modelMasks(v core.View, weights []float64, chances [][4]float64) []uint8 {
	var sum float64
	var marginal [4]float64
	for i, c := range chances {
		sum += weights[i]
		for s := range c {
			marginal[s] += weights[i] * c[s]
		}
	}
	var mask uint8
	for s := range marginal {
		if core.Seat(s).Team() != v.Seat.Team() && sum > 0 && marginal[s]/sum >= modelBelief {
			mask |= 1 << s
		}
	}
	masks := make([]uint8, len(chances))
	for i := range masks {
		masks[i] = mask
	}
	return masks
}

// resample draws presample·n deals uniformly, weighs each by the inference and keeps n draws in
// proportion to the weights (systematic resampling): it gives the distinct deals kept, in a random
// order, each with how many times it was kept and the chance it gives each seat of playing by
// rules.
func resample(in *inference, d *deals, r *rand.Rand, n int) ([][4]core.CardSet, []float64, [][4]float64) {
	m := presample * n
	cand := make([][4]core.CardSet, m)
	lw := make([]float64, m)
	models := make([][4]float64, m)
	top := math.Inf(-1)
	for i := range cand {
		cand[i] = d.Sample(r)
		lw[i], models[i] = in.weighKinds(cand[i])
		top = max(top, lw[i])
	}
	sum := 0.0
	for i := range lw {
		lw[i] = math.Exp(lw[i] - top)
		sum += lw[i]
	}
	var drawn [][4]core.CardSet
	var counts []float64
	var kept [][4]float64
	step := sum / float64(n)
	at := r.Float64() * step
	acc := 0.0
	for i, w := range lw {
		acc += w
		k := 0
		for at < acc {
			k++
			at += step
		}
		if k > 0 {
			drawn = append(drawn, cand[i])
			counts = append(counts, float64(k))
			kept = append(kept, models[i])
		}
	}
	r.Shuffle(len(drawn), func(i, j int) {
		drawn[i], drawn[j] = drawn[j], drawn[i]
		counts[i], counts[j] = counts[j], counts[i]
		kept[i], kept[j] = kept[j], kept[i]
	})
	return drawn, counts, kept
}

// previousSource is the sampler before the policy-based inference, kept for duels that measure
// the new one against it: deals drawn by rejection on forehand's trump count and weighed, in
// tricks 2 to 4, by agreement with Easy's cards.
func (s *searcher) previousSource(v core.View) *worldSource {
	d := newDeals(v)
	ws := &worldSource{d: d, seed: s.seed, v: v, max: s.worlds}
	if inferTrump && v.Phase == core.PhasePlay && v.Forehand != v.Seat {
		ws.infer = true
		ws.maxLR = trumpLR[0][6]
		if v.Trump == core.Clubs {
			ws.maxLR = trumpLR[1][6]
		}
		for _, t := range append(append([]core.Trick(nil), v.Tricks...), v.Trick) {
			if c := t.CardOf(v.Forehand); c != core.NoCard {
				ws.playedBy = ws.playedBy.Add(c)
			}
		}
	}
	if weighPlays && v.Phase == core.PhasePlay && len(v.Tricks) >= 1 && len(v.Tricks) <= 3 {
		ws.plays = observedPlays(v)
	}
	if d.Count() <= lateLimit {
		ws.all = d.All()
		r := rngFor(s.seed, v, 0)
		r.Shuffle(len(ws.all), func(i, j int) { ws.all[i], ws.all[j] = ws.all[j], ws.all[i] })
		ws.max = len(ws.all)
	}
	return ws
}

// observedPlays lists the cards the other seats played in the game so far.
func observedPlays(v core.View) []observedPlay {
	var out []observedPlay
	tricks := append(append([]core.Trick(nil), v.Tricks...), v.Trick)
	for k, t := range tricks {
		for i := range t.N {
			seat := t.SeatOf(i)
			if seat == v.Seat {
				continue
			}
			before := t
			before.N = i
			for j := i; j < 4; j++ {
				before.Cards[j] = core.NoCard
			}
			out = append(out, observedPlay{seat: seat, card: t.Cards[i], tricks: k, trick: before})
		}
	}
	// What each seat played later was still in its hand.
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j].seat == out[i].seat {
				out[i].later = out[i].later.Add(out[j].card)
			}
		}
	}
	return out
}

// world gives deal i and its weight. With the policy-based inference, listed deals carry its
// weight and sampled ones how often the resampling kept them. With the previous sampler, sampled
// deals are drawn in proportion to how likely forehand's trump choice was with that hand (by
// rejection) and listed deals carry that likelihood as their weight; both carry the likelihood of
// the cards the others played.
func (w *worldSource) world(i int) ([4]core.CardSet, float64) {
	if w.in != nil {
		if w.all != nil {
			return w.all[i], w.weights[i]
		}
		return w.drawn[i], w.weights[i]
	}
	if w.all != nil {
		h := w.all[i]
		return h, w.likelihood(h) * w.playLikelihood(h)
	}
	r := rngFor(w.seed, w.v, uint64(i)+1)
	for range 100 {
		h := w.d.Sample(r)
		if !w.infer || r.Float64()*w.maxLR < w.likelihood(h) {
			return h, w.playLikelihood(h)
		}
	}
	h := w.d.Sample(r)
	return h, w.playLikelihood(h)
}

// playLikelihood is how likely the cards the others played were with the hands of deal h.
func (w *worldSource) playLikelihood(h [4]core.CardSet) float64 {
	p := 1.0
	v := w.v
	for _, o := range w.plays {
		hand := h[o.seat] | o.later | core.SetOf(o.card)
		led := core.NoCard
		if o.trick.N > 0 {
			led = o.trick.Cards[0]
		}
		legal := core.Legal(hand, led, v.Trump)
		n := legal.Len()
		if n < 2 || !legal.Has(o.card) {
			continue
		}
		ov := core.View{Seat: o.seat, Rules: v.Rules, Phase: core.PhasePlay, Dealer: v.Dealer, Forehand: v.Forehand,
			Trump: v.Trump, TrumpTeam: v.TrumpTeam, ToMove: o.seat, Hand: hand, Legal: legal,
			Trick: o.trick, Tricks: v.Tricks[:o.tricks]}
		if easyCard(ov, 0) == o.card {
			p *= playLikely
		} else {
			p *= (1 - playLikely) / float64(n-1)
		}
	}
	return p
}

// trumpLR is how much likelier forehand is to have named trump holding k trumps (of its six
// cards) than a random suit's k: simulated with the Easy choice from the first packet, 200,000
// deals; [1] is for clubs (nine trumps). No trump at all is possible only for odd choosers.
var trumpLR = [2][7]float64{
	{0.05, 0.304, 0.899, 1.690, 2.587, 3.558, 4.902},
	{0.05, 0.289, 0.802, 1.425, 2.060, 2.552, 2.562},
}

// likelihood is the weight of a deal from forehand's trump choice, when that is inferred.
func (w *worldSource) likelihood(h [4]core.CardSet) float64 {
	if !w.infer {
		return 1
	}
	fh := w.v.Forehand
	x := w.v.Trump
	k := min(((h[fh] | w.playedBy) & core.Trumps(x)).Len(), 6)
	if x == core.Clubs {
		return trumpLR[1][k]
	}
	return trumpLR[0][k]
}

// run solves worlds 0, 1, ... on the searcher's threads until the deal cap, the node cap, the
// deadline or stop says enough; eval solves one world with a solver and reports false if it was
// cut short. merge is called under a lock with each finished world's result and returns true to
// stop early. cut reports that the deadline or the context ended it before the caps did: its
// result then depends on the machine's speed.
//
// The threads finish worlds in any order, but merge sees them in their order and the node cap
// counts them in it: a search the caps end (not the clock) solves and sums the same worlds, to the
// last bit, whatever the threads and however busy the machine (TestNodeBoundedSearchIsExact).
// When the caps end it, the worlds still being solved are all later ones, and are dropped.
func (s *searcher) run(ctx context.Context, until time.Time, ws *worldSource,
	eval func(sv *dd.Solver, hands [4]core.CardSet, model uint8) ([]int, bool), merge func([]int, float64) bool) (done int, cut bool) {
	var next atomic.Int64
	var stop, timeUp atomic.Bool
	var mu sync.Mutex
	var nodes uint64
	type solved struct {
		res    []int
		weight float64
		nodes  uint64
	}
	waiting := map[int]solved{} // worlds finished before an earlier one, by index
	late := func() bool {
		if ctx.Err() != nil || time.Now().After(until) {
			timeUp.Store(true)
			return true
		}
		return false
	}
	stopFn := func() bool { return stop.Load() || late() }
	worker := func(sv *dd.Solver) {
		sv.SetStop(stopFn)
		for !stopFn() {
			i := int(next.Add(1) - 1)
			if i >= ws.max {
				return
			}
			hands, weight := ws.world(i)
			before := sv.Nodes()
			res, ok := eval(sv, hands, ws.modelled(i))
			if !ok {
				return
			}
			mu.Lock()
			waiting[i] = solved{res, weight, sv.Nodes() - before}
			for !stop.Load() {
				w, ok := waiting[done]
				if !ok {
					break
				}
				delete(waiting, done)
				done++
				nodes += w.nodes
				if merge(w.res, w.weight) || s.nodes > 0 && nodes >= s.nodes {
					stop.Store(true)
				}
			}
			mu.Unlock()
		}
	}
	if s.threads == 1 {
		worker(s.solvers[0])
	} else {
		var wg sync.WaitGroup
		for _, sv := range s.solvers {
			wg.Go(func() { worker(sv) })
		}
		wg.Wait()
	}
	return done, timeUp.Load() && !stop.Load()
}

// class says how a team with `have` points and `got` more points from here ends: win, draw, loss.
func class(have, got int) int {
	switch t := have + got; {
	case t > 20:
		return classWin
	case t == 20:
		return classDraw
	}
	return classLoss
}

// cardStats are what the solved deals say of one card: the weight of the deals it wins, draws
// and loses, and (solving exactly) the weighted card points the team ends with.
type cardStats struct {
	class  [3]float64
	points float64
}

// cardSearch solves the deals of ws for each candidate card. Exactly, it finds every deal's
// points (which give the class); otherwise only the class, which is much cheaper. It gives the
// stats per card, the total weight, the deals solved and whether the time cut it (see run).
func (s *searcher) cardSearch(ctx context.Context, until time.Time, v core.View, ws *worldSource,
	cands []core.Card, exact, stopEarly bool) ([]cardStats, float64, int, bool) {
	team := v.Seat.Team()
	have := v.Points[team]
	pos := dd.Position{Trump: v.Trump, Leader: v.Trick.Leader, Trick: v.Trick.Played()}
	stats := make([]cardStats, len(cands))
	n, wsum := 0, 0.0
	allSame := true
	eval := func(sv *dd.Solver, hands [4]core.CardSet, model uint8) ([]int, bool) {
		p := pos
		p.Hands = hands
		sv.Reset(p, team)
		s.setModel(sv, model)
		out := make([]int, len(cands))
		for i, c := range cands {
			gain, doneT, saved := sv.Play(c)
			if exact {
				out[i] = have + gain + sv.Value()
			} else {
				need := 21 - have - gain
				out[i] = 19 + class(have+gain, sv.Search(need-2, need)) // 19, 20, 21: the class
			}
			sv.Undo(c, doneT, saved)
			if sv.Stopped() {
				return nil, false
			}
		}
		return out, true
	}
	merge := func(res []int, w float64) bool {
		n++
		wsum += w
		for i, r := range res {
			stats[i].class[class(0, r)] += w
			stats[i].points += w * float64(r)
			if class(0, r) != class(0, res[0]) {
				allSame = false
			}
		}
		// A deal where every card gives the same result teaches nothing: once many random
		// deals agree, stop (listed deals are few: solve them all).
		return stopEarly && allSame && n >= 24 && ws.all == nil
	}
	_, cut := s.run(ctx, until, ws, eval, merge)
	return stats, wsum, n, cut
}

// search measures each candidate card: without strategy fusion at the end of a game (endgame.go,
// not for the previous sampler), else by solving each deal open-handed (cardSearch).
func (s *searcher) search(ctx context.Context, until time.Time, v core.View, ws *worldSource,
	cands []core.Card, exact, stopEarly bool) ([]cardStats, float64, int, bool) {
	if useEndgame && ws.all != nil && !s.previous && v.Hand.Len() == endgameHand {
		return s.endgameStats(ctx, until, v, ws, cands)
	}
	return s.cardSearch(ctx, until, v, ws, cands, exact, stopEarly)
}

// Strong's leads in tricks 2 to 4 (where BenchmarkDivergence found its cards worth less than
// Normal's) as the search makes them today: four more changes were tried and not kept, measured
// deal by deal with the exact paired duel (GOMAXPROCS=1 duel -a strong -b normal -nodes-per-ms
// 12000, -pairs for this version and -against for the change; the change in Strong's game win
// share, 95% paired interval):
//   - playing Normal's lead (its search on a fifth of the time and nodes, Strong's on the rest)
//     when Strong's search finds it within 0.03 of a game of its best: -0.0112 ± 0.0127 (200
//     deals, seed 7401; 2 deals better, 7 worse);
//   - solving them for the points too (the sampled deals exactly, ties in worth broken by
//     points): +0.0112 ± 0.0127 (200 deals, seed 7401), then on fresh deals -0.0025 ± 0.0095
//     (400, seed 7402);
//   - no early stop when the first 24 deals agree: +0.0006 ± 0.0012 (400, seed 7402: one deal
//     played otherwise);
//   - the inference's weights squared, trusting it more for them: +0.0081 ± 0.0135 (400, seed
//     7402), then on fresh deals -0.0056 ± 0.0157 (400, seed 7404).
// This version on those deals: 0.5100 ± 0.0227, 0.5188 ± 0.0175 and 0.5200 ± 0.0200.

// candidates are the legal cards of the view that the search measures: cards equivalent in every
// deal (same hand, same points, nothing live between them) are solved once, the highest standing
// for them all; the view alone decides equivalence.
func candidates(v core.View) []core.Card { return dd.Distinct(v.Trump, v.Legal, liveCards(v)).Cards() }

// liveCards are the cards still in play in the view's game: in hands, the view's own and the
// unseen ones, and in the trick so far.
func liveCards(v core.View) core.CardSet {
	return v.Hand | v.Unseen() | core.SetOf(v.Trick.Played()...)
}

// decideCard chooses a card (or the card to play after announcing) for the view, with the
// share of deals won, drawn and lost with it, searching until the time until; ok is false when
// not one deal was solved in time.
func (s *searcher) decideCard(ctx context.Context, until time.Time, v core.View) (card core.Card, win, draw, loss float64, ok bool) {
	me := v.Seat
	team := me.Team()
	have := v.Points[team]
	cands := candidates(v)
	if len(cands) == 1 && len(v.Calls) == 0 {
		return cands[0], 0, 0, 0, true
	}
	// Once the game is decided on points, only the stripe for taking every trick is still open.
	if Decided(v) {
		c, ok := s.decidedCard(ctx, until, v, cands)
		if have > 20 {
			return c, 1, 0, 0, ok
		}
		return c, 0, 0, 1, ok
	}
	ws := s.source(v)
	exact := ws.all != nil
	stats, wsum, n, _ := s.search(ctx, until, v, ws, cands, exact, true)
	if n == 0 || wsum == 0 {
		return core.NoCard, 0, 0, 0, false
	}
	u := utilities(v, v.Stake, false)
	best := -1
	var bestScore, bestPts float64
	fallback := easyCard(v, s.seed)
	for i, c := range cands {
		sc := stats[i].class[0]*u[0] + stats[i].class[1]*u[1] + stats[i].class[2]*u[2]
		pts := stats[i].points
		const eps = 1e-9
		switch {
		case best < 0, sc > bestScore+eps*wsum:
		case sc < bestScore-eps*wsum:
			continue
		case exact && pts > bestPts+eps: // equal worth: more points
		case exact && pts < bestPts-eps:
			continue
		case c != fallback:
			continue
		}
		best, bestScore, bestPts = i, sc, pts
	}
	pc := stats[best].class
	return cands[best], pc[classWin] / wsum, pc[classDraw] / wsum, pc[classLoss] / wsum, true
}

// Decided reports whether the view's game is decided on points already: a team has more than
// 20 of the 40. (A team that can no longer reach 20 is the same thing: the others have over 20.)
func Decided(v core.View) bool { return v.Points[0] > 20 || v.Points[1] > 20 }

// decidedCard plays a game already decided on points. Left to play for: the stripe for taking
// every trick (when the rules give it), the winners keeping the losers without a trick and the
// losers taking one; else the points, on the deals sampled as usual.
func (s *searcher) decidedCard(ctx context.Context, until time.Time, v core.View, cands []core.Card) (core.Card, bool) {
	team := v.Seat.Team()
	have := v.Points[team]
	sweeping := v.Rules.AllTricksBonus && ((have > 20 && v.TricksWon[team.Other()] == 0) || (have <= 20 && v.TricksWon[team] == 0))
	ws := s.source(v)
	pos := dd.Position{Trump: v.Trump, Leader: v.Trick.Leader, Trick: v.Trick.Played()}
	score := make([]float64, len(cands))
	sweeper := team
	if have <= 20 {
		sweeper = team.Other()
	}
	eval := func(sv *dd.Solver, hands [4]core.CardSet, model uint8) ([]int, bool) {
		p := pos
		p.Hands = hands
		sv.Reset(p, team)
		s.setModel(sv, model)
		out := make([]int, len(cands))
		for i, c := range cands {
			gain, doneT, saved := sv.Play(c)
			if sweeping {
				// Worth 100 for keeping (or breaking) the sweep, then the points.
				swept := true
				if doneT && sv.ToMove().Team() != sweeper {
					swept = false
				} else {
					nodes := sweepNodes
					swept = sweep(sv, sweeper, &nodes)
				}
				if swept == (sweeper == team) {
					out[i] = 100
				}
				if !sv.Stopped() {
					out[i] += gain + sv.Value()
				}
			} else {
				out[i] = gain + sv.Value()
			}
			sv.Undo(c, doneT, saved)
			if sv.Stopped() {
				return nil, false
			}
		}
		return out, true
	}
	n := 0
	merge := func(res []int, w float64) bool {
		n++
		for i, r := range res {
			score[i] += w * float64(r)
		}
		return false
	}
	s.run(ctx, until, ws, eval, merge)
	if n == 0 {
		return core.NoCard, false
	}
	best := -1
	fallback := easyCard(v, s.seed)
	for i, c := range cands {
		if best < 0 || score[i] > score[best] || (score[i] == score[best] && c == fallback) {
			best = i
		}
	}
	return cands[best], true
}

// sweepNodes bounds one sweep search; past it the sweep counts as not proven.
const sweepNodes = 100000

// sweepPoll is how many sweep positions pass between two polls of the solver's stop.
const sweepPoll = 1024

// sweep reports whether team can take every trick left from the solver's position, whatever the
// others do, searching at most *nodes positions (false when it runs out, or when the solver's
// stop says so: it is polled as often as the solver's own search polls it, so that a decision's
// last deal does not run past its deadline by a whole sweep).
func sweep(sv *dd.Solver, team core.Team, nodes *int) bool {
	if sv.Stopped() {
		return false
	}
	moves := sv.Moves()
	if moves.Empty() {
		return true
	}
	if *nodes--; *nodes < 0 || *nodes%sweepPoll == 0 && sv.Poll() {
		return false
	}
	mine := sv.ToMove().Team() == team
	for _, c := range moves.Cards() {
		_, done, saved := sv.Play(c)
		ok := !(done && sv.ToMove().Team() != team)
		if ok {
			ok = sweep(sv, team, nodes)
		}
		sv.Undo(c, done, saved)
		if ok == mine {
			return mine // the team found a way, or the others found a trick
		}
	}
	return !mine
}

// decideTrump names trump from the first packet with the trump table: the suit whose chances to
// win and draw are worth most on the board (see utilities). A packet the table lacks (it has
// every one) falls back on Easy's rule.
func (s *searcher) decideTrump(_ context.Context, v core.View) core.Suit {
	best, bestV := easyTrump(v.Hand), -1e18
	for _, x := range core.Suits {
		val, ok := trumpWorth(v, x)
		if ok && val > bestV {
			best, bestV = x, val
		}
	}
	return best
}

// trumpWorth is what naming x is worth to forehand's team from the trump table, at stake 1.
func trumpWorth(v core.View, x core.Suit) (float64, bool) {
	o, ok := Odds(v.Hand, x)
	if !ok || v.Hand.Len() != 3 {
		return 0, false
	}
	tv := v
	tv.TrumpTeam = v.Seat.Team()
	u := utilities(tv, 1, false)
	win, draw := float64(o.Win)/1000, float64(o.Draw)/1000
	return win*u[classWin] + draw*u[classDraw] + (1-win-draw)*u[classLoss], true
}

package research

import (
	"context"
	"errors"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kontermatt/kontermatt/core/robot"
	"github.com/kontermatt/kontermatt/core/robot/robottest"
	"github.com/kontermatt/kontermatt/internal/cpuclock"
)

// The win share of the pairs and its interval; the percentiles the timing lines print.
func TestDuelResultStatistics(t *testing.T) {
	r := &DuelResult{Pairs: [][2]GameOutcome{{{Score: 1}, {Score: 1}}, {{Score: 0}, {Score: 0.5}}}}
	share, half := r.WinShare()
	if share != 0.625 || half <= 0 {
		t.Errorf("share %v ± %v, want 0.625 and a positive interval", share, half)
	}
	if p := percentile([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 0.95); p != 10 {
		t.Errorf("p95 = %v", p)
	}
	if p := percentile([]float64{1, 2, 3, 4}, 0.5); p != 2 {
		t.Errorf("p50 = %v", p)
	}
}

// Beside each decision's wall-clock time the duel has its thread's running time (on Linux), which
// a busy machine's waits do not lengthen: never longer than the wall clock's. Where the thread's
// clock cannot be read the duel has none, rather than made-up ones.
func TestDuelTimesRunning(t *testing.T) {
	_, measured := cpuclock.Thread()
	res, err := Duel(t.Context(), DuelConfig{A: robot.Normal, B: robot.Easy, Deals: 2, Seed: 5, Options: robot.Options{Worlds: 4}})
	if err != nil {
		t.Fatal(err)
	}
	for side := range res.Times {
		for k := range res.Times[side] {
			if !measured {
				if len(res.Ran[side][k]) != 0 {
					t.Errorf("side %d %s: %d running times where the thread's clock cannot be read", side, kindNames[k], len(res.Ran[side][k]))
				}
				continue
			}
			if len(res.Ran[side][k]) != len(res.Times[side][k]) {
				t.Fatalf("side %d %s: %d running times for %d decisions", side, kindNames[k], len(res.Ran[side][k]), len(res.Times[side][k]))
			}
			for i, r := range res.Ran[side][k] {
				if r > res.Times[side][k][i]+0.01 {
					t.Errorf("side %d %s decision %d ran %v ms in %v ms", side, kindNames[k], i, r, res.Times[side][k][i])
				}
			}
		}
	}
	var out strings.Builder
	res.Print(&out)
	if !strings.Contains(out.String(), "ran-max") {
		t.Errorf("the report has no running times:\n%s", out.String())
	}
}

// A duel bounded by solver nodes plays the same games twice on the same seed, though the second
// run plays two games at once with three search threads per decision on a machine whose every
// core is busy: no clock cuts a node-bounded decision, and the search counts its deals in their
// order. It failed before the search merged its deals in their order: in 3 runs of 3 a deal of
// the 30 ended otherwise (deal 2: A's card-point margin -34 where it had been -40).
func TestDuelIsTheSameOnABusyMachine(t *testing.T) {
	cfg := DuelConfig{A: robot.Strong, B: robot.Easy, Deals: 30, Seed: 11, Workers: 1, NodesPerMs: 100, Options: robot.Options{Threads: 1}}
	alone, err := Duel(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	busy := cfg
	busy.Workers, busy.Options.Threads = 2, 3
	stop := robottest.Busy(2 * runtime.GOMAXPROCS(0))
	again, err := Duel(t.Context(), busy)
	stop()
	if err != nil {
		t.Fatal(err)
	}
	for i := range alone.Pairs {
		if again.Pairs[i] != alone.Pairs[i] {
			t.Errorf("seed %d deal %d: busy %+v, alone %+v", cfg.Seed, i, again.Pairs[i], alone.Pairs[i])
		}
	}
	// The paired comparison of the two runs says so: exactly 0 on every deal.
	c, err := again.Compare(alone.Pairs)
	if err != nil {
		t.Fatal(err)
	}
	if c.Score.Mean != 0 || c.Score.SE != 0 || c.Score.Same != cfg.Deals || c.Points.Mean != 0 || c.Points.Same != cfg.Deals || c.Unpaired <= 0 {
		t.Errorf("the same players twice: %+v, want 0 ± 0 on every deal", c)
	}
}

// The paired difference per deal: A's side's result minus B's in the same seats on the same cards.
func TestDuelDifference(t *testing.T) {
	r := &DuelResult{Pairs: [][2]GameOutcome{
		{{Score: 1, Margin: 30}, {Score: 1, Margin: 10}},   // A wins in both seats: +1, +40
		{{Score: 1, Margin: 10}, {Score: 0, Margin: -10}},  // the cards decide: 0, 0
		{{Score: 0.5, Margin: 0}, {Score: 0, Margin: -20}}, // -0.5, -20
		{{Score: 0, Margin: -30}, {Score: 1, Margin: 30}},  // 0, 0
	}}
	s, m := r.Difference()
	if s.Mean != 0.125 || s.Better != 1 || s.Same != 2 || s.Worse != 1 || s.N != 4 {
		t.Errorf("score %+v, want mean 0.125, 1 better, 2 same, 1 worse", s)
	}
	// SE of {1, 0, -0.5, 0}: sample sd sqrt(((0.875)²+2(0.125)²+(0.625)²)/3) over sqrt(4).
	if want := math.Sqrt((0.875*0.875+2*0.125*0.125+0.625*0.625)/3) / 2; math.Abs(s.SE-want) > 1e-12 {
		t.Errorf("score SE %v, want %v", s.SE, want)
	}
	if m.Mean != 5 || m.Better != 1 || m.Worse != 1 {
		t.Errorf("points %+v, want mean 5", m)
	}
}

// A pairs file reads back as it was written, and only for the same deals.
func TestPairsFile(t *testing.T) {
	cfg := DuelConfig{A: robot.Strong, B: robot.Normal, Seed: 9}
	r := &DuelResult{Config: cfg, Pairs: [][2]GameOutcome{
		{{Score: 1, Margin: 30, Stripes: 2}, {Score: 0.5, Margin: 0, Stripes: 0}},
		{{Score: 0, Margin: -12, Stripes: -1}, {Score: 1, Margin: 40, Stripes: 4}},
	}}
	var buf strings.Builder
	if err := r.WritePairs(&buf); err != nil {
		t.Fatal(err)
	}
	got, err := ReadPairs(strings.NewReader(buf.String()), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, r.Pairs) {
		t.Errorf("read %+v, wrote %+v", got, r.Pairs)
	}
	other := cfg
	other.Seed = 10
	if _, err := ReadPairs(strings.NewReader(buf.String()), other); !errors.Is(err, ErrOtherDeals) {
		t.Errorf("another seed's duel read the file: %v", err)
	}
	if _, err := ReadPairs(strings.NewReader("deal 1 2\n"), cfg); err == nil {
		t.Errorf("a file without the header was read")
	}
	if _, err := r.Compare(got[:1]); !errors.Is(err, ErrOtherDeals) {
		t.Errorf("compared with fewer deals: %v", err)
	}
}

// Another player for A on the same deals (the same players twice compare as exactly 0:
// TestDuelIsTheSameOnABusyMachine) differs on some deals only, and the paired interval of the
// difference is narrower than the one the two shares give.
func TestDuelCompare(t *testing.T) {
	cfg := DuelConfig{A: robot.Strong, B: robot.Easy, Deals: 30, Seed: 11, Workers: 1, NodesPerMs: 100, Options: robot.Options{Threads: 1}}
	first, err := Duel(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	// At most 6 sampled deals per decision: another version of Strong, the same on many deals.
	cfg.Options.Worlds = 6
	other, err := Duel(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	c, err := other.Compare(first.Pairs)
	if err != nil {
		t.Fatal(err)
	}
	if c.Score.Same == cfg.Deals {
		t.Fatalf("another version played every deal alike: %+v", c)
	}
	if c.Score.SE >= c.Unpaired {
		t.Errorf("paired SE %v not below the shares' %v", c.Score.SE, c.Unpaired)
	}
	var out strings.Builder
	c.Print(&out)
	if !strings.Contains(out.String(), "paired") {
		t.Errorf("comparison report:\n%s", out.String())
	}
}

// With A's cards open, each of them is the open-card solver's best on the true deal (the duel's
// own analysis finds every one optimal in points), and A does at least as well as its level on
// the same deals: the measurement's ceiling is above what it bounds.
func TestOpenCardsAreTheCeiling(t *testing.T) {
	cfg := DuelConfig{A: robot.Normal, B: robot.Easy, Deals: 12, Seed: 3, Workers: 1, NodesPerMs: 100, Analyze: true,
		Options: robot.Options{Threads: 1}}
	plain, err := Duel(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.AOpenFrom = 1
	open, err := Duel(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if a := open.Analysis; a.Cards == 0 || a.CardOptimal != a.Cards {
		t.Errorf("open cards: %d of %d optimal in points", a.CardOptimal, a.Cards)
	}
	if a := plain.Analysis; a.CardOptimal == a.Cards {
		t.Errorf("Normal's cards were all optimal too (%d): the test tells nothing apart", a.Cards)
	}
	pm, _ := plain.pairMeans(func(o GameOutcome) float64 { return float64(o.Margin) })
	om, _ := open.pairMeans(func(o GameOutcome) float64 { return float64(o.Margin) })
	if om < pm {
		t.Errorf("card-point margin with open cards %+.2f, below Normal's own %+.2f", om, pm)
	}
	var out strings.Builder
	open.Print(&out)
	if !strings.Contains(out.String(), "A's cards with every hand open") {
		t.Errorf("the report does not say A's cards were open:\n%s", out.String())
	}
	// Open from the fourth trick: the first three tricks are the level's, the rest the solver's.
	cfg.AOpenFrom = 4
	late, err := Duel(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if l, o, p := late.Analysis, open.Analysis, plain.Analysis; l.CardOptimal == o.CardOptimal && l.Cards == o.Cards ||
		l.CardOptimal-l.Cards <= p.CardOptimal-p.Cards {
		t.Errorf("open from trick 4: %d of %d cards optimal; open throughout %d of %d, Normal's own %d of %d",
			l.CardOptimal, l.Cards, o.CardOptimal, o.Cards, p.CardOptimal, p.Cards)
	}
	out.Reset()
	late.Print(&out)
	if !strings.Contains(out.String(), "open from trick 4") {
		t.Errorf("the report does not say from which trick A's cards were open:\n%s", out.String())
	}
}

// AScale multiplies A's node cap and its sampled deals, the level's default cap when none is set.
func TestAScaleMultipliesTheSearch(t *testing.T) {
	cfg := DuelConfig{A: robot.Strong, B: robot.Normal, NodesPerMs: 100, AScale: 4}
	o := cfg.scaled(cfg.optionsFor(robot.Strong), robot.Strong)
	if want := uint64(100 * 100 * 4); o.Nodes != want {
		t.Errorf("nodes %d, want %d", o.Nodes, want)
	}
	if want := 4 * robot.DefaultWorlds(robot.Strong); o.Worlds != want || want == 0 {
		t.Errorf("worlds %d, want %d", o.Worlds, want)
	}
	cfg.AScale = 1
	if o := cfg.scaled(cfg.optionsFor(robot.Strong), robot.Strong); o.Nodes != 100*100 || o.Worlds != 0 {
		t.Errorf("unscaled: %+v", o)
	}
}

// A duel whose context ends stops between two moves: it begins no other deal, gives the
// context's error, and does not play on to the end with the players' hurried fallback moves.
func TestDuelStopsWhenItsContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var played atomic.Int32
	cfg := DuelConfig{A: robot.Strong, B: robot.Easy, Deals: 40, Seed: 11, Workers: 1, NodesPerMs: 100,
		Options: robot.Options{Threads: 1}, Done: func() {
			if played.Add(1) == 1 {
				cancel()
			}
		}}
	res, err := Duel(ctx, cfg)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
	if n := played.Load(); n != 1 {
		t.Errorf("%d deals reported played after the first one ended the duel, want 1", n)
	}
	// A's decisions: one deal's two games have at most 2 x (12 cards, a trump, 2 announcements).
	decisions := 0
	for _, ts := range res.Times[0] {
		decisions += len(ts)
	}
	if decisions > 30 {
		t.Errorf("A decided %d times: the duel played on after its context ended", decisions)
	}
	if _, err := MatchDuel(ctx, DuelConfig{A: robot.Normal, B: robot.Easy, Matches: 3, Stripes: 3, Seed: 4, Options: robot.Options{Worlds: 4}}); !errors.Is(err, context.Canceled) {
		t.Errorf("a match duel begun with an ended context: error %v, want context.Canceled", err)
	}
}

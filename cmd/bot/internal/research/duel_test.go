package research

import (
	"runtime"
	"strings"
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
	res, err := Duel(DuelConfig{A: robot.Normal, B: robot.Easy, Deals: 2, Seed: 5, Options: robot.Options{Worlds: 4}})
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
	alone, err := Duel(cfg)
	if err != nil {
		t.Fatal(err)
	}
	busy := cfg
	busy.Workers, busy.Options.Threads = 2, 3
	stop := robottest.Busy(2 * runtime.GOMAXPROCS(0))
	again, err := Duel(busy)
	stop()
	if err != nil {
		t.Fatal(err)
	}
	for i := range alone.Pairs {
		if again.Pairs[i] != alone.Pairs[i] {
			t.Errorf("seed %d deal %d: busy %+v, alone %+v", cfg.Seed, i, again.Pairs[i], alone.Pairs[i])
		}
	}
}

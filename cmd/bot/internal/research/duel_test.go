package research

import "testing"

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

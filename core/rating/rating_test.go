package rating

import (
	"math"
	"testing"
)

// The published values of OpenSkill's BradleyTerryFull with its defaults
// (openskill.py, tests/models/test_bradley_terry_full.py, before tau was added).
func TestPublishedValues(t *testing.T) {
	r := Default.New()
	one, two, three := []Rating{r}, []Rating{r, r}, []Rating{r, r, r}
	for _, tc := range []struct {
		name  string
		teams [][]Rating
		want  [][]Rating
	}{
		{"2 players", [][]Rating{one, one}, [][]Rating{
			{{27.63523138347365, 8.065506316323548}}, {{22.36476861652635, 8.065506316323548}}}},
		{"3 players", [][]Rating{one, one, one}, [][]Rating{
			{{30.2704627669473, 7.788474807872566}}, {{25.0, 7.788474807872566}}, {{19.7295372330527, 7.788474807872566}}}},
		{"5 players", [][]Rating{one, one, one, one, one}, [][]Rating{
			{{35.5409255338946, 7.202515895247076}}, {{30.2704627669473, 7.202515895247076}}, {{25.0, 7.202515895247076}},
			{{19.729537233052703, 7.202515895247076}}, {{14.4590744661054, 7.202515895247076}}}},
		{"3 different sized teams", [][]Rating{three, one, two}, [][]Rating{
			{{25.992743915179297, 8.19709997489984}, {25.992743915179297, 8.19709997489984}, {25.992743915179297, 8.19709997489984}},
			{{28.48909130001799, 8.220848339985736}},
			{{20.518164784802718, 8.127515465304823}, {20.518164784802718, 8.127515465304823}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ranks := make([]int, len(tc.teams))
			for i := range ranks {
				ranks[i] = i
			}
			got := Default.Rate(tc.teams, ranks)
			for i := range tc.want {
				for j := range tc.want[i] {
					if g, w := got[i][j], tc.want[i][j]; math.Abs(g.Mu-w.Mu) > 1e-9 || math.Abs(g.Sigma-w.Sigma) > 1e-9 {
						t.Errorf("team %d player %d: %v, want %v", i, j, g, w)
					}
				}
			}
		})
	}
}

// Partners share a win, the less known one moving more; a draw between equals moves no mean; the
// ordinal of a new player is 0.
func TestPartners(t *testing.T) {
	known := Rating{30, 2}
	fresh := Default.New()
	got := Default.Rate([][]Rating{{known, fresh}, {fresh, fresh}}, []int{0, 1})
	if !(got[0][1].Mu-fresh.Mu > got[0][0].Mu-known.Mu && got[0][0].Mu > known.Mu) {
		t.Errorf("winners: %v (were %v, %v)", got[0], known, fresh)
	}
	if got[1][0].Mu >= fresh.Mu || got[1][0] != got[1][1] {
		t.Errorf("losers: %v", got[1])
	}
	d := Default.Rate([][]Rating{{fresh, fresh}, {fresh, fresh}}, []int{0, 0})
	if d[0][0].Mu != 25 || d[0][0].Sigma >= fresh.Sigma {
		t.Errorf("a draw between equals: %v", d[0][0])
	}
	if o := fresh.Ordinal(); math.Abs(o) > 1e-12 {
		t.Errorf("a new player's ordinal is %v", o)
	}
	if w := Default.WinChance([]Rating{known, fresh}, []Rating{fresh, fresh}); w <= 0.5 || w >= 1 {
		t.Errorf("win chance %v", w)
	}
	// Tau keeps a sigma from shrinking for ever.
	m := Default
	m.Tau = Default.Sigma / 100
	r := m.New()
	for range 500 {
		r = m.Rate([][]Rating{{r}, {m.New()}}, []int{0, 1})[0][0]
	}
	if r.Sigma < m.Tau {
		t.Errorf("sigma fell to %v under tau %v", r.Sigma, m.Tau)
	}
}

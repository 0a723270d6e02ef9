//go:build !race

package robot

import "testing"

// The play model predicts the cards of Normal and Strong on games it was not fitted on (seeds 5,
// 7 and 9, twenty games each) better than its first six features did alone with their own fitted
// weights: -0.890 per card against -0.936 when it was fitted. Playing the sixty games (24 deals
// solved per decision) takes 11 s, and three minutes under the race detector: so this file is
// !race, and .ci/run runs it without the detector beside TestDecisionsKeepTheCap.
func TestPlayModelPredictsTheReadingKind(t *testing.T) {
	var plays []choiceSample
	for _, seed := range []uint64{5, 7, 9} {
		plays = append(plays, readingPlays(t, selfPlay(t, seed, 20, []Level{Normal, Strong}))...)
	}
	six := []float64{0.988, 1.17, 0.576, -0.454, -0.558, -0.392} // the weights the six had alone
	before := meanLogLikelihood(plays, append(six, make([]float64, nPlayFeatures-len(six))...))
	now := meanLogLikelihood(plays, playWeights[:])
	t.Logf("%d cards: mean log-likelihood %.4f per card, %.4f with the first six features alone", len(plays), now, before)
	if len(plays) < 600 {
		t.Fatalf("only %d cards measured", len(plays))
	}
	if now < before+0.02 {
		t.Errorf("the play model's mean log-likelihood is %.4f per card, the first six features' alone %.4f", now, before)
	}
}

// Package rating is the Weng-Lin Bayesian rating for teams ("A Bayesian Approximation Method for
// Online Ranking", Weng and Lin, JMLR 2011), with the Bradley-Terry full-pairing model OpenSkill
// uses: every player's skill is a normal distribution (a mean and an uncertainty), a team's is
// the sum of its players', and a game's result moves every player of a team in proportion to the
// share of the team's uncertainty that is theirs. Partners therefore share a win or a loss, the
// less known one moving more. It matches OpenSkill's BradleyTerryFull with its defaults (mu 25,
// sigma 25/3, beta 25/6, kappa 0.0001, gamma sigma/c), tau aside, which is an option here.
package rating

import "math"

// Rating is a player's skill: Mu the mean, Sigma the uncertainty.
type Rating struct {
	Mu, Sigma float64
}

// Ordinal is the skill the player has with 99.7% confidence at least: Mu - 3·Sigma. It is what a
// table ranks by, so a new player starts at 0 and climbs as they are known.
func (r Rating) Ordinal() float64 { return r.Mu - 3*r.Sigma }

// Model holds the model's parameters.
type Model struct {
	Mu, Sigma float64 // a new player's rating
	Beta      float64 // the spread of a single performance around the skill
	Kappa     float64 // the least share of its variance a sigma keeps in one update
	// Tau is added to every sigma before an update (as variance), so that ratings keep moving when
	// a player's skill does; 0 leaves the published model as it is.
	Tau float64
}

// Default is the model with OpenSkill's defaults and no tau.
var Default = Model{Mu: 25, Sigma: 25.0 / 3, Beta: 25.0 / 6, Kappa: 0.0001}

// New is a new player's rating.
func (m Model) New() Rating { return Rating{m.Mu, m.Sigma} }

// Rate updates the ratings of the players of teams that finished in the given ranks (0 is best;
// equal ranks are a draw). It gives the new ratings, team by team, in the same shape.
func (m Model) Rate(teams [][]Rating, ranks []int) [][]Rating {
	type team struct{ mu, sigmaSq float64 }
	ts := make([]team, len(teams))
	for i, players := range teams {
		for _, p := range players {
			ts[i].mu += p.Mu
			ts[i].sigmaSq += p.Sigma*p.Sigma + m.Tau*m.Tau
		}
	}
	betaSq := m.Beta * m.Beta
	out := make([][]Rating, len(teams))
	for i, ti := range ts {
		var omega, delta float64
		for q, tq := range ts {
			if q == i {
				continue
			}
			c := math.Sqrt(ti.sigmaSq + tq.sigmaSq + 2*betaSq)
			p := 1 / (1 + math.Exp((tq.mu-ti.mu)/c)) // the chance that i beats q
			var s float64                            // what happened: 1 won, ½ drew, 0 lost
			switch {
			case ranks[q] > ranks[i]:
				s = 1
			case ranks[q] == ranks[i]:
				s = 0.5
			}
			gamma := math.Sqrt(ti.sigmaSq) / c
			omega += ti.sigmaSq / c * (s - p)
			delta += gamma * ti.sigmaSq / (c * c) * p * (1 - p)
		}
		out[i] = make([]Rating, len(teams[i]))
		for j, pl := range teams[i] {
			sigmaSq := pl.Sigma*pl.Sigma + m.Tau*m.Tau
			share := sigmaSq / ti.sigmaSq
			out[i][j] = Rating{
				Mu:    pl.Mu + share*omega,
				Sigma: math.Sqrt(sigmaSq * math.Max(1-share*delta, m.Kappa)),
			}
		}
	}
	return out
}

// WinChance is the model's chance that team a beats team b.
func (m Model) WinChance(a, b []Rating) float64 {
	var muA, muB, sa, sb float64
	for _, p := range a {
		muA += p.Mu
		sa += p.Sigma * p.Sigma
	}
	for _, p := range b {
		muB += p.Mu
		sb += p.Sigma * p.Sigma
	}
	c := math.Sqrt(sa + sb + 2*m.Beta*m.Beta)
	return 1 / (1 + math.Exp((muB-muA)/c))
}

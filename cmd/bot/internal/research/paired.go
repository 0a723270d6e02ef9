package research

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Paired statistics. Every deal of a duel is played twice, A in team A and then B in team A (A in
// team B): the deal's cards and seats are the same, so the difference between the two is what A's
// side makes of the deal, the cards' luck taken out. And the players are deterministic given
// (seed, view): two versions of a player on the same seed play the same games until the first
// decision where they differ, so the difference of their per-deal results, deal by deal, has a
// far smaller spread than either share (most deals give exactly the same result twice).

// Paired is a per-deal statistic: its mean, standard error and the deals above, at and below 0.
type Paired struct {
	Mean, SE               float64
	Better, Same, Worse, N int
}

func pairedOf(xs []float64) Paired {
	p := Paired{N: len(xs)}
	mean, half := meanCI(xs)
	p.Mean, p.SE = mean, half/1.96
	for _, x := range xs {
		switch {
		case x > 0:
			p.Better++
		case x < 0:
			p.Worse++
		default:
			p.Same++
		}
	}
	return p
}

// Difference is, per deal, A's side's result minus B's side's in the same seats on the same cards:
// in game score (A's score as team A plus A's score as team B, less 1) and in card points.
func (r *DuelResult) Difference() (score, points Paired) {
	s := make([]float64, len(r.Pairs))
	m := make([]float64, len(r.Pairs))
	for i, p := range r.Pairs {
		s[i] = p[0].Score + p[1].Score - 1
		m[i] = float64(p[0].Margin + p[1].Margin)
	}
	return pairedOf(s), pairedOf(m)
}

// pairsHeader starts a pairs file; the line after it says which duel it is, so that a
// comparison refuses another seed's deals.
const pairsHeader = "# kontermatt duel pairs: deal score-A-in-team-A score-A-in-team-B margin-A-in-team-A margin-A-in-team-B stripes-A-in-team-A stripes-A-in-team-B"

// pairsKey names the deals a pairs file holds: two runs compare only on the same deals.
func (c DuelConfig) pairsKey(deals int) string {
	return fmt.Sprintf("# seed %d deals %d", c.Seed, deals)
}

// WritePairs writes every deal's two games, one line a deal, for a later run to compare with
// (ReadPairs, Compare).
func (r *DuelResult) WritePairs(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%s\n%s A %s B %s%s\n", pairsHeader, r.Config.pairsKey(len(r.Pairs)), r.Config.A, r.Config.B, r.Config.bNote())
	for i, p := range r.Pairs {
		fmt.Fprintf(bw, "%d %g %g %d %d %d %d\n", i, p[0].Score, p[1].Score, p[0].Margin, p[1].Margin, p[0].Stripes, p[1].Stripes)
	}
	return bw.Flush()
}

// ErrOtherDeals says a pairs file holds another duel's deals (another seed or number of deals).
var ErrOtherDeals = errors.New("the pairs file holds other deals")

// ReadPairs reads a pairs file WritePairs wrote for a duel on the deals of cfg's seed.
func ReadPairs(rd io.Reader, cfg DuelConfig) ([][2]GameOutcome, error) {
	sc := bufio.NewScanner(rd)
	var pairs [][2]GameOutcome
	var key string
	for line := 1; sc.Scan(); line++ {
		t := strings.TrimSpace(sc.Text())
		switch {
		case line == 1 && t != pairsHeader:
			return nil, fmt.Errorf("line 1: not a duel pairs file")
		case line == 2:
			key = t
			continue
		case t == "" || strings.HasPrefix(t, "#"):
			continue
		}
		f := strings.Fields(t)
		if len(f) != 7 {
			return nil, fmt.Errorf("line %d: %d fields, want 7", line, len(f))
		}
		var v [7]float64
		for j, s := range f {
			x, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", line, err)
			}
			v[j] = x
		}
		if int(v[0]) != len(pairs) {
			return nil, fmt.Errorf("line %d: deal %v, want %d", line, v[0], len(pairs))
		}
		pairs = append(pairs, [2]GameOutcome{
			{Score: v[1], Margin: int(v[3]), Stripes: int(v[5])},
			{Score: v[2], Margin: int(v[4]), Stripes: int(v[6])},
		})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if want := cfg.pairsKey(len(pairs)); !strings.HasPrefix(key, want+" ") {
		return nil, fmt.Errorf("%w: %q, this duel %q", ErrOtherDeals, key, want)
	}
	return pairs, nil
}

// Comparison is one duel against an earlier one on the same deals (the same seed): per deal, this
// run's A result minus the earlier run's.
type Comparison struct {
	Score, Points Paired
	// Unpaired is the standard error the two shares' own intervals give their difference: what
	// comparing the shares alone would have to go by.
	Unpaired float64
}

// Compare compares the duel's deals with an earlier run's on the same deals.
func (r *DuelResult) Compare(before [][2]GameOutcome) (Comparison, error) {
	if len(before) != len(r.Pairs) {
		return Comparison{}, fmt.Errorf("%w: %d deals, this duel %d", ErrOtherDeals, len(before), len(r.Pairs))
	}
	s := make([]float64, len(r.Pairs))
	m := make([]float64, len(r.Pairs))
	now := make([]float64, len(r.Pairs))
	then := make([]float64, len(r.Pairs))
	for i, p := range r.Pairs {
		b := before[i]
		now[i] = (p[0].Score + p[1].Score) / 2
		then[i] = (b[0].Score + b[1].Score) / 2
		s[i] = now[i] - then[i]
		m[i] = float64(p[0].Margin+p[1].Margin-b[0].Margin-b[1].Margin) / 2
	}
	_, hNow := meanCI(now)
	_, hThen := meanCI(then)
	return Comparison{Score: pairedOf(s), Points: pairedOf(m), Unpaired: math.Hypot(hNow, hThen) / 1.96}, nil
}

// Print writes the comparison's lines.
func (c Comparison) Print(w io.Writer) {
	fmt.Fprintf(w, "against the earlier run on the same deals (this A minus that A, per deal pair):\n")
	fmt.Fprintf(w, "  game win share %+.4f ± %.4f (95%%, paired; the shares' own intervals give ± %.4f); deals better %d, same %d, worse %d\n",
		c.Score.Mean, 1.96*c.Score.SE, 1.96*c.Unpaired, c.Score.Better, c.Score.Same, c.Score.Worse)
	fmt.Fprintf(w, "  card-point margin per game %+.3f ± %.3f\n", c.Points.Mean, 1.96*c.Points.SE)
}

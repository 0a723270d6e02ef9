package robot

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/core"
)

// selfPlayGame is one game of a self-play record: the deal and every move made.
type selfPlayGame struct {
	dealer core.Seat
	hands  [4][6]core.Card
	moves  []core.Move
	levels [4]Level
}

// replay gives the game after its first k moves.
func (sp selfPlayGame) replay(t testing.TB, k int) *core.Game {
	t.Helper()
	g, err := core.NewGame(core.DefaultRules(), sp.dealer, sp.hands)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range sp.moves[:k] {
		if err := g.Apply(m); err != nil {
			t.Fatal(err)
		}
	}
	return g
}

// selfPlay plays games with the given levels in the seats (each game draws a level per seat from
// levels), search levels bounded by deals rather than time so that the record repeats.
func selfPlay(t testing.TB, seed uint64, games int, levels []Level) []selfPlayGame {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 7))
	var out []selfPlayGame
	for i := range games {
		var ps [4]Player
		var ls [4]Level
		for s := range ps {
			ls[s] = levels[r.IntN(len(levels))]
			ps[s] = NewWith(ls[s], seed*16+uint64(i*4+s), Options{Threads: 1, Budget: time.Minute, Worlds: 24})
		}
		dealer := core.Seat(r.IntN(4))
		sp := selfPlayGame{dealer: dealer, hands: core.DealHands(r, dealer), levels: ls}
		g, err := core.NewGame(core.DefaultRules(), dealer, sp.hands)
		if err != nil {
			t.Fatal(err)
		}
		for g.Phase() != core.PhaseOver {
			s := g.ToMove()
			m := ps[s].Decide(context.Background(), g.View(s))
			if err := g.Apply(m); err != nil {
				t.Fatalf("seed %d game %d: %v", seed, i, err)
			}
			sp.moves = append(sp.moves, m)
		}
		out = append(out, sp)
	}
	return out
}

// inferenceScore is how well drawn deals find the true one, summed over decisions.
type inferenceScore struct {
	decisions int
	// shareUniform and shareWeighted sum, per decision, the mean over the hidden cards of the
	// share of drawn deals that put the card in the hand that truly holds it.
	shareUniform, shareWeighted float64
	sharePrevious               float64 // the same with the previous sampler
	// logLR sums, per decision, the log-likelihood of the true deal under the inference minus
	// under uniform drawing.
	logLR float64
}

func (s inferenceScore) report() (uniform, weighted, logLR float64) {
	n := float64(max(s.decisions, 1))
	return s.shareUniform / n, s.shareWeighted / n, s.logLR / n
}

func (s inferenceScore) previous() float64 { return s.sharePrevious / float64(max(s.decisions, 1)) }

// scoreInference measures the sampler on every card decision with a choice, where the deals are
// sampled (more than lateLimit fit the view), in the records' games, drawing n deals per decision.
func scoreInference(t testing.TB, games []selfPlayGame, n int) inferenceScore {
	t.Helper()
	var sc inferenceScore
	for gi, sp := range games {
		for k, m := range sp.moves {
			if m.Kind != core.MovePlay {
				continue
			}
			g := sp.replay(t, k)
			v := g.View(m.Seat)
			if v.Legal.Len() < 2 || len(v.Tricks) == 0 && v.Trick.N == 0 {
				continue
			}
			d := newDeals(v)
			if d.Count() <= lateLimit {
				continue
			}
			var truth [4]core.CardSet
			for s := range truth {
				truth[s] = g.Hand(core.Seat(s))
			}
			in := newInference(v)
			r := rand.New(rand.NewPCG(uint64(gi), uint64(k)))
			uniform := make([][4]core.CardSet, n)
			ones := make([]float64, n)
			for i := range uniform {
				uniform[i], ones[i] = d.Sample(r), 1
			}
			drawn, counts, _ := resample(in, d, r, n)
			hidden := v.Unseen()
			for s := range d.known {
				hidden &^= d.known[s]
			}
			sc.shareUniform += trueShare(uniform, ones, truth, hidden)
			sc.shareWeighted += trueShare(drawn, counts, truth, hidden)
			prev := (&searcher{seed: uint64(gi), worlds: n}).previousSource(v)
			pd, pw := make([][4]core.CardSet, n), make([]float64, n)
			for i := range pd {
				pd[i], pw[i] = prev.world(i)
			}
			sc.sharePrevious += trueShare(pd, pw, truth, hidden)
			// log p(truth) − log(1/Count) = log w(truth) − log E_uniform[w]
			lws := make([]float64, 4*n)
			top := math.Inf(-1)
			for i := range lws {
				lws[i] = in.logWeight(d.Sample(r))
				top = max(top, lws[i])
			}
			mean := 0.0
			for _, lw := range lws {
				mean += math.Exp(lw - top)
			}
			sc.logLR += in.logWeight(truth) - top - math.Log(mean/float64(len(lws)))
			sc.decisions++
		}
	}
	return sc
}

// trueShare is the mean, over the hidden cards, of the (weighted) share of deals that give the
// card to the seat that truly holds it.
func trueShare(deals [][4]core.CardSet, w []float64, truth [4]core.CardSet, hidden core.CardSet) float64 {
	if hidden.Empty() {
		return 1
	}
	sum, wsum := 0.0, 0.0
	for i, h := range deals {
		right := 0
		for s := range h {
			right += (h[s] & truth[s] & hidden).Len()
		}
		sum += w[i] * float64(right)
		wsum += w[i]
	}
	return sum / wsum / float64(hidden.Len())
}

// The inference puts the hidden cards where they are more often than uniform drawing does, and
// gives the true deal a higher likelihood, on games Easy plays against itself (seed 3).
func TestInferenceFindsTheTrueDeal(t *testing.T) {
	seed := uint64(3)
	games := selfPlay(t, seed, 16, []Level{Easy})
	sc := scoreInference(t, games, 100)
	u, w, lr := sc.report()
	t.Logf("seed %d: %d decisions; true location share uniform %.4f, previous sampler %.4f, weighted %.4f; log-LR of the true deal %+.3f",
		seed, sc.decisions, u, sc.previous(), w, lr)
	if sc.decisions < 100 {
		t.Fatalf("only %d decisions measured", sc.decisions)
	}
	if w < u+0.02 {
		t.Errorf("weighted drawing finds the true location %.4f of the time, uniform %.4f", w, u)
	}
	if lr < 0.5 {
		t.Errorf("the true deal's log-likelihood ratio to uniform is %.3f", lr)
	}
}

// BenchmarkInference measures the inference on self-play records of the three levels (seed 11):
// how often the deals drawn put each hidden card where it truly is, uniform and weighted, and the
// log-likelihood ratio of the true deal. Each op is one game:
//
//	go test ./core/robot -run XXX -bench Inference -benchtime 100x
func BenchmarkInference(b *testing.B) {
	games := selfPlay(b, 11, b.N, Levels)
	b.ResetTimer()
	sc := scoreInference(b, games, 160)
	u, w, lr := sc.report()
	b.ReportMetric(u, "share-uniform")
	b.ReportMetric(w, "share-weighted")
	b.ReportMetric(sc.previous(), "share-previous")
	b.ReportMetric(lr, "logLR")
	b.ReportMetric(float64(sc.decisions)/float64(b.N), "decisions/game")
}

// choiceSample is one choice among alternatives, each described by features.
type choiceSample struct {
	alts   [][]float64
	chosen int
}

// fitLogit fits the weights of a conditional logit (a softmax over a linear score of features)
// to the samples by maximum likelihood, with gradient ascent; it gives the weights and the mean
// log-likelihood per sample.
func fitLogit(samples []choiceSample, nf int) ([]float64, float64) {
	w := make([]float64, nf)
	grad := make([]float64, nf)
	var ll float64
	for range 3000 {
		clear(grad)
		ll = 0
		for _, s := range samples {
			logits := make([]float64, len(s.alts))
			top := math.Inf(-1)
			for i, f := range s.alts {
				for k, x := range f {
					logits[i] += w[k] * x
				}
				top = max(top, logits[i])
			}
			sum := 0.0
			for i := range logits {
				logits[i] = math.Exp(logits[i] - top)
				sum += logits[i]
			}
			ll += math.Log(logits[s.chosen] / sum)
			for i, f := range s.alts {
				p := logits[i] / sum
				for k, x := range f {
					if i == s.chosen {
						grad[k] += x
					}
					grad[k] -= p * x
				}
			}
		}
		for k := range w {
			w[k] += 2 * grad[k] / float64(len(samples))
		}
	}
	return w, ll / float64(len(samples))
}

// readingPlays are the card choices of the reading kind's seats (Normal, Strong) in games, with
// the play model's features of each legal card.
func readingPlays(t testing.TB, games []selfPlayGame) []choiceSample {
	t.Helper()
	var plays []choiceSample
	for _, sp := range games {
		g := sp.replay(t, 0)
		for _, m := range sp.moves {
			v := g.View(m.Seat)
			if sp.levels[m.Seat] != Easy && m.Kind == core.MovePlay && v.Legal.Len() > 1 {
				var buf [6][nPlayFeatures]float64
				n := v.Legal.Len()
				playFeatures(v, v.Legal, buf[:n])
				s := choiceSample{}
				for i, c := range v.Legal.Cards() {
					s.alts = append(s.alts, buf[i][:])
					if c == m.Card {
						s.chosen = i
					}
				}
				plays = append(plays, s)
			}
			if err := g.Apply(m); err != nil {
				t.Fatal(err)
			}
		}
	}
	return plays
}

// meanLogLikelihood is the mean log-chance a conditional logit with weights w gives the samples'
// choices.
func meanLogLikelihood(samples []choiceSample, w []float64) float64 {
	ll := 0.0
	for _, s := range samples {
		sum, chosen := 0.0, 0.0
		for i, f := range s.alts {
			l := 0.0
			for k, x := range f {
				l += w[k] * x
			}
			sum += math.Exp(l)
			if i == s.chosen {
				chosen = math.Exp(l)
			}
		}
		ll += math.Log(chosen / sum)
	}
	return ll / float64(len(samples))
}

// BenchmarkFitInference fits the reading kind's models (infer.go) to the choices of Normal and
// Strong: the trump choice on random first packets (the trump table, as they choose), the cards
// and announcements of their seats in self-play games of the three levels (seed 21). It prints
// the weights; each op is one game:
//
//	go test ./core/robot -run XXX -bench FitInference -benchtime 300x -v
func BenchmarkFitInference(b *testing.B) {
	r := rand.New(rand.NewPCG(21, 1))
	var trumps []choiceSample
	for range 20000 {
		hands := core.DealHands(r, 0)
		packet := core.SetOf(hands[1][:3]...)
		v := core.View{Seat: 1, Phase: core.PhaseTrump, Forehand: 1, TrumpTeam: core.TeamB, Hand: packet, Rules: core.DefaultRules()}
		x := (&searcher{}).decideTrump(context.Background(), v)
		value, easy := trumpFeatures(packet)
		s := choiceSample{}
		for i, y := range core.Suits {
			s.alts = append(s.alts, []float64{value[y], b2f(y == easy)})
			if y == x {
				s.chosen = i
			}
		}
		trumps = append(trumps, s)
	}
	tw, tll := fitLogit(trumps, 2)
	b.Logf("trump model: trumpValue %.3g, trumpEasy %.3g (mean log-likelihood %.4f, uniform %.4f)", tw[0], tw[1], tll, math.Log(0.25))

	games := selfPlay(b, 21, b.N, Levels)
	var plays, calls []choiceSample
	for _, sp := range games {
		g := sp.replay(b, 0)
		atWindow := map[core.Seat]bool{}
		for _, m := range sp.moves {
			v := g.View(m.Seat)
			reads := sp.levels[m.Seat] != Easy
			if reads && len(v.Calls) > 0 && !atWindow[m.Seat] {
				atWindow[m.Seat] = true
				f := []float64{1, float64(handStrength(v.Hand, v.Trump)) / 10, b2f(m.Seat.Team() == v.TrumpTeam)}
				calls = append(calls, choiceSample{alts: [][]float64{{0, 0, 0}, f}, chosen: b2i(m.Kind == core.MoveAnnounce)})
			}
			if err := g.Apply(m); err != nil {
				b.Fatal(err)
			}
		}
	}
	plays = readingPlays(b, games)
	pw, pll := fitLogit(plays, nPlayFeatures)
	b.Logf("play model (%d cards): playWeights %.3g (mean log-likelihood %.4f)", len(plays), pw, pll)
	cw, cll := fitLogit(calls, 3)
	b.Logf("announce model (%d windows): bias %.3g, strength/10 %.3g, trump team %.3g (mean log-likelihood %.4f)", len(calls), cw[0], cw[1], cw[2], cll)
}

// BenchmarkResample is the cost of drawing Strong's deals with the inference, in tricks 2 to 4.
func BenchmarkResample(b *testing.B) {
	r := rand.New(rand.NewPCG(4, 2))
	var views []core.View
	for len(views) < 32 {
		v, _ := randomView(r, 4+r.IntN(10))
		if v.Phase == core.PhasePlay && newDeals(v).Count() > lateLimit {
			views = append(views, v)
		}
	}
	for i := 0; b.Loop(); i++ {
		v := views[i%len(views)]
		resample(newInference(v), newDeals(v), rand.New(rand.NewPCG(1, uint64(i))), 160)
	}
}

// packetIndex numbers the 2,024 packets 0..2023, each once.
func TestPacketIndex(t *testing.T) {
	seen := map[int]bool{}
	for a := core.Card(1); a <= 24; a++ {
		for b := a + 1; b <= 24; b++ {
			for c := b + 1; c <= 24; c++ {
				i := packetIndex(a, b, c)
				if i < 0 || i >= 2024 || seen[i] {
					t.Fatalf("packet %v %v %v: index %d (seen %v)", a, b, c, i, seen[i])
				}
				seen[i] = true
			}
		}
	}
}

// A rule player's moves are the rule's but for ruleSlip; the reading kind's chances add up to 1
// over the legal cards.
func TestPlayChances(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 0))
	for range 200 {
		v, _ := randomView(r, r.IntN(20))
		if v.Phase != core.PhasePlay || v.Legal.Len() < 2 {
			continue
		}
		easy := easyCard(v, 0)
		sum := 0.0
		for _, c := range v.Legal.Cards() {
			p := playChances(v, v.Legal, c, &playWeights)
			sum += p[kindReads]
			want := ruleSlip / float64(v.Legal.Len()-1)
			if c == easy {
				want = 1 - ruleSlip
			}
			if math.Abs(p[kindRules]-want) > 1e-12 {
				t.Fatalf("%v from %v: rule player's chance %v, want %v", c, v.Legal, p[kindRules], want)
			}
		}
		if math.Abs(sum-1) > 1e-9 {
			t.Fatalf("the reading kind's chances over %v add up to %v", v.Legal, sum)
		}
	}
}

// The inference models the other team's seats as rule players in a deal unless their moves in it
// say otherwise: on the true deal, in nearly every view of games among Easy players from the
// second trick on, and at most half as often among Normal players, who read the game; never a
// partner.
func TestRulePlayersAreModelled(t *testing.T) {
	seed := uint64(41)
	share := map[Level]float64{}
	for _, l := range []Level{Easy, Normal} {
		games := selfPlay(t, seed, 8, []Level{l})
		seats, marked := 0, 0
		for _, sp := range games {
			for k := range sp.moves {
				g := sp.replay(t, k)
				if g.Phase() != core.PhasePlay || g.TricksDone() < 1 {
					continue
				}
				v := g.View(g.ToMove())
				var truth [4]core.CardSet
				for s := range truth {
					truth[s] = g.Hand(core.Seat(s))
				}
				_, mask := newInference(v).weigh(truth)
				for s := range core.Seat(4) {
					switch {
					case s.Team() == v.Seat.Team() && mask&(1<<s) != 0:
						t.Fatalf("seed %d: seat %v models its own team's seat %v", seed, v.Seat, s)
					case s.Team() != v.Seat.Team():
						seats++
						if mask&(1<<s) != 0 {
							marked++
						}
					}
				}
			}
		}
		share[l] = float64(marked) / float64(seats)
	}
	t.Logf("seed %d: seats modelled on the true deal: among Easy players %.3f, among Normal players %.3f", seed, share[Easy], share[Normal])
	if share[Easy] < 0.9 || share[Normal] > share[Easy]/2 {
		t.Fatalf("seed %d: seats modelled among Easy players %.3f, among Normal players %.3f", seed, share[Easy], share[Normal])
	}
}

// The search models a seat by its chance of playing by rules over all the deals weighed, the
// same in every deal, and never a partner: a seat that one deal alone makes a rule player is
// not modelled there when the deals together do not say so. (Before modelMasks each deal had
// its own seats: seat 3 was modelled in the first deal below and not in the second.)
func TestModelledSeatsAreTheSameInEveryDeal(t *testing.T) {
	v := core.View{Seat: 0}
	weights := []float64{1, 3}
	chances := [][4]float64{
		{1, 1.0, 1, 0.9}, // seat 1 over the deals: (1 + 3·0.5)/4 = 0.625; seat 3: (0.9 + 3·0.4)/4 = 0.525
		{1, 0.5, 1, 0.4},
	}
	masks := modelMasks(v, weights, chances)
	for i, m := range masks {
		if m != 1<<1 {
			t.Errorf("deal %d models seats %04b, want only seat 1 (0010)", i, m)
		}
	}
}

// playFeatures on a trick and on a lead, clubs trump: seat 1 holds AS 10S 9S AH 9D QC.
func TestPlayFeatures(t *testing.T) {
	card := func(s string) core.Card { return core.MustCards(s)[0] }
	hand := core.SetOf(core.MustCards("AS 10S 9S AH 9D QC")...)
	features := func(v core.View) map[core.Card][nPlayFeatures]float64 {
		f := make([][nPlayFeatures]float64, v.Legal.Len())
		playFeatures(v, v.Legal, f)
		out := map[core.Card][nPlayFeatures]float64{}
		for i, c := range v.Legal.Cards() {
			out[c] = f[i]
		}
		return out
	}
	check := func(what string, f [nPlayFeatures]float64, k int, want float64) {
		t.Helper()
		if math.Abs(f[k]-want) > 1e-9 {
			t.Errorf("%s: feature %d is %v, want %v", what, k, f[k], want)
		}
	}

	// Seat 0 led JS: seat 1 follows with a spade or its trump.
	trick := core.Trick{Leader: 0, N: 1, Winner: core.NoSeat}
	trick.Cards[0] = card("JS")
	v := core.View{Seat: 1, Phase: core.PhasePlay, Trump: core.Clubs, ToMove: 1, Hand: hand, Trick: trick}
	v.Legal = core.Legal(hand, trick.Cards[0], core.Clubs)
	if want := core.SetOf(core.MustCards("AS 10S 9S QC")...); v.Legal != want {
		t.Fatalf("legal %v, want %v", v.Legal, want)
	}
	f := features(v)
	nine, ten, ace := f[card("9S")], f[card("10S")], f[card("AS")]
	check("9S", nine, featLowest, 1)
	check("9S", nine, featFollowLow, 1)
	check("10S", ten, featFollowLow, 0)
	check("AS", ace, featWins, 1)
	check("AS", ace, featSecondWins, 1)
	check("AS", ace, featTrickPoints, 0.1)
	check("AS, trumps unseen", ace, featSureWin, 0)
	check("AS, the opponent leads", ace, featOverPartner, 0)

	// Seat 3, the partner, led JS and seat 0 took it with KS: the ace takes it from the opponent.
	trick = core.Trick{Leader: 3, N: 2, Winner: core.NoSeat}
	trick.Cards[0], trick.Cards[1] = card("JS"), card("KS")
	v.Trick = trick
	f = features(v)
	check("AS over the opponent's KS", f[card("AS")], featOverPartner, 0)
	check("AS over the opponent's KS", f[card("AS")], featWins, 1)
	// The partner led KS and seat 0 followed with JS: the ace or the trump would take it from him.
	trick.Cards[0], trick.Cards[1] = card("KS"), card("JS")
	v.Trick = trick
	f = features(v)
	check("AS over the partner's KS", f[card("AS")], featOverPartner, 1)
	check("QC over the partner's KS", f[card("QC")], featOverPartner, 1)
	check("QC, third", f[card("QC")], featSecondWins, 0)
	check("9S under the partner's KS", f[card("9S")], featOverPartner, 0)
	check("9S under the partner's KS", f[card("9S")], featFollowLow, 1)

	// Seat 1 leads.
	v = core.View{Seat: 1, Phase: core.PhasePlay, Trump: core.Clubs, ToMove: 1, Hand: hand, Legal: hand,
		Trick: core.Trick{Leader: 1, Winner: core.NoSeat}}
	f = features(v)
	check("AS, three spades", f[card("AS")], featLeadLength, 0.5)
	check("AS, trumps unseen", f[card("AS")], featLeadBoss, 0)
	check("9D", f[card("9D")], featLeadLength, 1.0/6)
	// The clubs order is AC QS QH QD KC QC JC 10C 9C: QC is the fourth from the bottom.
	check("QC", f[card("QC")], featLeadTrumpPower, 4.0/9)
	check("QC", f[card("QC")], featLeadLength, 0)
	check("AH", f[card("AH")], featLeadTrumpPower, 0)
}

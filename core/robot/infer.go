package robot

import (
	"math"
	"slices"
	"sync"

	"github.com/kontermatt/kontermatt/core"
)

// Policy-based inference (after Rebstock, Buro, Sturtevant et al., "Policy Based Inference in
// Trick-Taking Card Games", 2019): a hidden deal is as likely as the moves the others made are
// with the hands it gives them. Three kinds of move are read:
//
//   - forehand's trump choice, made from three of its six cards (which three, the others do not
//     know: the chance is the mean over the twenty packets its hand holds);
//   - every card another seat led or followed;
//   - announcements made, and not made by a seat that held the queens for one.
//
// Players differ, so each other seat is one of two kinds, even odds before its first move: a
// player by rules (Easy, or a person who plays as a club player would state it), who makes the
// rule's move but for a small chance ruleSlip of any other; or a player who reads the game
// (Normal, Strong), whose moves follow softmax models over cheap evaluators — the trump table's
// chances for each suit and Easy's rule; for a card, the one Easy would play, winning the trick,
// points given to a winning partner or thrown away, trumps spent, and how the card sits in its
// suit and the trick (playFeatures); the hand's strength. A deal's weight is, per
// seat, the mixture of what the two kinds make of its moves, so a seat that plays by the rules
// soon counts as one in the deals that explain its play.
//
// The weights of the reading kind's softmax models (their temperatures among them) were fitted
// by maximum likelihood on the choices of Normal and Strong playing with and against every level
// (BenchmarkFitInference prints them); the rule player's moves are deterministic, so nothing is
// fitted there but its slip. BenchmarkInference measures what the inference buys: how often the
// deals drawn put each hidden card where it truly is, and the log-likelihood of the true deal,
// against uniform drawing.
//
// Measured (BenchmarkInference, 100 games of the levels, 797 decisions with sampled deals): the
// true location share is 0.402 drawn with the inference, 0.350 uniformly and 0.372 with the
// previous sampler; the true deal is e^1.28 times likelier than uniform drawing makes it (with the
// six-feature play model before playFeatures had fifteen: 0.400 and e^1.20, on those levels' own
// games then). On games it was not fitted on, the fifteen features give Normal's and Strong's
// cards a mean log-likelihood of -0.890 where the six gave -0.936
// (TestPlayModelPredictsTheReadingKind). Two more, the search's own habits rather than a
// person's (it plays the highest of equivalent cards, and the first of cards worth the same), took
// the fit to -0.824 and were left out: they would read a person who plays the 9 from 10-9 as not
// holding the 10, with a weight of -6.6. The fifteen buy nothing measurable in play, where Normal
// reads with them too (duel -a strong -b normal -deals 200 -nodes-per-ms 12000, one core,
// -pairs/-against: the change in Strong's game win share on the same deals, 95% paired interval):
// -0.0025 ± 0.0322 (seed 7801), +0.0138 ± 0.0335 (7802), +0.0163 ± 0.0330 (7804) and -0.0238 ±
// 0.0355 (7805); against Easy +0.0063 ± 0.0221 (7803). With the seventeen, Strong against a
// Normal kept on the six (a build for the measurement only) gained about +0.014 ± 0.013 over those
// 800 deals. Before them, in play
// (duels at 12,000 solver nodes per ms of budget, seeds 3401-3442) Strong with it wins 0.664 ±
// 0.024 of games against Easy where the previous Strong wins 0.642 ± 0.025 on the same 400 deals,
// and 0.501 ± 0.020 against the previous Strong (300 deals): finding the cards better has not yet
// made it play much better.
//
// What did: using the reading in the search. Where the inference gives an opponent at least the
// chance modelBelief of being a rule player (over the deals it weighs), Strong's solver plays Easy's card for it
// (dd.Model) instead of its open-card best, so that Strong plays against the player it has seen
// rather than a perfect one (modelBelief has the paired measurements). With the duel tool, fresh
// seeds, 12,000 solver nodes per ms of budget, one core: Strong wins 0.701 ± 0.025 of games
// against Easy on 400 deals (seed 3609; the Strong before it 0.643 ± 0.024 on the same deals) and
// 0.718 ± 0.035 on 200 more (seed 3606); 0.521 ± 0.022 against Normal (300 deals, seed 3608); and
// 0.488 ± 0.024 against the previous Strong (200 deals, seed 3607): the model buys nothing
// against players who read the game, whom it rarely models.

// ruleSlip is the chance a rule player makes any move but the rule's.
const ruleSlip = 0.05

// trumpModel: the logit of naming y from a packet is trumpValue·(the table's win chance plus half
// the draw chance with y) + trumpEasy·(y is Easy's choice). A sharper trump model for the reading
// kind (2·trumpValue: Normal and Strong name trump from the table without chance) was tried and
// not kept: against Normal +0.0050 ± 0.0190 of games, deal by deal against this version (duel -a
// strong -b normal -deals 200 -seed 7601 -nodes-per-ms 12000, -pairs/-against, one core; 14
// deals better, 10 worse; this version 0.4925 ± 0.0248 on them).
const (
	trumpValue = 41.1
	trumpEasy  = 0.495
)

// The play model's weights per feature (playFeatures), fitted on 600 games (BenchmarkFitInference
// -benchtime 600x: 6,909 cards, mean log-likelihood -0.921 per card; on 300 games -0.906, where
// the first six features alone give -0.962).
var playWeights = [nPlayFeatures]float64{0.994, 2.28, -0.0755, -0.83, -1.77, -0.272, -0.906, -1.64, -1.51, 1.78, -1.04, 1.67, 0.514, -0.838, -0.291}

// announceModel: the logit of announcing, when a seat can, is announceBias +
// announceStrength·handStrength/10 + announceTrumpTeam·(the seat's team named trump).
const (
	announceBias      = -5.23
	announceStrength  = 12.7
	announceTrumpTeam = -0.629
)

// The kinds of player a seat may be.
const (
	kindRules = iota
	kindReads
	nPlayerKinds
)

// packetIndex numbers the 2,024 three-card packets (the combinatorial number system).
func packetIndex(a, b, c core.Card) int {
	// a < b < c, cards 1..24 → 0..23
	x, y, z := int(a)-1, int(b)-1, int(c)-1
	return x + y*(y-1)/2 + z*(z-1)*(z-2)/6
}

// trumpChoiceProbs[kind][packet][suit] is the chance the model of the kind gives naming suit
// from the packet.
var trumpChoiceProbs = sync.OnceValue(func() *[nPlayerKinds][2024][5]float64 {
	var out [nPlayerKinds][2024][5]float64
	for a := core.Card(1); a <= 24; a++ {
		for b := a + 1; b <= 24; b++ {
			for c := b + 1; c <= 24; c++ {
				p := core.SetOf(a, b, c)
				i := packetIndex(a, b, c)
				out[kindReads][i] = trumpProbs(p, trumpValue, trumpEasy)
				easy := easyTrump(p)
				for _, x := range core.Suits {
					out[kindRules][i][x] = ruleSlip / 3
				}
				out[kindRules][i][easy] = 1 - ruleSlip
			}
		}
	}
	return &out
})

// trumpFeatures are the trump model's features for naming each suit from packet p.
func trumpFeatures(p core.CardSet) (value [5]float64, easy core.Suit) {
	for _, x := range core.Suits {
		if o, ok := Odds(p, x); ok {
			value[x] = (float64(o.Win) + float64(o.Draw)/2) / 1000
		}
	}
	return value, easyTrump(p)
}

// trumpProbs is the softmax of the trump model with the given weights.
func trumpProbs(p core.CardSet, wValue, wEasy float64) [5]float64 {
	value, easy := trumpFeatures(p)
	var out [5]float64
	sum := 0.0
	for _, x := range core.Suits {
		l := wValue * value[x]
		if x == easy {
			l += wEasy
		}
		out[x] = math.Exp(l)
		sum += out[x]
	}
	for _, x := range core.Suits {
		out[x] /= sum
	}
	return out
}

// trumpChoiceChance is the chance that a seat of the kind holding the six cards hand names x,
// its first packet being any three of them.
func trumpChoiceChance(kind int, hand core.CardSet, x core.Suit) float64 {
	cards := hand.Cards()
	if len(cards) != 6 {
		return 1
	}
	t := &trumpChoiceProbs()[kind]
	sum := 0.0
	for i := 0; i < 6; i++ {
		for j := i + 1; j < 6; j++ {
			for k := j + 1; k < 6; k++ {
				sum += t[packetIndex(cards[i], cards[j], cards[k])][x]
			}
		}
	}
	return sum / 20
}

// The play model's features of one legal card. The first six are a card player's first thoughts;
// the rest were added where the fit's log-likelihood (BenchmarkFitInference) rose with them, each
// something a person may weigh as well as the search.
const (
	featEasy           = iota // the card Easy would play
	featWins                  // it takes the trick so far (on a lead: no unseen card beats it)
	featFeed                  // its points /4, onto a trick the partner is taking
	featThrow                 // its points /4, anywhere else
	featTrumpPower            // its rank among the trumps /9 (0 for a plain card)
	featTrump                 // it is a trump
	featLowest                // the lowest of two or more legal cards of its suit
	featLeadBoss              // led, and no unseen card beats it
	featOverPartner           // it takes the trick from the partner
	featTrickPoints           // the trick's points so far /10, if it takes the trick
	featSecondWins            // played second, it takes the trick
	featLeadTrumpPower        // led, a trump: its rank among the trumps /9
	featFollowLow             // following, it does not take the trick and is the lowest legal card of its suit
	featLeadLength            // led, a plain card: the hand's cards of its suit /6
	featSureWin               // following, it takes the trick and nothing unseen beats it (or it plays last)
	nPlayFeatures
)

// playFeatures fills f[i] with the features of the i-th card of legal (ascending), for the seat
// of view ov (its hand, legal cards and trick so far).
func playFeatures(ov core.View, legal core.CardSet, f [][nPlayFeatures]float64) {
	x := ov.Trump
	easy := easyCard(ov, 0)
	t := ov.Trick
	unseen := ov.Unseen()
	trumps := core.Trumps(x)
	led := core.NoCard
	best, partnerWins, trickPoints := 0, false, 0
	if t.N > 0 {
		played := t.Played()
		led = played[0]
		wi := core.TrickWinner(played, x)
		best = strength(played[wi], led, x)
		partnerWins = t.SeatOf(wi).Team() == ov.Seat.Team()
		trickPoints = t.Points()
	}
	i := 0
	for m := legal; m != 0; m &= m - 1 {
		c := m.First()
		var wins bool
		if t.N == 0 {
			wins = boss(c, core.NoCard, x, unseen)
		} else {
			wins = strength(c, led, x) > best
		}
		pts := float64(c.Points()) / 4
		tp := trumpPower(c, x)
		suit := core.PlainOf(c.Suit(), x) // the cards of c's suit: the trumps for a trump
		if tp > 0 {
			suit = trumps
		}
		lowest, own := true, strength(c, c, x)
		for s := legal & suit; s != 0 && lowest; s &= s - 1 {
			lowest = strength(s.First(), c, x) >= own
		}
		f[i] = [nPlayFeatures]float64{
			featEasy:        b2f(c == easy),
			featWins:        b2f(wins),
			featTrumpPower:  float64(tp) / 9,
			featTrump:       b2f(tp > 0),
			featLowest:      b2f(lowest && (legal&suit).Len() > 1),
			featOverPartner: b2f(partnerWins && wins),
			featTrickPoints: b2f(wins) * float64(trickPoints) / 10,
			featSecondWins:  b2f(t.N == 1 && wins),
			featFollowLow:   b2f(t.N > 0 && !wins && lowest),
			featSureWin:     b2f(t.N > 0 && wins && (t.N == 3 || boss(c, led, x, unseen))),
		}
		if partnerWins && !wins {
			f[i][featFeed] = pts
		} else {
			f[i][featThrow] = pts
		}
		if t.N == 0 {
			f[i][featLeadBoss] = b2f(wins)
			if tp > 0 {
				f[i][featLeadTrumpPower] = float64(tp) / 9
			} else {
				f[i][featLeadLength] = float64((ov.Hand & suit).Len()) / 6
			}
		}
		i++
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// playChances are the chances each kind of player gives playing card among legal for view ov:
// the reading kind's softmax with the given weights, and the rule player's.
func playChances(ov core.View, legal core.CardSet, card core.Card, w *[nPlayFeatures]float64) [nPlayerKinds]float64 {
	var buf [6][nPlayFeatures]float64
	n := legal.Len()
	playFeatures(ov, legal, buf[:n])
	var num, sum float64
	var out [nPlayerKinds]float64
	i := 0
	for m := legal; m != 0; m &= m - 1 {
		l := 0.0
		for k, fk := range buf[i] {
			l += w[k] * fk
		}
		e := math.Exp(l)
		sum += e
		if m.First() == card {
			num = e
			out[kindRules] = ruleSlip / float64(n-1)
			if buf[i][featEasy] == 1 {
				out[kindRules] = 1 - ruleSlip
			}
		}
		i++
	}
	out[kindReads] = num / sum
	return out
}

// announceChance is the chance the model gives a seat announcing when it can, with hand (its
// six cards) in a game with trump x.
func announceChance(hand core.CardSet, x core.Suit, trumpTeam bool) float64 {
	l := announceBias + announceStrength*float64(handStrength(hand, x))/10
	if trumpTeam {
		l += announceTrumpTeam
	}
	return 1 / (1 + math.Exp(-l))
}

// observedWindow is one other seat's first-trick announcement window, already passed.
type observedWindow struct {
	seat      core.Seat
	announced bool
	before    []core.Announcement // the calls made before its window (it could not make them again)
	played    core.CardSet        // the cards it has played since (all in its hand at the window)
}

// inference weighs deals for one view by the others' moves.
type inference struct {
	v        core.View
	trump    bool         // read forehand's trump choice
	fhPlayed core.CardSet // the cards forehand has played
	plays    []observedPlay
	windows  []observedWindow
	// memo holds each play's log-chances by the hand it was played from: deals share hands, the
	// more so late in a game. An inference is used by one goroutine.
	memo map[playHand][nPlayerKinds]float64
}

type playHand struct {
	play int
	hand core.CardSet
}

// newInference reads the view's public moves by the other seats.
func newInference(v core.View) *inference {
	in := &inference{v: v, memo: map[playHand][nPlayerKinds]float64{}}
	if v.Phase != core.PhasePlay {
		return in
	}
	tricks := append(append([]core.Trick(nil), v.Tricks...), v.Trick)
	if v.Forehand != v.Seat {
		in.trump = true
		for _, t := range tricks {
			if c := t.CardOf(v.Forehand); c != core.NoCard {
				in.fhPlayed = in.fhPlayed.Add(c)
			}
		}
	}
	in.plays = observedPlays(v)
	if v.Rules.Announcements && len(tricks) > 0 {
		first := tricks[0]
		var before []core.Announcement
		for i := range first.N {
			s := first.SeatOf(i)
			w := observedWindow{seat: s, before: before}
			for _, a := range v.Announcements {
				if a.Seat == s {
					w.announced = true
					before = append(slices.Clip(before), a)
				}
			}
			if s == v.Seat {
				continue
			}
			for _, t := range tricks {
				if c := t.CardOf(s); c != core.NoCard {
					w.played = w.played.Add(c)
				}
			}
			in.windows = append(in.windows, w)
		}
	}
	return in
}

// logWeight is the log of how likely the others' moves are with deal h (up to a constant): per
// seat, the mixture of its two possible kinds, at even odds.
func (in *inference) logWeight(h [4]core.CardSet) float64 {
	lw, _ := in.weigh(h)
	return lw
}

// modelBelief is how sure the inference must be that a seat of the other team plays by rules
// (over the deals weighed: modelMasks) for the search to play Easy's cards for it: above the even
// odds before any move, so a seat is modelled only once its moves say so. Measured with paired
// duels when the chance was read deal by deal (the same deals and seeds, Strong with and without
// the model against the same opponents, 12,000 solver nodes per ms of budget with a model's answer
// not yet counted as nodes, one core, a loaded machine; share of games, draws half, 95% intervals
// over deal pairs): against Easy, seed 3604, 200 deals, 0.4 gains 0.080 ± 0.032, 0.6 gains 0.060 ±
// 0.028, 0.9 gains 0.019 ± 0.023 (160 deals); against Normal, seed 3605, 0.4 loses 0.050 ± 0.051
// (80 deals: modelled before any move, Normal looks like Easy), 0.6 changes -0.028 ± 0.033 (160
// deals). Again on the same deals (seeds 7101 against Normal, 500 deals, and 7102 against Easy,
// 400): 0.6 wins 0.505 ± 0.017 and 0.714 ± 0.024, 0.9 wins 0.524 ± 0.016 and 0.673 ± 0.025, no
// model 0.526 ± 0.016 and 0.654 ± 0.024: the model's gain against Easy costs about 0.02 against
// Normal, which reading the chance over all the deals (modelMasks) wins back. Over all the deals,
// 0.8 was tried and not kept: 0.5375 ± 0.0186 against Normal and 0.6856 ± 0.0253 against Easy,
// 0.6 giving 0.5325 ± 0.0195 and 0.7125 ± 0.0250 on the same deals (400 each, seeds 7201, 7202).
const modelBelief = 0.6

// weigh gives logWeight and the other team's seats that deal h alone makes rule players with at
// least the chance modelBelief (bit s for seat s). The search models seats by that chance over
// all the deals it weighs instead (modelMasks).
func (in *inference) weigh(h [4]core.CardSet) (float64, uint8) {
	lw, chance := in.weighKinds(h)
	var rules uint8
	for s, c := range chance {
		if core.Seat(s).Team() != in.v.Seat.Team() && c >= modelBelief {
			rules |= 1 << s
		}
	}
	return lw, rules
}

// weighKinds gives logWeight and, per seat, the chance that deal h gives it of playing by rules.
func (in *inference) weighKinds(h [4]core.CardSet) (float64, [4]float64) {
	v := in.v
	var ll [4][nPlayerKinds]float64 // per seat and kind, the log-likelihood of its moves
	if in.trump {
		for k := range nPlayerKinds {
			ll[v.Forehand][k] += math.Log(trumpChoiceChance(k, h[v.Forehand]|in.fhPlayed, v.Trump) + 1e-12)
		}
	}
	for _, w := range in.windows {
		hand := h[w.seat] | w.played
		var made core.Call
		for _, a := range w.before {
			made |= a.Call
		}
		var calls []core.Call
		for _, c := range []core.Call{core.CallKonter, core.CallMatt, core.CallKonterAMatt} {
			if made&c == 0 && c.Queens()&^hand == 0 {
				calls = append(calls, c)
			}
		}
		if len(calls) == 0 {
			continue
		}
		p := [nPlayerKinds]float64{kindReads: announceChance(hand, v.Trump, w.seat.Team() == v.TrumpTeam)}
		wv := core.View{Seat: w.seat, Hand: hand, Trump: v.Trump, TrumpTeam: v.TrumpTeam, Calls: calls, Announcements: w.before}
		p[kindRules] = ruleSlip
		if easyAnnounces(wv) {
			p[kindRules] = 1 - ruleSlip
		}
		for k := range p {
			if !w.announced {
				p[k] = 1 - p[k]
			}
			ll[w.seat][k] += math.Log(p[k])
		}
	}
	for i, o := range in.plays {
		hand := h[o.seat] | o.later | core.SetOf(o.card)
		l, ok := in.memo[playHand{i, hand}]
		if !ok {
			l = in.playLogChances(o, hand)
			in.memo[playHand{i, hand}] = l
		}
		for k := range l {
			ll[o.seat][k] += l[k]
		}
	}
	lw := 0.0
	var chance [4]float64
	for s := range ll {
		a, b := ll[s][kindRules], ll[s][kindReads]
		top := max(a, b)
		lw += top + math.Log((math.Exp(a-top)+math.Exp(b-top))/2)
		chance[s] = 1 / (1 + math.Exp(b-a))
	}
	return lw, chance
}

// playLogChances are the logs of the chances of play o from hand, for each kind of player.
func (in *inference) playLogChances(o observedPlay, hand core.CardSet) [nPlayerKinds]float64 {
	v := in.v
	led := core.NoCard
	if o.trick.N > 0 {
		led = o.trick.Cards[0]
	}
	legal := core.Legal(hand, led, v.Trump)
	if legal.Len() < 2 || !legal.Has(o.card) {
		return [nPlayerKinds]float64{}
	}
	ov := core.View{Seat: o.seat, Rules: v.Rules, Phase: core.PhasePlay, Dealer: v.Dealer, Forehand: v.Forehand,
		Trump: v.Trump, TrumpTeam: v.TrumpTeam, ToMove: o.seat, Hand: hand, Legal: legal,
		Trick: o.trick, Tricks: v.Tricks[:o.tricks]}
	p := playChances(ov, legal, o.card, &playWeights)
	return [nPlayerKinds]float64{math.Log(p[0]), math.Log(p[1])}
}

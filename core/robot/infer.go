package robot

import (
	"math"
	"sync"

	"github.com/kontermatt/kontermatt/core"
)

// Policy-based inference (after Rebstock, Buro, Sturtevant et al., "Policy Based Inference in
// Trick-Taking Card Games", 2019): a hidden deal is as likely as the moves the others made are
// with the hands it gives them. Three kinds of move are read:
//
//   - forehand's trump choice, made from three of its six cards (which three, the others do not
//     know: the chance is the mean over the twenty packets its hand holds), under a softmax over
//     the trump table's chances for each suit and Easy's rule;
//   - every card another seat led or followed, under a softmax over a cheap evaluator of the
//     legal cards it held (the card Easy would play, winning the trick, points given to a winning
//     partner or thrown away, trumps spent);
//   - announcements made, and not made by a seat that held the queens for one.
//
// The weights of each softmax (its temperature among them) were fitted by maximum likelihood on
// the choices of the three levels playing each other (BenchmarkFitInference prints them), and
// BenchmarkInference measures what they buy: how often the deals drawn put each hidden card where
// it truly is, and the log-likelihood of the true deal, against uniform drawing.

// trumpModel: the logit of naming y from a packet is trumpValue·(the table's win chance plus half
// the draw chance with y) + trumpEasy·(y is Easy's choice).
const (
	trumpValue = 28.5
	trumpEasy  = 1.5
)

// The play model's weights per feature (playFeatures).
var playWeights = [nPlayFeatures]float64{1.69, 0.997, 0.697, -0.371, -0.526, -0.443}

// announceModel: the logit of announcing, when a seat can, is announceBias +
// announceStrength·handStrength/10 + announceTrumpTeam·(the seat's team named trump).
const (
	announceBias      = -3.94
	announceStrength  = 7.69
	announceTrumpTeam = -0.069
)

// packetIndex numbers the 2,024 three-card packets (the combinatorial number system).
func packetIndex(a, b, c core.Card) int {
	// a < b < c, cards 1..24 → 0..23
	x, y, z := int(a)-1, int(b)-1, int(c)-1
	return x + y*(y-1)/2 + z*(z-1)*(z-2)/6
}

// trumpChoiceProbs[packet][suit] is the chance the model gives naming suit from the packet.
var trumpChoiceProbs = sync.OnceValue(func() *[2024][5]float64 {
	var out [2024][5]float64
	for a := core.Card(1); a <= 24; a++ {
		for b := a + 1; b <= 24; b++ {
			for c := b + 1; c <= 24; c++ {
				p := core.SetOf(a, b, c)
				out[packetIndex(a, b, c)] = trumpProbs(p, trumpValue, trumpEasy)
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

// trumpChoiceChance is the chance that a seat holding the six cards hand names x, its first
// packet being any three of them.
func trumpChoiceChance(hand core.CardSet, x core.Suit) float64 {
	cards := hand.Cards()
	if len(cards) != 6 {
		return 1
	}
	t := trumpChoiceProbs()
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

// The play model's features of one legal card.
const (
	featEasy       = iota // the card Easy would play
	featWins              // it takes the trick so far (on a lead: no unseen card beats it)
	featFeed              // its points /4, onto a trick the partner is taking
	featThrow             // its points /4, anywhere else
	featTrumpPower        // its rank among the trumps /9 (0 for a plain card)
	featTrump             // it is a trump
	nPlayFeatures
)

// playFeatures fills f[i] with the features of the i-th card of legal (ascending), for the seat
// of view ov (its hand, legal cards and trick so far).
func playFeatures(ov core.View, legal core.CardSet, f [][nPlayFeatures]float64) {
	x := ov.Trump
	easy := easyCard(ov, 0)
	t := ov.Trick
	unseen := ov.Unseen()
	led := core.NoCard
	best, partnerWins := 0, false
	if t.N > 0 {
		played := t.Played()
		led = played[0]
		wi := core.TrickWinner(played, x)
		best = strength(played[wi], led, x)
		partnerWins = t.SeatOf(wi).Team() == ov.Seat.Team()
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
		f[i] = [nPlayFeatures]float64{}
		if c == easy {
			f[i][featEasy] = 1
		}
		if wins {
			f[i][featWins] = 1
		}
		if partnerWins && !wins {
			f[i][featFeed] = pts
		} else {
			f[i][featThrow] = pts
		}
		f[i][featTrumpPower] = float64(tp) / 9
		if tp > 0 {
			f[i][featTrump] = 1
		}
		i++
	}
}

// playChance is the chance the model gives playing card among legal for view ov, with the
// given weights.
func playChance(ov core.View, legal core.CardSet, card core.Card, w *[nPlayFeatures]float64) float64 {
	var buf [6][nPlayFeatures]float64
	n := legal.Len()
	playFeatures(ov, legal, buf[:n])
	var num, sum float64
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
		}
		i++
	}
	return num / sum
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
	before    core.Call    // the calls made before its window (it could not make them again)
	played    core.CardSet // the cards it has played since (all in its hand at the window)
}

// inference weighs deals for one view by the others' moves.
type inference struct {
	v        core.View
	trump    bool         // read forehand's trump choice
	fhPlayed core.CardSet // the cards forehand has played
	plays    []observedPlay
	windows  []observedWindow
	// memo holds each play's log-chance by the hand it was played from: deals share hands, the
	// more so late in a game. An inference is used by one goroutine.
	memo map[playHand]float64
}

type playHand struct {
	play int
	hand core.CardSet
}

// newInference reads the view's public moves by the other seats.
func newInference(v core.View) *inference {
	in := &inference{v: v, memo: map[playHand]float64{}}
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
		var made core.Call
		for i := range first.N {
			s := first.SeatOf(i)
			w := observedWindow{seat: s, before: made}
			for _, a := range v.Announcements {
				if a.Seat == s {
					w.announced = true
					made |= a.Call
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

// logWeight is the log of how likely the others' moves are with deal h (up to a constant).
func (in *inference) logWeight(h [4]core.CardSet) float64 {
	v := in.v
	lw := 0.0
	if in.trump {
		lw += math.Log(trumpChoiceChance(h[v.Forehand]|in.fhPlayed, v.Trump) + 1e-12)
	}
	for _, w := range in.windows {
		hand := h[w.seat] | w.played
		canCall := false
		for _, c := range []core.Call{core.CallKonter, core.CallMatt} {
			if w.before&c == 0 && c.Queens()&^hand == 0 {
				canCall = true
			}
		}
		if !canCall {
			continue
		}
		p := announceChance(hand, v.Trump, w.seat.Team() == v.TrumpTeam)
		if !w.announced {
			p = 1 - p
		}
		lw += math.Log(p)
	}
	for i, o := range in.plays {
		hand := h[o.seat] | o.later | core.SetOf(o.card)
		if l, ok := in.memo[playHand{i, hand}]; ok {
			lw += l
			continue
		}
		l := in.playLogChance(o, hand)
		in.memo[playHand{i, hand}] = l
		lw += l
	}
	return lw
}

// playLogChance is the log of the chance of play o from hand.
func (in *inference) playLogChance(o observedPlay, hand core.CardSet) float64 {
	v := in.v
	led := core.NoCard
	if o.trick.N > 0 {
		led = o.trick.Cards[0]
	}
	legal := core.Legal(hand, led, v.Trump)
	if legal.Len() < 2 || !legal.Has(o.card) {
		return 0
	}
	ov := core.View{Seat: o.seat, Rules: v.Rules, Phase: core.PhasePlay, Dealer: v.Dealer, Forehand: v.Forehand,
		Trump: v.Trump, TrumpTeam: v.TrumpTeam, ToMove: o.seat, Hand: hand, Legal: legal,
		Trick: o.trick, Tricks: v.Tricks[:o.tricks]}
	return math.Log(playChance(ov, legal, o.card, &playWeights))
}

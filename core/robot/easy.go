package robot

import (
	"context"

	"github.com/kontermatt/kontermatt/core"
)

// easyPlayer plays by rules: name the suit the first packet is strongest in, announce a strong
// hand, lead winners and low cards, win tricks cheaply, feed points to a partner's sure trick and
// throw low cards on tricks it cannot win. It is deterministic: the seed only breaks exact ties.
type easyPlayer struct {
	seed uint64
}

func (p *easyPlayer) Decide(_ context.Context, v core.View) core.Move {
	return easyMove(v, p.seed)
}

// easyMove is the rule-based move for the view; the search players fall back on it.
func easyMove(v core.View, seed uint64) core.Move {
	if v.Phase == core.PhaseTrump {
		return core.NameTrump(v.Seat, easyTrump(v.Hand))
	}
	if len(v.Calls) > 0 && easyAnnounces(v) {
		return core.Announce(v.Seat, biggestCall(v.Calls))
	}
	return core.Play(v.Seat, easyCard(v, seed))
}

// trumpPower is the rank of c among the trumps of x: 1 for the lowest, 0 for a plain card.
func trumpPower(c core.Card, x core.Suit) int { return int(trumpPowers[x][c&31]) }

var trumpOrders = func() (o [5][]core.Card) {
	for _, x := range core.Suits {
		o[x] = core.TrumpOrder(x)
	}
	return o
}()

// trumpPowers[x][c] is trumpPower(c, x), looked up: the inference asks it for every card of
// every hand it weighs (a search through trumpOrders was a sixth of BenchmarkResample's time).
var trumpPowers = func() (p [5][32]uint8) {
	for x, order := range trumpOrders {
		for i, c := range order {
			p[x][c] = uint8(len(order) - i)
		}
	}
	return p
}()

// easyTrump picks the suit in which the first packet holds the most and the highest trumps (the
// permanent queens count for every suit alike, so the suit's own cards decide); side aces count
// a little, since they are worth most when they are not trumps.
func easyTrump(packet core.CardSet) core.Suit {
	best, bestScore := core.Spades, -1
	for _, x := range core.Suits {
		score := 0
		for _, c := range packet.Cards() {
			switch {
			case core.IsTrump(c, x):
				score += 10 + trumpPower(c, x)
			case c.Rank() == core.Ace:
				score += 3
			case c.Rank() == core.King:
				score++
			}
		}
		if score > bestScore {
			best, bestScore = x, score
		}
	}
	return best
}

// handStrength counts trumps (the top four double) and plain aces.
func handStrength(hand core.CardSet, x core.Suit) int {
	n := 0
	for _, c := range hand.Cards() {
		switch p := trumpPower(c, x); {
		case p >= len(trumpOrders[x])-3:
			n += 2
		case p > 0:
			n++
		case c.Rank() == core.Ace:
			n++
		}
	}
	return n
}

// easyAnnounces announces a hand strong enough that its team likely wins.
func easyAnnounces(v core.View) bool {
	need := 8
	if v.Seat.Team() == v.TrumpTeam {
		need = 7
	}
	for _, a := range v.Announcements {
		if a.Seat == v.Seat.Partner() {
			need--
		}
	}
	return handStrength(v.Hand, v.Trump) >= need
}

// strength is how c ranks in a trick led by led: trumps above everything, then the led suit.
func strength(c, led core.Card, x core.Suit) int {
	if p := trumpPower(c, x); p > 0 {
		return 16 + p
	}
	if led == core.NoCard || (!core.IsTrump(led, x) && c.Suit() == led.Suit()) {
		return int(c.Rank())
	}
	return 0
}

// beatenBy is the set of cards in set that would beat a trick whose best card has strength best.
func beatenBy(set core.CardSet, best int, led core.Card, x core.Suit) core.CardSet {
	var out core.CardSet
	for m := set; m != 0; m &= m - 1 { // no slice of the cards: the inference asks this often
		if c := m.First(); strength(c, led, x) > best {
			out = out.Add(c)
		}
	}
	return out
}

// boss reports whether no unseen card could beat c once c is on a trick led by led.
func boss(c, led core.Card, x core.Suit, unseen core.CardSet) bool {
	if led == core.NoCard {
		led = c
	}
	s := strength(c, led, x)
	if !core.IsTrump(c, x) && !(unseen & core.Trumps(x)).Empty() {
		return false
	}
	return beatenBy(unseen, s, led, x).Empty()
}

// pick returns the card of set with the least cost; ties go to the first in canonical order.
func pick(set core.CardSet, cost func(core.Card) int) core.Card {
	best, bestCost := core.NoCard, 0
	for _, c := range set.Cards() {
		if k := cost(c); best == core.NoCard || k < bestCost {
			best, bestCost = c, k
		}
	}
	return best
}

// lowCost makes a card cheap to throw away: few points, no trump, and from a short suit.
func lowCost(hand core.CardSet, x core.Suit) func(core.Card) int {
	return func(c core.Card) int {
		k := c.Points() * 10
		if p := trumpPower(c, x); p > 0 {
			k += 30 + 3*p
		} else {
			k += (hand & core.PlainOf(c.Suit(), x)).Len() // keep long suits
			k += int(c.Rank())
		}
		return k
	}
}

func easyCard(v core.View, _ uint64) core.Card {
	if v.Legal.Len() == 1 {
		return v.Legal.First()
	}
	return easyPlay(v, v.Unseen())
}

// easyModel is Easy's card as the solver's model of a seat (dd.Model): the view it needs is the
// hand, the trump and the trick, and what it has not seen is what the others hold.
func easyModel(seat core.Seat, hand, others core.CardSet, x core.Suit, t core.Trick) core.Card {
	led := core.NoCard
	if t.N > 0 {
		led = t.Cards[0]
	}
	legal := core.Legal(hand, led, x)
	if legal.Len() == 1 {
		return legal.First()
	}
	return easyPlay(core.View{Seat: seat, Hand: hand, Legal: legal, Trump: x, Trick: t}, others)
}

// easyPlay is Easy's card for view v, which has more than one legal card and cannot see unseen.
func easyPlay(v core.View, unseen core.CardSet) core.Card {
	legal := v.Legal
	x := v.Trump
	low := lowCost(v.Hand, x)
	t := v.Trick
	if t.N == 0 {
		return easyLead(v, unseen, low)
	}
	played := t.Played()
	led := played[0]
	wi := core.TrickWinner(played, x)
	winner := t.SeatOf(wi)
	best := strength(played[wi], led, x)
	partnerWins := winner.Team() == v.Seat.Team()
	pts := t.Points()
	beaters := beatenBy(legal, best, led, x)
	last := t.N == 3
	// feed throws the most points without spending a high trump.
	feed := func(set core.CardSet) core.Card {
		return pick(set, func(c core.Card) int { return -c.Points()*10 + 5*trumpPower(c, x) })
	}
	// cheapest wins with the lowest winning card, sparing points where it can.
	cheapest := func(set core.CardSet) core.Card {
		return pick(set, func(c core.Card) int { return strength(c, led, x)*2 + c.Points() })
	}
	switch {
	case partnerWins && (last || boss(played[wi], led, x, unseen)):
		if safe := legal &^ beaters; !safe.Empty() {
			return feed(safe)
		}
		return feed(legal)
	case partnerWins:
		if safe := legal &^ beaters; !safe.Empty() {
			return pick(safe, low)
		}
		return pick(legal, low)
	case !beaters.Empty() && last:
		return cheapest(beaters)
	case !beaters.Empty():
		var sure core.CardSet
		for _, c := range beaters.Cards() {
			if boss(c, led, x, unseen) {
				sure = sure.Add(c)
			}
		}
		if !sure.Empty() && (pts > 0 || t.N == 2) {
			return cheapest(sure)
		}
		if t.N == 2 && pts >= 4 {
			return cheapest(beaters)
		}
	}
	if safe := legal &^ beaters; !safe.Empty() {
		return pick(safe, low)
	}
	return pick(legal, low)
}

// easyLead draws trumps with the top trump, cashes sure winners, or leads low.
func easyLead(v core.View, unseen core.CardSet, low func(core.Card) int) core.Card {
	x := v.Trump
	hand := v.Hand
	trumps := core.Trumps(x)
	myTrumps := hand & trumps
	if !myTrumps.Empty() && !(unseen & trumps).Empty() {
		top := pick(myTrumps, func(c core.Card) int { return -trumpPower(c, x) })
		if boss(top, core.NoCard, x, unseen) && (myTrumps.Len() >= 2 || (unseen&trumps).Len() <= 2) {
			return top
		}
	}
	var winners core.CardSet
	for _, c := range (hand &^ trumps).Cards() {
		if boss(c, core.NoCard, x, unseen&^trumps) && !(unseen & core.PlainOf(c.Suit(), x)).Empty() {
			winners = winners.Add(c)
		}
	}
	if !winners.Empty() {
		return pick(winners, func(c core.Card) int { return -c.Points() })
	}
	if plain := hand &^ trumps; !plain.Empty() {
		return pick(plain, low)
	}
	return pick(hand, low)
}

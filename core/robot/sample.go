package robot

import (
	"math/rand/v2"

	"github.com/kontermatt/kontermatt/core"
)

// deals knows which hidden deals agree with one seat's view and draws them uniformly.
//
// What the view proves: the cards in the seat's hand and on the table are nobody else's; a seat
// that did not play a trump on a trump lead has no trump; a seat that played a plain card of
// another suit on a plain lead has none of the led suit (playing a trump on a plain lead proves
// nothing, since one may always trump); an announcer holds the announced queens (those it has not
// played yet). Nothing follows from not announcing: announcing is optional.
type deals struct {
	known [4]core.CardSet // cards fixed in each hand: the seat's own, and announced queens
	need  [4]int          // hidden cards each seat still gets
	// The hidden cards, grouped into classes of cards that the same seats may hold.
	classes []dealClass
	splits  []dealSplit
	total   float64 // number of consistent deals
}

type dealClass struct {
	cards core.CardSet
	seats []core.Seat
}

// dealSplit says how many cards of each class go to each of the class's seats.
type dealSplit struct {
	counts [][]int // [class][index into class seats]
	weight float64 // the number of deals with these counts
}

// voids gives, for each seat, the cards the public play proves it cannot hold.
func voids(v core.View) [4]core.CardSet {
	var out [4]core.CardSet
	x := v.Trump
	trumps := core.Trumps(x)
	tricks := append(append([]core.Trick(nil), v.Tricks...), v.Trick)
	for _, t := range tricks {
		if t.N < 2 {
			continue
		}
		led := t.Cards[0]
		for i := 1; i < t.N; i++ {
			s, c := t.SeatOf(i), t.Cards[i]
			switch {
			case trumps.Has(led) && !trumps.Has(c):
				out[s] |= trumps
			case !trumps.Has(led) && !trumps.Has(c) && c.Suit() != led.Suit():
				out[s] |= core.PlainOf(led.Suit(), x)
			}
		}
	}
	return out
}

// newDeals works out the consistent deals for the view. During the trump phase the seat itself
// also gets three hidden cards (its second packet).
func newDeals(v core.View) *deals {
	d := &deals{}
	me := v.Seat
	played := v.Played()
	d.known[me] = v.Hand
	pool := core.FullDeck &^ v.Hand &^ played
	for s := range d.need {
		if core.Seat(s) != me {
			d.need[s] = v.HandSizes[s]
		}
	}
	if v.Phase == core.PhaseTrump {
		for s := range d.need {
			d.need[s] = 6
		}
		d.need[me] = 6 - v.Hand.Len()
	}
	var allowed [4]core.CardSet
	vd := voids(v)
	for s := range allowed {
		if d.need[s] > 0 {
			allowed[s] = pool &^ vd[s]
		}
	}
	for _, a := range v.Announcements {
		if a.Seat == me {
			continue
		}
		q := a.Call.Queens() & pool
		if !q.Empty() && (q &^ allowed[a.Seat]).Empty() && q.Len() <= d.need[a.Seat] {
			d.known[a.Seat] |= q
			d.need[a.Seat] -= q.Len()
			pool &^= q
		}
	}
	if !d.build(pool, allowed) {
		// The inferences contradict each other (impossible with a correct view): fall back to
		// the plain constraint of hand sizes.
		for s := range allowed {
			if d.need[s] > 0 {
				allowed[s] = pool
			}
		}
		d.build(pool, allowed)
	}
	return d
}

// build groups the pool into classes and lists the feasible splits; false if there is none.
func (d *deals) build(pool core.CardSet, allowed [4]core.CardSet) bool {
	d.classes, d.splits, d.total = nil, nil, 0
	byMask := map[uint8]core.CardSet{}
	var masks []uint8
	for _, c := range pool.Cards() {
		var m uint8
		for s := range allowed {
			if allowed[s].Has(c) {
				m |= 1 << s
			}
		}
		if m == 0 {
			return false
		}
		if _, ok := byMask[m]; !ok {
			masks = append(masks, m)
		}
		byMask[m] = byMask[m].Add(c)
	}
	for _, m := range masks {
		var seats []core.Seat
		for s := range 4 {
			if m&(1<<s) != 0 {
				seats = append(seats, core.Seat(s))
			}
		}
		d.classes = append(d.classes, dealClass{cards: byMask[m], seats: seats})
	}
	caps := d.need
	counts := make([][]int, len(d.classes))
	for i, c := range d.classes {
		counts[i] = make([]int, len(c.seats))
	}
	d.splitRec(0, caps, counts, 1)
	return len(d.splits) > 0
}

var factorial = func() (f [25]float64) {
	f[0] = 1
	for i := 1; i < len(f); i++ {
		f[i] = f[i-1] * float64(i)
	}
	return f
}()

func (d *deals) splitRec(k int, caps [4]int, counts [][]int, w float64) {
	if k == len(d.classes) {
		for _, c := range caps {
			if c != 0 {
				return
			}
		}
		cp := make([][]int, len(counts))
		for i := range counts {
			cp[i] = append([]int(nil), counts[i]...)
		}
		d.splits = append(d.splits, dealSplit{counts: cp, weight: w})
		d.total += w
		return
	}
	cl := d.classes[k]
	n := cl.cards.Len()
	var rec func(j, left int, caps [4]int, w float64)
	rec = func(j, left int, caps [4]int, w float64) {
		s := cl.seats[j]
		if j == len(cl.seats)-1 {
			if left > caps[s] {
				return
			}
			counts[k][j] = left
			caps[s] -= left
			d.splitRec(k+1, caps, counts, w/factorial[left])
			return
		}
		for m := 0; m <= min(left, caps[s]); m++ {
			counts[k][j] = m
			c2 := caps
			c2[s] -= m
			rec(j+1, left-m, c2, w/factorial[m])
		}
	}
	rec(0, n, caps, w*factorial[n])
}

// Count is the number of consistent deals.
func (d *deals) Count() float64 { return d.total }

// Sample draws one consistent deal uniformly: all four hands.
func (d *deals) Sample(r *rand.Rand) [4]core.CardSet {
	x := r.Float64() * d.total
	sp := &d.splits[len(d.splits)-1]
	for i := range d.splits {
		if x < d.splits[i].weight {
			sp = &d.splits[i]
			break
		}
		x -= d.splits[i].weight
	}
	hands := d.known
	var buf [24]core.Card
	for k, cl := range d.classes {
		cards := buf[:0]
		for m := cl.cards; m != 0; m &= m - 1 {
			cards = append(cards, m.First())
		}
		r.Shuffle(len(cards), func(i, j int) { cards[i], cards[j] = cards[j], cards[i] })
		at := 0
		for j, s := range cl.seats {
			for _, c := range cards[at : at+sp.counts[k][j]] {
				hands[s] = hands[s].Add(c)
			}
			at += sp.counts[k][j]
		}
	}
	return hands
}

// All lists every consistent deal; call it only when Count is small.
func (d *deals) All() [][4]core.CardSet {
	var cards []core.Card
	var allowedMask []uint8
	for _, cl := range d.classes {
		var m uint8
		for _, s := range cl.seats {
			m |= 1 << s
		}
		for _, c := range cl.cards.Cards() {
			cards = append(cards, c)
			allowedMask = append(allowedMask, m)
		}
	}
	var out [][4]core.CardSet
	hands := d.known
	need := d.need
	var rec func(i int)
	rec = func(i int) {
		if i == len(cards) {
			out = append(out, hands)
			return
		}
		for s := range 4 {
			if allowedMask[i]&(1<<s) == 0 || need[s] == 0 {
				continue
			}
			need[s]--
			hands[s] = hands[s].Add(cards[i])
			rec(i + 1)
			hands[s] = hands[s].Remove(cards[i])
			need[s]++
		}
	}
	rec(0)
	return out
}

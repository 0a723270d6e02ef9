// Package dd is a double-dummy solver for Konter a Matt: given every hand open, it finds the card
// points a team takes from here on with best play by all four seats. The search players use it on
// sampled deals; the duel harness uses it on the true deal to measure how good a decision was.
//
// It is an alpha-beta search over bit sets with precomputed per-trump tables, move ordering,
// pruning of equivalent cards and a transposition table at trick boundaries. Narrow windows make
// it cheap to ask only "does the team reach 21?" (see Solver.Class).
package dd

import (
	"math/bits"

	"github.com/kontermatt/kontermatt/core"
)

// table holds everything about the cards that depends only on the trump suit.
type table struct {
	trumps uint32
	plain  [5]uint32 // plain cards of each printed suit
	tstr   [32]int8  // trump strength 17..25 (higher wins), 0 for plain cards
	rank   [32]int8  // printed rank 1..6 for plain cards
	suit   [32]int8  // printed suit
	pts    [32]int8
	above  [32][9]int8 // the cards of the same effective suit above the card, nearest first
	nAbove [32]int8
}

var tables = func() (t [5]table) {
	for _, x := range core.Suits {
		tb := &t[x]
		tb.trumps = uint32(core.Trumps(x))
		order := core.TrumpOrder(x)
		for i, c := range order {
			tb.tstr[c] = int8(16 + len(order) - i)
			for j := i - 1; j >= 0; j-- {
				tb.above[c][tb.nAbove[c]] = int8(order[j])
				tb.nAbove[c]++
			}
		}
		for _, s := range core.Suits {
			tb.plain[s] = uint32(core.PlainOf(s, x))
			var plainOrder []core.Card // high to low: ascending card numbers
			for c := range core.Card(25) {
				if c.Valid() && tb.plain[s]&(1<<c) != 0 {
					plainOrder = append(plainOrder, c)
				}
			}
			for i, c := range plainOrder {
				for j := i - 1; j >= 0; j-- {
					tb.above[c][tb.nAbove[c]] = int8(plainOrder[j])
					tb.nAbove[c]++
				}
			}
		}
		for c := core.Card(1); c <= 24; c++ {
			tb.rank[c] = int8(c.Rank())
			tb.suit[c] = int8(c.Suit())
			tb.pts[c] = int8(c.Points())
		}
	}
	return t
}()

// trickState is the current trick: its cards and, after k cards, the winner and the points.
type trickState struct {
	trick   [4]int8
	winSeat [5]int8
	winStr  [5]int8
	tpts    [5]int8
}

// rankMasks are the aces, kings, queens and jacks of all suits.
var rankMasks = func() (m [4]uint32) {
	for _, s := range core.Suits {
		for i, r := range []core.Rank{core.Ace, core.King, core.Queen, core.Jack} {
			m[i] |= 1 << core.NewCard(s, r)
		}
	}
	return m
}()

// points is the card points in a set.
func points(set uint32) int {
	return 4*bits.OnesCount32(set&rankMasks[0]) + 3*bits.OnesCount32(set&rankMasks[1]) +
		2*bits.OnesCount32(set&rankMasks[2]) + bits.OnesCount32(set&rankMasks[3])
}

// ttEntry is a bound on the points the maximizing team takes from a trick boundary on.
type ttEntry struct {
	key  uint32 // remaining cards << 2 | leader, plus 1 so that zero means empty
	gen  uint32
	lo   int8
	hi   int8
	best int8
}

const ttBits = 16

// Solver solves positions of one deal after another. It keeps its transposition table between
// calls for the same deal; Reset starts a new deal. A Solver is not safe for concurrent use.
type Solver struct {
	tb      *table
	trump   core.Suit
	hands   [4]uint32
	maxTeam int
	leader  int
	n       int // cards in the current trick
	trickState
	left  int          // cards left in the hands
	saved []trickState // completed tricks Play took the state of, for Undo

	tt  []ttEntry
	gen uint32

	nodes   uint64
	stop    func() bool
	stopped bool

	modeled uint8 // seats (bit s for seat s) that play by model instead of being searched
	model   Model
}

// Model is the card a seat plays when it is not searched but modelled (a seat believed to play by
// fixed rules): from its hand, the cards the other seats still hold, the trump and the trick so
// far. It must give a legal card and depend on nothing else, since positions reached twice share
// one transposition-table entry.
type Model func(seat core.Seat, hand, others core.CardSet, trump core.Suit, trick core.Trick) core.Card

// SetModel makes the seats in mask (bit s for seat s) play by m, until the next Reset: their
// moves are m's card alone, in the search and in Moves.
func (s *Solver) SetModel(mask uint8, m Model) {
	s.modeled, s.model = mask, m
	if m == nil {
		s.modeled = 0
	}
}

// modelNodes is what a model's answer counts in Nodes, so that a budget of nodes stays a budget
// of time: Easy's rule costs some 150 ns a call, a node some 56 ns (CPU time over Strong's
// searches in tricks 2 to 4 of games among Easy players, on a loaded machine).
const modelNodes = 3

// modelMove is the card (as a one-card mask) that modelled seat p plays.
func (s *Solver) modelMove(p int) uint32 {
	s.nodes += modelNodes
	var others uint32
	for i, h := range s.hands {
		if i != p {
			others |= h
		}
	}
	t := core.Trick{Leader: core.Seat(s.leader), N: s.n}
	for i := range s.n {
		t.Cards[i] = core.Card(s.trick[i])
	}
	return 1 << s.model(core.Seat(p), core.CardSet(s.hands[p]), core.CardSet(others), s.trump, t)
}

// NewSolver makes a solver with an empty transposition table.
func NewSolver() *Solver {
	return &Solver{tt: make([]ttEntry, 1<<ttBits)}
}

// Position is what the solver needs: the trump suit, every seat's hand, the current trick.
type Position struct {
	Trump  core.Suit
	Hands  [4]core.CardSet
	Leader core.Seat   // the seat that led (or leads) the current trick
	Trick  []core.Card // the cards of the current trick so far, in order
}

// Reset loads a position and clears the transposition table (cheaply, by generation); team is the
// team whose points Value counts.
func (s *Solver) Reset(p Position, team core.Team) {
	s.tb = &tables[p.Trump]
	s.trump = p.Trump
	s.maxTeam = int(team)
	s.leader = int(p.Leader)
	s.left = 0
	for i, h := range p.Hands {
		s.hands[i] = uint32(h)
		s.left += h.Len()
	}
	s.n = 0
	s.saved = s.saved[:0]
	s.winSeat[0], s.winStr[0], s.tpts[0] = -1, 0, 0
	for _, c := range p.Trick {
		s.push(int8(c))
	}
	s.gen++
	if s.gen == 0 {
		clear(s.tt)
		s.gen = 1
	}
	s.stopped = false
	s.modeled, s.model = 0, nil
}

// SetStop sets a function polled every 1,024 nodes (about 0.1 ms of solving, ten times that
// under the race detector, so a decision's deadline holds there too); when it reports true the search
// unwinds at once and Stopped reports true. Results of a stopped search are meaningless.
func (s *Solver) SetStop(f func() bool) { s.stop = f }

// Stopped reports whether the last search was stopped.
func (s *Solver) Stopped() bool { return s.stopped }

// Poll asks the stop function now, as the search does every 1,024 nodes, for a caller
// that walks the tree itself with Play and Undo; it reports Stopped.
func (s *Solver) Poll() bool {
	if !s.stopped && s.stop != nil && s.stop() {
		s.stopped = true
	}
	return s.stopped
}

// Nodes is the number of nodes searched since the solver was made.
func (s *Solver) Nodes() uint64 { return s.nodes }

// ToMove is the seat to play in the loaded position.
func (s *Solver) ToMove() core.Seat { return core.Seat((s.leader + s.n) & 3) }

// push adds card c to the current trick (the hand already lost it).
func (s *Solver) push(c int8) {
	tb := s.tb
	n := s.n
	p := int8((s.leader + n) & 3)
	var str int8
	if t := tb.tstr[c]; t != 0 {
		str = t
	} else if n == 0 || (tb.tstr[s.trick[0]] == 0 && tb.suit[c] == tb.suit[s.trick[0]]) {
		str = tb.rank[c]
	}
	s.trick[n] = c
	if str > s.winStr[n] {
		s.winSeat[n+1], s.winStr[n+1] = p, str
	} else {
		s.winSeat[n+1], s.winStr[n+1] = s.winSeat[n], s.winStr[n]
	}
	s.tpts[n+1] = s.tpts[n] + tb.pts[c]
	s.n = n + 1
}

// Legal is the set of cards the seat to move may play.
func (s *Solver) Legal() core.CardSet { return core.CardSet(s.legal((s.leader + s.n) & 3)) }

func (s *Solver) legal(p int) uint32 {
	h := s.hands[p]
	if s.n == 0 {
		return h
	}
	tb := s.tb
	led := s.trick[0]
	tr := h & tb.trumps
	if tb.tstr[led] != 0 {
		if tr != 0 {
			return tr
		}
		return h
	}
	if f := h & tb.plain[tb.suit[led]]; f != 0 {
		return f | tr
	}
	return h
}

// live is every card still in play: the hands and the current trick.
func (s *Solver) live() uint32 {
	l := s.hands[0] | s.hands[1] | s.hands[2] | s.hands[3]
	for i := 0; i < s.n; i++ {
		l |= 1 << s.trick[i]
	}
	return l
}

// distinct removes cards equivalent to a higher card of the same hand: the nearest live card
// above them in their effective suit is in the same set and has the same points.
func (s *Solver) distinct(set uint32) uint32 { return s.distinctIn(set, s.live()) }

func (s *Solver) distinctIn(set, live uint32) uint32 {
	tb := s.tb
	out := set
	for m := set; m != 0; m &= m - 1 {
		c := bits.TrailingZeros32(m)
		for i := int8(0); i < tb.nAbove[c]; i++ {
			a := tb.above[c][i]
			if live&(1<<a) == 0 {
				continue
			}
			if set&(1<<a) != 0 && tb.pts[a] == tb.pts[c] {
				out &^= 1 << c
			}
			break
		}
	}
	return out
}

// Moves gives the legal cards of the seat to move with equivalent cards removed: playing any of
// the removed ones gives the same value as a kept one.
func (s *Solver) Moves() core.CardSet {
	if p := (s.leader + s.n) & 3; s.modeled&(1<<p) != 0 {
		return core.CardSet(s.modelMove(p))
	}
	return core.CardSet(s.distinct(s.legal((s.leader + s.n) & 3)))
}

// Play plays card c for the seat to move; Undo takes it back. The caller makes sure it is legal.
func (s *Solver) Play(c core.Card) (gain int, trickDone bool, saved int) {
	p := (s.leader + s.n) & 3
	s.hands[p] &^= 1 << c
	s.left--
	s.push(int8(c))
	if s.n < 4 {
		return 0, false, 0
	}
	w := int(s.winSeat[4])
	if w&1 == s.maxTeam {
		gain = int(s.tpts[4])
	}
	saved = s.leader
	s.saved = append(s.saved, s.trickState)
	s.leader, s.n = w, 0
	return gain, true, saved
}

// Undo takes back the card Play played, given what Play returned.
func (s *Solver) Undo(c core.Card, trickDone bool, saved int) {
	if trickDone {
		s.trickState = s.saved[len(s.saved)-1]
		s.saved = s.saved[:len(s.saved)-1]
		s.leader, s.n = saved, 4
	}
	s.n--
	p := (s.leader + s.n) & 3
	s.hands[p] |= 1 << c
	s.left++
}

// Value is the exact number of points the team takes from the loaded position on, the cards of
// the current trick included.
func (s *Solver) Value() int { return s.Search(-1, 41) }

// Search is a fail-soft alpha-beta search of the points the team takes from here on: a result r
// with alpha < r < beta is exact, r <= alpha is an upper bound, r >= beta a lower bound.
func (s *Solver) Search(alpha, beta int) int {
	return s.search(alpha, beta)
}

// AtLeast reports whether the team takes at least t points from here on (a null-window search).
func (s *Solver) AtLeast(t int) bool { return s.search(t-1, t) >= t }

func (s *Solver) search(alpha, beta int) int {
	s.nodes++
	if s.nodes&1023 == 0 && s.stop != nil && !s.stopped && s.stop() {
		s.stopped = true
	}
	if s.stopped {
		return alpha
	}
	n := s.n
	var e *ttEntry
	var key uint32
	var lo0, hi0 int
	best := int8(-1)
	if n == 0 {
		if s.left == 0 {
			return 0
		}
		rem := s.hands[0] | s.hands[1] | s.hands[2] | s.hands[3]
		if s.left == 4 {
			return s.lastTrick()
		}
		remPts := points(rem)
		if remPts <= alpha {
			return remPts
		}
		if beta <= 0 {
			return 0
		}
		key = (rem<<2 | uint32(s.leader)) + 1
		e = &s.tt[(key*0x9E3779B1)>>(32-ttBits)]
		lo, hi := 0, remPts
		if e.key == key && e.gen == s.gen {
			lo, hi = int(e.lo), int(e.hi)
			if lo >= beta {
				return lo
			}
			if hi <= alpha {
				return hi
			}
			if lo == hi {
				return lo
			}
			best = e.best
		} else {
			e.key, e.gen, e.lo, e.hi, e.best = key, s.gen, int8(lo), int8(hi), -1
		}
		lo0, hi0 = lo, hi
		if lo > alpha {
			alpha = lo
		}
		if hi < beta {
			beta = hi
		}
	}
	p := (s.leader + n) & 3
	maxing := p&1 == s.maxTeam
	var moves uint32
	if s.modeled&(1<<p) != 0 {
		moves = s.modelMove(p)
	} else if moves = s.legal(p); moves&(moves-1) != 0 {
		moves = s.distinct(moves)
	}
	var order [6]int8
	k := s.order(moves, p, &order, best)
	a0, b0 := alpha, beta
	var bestV int
	var bestC int8 = -1
	if maxing {
		bestV = -1
	} else {
		bestV = 99
	}
	for i := range k {
		c := order[i]
		s.hands[p] &^= 1 << c
		s.left--
		s.push(c)
		var v int
		if s.n == 4 {
			w := int(s.winSeat[4])
			gain := 0
			if w&1 == s.maxTeam {
				gain = int(s.tpts[4])
			}
			saved, st := s.leader, s.trickState
			s.leader, s.n = w, 0
			v = gain + s.search(alpha-gain, beta-gain)
			s.leader, s.n, s.trickState = saved, 4, st
		} else {
			v = s.search(alpha, beta)
		}
		s.n--
		s.hands[p] |= 1 << c
		s.left++
		if s.stopped {
			return alpha
		}
		if maxing {
			if v > bestV {
				bestV, bestC = v, c
				if v > alpha {
					alpha = v
					if alpha >= beta {
						break
					}
				}
			}
		} else {
			if v < bestV {
				bestV, bestC = v, c
				if v < beta {
					beta = v
					if alpha >= beta {
						break
					}
				}
			}
		}
	}
	if e != nil {
		// The window was narrowed to the stored bounds: a result beyond them means the bound.
		if bestV < lo0 {
			bestV = lo0
		}
		if bestV > hi0 {
			bestV = hi0
		}
	}
	if e != nil && e.key == key && e.gen == s.gen {
		if bestV > a0 && int(e.lo) < bestV {
			e.lo = int8(bestV)
		}
		if bestV < b0 && int(e.hi) > bestV {
			e.hi = int8(bestV)
		}
		if bestV <= a0 && int(e.hi) > bestV {
			e.hi = int8(bestV)
		}
		if bestV >= b0 && int(e.lo) < bestV {
			e.lo = int8(bestV)
		}
		e.best = bestC
	}
	return bestV
}

// lastTrick plays out the forced last trick (overwriting the trick state, which the caller
// restores).
func (s *Solver) lastTrick() int {
	ld := s.leader
	for i := range 4 {
		p := (ld + i) & 3
		s.push(int8(bits.TrailingZeros32(s.hands[p])))
	}
	s.n = 0
	if int(s.winSeat[4])&1 == s.maxTeam {
		return int(s.tpts[4])
	}
	return 0
}

// order writes the moves into out, likeliest best first: the transposition table's move, then
// by a cheap heuristic.
func (s *Solver) order(moves uint32, p int, out *[6]int8, first int8) int {
	tb := s.tb
	n := s.n
	var score [6]int
	k := 0
	var partnerWins bool
	var ledTrump bool
	var ledSuit int8
	if n > 0 {
		partnerWins = int(s.winSeat[n])&1 == p&1
		ledTrump = tb.tstr[s.trick[0]] != 0
		ledSuit = tb.suit[s.trick[0]]
	}
	live := uint32(0)
	if n == 0 {
		live = s.live()
	}
	for m := moves; m != 0; m &= m - 1 {
		c := int8(bits.TrailingZeros32(m))
		var sc int
		pts := int(tb.pts[c])
		switch {
		case c == first:
			sc = 1000
		case n == 0:
			// Lead a card that is the highest left of its suit first, then low cards.
			top := true
			for i := int8(0); i < tb.nAbove[c]; i++ {
				if live&(1<<tb.above[c][i]) != 0 {
					top = false
					break
				}
			}
			if top {
				sc = 100 + pts
				if tb.tstr[c] != 0 {
					sc += 20
				}
			} else {
				sc = 50 - pts - int(tb.tstr[c])
			}
		default:
			var str int8
			if t := tb.tstr[c]; t != 0 {
				str = t
			} else if !ledTrump && tb.suit[c] == ledSuit {
				str = tb.rank[c]
			}
			beats := str > s.winStr[n]
			switch {
			case partnerWins && !beats && n == 3:
				sc = 100 + pts // give points to the partner
			case partnerWins && !beats:
				sc = 90 - pts - int(tb.tstr[c])
			case partnerWins:
				sc = 50 - int(str)
			case beats:
				sc = 100 + pts - int(str) // win cheaply
			default:
				sc = 50 - pts - int(tb.tstr[c]) // throw a low card
			}
		}
		// insertion sort, descending
		j := k
		for j > 0 && score[j-1] < sc {
			score[j], out[j] = score[j-1], out[j-1]
			j--
		}
		out[j], score[j] = c, sc
		k++
	}
	return k
}

// Distinct removes from set the cards that are equivalent to a higher card of set: the nearest
// card above them in their effective suit, among live (the cards still in play), is in set and
// has the same points. Playing a removed card gives the same result as playing that higher one.
func Distinct(trump core.Suit, set, live core.CardSet) core.CardSet {
	s := Solver{tb: &tables[trump]}
	return core.CardSet(s.distinctIn(uint32(set), uint32(live)))
}

package core

import (
	"fmt"
	"strconv"
)

// Seat is a place at the table, 0..3 in playing order. NoSeat marks "nobody".
type Seat int8

// NoSeat is no seat at all.
const NoSeat Seat = -1

// Next is the seat that plays after s.
func (s Seat) Next() Seat { return (s + 1) & 3 }

// Plus is the seat n places after s in playing order.
func (s Seat) Plus(n int) Seat { return Seat((int(s) + n) & 3) }

// Partner is the seat opposite s.
func (s Seat) Partner() Seat { return (s + 2) & 3 }

// Team is the seat's team: seats 0 and 2 are team A, 1 and 3 team B.
func (s Seat) Team() Team { return Team(s & 1) }

// Valid reports whether s is one of the four seats.
func (s Seat) Valid() bool { return s >= 0 && s <= 3 }

func (s Seat) String() string {
	if !s.Valid() {
		return "-"
	}
	return strconv.Itoa(int(s))
}

// Team is one of the two partnerships.
type Team uint8

// The two teams.
const (
	TeamA Team = 0 // seats 0 and 2
	TeamB Team = 1 // seats 1 and 3
)

// Other is the opposing team.
func (t Team) Other() Team { return t ^ 1 }

// Seats are the team's two seats.
func (t Team) Seats() [2]Seat { return [2]Seat{Seat(t), Seat(t) + 2} }

func (t Team) String() string {
	if t == TeamA {
		return "A"
	}
	return "B"
}

// Direction only changes how seats are shown; play always goes 0, 1, 2, 3.
type Direction uint8

// The two directions of play.
const (
	Clockwise Direction = iota
	Anticlockwise
)

func (d Direction) String() string {
	if d == Anticlockwise {
		return "anticlockwise"
	}
	return "clockwise"
}

// DrawPenalty is what the trump team gets added on a 20-20 draw.
type DrawPenalty uint8

// The two draw penalties.
const (
	DrawStake DrawPenalty = iota // the game's stake
	DrawFlat1                    // exactly one stripe
)

func (p DrawPenalty) String() string {
	if p == DrawFlat1 {
		return "flat1"
	}
	return "stake"
}

// Rules are a table's options. The zero value is not valid: start from DefaultRules.
type Rules struct {
	Direction      Direction
	Stripes        int // open stripes each team starts with, MinStripes..MaxStripes
	DrawPenalty    DrawPenalty
	AllTricksBonus bool // one more stripe when the losers took no trick
	Announcements  bool
}

// The range of Rules.Stripes: a match needs a stripe to cross out, and a sheet longer than 20
// stripes would take an evening per match (and no longer fits the picture).
const (
	MinStripes = 1
	MaxStripes = 20
)

// DefaultRules are the rules RULES.md names as defaults.
func DefaultRules() Rules {
	return Rules{Direction: Clockwise, Stripes: 9, DrawPenalty: DrawStake, AllTricksBonus: true, Announcements: true}
}

// Validate reports options out of range, wrapping ErrBadRules.
func (r Rules) Validate() error {
	if r.Stripes < MinStripes || r.Stripes > MaxStripes {
		return fmt.Errorf("%w: stripes must be %d..%d, not %d", ErrBadRules, MinStripes, MaxStripes, r.Stripes)
	}
	if r.Direction > Anticlockwise || r.DrawPenalty > DrawFlat1 {
		return fmt.Errorf("%w: unknown direction or draw penalty", ErrBadRules)
	}
	return nil
}

// The three permanent trumps.
var (
	QueenSpades   = NewCard(Spades, Queen)
	QueenHearts   = NewCard(Hearts, Queen)
	QueenDiamonds = NewCard(Diamonds, Queen)
	QueenClubs    = NewCard(Clubs, Queen)
)

// trumpTables are precomputed per trump suit so that legality and trick resolution are a few
// bit operations: the search players call them millions of times per decision.
type trumpTable struct {
	trumps   CardSet    // every trump
	plain    [5]CardSet // the plain (non-trump) cards of each printed suit
	power    [32]uint8  // trump strength, 1 (lowest) .. 9 (ace); 0 for plain cards
	strength [32]uint8  // how a card ranks in a trick it can win: 16+power for trumps, else its rank
	order    []Card     // trumps from highest to lowest
}

// trumpTables has eight entries so that indexing with x&7 needs no bounds check; entries 0 and
// 5..7 (no trump suit) have no trumps.
var trumpTables = func() (t [8]trumpTable) {
	for _, x := range Suits {
		order := []Card{NewCard(x, Ace), QueenSpades, QueenHearts, QueenDiamonds, NewCard(x, King)}
		if x == Clubs {
			order = append(order, QueenClubs)
		}
		order = append(order, NewCard(x, Jack), NewCard(x, Ten), NewCard(x, Nine))
		tt := &t[x]
		tt.order = order
		for i, c := range order {
			tt.trumps = tt.trumps.Add(c)
			tt.power[c] = uint8(len(order) - i)
		}
		for _, s := range Suits {
			tt.plain[s] = suitMask[s] &^ tt.trumps
		}
	}
	for x := range t {
		for c := Card(1); c <= 24; c++ {
			t[x].strength[c] = uint8(c.Rank())
			if p := t[x].power[c]; p != 0 {
				t[x].strength[c] = 16 + p
			}
		}
	}
	return t
}()

// tableIndex maps anything that is not a real suit to the empty table of NoSuit.
func tableIndex(x Suit) Suit {
	if x > Clubs {
		return NoSuit
	}
	return x
}

func tableOf(x Suit) *trumpTable { return &trumpTables[tableIndex(x)&7] }

// Trumps is the set of trumps when x is the trump suit: its cards and the three permanent queens.
func Trumps(x Suit) CardSet { return tableOf(x).trumps }

// TrumpOrder lists the trumps of suit x from highest to lowest.
func TrumpOrder(x Suit) []Card { return append([]Card(nil), tableOf(x).order...) }

// IsTrump reports whether c is a trump when x is the trump suit.
func IsTrump(c Card, x Suit) bool { return tableOf(x).trumps.Has(c) }

// PlainOf gives the plain cards of printed suit s when x is trump: the suit a player must follow
// with. A hand whose only heart is QH holds no plain hearts.
func PlainOf(s Suit, x Suit) CardSet { return tableOf(x).plain[tableIndex(s)] }

// EffectiveSuit is the suit a card counts as: x for trumps, else its printed suit.
func EffectiveSuit(c Card, x Suit) Suit {
	if IsTrump(c, x) {
		return x
	}
	return c.Suit()
}

// Legal gives the cards of hand that may be played on a trick led by led (NoCard when leading),
// with x as the trump suit.
func Legal(hand CardSet, led Card, x Suit) CardSet {
	if !led.Valid() {
		return hand
	}
	return legalFor(hand, followSet(led, x), Trumps(x))
}

// followSet is what a trick led by led asks for: every trump when a trump led, else the plain
// cards of the led suit. It is empty before the lead.
func followSet(led Card, x Suit) CardSet {
	tt := tableOf(x)
	if tt.trumps.Has(led) {
		return tt.trumps
	}
	return tt.plain[led.Suit()]
}

// legalFor is the following rule as one bit operation: a hand that can follow (follow being the
// trumps on a trump lead, or the led plain suit) may play those cards or any trump; a hand that
// cannot, or a leader (follow empty), may play anything.
func legalFor(hand, follow, trumps CardSet) CardSet {
	if hand&follow != 0 {
		return hand & (follow | trumps)
	}
	return hand
}

// TrickWinner gives the index (0..n-1) of the winning card among cards, the first of which led;
// 0 for no cards.
func TrickWinner(cards []Card, x Suit) int {
	if len(cards) == 0 {
		return 0
	}
	tt := tableOf(x)
	follow := followSet(cards[0], x) | tt.trumps
	best, bestScore := 0, uint8(0)
	for i, c := range cards {
		if follow.Has(c) && tt.strength[c&31] > bestScore {
			best, bestScore = i, tt.strength[c&31]
		}
	}
	return best
}

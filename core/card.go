// Package core knows the whole game of Konter a Matt: cards, trumps, legal play, scoring, matches,
// per-seat views and portable records. It has no I/O, no clock and no global randomness, so the
// same moves always give the same game on every machine.
package core

import (
	"errors"
	"fmt"
	"math/bits"
	"strings"
)

// Suit is one of the four suits; the zero value is NoSuit.
type Suit uint8

// The suits in the order records and legal-card lists sort them.
const (
	NoSuit Suit = iota
	Spades
	Hearts
	Diamonds
	Clubs
)

// Suits lists the four real suits in canonical order.
var Suits = [4]Suit{Spades, Hearts, Diamonds, Clubs}

var suitLetters = [5]string{"?", "S", "H", "D", "C"}
var suitSymbols = [5]string{"?", "♠", "♥", "♦", "♣"}

// String gives the canonical letter: S, H, D or C.
func (s Suit) String() string {
	if s > Clubs {
		return "?"
	}
	return suitLetters[s]
}

// Symbol gives the suit symbol used in chat: ♠ ♥ ♦ ♣.
func (s Suit) Symbol() string {
	if s > Clubs {
		return "?"
	}
	return suitSymbols[s]
}

// Red reports whether the suit is printed in red.
func (s Suit) Red() bool { return s == Hearts || s == Diamonds }

// Valid reports whether s is one of the four suits.
func (s Suit) Valid() bool { return s >= Spades && s <= Clubs }

// MarshalText writes the canonical letter.
func (s Suit) MarshalText() ([]byte, error) {
	if !s.Valid() {
		return nil, fmt.Errorf("%w: no suit", ErrInvalidSuit)
	}
	return []byte(s.String()), nil
}

// UnmarshalText accepts what ParseSuit accepts.
func (s *Suit) UnmarshalText(b []byte) error {
	v, err := ParseSuit(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// Rank is a card's rank; the zero value is NoRank. Higher values beat lower ones among plain cards.
type Rank uint8

// The six ranks, lowest first.
const (
	NoRank Rank = iota
	Nine
	Ten
	Jack
	Queen
	King
	Ace
)

var rankNames = [7]string{"?", "9", "10", "J", "Q", "K", "A"}

// String gives the canonical rank: A K Q J 10 9.
func (r Rank) String() string {
	if r > Ace {
		return "?"
	}
	return rankNames[r]
}

// Points is the rank's card points: A 4, K 3, Q 2, J 1, 10 and 9 nothing.
func (r Rank) Points() int { return int(rankPoints[r&7]) }

var rankPoints = [8]uint8{0, 0, 0, 1, 2, 3, 4, 0}

// Card is one of the 24 cards; the zero value is NoCard. Cards are numbered 1..24 so that their
// numeric order is the canonical sort order (suits S H D C, then ranks A K Q J 10 9) and each card
// is a bit position of a CardSet.
type Card uint8

// NoCard is the zero Card.
const NoCard Card = 0

// NewCard makes the card of suit s and rank r, or NoCard if either is invalid.
func NewCard(s Suit, r Rank) Card {
	if !s.Valid() || r < Nine || r > Ace {
		return NoCard
	}
	return Card(1 + (uint8(s)-1)*6 + uint8(Ace-r))
}

// Suit is the printed suit of the card (QS has the printed suit spades even though it is a trump).
func (c Card) Suit() Suit {
	if !c.Valid() {
		return NoSuit
	}
	return Suit((c-1)/6 + 1)
}

// Rank is the printed rank of the card.
func (c Card) Rank() Rank {
	if !c.Valid() {
		return NoRank
	}
	return Ace - Rank((c-1)%6)
}

// Valid reports whether c is one of the 24 cards.
func (c Card) Valid() bool { return c >= 1 && c <= 24 }

// Points is the card's point value, which never depends on trump.
func (c Card) Points() int { return int(cardPoints[c&31]) }

var cardPoints = func() (p [32]uint8) {
	for c := Card(1); c <= 24; c++ {
		p[c] = rankPoints[c.Rank()]
	}
	return p
}()

// String gives the canonical form, for example QS or 10H.
func (c Card) String() string {
	if !c.Valid() {
		return "??"
	}
	return cardNames[c]
}

// cardNames are the canonical forms, so that printing a card allocates nothing.
var cardNames = func() (n [25]string) {
	for c := Card(1); c <= 24; c++ {
		n[c] = c.Rank().String() + c.Suit().String()
	}
	return n
}()

// Chat gives the form shown to players, for example Q♠ or 10♥.
func (c Card) Chat() string {
	if !c.Valid() {
		return "??"
	}
	return c.Rank().String() + c.Suit().Symbol()
}

// MarshalText writes the canonical form, so JSON holds "QS".
func (c Card) MarshalText() ([]byte, error) {
	if !c.Valid() {
		return nil, fmt.Errorf("%w: no card", ErrInvalidCard)
	}
	return []byte(c.String()), nil
}

// UnmarshalText accepts every form ParseCard accepts.
func (c *Card) UnmarshalText(b []byte) error {
	v, err := ParseCard(string(b))
	if err != nil {
		return err
	}
	*c = v
	return nil
}

// ParseError says which input could not be read; it wraps ErrInvalidCard or ErrInvalidSuit.
type ParseError struct {
	Input string
	Err   error
}

func (e *ParseError) Error() string { return fmt.Sprintf("%v: %q", e.Err, e.Input) }
func (e *ParseError) Unwrap() error { return e.Err }

// Errors for input that names no card or suit.
var (
	ErrInvalidCard = errors.New("not a card")
	ErrInvalidSuit = errors.New("not a suit")
)

// normalize trims, upper-cases ASCII letters and removes the variation selectors phones add to ♥
// and ♦ (U+FE0F emoji style, U+FE0E text style). Only ASCII is case-folded: strings.ToUpper would
// turn the long s "ſ" into "S" and accept junk such as "Qſ" as a card.
func normalize(s string) string {
	s = strings.TrimSpace(s)
	if strings.Contains(s, "\ufe0f") || strings.Contains(s, "\ufe0e") {
		s = strings.NewReplacer("\ufe0f", "", "\ufe0e", "").Replace(s)
		s = strings.TrimSpace(s)
	}
	for i := 0; i < len(s); i++ {
		if 'a' <= s[i] && s[i] <= 'z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'a' <= b[j] && b[j] <= 'z' {
					b[j] -= 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// ParseSuit reads a suit letter (S H D C) or symbol (♠♥♦♣, also the outlined ♤♡♢♧), in any case.
func ParseSuit(s string) (Suit, error) {
	if v, ok := suitByToken(normalize(s)); ok {
		return v, nil
	}
	return NoSuit, &ParseError{Input: s, Err: ErrInvalidSuit}
}

func suitByToken(t string) (Suit, bool) {
	switch t {
	case "S", "♠", "♤":
		return Spades, true
	case "H", "♥", "♡":
		return Hearts, true
	case "D", "♦", "♢":
		return Diamonds, true
	case "C", "♣", "♧":
		return Clubs, true
	}
	return NoSuit, false
}

func rankByToken(t string) (Rank, bool) {
	switch t {
	case "A":
		return Ace, true
	case "K":
		return King, true
	case "Q":
		return Queen, true
	case "J":
		return Jack, true
	case "10":
		return Ten, true
	case "9":
		return Nine, true
	}
	return NoRank, false
}

// ParseCard reads a card as rank then suit or suit then rank, in any case, with a suit letter or
// symbol: QS, 10h, Q♠, ♠Q. Anything else gives a *ParseError wrapping ErrInvalidCard.
func ParseCard(s string) (Card, error) {
	t := normalize(s)
	// The suit is one rune at either end; the rank is the rest.
	if t != "" {
		runes := []rune(t)
		if len(runes) >= 2 {
			if suit, ok := suitByToken(string(runes[len(runes)-1])); ok {
				if rank, ok := rankByToken(strings.TrimSpace(string(runes[:len(runes)-1]))); ok {
					return NewCard(suit, rank), nil
				}
			}
			if suit, ok := suitByToken(string(runes[0])); ok {
				if rank, ok := rankByToken(strings.TrimSpace(string(runes[1:]))); ok {
					return NewCard(suit, rank), nil
				}
			}
		}
	}
	return NoCard, &ParseError{Input: s, Err: ErrInvalidCard}
}

// MustCards parses space-separated cards and panics on a bad one; for tests and examples only.
func MustCards(s string) []Card {
	var out []Card
	for _, f := range strings.Fields(s) {
		c, err := ParseCard(f)
		if err != nil {
			panic(err)
		}
		out = append(out, c)
	}
	return out
}

// MustHands parses a deal of 24 space-separated cards, six per seat in seat order, and panics on
// a bad card or count; for tests and examples only.
func MustHands(s string) [4][6]Card {
	cards := MustCards(s)
	if len(cards) != 24 {
		panic(fmt.Sprintf("core.MustHands: %d cards, want 24", len(cards)))
	}
	var hands [4][6]Card
	for i, c := range cards {
		hands[i/6][i%6] = c
	}
	return hands
}

// CardSet is a set of cards as a bit set: bit c is set when card c is in the set.
type CardSet uint32

// SetOf makes a set of the given cards.
func SetOf(cards ...Card) CardSet {
	var s CardSet
	for _, c := range cards {
		s = s.Add(c)
	}
	return s
}

// FullDeck holds all 24 cards.
const FullDeck CardSet = ((1 << 25) - 1) &^ 1

// Has reports whether c is in s.
func (s CardSet) Has(c Card) bool { return s&(1<<c) != 0 }

// Add returns s with c; a value that is no card (NoCard, for one) leaves s unchanged.
func (s CardSet) Add(c Card) CardSet {
	if !c.Valid() {
		return s
	}
	return s | 1<<c
}

// Remove returns s without c.
func (s CardSet) Remove(c Card) CardSet { return s &^ (1 << c) }

// Len is the number of cards in s.
func (s CardSet) Len() int { return bits.OnesCount32(uint32(s)) }

// Empty reports whether s holds no card.
func (s CardSet) Empty() bool { return s == 0 }

// First is the lowest card in canonical order, or NoCard for an empty set.
func (s CardSet) First() Card {
	if s == 0 {
		return NoCard
	}
	return Card(bits.TrailingZeros32(uint32(s)))
}

// Nth is the n-th card (0-based) in canonical order, or NoCard when s has n or fewer cards.
func (s CardSet) Nth(n int) Card {
	for ; s != 0; n-- {
		if n == 0 {
			return s.First()
		}
		s &= s - 1
	}
	return NoCard
}

// Cards lists the cards of s in canonical order.
func (s CardSet) Cards() []Card {
	out := make([]Card, 0, s.Len())
	for ; s != 0; s &= s - 1 {
		out = append(out, Card(bits.TrailingZeros32(uint32(s))))
	}
	return out
}

// String lists the cards in canonical form, space-separated.
func (s CardSet) String() string {
	parts := make([]string, 0, s.Len())
	for _, c := range s.Cards() {
		parts = append(parts, c.String())
	}
	return strings.Join(parts, " ")
}

// suitMask holds the six cards of each printed suit.
var suitMask = func() (m [5]CardSet) {
	for _, s := range Suits {
		for r := Nine; r <= Ace; r++ {
			m[s] = m[s].Add(NewCard(s, r))
		}
	}
	return m
}()

package core_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kontermatt/kontermatt/core"
)

func TestParseCard(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"QS", "QS"},
		{"qs", "QS"},
		{"Qs", "QS"},
		{"10h", "10H"},
		{"10H", "10H"},
		{"9c", "9C"},
		{"aD", "AD"},
		{"Q♠", "QS"},
		{"♠Q", "QS"},
		{"q♠", "QS"},
		{"♠q", "QS"},
		{"10♦", "10D"},
		{"♦10", "10D"},
		{"K♥\ufe0f", "KH"},   // emoji variation selector, as phones send it
		{"♥\ufe0fK", "KH"},   // before the rank too
		{"J♦\ufe0e", "JD"},   // text variation selector
		{"A♣", "AC"},         //
		{"Q♤", "QS"},         // outlined symbols
		{"♡10", "10H"},       //
		{"9♢", "9D"},         //
		{"J♧", "JC"},         //
		{" QS ", "QS"},       // surrounding space
		{"Q ♠", "QS"},        // a space between rank and symbol
		{"S10", "10S"},       // suit letter first
		{"hq", "QH"},         // suit letter first, lower case
		{"\tkc\n", "KC"},     //
		{"Q\u00a0♥", "QH"},   // a no-break space is space too
		{"10\ufe0f♠", "10S"}, // a stray selector is dropped anywhere
	} {
		t.Run(tc.in, func(t *testing.T) {
			c, err := core.ParseCard(tc.in)
			if err != nil {
				t.Fatalf("ParseCard(%q): %v", tc.in, err)
			}
			if c.String() != tc.want {
				t.Errorf("ParseCard(%q) = %v, want %s", tc.in, c, tc.want)
			}
		})
	}
}

func TestParseCardJunk(t *testing.T) {
	for _, in := range []string{
		"", " ", "Q", "S", "♠", "10", "QQ", "SS", "♠♠", "1S", "11S", "01S", "100S", "0S", "8S", "BS", "ZS",
		"QX", "Q♠♠", "♠Q♠", "QSS", "Q♠S", "Qſ", "ſQ", "１０S", "Q-S", "Q.S", "Q S x", "🂭", "QS9", "S10S",
		"10 S 1", "Q\x00S", "\xffS", "Q\xff", "QK", "Queen of spades", "KONTER",
	} {
		t.Run(in, func(t *testing.T) {
			c, err := core.ParseCard(in)
			var pe *core.ParseError
			if err == nil || c != core.NoCard {
				t.Fatalf("ParseCard(%q) = %v, %v: want an error", in, c, err)
			}
			if !errors.Is(err, core.ErrInvalidCard) || !errors.As(err, &pe) || pe.Input != in {
				t.Errorf("ParseCard(%q): error %v should be a *ParseError wrapping ErrInvalidCard", in, err)
			}
		})
	}
}

func TestParseSuit(t *testing.T) {
	for in, want := range map[string]core.Suit{"S": core.Spades, "h": core.Hearts, "♦\ufe0f": core.Diamonds, " ♧ ": core.Clubs} {
		if got, err := core.ParseSuit(in); err != nil || got != want {
			t.Errorf("ParseSuit(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "X", "SS", "ſ", "spades", "♠♠"} {
		if got, err := core.ParseSuit(in); !errors.Is(err, core.ErrInvalidSuit) {
			t.Errorf("ParseSuit(%q) = %v, %v; want ErrInvalidSuit", in, got, err)
		}
	}
}

func TestCardValues(t *testing.T) {
	total := 0
	for c := core.Card(1); c <= 24; c++ {
		back, err := core.ParseCard(c.String())
		if err != nil || back != c || core.NewCard(c.Suit(), c.Rank()) != c {
			t.Errorf("%v does not round-trip", c)
		}
		if chat, err := core.ParseCard(c.Chat()); err != nil || chat != c {
			t.Errorf("%v: chat form %q does not parse back", c, c.Chat())
		}
		total += c.Points()
	}
	if total != 40 {
		t.Errorf("the deck holds %d points, want 40", total)
	}
	if got := core.FullDeck.String(); got != "AS KS QS JS 10S 9S AH KH QH JH 10H 9H AD KD QD JD 10D 9D AC KC QC JC 10C 9C" {
		t.Errorf("canonical order %s", got)
	}
	if s := core.SetOf(core.NoCard, core.MustCards("QS")[0]); s.Len() != 1 || s.Has(core.NoCard) {
		t.Errorf("SetOf(NoCard, QS) = %v (%d cards)", s, s.Len())
	}
	var cards []core.Card
	if err := json.Unmarshal([]byte(`["q♠", "10h", "♦A"]`), &cards); err != nil || core.SetOf(cards...).String() != "QS 10H AD" {
		t.Errorf("JSON cards %v, %v", cards, err)
	}
	if b, err := json.Marshal(core.MustCards("Q♠ 10♥")); err != nil || string(b) != `["QS","10H"]` {
		t.Errorf("marshal: %s, %v", b, err)
	}
	if _, err := json.Marshal(core.NoCard); !errors.Is(err, core.ErrInvalidCard) {
		t.Errorf("marshal NoCard: %v", err)
	}
	if err := json.Unmarshal([]byte(`["XX"]`), &cards); !errors.Is(err, core.ErrInvalidCard) {
		t.Errorf("unmarshal XX: %v", err)
	}
}

// shuffleOnly hides every method of a *rand.Rand but Shuffle, so DealHands takes its general path.
type shuffleOnly struct{ r *rand.Rand }

func (s shuffleOnly) Shuffle(n int, swap func(i, j int)) { s.r.Shuffle(n, swap) }

// TestDealHandsSameDeal checks that DealHands's direct path for *rand.Rand deals exactly what
// Rand.Shuffle deals, so a stored seed keeps giving the same cards.
func TestDealHandsSameDeal(t *testing.T) {
	for seed := range uint64(200) {
		dealer := core.Seat(seed & 3)
		fast := core.DealHands(rand.New(rand.NewPCG(seed, 7)), dealer)
		general := core.DealHands(shuffleOnly{rand.New(rand.NewPCG(seed, 7))}, dealer)
		if fast != general {
			t.Fatalf("seed %d: %v, via Shuffle %v", seed, fast, general)
		}
		if err := core.CheckDeal(fast); err != nil {
			t.Fatal(err)
		}
	}
}

func ExampleDealHands() {
	r := rand.New(rand.NewPCG(2024, 11))
	hands := core.DealHands(r, 3) // seat 3 deals, seat 0 is forehand
	for s, h := range hands {
		fmt.Println(s, h[:3], h[3:])
	}
	// Output:
	// 0 [KD 10C JS] [JC 10D KC]
	// 1 [AS AH 9S] [QS 9D JH]
	// 2 [KH 9C QC] [QH 10H QD]
	// 3 [9H KS 10S] [JD AC AD]
}

// MustHands deals six cards per seat in seat order, and refuses any other count than 24.
func TestMustHands(t *testing.T) {
	h := core.MustHands("AH KH AS 9C 10D 9H KS 10S AD KC 10C JH QS KD AC 9D 9S 10H QH QD JS QC JC JD")
	if h[1][0] != core.MustCards("KS")[0] || h[3][5] != core.MustCards("JD")[0] {
		t.Errorf("seat 1 starts with %v, seat 3 ends with %v", h[1][0], h[3][5])
	}
	defer func() {
		if recover() == nil {
			t.Error("23 cards: no panic")
		}
	}()
	core.MustHands("AH KH AS 9C 10D 9H KS 10S AD KC 10C JH QS KD AC 9D 9S 10H QH QD JS QC JC")
}

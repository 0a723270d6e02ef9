package robot

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/kontermatt/kontermatt/core"
)

// The trump table replaces a search at the table: for every first packet and suit it holds the
// share of deals the trump team wins and draws, solved with all hands open over many random
// deals offline (trumpgen, the program beside this package, made trumps.txt). The choice is then
// the suit with the best expected stripes (or match chance) for the board, in no time; the coach
// reads each suit's chances from it too.
//
// Measured (BenchmarkTrumpChoice, 4,000 deals, seed 31) against the open-card solver on the true
// deal, it loses a win/draw/loss class in 23.45% of the deals and Easy's rule in 23.35%, with the
// same regret in points (6.75 and 6.74): no better than Easy's rule, as the 200 ms search it
// replaces was not (duel -analyze over 300 deals, seed 16: the search lost a class in 25.0%, the
// table in 24.3%, Easy in 22.3%), but it costs nothing and plays for the board.
//
// Trump choices that are the same game up to renaming cards share one line: spades, hearts and
// diamonds trump are the same game once the trump suit's own A K J 10 9 are swapped with those of
// spades (the three queens stay themselves, in the same order), and two plain suits of five
// cards are alike. So a choice is looked up as spades or clubs trump, with the plain suits
// sorted (TrumpKey).

//go:embed trumps.txt
var trumpsTxt string

// TrumpOdds are the trump team's chances with a first packet and a suit: wins and draws per
// 1000 deals.
type TrumpOdds struct{ Win, Draw int }

var trumpTable = sync.OnceValue(func() map[trumpKey]TrumpOdds {
	t, err := ParseTrumpTable(trumpsTxt)
	if err != nil {
		panic(err) // the embedded table is checked by the tests
	}
	return t
})

type trumpKey struct {
	packet core.CardSet
	trump  core.Suit
}

// ParseTrumpTable reads trumps.txt: comment lines, then "<hex packet> <S|C> <win> <draw>".
func ParseTrumpTable(text string) (map[trumpKey]TrumpOdds, error) {
	out := map[trumpKey]TrumpOdds{}
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 4 {
			return nil, fmt.Errorf("trump table line %d: %q", i+1, line)
		}
		p, err1 := strconv.ParseUint(f[0], 16, 32)
		x, err2 := core.ParseSuit(f[1])
		w, err3 := strconv.Atoi(f[2])
		d, err4 := strconv.Atoi(f[3])
		if err1 != nil || err2 != nil || err3 != nil || err4 != nil || w < 0 || d < 0 || w+d > 1000 {
			return nil, fmt.Errorf("trump table line %d: %q", i+1, line)
		}
		out[trumpKey{core.CardSet(p), x}] = TrumpOdds{Win: w, Draw: d}
	}
	return out, nil
}

// plainFive are the A K J 10 9 of spades, hearts and diamonds: the cards of theirs that are not
// permanent trumps.
var plainFive = func() (m [5][5]core.Card) {
	for _, s := range []core.Suit{core.Spades, core.Hearts, core.Diamonds} {
		i := 0
		for _, r := range []core.Rank{core.Ace, core.King, core.Jack, core.Ten, core.Nine} {
			m[s][i] = core.NewCard(s, r)
			i++
		}
	}
	return m
}()

// renameSuits maps the A K J 10 9 of spades, hearts and diamonds by perm (perm[s] is the suit
// s's cards become); queens and clubs stay.
func renameSuits(set core.CardSet, perm [5]core.Suit) core.CardSet {
	var out core.CardSet
	for _, c := range set.Cards() {
		s := c.Suit()
		if s == core.Clubs || c.Rank() == core.Queen {
			out = out.Add(c)
			continue
		}
		for i, pc := range plainFive[s] {
			if pc == c {
				out = out.Add(plainFive[perm[s]][i])
			}
		}
	}
	return out
}

// TrumpKey is the table's line for naming x with packet: the same game with spades (for spades,
// hearts or diamonds) or clubs trump, and the plain five-card suits renamed so that the packet's
// bit set is the smallest.
func TrumpKey(packet core.CardSet, x core.Suit) (core.CardSet, core.Suit) {
	id := [5]core.Suit{0, core.Spades, core.Hearts, core.Diamonds, core.Clubs}
	if x != core.Clubs {
		// Swap x with spades first: then spades is trump, and hearts and diamonds are alike.
		first := id
		first[x], first[core.Spades] = core.Spades, x
		packet = renameSuits(packet, first)
		swap := id
		swap[core.Hearts], swap[core.Diamonds] = core.Diamonds, core.Hearts
		return min(packet, renameSuits(packet, swap)), core.Spades
	}
	best := packet
	for _, p := range [][3]core.Suit{{1, 3, 2}, {2, 1, 3}, {2, 3, 1}, {3, 1, 2}, {3, 2, 1}} {
		perm := id
		perm[core.Spades], perm[core.Hearts], perm[core.Diamonds] = p[0], p[1], p[2]
		best = min(best, renameSuits(packet, perm))
	}
	return best, core.Clubs
}

// TrumpLine names one line of the table: a packet with spades or clubs trump.
type TrumpLine struct {
	Packet core.CardSet
	Trump  core.Suit
}

// TrumpKeys lists every line the table needs, in the order trumpgen writes them.
func TrumpKeys() []TrumpLine {
	seen := map[trumpKey]bool{}
	var out []TrumpLine
	for a := core.Card(1); a <= 24; a++ {
		for b := a + 1; b <= 24; b++ {
			for c := b + 1; c <= 24; c++ {
				for _, x := range core.Suits {
					p, y := TrumpKey(core.SetOf(a, b, c), x)
					if k := (trumpKey{p, y}); !seen[k] {
						seen[k] = true
						out = append(out, TrumpLine{p, y})
					}
				}
			}
		}
	}
	return out
}

// Odds are the trump team's chances naming x with the first packet, from the table.
func Odds(packet core.CardSet, x core.Suit) (TrumpOdds, bool) {
	p, y := TrumpKey(packet, x)
	o, ok := trumpTable()[trumpKey{p, y}]
	return o, ok
}

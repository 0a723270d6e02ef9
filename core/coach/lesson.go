package coach

import (
	"math/bits"
	"strings"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/i18n"
)

// chatCards writes cards for chat in lang, in the hand's order, with the language's rank letters.
func chatCards(lang string, set core.CardSet) string { return i18n.Cards(lang, set.Cards(), " ") }

// Lesson explains a guided game's turn to its learner, who sees v: naming trump, or which cards
// they may play and why, with the trump order, and the calls they could make.
func (c *Coach) Lesson(lang string, v core.View) string { return lesson(lang, v) }

func lesson(lang string, v core.View) string {
	queens := chatCards(lang, core.SetOf(core.QueenSpades, core.QueenHearts, core.QueenDiamonds))
	if v.Phase == core.PhaseTrump {
		return i18n.T(lang, "learn.trump", chatCards(lang, v.Hand), queens) + "\n" + i18n.T(lang, "learn.tip")
	}
	var lines []string
	if len(v.Calls) > 0 {
		c := v.Calls[len(v.Calls)-1]
		for _, k := range v.Calls {
			if k.Queens().Len() > c.Queens().Len() {
				c = k
			}
		}
		// Each of Konter and Matt raises the stake by one stripe: Konter a Matt, both, by two.
		lines = append(lines, i18n.N(lang, "learn.call", bits.OnesCount8(uint8(c)), chatCards(lang, c.Queens()), c.Title(), c.String()))
	}
	x := v.Trump
	trumps := core.Trumps(x)
	legal := chatCards(lang, v.Legal)
	switch {
	case v.Trick.N == 0:
		lines = append(lines, i18n.T(lang, "learn.lead", legal))
	case trumps.Has(v.Trick.Led()) && !(v.Hand & trumps).Empty():
		lines = append(lines, i18n.T(lang, "learn.trump_led", i18n.Card(lang, v.Trick.Led()), legal))
	case trumps.Has(v.Trick.Led()):
		lines = append(lines, i18n.T(lang, "learn.trump_led_none", i18n.Card(lang, v.Trick.Led())))
	case !(v.Hand & core.PlainOf(v.Trick.Led().Suit(), x)).Empty():
		lines = append(lines, i18n.T(lang, "learn.suit_led", i18n.SuitLabel(lang, v.Trick.Led().Suit()), legal))
	default:
		lines = append(lines, i18n.T(lang, "learn.suit_none", i18n.SuitLabel(lang, v.Trick.Led().Suit()), queens))
	}
	lines = append(lines, i18n.T(lang, "learn.order", i18n.SuitLabel(lang, x), orderText(lang, x)))
	return strings.Join(lines, "\n")
}

// orderText is the trumps of x, highest first, as lang writes cards.
func orderText(lang string, x core.Suit) string { return i18n.Cards(lang, core.TrumpOrder(x), " > ") }

// Stripes explains to a guided game's learner how game g, just finished, moved the stripes, and
// how many are open now (board).
func (c *Coach) Stripes(lang string, g *core.Game, board core.Board) string {
	r := g.Result()
	trumpTeam := g.TrumpTeam()
	var lines []string
	if w, ok := r.Outcome.Winner(); ok {
		crossed := -r.Stripes[w]
		lines = append(lines, i18n.N(lang, "learn.won", crossed, w.String(), r.Points[w], r.Stake))
		if crossed > r.Stake {
			lines = append(lines, i18n.T(lang, "learn.bonus"))
		}
		if w != trumpTeam {
			lines = append(lines, i18n.N(lang, "learn.trump_lost", r.Stripes[trumpTeam], trumpTeam.String()))
		}
	} else {
		lines = append(lines, i18n.N(lang, "learn.draw", r.Stripes[trumpTeam], trumpTeam.String()))
	}
	lines = append(lines, i18n.T(lang, "learn.board", board.Open(core.TeamA), board.Open(core.TeamB)))
	return strings.Join(lines, "\n")
}

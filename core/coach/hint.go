package coach

import (
	"math"
	"strings"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/robot"
)

// renderHint writes the judged strong choice for the view. The chances said are the game's own:
// wins, and 20–20 draws apart (a draw is no half win: it costs the trump team a stripe).
func renderHint(lang string, v core.View, j robot.Judgement) string {
	best := j.Best()
	if v.Phase == core.PhaseTrump {
		text := i18n.T(lang, "hint.trump", i18n.SuitLabel(lang, best.Move.Suit), percent(best.Win))
		if d := percent(best.Draw); d >= 1 {
			text = i18n.T(lang, "hint.trump.draws", i18n.SuitLabel(lang, best.Move.Suit), percent(best.Win), d)
		}
		if len(j.Choices) > 1 {
			next := j.Choices[1]
			text += " " + i18n.T(lang, "hint.next", i18n.SuitLabel(lang, next.Move.Suit), percent(next.Win))
		}
		return text
	}
	var b strings.Builder
	if j.ShouldCall() {
		b.WriteString(i18n.T(lang, "hint.call", j.Call.Title(), stripesText(lang, j.CallStripes)) + "\n")
	}
	if robot.Decided(v) {
		b.WriteString(i18n.T(lang, "hint.decided", i18n.Card(lang, best.Move.Card), int(math.Round(best.Points))))
		return b.String()
	}
	if d := percent(best.Draw); d >= 1 {
		b.WriteString(i18n.T(lang, "hint.card.draws", i18n.Card(lang, best.Move.Card), percent(best.Win), d, int(math.Round(best.Points))))
	} else {
		b.WriteString(i18n.T(lang, "hint.card", i18n.Card(lang, best.Move.Card), percent(best.Win), int(math.Round(best.Points))))
	}
	if len(j.Choices) > 1 {
		next := j.Choices[1]
		b.WriteString(" " + i18n.T(lang, "hint.next", i18n.Card(lang, next.Move.Card), percent(next.Win)))
	}
	return b.String()
}

// percent is a chance as a whole percentage.
func percent(p float64) int { return int(math.Round(100 * p)) }

// stripesText is an expected number of stripes with its sign and one decimal as lang writes
// numbers: "+0.6", "−1,2".
func stripesText(lang string, x float64) string {
	if x < 0 {
		return i18n.Decimal(lang, x)
	}
	return "+" + i18n.Decimal(lang, x)
}

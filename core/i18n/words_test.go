package i18n

import (
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kontermatt/kontermatt/core"
)

// percentMark is what stands between a number and % in each language: nothing in English, a
// no-break space in lb and de (Duden, DIN 5008: "62 %"), a narrow no-break space in French (the
// catalog's convention for the marks French spaces).
var percentMark = map[string]string{"en": "", "lb": "\u00a0", "de": "\u00a0", "fr": "\u202f"}

// percentSlips are the percentages of a text not written as lang writes them.
func percentSlips(lang, text string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`(\d|%(?:\[\d\])?d)([\s\x{a0}\x{202f}]?)%%`).FindAllStringSubmatch(text, -1) {
		if m[2] != percentMark[lang] {
			out = append(out, m[0])
		}
	}
	return out
}

func TestPercentSpacing(t *testing.T) {
	for _, lang := range Languages {
		for _, key := range slices.Sorted(maps.Keys(catalog[lang])) {
			if slips := percentSlips(lang, catalog[lang][key]); len(slips) > 0 {
				t.Errorf("%s %s: %q", lang, key, slips)
			}
		}
	}
	for _, slip := range []struct{ lang, text string }{{"de", "etwa %d%% der Verteilungen"}, {"fr", "environ %d %% des donnes"},
		{"en", "about %d\u00a0%% of deals"}, {"lb", "ongeféier %[2]d%%"}} {
		if len(percentSlips(slip.lang, slip.text)) == 0 {
			t.Errorf("%s: no slip found in %q", slip.lang, slip.text)
		}
	}
	for lang, want := range map[string]string{"en": "62%", "lb": "62\u00a0%", "de": "62\u00a0%", "fr": "62\u202f%"} {
		if got := Percent(lang, 62); got != want {
			t.Errorf("Percent(%s, 62) = %q, want %q", lang, got, want)
		}
	}
}

// One rank letter per language, in the chat as on the web table; every language's letters are
// read wherever they are typed: /play D♠ and /play Q♠ both.
func TestRankLetters(t *testing.T) {
	qs, jc, kh := core.MustCards("QS")[0], core.MustCards("JC")[0], core.MustCards("KH")[0]
	for _, tc := range []struct {
		lang       string
		card       core.Card
		want       string
		typedAlike []string
	}{
		{"en", qs, "Q♠", nil}, {"lb", qs, "D♠", nil}, {"de", qs, "D♠", nil}, {"fr", qs, "D♠", nil},
		{"lb", jc, "B♣", nil}, {"de", jc, "B♣", nil}, {"fr", jc, "V♣", nil}, {"en", jc, "J♣", nil},
		{"fr", kh, "R♥", nil}, {"de", kh, "K♥", nil},
		{"de", core.MustCards("10D")[0], "10♦", nil},
	} {
		if got := Card(tc.lang, tc.card); got != tc.want {
			t.Errorf("Card(%s, %v) = %q, want %q", tc.lang, tc.card, got, tc.want)
		}
		if got, err := ParseCard(tc.want); err != nil || got != tc.card {
			t.Errorf("ParseCard(%q) = %v, %v; want %v", tc.want, got, err, tc.card)
		}
	}
	for typed, want := range map[string]string{"D♠": "QS", "Q♠": "QS", "ds": "QS", "DD": "QD", "QD": "QD", "b♣": "JC", "V♣": "JC",
		"R♥": "KH", "Pik-Dame": "QS", "Karo-Zehn": "10D", "Schëppen Damm": "QS", "dame de pique": "QS"} {
		if got, err := ParseCard(typed); err != nil || got.String() != want {
			t.Errorf("ParseCard(%q) = %v, %v; want %s", typed, got, err, want)
		}
	}
	for _, bad := range []string{"D", "B", "DX", "R10", "konter-a-matt", "de"} {
		if c, err := ParseCard(bad); err == nil {
			t.Errorf("ParseCard(%q) = %v, want an error", bad, c)
		}
	}
	if got := Cards("de", []core.Card{qs, jc}, " "); got != "D♠ B♣" {
		t.Errorf("Cards = %q", got)
	}
	if !strings.Contains(T("de", "help.play"), Card("de", qs)) {
		t.Errorf("help.play in de does not show the queen as the chat does: %q", T("de", "help.play"))
	}
}

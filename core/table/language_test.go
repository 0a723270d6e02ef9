package table

import (
	"strings"
	"testing"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/i18n"
)

// TestGuidedGameNamesTheRaise reads what the guided game says of a call: Konter and Matt raise the
// stake by one stripe, Konter a Matt (which counts as both) by two, in every language.
func TestGuidedGameNamesTheRaise(t *testing.T) {
	hand := core.SetOf(core.MustCards("QS QH QD AH KH 9C")...)
	for _, tc := range []struct {
		calls []core.Call
		raise int
		en    string
	}{
		{[]core.Call{core.CallKonter, core.CallMatt, core.CallKonterAMatt}, 2, "It raises the stake by 2 stripes"},
		{[]core.Call{core.CallKonter}, 1, "It raises the stake by 1 stripe:"},
		{[]core.Call{core.CallMatt}, 1, "It raises the stake by 1 stripe:"},
	} {
		v := core.View{Phase: core.PhasePlay, Trump: core.Hearts, Hand: hand, Legal: hand, Calls: tc.calls, Stake: 1}
		if got := learnText("en", v); !strings.Contains(got, tc.en) {
			t.Errorf("%v: %q\nwant it to say %q", tc.calls, got, tc.en)
		}
		for _, lang := range i18n.Languages {
			c := tc.calls[len(tc.calls)-1]
			want := i18n.N(lang, "learn.call", tc.raise, chatCards(c.Queens()), c.Title(), c.String())
			if got := learnText(lang, v); !strings.Contains(got, want) {
				t.Errorf("%s %v: %q\nwant %q", lang, tc.calls, got, want)
			}
		}
	}
}

// TestMonthsReadAsTheCatalogWritesThem checks the league's month titles: French elides its "de"
// before a vowel ("Classement d’avril"), which only the catalog can know.
func TestMonthsReadAsTheCatalogWritesThem(t *testing.T) {
	for _, tc := range []struct{ lang, month, key, want string }{
		{"fr", "2026-04", "top.month", "🏆 Classement d’avril 2026 · Groupe"},
		{"fr", "2026-08", "top.month", "🏆 Classement d’août 2026 · Groupe"},
		{"fr", "2026-10", "top.month", "🏆 Classement d’octobre 2026 · Groupe"},
		{"fr", "2026-05", "top.month", "🏆 Classement de mai 2026 · Groupe"},
		{"fr", "2026-04", "season.final", "🗓 Le mois d’avril 2026 est terminé. Le classement final\u00a0:"},
		{"en", "2026-04", "top.month", "🏆 Table of April 2026 in Groupe"},
		{"lb", "2026-04", "top.month", "🏆 Klassement vum Abrëll 2026 · Groupe"},
		{"de", "2026-04", "top.month", "🏆 Tabelle für April 2026 · Groupe"},
	} {
		args := []any{"Groupe", monthName(tc.lang, tc.month)}
		if tc.key == "season.final" {
			args = args[1:]
		}
		if got := i18n.T(tc.lang, tc.key, args...); got != tc.want {
			t.Errorf("%s %s %s: %q, want %q", tc.lang, tc.key, tc.month, got, tc.want)
		}
	}
}

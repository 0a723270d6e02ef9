package table

import (
	"regexp"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/i18n/i18ntest"
	"github.com/kontermatt/kontermatt/core/league"
	"github.com/kontermatt/kontermatt/core/options"
	"github.com/kontermatt/kontermatt/core/picture"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/render"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// TestAPersonalScreenNeverNamesItsReader plays a match, in every language, for the one person at a
// personal screen, named as the terminal names them ("Dir", "Du", "Vous", "You"), and asks for
// their statistics before and after and for what is kept about them: no text speaks of the reader
// in the third person ("Dir huet nach kee Spill ofgeschloss", "Vous n'a encore fini").
func TestAPersonalScreenNeverNamesItsReader(t *testing.T) {
	for _, lang := range i18n.Languages {
		t.Run(lang, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, mem.New(), func(c *Config) { c.Surfaces = personal })
				defer h.svc.Close()
				me := api.Player{ID: "p1", Name: i18ntest.You(lang), Locale: lang}
				var said []string
				say := func(msgs []api.Message) {
					for _, m := range msgs {
						said = append(said, m.Text)
					}
				}
				say(h.do(me, api.VerbStats))
				say(h.do(me, api.VerbMyData))
				if e := errText(h.do(me, api.VerbNew, "timer=none", "stripes=1")); e != "" {
					t.Fatal(e)
				}
				say(h.do(me, api.VerbDeal))
				// Press a legal button of the hand until the match is over (playAsHuman reads
				// the English hand).
				for i := 0; i < 2000; i++ {
					synctest.Wait()
					if h.over() {
						break
					}
					m, _ := h.out.latest(api.KindHand, me.ID)
					pick := legalButton(m)
					if pick == nil {
						t.Fatalf("no legal button in:\n%s", m.Text)
					}
					say(h.press(me, *pick))
				}
				say(h.do(me, api.VerbStats))
				say(h.do(me, api.VerbMyData))
				say(h.out.all())
				for _, text := range said {
					if slips := i18ntest.YouSlips(lang, text); len(slips) > 0 {
						t.Errorf("%q speaks of the reader as of another: %q", text, slips)
					}
				}
				all := strings.Join(said, "\n")
				for _, want := range []string{i18n.T(lang, "stats.none.you", h.place.Title), i18n.T(lang, "mydata.title.you", "p1")} {
					if !strings.Contains(all, want) {
						t.Errorf("never says %q:\n%s", want, all)
					}
				}
			})
		})
	}
}

// TestAboutTheReaderOnlyOnTheirOwnScreen checks that a group is told about a person by name.
func TestAboutTheReaderOnlyOnTheirOwnScreen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mem.New())
		defer h.svc.Close()
		me := api.Player{ID: "p1", Name: "Jang", Locale: "en"}
		if r := h.do(me, api.VerbStats); len(r) != 1 || !strings.HasPrefix(r[0].Text, "Jang has not finished a game") {
			t.Errorf("stats: %+v", r)
		}
	})
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
		args := []any{"Groupe", league.MonthName(tc.lang, tc.month)}
		if tc.key == "season.final" {
			args = args[1:]
		}
		if got := i18n.T(tc.lang, tc.key, args...); got != tc.want {
			t.Errorf("%s %s %s: %q, want %q", tc.lang, tc.key, tc.month, got, tc.want)
		}
	}
}

// looseColon is a colon French typography does not write: one without a no-break space before it.
var looseColon = regexp.MustCompile(`[^\x{00a0}]: `)

// TestCodeWritesNoPunctuationOfItsOwn reads the texts code puts together from several catalog
// texts (a trick after its title, an option's line of usage, the pictures' alt texts) in French,
// whose colon takes a no-break space: the mark comes from the catalog, not from the code.
func TestCodeWritesNoPunctuationOfItsOwn(t *testing.T) {
	tb := seated("fr", "Jang", "Mia")
	trick := (render.Renderer{}).TrickText(sightOf(tb), "fr", trickOf(0, "JH 9H 10H 9S"), "live.trick")
	usage := options.Usage("fr")
	hands := core.MustHands("AH KH AS 9C 10D 9H KS 10S AD KC 10C JH QS KD AC 9D 9S 10H QH QD JS QC JC JD")
	g, err := core.NewGame(core.DefaultRules(), 3, hands)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Apply(core.NameTrump(0, core.Hearts)); err != nil {
		t.Fatal(err)
	}
	table := picture.TableInput{View: g.View(core.NoSeat), Names: [4]string{"Jang", "Luc", "Mia", "Zoé"}, Labels: render.Labels("fr")}.AltText()
	board := picture.BoardInput{Rules: core.DefaultRules(), Board: core.Board{Start: 2}, Names: [4]string{"Jang", "Luc", "Mia", "Zoé"},
		History: []core.GameScore{{Result: core.Result{Points: [2]int{25, 15}}, Trump: core.Hearts, TrumpTeam: core.TeamA, Applied: [2]int{-1, 0}}}, Labels: render.Labels("fr")}.AltText()
	for _, text := range []string{trick, usage, table, board} {
		if m := looseColon.FindString(text); m != "" {
			t.Errorf("%q glues %q", text, m)
		}
		if !strings.Contains(text, "\u00a0: ") {
			t.Errorf("%q has no colon of the catalog's", text)
		}
	}
}

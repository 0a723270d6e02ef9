package table

import (
	"context"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/options"
	"github.com/kontermatt/kontermatt/core/picture"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/render"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// The platforms' limits on one message's text: Discord's content (2000 characters) and
// Telegram's text (4096 UTF-16 code units after entity parsing); both count at most the UTF-16
// units. Sources: discord.com/developers/docs/resources/message#create-message ("content: up to
// 2000 characters"), core.telegram.org/bots/api#sendmessage ("1-4096 characters after entities
// parsing").
const discordContentMax, telegramTextMax = 2000, 4096

// noticeRoom is what an answer leaves for a notice the Discord adapter joins to it: the longest,
// discord.automod, is 210 characters in German, and "\n\n" joins it.
const noticeRoom = 215

func utf16Len(s string) int { return len(utf16.Encode([]rune(s))) }

// onDiscord is a text as Discord shows it: every command is "/km verb" there, the league's
// "/km league verb" (adapters/discord: subcommandPath and groupOf).
func onDiscord(text string) string {
	return i18n.RewriteCommands(text, api.Verbs, func(v api.Verb) string {
		switch v {
		case api.VerbStats, api.VerbTop, api.VerbHistory, api.VerbSettings, api.VerbMyData, api.VerbForget:
			return "/km league " + string(v)
		}
		return "/km " + string(v)
	})
}

// rulesWords are, per language, what /rules must tell a newcomer: who names trump and when,
// following or trumping, the three queens, the points, the announcements and the stake, the
// stripes and the 20–20 draw.
var rulesWords = map[string][]string{
	"en": {"forehand", "three", "names trump", "Follow suit or trump", "queens of spades", "ace 4", "21", "Konter", "Matt", "Stake", "stripes", "Fewer stripes is better", "20–20", "draw"},
	"lb": {"Virhand", "dräi", "mécht d’Tromp", "Bekennen oder trompen", "Schëppen Damm", "Äss 4", "21", "Konter", "Matt", "Asaz", "Strécher", "Manner Strécher ass besser", "20–20", "Stänner"},
	"de": {"Vorhand", "drei", "wählt Trumpf", "Farbe bekennen oder trumpfen", "Pik-Dame", "Ass 4", "21", "Konter", "Matt", "Einsatz", "Striche", "Weniger Striche sind besser", "20–20", "Gleichstand"},
	"fr": {"en main", "trois", "choisit l’atout", "Fournir ou couper", "dames de pique", "as 4", "21", "Konter", "Matt", "Mise", "traits", "Moins de traits, c’est mieux", "20–20", "égalité"},
}

// /rules tells the game in 8–12 short lines in each language, then the house rules of the chat it
// is asked in, /learn, and the rules page when one is configured, in the reader's language.
func TestRulesTellTheGame(t *testing.T) {
	for _, lang := range i18n.Languages {
		t.Run(lang, func(t *testing.T) {
			h := newHarness(t, mem.New(), withKV, func(c *Config) { c.RulesURL = "https://t.example/rules?lang={lang}" })
			defer h.svc.Close()
			admin := api.Command{Place: h.place, Actor: api.Player{ID: "a", Name: "Anna", Locale: lang}, Verb: api.VerbSettings, Args: []string{"stripes=7"}, Admin: true}
			if e := errText(h.svc.Handle(context.Background(), admin)); e != "" {
				t.Fatal(e)
			}
			text := h.do(api.Player{ID: "p", Name: "Jang", Locale: lang}, api.VerbRules)[0].Text
			lines := strings.Split(text, "\n")
			rules := RulesLines(lang)
			if len(rules) < 8 || len(rules) > 12 {
				t.Errorf("%d lines of rules, want 8 to 12", len(rules))
			}
			if lines[0] != i18n.T(lang, "rules.title") || strings.Join(lines[1:1+len(rules)], "\n") != strings.Join(rules, "\n") {
				t.Errorf("/rules does not start with the title and the rules:\n%s", text)
			}
			// The trump order names the three queens as the chat writes cards in the language.
			for _, w := range append(rulesWords[lang], i18n.Card(lang, core.MustCards("QS")[0]), i18n.Card(lang, core.MustCards("QH")[0]),
				i18n.Card(lang, core.MustCards("QD")[0])) {
				if !strings.Contains(strings.Join(rules, "\n"), w) {
					t.Errorf("the rules never say %q", w)
				}
			}
			for _, line := range rules {
				if n := len([]rune(line)); n > 260 {
					t.Errorf("a line of %d characters is not short: %q", n, line)
				}
			}
			seven, _ := options.Parse([]string{"stripes=7"})
			for _, want := range []string{i18n.T(lang, "rules.house", options.Line(lang, seven)), "/learn",
				i18n.T(lang, "rules.link", "https://t.example/rules?lang="+lang)} {
				if !strings.Contains(text, want) {
					t.Errorf("/rules does not say %q:\n%s", want, text)
				}
			}
			// The Discord adapter joins a notice of its own to an answer (discord.automod, some
			// 210 characters): /rules leaves room for it.
			if n := utf16Len(onDiscord(text)); n > discordContentMax-noticeRoom {
				t.Errorf("/rules is %d long on Discord, over %d", n, discordContentMax-noticeRoom)
			}
			if n := utf16Len(text); n > telegramTextMax {
				t.Errorf("/rules is %d long, over Telegram's %d", n, telegramTextMax)
			}
		})
	}
}

// Without a configured rules page /rules links nowhere: the project's page is English only. In a
// private chat it has no house rules to tell.
func TestRulesWithoutALink(t *testing.T) {
	h := newHarness(t, mem.New(), withKV)
	defer h.svc.Close()
	msgs, err := h.svc.Handle(context.Background(), api.Command{Place: api.Place{Platform: "test", Chat: "dm"}, Actor: api.Player{ID: "p", Name: "Jang", Locale: "de"},
		Verb: api.VerbRules, Private: true})
	if err != nil || len(msgs) != 1 {
		t.Fatalf("/rules: %v, %+v", err, msgs)
	}
	text := msgs[0].Text
	if strings.Contains(text, "http") {
		t.Errorf("/rules links a page though none is configured:\n%s", text)
	}
	if strings.Contains(text, i18n.T("de", "rules.house", "")) {
		t.Errorf("/rules in a private chat tells house rules:\n%s", text)
	}
}

// /help starts a newcomer: three steps first (open a table, sit or add computers, deal), then
// every command once, in groups, in each language, within the platforms' limits.
func TestHelpStartsANewcomer(t *testing.T) {
	for _, lang := range i18n.Languages {
		for _, sf := range []api.Surface{{}, {Typed: true, Personal: true}} {
			text := helpText(lang, sf)
			lines := strings.Split(text, "\n")
			steps := strings.Join(lines[1:4], "\n")
			if lines[0] != i18n.T(lang, "help.title") || !strings.HasPrefix(lines[1], "1. /new") ||
				!strings.HasPrefix(lines[2], "2. /join") || !strings.Contains(lines[2], "/bot") || !strings.HasPrefix(lines[3], "3. /deal") {
				t.Errorf("%s: help does not start with the three steps:\n%s", lang, steps)
			}
			seen := map[string]int{}
			for _, l := range lines[4:] {
				if v, _, ok := strings.Cut(l, " — "); ok {
					seen[v]++
				}
			}
			for _, v := range api.Verbs {
				if stepped := slices.Contains(helpSteps, v) && strings.Contains(steps, "/"+string(v)); seen["/"+string(v)] != 1 && !stepped {
					t.Errorf("%s: /%s is in help %d times", lang, v, seen["/"+string(v)])
				}
			}
			for _, g := range helpGroups {
				if !strings.Contains(text, "\n\n"+i18n.T(lang, g.title)+"\n") {
					t.Errorf("%s: no group %q", lang, i18n.T(lang, g.title))
				}
			}
			if n := utf16Len(onDiscord(text)); n > discordContentMax {
				t.Errorf("%s: help is %d long on Discord, over %d", lang, n, discordContentMax)
			}
		}
	}
}

// Every verb is in one of help's groups or its steps.
func TestHelpGroupsEveryVerb(t *testing.T) {
	in := map[api.Verb]int{}
	for _, g := range helpGroups {
		for _, v := range g.verbs {
			in[v]++
		}
	}
	for _, v := range helpSteps {
		in[v]++
	}
	for _, v := range api.Verbs {
		if in[v] != 1 {
			t.Errorf("/%s is in %d of help's groups", v, in[v])
		}
	}
}

// Option keys and values have names in each language, which help shows there and which are
// understood beside the English ones.
func TestOptionNamesInEachLanguage(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		check func(options.Options) bool
	}{
		{[]string{"Strécher=7", "Stänner=1", "Bedenkzäit=kuerz", "Niveau=staark", "Tipps=un"}, func(o options.Options) bool {
			return o.Rules.Stripes == 7 && o.Rules.DrawPenalty == core.DrawFlat1 && o.Timer == options.TimerFast && o.Level == "strong" && o.Hints
		}},
		{[]string{"Striche=5", "Gleichstand=Einsatz", "Bedenkzeit=unbegrenzt", "Stufe=leicht", "Ansagen=aus", "Richtung=Gegenuhrzeigersinn"}, func(o options.Options) bool {
			return o.Rules.Stripes == 5 && o.Rules.DrawPenalty == core.DrawStake && o.Timer == options.TimerNone && o.Level == "easy" &&
				!o.Rules.Announcements && o.Rules.Direction == core.Anticlockwise
		}},
		{[]string{"traits=3", "temps=illimité", "niveau=fort", "conseils=oui", "sens=antihoraire", "capot=non"}, func(o options.Options) bool {
			return o.Rules.Stripes == 3 && o.Timer == options.TimerNone && o.Level == "strong" && o.Hints && o.Rules.Direction == core.Anticlockwise && !o.Rules.AllTricksBonus
		}},
		{[]string{"stripes=4", "timer=fast"}, func(o options.Options) bool { return o.Rules.Stripes == 4 && o.Timer == options.TimerFast }},
	} {
		o, err := options.Parse(tc.args)
		if err != nil || !tc.check(o) {
			t.Errorf("%v: %v, %+v", tc.args, err, o)
		}
	}
	for lang, want := range map[string]string{
		"en": "stripes=9 (1–20) draw=stake|flat1 bonus=on|off announce=on|off timer=normal|fast|relaxed|none",
		"lb": "Strécher=9 (1–20) Stänner=Asaz|1 Bonus=un|aus Annoncen=un|aus Bedenkzäit=normal|kuerz|laang|onbegrenzt",
		"de": "Striche=9 (1–20) Gleichstand=Einsatz|1 Bonus=an|aus Ansagen=an|aus Bedenkzeit=normal|schnell|lang|unbegrenzt",
		"fr": "traits=9 (1–20) égalité=mise|1 capot=oui|non annonces=oui|non temps=normal|rapide|long|illimité",
	} {
		if got := options.Syntax(lang); !strings.HasPrefix(got, want) {
			t.Errorf("%s: %q, want it to start %q", lang, got, want)
		}
		if help := helpText(lang, api.Surface{}); !strings.Contains(help, want) {
			t.Errorf("%s: help does not show %q", lang, want)
		}
		// Each name shown is understood.
		for _, kv := range strings.Fields(options.Syntax(lang)) {
			k, vs, ok := strings.Cut(kv, "=")
			if !ok {
				continue
			}
			for _, v := range strings.Split(vs, "|") {
				if _, err := options.Parse([]string{k + "=" + v}); err != nil {
					t.Errorf("%s: %s=%s is shown but refused: %v", lang, k, v, err)
				}
			}
		}
	}
}

// The table picture writes the cards as the chat does, in its drawing and its alt text: D♥ in
// German, V♥ in French.
func TestPictureRankLetters(t *testing.T) {
	v := core.View{Seat: core.NoSeat, Phase: core.PhasePlay, Trump: core.Hearts, Trick: trickOf(0, "QH JH 10H 9S")}
	for lang, want := range map[string]string{"en": "Q♥", "de": "D♥", "fr": "D♥", "lb": "D♥"} {
		alt := picture.TableInput{View: v, Names: [4]string{"Jang", "Mia", "Luc", "Zoé"}, Labels: render.Labels(lang)}.AltText()
		if !strings.Contains(alt, "Jang "+want) || !strings.Contains(alt, "Mia "+i18n.Card(lang, core.MustCards("JH")[0])) {
			t.Errorf("%s: the alt text does not write %s:\n%s", lang, want, alt)
		}
	}
	if l := render.Labels("fr"); l.Ranks[core.Jack] != "V" || l.Ranks[core.King] != "R" || l.Ranks[core.Ten] != "10" {
		t.Errorf("French picture letters: %q", l.Ranks)
	}
}

// A refused option is answered with the names of the reader's language.
func TestOptionRefusalSpeaksTheLanguage(t *testing.T) {
	h := newHarness(t, mem.New())
	defer h.svc.Close()
	for _, tc := range []struct{ lang, arg, want string }{
		{"de", "Farbe=rot", "Striche, Gleichstand, Bonus, Ansagen, Bedenkzeit, Richtung, Stufe, Tipps"},
		{"lb", "Bedenkzäit=gëschter", "kuerz, normal, laang oder onbegrenzt"},
		{"fr", "temps=hier", "rapide, normal, long ou illimité"},
	} {
		got := errText(h.do(api.Player{ID: "p-" + tc.lang, Name: "Jang", Locale: tc.lang}, api.VerbNew, tc.arg))
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s %s: %q, want it to name %q", tc.lang, tc.arg, got, tc.want)
		}
	}
}

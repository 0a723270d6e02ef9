package i18n

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// formNames are the CLDR plural categories a catalog key may end in.
var formNames = []string{"zero", "one", "two", "few", "many", "other"}

// pluralBase gives the key a plural form belongs to: "trick.won" for "trick.won.one".
func pluralBase(key string) (base string, ok bool) {
	i := strings.LastIndexByte(key, '.')
	if i < 0 || !slices.Contains(formNames, key[i+1:]) {
		return key, false
	}
	return key[:i], true
}

// pluralKeys are the English keys that take a count, by base.
func pluralKeys() []string {
	var out []string
	for key := range en {
		if base, ok := pluralBase(key); ok && !slices.Contains(out, base) {
			out = append(out, base)
		}
	}
	slices.Sort(out)
	return out
}

// formsOf lists the plural forms lang uses for whole numbers.
func formsOf(lang string) []string {
	var out []string
	for n := range 2000 {
		if f := PluralForm(lang, n); !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return out
}

// TestPluralForms checks that every text with a count has, in every language, exactly the forms
// that language's plural rules use, and no form-less text under the same key.
func TestPluralForms(t *testing.T) {
	for _, lang := range Languages {
		forms := formsOf(lang)
		t.Run(lang, func(t *testing.T) {
			if !slices.Contains(forms, "one") || !slices.Contains(forms, "other") {
				t.Fatalf("%s uses the forms %v; the catalog expects one and other", lang, forms)
			}
			for _, base := range pluralKeys() {
				for _, f := range forms {
					if !Has(lang, base+"."+f) {
						t.Errorf("%s has no form %q", base, f)
					}
				}
				if Has(lang, base) {
					t.Errorf("%s is a plural text but also has a form-less text", base)
				}
			}
			for key := range catalog[lang] {
				if base, ok := pluralBase(key); ok && !slices.Contains(forms, key[len(base)+1:]) {
					t.Errorf("%s: %s never uses the form %q", key, lang, key[len(base)+1:])
				}
			}
		})
	}
}

func TestN(t *testing.T) {
	tests := []struct {
		name, lang, key string
		n               int
		args            []any
		want            string
	}{
		{"english one", "en", "trick.won", 1, []any{"Jang"}, "Jang wins 1 point"},
		{"english other", "en", "trick.won", 2, []any{"Jang"}, "Jang wins 2 points"},
		{"english zero is plural", "en", "trick.won", 0, []any{"Jang"}, "Jang wins 0 points"},
		{"french zero is singular", "fr", "trick.won", 0, []any{"Jang"}, "Jang remporte 0 point"},
		{"french one", "fr", "trick.won", 1, []any{"Jang"}, "Jang remporte 1 point"},
		{"luxembourgish", "lb", "board.earlier", 1, nil, "… 1 Spill virdrun (kuckt d’Bild)"},
		{"german other", "de", "summary.match", 3, []any{"A", "Jang & Mia"}, "🏆 Team A (Jang & Mia) gewinnt die Partie nach 3 Spielen!"},
		{"unknown language", "xx", "board.earlier", 1, nil, "… 1 earlier game (see the picture)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := N(tt.lang, tt.key, tt.n, tt.args...); got != tt.want {
				t.Errorf("N(%q, %q, %d) = %q, want %q", tt.lang, tt.key, tt.n, got, tt.want)
			}
		})
	}
}

// argsOf gives the arguments a text takes, each the number n or its digits as a string, so that
// "1 games" shows as plainly as "1 game".
func argsOf(t *testing.T, format string, n int) []any {
	t.Helper()
	verbs := argVerbs(t, format)
	args := make([]any, len(verbs))
	for i := range args {
		switch vs := verbs[i+1]; {
		case len(vs) == 0:
			t.Fatalf("%q never uses argument %d", format, i+1)
		case vs[0] == 'd':
			args[i] = n
		default:
			args[i] = fmt.Sprint(n)
		}
	}
	return args
}

// countedWords are the words English writes after a count; "1 games" is the mistake to catch.
var countedWords = []string{"game", "stripe", "point", "trick", "card", "player", "computer", "second", "minute", "hour"}

// TestEveryTextRenders renders every text in every language with every argument 1, then 2 (the
// texts with a count through N), and fails on fmt's error marks, on a count with the wrong
// number ("1 games"), and on a plural text whose singular is its plural.
func TestEveryTextRenders(t *testing.T) {
	plurals := pluralKeys()
	for _, lang := range Languages {
		t.Run(lang, func(t *testing.T) {
			for _, key := range slices.Sorted(maps.Keys(en)) {
				if _, ok := pluralBase(key); ok {
					continue
				}
				for _, n := range []int{1, 2} {
					out := T(lang, key, argsOf(t, T(lang, key), n)...)
					checkRendered(t, lang, key, n, out)
				}
			}
			for _, base := range plurals {
				other := catalog[lang][base+".other"]
				for _, n := range []int{0, 1, 2} {
					form := T(lang, base+"."+PluralForm(lang, n))
					args := argsOf(t, form, n)[1:] // the count is N's own argument
					out := N(lang, base, n, args...)
					checkRendered(t, lang, base, n, out)
					if PluralForm(lang, n) == "other" {
						continue
					}
					// The words after the count in the plural form must not follow a singular
					// count: "1 earlier games", "1 Spiller", "0 points" in French.
					if after := wordsAfterCount(other); after != "" && strings.Contains(out, fmt.Sprintf("%d %s", n, after)) {
						t.Errorf("%s %s, n=%d: %q uses the plural %q", lang, base, n, out, after)
					}
				}
			}
		})
	}
}

func checkRendered(t *testing.T, lang, key string, n int, out string) {
	t.Helper()
	if strings.Contains(out, "%!") {
		t.Errorf("%s %s with %d: bad format: %q", lang, key, n, out)
	}
	if lang == "en" && n == 1 {
		if w := pluralAfterOne(out); w != "" {
			t.Errorf("en %s with 1: %q says \"1 … %s\"", key, out, w)
		}
	}
}

// pluralAfterOne finds an English count noun in the plural right after "1", or one adjective
// later ("1 earlier games"); "" if there is none.
func pluralAfterOne(out string) string {
	words := strings.FieldsFunc(strings.ToLower(out), func(r rune) bool { return r == ' ' || r == '(' || r == ')' })
	for i := 0; i+1 < len(words); i++ {
		if words[i] != "1" {
			continue
		}
		for _, w := range words[i+1 : min(i+3, len(words))] {
			w = strings.TrimRight(w, ".,;:!?…")
			for _, c := range countedWords {
				if w == c+"s" {
					return w
				}
			}
			if strings.ContainsFunc(w, func(r rune) bool { return !unicode.IsLetter(r) }) {
				break // "team 1 · points 1–1": a label after a separator, not a counted noun
			}
		}
	}
	return ""
}

// wordsAfterCount is the first word after "%d" or "%[1]d" in a text (with one more when the
// first is an adjective such as "earlier"): "earlier games" in "… %d earlier games (see …)".
func wordsAfterCount(format string) string {
	for _, verb := range []string{"%[1]d ", "%d "} {
		if _, rest, ok := strings.Cut(format, verb); ok {
			fields := strings.Fields(rest)
			if len(fields) == 0 {
				return ""
			}
			return strings.Join(fields[:min(len(fields), 2)], " ")
		}
	}
	return ""
}

// TestGrammarChecksCanFail feeds the checks above the mistakes they are there to catch.
func TestGrammarChecksCanFail(t *testing.T) {
	for _, tc := range []struct{ out, want string }{
		{"Jang wins 1 points", "points"},
		{"… 1 earlier games (see the picture)", "games"},
		{"🏆 Team A (Jang & Mia) wins the match after 1 games!", "games"},
		{"1 stripes · draw costs the stake", "stripes"},
		{"Jang wins 1 point", ""},
		{"Computer 1 is choosing trump…", ""},
		{"Game 1: trump 1 by team 1 · points 1–1", ""},
		{"Jang wins 2 points", ""},
	} {
		t.Run(tc.out, func(t *testing.T) {
			if got := pluralAfterOne(tc.out); got != tc.want {
				t.Errorf("pluralAfterOne(%q) = %q, want %q", tc.out, got, tc.want)
			}
		})
	}
	for _, tc := range []struct{ format, want string }{
		{"… %d earlier games (see the picture)", "earlier games"},
		{"%[2]s wins %[1]d points", "points"},
		{"%[2]s kritt %[1]d Punkten", "Punkten"},
		{"no count", ""},
	} {
		t.Run(tc.format, func(t *testing.T) {
			if got := wordsAfterCount(tc.format); got != tc.want {
				t.Errorf("wordsAfterCount(%q) = %q, want %q", tc.format, got, tc.want)
			}
		})
	}
}

func TestOr(t *testing.T) {
	tests := []struct {
		lang  string
		items []string
		want  string
	}{
		{"en", []string{"fast", "normal", "relaxed", "none"}, "fast, normal, relaxed or none"},
		{"en", []string{"on", "off"}, "on or off"},
		{"en", []string{"on"}, "on"},
		{"lb", []string{"on", "off"}, "on oder off"},
		{"fr", []string{"a", "b", "c"}, "a, b ou c"},
	}
	for _, tt := range tests {
		t.Run(tt.lang+"/"+strings.Join(tt.items, ","), func(t *testing.T) {
			if got := Or(tt.lang, tt.items...); got != tt.want {
				t.Errorf("Or = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRewriteCommands(t *testing.T) {
	verbs := []string{"new", "join", "rules", "help", "rematch", "play"}
	km := func(v string) string { return "/km " + v }
	bare := func(v string) string { return v }
	tests := []struct {
		name, in string
		write    func(string) string
		want     string
	}{
		{"verbs at word starts", "Open one with /new, then /join; /rematch rotate.", km, "Open one with /km new, then /km join; /km rematch rotate."},
		{"terminal", "Type /join to sit down.", bare, "Type join to sit down."},
		{"at the very start and end", "/help", km, "/km help"},
		{"in quotes and brackets", "(/play Q♠) „/join“ «/new»", km, "(/km play Q♠) „/km join“ «/km new»"},
		{"a link's path", "Full rules: https://github.com/kontermatt/kontermatt/blob/main/docs/rules.md", km, "Full rules: https://github.com/kontermatt/kontermatt/blob/main/docs/rules.md"},
		{"a link ending in a verb", "see https://example.org/help or www.example.org/rules", km, "see https://example.org/help or www.example.org/rules"},
		{"a link next to a command", "https://example.org/new /new", km, "https://example.org/new /km new"},
		{"a path without scheme", "docs/rules.md and /rules.md", km, "docs/rules.md and /rules.md"},
		{"longer words", "/joined /newer /join_x /join-in /join@kmbot", km, "/joined /newer /join_x /join-in /join@kmbot"},
		{"not a verb", "/stop and/or /xyz", km, "/stop and/or /xyz"},
		{"sentence end", "Send /rules.", km, "Send /km rules."},
		{"line breaks kept", "/new — open\n/join — sit", bare, "new — open\njoin — sit"},
		{"fractions", "1/2 play", km, "1/2 play"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RewriteCommands(tt.in, verbs, tt.write); got != tt.want {
				t.Errorf("RewriteCommands(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestVariantsHaveTheirBase checks the surface variants against the texts they stand in for: a
// ".typed" or ".you" text has its base text, and a ".you" text takes the base's arguments but
// the seat's name.
func TestVariantsHaveTheirBase(t *testing.T) {
	for _, key := range slices.Sorted(maps.Keys(en)) {
		plural := ""
		k := key
		if base, ok := pluralBase(key); ok {
			k, plural = base, key[len(base):]
		}
		for _, v := range []string{".you", ".typed"} {
			base, ok := strings.CutSuffix(k, v)
			if !ok || !strings.Contains(base, ".") {
				continue // "term.you" is a text of its own: the terminal player's name
			}
			t.Run(key, func(t *testing.T) {
				text, ok := en[base+plural]
				if !ok {
					t.Fatalf("no base text %s", base+plural)
				}
				if v == ".you" {
					if got, want := len(argVerbs(t, en[key])), len(argVerbs(t, text))-1; got != want {
						t.Errorf("%q takes %d arguments; its base %q takes %d, the name among them", en[key], got, text, want+1)
					}
				}
			})
		}
	}
}

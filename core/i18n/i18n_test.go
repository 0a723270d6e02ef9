package i18n

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/kontermatt/kontermatt/core"
)

var translated = []string{"lb", "de", "fr"}

// TestCatalogKeys checks that every language has exactly the English keys: nothing missing, and
// nothing English lacks (a key only a translation has is a typo or a removed text).
func TestCatalogKeys(t *testing.T) {
	for _, lang := range translated {
		t.Run(lang, func(t *testing.T) {
			for _, key := range slices.Sorted(maps.Keys(en)) {
				if !Has(lang, key) {
					t.Errorf("%s: missing key %q (English: %q)", lang, key, en[key])
				}
			}
			for _, key := range slices.Sorted(maps.Keys(catalog[lang])) {
				if _, ok := en[key]; !ok {
					t.Errorf("%s: key %q is not in the English catalog", lang, key)
				}
			}
		})
	}
}

func TestLanguagesHaveCatalogs(t *testing.T) {
	for _, lang := range Languages {
		if _, ok := catalog[lang]; !ok {
			t.Errorf("language %q has no catalog", lang)
		}
	}
	if len(catalog) != len(Languages) {
		t.Errorf("catalog has %d languages, Languages lists %d", len(catalog), len(Languages))
	}
}

// argVerbs lists, for each argument a format string uses (1-based, as in %[n]s), the verbs that
// use it, following fmt's rules for explicit indexes: after %[n]v the next plain verb takes n+1.
func argVerbs(t *testing.T, format string) map[int][]rune {
	t.Helper()
	out := map[int][]rune{}
	next := 1
	rs := []rune(format)
	for i := 0; i < len(rs); i++ {
		if rs[i] != '%' {
			continue
		}
		i++
		if i < len(rs) && rs[i] == '%' {
			continue
		}
		for i < len(rs) && strings.ContainsRune("+-# 0", rs[i]) {
			i++
		}
		for i < len(rs) && (rs[i] >= '0' && rs[i] <= '9' || rs[i] == '.') {
			i++
		}
		if i < len(rs) && rs[i] == '[' {
			end := slices.Index(rs[i:], ']')
			if end < 0 {
				t.Fatalf("%q: unclosed argument index", format)
			}
			var n int
			if _, err := fmt.Sscanf(string(rs[i+1:i+end]), "%d", &n); err != nil || n < 1 {
				t.Fatalf("%q: bad argument index %q", format, string(rs[i:i+end+1]))
			}
			next = n
			i += end + 1
		}
		if i >= len(rs) {
			t.Fatalf("%q: format ends inside a verb", format)
		}
		out[next] = append(out[next], rs[i])
		next++
	}
	return out
}

// sentinels gives one distinctive argument per English argument, of the kind its verb expects.
func sentinels(t *testing.T, verbs map[int][]rune) []any {
	t.Helper()
	args := make([]any, len(verbs))
	for i := range args {
		vs, ok := verbs[i+1]
		if !ok {
			t.Fatalf("argument %d is never used", i+1)
		}
		switch vs[0] {
		case 'd':
			args[i] = 7301 + 17*i
		case 's', 'q', 'v':
			args[i] = fmt.Sprintf("«arg%d»", i+1)
		default:
			t.Fatalf("unexpected verb %%%c", vs[0])
		}
	}
	return args
}

// TestFormatArguments checks that every text uses each English argument exactly once, with the
// same verb, and formats without fmt's "%!" error marks.
func TestFormatArguments(t *testing.T) {
	for _, lang := range append([]string{"en"}, translated...) {
		t.Run(lang, func(t *testing.T) {
			for _, key := range slices.Sorted(maps.Keys(en)) {
				text, ok := catalog[lang][key]
				if !ok {
					continue // TestCatalogKeys reports it
				}
				t.Run(key, func(t *testing.T) {
					want := argVerbs(t, en[key])
					got := argVerbs(t, text)
					for n, vs := range want {
						if len(vs) != 1 {
							t.Fatalf("English uses argument %d %d times", n, len(vs))
						}
						if !slices.Equal(got[n], vs) {
							t.Errorf("argument %d: verbs %q, English has %q", n, string(got[n]), string(vs))
						}
					}
					for n := range got {
						if _, ok := want[n]; !ok {
							t.Errorf("argument %d is not in English", n)
						}
					}
					args := sentinels(t, want)
					out := fmt.Sprintf(text, args...)
					if strings.Contains(out, "%!") {
						t.Errorf("bad format: %q", out)
					}
					for i, a := range args {
						if c := strings.Count(out, fmt.Sprint(a)); c != 1 {
							t.Errorf("argument %d (%v) appears %d times in %q", i+1, a, c, out)
						}
					}
				})
			}
		})
	}
}

func TestCallsStayUntranslated(t *testing.T) {
	for _, lang := range append([]string{"en"}, translated...) {
		for _, key := range []string{"help.announce", "err.bad_call"} {
			if text := T(lang, key); !strings.Contains(text, "konter-a-matt") {
				t.Errorf("%s %s: %q lost the typed call konter-a-matt", lang, key, text)
			}
		}
		if text := T(lang, "rules.text", "URL"); !strings.Contains(text, "Konter a Matt") {
			t.Errorf("%s rules.text: %q does not name the game", lang, text)
		}
	}
}

func TestTFallback(t *testing.T) {
	tests := []struct {
		name, lang, key string
		args            []any
		want            string
	}{
		{"own text", "lb", "btn.deal", nil, "Ausdeelen"},
		{"formatted", "de", "live.turn", []any{"Jang"}, "▶ Jang ist dran"},
		{"reordered", "lb", "card.name", []any{"Damm", "Schëppen"}, "Schëppen Damm"},
		{"unknown language", "xx", "btn.deal", nil, "Deal"},
		{"unknown key", "fr", "no.such.key", nil, "no.such.key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := T(tt.lang, tt.key, tt.args...); got != tt.want {
				t.Errorf("T(%q, %q) = %q, want %q", tt.lang, tt.key, got, tt.want)
			}
		})
	}
}

func TestParseSuit(t *testing.T) {
	tests := []struct {
		in   string
		want core.Suit
	}{
		{"Häerzer", core.Hearts},
		{"haerzer", core.Hearts},
		{"HÄERZER", core.Hearts},
		{"HERZ", core.Hearts},
		{"herz", core.Hearts},
		{"cœur", core.Hearts},
		{"coeur", core.Hearts},
		{"CŒUR", core.Hearts},
		{"hearts", core.Hearts},
		{"Heart", core.Hearts},
		{"♥", core.Hearts},
		{"H", core.Hearts},
		{"h", core.Hearts},
		{" hearts ", core.Hearts},
		{"pique", core.Spades},
		{"Pik", core.Spades},
		{"Schëppen", core.Spades},
		{"scheppen", core.Spades},
		{"♠", core.Spades},
		{"spades", core.Spades},
		{"Rauten", core.Diamonds},
		{"Karo", core.Diamonds},
		{"carreau", core.Diamonds},
		{"♦", core.Diamonds},
		{"D", core.Diamonds},
		{"Kräizer", core.Clubs},
		{"kraizer", core.Clubs},
		{"Kreuz", core.Clubs},
		{"trèfle", core.Clubs},
		{"trefle", core.Clubs},
		{"TRÈFLE", core.Clubs},
		{"♣", core.Clubs},
		{"c", core.Clubs},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := ParseSuit(tt.in)
			if !ok || got != tt.want {
				t.Errorf("ParseSuit(%q) = %v, %v; want %v", tt.in, got, ok, tt.want)
			}
		})
	}
	for _, junk := range []string{"", " ", "x", "HX", "hearts!", "Herzen", "Häerz er", "♥♥", "Q♠", "queen", "atout", "Tromp"} {
		t.Run("rejects "+junk, func(t *testing.T) {
			if got, ok := ParseSuit(junk); ok {
				t.Errorf("ParseSuit(%q) = %v, want rejected", junk, got)
			}
		})
	}
}

// TestSuitNamesRoundTrip checks that every suit name the bot shows reads back, as shown, in
// capitals and without accents.
func TestSuitNamesRoundTrip(t *testing.T) {
	for _, lang := range Languages {
		for _, s := range core.Suits {
			name := Suit(lang, s)
			for _, in := range []string{name, strings.ToUpper(name), fold(name), s.Symbol()} {
				t.Run(lang+"/"+in, func(t *testing.T) {
					if got, ok := ParseSuit(in); !ok || got != s {
						t.Errorf("ParseSuit(%q) = %v, %v; want %v", in, got, ok, s)
					}
				})
			}
		}
	}
}

func TestParseCard(t *testing.T) {
	qs := core.NewCard(core.Spades, core.Queen)
	tests := []struct {
		in   string
		want core.Card
	}{
		{"Q♠", qs},
		{"qs", qs},
		{"QS", qs},
		{"♠Q", qs},
		{"queen of spades", qs},
		{"Queen Of Spades", qs},
		{"Pik Dame", qs},
		{"dame de pique", qs},
		{"Schëppen Damm", qs},
		{"scheppen damm", qs},
		{"Damm vun Schëppen", qs},
		{"Q spades", qs},
		{"10 hearts", core.NewCard(core.Hearts, core.Ten)},
		{"10h", core.NewCard(core.Hearts, core.Ten)},
		{"Häerzer Ass", core.NewCard(core.Hearts, core.Ace)},
		{"as de cœur", core.NewCard(core.Hearts, core.Ace)},
		{"König Kreuz", core.NewCard(core.Clubs, core.King)},
		{"valet de trèfle", core.NewCard(core.Clubs, core.Jack)},
		{"Rauten Zaang", core.NewCard(core.Diamonds, core.Ten)},
		// The card names the glossary gives, and those the bot showed before, which players
		// may still type: Äss and Ass, Zaang and Zéng, Néngchen and Néng, Bauer and Bube.
		{"Häerzer Äss", core.NewCard(core.Hearts, core.Ace)},
		{"haerzer ass", core.NewCard(core.Hearts, core.Ace)},
		{"Rauten Zéng", core.NewCard(core.Diamonds, core.Ten)},
		{"Kräizer Néngchen", core.NewCard(core.Clubs, core.Nine)},
		{"Kräizer Néng", core.NewCard(core.Clubs, core.Nine)},
		{"Schëppen Bauer", core.NewCard(core.Spades, core.Jack)},
		{"Pik Bauer", core.NewCard(core.Spades, core.Jack)},
		{"Pik Bube", core.NewCard(core.Spades, core.Jack)},
		{"nine of diamonds", core.NewCard(core.Diamonds, core.Nine)},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseCard(tt.in)
			if err != nil || got != tt.want {
				t.Errorf("ParseCard(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
	for _, junk := range []string{"", "x", "QX", "11 hearts", "queen", "queen of", "of spades",
		"queen queen", "spades hearts", "Q♠ K♠", "queen of spades hearts", "dame de", "Pik Dame Herz"} {
		t.Run("rejects "+junk, func(t *testing.T) {
			if got, err := ParseCard(junk); err == nil {
				t.Errorf("ParseCard(%q) = %v, want an error", junk, got)
			}
		})
	}
}

// TestCardNamesRoundTrip checks that every card's full name in every language reads back.
func TestCardNamesRoundTrip(t *testing.T) {
	for _, lang := range Languages {
		for _, s := range core.Suits {
			for r := core.Nine; r <= core.Ace; r++ {
				c := core.NewCard(s, r)
				name := CardName(lang, c)
				t.Run(lang+"/"+name, func(t *testing.T) {
					if got, err := ParseCard(name); err != nil || got != c {
						t.Errorf("ParseCard(%q) = %v, %v; want %v", name, got, err, c)
					}
				})
			}
		}
	}
}

func TestMatch(t *testing.T) {
	tests := []struct{ in, want string }{
		{"de-DE", "de"},
		{"de_AT", "de"},
		{"DE", "de"},
		{"fr-CA", "fr"},
		{"fr", "fr"},
		{"lb", "lb"},
		{"lb-LU", "lb"},
		{"ltz", "lb"},
		{"en-US", "en"},
		{"en-GB", "en"},
		{" fr-BE ", "fr"},
		{"xx", ""},
		{"nl-LU", ""},
		{"", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := Match(tt.in); got != tt.want {
				t.Errorf("Match(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestPick(t *testing.T) {
	tests := []struct {
		name    string
		choices []string
		want    string
	}{
		{"german locale", []string{"de-DE"}, "de"},
		{"canadian french", []string{"fr-CA"}, "fr"},
		{"luxembourgish", []string{"lb"}, "lb"},
		{"american english", []string{"en-US"}, "en"},
		{"unknown falls back to english", []string{"xx"}, "en"},
		{"nothing falls back to english", nil, "en"},
		{"empty falls back to english", []string{""}, "en"},
		{"first supported wins", []string{"xx", "fr-CA", "de"}, "fr"},
		{"table before platform", []string{"lb", "de-DE"}, "lb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Pick(tt.choices...); got != tt.want {
				t.Errorf("Pick(%q) = %q, want %q", tt.choices, got, tt.want)
			}
		})
	}
}

// TestOneFormOfAddress checks that each language speaks to players in the one form other.go
// names: no "du" in Luxembourgish, no "Sie" in German, no "tu" in French.
func TestOneFormOfAddress(t *testing.T) {
	other := map[string][]string{
		"lb": {"du", "dir", "dech", "deng", "denger", "dengen", "däin", "däi"},
		"de": {"Sie", "Ihnen", "Ihr", "Ihre", "Ihren", "Ihrer"},
		"fr": {"tu", "te", "toi", "ton", "ta", "tes", "t", "Tu", "Te", "Toi", "Ton", "Ta", "Tes"},
	}
	for lang, avoid := range other {
		t.Run(lang, func(t *testing.T) {
			for _, key := range slices.Sorted(maps.Keys(catalog[lang])) {
				words := strings.FieldsFunc(catalog[lang][key], func(r rune) bool { return !unicode.IsLetter(r) })
				for _, w := range words {
					if slices.Contains(avoid, w) {
						t.Errorf("%s: %q says %q", key, catalog[lang][key], w)
					}
				}
			}
		})
	}
}

// TestMenuTextsFit checks the texts of the platforms' command menus against their limits in
// every language: Discord allows 1 to 100 characters for a description or a choice's name,
// Telegram 1 to 256 for a command's description (cmd.<verb>).
func TestMenuTextsFit(t *testing.T) {
	limits := []struct {
		prefix   string
		min, max int
	}{
		{"cmd.", 1, 100},
		{"opt.", 1, 100},
		{"discord.km", 1, 100},
		{"lang.name", 1, 100},
	}
	for _, lang := range Languages {
		t.Run(lang, func(t *testing.T) {
			for _, key := range slices.Sorted(maps.Keys(en)) {
				for _, l := range limits {
					if !strings.HasPrefix(key, l.prefix) {
						continue
					}
					// A text made of others (an option's description with its default) is
					// measured whole in Discord's registration test.
					text := T(lang, key)
					if strings.Contains(text, "%") {
						text = fmt.Sprintf(text, "", "")
					}
					if n := utf8.RuneCountInString(text); n < l.min || n > l.max {
						t.Errorf("%s: %d characters, want %d to %d: %q", key, n, l.min, l.max, text)
					}
				}
			}
		})
	}
}

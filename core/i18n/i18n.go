// Package i18n holds every text the bot says, in English, Luxembourgish, German and French, and
// reads the card and suit names players type in those languages. English is the fallback.
package i18n

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/kontermatt/kontermatt/core"
	"golang.org/x/text/unicode/norm"
)

// Languages are the supported language codes, the fallback first.
var Languages = []string{"en", "lb", "de", "fr"}

// Match picks the supported language for a platform locale ("de-DE" → "de"); "" if none fits.
func Match(locale string) string {
	l := strings.ToLower(strings.TrimSpace(locale))
	if i := strings.IndexAny(l, "-_"); i >= 0 {
		l = l[:i]
	}
	switch l {
	case "en", "lb", "de", "fr":
		return l
	case "ltz", "lu":
		return "lb"
	}
	return ""
}

// Pick gives the first supported language among the choices, else English.
func Pick(choices ...string) string {
	for _, c := range choices {
		if l := Match(c); l != "" {
			return l
		}
	}
	return "en"
}

// T gives the text for key in lang, formatted with args (fmt verbs, indexed where word order
// differs: %[2]s). A key missing in lang falls back to English, and a key missing there is shown
// as itself so a gap is visible rather than fatal.
func T(lang, key string, args ...any) string {
	s, ok := catalog[lang][key]
	if !ok {
		if s, ok = catalog["en"][key]; !ok {
			s = key
		}
	}
	if len(args) == 0 {
		return s
	}
	return fmt.Sprintf(s, args...)
}

// Has reports whether lang has its own text for key (tests use it to find gaps).
func Has(lang, key string) bool {
	_, ok := catalog[lang][key]
	return ok
}

// Keys lists the English keys.
func Keys() []string {
	out := make([]string, 0, len(catalog["en"]))
	for k := range catalog["en"] {
		out = append(out, k)
	}
	return out
}

var suitNames = map[string][5]string{
	"en": {"", "spades", "hearts", "diamonds", "clubs"},
	"lb": {"", "Schëppen", "Häerzer", "Rauten", "Kräizer"},
	"de": {"", "Pik", "Herz", "Karo", "Kreuz"},
	"fr": {"", "pique", "cœur", "carreau", "trèfle"},
}

var rankNames = map[string][7]string{
	"en": {"", "nine", "ten", "jack", "queen", "king", "ace"},
	"lb": {"", "Néng", "Zéng", "Bauer", "Damm", "Kinnek", "Ass"},
	"de": {"", "Neun", "Zehn", "Bube", "Dame", "König", "Ass"},
	"fr": {"", "neuf", "dix", "valet", "dame", "roi", "as"},
}

// Suit names the suit in lang.
func Suit(lang string, s core.Suit) string {
	names, ok := suitNames[lang]
	if !ok {
		names = suitNames["en"]
	}
	if !s.Valid() {
		return "?"
	}
	return names[s]
}

// SuitLabel is the suit's symbol and name, as on a button: "♥ Häerzer".
func SuitLabel(lang string, s core.Suit) string { return s.Symbol() + " " + Suit(lang, s) }

// Rank names the rank in lang.
func Rank(lang string, r core.Rank) string {
	names, ok := rankNames[lang]
	if !ok {
		names = rankNames["en"]
	}
	if r < core.Nine || r > core.Ace {
		return "?"
	}
	return names[r]
}

// fold lower-cases and strips accents so "Häerzer", "haerzer" and "HÄERZER" all match, and "cœur"
// matches "coeur".
func fold(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	s = strings.ReplaceAll(s, "œ", "oe")
	var b strings.Builder
	for _, r := range norm.NFD.String(s) {
		if unicode.Is(unicode.Mn, r) {
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

var suitAliases = map[string]core.Suit{
	// Extra names players use: singulars, Luxembourgish spellings, the French "piques".
	"spade": core.Spades, "heart": core.Hearts, "diamond": core.Diamonds, "club": core.Clubs,
	"schepp": core.Spades, "haerz": core.Hearts, "raut": core.Diamonds, "kraiz": core.Clubs,
	"piques": core.Spades, "coeurs": core.Hearts, "carreaux": core.Diamonds, "trefles": core.Clubs,
	"kreiz": core.Clubs, "schippen": core.Spades,
}

var rankAliases = map[string]core.Rank{
	"zaang": core.Ten, "nengchen": core.Nine, "bube": core.Jack, "bauer": core.Jack,
}

// ParseSuit reads a suit as a letter, a symbol or its name in any supported language.
func ParseSuit(text string) (core.Suit, bool) {
	if s, err := core.ParseSuit(text); err == nil {
		return s, true
	}
	f := fold(text)
	for _, names := range suitNames {
		for s := core.Spades; s <= core.Clubs; s++ {
			if fold(names[s]) == f {
				return s, true
			}
		}
	}
	s, ok := suitAliases[f]
	return s, ok
}

func parseRank(text string) (core.Rank, bool) {
	f := fold(text)
	for _, names := range rankNames {
		for r := core.Nine; r <= core.Ace; r++ {
			if fold(names[r]) == f {
				return r, true
			}
		}
	}
	r, ok := rankAliases[f]
	return r, ok
}

// ParseCard reads a card in every form core.ParseCard accepts, and by names in any supported
// language, in either order, with or without "of"/"de": "queen of spades", "Pik Dame", "dame de
// pique", "Schëppen Damm".
func ParseCard(text string) (core.Card, error) {
	if c, err := core.ParseCard(text); err == nil {
		return c, nil
	}
	var words []string
	for _, w := range strings.Fields(text) {
		switch fold(w) {
		case "of", "de", "vun", "von":
			continue
		}
		words = append(words, w)
	}
	if len(words) == 2 {
		for _, order := range [2][2]int{{0, 1}, {1, 0}} {
			r, okR := parseRank(words[order[0]])
			if !okR {
				// Ranks may also be written as in the canonical form: "Q", "10".
				if c, err := core.ParseCard(words[order[0]] + "S"); err == nil {
					r, okR = c.Rank(), true
				}
			}
			s, okS := ParseSuit(words[order[1]])
			if okR && okS {
				return core.NewCard(s, r), nil
			}
		}
	}
	return core.NoCard, &core.ParseError{Input: text, Err: core.ErrInvalidCard}
}

// CardName is the card's full name in lang, e.g. "Schëppen Damm" or "queen of spades".
func CardName(lang string, c core.Card) string {
	return T(lang, "card.name", Rank(lang, c.Rank()), Suit(lang, c.Suit()))
}

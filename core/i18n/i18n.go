// Package i18n holds every text the bot says, in English, Luxembourgish, German and French, and
// reads the card and suit names players type in those languages. English is the fallback.
package i18n

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kontermatt/kontermatt/core"
	"golang.org/x/text/feature/plural"
	"golang.org/x/text/language"
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

// N gives the text for key in lang in the plural form the language uses for the count n. The
// forms are catalog keys key.one, key.other (and key.zero, key.two, key.few, key.many for a
// language whose rules have them); golang.org/x/text's CLDR rules choose among them, so French
// says "0 point" and "1 point" where English says "0 points" and "1 point". The count is the
// text's first argument and args follow it: "%[2]s wins %[1]d points" takes (n, name).
func N(lang, key string, n int, args ...any) string {
	if _, ok := catalog[lang]; !ok {
		lang = "en"
	}
	k := key + "." + PluralForm(lang, n)
	if _, ok := catalog[lang][k]; !ok {
		k = key + ".other"
	}
	return T(lang, k, append([]any{n}, args...)...)
}

// pluralForms names the forms as the catalog's key suffixes do (CLDR's names).
var pluralForms = map[plural.Form]string{plural.Other: "other", plural.Zero: "zero", plural.One: "one",
	plural.Two: "two", plural.Few: "few", plural.Many: "many"}

// PluralForm is the CLDR plural form ("one", "other", ...) of the whole number n in lang.
func PluralForm(lang string, n int) string {
	if n < 0 {
		n = -n
	}
	return pluralForms[plural.Cardinal.MatchPlural(language.Make(lang), n%10_000_000, 0, 0, 0, 0)]
}

// Or joins choices as the language lists alternatives: "fast, normal, relaxed or none".
func Or(lang string, items ...string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return T(lang, "list.or", strings.Join(items[:len(items)-1], ", "), items[len(items)-1])
}

// Label joins a label and what it labels as lang writes it: "Trick: …" in English, "Pli : …"
// with a no-break space in French. The mark is the catalog's (label.colon); code never writes
// punctuation of its own between texts.
func Label(lang, label, value string) string { return label + T(lang, "label.colon") + value }

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
	"lb": {"", "Néngchen", "Zaang", "Bauer", "Damm", "Kinnek", "Äss"},
	"de": {"", "Neun", "Zehn", "Bauer", "Dame", "König", "Ass"},
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

// rankLetters are the letters a card's rank is written with in lb, de and fr besides the English
// ones core reads (J Q K A): Bauer, Damm/Dame, valet, roi. None of them is a suit's letter, so
// "D♠", "DS" and "dd" read one way only (the queen of spades, of spades, of diamonds).
var rankLetters = map[rune]string{'B': "J", 'D': "Q", 'V': "J", 'R': "K"}

// parseRankLetter reads a card written with a rank letter of lb, de or fr: "D♠", "B♣", "R♥".
func parseRankLetter(text string) (core.Card, bool) {
	t := strings.TrimSpace(text)
	r, size := utf8.DecodeRuneInString(t)
	en, ok := rankLetters[unicode.ToUpper(r)]
	if !ok || size == len(t) {
		return core.NoCard, false
	}
	c, err := core.ParseCard(en + t[size:])
	return c, err == nil
}

// Card writes a card for the chat in lang, with the rank letter the language uses and the suit's
// symbol: "Q♠" in English, "D♠" in lb and de, "D♠" in fr, "V♣" for the French jack. The web
// table's cards use the same letters (the catalog's web.rank.*).
func Card(lang string, c core.Card) string {
	if !c.Valid() {
		return c.Chat()
	}
	switch r := c.Rank(); r {
	case core.Jack, core.Queen, core.King, core.Ace:
		return T(lang, "web.rank."+r.String()) + c.Suit().Symbol()
	}
	return c.Chat()
}

// Cards writes cards for the chat in lang, separated by sep.
func Cards(lang string, cards []core.Card, sep string) string {
	out := make([]string, len(cards))
	for i, c := range cards {
		out[i] = Card(lang, c)
	}
	return strings.Join(out, sep)
}

// Fold lower-cases and strips accents so "Häerzer", "haerzer" and "HÄERZER" all match, and
// "cœur" matches "coeur": what players type is compared in this form.
func Fold(s string) string { return fold(s) }

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

// rankAliases are rank names players type besides the ones shown (folded): the plain numbers
// Zéng and Néng, which the bot showed before it said Zaang and Néngchen, and Germany's Bube.
var rankAliases = map[string]core.Rank{
	"zeng": core.Ten, "neng": core.Nine, "bube": core.Jack,
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
	if c, ok := parseRankLetter(text); ok {
		return c, nil
	}
	var words []string
	// "Pik-Dame" as the German card names are written, or "Pik Dame".
	for _, w := range strings.FieldsFunc(text, func(r rune) bool { return unicode.IsSpace(r) || r == '-' }) {
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

// RewriteCommands rewrites the commands a text names, written as the catalog writes them ("/join"
// at the start of a word), into the way a surface has them typed: write("join") gives "/km join"
// on Discord and "join" in the terminal. Only the listed verbs are commands, and only as whole
// words: "/joined", "and/or" and a link ("…/docs/rules.md", "https://example.org/help") are left
// alone.
func RewriteCommands[V ~string](text string, verbs []V, write func(verb V) string) string {
	if !strings.Contains(text, "/") {
		return text
	}
	// The longest verb first, so that no verb is taken for the start of another.
	byLen := slices.SortedFunc(slices.Values(verbs), func(a, b V) int { return cmp.Compare(len(b), len(a)) })
	var b strings.Builder
	for len(text) > 0 {
		// One word (a run without spaces) at a time, the spaces copied as they are.
		i := strings.IndexFunc(text, unicode.IsSpace)
		if i == 0 {
			_, size := utf8.DecodeRuneInString(text)
			b.WriteString(text[:size])
			text = text[size:]
			continue
		}
		if i < 0 {
			i = len(text)
		}
		word := text[:i]
		text = text[i:]
		if isLink(word) {
			b.WriteString(word)
			continue
		}
		b.WriteString(rewriteWord(word, byLen, write))
	}
	return b.String()
}

// isLink reports whether a word is a web address, whose path may hold "/help" or "/rules".
func isLink(word string) bool {
	return strings.Contains(word, "://") || strings.HasPrefix(strings.TrimLeft(word, "([{<„“«\"'"), "www.")
}

func rewriteWord[V ~string](word string, verbs []V, write func(V) string) string {
	var b strings.Builder
	for i := 0; i < len(word); i++ {
		// A "/" after a letter, a digit or a dot is inside a path, a date or a name.
		if word[i] != '/' || (i > 0 && (partOfName(lastRune(word[:i])) || strings.ContainsRune(".:", lastRune(word[:i])))) {
			b.WriteByte(word[i])
			continue
		}
		v, ok := verbAt(word[i+1:], verbs)
		if !ok {
			b.WriteByte(word[i])
			continue
		}
		b.WriteString(write(v))
		i += len(v)
	}
	return b.String()
}

// verbAt finds the verb s begins with as a whole word: what follows it may be punctuation, but
// not more of a name (letters, digits, "_", "-", "/", "@") nor a file's extension (".md").
func verbAt[V ~string](s string, verbs []V) (V, bool) {
	for _, v := range verbs {
		rest, ok := strings.CutPrefix(s, string(v))
		if !ok || v == "" {
			continue
		}
		if rest == "" {
			return v, true
		}
		r, size := utf8.DecodeRuneInString(rest)
		if partOfName(r) || r == '.' && partOfName(firstRune(rest[size:])) {
			continue
		}
		return v, true
	}
	return "", false
}

func partOfName(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("_-/@", r)
}

func firstRune(s string) rune {
	r, _ := utf8.DecodeRuneInString(s)
	return r
}

func lastRune(s string) rune {
	r, _ := utf8.DecodeLastRuneInString(s)
	return r
}

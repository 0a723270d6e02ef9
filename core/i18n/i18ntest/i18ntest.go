// Package i18ntest holds the checks that tests of several packages run on the texts they render:
// the catalog's own tests and the table service's, which renders them for a personal screen.
package i18ntest

import (
	"regexp"

	"github.com/kontermatt/kontermatt/core/i18n"
)

// youSlips are, per language, the forms that treat the reader's own name on a personal screen
// (the catalog's term.you: "You", "Dir", "Du", "Vous") as someone else's: the name with a verb
// of the third person, or after a preposition where the language says "you" in another case.
// Each is written for the words the catalog uses; a new text that slips in a new way adds its
// verb here.
var youSlips = map[string][]*regexp.Regexp{
	"en": {
		words(`You (is|was|has|does|wins|asks|announces|names|plays|deals|takes|gets|holds|leads|stops|leaves|wants)`),
		words(`(about|for|to|with|of|by|than|against) You`),
	},
	"lb": {
		// The third person singular where it differs from the form "Dir" takes.
		words(`Dir (huet|ass|war|wëll|seet|mécht|kann|muss|däerf|dierf|gëtt|gewënnt|freet|geet|weess|hält)`),
		words(`(iwwer|fir|mat|vun|vu|un|u|géint|ouni|bei|zu) Dir`),
	},
	"de": {
		words(`Du (hat|ist|war|wird|kann|muss|darf|will|soll|mag|möchte|hält|gibt|nimmt|sieht|weiß)`),
		// A third-person -t where "du" takes -st: "Du gewinnt", "Du wählt" (but "du sitzt").
		words(`Du [a-zäöüß]*[^szßx\s]t`),
		words(`(über|für|mit|von|an|gegen|ohne|bei|zu|um) Du`),
	},
	"fr": {
		words(`Vous (n[’']|ne )?(a|est|était|va|fait|dit|peut|veut|doit|sait)`),
		// A verb in -e or -t where "vous" takes -ez: "Vous remporte", "Vous choisit".
		words(`Vous (n[’']|ne )?[a-zàâçéèêëîïôûù]+[et]`),
		words(`(sur|de|à|pour|avec|par|contre|chez) Vous`),
	},
}

// words matches the expression as whole words: Go's \b knows only ASCII letters, and these
// languages' words begin with "ü" or "é" too.
func words(expr string) *regexp.Regexp {
	return regexp.MustCompile(`(?:^|[^\p{L}])(` + expr + `)(?:[^\p{L}]|$)`)
}

// YouSlips gives the places where text, rendered in lang, speaks of the reader's own name on a
// personal screen as of a third person; nil when it has none.
func YouSlips(lang, text string) []string {
	var out []string
	for _, re := range youSlips[lang] {
		for _, m := range re.FindAllStringSubmatch(text, -1) {
			out = append(out, m[1])
		}
	}
	return out
}

// You is the name a personal screen gives its one player in lang (term.you).
func You(lang string) string { return i18n.T(lang, "term.you") }

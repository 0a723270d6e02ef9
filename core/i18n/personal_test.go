package i18n_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/i18n/i18ntest"
)

// TestYouSlipsCanFail feeds the check the forms a personal screen showed before the texts about
// its one player had second-person variants, and the variants that replaced them.
func TestYouSlipsCanFail(t *testing.T) {
	for _, tc := range []struct {
		lang, text string
		slips      bool
	}{
		{"lb", "Dir huet nach kee Spill ofgeschloss (Terminal).", true},
		{"lb", "Wat iwwer Dir (ID local:1) gespäichert ass:", true},
		{"lb", "Dir hutt nach kee Spill ofgeschloss (Terminal).", false},
		{"lb", "Streech: Dir J♥ · Computer 2 9♥ → Dir kritt 1 Punkt", false},
		{"de", "Du hat in Terminal noch kein Spiel beendet.", true},
		{"de", "Was über Du (ID local:1) gespeichert ist:", true},
		{"de", "Du gewinnt 4 Punkte", true},
		{"de", "Du hast noch kein Spiel beendet (Terminal).", false},
		{"de", "Du sitzt nicht an diesem Tisch.", false},
		{"fr", "Vous n'a encore fini aucune donne (Terminal).", true},
		{"fr", "Vous remporte 4 points", true},
		{"fr", "Données conservées sur Vous (ID local:1) :", true},
		{"fr", "Vous n’avez encore fini aucune donne (Terminal).", false},
		{"fr", "Vous êtes de retour.", false},
		{"en", "You has not finished a game in Terminal yet.", true},
		{"en", "What is kept about You (ID local:1):", true},
		{"en", "You have not finished a game in Terminal yet.", false},
		{"en", "Team A (You & Computer 3) wins 25 to 15.", false},
	} {
		t.Run(tc.lang+"/"+tc.text, func(t *testing.T) {
			if got := i18ntest.YouSlips(tc.lang, tc.text); (len(got) > 0) != tc.slips {
				t.Errorf("YouSlips = %q, want slips: %v", got, tc.slips)
			}
		})
	}
}

// TestTextsAboutThePlayerHaveAYouForm renders, in every language, each text that names a person
// who may be the one reader of a personal screen: its second-person variant (key.you, which the
// table service says instead) must read right, and the base text said with the reader's own
// name ("Dir", "Du", "Vous", "You") is shown to be the slip the variant avoids, where the check
// can see it.
func TestTextsAboutThePlayerHaveAYouForm(t *testing.T) {
	var bases []string
	for _, key := range i18n.Keys() {
		k := key
		for _, f := range []string{".one", ".other"} {
			k = strings.TrimSuffix(k, f)
		}
		if base, ok := strings.CutSuffix(k, ".you"); ok && strings.Contains(base, ".") && !slices.Contains(bases, base) {
			bases = append(bases, base)
		}
	}
	slices.Sort(bases)
	// The texts whose name is the sentence's subject or object: said with the reader's name,
	// they read wrong, but in the languages listed, whose verb there is the same for "Dir".
	slipping := map[string][]string{"live.choosing": {"lb"}, "mydata.title": nil, "note.announced": {"lb"},
		"note.back": nil, "note.stopped": nil, "stats.none": nil, "trick.won": {"lb"}}
	for want := range slipping {
		if !slices.Contains(bases, want) {
			t.Errorf("%s has no .you variant", want)
		}
	}
	for _, lang := range i18n.Languages {
		you := i18ntest.You(lang)
		for _, base := range bases {
			t.Run(lang+"/"+base, func(t *testing.T) {
				variant, said := render(lang, base+".you", "Terminal"), render(lang, base, you)
				if slips := i18ntest.YouSlips(lang, variant); len(slips) > 0 {
					t.Errorf("%q slips: %q", variant, slips)
				}
				if right, ok := slipping[base]; ok && !slices.Contains(right, lang) && len(i18ntest.YouSlips(lang, said)) == 0 {
					t.Errorf("the check does not see the slip in %q", said)
				}
			})
		}
	}
}

// render says key in lang with every string argument name and every count 3, through N for a
// text with plural forms.
func render(lang, key, name string) string {
	format := i18n.T(lang, key)
	plural := !i18n.Has("en", key) && i18n.Has("en", key+".other")
	if plural {
		format = i18n.T(lang, key+".other")
	}
	byIndex := map[int]any{}
	next := 1
	for i := 0; i+1 < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		i++
		if format[i] == '%' {
			continue
		}
		if format[i] == '[' {
			end := strings.IndexByte(format[i:], ']')
			fmt.Sscanf(format[i+1:i+end], "%d", &next)
			i += end + 1
		}
		if format[i] == 'd' {
			byIndex[next] = 3
		} else {
			byIndex[next] = name
		}
		next++
	}
	args := make([]any, len(byIndex))
	for n, a := range byIndex {
		args[n-1] = a
	}
	if plural {
		return i18n.N(lang, key, 3, args[1:]...)
	}
	return fmt.Sprintf(format, args...)
}

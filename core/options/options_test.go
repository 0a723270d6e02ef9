package options

import (
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/i18n"
)

func TestParseOptions(t *testing.T) {
	def := Default()
	with := func(f func(*Options)) Options {
		o := def
		f(&o)
		return o
	}
	tests := []struct {
		name string
		args []string
		want Options
	}{
		{"nothing", nil, def},
		{"not options", []string{"hello", "world"}, def},
		{"stripes", []string{"stripes=7"}, with(func(o *Options) { o.Rules.Stripes = 7 })},
		{"stripes at the bottom", []string{"stripes=1"}, with(func(o *Options) { o.Rules.Stripes = 1 })},
		{"stripes at the top", []string{"stripes=20"}, with(func(o *Options) { o.Rules.Stripes = 20 })},
		{"streechen (as before)", []string{"streechen=5"}, with(func(o *Options) { o.Rules.Stripes = 5 })},
		{"Strécher", []string{"Strécher=5"}, with(func(o *Options) { o.Rules.Stripes = 5 })},
		{"striche, spaces", []string{" striche = 3 "}, with(func(o *Options) { o.Rules.Stripes = 3 })},
		{"traits", []string{"traits=4"}, with(func(o *Options) { o.Rules.Stripes = 4 })},
		{"draw flat1", []string{"draw=flat1"}, with(func(o *Options) { o.Rules.DrawPenalty = core.DrawFlat1 })},
		{"draw_penalty=1", []string{"draw_penalty=1"}, with(func(o *Options) { o.Rules.DrawPenalty = core.DrawFlat1 })},
		{"gleichstand=einsatz", []string{"draw=flat1", "gleichstand=einsatz"}, def},
		{"égalité=mise", []string{"EGALITE=Mise"}, def},
		{"bonus off", []string{"bonus=off"}, with(func(o *Options) { o.Rules.AllTricksBonus = false })},
		{"all_tricks_bonus=no", []string{"all_tricks_bonus=no"}, with(func(o *Options) { o.Rules.AllTricksBonus = false })},
		{"capot=non", []string{"capot=non"}, with(func(o *Options) { o.Rules.AllTricksBonus = false })},
		{"bonus=aus", []string{"bonus=aus"}, with(func(o *Options) { o.Rules.AllTricksBonus = false })},
		{"announce off", []string{"announce=off"}, with(func(o *Options) { o.Rules.Announcements = false })},
		{"announcements=0", []string{"announcements=0"}, with(func(o *Options) { o.Rules.Announcements = false })},
		{"SCHWÄTZEN=nee", []string{"SCHWÄTZEN=nee"}, with(func(o *Options) { o.Rules.Announcements = false })},
		{"ansagen=nein", []string{"ansagen=nein"}, with(func(o *Options) { o.Rules.Announcements = false })},
		{"announce on again", []string{"announce=off", "calls=jo"}, def},
		{"timer fast", []string{"timer=fast"}, with(func(o *Options) { o.Timer = TimerFast })},
		{"bedenkzait=laang", []string{"bedenkzait=laang"}, with(func(o *Options) { o.Timer = TimerRelaxed })},
		{"bedenkzeit=schnell", []string{"Bedenkzeit=schnell"}, with(func(o *Options) { o.Timer = TimerFast })},
		{"temps=illimité", []string{"temps=illimite"}, with(func(o *Options) { o.Timer = TimerNone })},
		{"timer=off", []string{"timer=off"}, with(func(o *Options) { o.Timer = TimerNone })},
		{"direction", []string{"direction=anticlockwise"}, with(func(o *Options) { o.Rules.Direction = core.Anticlockwise })},
		{"dir=acw", []string{"dir=acw"}, with(func(o *Options) { o.Rules.Direction = core.Anticlockwise })},
		{"sens=antihoraire", []string{"sens=antihoraire"}, with(func(o *Options) { o.Rules.Direction = core.Anticlockwise })},
		{"richtung=cw", []string{"direction=anti", "richtung=cw"}, def},
		{"Richtung=géint-d'Auer", []string{"Richtung=géint-d'Auer"}, with(func(o *Options) { o.Rules.Direction = core.Anticlockwise })},
		{"richtung=geint-d’auer", []string{"richtung=geint-d’auer"}, with(func(o *Options) { o.Rules.Direction = core.Anticlockwise })},
		{"Richtung=mat-der-Auer", []string{"direction=anti", "Richtung=mat-der-Auer"}, def},
		{"level strong", []string{"level=strong"}, with(func(o *Options) { o.Level = "strong" })},
		{"bots=easy", []string{"bots=easy"}, with(func(o *Options) { o.Level = "easy" })},
		{"niveau=facile", []string{"niveau=facile"}, with(func(o *Options) { o.Level = "easy" })},
		{"stufe=stark", []string{"stufe=stark"}, with(func(o *Options) { o.Level = "strong" })},
		{"all at once", strings.Fields("stripes=3 draw=flat1 bonus=off announce=off timer=none direction=anticlockwise level=easy"),
			Options{Rules: core.Rules{Stripes: 3, DrawPenalty: core.DrawFlat1, Direction: core.Anticlockwise}, Timer: TimerNone, Level: "easy", Pace: PaceNormal}},
		{"pace relaxed", []string{"pace=relaxed"}, with(func(o *Options) { o.Pace = PaceRelaxed })},
		{"tempo=schnell", []string{"tempo=schnell"}, with(func(o *Options) { o.Pace = PaceFast })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.args)
			if err != nil || got != tt.want {
				t.Errorf("Parse(%q) = %+v, %v; want %+v", tt.args, got, err, tt.want)
			}
		})
	}
}

// TestEveryAliasParses types every name of every option with every name of each of its values.
func TestEveryAliasParses(t *testing.T) {
	names := func(key string, aliases map[string][]string) []string {
		out := []string{key, strings.ToUpper(key)}
		for _, lang := range i18n.Languages {
			out = append(out, aliases[lang]...)
		}
		return out
	}
	for _, opt := range All {
		for _, name := range names(opt.Key, opt.Aliases) {
			if opt.Number() {
				t.Run(name, func(t *testing.T) {
					o, err := Parse([]string{name + "=" + strconv.Itoa(opt.Max)})
					if err != nil || opt.get(o) != strconv.Itoa(opt.Max) {
						t.Errorf("%s=%d gave %s, %v", name, opt.Max, opt.get(o), err)
					}
				})
				continue
			}
			for _, v := range opt.Values {
				for _, vn := range names(v.Key, v.Aliases) {
					t.Run(name+"="+vn, func(t *testing.T) {
						o, err := Parse([]string{name + "=" + vn})
						if err != nil || opt.get(o) != v.Key {
							t.Errorf("%s=%s gave %s, %v; want %s", name, vn, opt.get(o), err, v.Key)
						}
					})
				}
			}
		}
	}
}

// TestOptionNamesAreUnambiguous checks that no name stands for two options, nor for two values of
// one option.
func TestOptionNamesAreUnambiguous(t *testing.T) {
	seen := map[string]string{}
	for _, opt := range All {
		keys := []string{opt.Key}
		for _, names := range opt.Aliases {
			keys = append(keys, names...)
		}
		for _, k := range keys {
			if prev, ok := seen[i18n.Fold(k)]; ok && prev != opt.Key {
				t.Errorf("%q names both %s and %s", k, prev, opt.Key)
			}
			seen[i18n.Fold(k)] = opt.Key
		}
		values := map[string]string{}
		for _, v := range opt.Values {
			names := []string{v.Key}
			for _, ns := range v.Aliases {
				names = append(names, ns...)
			}
			for _, n := range names {
				if prev, ok := values[i18n.Fold(n)]; ok && prev != v.Key {
					t.Errorf("%s: %q names both %s and %s", opt.Key, n, prev, v.Key)
				}
				values[i18n.Fold(n)] = v.Key
			}
		}
		if !opt.Number() && !slices.ContainsFunc(opt.Values, func(v Value) bool { return v.Key == opt.Default() }) {
			t.Errorf("%s: the default %q is not one of its values", opt.Key, opt.Default())
		}
	}
}

func TestOptionsStringReadsBack(t *testing.T) {
	for _, args := range [][]string{nil, strings.Fields("stripes=3 draw=flat1 bonus=off announce=off timer=none direction=anticlockwise level=easy")} {
		o, _ := Parse(args)
		back, err := Parse(strings.Fields(o.String()))
		if err != nil || back != o {
			t.Errorf("%q read back as %+v, %v; want %+v", o.String(), back, err, o)
		}
	}
	if got, want := Default().String(), "stripes=9 draw=stake bonus=on announce=on timer=normal direction=clockwise level=normal hints=off pace=normal"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func TestOptionsUsage(t *testing.T) {
	got := strings.Split(Usage("de"), "\n")
	want := []string{
		"stripes=9 (1–20): Striche, mit denen jedes Team beginnt",
		"draw=stake|flat1: Was ein Gleichstand (20–20) das Trumpfteam kostet",
		"bonus=on|off: Ein Strich mehr, wenn die Verlierer keinen Stich gemacht haben",
		"announce=on|off: Ob Konter und Matt angesagt werden dürfen",
		"timer=normal|fast|relaxed|none: Bedenkzeit pro Zug",
		"direction=clockwise|anticlockwise: Wie die Plätze gezeigt werden; die Spielreihenfolge bleibt gleich",
		"level=normal|easy|strong: Stärke der Computerspieler",
		"hints=off|on: Ob Spieler Tipps anfordern dürfen (die Partie wird dann nicht gewertet)",
		"pace=normal|fast|relaxed: Wie lange die Computerspieler jeden Stich zeigen",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Usage(de):\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestRulesPageListsTheOptions keeps the options table of docs/rules.md true: one row per option,
// in order, with its values default first (a number option: "9 (1 to 20)").
func TestRulesPageListsTheOptions(t *testing.T) {
	doc, err := os.ReadFile("../../docs/rules.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "## Table options\n")
	if !ok {
		t.Fatal("docs/rules.md has no Table options section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	row := regexp.MustCompile("(?m)^\\| `([a-z]+)` \\| ([^|]+) \\|")
	var got [][2]string
	for _, m := range row.FindAllStringSubmatch(section, -1) {
		got = append(got, [2]string{m[1], strings.TrimSpace(m[2])})
	}
	var want [][2]string
	for _, opt := range All {
		values := strings.Join(opt.Keys(), ", ")
		if opt.Number() {
			values = opt.Default() + " (" + strconv.Itoa(opt.Min) + " to " + strconv.Itoa(opt.Max) + ")"
		}
		want = append(want, [2]string{opt.Key, values})
	}
	if !slices.Equal(got, want) {
		t.Errorf("docs/rules.md lists the options\n%v\nwant\n%v", got, want)
	}
}

// TestOptionsInEachLanguage: help in lb, de and fr names every option and every value in that
// language (the English keys stay understood, TestEveryAliasParses), none left in English where
// the language has a word of its own.
func TestOptionsInEachLanguage(t *testing.T) {
	want := map[string][]string{
		"lb": {"Strécher=9 (1–20)", "Stänner=Asaz|1", "Bonus=un|aus", "Annoncen=un|aus", "Bedenkzäit=normal|kuerz|laang|onbegrenzt",
			"Richtung=mat-der-Auer|géint-d'Auer", "Niveau=normal|liicht|staark", "Tipps=aus|un", "Tempo=normal|séier|gemittlech"},
		"de": {"Striche=9 (1–20)", "Gleichstand=Einsatz|1", "Bonus=an|aus", "Ansagen=an|aus", "Bedenkzeit=normal|schnell|lang|unbegrenzt",
			"Richtung=Uhrzeigersinn|Gegenuhrzeigersinn", "Stufe=normal|leicht|stark", "Tipps=aus|an", "Tempo=normal|schnell|lang"},
		"fr": {"traits=9 (1–20)", "égalité=mise|1", "capot=oui|non", "annonces=oui|non", "temps=normal|rapide|long|illimité",
			"sens=horaire|antihoraire", "niveau=normal|facile|fort", "conseils=non|oui", "rythme=normal|rapide|détendu"},
	}
	for lang, lines := range want {
		var got []string
		for _, o := range All {
			got = append(got, o.SyntaxIn(lang))
		}
		if !slices.Equal(got, lines) {
			t.Errorf("options in %s:\n%s\nwant:\n%s", lang, strings.Join(got, "\n"), strings.Join(lines, "\n"))
		}
	}
}

// Package options is the one list of a table's options ("stripes=7", "timer=fast"): what new
// takes, how each is parsed, named in each language and shown. The table service, the league's
// house rules, the terminal's flags and Discord's /km new all work from it, so it is a package of
// its own, below the engine: a surface that offers the options needs nothing else of the table.
package options

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/i18n"
)

// TimerPreset sets how long a player may think before a reminder and before a computer player
// acts for them.
type TimerPreset string

// The presets.
const (
	TimerFast    TimerPreset = "fast"
	TimerNormal  TimerPreset = "normal"
	TimerRelaxed TimerPreset = "relaxed"
	TimerNone    TimerPreset = "none"
)

// Durations: the reminder, the turn timeout and how long an undealt lobby stays open.
func (p TimerPreset) Durations() (reminder, timeout, lobby time.Duration) {
	switch p {
	case TimerFast:
		return 20 * time.Second, 45 * time.Second, 30 * time.Minute
	case TimerRelaxed:
		return 30 * time.Minute, 4 * time.Hour, 24 * time.Hour
	case TimerNone:
		return 0, 0, 24 * time.Hour
	}
	return 90 * time.Second, 3 * time.Minute, time.Hour
}

// PacePreset is how fast a table's computer players go where people watch them: the "pace"
// option. What each means in time is the table service's (table.DefaultPaces).
type PacePreset string

// The pace presets.
const (
	PaceFast    PacePreset = "fast"
	PaceNormal  PacePreset = "normal"
	PaceRelaxed PacePreset = "relaxed"
)

// Options are a table's settings, fixed when it opens: the rules, the turn timer and the computer
// players' level.
type Options struct {
	Rules core.Rules
	Timer TimerPreset
	Level string // computer player level: easy, normal, strong
	Hints bool   // players may ask for a hint on their turn; the match counts for no rating
	// Pace is how long computer players let each card, trick and game be seen (core/table's pace.go).
	Pace PacePreset
}

// Default are the defaults of RULES.md, the normal timer and normal computer players.
func Default() Options {
	return Options{Rules: core.DefaultRules(), Timer: TimerNormal, Level: "normal", Pace: PaceNormal}
}

// Option is one table option, as new takes it ("stripes=7"): the one description every surface
// works from. It drives Parse, Options.String, the lobby's options line, the help of new,
// the terminal's usage text and Discord's /km new.
type Option struct {
	Key string // as typed and as the help shows it: "stripes"
	// Names are its name in each language, which help shows there beside the values' names and
	// which are understood everywhere, like Key: "Strécher" in lb. A language without one shows Key.
	Names map[string]string
	// Quiet: the lobby's options line (and the house rules', and settings') leaves it out at its
	// default value; it is there once chosen.
	Quiet bool
	// Aliases are other names players type for it, by the language they come from; they are
	// compared as i18n.Fold leaves them (case and accents do not matter).
	Aliases map[string][]string
	// Values are a choice option's values in the order they are offered; a number option has
	// none and a range instead.
	Values   []Value
	Min, Max int
	Help     string // catalog key of what it changes: "cmd.opt.stripes"
	// Lobby is the catalog key of its part of the lobby's options line, formatted with the value's
	// label (a number option's with the count, through i18n.N); "" shows the label alone.
	Lobby string
	get   func(Options) string
	set   func(o *Options, value string) // value is a Values key, or a number in range
}

// Value is one value of a choice option.
type Value struct {
	Key     string              // as typed and written: "on", "anticlockwise"
	Names   map[string]string   // its name in each language, shown and understood (see Option.Names)
	Aliases map[string][]string // other spellings by language, compared folded
	Label   string              // catalog key of how the table shows it: "opt.on"
}

// Number reports whether the option takes a number in [Min, Max] rather than one of Values.
func (o Option) Number() bool { return len(o.Values) == 0 }

// Default is the option's value in Default(), as typed.
func (o Option) Default() string { return o.get(Default()) }

// In is the option's value in opts, as typed: "7", "fast".
func (o Option) In(opts Options) string { return o.get(opts) }

// NameIn is the option's name in lang, else its key: "Strécher" in lb.
func (o Option) NameIn(lang string) string { return nameIn(lang, o.Key, o.Names) }

// NameIn is the value's name in lang, else its key: "kuerz" in lb.
func (v Value) NameIn(lang string) string { return nameIn(lang, v.Key, v.Names) }

// Value gives the value named by typed (its key or an alias), or false.
func (o Option) Value(typed string) (Value, bool) {
	f := i18n.Fold(typed)
	for _, v := range o.Values {
		if named(f, v.Key, v.Aliases) || namedIn(f, v.Names) {
			return v, true
		}
	}
	return Value{}, false
}

// ValueLabel is how the table shows value (a Values key, or a number) in lang.
func (o Option) ValueLabel(lang, value string) string {
	for _, v := range o.Values {
		if v.Key == value {
			return i18n.T(lang, v.Label)
		}
	}
	return value
}

// Keys lists the values' keys, the default first: "normal", "fast", "relaxed", "none".
func (o Option) Keys() []string {
	def := o.Default()
	out := []string{def}
	for _, v := range o.Values {
		if v.Key != def {
			out = append(out, v.Key)
		}
	}
	return out
}

// Syntax is the option as help shows it, the default first: "timer=normal|fast|relaxed|none",
// "stripes=9 (1–20)".
func (o Option) Syntax() string { return o.SyntaxIn("en") }

// SyntaxIn is the option as help in lang shows it, with the names of that language where it has
// them: "Strécher=9 (1–20)", "Bedenkzäit=normal|kuerz|laang|onbegrenzt".
func (o Option) SyntaxIn(lang string) string {
	name := nameIn(lang, o.Key, o.Names)
	if o.Number() {
		return fmt.Sprintf("%s=%s (%d–%d)", name, o.Default(), o.Min, o.Max)
	}
	keys := o.Keys()
	for i, k := range keys {
		for _, v := range o.Values {
			if v.Key == k {
				keys[i] = nameIn(lang, k, v.Names)
			}
		}
	}
	return name + "=" + strings.Join(keys, "|")
}

// nameIn is an option's or a value's name in lang, else its key.
func nameIn(lang, key string, names map[string]string) string {
	if n, ok := names[lang]; ok {
		return n
	}
	return key
}

// namedIn reports whether folded is one of the names.
func namedIn(folded string, names map[string]string) bool {
	for _, n := range names {
		if folded == i18n.Fold(n) {
			return true
		}
	}
	return false
}

func named(folded, key string, aliases map[string][]string) bool {
	if folded == i18n.Fold(key) {
		return true
	}
	for _, names := range aliases {
		for _, a := range names {
			if folded == i18n.Fold(a) {
				return true
			}
		}
	}
	return false
}

// onOff are the values of a yes-or-no option.
var onOff = []Value{
	{Key: "on", Label: "opt.on", Names: map[string]string{"lb": "un", "de": "an", "fr": "oui"}, Aliases: map[string][]string{"en": {"yes", "true", "1"}, "lb": {"un", "jo"}, "de": {"an", "ja"}, "fr": {"oui"}}},
	{Key: "off", Label: "opt.off", Names: map[string]string{"lb": "aus", "de": "aus", "fr": "non"},
		Aliases: map[string][]string{"en": {"no", "false", "0"}, "lb": {"aus", "nee"}, "de": {"nein"}, "fr": {"non"}}},
}

func onOffText(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// All are the options new takes, in the order help, the lobby and Discord list them.
var All = []Option{
	{Key: "stripes", Names: map[string]string{"lb": "Strécher", "de": "Striche", "fr": "traits"}, Min: core.MinStripes, Max: core.MaxStripes, Help: "cmd.opt.stripes", Lobby: "lobby.opt.stripes",
		Aliases: map[string][]string{"en": {"stripe"}, "lb": {"strécher", "stréch", "streechen"}, "de": {"striche", "strich"}, "fr": {"traits", "trait"}},
		get:     func(o Options) string { return strconv.Itoa(o.Rules.Stripes) },
		set:     func(o *Options, v string) { o.Rules.Stripes, _ = strconv.Atoi(v) }},
	{Key: "draw", Names: map[string]string{"lb": "Stänner", "de": "Gleichstand", "fr": "égalité"}, Help: "cmd.opt.draw", Lobby: "lobby.opt.draw",
		Aliases: map[string][]string{"en": {"draw_penalty"}, "lb": {"stänner"}, "de": {"gleichstand", "remis"}, "fr": {"égalité"}},
		Values: []Value{
			{Key: "stake", Label: "opt.draw.stake", Names: map[string]string{"lb": "Asaz", "de": "Einsatz", "fr": "mise"}, Aliases: map[string][]string{"lb": {"asaz"}, "de": {"einsatz"}, "fr": {"mise"}}},
			{Key: "flat1", Label: "opt.draw.flat1", Names: map[string]string{"lb": "1", "de": "1", "fr": "1"}, Aliases: map[string][]string{"en": {"1"}}},
		},
		get: func(o Options) string { return o.Rules.DrawPenalty.String() },
		set: func(o *Options, v string) {
			o.Rules.DrawPenalty = core.DrawStake
			if v == "flat1" {
				o.Rules.DrawPenalty = core.DrawFlat1
			}
		}},
	{Key: "bonus", Names: map[string]string{"lb": "Bonus", "de": "Bonus", "fr": "capot"}, Help: "cmd.opt.bonus", Lobby: "lobby.opt.bonus", Values: onOff,
		Aliases: map[string][]string{"en": {"all_tricks_bonus"}, "fr": {"capot"}},
		get:     func(o Options) string { return onOffText(o.Rules.AllTricksBonus) },
		set:     func(o *Options, v string) { o.Rules.AllTricksBonus = v == "on" }},
	{Key: "announce", Names: map[string]string{"lb": "Annoncen", "de": "Ansagen", "fr": "annonces"}, Help: "cmd.opt.announce", Lobby: "lobby.opt.announce", Values: onOff,
		Aliases: map[string][]string{"en": {"announcements", "calls"}, "lb": {"schwätzen", "annoncen"}, "de": {"ansagen"}, "fr": {"annonces"}},
		get:     func(o Options) string { return onOffText(o.Rules.Announcements) },
		set:     func(o *Options, v string) { o.Rules.Announcements = v == "on" }},
	{Key: "timer", Names: map[string]string{"lb": "Bedenkzäit", "de": "Bedenkzeit", "fr": "temps"}, Help: "cmd.opt.timer", Lobby: "lobby.opt.timer",
		Aliases: map[string][]string{"lb": {"bedenkzäit"}, "de": {"bedenkzeit"}, "fr": {"temps"}},
		Values: []Value{
			{Key: string(TimerFast), Label: "opt.timer.fast", Names: map[string]string{"lb": "kuerz", "de": "schnell", "fr": "rapide"}, Aliases: map[string][]string{"lb": {"kuerz"}, "de": {"schnell", "kurz"}, "fr": {"rapide", "court"}}},
			{Key: string(TimerNormal), Label: "opt.timer.normal"},
			{Key: string(TimerRelaxed), Label: "opt.timer.relaxed", Names: map[string]string{"lb": "laang", "de": "lang", "fr": "long"}, Aliases: map[string][]string{"lb": {"laang", "gemittlech"}, "de": {"lang", "gemütlich"}, "fr": {"long", "détendu"}}},
			{Key: string(TimerNone), Label: "opt.timer.none", Names: map[string]string{"lb": "onbegrenzt", "de": "unbegrenzt", "fr": "illimité"}, Aliases: map[string][]string{"en": {"off"}, "lb": {"onbegrenzt", "keen"}, "de": {"unbegrenzt", "keiner"}, "fr": {"illimité", "aucun"}}},
		},
		get: func(o Options) string { return string(o.Timer) },
		set: func(o *Options, v string) { o.Timer = TimerPreset(v) }},
	{Key: "direction", Names: map[string]string{"lb": "Richtung", "de": "Richtung", "fr": "sens"}, Help: "cmd.opt.direction",
		Aliases: map[string][]string{"en": {"dir"}, "lb": {"richtung"}, "de": {"richtung"}, "fr": {"sens"}},
		Values: []Value{
			{Key: "clockwise", Label: "opt.direction.clockwise", Names: map[string]string{"lb": "mat-der-Auer", "de": "Uhrzeigersinn", "fr": "horaire"},
				Aliases: map[string][]string{"en": {"cw"}, "lb": {"matderauer"}, "de": {"uhrzeigersinn"}, "fr": {"horaire"}}},
			// lb "géint d’Auer" typed as one word: the apostrophe as people type it (' or ’) or left out.
			{Key: "anticlockwise", Label: "opt.direction.anticlockwise", Names: map[string]string{"lb": "géint-d'Auer", "de": "Gegenuhrzeigersinn", "fr": "antihoraire"},
				Aliases: map[string][]string{"en": {"counterclockwise", "acw", "ccw", "anti"}, "lb": {"géint-d’auer", "géint-dauer", "geintdauer"}, "de": {"gegenuhrzeigersinn"}, "fr": {"antihoraire"}}},
		},
		get: func(o Options) string { return o.Rules.Direction.String() },
		set: func(o *Options, v string) {
			o.Rules.Direction = core.Clockwise
			if v == "anticlockwise" {
				o.Rules.Direction = core.Anticlockwise
			}
		}},
	{Key: "level", Names: map[string]string{"lb": "Niveau", "de": "Stufe", "fr": "niveau"}, Help: "cmd.opt.level", Lobby: "lobby.opt.level",
		Aliases: map[string][]string{"en": {"bots"}, "lb": {"niveau"}, "de": {"stufe", "niveau"}, "fr": {"niveau"}},
		Values: []Value{
			{Key: "easy", Label: "opt.level.easy", Names: map[string]string{"lb": "liicht", "de": "leicht", "fr": "facile"}, Aliases: map[string][]string{"lb": {"liicht"}, "de": {"leicht"}, "fr": {"facile"}}},
			{Key: "normal", Label: "opt.level.normal"},
			{Key: "strong", Label: "opt.level.strong", Names: map[string]string{"lb": "staark", "de": "stark", "fr": "fort"}, Aliases: map[string][]string{"lb": {"staark"}, "de": {"stark"}, "fr": {"fort"}}},
		},
		get: func(o Options) string { return o.Level },
		set: func(o *Options, v string) { o.Level = v }},
	{Key: "hints", Names: map[string]string{"lb": "Tipps", "de": "Tipps", "fr": "conseils"}, Help: "cmd.opt.hints", Lobby: "lobby.opt.hints", Values: onOff,
		Aliases: map[string][]string{"en": {"hint"}, "lb": {"tipp", "tippen"}, "de": {"tipps", "hinweise"}, "fr": {"conseils", "indices"}},
		get:     func(o Options) string { return onOffText(o.Hints) },
		set:     func(o *Options, v string) { o.Hints = v == "on" }},
	{Key: "pace", Names: map[string]string{"lb": "Tempo", "de": "Tempo", "fr": "rythme"}, Help: "cmd.opt.pace", Lobby: "lobby.opt.pace", Quiet: true,
		Aliases: map[string][]string{"fr": {"tempo"}},
		Values: []Value{
			{Key: string(PaceFast), Label: "opt.pace.fast", Names: map[string]string{"lb": "séier", "de": "schnell", "fr": "rapide"}},
			{Key: string(PaceNormal), Label: "opt.pace.normal"},
			{Key: string(PaceRelaxed), Label: "opt.pace.relaxed", Names: map[string]string{"lb": "gemittlech", "de": "lang", "fr": "détendu"},
				Aliases: map[string][]string{"de": {"gemütlich"}}},
		},
		get: func(o Options) string { return string(o.Pace) },
		set: func(o *Options, v string) { o.Pace = PacePreset(v) }},
}

// Named finds the option typed names (its key or an alias).
func Named(typed string) (Option, bool) {
	f := i18n.Fold(typed)
	for _, o := range All {
		if named(f, o.Key, o.Aliases) || namedIn(f, o.Names) {
			return o, true
		}
	}
	return Option{}, false
}

// Error is a "key=value" that new cannot take: an option nobody knows (Option is nil), or a
// value the option does not take. Name is the key as it was typed.
type Error struct {
	Name, Value string
	Option      *Option
}

func (e *Error) Error() string {
	if e.Option == nil {
		return fmt.Sprintf("unknown option %q", e.Name)
	}
	return fmt.Sprintf("bad value %q for option %s", e.Value, e.Option.Key)
}

// Parse reads the "key=value" arguments of new onto the defaults (see All).
// Arguments without "=" are not options and are ignored here.
func Parse(args []string) (Options, error) {
	o := Default()
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			continue
		}
		k, v = strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
		opt, ok := Named(k)
		if !ok {
			return o, &Error{Name: k, Value: v}
		}
		bad := &Error{Name: k, Value: v, Option: &opt}
		if opt.Number() {
			n, err := strconv.Atoi(v)
			if err != nil || n < opt.Min || n > opt.Max {
				return o, bad
			}
			opt.set(&o, strconv.Itoa(n))
			continue
		}
		val, ok := opt.Value(v)
		if !ok {
			return o, bad
		}
		opt.set(&o, val.Key)
	}
	return o, nil
}

// String gives the options as new accepts them.
func (o Options) String() string {
	parts := make([]string, len(All))
	for i, opt := range All {
		parts[i] = opt.Key + "=" + opt.get(o)
	}
	return strings.Join(parts, " ")
}

// Syntax lists every option as help in lang shows it: "stripes=9 (1–20) draw=stake|flat1 …",
// "Strécher=9 (1–20) Stänner=Asaz|1 …".
func Syntax(lang string) string {
	parts := make([]string, len(All))
	for i, opt := range All {
		parts[i] = opt.SyntaxIn(lang)
	}
	return strings.Join(parts, " ")
}

// Usage describes the options new takes in lang, one line each, the default first: the
// usage text of a command-line flag that passes them on ("stripes=9 (1–20): …").
func Usage(lang string) string {
	lines := make([]string, len(All))
	for i, opt := range All {
		lines[i] = i18n.Label(lang, opt.Syntax(), i18n.T(lang, opt.Help))
	}
	return strings.Join(lines, "\n")
}

// Line is the lobby's summary of a table's options: "9 stripes · draw costs the stake · …".
func Line(lang string, o Options) string {
	parts := make([]string, len(All))
	for i, opt := range All {
		v := opt.get(o)
		switch {
		case opt.Quiet && v == opt.Default():
			continue
		case opt.Number():
			n, _ := strconv.Atoi(v)
			parts[i] = i18n.N(lang, opt.Lobby, n)
		case opt.Lobby == "":
			parts[i] = opt.ValueLabel(lang, v)
		default:
			parts[i] = i18n.T(lang, opt.Lobby, opt.ValueLabel(lang, v))
		}
	}
	return strings.Join(slices.DeleteFunc(parts, func(p string) bool { return p == "" }), " · ")
}

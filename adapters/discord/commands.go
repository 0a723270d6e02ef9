package discord

import (
	"fmt"
	"strconv"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/options"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// CommandName is the one slash command; the verbs are its subcommands.
const CommandName = "km"

// localized gives a catalog text in the languages Discord shows: English is the default, German
// and French its localizations. Discord has no Luxembourgish locale: Luxembourgish speakers see
// English and pick lb with /km lang.
func localized(text func(lang string) string) (string, map[discordgo.Locale]string) {
	return text("en"), map[discordgo.Locale]string{discordgo.German: text("de"), discordgo.French: text("fr")}
}

// catalog is a catalog text as a function of the language.
func catalog(key string) func(lang string) string {
	return func(lang string) string { return i18n.T(lang, key) }
}

func literal(s string) func(string) string { return func(string) string { return s } }

type choiceDef struct {
	value any // string or int
	name  func(lang string) string
}

type optionDef struct {
	name         string
	typ          discordgo.ApplicationCommandOptionType
	desc         func(lang string) string
	required     bool
	autocomplete bool
	choices      []choiceDef
	min, max     int // an integer option with more values than Discord's 25 choices
}

// subcommandDef is a verb as a subcommand of /km; its description is the catalog's cmd.<verb>.
// A verb of a group is typed with the group's name first: /km league top.
type subcommandDef struct {
	verb api.Verb
	opts []optionDef
}

// The groups of subcommands. Discord allows a command 25 subcommands and groups together, and a
// group 25 subcommands (developer docs, Application Commands: Subcommands and Subcommand
// Groups): the game's verbs are /km's own, the league's are a group of theirs. Each group is
// described by the catalog's discord.group.<name>.
const groupLeague = "league"

// groupOf is the group a verb belongs to, if any.
var groupOf = map[api.Verb]string{
	api.VerbStats: groupLeague, api.VerbTop: groupLeague, api.VerbHistory: groupLeague,
	api.VerbSettings: groupLeague, api.VerbMyData: groupLeague, api.VerbForget: groupLeague,
}

// maxChoices is how many choices Discord allows an option.
const maxChoices = 25

func seatChoices() []choiceDef {
	var out []choiceDef
	for n := 1; n <= 4; n++ {
		out = append(out, choiceDef{n, literal(strconv.Itoa(n))})
	}
	return out
}

func suitChoices() []choiceDef {
	var out []choiceDef
	for _, s := range core.Suits {
		out = append(out, choiceDef{i18n.Suit("en", s), func(lang string) string { return i18n.SuitLabel(lang, s) }})
	}
	return out
}

func callChoices() []choiceDef {
	var out []choiceDef
	for _, c := range []core.Call{core.CallKonter, core.CallMatt, core.CallKonterAMatt} {
		out = append(out, choiceDef{c.String(), literal(c.Title())})
	}
	return out
}

// tableOptions are /km new's options: the service's table options, each described with its
// default, a choice option's values named as the lobby names them.
func tableOptions() []optionDef {
	var out []optionDef
	for _, o := range options.All {
		od := optionDef{name: o.Key, desc: func(lang string) string {
			return i18n.T(lang, "cmd.opt.default", i18n.T(lang, o.Help), o.ValueLabel(lang, o.Default()))
		}}
		switch {
		case o.Number() && o.Max-o.Min+1 > maxChoices:
			od.typ, od.min, od.max = discordgo.ApplicationCommandOptionInteger, o.Min, o.Max
		case o.Number():
			od.typ = discordgo.ApplicationCommandOptionInteger
			for n := o.Min; n <= o.Max; n++ {
				od.choices = append(od.choices, choiceDef{n, literal(strconv.Itoa(n))})
			}
		default:
			od.typ = discordgo.ApplicationCommandOptionString
			for _, v := range o.Values {
				name := catalog(v.Label)
				if o.Key == "timer" {
					name = timerName(options.TimerPreset(v.Key), name)
				}
				od.choices = append(od.choices, choiceDef{v.Key, name})
			}
		}
		out = append(out, od)
	}
	return out
}

var seatOption = optionDef{name: "seat", typ: discordgo.ApplicationCommandOptionInteger, desc: catalog("cmd.opt.seat"), choices: seatChoices()}

// subcommands are the verbs players may use on Discord, in help order.
var subcommands = []subcommandDef{
	{api.VerbNew, tableOptions()},
	{api.VerbJoin, []optionDef{seatOption}},
	{api.VerbLeave, nil},
	{api.VerbBot, []optionDef{
		{name: "remove", typ: discordgo.ApplicationCommandOptionBoolean, desc: catalog("cmd.opt.remove")},
		seatOption,
	}},
	{api.VerbSeat, []optionDef{
		{name: "seat", typ: discordgo.ApplicationCommandOptionInteger, required: true, choices: seatChoices(), desc: catalog("cmd.opt.seat_to")},
	}},
	{api.VerbShuffle, nil},
	{api.VerbDeal, nil},
	{api.VerbTrump, []optionDef{
		{name: "suit", typ: discordgo.ApplicationCommandOptionString, required: true, choices: suitChoices(), desc: catalog("cmd.opt.suit")},
	}},
	{api.VerbAnnounce, []optionDef{
		{name: "call", typ: discordgo.ApplicationCommandOptionString, required: true, choices: callChoices(), desc: catalog("cmd.opt.call")},
	}},
	{api.VerbPlay, []optionDef{
		{name: "card", typ: discordgo.ApplicationCommandOptionString, required: true, autocomplete: true, desc: catalog("cmd.opt.card")},
	}},
	{api.VerbHand, nil},
	{api.VerbBoard, nil},
	{api.VerbLast, nil},
	{api.VerbStop, nil},
	{api.VerbRematch, []optionDef{
		{name: "partners", typ: discordgo.ApplicationCommandOptionString, desc: catalog("cmd.opt.partners"),
			choices: []choiceDef{{"same", catalog("opt.partners.same")}, {"rotate", catalog("opt.partners.rotate")}}},
	}},
	{api.VerbLang, []optionDef{
		{name: "language", typ: discordgo.ApplicationCommandOptionString, required: true, desc: catalog("cmd.opt.language"),
			choices: languageChoices()},
		{name: "for", typ: discordgo.ApplicationCommandOptionString, desc: catalog("cmd.opt.for"),
			choices: []choiceDef{{"me", catalog("opt.for.me")}, {"table", catalog("opt.for.table")}}},
	}},
	{api.VerbRules, nil},
	{api.VerbHelp, nil},
	{api.VerbStats, []optionDef{
		{name: "player", typ: discordgo.ApplicationCommandOptionString, desc: catalog("cmd.opt.player")},
		{name: "ranked", typ: discordgo.ApplicationCommandOptionString, desc: catalog("cmd.opt.ranked"),
			choices: []choiceDef{{"on", catalog("opt.on")}, {"off", catalog("opt.off")}}},
	}},
	{api.VerbTop, []optionDef{
		{name: "season", typ: discordgo.ApplicationCommandOptionString, desc: catalog("cmd.opt.season")},
	}},
	{api.VerbHistory, nil},
	{api.VerbSettings, append(tableOptions(), optionDef{name: "language", typ: discordgo.ApplicationCommandOptionString,
		desc: catalog("cmd.opt.language"), choices: languageChoices()})},
	{api.VerbMyData, nil},
	{api.VerbForget, []optionDef{
		{name: "confirm", typ: discordgo.ApplicationCommandOptionBoolean, desc: catalog("cmd.opt.confirm")},
	}},
	{api.VerbHint, nil},
	{api.VerbReview, []optionDef{
		{name: "game", typ: discordgo.ApplicationCommandOptionInteger, desc: catalog("cmd.opt.game"), min: 1, max: 100},
	}},
	{api.VerbCoach, []optionDef{
		{name: "mode", typ: discordgo.ApplicationCommandOptionString, required: true, desc: catalog("cmd.opt.mode"),
			choices: []choiceDef{{"on", catalog("opt.on")}, {"off", catalog("opt.off")}}},
	}},
	{api.VerbLearn, nil},
}

// subcommandPath is how a verb is typed after /km: "join", or with its group "league top".
func subcommandPath(v api.Verb) string {
	if g := groupOf[v]; g != "" {
		return g + " " + string(v)
	}
	return string(v)
}

// languageChoices name each language as it names itself, Luxembourgish first.
func languageChoices() []choiceDef {
	var out []choiceDef
	for _, l := range []string{"lb", "en", "de", "fr"} {
		out = append(out, choiceDef{l, literal(i18n.T(l, "lang.name"))})
	}
	return out
}

// Commands gives the slash command definitions registered at start: /km with one subcommand per
// verb, described from the catalog in English, German and French.
//
// Where it may be used is said explicitly, since apps made since 2024 also default to being
// installed to users, whose commands come from servers the bot is not in (developer docs, Change
// Log 2024-06-27: Updated Defaults for New Apps): /km is installed with the server
// (integration_types GUILD_INSTALL) and used in servers and in DMs with the bot (contexts GUILD
// and BOT_DM), where a player reads their hand, the rules and the help and picks a language.
// Group DMs are left out: the bot cannot post there. Guild commands (guildOnly) take no BOT_DM
// (developer docs, Application Commands: Permissions).
func Commands(guildOnly bool) []*discordgo.ApplicationCommand {
	var subs []*discordgo.ApplicationCommandOption
	groups := map[string]*discordgo.ApplicationCommandOption{}
	for _, sc := range subcommands {
		desc, descs := localized(catalog("cmd." + string(sc.verb)))
		sub := &discordgo.ApplicationCommandOption{Type: discordgo.ApplicationCommandOptionSubCommand, Name: string(sc.verb),
			Description: desc, DescriptionLocalizations: descs}
		for _, od := range sc.opts {
			desc, descs := localized(od.desc)
			o := &discordgo.ApplicationCommandOption{Type: od.typ, Name: od.name, Description: desc,
				DescriptionLocalizations: descs, Required: od.required, Autocomplete: od.autocomplete}
			if od.max > od.min {
				lo := float64(od.min)
				o.MinValue, o.MaxValue = &lo, float64(od.max)
			}
			for _, cd := range od.choices {
				name, names := localized(cd.name)
				o.Choices = append(o.Choices, &discordgo.ApplicationCommandOptionChoice{Name: name, NameLocalizations: names, Value: cd.value})
			}
			sub.Options = append(sub.Options, o)
		}
		group := groupOf[sc.verb]
		if group == "" {
			subs = append(subs, sub)
			continue
		}
		g := groups[group]
		if g == nil {
			desc, descs := localized(catalog("discord.group." + group))
			g = &discordgo.ApplicationCommandOption{Type: discordgo.ApplicationCommandOptionSubCommandGroup, Name: group,
				Description: desc, DescriptionLocalizations: descs}
			groups[group] = g
			subs = append(subs, g)
		}
		g.Options = append(g.Options, sub)
	}
	desc, descs := localized(catalog("discord.km"))
	contexts := []discordgo.InteractionContextType{discordgo.InteractionContextGuild, discordgo.InteractionContextBotDM}
	if guildOnly {
		contexts = contexts[:1]
	}
	installs := []discordgo.ApplicationIntegrationType{discordgo.ApplicationIntegrationGuildInstall}
	return []*discordgo.ApplicationCommand{{
		Type: discordgo.ChatApplicationCommand, Name: CommandName, Description: desc,
		DescriptionLocalizations: &descs, Options: subs, Contexts: &contexts, IntegrationTypes: &installs,
	}}
}

// optionString gives an option's value as typed text.
func optionString(o *discordgo.ApplicationCommandInteractionDataOption) string {
	switch v := o.Value.(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(v)
	}
	return ""
}

// argsFor turns a subcommand's options into the arguments the service parses, in its order.
func argsFor(verb api.Verb, opts []*discordgo.ApplicationCommandInteractionDataOption) []string {
	byName := map[string]string{}
	for _, o := range opts {
		byName[o.Name] = optionString(o)
	}
	var args []string
	switch verb {
	case api.VerbNew:
		for _, od := range subcommandOf(verb).opts {
			if v, ok := byName[od.name]; ok {
				args = append(args, od.name+"="+v)
			}
		}
	case api.VerbBot:
		if byName["remove"] == "true" {
			args = append(args, "remove")
		}
		if v, ok := byName["seat"]; ok {
			args = append(args, v)
		}
	case api.VerbLang:
		if byName["for"] == "table" {
			args = append(args, "table")
		}
		if v, ok := byName["language"]; ok {
			args = append(args, v)
		}
	case api.VerbSettings:
		for _, od := range subcommandOf(verb).opts {
			if v, ok := byName[od.name]; ok && od.name == "language" {
				args = append(args, "lang="+v)
			} else if ok {
				args = append(args, od.name+"="+v)
			}
		}
	case api.VerbStats:
		if v := byName["ranked"]; v != "" {
			args = append(args, v)
		} else if v := byName["player"]; v != "" {
			args = append(args, v)
		}
	case api.VerbForget:
		if byName["confirm"] == "true" {
			args = append(args, "yes")
		}
	default:
		for _, od := range subcommandOf(verb).opts {
			if v, ok := byName[od.name]; ok && v != "" {
				args = append(args, v)
			}
		}
	}
	return args
}

func subcommandOf(verb api.Verb) subcommandDef {
	for _, sc := range subcommands {
		if sc.verb == verb {
			return sc
		}
	}
	return subcommandDef{}
}

// timerName adds a timer preset's turn timeout, taken from the service so the two cannot
// disagree, to its name: "fast (45 s)".
func timerName(p options.TimerPreset, name func(lang string) string) func(lang string) string {
	_, timeout, _ := p.Durations()
	if timeout == 0 {
		return name
	}
	var d string
	switch {
	case timeout < time.Minute:
		d = fmt.Sprintf("%d s", int(timeout.Seconds()))
	case timeout < time.Hour:
		d = fmt.Sprintf("%d min", int(timeout.Minutes()))
	default:
		d = fmt.Sprintf("%d h", int(timeout.Hours()))
	}
	return func(lang string) string { return name(lang) + " (" + d + ")" }
}

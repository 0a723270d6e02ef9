package discord

import (
	"fmt"
	"strconv"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table"
)

// CommandName is the one slash command; the verbs are its subcommands.
const CommandName = "km"

// text is a description in the languages Discord can show. Discord has no Luxembourgish
// locale: Luxembourgish speakers see English and pick lb with /km lang.
type text struct{ en, de, fr string }

func (t text) localized() map[discordgo.Locale]string {
	return map[discordgo.Locale]string{discordgo.German: t.de, discordgo.French: t.fr}
}

type choiceDef struct {
	value any // string or int
	name  text
}

type optionDef struct {
	name         string
	typ          discordgo.ApplicationCommandOptionType
	desc         text
	required     bool
	autocomplete bool
	choices      []choiceDef
}

type subcommandDef struct {
	verb table.Verb
	desc text
	opts []optionDef
}

func onOffChoices() []choiceDef {
	return []choiceDef{
		{"on", text{"on", "an", "oui"}},
		{"off", text{"off", "aus", "non"}},
	}
}

func seatChoices() []choiceDef {
	var out []choiceDef
	for n := 1; n <= 4; n++ {
		s := strconv.Itoa(n)
		out = append(out, choiceDef{n, text{s, s, s}})
	}
	return out
}

func stripeChoices() []choiceDef {
	var out []choiceDef
	for n := 1; n <= 20; n++ {
		s := strconv.Itoa(n)
		out = append(out, choiceDef{n, text{s, s, s}})
	}
	return out
}

func suitChoices() []choiceDef {
	var out []choiceDef
	for _, s := range core.Suits {
		out = append(out, choiceDef{i18n.Suit("en", s), text{i18n.SuitLabel("en", s), i18n.SuitLabel("de", s), i18n.SuitLabel("fr", s)}})
	}
	return out
}

func callChoices() []choiceDef {
	var out []choiceDef
	for _, c := range []core.Call{core.CallKonter, core.CallMatt, core.CallKonterAMatt} {
		out = append(out, choiceDef{c.String(), text{c.Title(), c.Title(), c.Title()}})
	}
	return out
}

var seatOption = optionDef{name: "seat", typ: discordgo.ApplicationCommandOptionInteger,
	desc: text{"Seat 1–4 (optional)", "Platz 1–4 (optional)", "Place 1 à 4 (facultatif)"}, choices: seatChoices()}

// subcommands are the verbs players may use on Discord, in help order.
var subcommands = []subcommandDef{
	{table.VerbNew, text{"Open a table in this channel", "Einen Tisch in diesem Kanal eröffnen", "Ouvrir une table dans ce salon"}, []optionDef{
		{name: "stripes", typ: discordgo.ApplicationCommandOptionInteger, choices: stripeChoices(),
			desc: text{"Stripes each team starts with (default 9)", "Striche pro Team zu Beginn (Standard 9)", "Traits par équipe au départ (9 par défaut)"}},
		{name: "draw", typ: discordgo.ApplicationCommandOptionString,
			desc: text{"What a drawn game costs", "Was ein Unentschieden kostet", "Ce que coûte une donne nulle"},
			choices: []choiceDef{
				{"stake", text{"the stake", "den Einsatz", "la mise"}},
				{"flat1", text{"one stripe", "einen Strich", "un trait"}},
			}},
		{name: "bonus", typ: discordgo.ApplicationCommandOptionString, choices: onOffChoices(),
			desc: text{"Bonus for taking all tricks", "Bonus für alle Stiche", "Bonus pour tous les plis"}},
		{name: "announce", typ: discordgo.ApplicationCommandOptionString, choices: onOffChoices(),
			desc: text{"Allow announcements (Konter, Matt)", "Ansagen erlauben (Konter, Matt)", "Autoriser les annonces (Konter, Matt)"}},
		{name: "timer", typ: discordgo.ApplicationCommandOptionString,
			desc: text{"Thinking time per move", "Bedenkzeit pro Zug", "Temps de réflexion par coup"},
			choices: []choiceDef{
				timerChoice(table.TimerFast, text{"fast", "schnell", "rapide"}),
				timerChoice(table.TimerNormal, text{"normal", "normal", "normal"}),
				timerChoice(table.TimerRelaxed, text{"relaxed", "gemütlich", "détendu"}),
				timerChoice(table.TimerNone, text{"none", "keine", "aucun"}),
			}},
		{name: "level", typ: discordgo.ApplicationCommandOptionString,
			desc: text{"Strength of the computer players", "Stärke der Computerspieler", "Force des joueurs ordinateur"},
			choices: []choiceDef{
				{"easy", text{"easy", "leicht", "facile"}},
				{"normal", text{"normal", "normal", "normal"}},
				{"strong", text{"strong", "stark", "fort"}},
			}},
	}},
	{table.VerbJoin, text{"Take a seat at the table", "Am Tisch Platz nehmen", "Prendre place à la table"}, []optionDef{seatOption}},
	{table.VerbLeave, text{"Leave your seat", "Deinen Platz verlassen", "Quitter ta place"}, nil},
	{table.VerbBot, text{"Add a computer player (or remove one)", "Computerspieler hinzufügen (oder entfernen)", "Ajouter un joueur ordinateur (ou en retirer un)"}, []optionDef{
		{name: "remove", typ: discordgo.ApplicationCommandOptionBoolean,
			desc: text{"Remove a computer player instead", "Stattdessen einen Computerspieler entfernen", "Retirer plutôt un joueur ordinateur"}},
		seatOption,
	}},
	{table.VerbSeat, text{"Move to another seat, swapping with whoever sits there", "Den Platz wechseln (tauscht mit dem, der dort sitzt)", "Changer de place (échange avec l'occupant)"}, []optionDef{
		{name: "seat", typ: discordgo.ApplicationCommandOptionInteger, required: true, choices: seatChoices(),
			desc: text{"Seat 1–4", "Platz 1–4", "Place 1 à 4"}},
	}},
	{table.VerbShuffle, text{"Shuffle the teams", "Die Teams mischen", "Mélanger les équipes"}, nil},
	{table.VerbDeal, text{"Start the match; computers fill the empty seats", "Das Spiel beginnen; Computer füllen leere Plätze", "Commencer ; l'ordinateur occupe les places libres"}, nil},
	{table.VerbTrump, text{"Name trump", "Trumpf bestimmen", "Choisir l'atout"}, []optionDef{
		{name: "suit", typ: discordgo.ApplicationCommandOptionString, required: true, choices: suitChoices(),
			desc: text{"The trump suit", "Die Trumpffarbe", "La couleur d'atout"}},
	}},
	{table.VerbAnnounce, text{"Announce Konter, Matt or Konter a Matt", "Konter, Matt oder Konter a Matt ansagen", "Annoncer Konter, Matt ou Konter a Matt"}, []optionDef{
		{name: "call", typ: discordgo.ApplicationCommandOptionString, required: true, choices: callChoices(),
			desc: text{"What you announce", "Was du ansagst", "Ce que tu annonces"}},
	}},
	{table.VerbPlay, text{"Play a card", "Eine Karte spielen", "Jouer une carte"}, []optionDef{
		{name: "card", typ: discordgo.ApplicationCommandOptionString, required: true, autocomplete: true,
			desc: text{"Your card: the list offers the cards you may play", "Deine Karte: die Liste zeigt die erlaubten Karten", "Ta carte : la liste propose les cartes jouables"}},
	}},
	{table.VerbHand, text{"Show your hand (only you see it)", "Deine Karten zeigen (nur du siehst sie)", "Montrer ta main (toi seul la vois)"}, nil},
	{table.VerbBoard, text{"Show the stripe board", "Die Strichtafel zeigen", "Montrer le tableau des traits"}, nil},
	{table.VerbLast, text{"Show the last trick", "Den letzten Stich zeigen", "Montrer le dernier pli"}, nil},
	{table.VerbStop, text{"Stop the match (all players agree, or an admin)", "Das Spiel beenden (alle stimmen zu, oder ein Admin)", "Arrêter la partie (tous d'accord, ou un admin)"}, nil},
	{table.VerbRematch, text{"Play again", "Noch einmal spielen", "Rejouer"}, []optionDef{
		{name: "partners", typ: discordgo.ApplicationCommandOptionString,
			desc: text{"Same teams or new partners", "Gleiche Teams oder neue Partner", "Mêmes équipes ou nouveaux partenaires"},
			choices: []choiceDef{
				{"same", text{"same teams", "gleiche Teams", "mêmes équipes"}},
				{"rotate", text{"new partners", "neue Partner", "nouveaux partenaires"}},
			}},
	}},
	{table.VerbLang, text{"Choose your language (lb = Lëtzebuergesch)", "Deine Sprache wählen (lb = Lëtzebuergesch)", "Choisir ta langue (lb = Lëtzebuergesch)"}, []optionDef{
		{name: "language", typ: discordgo.ApplicationCommandOptionString, required: true,
			desc: text{"The language", "Die Sprache", "La langue"},
			choices: []choiceDef{
				{"lb", text{"Lëtzebuergesch", "Lëtzebuergesch", "Lëtzebuergesch"}},
				{"en", text{"English", "English", "English"}},
				{"de", text{"Deutsch", "Deutsch", "Deutsch"}},
				{"fr", text{"Français", "Français", "Français"}},
			}},
		{name: "for", typ: discordgo.ApplicationCommandOptionString,
			desc: text{"For you (default) or for the whole table", "Für dich (Standard) oder den ganzen Tisch", "Pour toi (par défaut) ou pour toute la table"},
			choices: []choiceDef{
				{"me", text{"me", "mich", "moi"}},
				{"table", text{"the table", "den Tisch", "la table"}},
			}},
	}},
	{table.VerbRules, text{"The rules in short", "Die Regeln in Kürze", "Les règles en bref"}, nil},
	{table.VerbHelp, text{"List the commands", "Die Befehle auflisten", "Lister les commandes"}, nil},
}

var commandDesc = text{"Konter a Matt, the Luxembourgish card game", "Konter a Matt, das luxemburgische Kartenspiel",
	"Konter a Matt, le jeu de cartes luxembourgeois"}

// Commands gives the slash command definitions registered at start: /km with one subcommand per
// verb, described in English, German and French.
func Commands() []*discordgo.ApplicationCommand {
	var subs []*discordgo.ApplicationCommandOption
	for _, sc := range subcommands {
		sub := &discordgo.ApplicationCommandOption{Type: discordgo.ApplicationCommandOptionSubCommand, Name: string(sc.verb),
			Description: sc.desc.en, DescriptionLocalizations: sc.desc.localized()}
		for _, od := range sc.opts {
			o := &discordgo.ApplicationCommandOption{Type: od.typ, Name: od.name, Description: od.desc.en,
				DescriptionLocalizations: od.desc.localized(), Required: od.required, Autocomplete: od.autocomplete}
			for _, cd := range od.choices {
				o.Choices = append(o.Choices, &discordgo.ApplicationCommandOptionChoice{Name: cd.name.en,
					NameLocalizations: cd.name.localized(), Value: cd.value})
			}
			sub.Options = append(sub.Options, o)
		}
		subs = append(subs, sub)
	}
	desc := commandDesc.localized()
	dm := true
	contexts := []discordgo.InteractionContextType{discordgo.InteractionContextGuild, discordgo.InteractionContextBotDM}
	return []*discordgo.ApplicationCommand{{
		Type: discordgo.ChatApplicationCommand, Name: CommandName, Description: commandDesc.en,
		DescriptionLocalizations: &desc, Options: subs, DMPermission: &dm, Contexts: &contexts,
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
func argsFor(verb table.Verb, opts []*discordgo.ApplicationCommandInteractionDataOption) []string {
	byName := map[string]string{}
	for _, o := range opts {
		byName[o.Name] = optionString(o)
	}
	var args []string
	switch verb {
	case table.VerbNew:
		for _, od := range subcommandOf(verb).opts {
			if v, ok := byName[od.name]; ok {
				args = append(args, od.name+"="+v)
			}
		}
	case table.VerbBot:
		if byName["remove"] == "true" {
			args = append(args, "remove")
		}
		if v, ok := byName["seat"]; ok {
			args = append(args, v)
		}
	case table.VerbLang:
		if byName["for"] == "table" {
			args = append(args, "table")
		}
		if v, ok := byName["language"]; ok {
			args = append(args, v)
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

func subcommandOf(verb table.Verb) subcommandDef {
	for _, sc := range subcommands {
		if sc.verb == verb {
			return sc
		}
	}
	return subcommandDef{}
}

// timerChoice labels a timer preset with its turn timeout, taken from the service so the two
// cannot disagree: "fast (45 s)".
func timerChoice(p table.TimerPreset, name text) choiceDef {
	_, timeout, _ := p.Durations()
	if timeout == 0 {
		return choiceDef{string(p), name}
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
	return choiceDef{string(p), text{name.en + " (" + d + ")", name.de + " (" + d + ")", name.fr + " (" + d + ")"}}
}

package telegram

import (
	"slices"

	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// With privacy mode on (every bot's default) a group delivers a plain "/join" to the bot only if
// it was the last bot to write there; "/join@botname" always reaches it (Bot API docs, "Privacy
// mode": a bot gets "commands explicitly meant for them (e.g., /command@this_bot)", and general
// commands "if the bot was the last bot to send a message to the group"). So the texts a group
// reads name the bot in every command they tell people to type.

// groupVerbs are the bot's commands a group text may name: the table's verbs and /start.
var groupVerbs = append(slices.Clone(api.Verbs), "start")

// rewriteCommands writes the bot's commands in a group text as /cmd@botname.
func (a *Adapter) rewriteCommands(text string) string {
	if a.Username() == "" {
		return text // before Telegram has said the bot's name: the plain commands
	}
	return addressed(text, a.Username())
}

// addressed writes each of the bot's commands a text names as typed to the bot by name; other
// words, links and a command that names a bot already ("/join@other") stay as they are.
func addressed(text, bot string) string {
	return i18n.RewriteCommands(text, groupVerbs, func(v api.Verb) string { return "/" + string(v) + "@" + bot })
}

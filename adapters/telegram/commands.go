package telegram

import (
	"strings"
	"unicode/utf8"

	"github.com/kontermatt/kontermatt/core/table"
)

// With privacy mode on (every bot's default) a group delivers a plain "/join" to the bot only if
// it was the last bot to write there; "/join@botname" always reaches it (Bot API docs, "Privacy
// mode": a bot gets "commands explicitly meant for them (e.g., /command@this_bot)", and general
// commands "if the bot was the last bot to send a message to the group"). So the texts a group
// reads name the bot in every command they tell people to type.

// rewriteCommands writes the bot's commands in a group text as /cmd@botname.
func (a *Adapter) rewriteCommands(text string) string {
	return rewriteCommands(text, a.mention)
}

// mention is how a group types one of the bot's commands; another word stays as it was.
func (a *Adapter) mention(verb string) string {
	if _, ok := table.ParseVerb(verb); !ok && verb != "start" {
		return "/" + verb
	}
	return "/" + verb + "@" + a.bot.Self.UserName
}

// rewriteCommands replaces each command mention in text ("/join", as a word of its own) by
// write(verb), verb without the slash, and leaves everything else alone: URLs and paths
// ("https://x/rules", "a/b"), a command that names its bot already ("/join@bot").
//
// It has the contract of i18n.RewriteCommands, which the text catalog is getting; until that is
// on main, this private copy does the job, and it goes once that lands.
func rewriteCommands(text string, write func(verb string) string) string {
	var b strings.Builder
	for i := 0; i < len(text); {
		j := strings.IndexByte(text[i:], '/')
		if j < 0 {
			b.WriteString(text[i:])
			break
		}
		j += i
		b.WriteString(text[i:j])
		end := j + 1
		for end < len(text) && isCommandByte(text[end]) {
			end++
		}
		verb := text[j+1 : end]
		if verb == "" || !commandStart(text, j) || !commandEnd(text, end) || len(verb) > 32 {
			b.WriteString(text[j:end])
			i = end
			continue
		}
		b.WriteString(write(verb))
		i = end
	}
	return b.String()
}

// Telegram's commands are 1–32 of a–z, 0–9 and _ (Bot API, BotCommand.command); players'
// texts show them in lower case.
func isCommandByte(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' }

// commandStart reports whether the slash at i begins a word: at the start, after a space or an
// opening mark, and not inside a URL or path (where a letter, a digit or punctuation comes
// before it).
func commandStart(text string, i int) bool {
	if i == 0 {
		return true
	}
	r, _ := utf8.DecodeLastRuneInString(text[:i])
	switch r {
	case ' ', '\n', '\t', '(', '[', '"', '\'', '“', '‘', '„', '«', '‹', '—', '–':
		return true
	}
	return false
}

// commandEnd reports whether a command word ends at i: at the end, or before a space or a
// closing mark; "@" (already addressed), "/" or "." followed by more (a path, a file) do not end
// one.
func commandEnd(text string, i int) bool {
	if i == len(text) {
		return true
	}
	r, size := utf8.DecodeRuneInString(text[i:])
	switch r {
	case ' ', '\n', '\t', ')', ']', '"', '\'', '”', '’', '“', '»', '›', ',', ';', ':', '!', '?':
		return true
	case '.':
		next := i + size
		return next == len(text) || text[next] == ' ' || text[next] == '\n'
	}
	return false
}

package telegram

import (
	"context"
	"strconv"
	"strings"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table"
)

// alertMax is the longest callback answer Telegram shows (characters).
const alertMax = 200

func eventID(u tgbotapi.Update) string { return "tg:" + strconv.Itoa(u.UpdateID) }

// onMessage turns a typed command into a table.Command and sends the replies.
func (a *Adapter) onMessage(ctx context.Context, u tgbotapi.Update, thread int) {
	m := u.Message
	if m.From == nil || m.From.IsBot {
		return // channel posts, anonymous admins, other bots
	}
	private := m.Chat.IsPrivate()
	if private {
		a.reachable(m.From.ID) // they wrote to the bot, so the bot may write to them
		thread = 0
	}
	if !m.IsCommand() {
		return
	}
	name, at, _ := strings.Cut(m.CommandWithAt(), "@")
	if at != "" && !strings.EqualFold(at, a.bot.Self.UserName) {
		return // for another bot
	}
	args := strings.Fields(m.CommandArguments())
	place := placeOf(m.Chat.ID, thread)
	place.Title = m.Chat.Title // groups have one; a private chat has none
	cmd := table.Command{Place: place, Actor: playerOf(m.From), Args: args, EventID: eventID(u), Private: private}
	if strings.EqualFold(name, "start") {
		if private {
			a.onStart(ctx, m, cmd)
			return
		}
		name = string(table.VerbHelp)
	}
	verb, ok := table.ParseVerb(name)
	if !ok {
		if !private {
			return // a command of another bot in the group
		}
		verb = table.VerbHelp
	}
	cmd.Verb = verb
	if verb == table.VerbStop && !private {
		cmd.Admin = a.isAdmin(m.Chat.ID, m.From.ID)
	}
	a.replyTyped(cmd, m, thread, a.service().Handle(ctx, cmd))
}

// onStart handles /start in the private chat. With a table as payload (the deep link) it
// delivers the player's hand at once.
func (a *Adapter) onStart(ctx context.Context, m *tgbotapi.Message, cmd table.Command) {
	user := m.From.ID
	lang := i18n.Pick(m.From.LanguageCode)
	if len(cmd.Args) == 0 {
		a.enqueue(&item{chat: user, user: user, msg: table.Message{Kind: table.KindNotice, Text: tr(lang, "start.hi")}})
		return
	}
	cmd.Table, cmd.Verb, cmd.Args = cmd.Args[0], table.VerbHand, nil
	sent := false
	for _, r := range a.service().Handle(ctx, cmd) {
		if r.Kind == table.KindReply {
			a.sendHand(user, r)
			sent = true
		}
	}
	if !sent { // no game yet, or no seat: the hand comes by itself when there is one
		a.enqueue(&item{chat: user, user: user, msg: table.Message{Kind: table.KindNotice, Text: tr(lang, "start.ok")}})
	}
}

// replyTyped sends the replies to a typed command: in a private chat there, in a group as a reply
// to the command. A secret reply (a hand, a refusal that names the sender's cards) goes to the
// sender's private chat; where that is closed to the bot, the group gets its public text and the
// link that opens the private chat.
func (a *Adapter) replyTyped(cmd table.Command, m *tgbotapi.Message, thread int, replies []table.Message) {
	user := m.From.ID
	for _, r := range replies {
		inGroup := &item{chat: m.Chat.ID, thread: thread, replyTo: m.MessageID, msg: r}
		switch {
		case cmd.Private:
			a.enqueue(&item{chat: m.Chat.ID, user: user, msg: r})
		case !r.Secret:
			a.enqueue(inGroup)
		default:
			lang := i18n.Pick(r.Lang, m.From.LanguageCode)
			inGroup.msg = table.Message{Kind: table.KindNotice, Table: r.Table, Text: r.Public, Lang: lang}
			inGroup.link, inGroup.label = a.deepLink(r.Table), tr(lang, "dm.button")
			switch {
			case a.isBlocked(user):
				a.enqueue(inGroup)
			case cmd.Verb == table.VerbHand && r.Kind == table.KindReply:
				a.sendHand(user, r)
			default:
				// If the private chat turns out to be closed, the group gets the public text.
				a.enqueue(&item{chat: user, user: user, msg: r, fallback: inGroup})
			}
		}
	}
}

// onCallback handles a button press: the presser comes from the update, the button's data is only
// a route. Every press is answered; errors and notes go to the presser alone, as the answer.
func (a *Adapter) onCallback(ctx context.Context, u tgbotapi.Update, thread int) {
	cq := u.CallbackQuery
	var text string
	alert := false
	defer func() { a.answer(cq.ID, text, alert) }() // also after a panic in the service
	if cq.From == nil || cq.Message == nil {
		return
	}
	lang := i18n.Pick(cq.From.LanguageCode)
	act, err := table.ParseAction(cq.Data)
	if err != nil {
		text = tr(lang, "btn.alien")
		return
	}
	user := cq.From.ID
	private := cq.Message.Chat.IsPrivate()
	if private {
		a.reachable(user)
		thread = 0
	}
	cmd := act.Command(placeOf(cq.Message.Chat.ID, thread), playerOf(cq.From), eventID(u), private)
	var lines []string
	for _, r := range a.service().Handle(ctx, cmd) {
		switch {
		case act.Verb == table.VerbHand && r.Kind == table.KindReply:
			// Shown to the presser only, as an alert; and brought to the private chat if possible.
			lines, alert = append(lines, r.Text), true
			if !a.isBlocked(user) {
				a.sendHand(user, r)
			}
		case r.Kind == table.KindReply:
			lines, alert = append(lines, r.Text), true
			if len16(r.Text) > alertMax && !a.isBlocked(user) {
				a.enqueue(&item{chat: user, user: user, msg: r}) // the whole text, privately
			}
		case r.Kind == table.KindError:
			lines, alert = append(lines, r.Text), true
		default:
			lines = append(lines, r.Text)
		}
	}
	text = compact(lines, alertMax)
}

// answer answers a callback query (stops the button's spinner); text, if any, is shown to the
// presser alone.
func (a *Adapter) answer(id, text string, alert bool) {
	if _, err := a.bot.Request(tgbotapi.CallbackConfig{CallbackQueryID: id, Text: text, ShowAlert: alert && text != ""}); err != nil {
		a.log.Warn("answering a button press failed", "err", a.red.Err(err))
	}
}

// compact fits texts into n characters: blank lines go, then the first line of a longer text
// (a title), then the end is cut.
func compact(texts []string, n int) string {
	var lines []string
	for _, t := range texts {
		for l := range strings.SplitSeq(t, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				lines = append(lines, l)
			}
		}
	}
	s := strings.Join(lines, "\n")
	if len16(s) > n && len(texts) == 1 && len(lines) > 2 {
		s = strings.Join(lines[1:], "\n")
	}
	return clip16(s, n)
}

// onMyChatMember follows a user blocking or unblocking the bot in their private chat.
func (a *Adapter) onMyChatMember(c *tgbotapi.ChatMemberUpdated) {
	if !c.Chat.IsPrivate() {
		return
	}
	switch c.NewChatMember.Status {
	case "kicked":
		a.setBlocked(c.From.ID, true)
	case "member":
		a.reachable(c.From.ID)
	}
}

// isAdmin asks Telegram whether the user administers the chat.
func (a *Adapter) isAdmin(chat, user int64) bool {
	m, err := a.bot.GetChatMember(tgbotapi.GetChatMemberConfig{ChatConfigWithUser: tgbotapi.ChatConfigWithUser{ChatID: chat, UserID: user}})
	if err != nil {
		a.log.Warn("getChatMember failed", "chat", chat, "err", a.red.Err(err))
		return false
	}
	return m.IsAdministrator() || m.IsCreator()
}

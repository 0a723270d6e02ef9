package telegram

import (
	"context"
	"strings"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	chatpolicy "github.com/kontermatt/kontermatt/adapters/internal/chat"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// alertMax is the longest callback answer Telegram shows (characters).
const alertMax = 200

// Two senders that are not people (Bot API, Message.from and Message.sender_chat; Bot FAQ):
// GroupAnonymousBot writes for an anonymous group admin, with sender_chat the group; user 777000
// ("Telegram", not marked as a bot) forwards a linked channel's posts into its discussion group.
const (
	anonymousAdmin  int64 = 1087968824
	telegramService int64 = 777000
)

// onMessage turns a typed command into an api.Command and sends the replies. It also follows
// the service messages of a group that became a supergroup.
func (a *Adapter) onMessage(ctx context.Context, u update) error {
	m := u.Message
	thread := u.thread
	switch {
	case m.MigrateToChatID != 0: // in the old group
		return a.migrate(ctx, m.Chat.ID, m.MigrateToChatID)
	case m.MigrateFromChatID != 0: // in the new supergroup
		return a.migrate(ctx, m.MigrateFromChatID, m.Chat.ID)
	}
	chat := a.chatNow(m.Chat.ID)
	private := m.Chat.IsPrivate()
	if !private {
		a.heard(chat, thread)
	}
	anonymous := m.SenderChat != nil && m.SenderChat.ID == m.Chat.ID
	switch {
	case anonymous:
	case m.SenderChat != nil, m.From == nil, m.From.ID == telegramService, m.From.IsBot:
		return nil // a channel's posts (linked or "send as"), their automatic forwards, other bots
	}
	if private {
		a.reachable(m.From.ID) // they wrote to the bot, so the bot may write to them
		thread = 0
	}
	if !m.IsCommand() {
		return nil
	}
	name, at, _ := strings.Cut(m.CommandWithAt(), "@")
	if at != "" && !strings.EqualFold(at, a.Username()) {
		return nil // for another bot
	}
	args := strings.Fields(m.CommandArguments())
	place := placeOf(chat, thread)
	place.Title = m.Chat.Title // groups have one; a private chat has none
	cmd := api.Command{Place: place, Args: args, EventID: eventID(u), Private: private}
	if anonymous {
		// They speak for the group: no person to seat, but certainly one of its admins.
		title := m.Chat.Title
		if title == "" {
			title = m.SenderChat.Title
		}
		cmd.Actor = api.Player{ID: "tg:chat:" + dest(m.Chat.ID), Name: title}
		cmd.Admin, cmd.Anonymous = true, true
	} else {
		cmd.Actor = playerOf(m.From)
	}
	if strings.EqualFold(name, "start") {
		if private {
			a.onStart(ctx, m, cmd)
			return nil
		}
		// Telegram's Start button in a group sends /start@bot: the welcome tells what to press.
		lang := cmd.Actor.Locale
		a.welcome(chat, thread, lang)
		return nil
	}
	verb, ok := api.ParseVerb(name)
	if !ok {
		if !private {
			return nil // a command of another bot in the group
		}
		verb = api.VerbHelp
	}
	cmd.Verb = verb
	if tooLate(m, verb) {
		a.refuseLate(cmd, m, chat, thread)
		return nil
	}
	unchecked := false
	if a.Service().AdminMatters(verb) && !private && !anonymous {
		cmd.Admin, unchecked = a.isAdmin(chat, m.From.ID)
	}
	replies, err := a.Service().Handle(ctx, cmd)
	if unchecked { // they counted as a member, whatever they are: they learn why
		replies = append(replies, api.Message{Kind: api.KindNotice, Lang: i18n.Pick(m.From.LanguageCode),
			Text: tr(m.From.LanguageCode, "admin_unknown")})
	}
	failed := notStored(err)
	if failed && u.again {
		return errNotStored // its sender knows already
	}
	if anonymous {
		replies = a.forAnonymous(chat, replies)
	}
	a.replyTyped(cmd, m, chat, thread, replies)
	if failed {
		return errNotStored
	}
	return nil
}

// forAnonymous keeps the note that an anonymous admin cannot sit down to once per group and
// table: they may not see why their message does nothing, but need not read it every time.
func (a *Adapter) forAnonymous(chat int64, replies []api.Message) []api.Message {
	out := replies[:0:0]
	for _, r := range replies {
		if r.Reason == "err.anonymous" && !a.anonymousNote(chat, r.Table) {
			continue
		}
		r.Secret = false // nobody's cards: they have none
		out = append(out, r)
	}
	return out
}

// onStart handles /start in the private chat. With a table as payload (the deep link) it
// delivers the player's hand at once.
func (a *Adapter) onStart(ctx context.Context, m *tgbotapi.Message, cmd api.Command) {
	user := m.From.ID
	lang := i18n.Pick(m.From.LanguageCode)
	if len(cmd.Args) == 0 {
		a.enqueue(newItem(user, 0, api.Message{Kind: api.KindNotice, Text: tr(lang, "start.hi")}))
		return
	}
	cmd.Table, cmd.Verb, cmd.Args = cmd.Args[0], api.VerbHand, nil
	sent := false
	replies, _ := a.Service().Handle(ctx, cmd) // a hand is only read: the refusal, if any, is in the replies
	for _, r := range replies {
		if r.Kind == api.KindReply {
			a.sendHand(user, r)
			sent = true
		}
	}
	if !sent { // no game yet, or no seat: the hand comes by itself when there is one
		a.enqueue(newItem(user, 0, api.Message{Kind: api.KindNotice, Text: tr(lang, "start.ok")}))
	}
}

// replyTyped sends the replies to a typed command: in a private chat there, in a group as a reply
// to the command. A secret reply (a hand, a refusal that names the sender's cards) goes to the
// sender's private chat; where that is closed to the bot, the group gets its public form
// (chat.Public) and the link that opens the private chat.
func (a *Adapter) replyTyped(cmd api.Command, m *tgbotapi.Message, chat int64, thread int, replies []api.Message) {
	user := m.From.ID
	for _, r := range replies {
		switch {
		case cmd.Private:
			it := newItem(chat, 0, r)
			if cmd.Verb == api.VerbHand {
				a.browserLink(it, r)
			}
			a.enqueue(it)
		case cmd.Verb == api.VerbNew && r.Kind == api.KindNotice:
			// "Table opened": the lobby the group gets says so, with its buttons; a reply of
			// its own would be a second post for one command.
		case !r.Secret:
			inGroup := newItem(chat, thread, r)
			inGroup.Data.replyTo = m.MessageID
			a.enqueue(inGroup)
		default:
			inGroup := a.publicReply(r, m, chat, thread)
			switch {
			case a.isBlocked(user):
				a.enqueue(inGroup)
			case cmd.Verb == api.VerbHand && r.Kind == api.KindReply:
				a.sendHand(user, r)
			default:
				// If the private chat turns out to be closed, the group gets the public form.
				it := newItem(user, 0, r)
				it.Data.fallback = inGroup
				a.enqueue(it)
			}
		}
	}
}

// publicReply is a secret reply to a typed command as the group may see it: its public text,
// with the link that opens the private chat, as a reply to the command.
func (a *Adapter) publicReply(r api.Message, m *tgbotapi.Message, chat int64, thread int) *item {
	lang := i18n.Pick(r.Lang, m.From.LanguageCode)
	text := "" // without a public text, the link alone
	if pub, ok := chatpolicy.Public(r); ok {
		text = pub.Text
	}
	it := newItem(chat, thread, api.Message{Kind: api.KindNotice, Table: r.Table, Text: text, Lang: lang})
	it.Data.replyTo = m.MessageID
	it.Data.link, it.Data.label = a.deepLink(r.Table), tr(lang, "dm.button")
	return it
}

// onCallback handles a button press: the presser comes from the update, the button's data is only
// a route. Every press is answered; errors and notes go to the presser alone, as the answer.
func (a *Adapter) onCallback(ctx context.Context, u update) (failed error) {
	cq := u.CallbackQuery
	thread := u.thread
	var text string
	alert := false
	private := cq.Message != nil && cq.Message.Chat.IsPrivate()
	defer func() {
		if u.again {
			return // answered the first time (the failure); a query is answered once
		}
		if !private {
			text = a.rewriteCommands(text) // what the presser may type in the group
		}
		a.answer(cq.ID, text, alert)
	}() // also after a panic in the service
	if cq.From == nil || cq.Message == nil {
		return nil
	}
	lang := i18n.Pick(cq.From.LanguageCode)
	act, err := api.ParseAction(cq.Data)
	if err != nil {
		text = tr(lang, "btn.alien")
		return nil
	}
	user := cq.From.ID
	chat := a.chatNow(cq.Message.Chat.ID) // a press on a message from before the group's upgrade
	if private {
		a.reachable(user)
		thread = 0
	} else {
		// A press on a message the bot can no longer access names only the chat (Bot API,
		// InaccessibleMessage), not the forum topic: a table of this chat that the button
		// names is in the topic its place says. (The chat still comes from the update.)
		if p, ok := a.Service().PlaceOf(act.Table); ok && thread == 0 && p.Platform == Platform && p.Chat == dest(chat) {
			_, thread, _ = chatOf(p)
		}
		a.heard(chat, thread)
	}
	cmd := act.Command(placeOf(chat, thread), playerOf(cq.From), eventID(u), private)
	// The presser comes from the update (never an anonymous admin: presses are always a
	// person's), so an admin's rights hold for a press as for a typed command.
	unchecked := false
	if a.Service().AdminMatters(act.Verb) && !private {
		cmd.Admin, unchecked = a.isAdmin(chat, user)
	}
	var lines []string
	replies, err := a.Service().Handle(ctx, cmd)
	if notStored(err) {
		failed = errNotStored
	}
	for _, r := range replies {
		switch {
		case act.Verb == api.VerbHand && r.Kind == api.KindReply:
			// Shown to the presser only, as an alert; and brought to the private chat if possible.
			lines, alert = append(lines, r.Text), true
			if !a.isBlocked(user) {
				a.sendHand(user, r)
			}
		case r.Kind == api.KindReply && !r.Secret && (r.File != nil || r.Record != "" || r.Picture == api.PictureStandings ||
			act.Verb == api.VerbRules):
			// A kept match's file or board, a league table, or the rules (the welcome's button)
			// was asked for to be seen: not an alert, a message in the chat the button is in. (The live board answers as an alert,
			// as a press at the table should not add to the group's messages.)
			if private {
				a.enqueue(newItem(user, 0, r))
			} else {
				a.enqueue(newItem(chat, thread, r))
			}
		case r.Kind == api.KindReply:
			lines, alert = append(lines, r.Text), true
			if len16(r.Text) > alertMax && !a.isBlocked(user) {
				a.enqueue(newItem(user, 0, r)) // the whole text, privately
			}
		case r.Kind == api.KindError:
			lines, alert = append(lines, r.Text), true
		default:
			lines = append(lines, r.Text)
		}
	}
	if unchecked {
		lines, alert = append(lines, tr(lang, "admin_unknown")), true
	}
	text = compact(lines, alertMax)
	return failed
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

// onMyChatMember follows the bot's membership: of a group (see onGroupMember), or of a user's
// private chat, where a block or an unblock shows.
func (a *Adapter) onMyChatMember(ctx context.Context, u update) error {
	c := u.MyChatMember
	if !c.Chat.IsPrivate() {
		return a.onGroupMember(ctx, c, u.media)
	}
	switch c.NewChatMember.Status {
	case "kicked":
		a.reach.Set(ctx, userKey(c.From.ID), true)
	case "member":
		a.reachable(c.From.ID)
	}
	return nil
}

// isAdmin asks Telegram whether the user administers the chat; unknown when Telegram did not
// say (getChatMember is "only guaranteed to work for other users if the bot is an
// administrator in the chat", Bot API): the user then counts as a member, and is told why.
func (a *Adapter) isAdmin(chat, user int64) (admin, unknown bool) {
	m, err := a.bot.GetChatMember(tgbotapi.GetChatMemberConfig{ChatConfigWithUser: tgbotapi.ChatConfigWithUser{ChatID: chat, UserID: user}})
	if err != nil {
		a.log.Warn("getChatMember failed: the user counts as a member", "chat", chat, "err", a.red.Err(err))
		return false, true
	}
	return m.IsAdministrator() || m.IsCreator(), false
}

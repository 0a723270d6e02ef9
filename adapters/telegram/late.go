package telegram

import (
	"slices"
	"sync"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// After an outage Telegram delivers what it kept: a typed message for up to a day after it was
// sent, a button press for only 150 seconds (the reference server, tdlib/telegram-bot-api
// Client.cpp: a callback query is queued for 150 s, a message until "message_date + 86400").
// A move typed an hour ago would be applied to a game that has gone on without it — or to the
// next game — while the same move made with a button is gone. So a typed command that changes a
// table is applied only while it is at most lateAfter old: Telegram's 150 seconds for a press,
// and half a minute for a host clock that is off from Telegram's (the message's date is
// Telegram's time). Its sender is told, once, that it was not applied.
const lateAfter = 3 * time.Minute

// lateVerbs change a table, so that their moment matters. The others (help, the hand, the board,
// statistics, one's own data and language, forgetting) are answered however late they come.
var lateVerbs = []api.Verb{api.VerbNew, api.VerbJoin, api.VerbLeave, api.VerbBot, api.VerbSeat,
	api.VerbShuffle, api.VerbDeal, api.VerbTrump, api.VerbAnnounce, api.VerbPlay, api.VerbStop,
	api.VerbRematch, api.VerbSettings}

// lateToldFor is how long one notice covers a sender's late commands: an outage's backlog comes
// within seconds, so a sender hears of it once.
const lateToldFor = time.Hour

// late remembers whom the adapter told that their late commands were not applied.
type late struct {
	mu   sync.Mutex
	told map[int64]time.Time
}

// tooLate reports whether a typed command came too late to be applied.
func tooLate(m *tgbotapi.Message, verb api.Verb) bool {
	return m.Date > 0 && time.Since(time.Unix(int64(m.Date), 0)) > lateAfter && slices.Contains(lateVerbs, verb)
}

// dueNotice reports whether the sender is to be told of a late command now (and notes it).
func (l *late) dueNotice(sender int64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	if at, ok := l.told[sender]; ok && now.Sub(at) < lateToldFor {
		return false
	}
	if l.told == nil {
		l.told = map[int64]time.Time{}
	}
	for u, at := range l.told { // a few entries after an outage; none for long
		if now.Sub(at) >= lateToldFor {
			delete(l.told, u)
		}
	}
	l.told[sender] = now
	return true
}

// refuseLate tells the sender of a command that came too late that it was not applied: in their
// private chat, or where that is closed to the bot (or they wrote as the group), in a line in the
// group that names neither the command's arguments nor anything they hold.
func (a *Adapter) refuseLate(cmd api.Command, m *tgbotapi.Message, chat int64, thread int) {
	sender := m.From.ID
	if cmd.Anonymous {
		sender = chat
	}
	a.log.Info("a command came too late; not applied", "chat", chat, "verb", cmd.Verb,
		"late", time.Since(time.Unix(int64(m.Date), 0)).Round(time.Second))
	if !a.late.dueNotice(sender) {
		return
	}
	lang := i18n.Pick(m.From.LanguageCode)
	public := newItem(chat, thread, api.Message{Kind: api.KindNotice, Lang: lang, Text: tr(lang, "late.public", cmd.Actor.Name)})
	public.Data.replyTo = m.MessageID
	private := newItem(sender, 0, api.Message{Kind: api.KindNotice, Lang: lang, Text: tr(lang, "late", string(cmd.Verb))})
	switch {
	case cmd.Private:
		a.enqueue(private)
	case cmd.Anonymous || a.isBlocked(sender):
		a.enqueue(public)
	default:
		private.Data.fallback = public
		a.enqueue(private)
	}
}

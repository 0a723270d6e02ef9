package telegram

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// What happens to the groups the bot writes to, and what it does about it:
//
//   - A group upgraded to a supergroup (topics enabled, made public, some admin changes) has a new
//     ID; the old one is dead (Bot API, Message.migrate_to_chat_id and
//     ResponseParameters.migrate_to_chat_id). The adapter learns it from the service messages
//     both chats get, or from a send that fails with migrate_to_chat_id, whichever comes first;
//     it remembers the new ID, moves what is queued, and has the service move the table.
//     Nothing is sent to the old ID after that; a press on an old message counts for the new
//     chat.
//   - Removed or banned (my_chat_member "left"/"kicked", or a send refused with 403): the chat's
//     tables close, nothing more goes there and nothing is retried.
//   - No right to post there, or the forum topic closed (a send refused with 400 "not enough
//     rights ..." or TOPIC_CLOSED): the place is a paused destination of the outbox (its
//     messages wait there), and the service pauses its table and tells its players privately.
//     When the rights come back (my_chat_member), the waiting messages are tried again at once;
//     when anything is heard from the place (a reopened topic's service message, a command), at
//     most once a minute. The first that gets through resumes the table (chat.Slot.Reached).
//   - No right to send photos: pictures go as their text.
//   - A deleted forum topic (a send refused with 400 "message thread not found": the reference
//     server, Client.cpp, when it cannot find the topic) never comes back, and no update says
//     it went: its table closes as when the bot is removed, its players learn it privately, and
//     nothing more goes there; the chat's other topics go on.

// groups is the adapter's knowledge of its groups.
type groups struct {
	mu       sync.Mutex
	moved    map[int64]int64 // old chat → new (cached from bucketMoved)
	gone     map[int64]bool  // cached from bucketGone
	muted    map[int64]bool  // the whole chat refused the bot's text lately: activity anywhere probes all its places
	refusing map[int64]media // what beyond text the chat refuses from the bot
	deleted  map[string]bool // place key → its forum topic was deleted
}

func (g *groups) init() {
	g.moved, g.gone, g.muted = map[int64]int64{}, map[int64]bool{}, map[int64]bool{}
	g.refusing, g.deleted = map[int64]media{}, map[string]bool{}
}

// KV buckets of groups, keyed by chat ID; never pruned (a few bytes per group).
const (
	bucketMoved = "telegram.moved" // old chat → new chat
	bucketGone  = "telegram.gone"  // chat → "1": the bot was removed
	bucketAnon  = "telegram.anon"  // "<table>/anon" or "anon/<chat>" → "1": the anonymous note was given
)

// probeEvery bounds how often activity in a place that refuses the bot makes it try again
// (outbox.Config.ProbeEvery).
const probeEvery = time.Minute

// chatNow is the chat's current ID: the new one of a group that became a supergroup.
func (a *Adapter) chatNow(chat int64) int64 {
	if to, ok := a.movedTo(chat); ok {
		return to
	}
	return chat
}

func (a *Adapter) movedTo(chat int64) (int64, bool) {
	ctx := a.baseContext() // the KV is the adapter's: it lives as long as Run
	if chat > 0 {
		return 0, false
	}
	a.groups.mu.Lock()
	defer a.groups.mu.Unlock()
	if to, ok := a.groups.moved[chat]; ok {
		return to, to != 0
	}
	b, ok, err := a.kv.Get(ctx, bucketMoved, dest(chat))
	if err != nil {
		a.log.Error("reading a moved group", "chat", chat, "err", err)
		return 0, false
	}
	var to int64
	if ok {
		to, _ = strconv.ParseInt(string(b), 10, 64)
	}
	a.groups.moved[chat] = to
	return to, to != 0
}

// movedInto reports whether a group is known to have become this chat.
func (a *Adapter) movedInto(chat int64) bool {
	a.groups.mu.Lock()
	defer a.groups.mu.Unlock()
	for _, to := range a.groups.moved {
		if to == chat {
			return true
		}
	}
	return false
}

// migrate follows a group to its new ID: it is remembered, what waits for the old one goes to
// the new one, and the service moves the table. It may be learnt more than once. Its error is
// the service's, if it could not store the move.
func (a *Adapter) migrate(ctx context.Context, from, to int64) error {
	if from == to || from > 0 || to > 0 {
		return nil
	}
	a.groups.mu.Lock()
	known := a.groups.moved[from] == to
	a.groups.moved[from] = to
	a.groups.mu.Unlock()
	a.followLimits(from, to)
	if !known {
		if err := a.kv.Put(ctx, bucketMoved, dest(from), []byte(dest(to))); err != nil {
			a.log.Error("saving a moved group", "err", err)
		}
		a.log.Info("the group became a supergroup; following it", "from", from, "to", to)
	}
	a.out.Move(dest(from), dest(to)) // a basic group has no topics: one queue
	if err := a.Service().MovePlace(ctx, placeOf(from, 0), placeOf(to, 0)); err != nil {
		a.log.Error("moving the table to the supergroup", "from", from, "to", to, "err", err)
		if !errors.Is(err, table.ErrPlaceTaken) { // that one no retry mends
			return fmt.Errorf("%w: %v", errNotStored, err)
		}
	}
	return nil
}

// sendsMoved is told by the outbox that a send found its group upgraded (and moved the queue).
func (a *Adapter) sendsMoved(from, to string) {
	f, _ := chatOfQueue(from)
	t, _ := chatOfQueue(to)
	if f == 0 || t == 0 {
		return
	}
	_ = a.migrate(context.Background(), f, t) // logged; the service message, when it comes, moves it again
}

func (a *Adapter) isGone(chat int64) bool {
	ctx := a.baseContext() // the KV is the adapter's: it lives as long as Run
	if chat > 0 {
		return false
	}
	a.groups.mu.Lock()
	defer a.groups.mu.Unlock()
	if g, ok := a.groups.gone[chat]; ok {
		return g
	}
	_, g, err := a.kv.Get(ctx, bucketGone, dest(chat))
	if err != nil {
		a.log.Error("reading a group the bot left", "chat", chat, "err", err)
		return false
	}
	a.groups.gone[chat] = g
	return g
}

func (a *Adapter) setGone(chat int64, gone bool) {
	ctx := a.baseContext() // the KV is the adapter's: it lives as long as Run
	if a.isGone(chat) == gone {
		return
	}
	a.groups.mu.Lock()
	a.groups.gone[chat] = gone
	a.groups.mu.Unlock()
	var err error
	if gone {
		err = a.kv.Put(ctx, bucketGone, dest(chat), []byte("1"))
	} else {
		err = a.kv.Delete(ctx, bucketGone, dest(chat))
	}
	if err != nil {
		a.log.Error("saving a group the bot left", "chat", chat, "err", err)
	}
}

// removed handles the bot's removal from a group: nothing more is sent there, what waits is
// dropped, and the tables there close (their players learn it from their private messages).
// Its error is the service's, if it could not store a table's closing; called again, it closes
// what is left.
func (a *Adapter) removed(ctx context.Context, chat int64) error {
	if a.isGone(chat) {
		_, err := a.Service().CloseChat(ctx, Platform, dest(chat)) // none left, unless that failed before
		return err
	}
	a.setGone(chat, true)
	n := a.out.Discard(func(it *item) bool { c, _ := chatOfQueue(it.Dest); return c == chat })
	a.groups.mu.Lock()
	delete(a.groups.muted, chat)
	a.groups.mu.Unlock()
	closed, err := a.Service().CloseChat(ctx, Platform, dest(chat))
	if err != nil {
		a.log.Error("closing the tables of a group the bot left", "chat", chat, "err", err)
		return fmt.Errorf("%w: %v", errNotStored, err)
	}
	a.log.Info("removed from a group: its tables are closed", "chat", chat, "tables", closed, "dropped", n)
	return nil
}

// topicDeleted reports whether the place is a forum topic known to be deleted.
func (a *Adapter) topicDeleted(chat int64, thread int) bool {
	if thread == 0 {
		return false
	}
	a.groups.mu.Lock()
	defer a.groups.mu.Unlock()
	return a.groups.deleted[placeOf(chat, thread).Key()]
}

// deleteTopic handles a forum topic found deleted: nothing more goes there, what waits for it is
// dropped, and its table closes (its players learn it from their private messages).
func (a *Adapter) deleteTopic(chat int64, thread int) {
	place := placeOf(chat, thread)
	a.groups.mu.Lock()
	a.groups.deleted[place.Key()] = true
	a.groups.mu.Unlock()
	q := queueOf(chat, thread)
	n := a.out.Discard(func(it *item) bool { return it.Dest == q })
	closed, err := a.Service().ClosePlace(context.Background(), place)
	if err != nil {
		a.log.Error("closing the table of a deleted topic", "place", place.Key(), "err", err)
	}
	a.log.Info("a forum topic was deleted: its table is closed", "place", place.Key(), "tables", closed, "dropped", n)
}

// pausePlace has the service pause the table of a place whose queue the outbox paused: the place
// refuses the bot's messages for now (outbox.Config.Paused, in the queue's worker).
func (a *Adapter) pausePlace(q string, _ *item) {
	chat, thread := chatOfQueue(q)
	if chat > 0 {
		return
	}
	place := placeOf(chat, thread)
	a.log.Warn("a group refuses the bot's messages: they wait, and its table pauses", "place", place.Key())
	if err := a.Service().Pause(context.Background(), place, true); err != nil {
		a.log.Warn("pausing a table", "place", place.Key(), "err", err)
	}
}

// rightsBack tries the waiting messages of all a chat's places again at once: the bot's rights
// there came back (photos and documents too, unless the update says otherwise).
func (a *Adapter) rightsBack(chat int64) {
	a.groups.mu.Lock()
	delete(a.groups.muted, chat)
	delete(a.groups.refusing, chat)
	a.groups.mu.Unlock()
	for _, q := range a.pausedIn(chat, -1) {
		a.log.Info("trying a group's waiting messages again", "queue", q)
		a.out.ProbeNow(q)
	}
}

// pausedIn lists the paused queues of a chat's places (thread < 0: of all of them).
func (a *Adapter) pausedIn(chat int64, thread int) []string {
	return a.out.Paused(func(q string) bool {
		c, th := chatOfQueue(q)
		return c == chat && (thread < 0 || th == thread)
	})
}

// heard notes activity in a group: if the place refuses the bot's messages (or the whole chat
// did), they are tried again, at most once a minute each. A reopened topic says so with a service
// message, which every bot gets (Bot FAQ: "All bots, regardless of settings, will receive all
// service messages").
func (a *Adapter) heard(chat int64, thread int) {
	if chat > 0 {
		return
	}
	a.groups.mu.Lock()
	whole := a.groups.muted[chat]
	a.groups.mu.Unlock()
	if !whole {
		a.out.Probe(queueOf(chat, thread))
		return
	}
	for _, q := range a.pausedIn(chat, -1) {
		a.out.Probe(q)
	}
}

// gotThrough notes that a message reached a chat: a table paused because its place refused the
// bot goes on (after a restart too: the pause is stored, the outbox's is not).
func (a *Adapter) gotThrough(chat int64, thread int, m api.Message) {
	if chat < 0 {
		a.Reached(context.Background(), placeOf(chat, thread), m.Table)
	}
}

// media are what a group may refuse the bot: text, and beyond it photos and documents.
type media uint8

const (
	text media = 1 << iota
	photos
	documents
)

// refuses reports whether the chat is known to refuse m from the bot.
func (a *Adapter) refuses(chat int64, m media) bool {
	a.groups.mu.Lock()
	defer a.groups.mu.Unlock()
	return a.groups.refusing[chat]&m != 0
}

// refuse notes that the chat refuses m from the bot, until its rights come back.
func (a *Adapter) refuse(chat int64, m media) {
	a.groups.mu.Lock()
	defer a.groups.mu.Unlock()
	a.groups.refusing[chat] |= m
}

// onGroupMember follows the bot's own membership of a group (my_chat_member); media are its
// granular rights (the library's ChatMember predates them).
func (a *Adapter) onGroupMember(ctx context.Context, c *tgbotapi.ChatMemberUpdated, media mediaRights) error {
	chat := c.Chat.ID
	was, now := c.OldChatMember, c.NewChatMember
	in := func(m tgbotapi.ChatMember) bool {
		switch m.Status {
		case "creator", "administrator", "member":
			return true
		case "restricted":
			return m.IsMember
		}
		return false
	}
	switch {
	case !in(now):
		a.log.Info("the bot left a group", "chat", chat, "status", now.Status)
		return a.removed(ctx, chat)
	case now.Status == "restricted" && !now.CanSendMessages:
		// The next message there is refused, and its place pauses (one request: a message may
		// be on its way anyway).
		a.groups.mu.Lock()
		a.groups.muted[chat] = true
		a.groups.mu.Unlock()
		a.log.Info("the bot may not post in a group any more", "chat", chat)
	default:
		back := a.isGone(chat) || !in(was)
		a.setGone(chat, false)
		a.rightsBack(chat)
		// ChatMemberRestricted says can_send_photos and can_send_documents (Bot API 6.5); the
		// library reads only can_send_media_messages, which the Bot API no longer sends.
		if now.Status == "restricted" && !media.Photos {
			a.refuse(chat, photos)
		}
		if now.Status == "restricted" && !media.Documents {
			a.refuse(chat, documents)
		}
		// A supergroup that a group became may say the bot joined it: it brings its table, and
		// needs no welcome.
		if back && !a.movedInto(chat) && a.Service().TableAt(placeOf(chat, 0)) == "" {
			a.welcome(chat, 0, c.From.LanguageCode)
		}
	}
	return nil
}

// welcome greets a group the bot was added to: with privacy mode on (every bot's default) a
// plain "/new" there may never reach the bot, so a button opens the first table, and the rules
// are a link away.
func (a *Adapter) welcome(chat int64, thread int, locale string) {
	lang := i18n.Pick(locale)
	btn := i18n.T(lang, "btn.new")
	row := []api.Button{{Label: btn, Action: api.Action{Verb: api.VerbNew}, Style: api.StyleSuccess}}
	if a.cfg.RulesURL == "" {
		// No rules page of the host's: the rules are told in the chat, in the reader's language,
		// rather than linked to a page in English elsewhere.
		row = append(row, api.Button{Label: i18n.T(lang, "btn.rules"), Action: api.Action{Verb: api.VerbRules}, Style: api.StyleSecondary})
	}
	it := newItem(chat, thread, api.Message{Kind: api.KindNotice, Lang: lang, Text: tr(lang, "welcome", btn),
		Buttons: [][]api.Button{row}})
	if a.cfg.RulesURL != "" {
		it.Data.link, it.Data.label = a.cfg.RulesURL, i18n.T(lang, "btn.rules")
	}
	a.enqueue(it)
}

// anonymousNote reports whether the note that an anonymous admin cannot sit down is due: once
// per group and table.
func (a *Adapter) anonymousNote(chat int64, tableID string) bool {
	ctx := a.baseContext() // the KV is the adapter's: it lives as long as Run
	key := "anon/" + dest(chat)
	if tableID != "" {
		key = tableID + "/anon/" + dest(chat) // pruned with the table
	}
	if _, told, err := a.kv.Get(ctx, bucketAnon, key); err != nil || told {
		return false
	}
	if err := a.kv.Put(ctx, bucketAnon, key, []byte("1")); err != nil {
		a.log.Error("saving the anonymous note", "err", err)
	}
	return true
}

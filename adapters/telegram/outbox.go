package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf16"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
	"golang.org/x/time/rate"

	"github.com/kontermatt/kontermatt/adapters/internal/chat"
	"github.com/kontermatt/kontermatt/adapters/internal/outbox"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// The adapter's messages go through the shared outbox engine (adapters/internal/outbox): one
// queue per chat, keyed messages merged so an edit that waited is sent with the newest content,
// records of what each Telegram message shows, a paused queue for a place that refuses the bot.
// This file holds only what is Telegram's: its limits, how to send and edit, and which class of
// the engine each of its refusals (problems.go) is.

// KV buckets. Keys that begin with a table ID and "/" are that table's, and are pruned with it.
const (
	bucketMsg     = "telegram.msg"     // message Key → outbox.Record: the Telegram message that shows it
	bucketSlot    = "telegram.slot"    // "table/live" or "table/hand/user" → the Key last shown there
	bucketHand    = "telegram.hand"    // "table/user" → the Key of the user's newest hand message
	bucketBlocked = "telegram.blocked" // user → "1": private messages fail (never started, or blocked)
	bucketPending = "telegram.pending" // "table/user" → []api.Message: the table's messages held back while the user is blocked
	bucketTold    = "telegram.told"    // "table/user" → "1": the group was shown the deep link
	bucketRecent  = "telegram.recent"  // group → unix ms until which its minute window may hold our messages
	bucketWindow  = "telegram.window"  // group → the unix ms of its recent sends, by every copy (Config.Cluster)
)

// item is one message on its way to a chat: the engine's item, with what Telegram needs beyond
// the message (extra). Its destination names the chat and the forum topic (queueOf), one queue
// each, so that a closed topic holds back only its own messages.
type item = outbox.Item[extra]

// extra is what a Telegram message needs beyond the message itself.
type extra struct {
	replyTo int    // reply to this message (typed commands in groups)
	link    string // a URL button below the text (the deep link, the Mini App's direct link)
	label   string
	// app opens the web table as a Mini App (a web_app button, private chats only); browser is
	// a link to it for any browser: a player's one-time link in private, the watch link in a group.
	app, appLabel         string
	browser, browserLabel string
	hand                  bool // a hand the user asked for: if it cannot be sent, the group gets the deep link
	// fallback goes out instead if this private message cannot be sent because the user never
	// pressed Start or blocked the bot.
	fallback *item
}

func dest(chat int64) string { return strconv.FormatInt(chat, 10) }

// queueOf names the outbox queue of a chat, or of a forum topic in it ("<chat>/<topic>").
func queueOf(chat int64, thread int) string {
	if thread == 0 {
		return dest(chat)
	}
	return dest(chat) + "/" + strconv.Itoa(thread)
}

// chatOfQueue reads a queue's name back.
func chatOfQueue(q string) (chat int64, thread int) {
	c, t, _ := strings.Cut(q, "/")
	chat, _ = strconv.ParseInt(c, 10, 64)
	thread, _ = strconv.Atoi(t)
	return chat, thread
}

// newItem is a message for a chat (and forum topic); a private chat's thread is 0.
func newItem(chat int64, thread int, m api.Message) *item {
	return &item{Dest: queueOf(chat, thread), Msg: m, Key: m.Key, Version: m.Version}
}

// enqueue hands an item to the engine. A group's item goes to the group's current ID; it is
// dropped for a group the bot was removed from, or a deleted topic. Both are known from the
// adapter's caches; nothing here writes to the KV, so the service may deliver holding a table's
// lock (table.Outbox).
func (a *Adapter) enqueue(it *item) {
	if chat, thread := chatOfQueue(it.Dest); chat < 0 {
		chat = a.chatNow(chat)
		if a.isGone(chat) || a.topicDeleted(chat, thread) {
			a.log.Debug("message for a group the bot left, or a deleted topic, dropped", "chat", chat, "kind", it.Msg.Kind)
			return
		}
		it.Dest = queueOf(chat, thread)
	}
	a.webButtons(it)
	it.Sum = outbox.Digest(it.Msg, it.Data.link, it.Data.app, it.Data.browser)
	a.out.Enqueue(it)
}

// Errors Show gives instead of calling Telegram, when it knows better.
var (
	errLeftGroup = errors.New("the bot was removed from the group")
	errBlocked   = errors.New("the user cannot get private messages from the bot")
)

// movedError is a send to a group known to have become a supergroup.
type movedError struct{ to int64 }

func (e *movedError) Error() string { return "the group is now supergroup " + dest(e.to) }

// mergeItems keeps what a newer queued version of a Key adds to an older one.
func mergeItems(queued, newer *item) {
	queued.Data.hand = queued.Data.hand || newer.Data.hand
}

// Deliver implements table.Outbox: it queues the messages and returns at once. What it learns
// (a user's newest hand) is kept in memory here and written to the KV from the outbox's worker.
func (a *Adapter) Deliver(ctx context.Context, msgs []api.Message) {
	a.teller.Hear(ctx) // a place's retold batch comes first (chat.Teller)
	for _, m := range msgs {
		switch m.Target.Kind {
		case api.ToPlace:
			if m.Kind == api.KindNotice && m.Reason == "note.announced" {
				continue // the table message lists the calls: a post of its own would spend the group's 20 a minute
			}
			if m.Kind == api.KindLive {
				a.live.note(m)
			}
			chat, thread, ok := chatOf(m.Target.Place)
			if !ok {
				a.log.Warn("message for a place that is not a Telegram chat", "place", m.Target.Place.Key())
				continue
			}
			a.enqueue(newItem(chat, thread, m))
		case api.ToPlayer, api.ToActor:
			user, ok := userOf(m.Target.Player)
			if !ok {
				continue
			}
			if m.Kind == api.KindHand && m.Key != "" && m.Table != "" {
				a.noteHand(user, m.Table, m.Key)
			}
			// A user known to be unreachable is refused by Show without a request, and their
			// messages go where the delivery policy says (see blocked).
			a.enqueue(newItem(user, 0, m))
		}
	}
}

// out1 hears of each keyed message that is out (outbox Config.Out): a group's table message tells
// the service which state the group sees now (chat.Viewer), when the service listens. Only the
// place's newest table message does: at a new deal the previous game's last version has the new
// state's version too, and goes out before the game's result and the new table message (core/
// table's timeline), but the group has seen the result only once the new table message is out.
func (a *Adapter) out1(it *item) {
	if it.Msg.Kind != api.KindLive || it.Msg.Target.Kind != api.ToPlace || !a.live.newest(it.Msg) {
		return
	}
	if v, ok := a.Service().(chat.Viewer); ok {
		v.Shown(it.Msg.Target.Place, it.Version)
	}
}

// Attach gives the adapter its service (chat.Slot) and tells a service that listens that the
// adapter reports what its groups' table messages show (chat.Viewer): call it before the service
// resumes, so that a restarted table is paced from its first move.
func (a *Adapter) Attach(svc chat.Service) {
	a.Slot.Attach(svc)
	if v, ok := svc.(chat.Viewer); ok {
		v.Reports(Platform)
	}
}

// liveKeys are the Keys of the places' newest table messages, as the service delivered them: the
// last table message of a delivery is the table's current one (the timeline's earlier ones come
// first). One entry per place that had a table since the start.
type liveKeys struct {
	mu  sync.Mutex
	key map[string]string // place key → message Key
}

func (l *liveKeys) note(m api.Message) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.key == nil {
		l.key = map[string]string{}
	}
	l.key[m.Target.Place.Key()] = m.Key
}

// newest reports whether m is its place's newest table message (or none was noted).
func (l *liveKeys) newest(m api.Message) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	k, ok := l.key[m.Target.Place.Key()]
	return !ok || k == m.Key
}

// platform is the adapter as the engine's outbox.Platform.
type platform struct{ a *Adapter }

// limits are one chat's rate limits.
type limits struct {
	lims      []*rate.Limiter
	busyUntil time.Time // how far ahead bucketRecent says the group had messages (see noteSend)
}

// chatLimits gives a chat's limits, making them on first use.
func (a *Adapter) chatLimits(chat int64) *limits {
	a.limMu.Lock()
	defer a.limMu.Unlock()
	l := a.lims[chat]
	if l == nil {
		if len(a.lims) > 4096 { // forget the idle chats: a fresh bucket is as good as a full one
			now := time.Now()
			for c, old := range a.lims {
				if full(old, now) {
					delete(a.lims, c)
				}
			}
		}
		l = a.newLimits(chat)
		a.lims[chat] = l
	}
	return l
}

func full(l *limits, now time.Time) bool {
	for _, r := range l.lims {
		if r.TokensAt(now) < float64(r.Burst()) {
			return false
		}
	}
	return !l.busyUntil.After(now)
}

// groupBurst is how many messages may go to a group at once after a quiet spell; the rest of its
// 20 a minute are spread evenly, by this copy's limiter and by the copies' shared window alike: no
// burst of 20 and then a silence while the table moves on. One: the group's budget is all spent
// evenly, one message every 3 s, so that a move waits at most that long for its edit (a burst of
// b would slow the even pace to one every 60.5/(21-b) s; TestGroupLagAtAHumanPace).
const groupBurst = 1

// newLimits gives a new chat's limits: groups (negative IDs) at most GroupPerMinute in any minute
// and one a second; private chats one per PrivateInterval.
//
// A process that crashed a moment ago may have spent a chat's budget just before it died, and
// Telegram counts those messages still. So a group that the bot wrote to in the last minutes
// (bucketRecent says so) starts with an empty bucket: together with the old process's bucket it
// never lets more through in any window than one bucket would, however often the bot restarts.
// The per-second limits start empty within a second of this process's start, for the same
// reason. Everything else starts full, so a fresh start costs an idle chat no delay.
func (a *Adapter) newLimits(chat int64) *limits {
	now := time.Now()
	empty := func(l *rate.Limiter) *rate.Limiter {
		l.AllowN(now, l.Burst())
		return l
	}
	second := func(l *rate.Limiter, every time.Duration) *rate.Limiter {
		if now.Sub(a.born) < every {
			return empty(l)
		}
		return l
	}
	if chat > 0 {
		return &limits{lims: []*rate.Limiter{second(rate.NewLimiter(rate.Every(a.cfg.PrivateInterval), 1), a.cfg.PrivateInterval)}}
	}
	l := &limits{busyUntil: a.recentUntil(chat)}
	minute := newLimiter(a.cfg.GroupPerMinute, time.Minute, groupBurst)
	if l.busyUntil.After(now) {
		empty(minute)
	}
	// The minute's bucket is waited for last, right before the send: its token is then taken
	// when the message goes, as its count of the window assumes (newLimiter).
	l.lims = []*rate.Limiter{second(rate.NewLimiter(rate.Every(time.Second), 1), time.Second), minute}
	return l
}

// followLimits gives a group that became a supergroup the group's budget: Telegram counts the
// two IDs apart, but they are one chat to its people, and the table is published anew in the new
// one at once, so 20 a minute hold for the two together. It is called before anything is sent to
// the new ID (when a send finds the group upgraded, before its queue moves); the new chat's
// messages sent already, if any, count in the shared bucket too.
func (a *Adapter) followLimits(from, to int64) {
	ctx := a.baseContext() // the KV is the adapter's: it lives as long as Run
	if a.window != nil {
		if err := a.window.Follow(ctx, dest(from), dest(to)); err != nil {
			a.log.Error("moving a group's shared budget to its supergroup", "chat", to, "err", err)
		}
	}
	old := a.chatLimits(from)
	a.limMu.Lock()
	defer a.limMu.Unlock()
	now := time.Now()
	cur, had := a.lims[to]
	if had && cur == old {
		return
	}
	if had {
		for i, r := range cur.lims { // what the new chat's buckets spent, the shared ones spend too
			if i < len(old.lims) {
				for spent := float64(r.Burst()) - r.TokensAt(now); spent >= 1; spent-- {
					old.lims[i].ReserveN(now, 1)
				}
			}
		}
		old.busyUntil = maxTime(old.busyUntil, cur.busyUntil)
	}
	a.lims[to] = old
	if old.busyUntil.After(now) { // a restart finds the new chat's window as busy as the old one's
		if err := a.kv.Put(ctx, bucketRecent, dest(to), []byte(strconv.FormatInt(old.busyUntil.UnixMilli(), 10))); err != nil {
			a.log.Error("saving a group's recent sends", "chat", to, "err", err)
		}
	}
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// recentUntil reads until when a group may still have messages of an earlier process in its
// minute window.
func (a *Adapter) recentUntil(chat int64) time.Time {
	ctx := a.baseContext() // the KV is the adapter's: it lives as long as Run
	b, ok, err := a.kv.Get(ctx, bucketRecent, dest(chat))
	if err != nil {
		a.log.Error("reading a group's recent sends", "chat", chat, "err", err)
		return time.Now().Add(time.Minute) // unsure: be careful
	}
	if !ok {
		return time.Time{}
	}
	ms, _ := strconv.ParseInt(string(b), 10, 64)
	return time.UnixMilli(ms)
}

// Wait blocks until the chat's limits and the global one let one more message through. For a
// group it then records, before the message goes out, that the group's minute window holds
// messages of this process: stored ahead for two minutes at a time, so it costs one write a minute
// for a busy group and survives a crash right after the send.
//
// With several copies of the bot (Config.Cluster) a group's budget is theirs together: the
// group's window of recent sends is in the store (chat.Window), and durable by itself. Should
// the store fail, the copy falls back to its own limits for that message.
func (p platform) Wait(ctx context.Context, d string) error {
	a := p.a
	chat, _ := chatOfQueue(d)
	if chat > 0 && a.isBlocked(chat) {
		return nil // Show refuses without a request
	}
	if a.window != nil && chat < 0 {
		err := a.window.Wait(ctx, dest(chat))
		if err == nil {
			return a.global.Wait(ctx)
		}
		if ctx.Err() != nil {
			return err
		}
		a.log.Warn("the group's shared budget cannot be read; this copy keeps its own for now", "chat", chat, "err", err)
	}
	l := a.chatLimits(chat)
	for _, r := range l.lims {
		if err := r.Wait(ctx); err != nil {
			return err
		}
	}
	if err := a.global.Wait(ctx); err != nil {
		return err
	}
	a.limMu.Lock()
	defer a.limMu.Unlock()
	now := time.Now()
	if chat > 0 || l.busyUntil.After(now.Add(time.Minute)) {
		return nil
	}
	l.busyUntil = now.Add(2 * time.Minute)
	if err := a.kv.Put(ctx, bucketRecent, dest(chat), []byte(strconv.FormatInt(l.busyUntil.UnixMilli(), 10))); err != nil {
		a.log.Error("saving a group's recent sends", "chat", chat, "err", err)
	}
	return nil
}

// Show sends an item anew, or edits the message its record names.
func (p platform) Show(ctx context.Context, it *item, rec *outbox.Record) (string, string, error) {
	a := p.a
	// The item goes where the engine has it now: a moved queue carries the group's new ID.
	chat, thread := chatOfQueue(it.Dest)
	if chat > 0 {
		if a.isBlocked(chat) {
			return "", "", errBlocked
		}
		a.saveHand(chat, it.Msg)
	} else {
		if to, ok := a.movedTo(chat); ok {
			return "", "", &movedError{to}
		}
		if a.isGone(chat) || a.topicDeleted(chat, thread) {
			return "", "", errLeftGroup
		}
	}
	if err := ctx.Err(); err != nil {
		return "", "", err
	}
	text := messageText(it.Msg)
	if chat < 0 {
		text = a.rewriteCommands(text)
	}
	x := it.Data
	kb, err := markup(it.Msg.Buttons, urlButton{x.link, x.label}, urlButton{x.browser, x.browserLabel}, webAppButton{x.app, x.appLabel})
	if err != nil {
		a.log.Error("buttons dropped", "key", it.Key, "err", err)
	}
	// A message of another chat (the group before its upgrade) cannot be edited from this one.
	if rec != nil && rec.Chat != dest(chat) {
		rec = nil
	}
	if rec != nil && !it.Repost {
		id, _ := strconv.Atoi(rec.ID)
		if err := a.edit(chat, id, text, kb); err != nil && problemOf(err).kind != notModified {
			return "", "", a.refusedBy(chat, thread, err)
		}
		a.gotThrough(chat, thread, it.Msg)
		return rec.Chat, rec.ID, nil
	}
	id, err := a.sendNew(chat, thread, it, text, kb)
	if err != nil {
		return "", "", a.refusedBy(chat, thread, err)
	}
	a.gotThrough(chat, thread, it.Msg)
	if rec != nil && it.Repost && rec.ID != strconv.Itoa(id) {
		old, _ := strconv.Atoi(rec.ID)
		a.retire(chat, old)
	}
	if it.Key != "" {
		a.shown(chat, it)
	}
	return dest(chat), strconv.Itoa(id), nil
}

// refusedBy learns what a refused request says of the chat before the engine classifies it: a
// group that became a supergroup takes the group's budget along, and a group that refuses text
// from the bot is noted, so that activity anywhere in it probes every place it refused.
func (a *Adapter) refusedBy(chat int64, thread int, err error) error {
	p := problemOf(err)
	switch {
	case p.kind == migrated:
		a.followLimits(chat, p.to)
	case p.kind == noRights && p.lacks&text != 0 && chat < 0:
		a.groups.mu.Lock()
		a.groups.muted[chat] = true
		a.groups.mu.Unlock()
	}
	return err
}

// retire takes an old message out of use: deleted, or where Telegram no longer deletes it (after
// 48 hours: Bot API, deleteMessage, "A message can only be deleted if it was sent less than 48
// hours ago"), edited so that its buttons are gone; editing has no such limit.
func (a *Adapter) retire(chat int64, id int) {
	_, err := a.bot.Request(tgbotapi.NewDeleteMessage(chat, id))
	if err == nil || problemOf(err).kind == messageGone {
		return
	}
	a.log.Debug("deleting an old message failed; taking its buttons away", "chat", chat, "err", a.red.Err(err))
	none := tgbotapi.InlineKeyboardMarkup{InlineKeyboard: [][]tgbotapi.InlineKeyboardButton{}}
	if _, err := a.bot.Request(tgbotapi.NewEditMessageReplyMarkup(chat, id, none)); err != nil && problemOf(err).kind != notModified {
		a.log.Debug("taking an old message's buttons away failed", "chat", chat, "err", a.red.Err(err))
	}
}

// Classify reads what a refusal means (problemOf), and the adapter's own errors.
func (p platform) Classify(err error) *outbox.Error {
	var me *movedError
	switch {
	case errors.As(err, &me):
		return &outbox.Error{Class: outbox.Moved, To: dest(me.to), Err: err}
	case errors.Is(err, errLeftGroup):
		return &outbox.Error{Class: outbox.Drop, Err: err}
	case errors.Is(err, errBlocked):
		return &outbox.Error{Class: outbox.Forbidden, Err: err}
	}
	switch pr := problemOf(err); pr.kind {
	case notTelegrams:
		return &outbox.Error{Class: outbox.Transient, Err: errors.New(p.a.red.Err(err))} // the network or the server; the library does not retry
	case migrated:
		return &outbox.Error{Class: outbox.Moved, To: dest(pr.to), Err: err}
	case noRights, topicClosed:
		// A member that may not post there now (no right to send text, a closed topic): the
		// place's messages wait, and its table pauses, until it takes them again.
		return &outbox.Error{Class: outbox.Paused, Err: err}
	case kicked, threadGone:
		return &outbox.Error{Class: outbox.Forbidden, Err: err}
	case retryAfter:
		return &outbox.Error{Class: outbox.RetryAfter, After: pr.after, Err: err}
	case messageGone:
		return &outbox.Error{Class: outbox.Gone, Err: err}
	}
	return &outbox.Error{Class: outbox.BadRequest, Err: err}
}

// Refused handles a chat that refuses the bot for good: a user who never pressed Start or
// blocked it (see blocked), a deleted forum topic, or a group the bot was removed from.
func (p platform) Refused(d string, items []*item, err error) {
	a := p.a
	chat, thread := chatOfQueue(d)
	switch {
	case chat > 0:
		a.log.Info("a user cannot get private messages", "reason", a.red.Err(err)) // no ID at info: docs/hosting.md, "Logs"
		a.blocked(chat, items)
	case problemOf(err).kind == threadGone:
		a.deleteTopic(chat, thread)
	default:
		// Kicked, no longer a member, or the group is gone (403 "bot was kicked from the group
		// chat", "bot is not a member of the supergroup chat", 400 "chat not found"): as when
		// my_chat_member says so.
		_ = a.removed(context.Background(), chat) // logged; a later refusal or my_chat_member closes what is left
	}
}

// shown notes that a new live or hand message took the place of the previous game's. The
// previous game's hand is deleted from the private chat (it would keep its last buttons and
// "your turn" forever), and its record says so: shown with a version no message ever has, so
// that no copy edits or posts it again. The previous game's table message keeps its record: its
// last version (the game's result) may still be on its way, from this copy or another, after a
// restart or a take-over, and it must edit that message, not post a new one. Records go with
// the table (they are under its ID).
func (a *Adapter) shown(chat int64, it *item) {
	ctx := a.baseContext() // the KV is the adapter's: it lives as long as Run
	var slot string
	switch it.Msg.Kind {
	case api.KindLive:
		slot = it.Msg.Table + "/live"
	case api.KindHand:
		slot = it.Msg.Table + "/hand/" + userKey(chat)
	default:
		return
	}
	prev, ok, err := a.kv.Get(ctx, bucketSlot, slot)
	if err != nil || (ok && string(prev) == it.Key) {
		return
	}
	if err := a.kv.Put(ctx, bucketSlot, slot, []byte(it.Key)); err != nil {
		a.log.Error("saving slot", "slot", slot, "err", err)
		return
	}
	if !ok || it.Msg.Kind != api.KindHand {
		return
	}
	if old, found := a.out.Record(string(prev)); found && old.Version != retired {
		chat, _ := strconv.ParseInt(old.Chat, 10, 64)
		id, _ := strconv.Atoi(old.ID)
		a.retire(chat, id)
		old.Version = retired
		a.out.Shown(string(prev), old)
	}
}

// retired is the version of a deleted message's record: newer than any the service gives, so
// every version of its Key is older and skipped.
const retired = math.MaxUint64

// sendNew sends a new message (or photo) and gives its message ID.
func (a *Adapter) sendNew(chat int64, thread int, it *item, text string, kb *keyboard) (int, error) {
	ctx := a.baseContext() // the KV is the adapter's: it lives as long as Run
	p := tgbotapi.Params{}
	p.AddNonZero64("chat_id", chat)
	p.AddNonZero("message_thread_id", thread)
	if it.Data.replyTo != 0 {
		if err := p.AddInterface("reply_parameters", replyParameters{MessageID: it.Data.replyTo, AllowSendingWithoutReply: true}); err != nil {
			return 0, err
		}
	}
	if kb != nil {
		if err := p.AddInterface("reply_markup", kb); err != nil {
			return 0, err
		}
	}
	m := it.Msg
	oneOff := it.Key == "" || it.Once() // a message that is never edited may carry a file or a photo
	if oneOff && m.File != nil && !a.refuses(chat, documents) {
		doc := maps.Clone(p)
		doc["caption"] = clip16(text, 1024)
		resp, err := a.bot.UploadFiles("sendDocument", doc, []tgbotapi.RequestFile{{Name: "document",
			Data: tgbotapi.FileBytes{Name: m.File.Name, Bytes: m.File.Data}}})
		if !lacks(err, documents) {
			return messageID(resp, err)
		}
		// A group that takes no files from the bot gets the text alone, now and from now on.
		a.refuse(chat, documents)
		a.log.Info("the group refuses documents; sending the text only", "chat", chat)
	}
	if oneOff && m.Picture != api.PictureNone && !a.refuses(chat, photos) {
		png, _, err := a.Service().Picture(ctx, m, false)
		if err == nil {
			photo := maps.Clone(p)
			photo["caption"] = clip16(text, 1024)
			resp, err := a.bot.UploadFiles("sendPhoto", photo, []tgbotapi.RequestFile{{Name: "photo",
				Data: tgbotapi.FileBytes{Name: string(m.Picture) + ".png", Bytes: png}}})
			if !lacks(err, photos) {
				return messageID(resp, err)
			}
			// A group may take text but not photos from the bot (a restricted member): the
			// picture's text goes instead, now and from now on.
			a.refuse(chat, photos)
			a.log.Info("the group refuses photos; sending pictures as text", "chat", chat)
		} else {
			a.log.Warn("picture failed; sending text only", "picture", m.Picture, "err", err)
		}
	}
	p["text"] = text
	if err := p.AddInterface("link_preview_options", noPreview); err != nil {
		return 0, err
	}
	resp, err := a.bot.MakeRequest("sendMessage", p)
	return messageID(resp, err)
}

// The library (v5.5.1) predates Bot API 7.0, which replaced reply_to_message_id and
// disable_web_page_preview with these objects; the adapter sets them as the raw parameters.
type (
	// replyParameters is the Bot API's ReplyParameters.
	replyParameters struct {
		MessageID                int  `json:"message_id"`
		AllowSendingWithoutReply bool `json:"allow_sending_without_reply,omitempty"`
	}
	// linkPreviewOptions is the Bot API's LinkPreviewOptions.
	linkPreviewOptions struct {
		IsDisabled bool `json:"is_disabled,omitempty"`
	}
)

// noPreview keeps Telegram from showing a preview of the rules' or a table's link.
var noPreview = linkPreviewOptions{IsDisabled: true}

func messageID(resp *tgbotapi.APIResponse, err error) (int, error) {
	if err != nil {
		return 0, err
	}
	var m tgbotapi.Message
	if err := json.Unmarshal(resp.Result, &m); err != nil {
		return 0, fmt.Errorf("reading the sent message: %w", err)
	}
	return m.MessageID, nil
}

func (a *Adapter) edit(chat int64, id int, text string, kb *keyboard) error {
	if kb == nil {
		kb = &keyboard{InlineKeyboard: [][]inlineButton{}} // removes the buttons
	}
	p := tgbotapi.Params{}
	p.AddNonZero64("chat_id", chat)
	p.AddNonZero("message_id", id)
	p["text"] = text
	if err := p.AddInterface("link_preview_options", noPreview); err != nil {
		return err
	}
	if err := p.AddInterface("reply_markup", kb); err != nil {
		return err
	}
	_, err := a.bot.MakeRequest("editMessageText", p)
	return err
}

// keyboard is an inline keyboard as the Bot API takes it. The library's type predates web_app
// buttons (Bot API 6.0), so the adapter writes its own.
type keyboard struct {
	InlineKeyboard [][]inlineButton `json:"inline_keyboard"`
}

// inlineButton has exactly one of its actions (Bot API, InlineKeyboardButton: "You must use
// exactly one of the optional fields").
type inlineButton struct {
	Text         string      `json:"text"`
	CallbackData *string     `json:"callback_data,omitempty"`
	URL          *string     `json:"url,omitempty"`
	WebApp       *webAppInfo `json:"web_app,omitempty"`
}

type webAppInfo struct {
	URL string `json:"url"`
}

// urlButton and webAppButton are a row of one button below the table's buttons, when URL is set.
type (
	urlButton    struct{ URL, Label string }
	webAppButton struct{ URL, Label string }
)

// maxRow is Telegram's limit of buttons in one row.
const maxRow = 8

// markup turns button rows into an inline keyboard: rows of at most eight, callback data the
// encoded Action; each extra that is set adds a row of its own below them (a URL or a web_app
// button). nil when there are no buttons.
func markup(rows [][]api.Button, extras ...any) (kb *keyboard, err error) {
	defer func() {
		if r := recover(); r != nil { // Action.Encode panics on data over 64 bytes
			kb, err = nil, fmt.Errorf("bad button: %v", r)
		}
	}()
	var out [][]inlineButton
	for _, row := range rows {
		for len(row) > 0 {
			n := min(len(row), maxRow)
			var r []inlineButton
			for _, b := range row[:n] {
				data := b.Action.Encode()
				r = append(r, inlineButton{Text: b.Label, CallbackData: &data})
			}
			out = append(out, r)
			row = row[n:]
		}
	}
	for _, x := range extras {
		switch x := x.(type) {
		case urlButton:
			if x.URL != "" {
				out = append(out, []inlineButton{{Text: x.Label, URL: &x.URL}})
			}
		case webAppButton:
			if x.URL != "" {
				out = append(out, []inlineButton{{Text: x.Label, WebApp: &webAppInfo{URL: x.URL}}})
			}
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return &keyboard{InlineKeyboard: out}, nil
}

// messageText is what a message shows: its title line, if any, and its text, within Telegram's
// 4096 characters.
func messageText(m api.Message) string {
	text := m.Text
	if m.Title != "" {
		text = m.Title + "\n" + text
	}
	if strings.TrimSpace(text) == "" {
		text = "…"
	}
	return clip16(text, 4096)
}

// clip16 shortens s to at most n UTF-16 code units (how Telegram counts), marking a cut with "…".
func clip16(s string, n int) string {
	if len16(s) <= n {
		return s
	}
	used := 0
	for i, r := range s {
		w := utf16.RuneLen(r)
		if w < 0 {
			w = 1
		}
		if used+w > n-1 {
			return s[:i] + "…"
		}
		used += w
	}
	return s
}

func len16(s string) int {
	n := 0
	for _, r := range s {
		if w := utf16.RuneLen(r); w > 0 {
			n += w
		} else {
			n++
		}
	}
	return n
}

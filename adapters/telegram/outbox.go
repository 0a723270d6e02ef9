package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
	"golang.org/x/time/rate"

	"github.com/kontermatt/kontermatt/adapters/internal/outbox"
	"github.com/kontermatt/kontermatt/core/table"
)

// The adapter's messages go through the shared outbox engine (adapters/internal/outbox): one
// queue per chat, keyed messages merged so an edit that waited is sent with the newest content,
// records of what each Telegram message shows. This file holds only what is Telegram's: its
// limits, how to send and edit, and what its errors mean.

// KV buckets. Keys that begin with a table ID and "/" are that table's, and are pruned with it.
const (
	bucketMsg     = "telegram.msg"     // message Key → outbox.Record: the Telegram message that shows it
	bucketSlot    = "telegram.slot"    // "table/live" or "table/hand/user" → the Key last shown there
	bucketHand    = "telegram.hand"    // "table/user" → the Key of the user's newest hand message
	bucketBlocked = "telegram.blocked" // user → "1": private messages fail (never started, or blocked)
	bucketPending = "telegram.pending" // "table/user" → []table.Message: the table's messages held back while the user is blocked
	bucketTold    = "telegram.told"    // "table/user" → "1": the group was shown the deep link
	bucketRecent  = "telegram.recent"  // group → unix ms until which its minute window may hold our messages
)

// item is one message for a chat, with what Telegram needs beyond the message itself.
type item struct {
	chat    int64
	thread  int
	user    int64 // a private chat's user (== chat); 0 for groups
	key     string
	version uint64
	msg     table.Message
	replyTo int    // reply to this message (typed commands in groups)
	link    string // a URL button below the text (the deep link, the Mini App's direct link)
	label   string
	// app opens the web table as a Mini App (a web_app button, private chats only); browser is
	// a one-time link to it for any browser.
	app, appLabel         string
	browser, browserLabel string
	repost                bool // show the keyed message anew at the bottom of the chat, deleting the old one
	hand                  bool // a hand the user asked for: if it cannot be sent, the group gets the deep link
	// fallback goes out instead if this private message cannot be sent because the user never
	// pressed Start or blocked the bot.
	fallback *item
}

func dest(chat int64) string { return strconv.FormatInt(chat, 10) }

// enqueue hands an item to the engine. A group's item goes to the group's current ID, waits while
// the place refuses the bot's messages, and is dropped for a group the bot was removed from.
func (a *Adapter) enqueue(it *item) {
	if it.chat < 0 {
		it.chat = a.chatNow(it.chat)
		if a.isGone(it.chat) || a.topicDeleted(it.chat, it.thread) {
			a.log.Debug("message for a group the bot left, or a deleted topic, dropped", "chat", it.chat, "kind", it.msg.Kind)
			return
		}
		if a.park(it) {
			return
		}
	}
	a.webButtons(it)
	a.out.Enqueue(&outbox.Item{Dest: dest(it.chat), Msg: it.msg, Key: it.key, Version: it.version,
		Sum: outbox.Digest(it.msg, it.link, it.app, it.browser), Repost: it.repost, Data: it})
}

// Errors Show gives instead of calling Telegram, when it knows better.
var (
	errLeftGroup = errors.New("the bot was removed from the group")
	errParked    = errors.New("the group refuses the bot's messages for now")
)

// movedError is a send to a group known to have become a supergroup.
type movedError struct{ to int64 }

func (e *movedError) Error() string { return "the group is now supergroup " + dest(e.to) }

// mergeItems keeps what a newer queued version of a Key adds to an older one.
func mergeItems(queued, newer *outbox.Item) {
	q, n := queued.Data.(*item), newer.Data.(*item)
	q.hand = q.hand || n.hand
}

// Deliver implements table.Outbox: it queues the messages and returns at once.
func (a *Adapter) Deliver(_ context.Context, msgs []table.Message) {
	for _, m := range msgs {
		switch m.Target.Kind {
		case table.ToPlace:
			chat, thread, ok := chatOf(m.Target.Place)
			if !ok {
				a.log.Warn("message for a place that is not a Telegram chat", "place", m.Target.Place.Key())
				continue
			}
			a.enqueue(&item{chat: chat, thread: thread, key: m.Key, version: m.Version, msg: m})
		case table.ToPlayer, table.ToActor:
			user, ok := userOf(m.Target.Player)
			if !ok {
				continue
			}
			if m.Kind == table.KindHand && m.Key != "" && m.Table != "" {
				a.noteHand(user, m.Table, m.Key)
			}
			if a.isBlocked(user) {
				a.holdBack(user, m)
				continue
			}
			a.enqueue(&item{chat: user, user: user, key: m.Key, version: m.Version, msg: m})
		}
	}
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
	minute := newLimiter(a.cfg.GroupPerMinute, time.Minute, 3)
	if l.busyUntil.After(now) {
		empty(minute)
	}
	l.lims = []*rate.Limiter{minute, second(rate.NewLimiter(rate.Every(time.Second), 1), time.Second)}
	return l
}

// upgraded has the new ID of a group that a refused send found upgraded take the group's budget,
// before its queue moves there.
func (a *Adapter) upgraded(chat int64, err error) {
	if te := (*tgbotapi.Error)(nil); errors.As(err, &te) && te.MigrateToChatID != 0 {
		a.followLimits(chat, te.MigrateToChatID)
	}
}

// followLimits gives a group that became a supergroup the group's budget: Telegram counts the
// two IDs apart, but they are one chat to its people, and the table is published anew in the new
// one at once, so 20 a minute hold for the two together. It is called before anything is sent to
// the new ID (when a send finds the group upgraded, before its queue moves); the new chat's
// messages sent already, if any, count in the shared bucket too.
func (a *Adapter) followLimits(from, to int64) {
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
		if err := a.kv.Put(bucketRecent, dest(to), []byte(strconv.FormatInt(old.busyUntil.UnixMilli(), 10))); err != nil {
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
	b, ok, err := a.kv.Get(bucketRecent, dest(chat))
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
func (p platform) Wait(ctx context.Context, d string) error {
	a := p.a
	chat, _ := strconv.ParseInt(d, 10, 64)
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
	if err := a.kv.Put(bucketRecent, d, []byte(strconv.FormatInt(l.busyUntil.UnixMilli(), 10))); err != nil {
		a.log.Error("saving a group's recent sends", "chat", chat, "err", err)
	}
	return nil
}

// Show sends an item anew, or edits the message its record names.
func (p platform) Show(_ context.Context, oi *outbox.Item, rec *outbox.Record) (string, string, error) {
	a, it := p.a, oi.Data.(*item)
	it.msg = oi.Msg // the newest content merged into it
	// The item goes where the engine has it now: a moved queue carries the group's new ID.
	it.chat, _ = strconv.ParseInt(oi.Dest, 10, 64)
	if it.chat < 0 {
		if to, ok := a.movedTo(it.chat); ok {
			return "", "", &movedError{to}
		}
		if a.isGone(it.chat) || a.topicDeleted(it.chat, it.thread) {
			return "", "", errLeftGroup
		}
		if a.parkedPlace(it) {
			return "", "", errParked
		}
	}
	text := messageText(it.msg)
	if it.chat < 0 {
		text = a.rewriteCommands(text)
	}
	kb, err := markup(it.msg.Buttons, urlButton{it.link, it.label}, urlButton{it.browser, it.browserLabel}, webAppButton{it.app, it.appLabel})
	if err != nil {
		a.log.Error("buttons dropped", "key", it.key, "err", err)
	}
	// A message of another chat (the group before its upgrade) cannot be edited from this one.
	if rec != nil && rec.Chat != dest(it.chat) {
		rec = nil
	}
	if rec != nil && !oi.Repost {
		id, _ := strconv.Atoi(rec.ID)
		if err := a.edit(it.chat, id, text, kb); err != nil && !notModified(err) {
			a.upgraded(it.chat, err)
			return "", "", err
		}
		a.gotThrough(it)
		return rec.Chat, rec.ID, nil
	}
	id, err := a.sendNew(it, text, kb)
	if err != nil {
		a.upgraded(it.chat, err)
		return "", "", err
	}
	a.gotThrough(it)
	if rec != nil && oi.Repost && rec.ID != strconv.Itoa(id) {
		old, _ := strconv.Atoi(rec.ID)
		a.retire(it.chat, old)
	}
	if it.key != "" {
		a.shown(it)
	}
	return dest(it.chat), strconv.Itoa(id), nil
}

// parkedPlace reports whether the item's place refuses the bot's messages right now.
func (a *Adapter) parkedPlace(it *item) bool {
	a.groups.mu.Lock()
	defer a.groups.mu.Unlock()
	return a.groups.muted[it.chat] || a.groups.closed[placeOf(it.chat, it.thread).Key()]
}

// retire takes an old message out of use: deleted, or where Telegram no longer deletes it (after
// 48 hours: Bot API, deleteMessage, "A message can only be deleted if it was sent less than 48
// hours ago"), edited so that its buttons are gone; editing has no such limit.
func (a *Adapter) retire(chat int64, id int) {
	_, err := a.bot.Request(tgbotapi.NewDeleteMessage(chat, id))
	if err == nil || deleteGone(err) {
		return
	}
	a.log.Debug("deleting an old message failed; taking its buttons away", "chat", chat, "err", a.red.Err(err))
	none := tgbotapi.InlineKeyboardMarkup{InlineKeyboard: [][]tgbotapi.InlineKeyboardButton{}}
	if _, err := a.bot.Request(tgbotapi.NewEditMessageReplyMarkup(chat, id, none)); err != nil && !notModified(err) {
		a.log.Debug("taking an old message's buttons away failed", "chat", chat, "err", a.red.Err(err))
	}
}

// deleteGone reports a delete of a message that is not there (any more).
func deleteGone(err error) bool {
	var te *tgbotapi.Error
	return errors.As(err, &te) && strings.Contains(strings.ToLower(te.Message), "message to delete not found")
}

// Classify reads the library's errors, and the adapter's own.
func (p platform) Classify(err error) *outbox.Error {
	var te *tgbotapi.Error
	var me *movedError
	switch {
	case errors.As(err, &me):
		return &outbox.Error{Class: outbox.Moved, To: dest(me.to), Err: err}
	case errors.Is(err, errLeftGroup):
		return &outbox.Error{Class: outbox.Drop, Err: err}
	case errors.Is(err, errParked):
		return &outbox.Error{Class: outbox.Forbidden, Err: err}
	case !errors.As(err, &te):
		return &outbox.Error{Class: outbox.Transient, Err: errors.New(p.a.red.Err(err))} // the network or the server; the library does not retry
	case te.MigrateToChatID != 0:
		// Bot API, ResponseParameters: "The group has been migrated to a supergroup with the
		// specified identifier."
		return &outbox.Error{Class: outbox.Moved, To: dest(te.MigrateToChatID), Err: err}
	case mayNotPost(te), threadGone(err):
		return &outbox.Error{Class: outbox.Forbidden, Err: err}
	case te.RetryAfter > 0:
		return &outbox.Error{Class: outbox.RetryAfter, After: time.Duration(te.RetryAfter) * time.Second, Err: err}
	case cannotMessage(te):
		return &outbox.Error{Class: outbox.Forbidden, Err: err}
	case editGone(err):
		return &outbox.Error{Class: outbox.Gone, Err: err}
	}
	return &outbox.Error{Class: outbox.BadRequest, Err: err}
}

// Refused handles a chat that refuses the bot: a user who never pressed Start or blocked it (their
// keyed messages wait, and the group gets its deep link), or a group the bot may not write to.
func (p platform) Refused(d string, items []*outbox.Item, err error) {
	a := p.a
	chat, _ := strconv.ParseInt(d, 10, 64)
	its := make([]*item, 0, len(items))
	for _, oi := range items {
		it := oi.Data.(*item)
		it.msg, it.version, it.repost = oi.Msg, oi.Version, oi.Repost
		it.chat, _ = strconv.ParseInt(oi.Dest, 10, 64)
		its = append(its, it)
	}
	var te *tgbotapi.Error
	switch {
	case chat > 0:
		a.log.Info("user cannot get private messages", "user", chat, "reason", a.red.Err(err))
		a.blocked(chat, its)
	case threadGone(err):
		a.deleteTopic(chat, its[0].thread)
		for _, it := range its { // the chat's other topics' messages go on
			a.enqueue(it)
		}
	case errors.As(err, &te) && (te.Code == 403 || strings.Contains(strings.ToLower(te.Message), "chat not found")):
		// Kicked, no longer a member, or the group is gone (403 "bot was kicked from the group
		// chat", "bot is not a member of the supergroup chat", 400 "chat not found"): as when
		// my_chat_member says so.
		_ = a.removed(context.Background(), chat) // logged; a later refusal or my_chat_member closes what is left
	default:
		a.refused(chat, its, err)
	}
}

// cannotMessage reports the errors that mean a user cannot get private messages from the bot.
func cannotMessage(e *tgbotapi.Error) bool {
	m := strings.ToLower(e.Message)
	return e.Code == 403 || strings.Contains(m, "forbidden") || strings.Contains(m, "chat not found")
}

func notModified(err error) bool {
	var te *tgbotapi.Error
	return errors.As(err, &te) && strings.Contains(strings.ToLower(te.Message), "message is not modified")
}

// editGone reports an edit that failed because the message is gone or may no longer be edited.
// (Also a message of the group before its upgrade, should an edit reach the new chat.)
func editGone(err error) bool {
	var te *tgbotapi.Error
	if !errors.As(err, &te) {
		return false
	}
	m := strings.ToLower(te.Message)
	return strings.Contains(m, "message to edit not found") || strings.Contains(m, "message can't be edited") ||
		strings.Contains(m, "message_id_invalid")
}

// shown notes that a new live or hand message took the place of the previous game's, whose
// record is no longer needed: nothing edits a finished game's messages. The previous game's hand
// is deleted from the private chat: it would keep its last buttons and "your turn" forever.
func (a *Adapter) shown(it *item) {
	var slot string
	switch it.msg.Kind {
	case table.KindLive:
		slot = it.msg.Table + "/live"
	case table.KindHand:
		slot = it.msg.Table + "/hand/" + userKey(it.user)
	default:
		return
	}
	prev, ok, err := a.kv.Get(bucketSlot, slot)
	if err != nil || (ok && string(prev) == it.key) {
		return
	}
	if err := a.kv.Put(bucketSlot, slot, []byte(it.key)); err != nil {
		a.log.Error("saving slot", "slot", slot, "err", err)
		return
	}
	if !ok {
		return
	}
	if old, found := a.out.Record(string(prev)); found && it.msg.Kind == table.KindHand {
		chat, _ := strconv.ParseInt(old.Chat, 10, 64)
		id, _ := strconv.Atoi(old.ID)
		a.retire(chat, id)
	}
	a.out.Forget(string(prev))
}

// sendNew sends a new message (or photo) and gives its message ID.
func (a *Adapter) sendNew(it *item, text string, kb *keyboard) (int, error) {
	p := tgbotapi.Params{}
	p.AddNonZero64("chat_id", it.chat)
	p.AddNonZero("message_thread_id", it.thread)
	if it.replyTo != 0 {
		if err := p.AddInterface("reply_parameters", replyParameters{MessageID: it.replyTo, AllowSendingWithoutReply: true}); err != nil {
			return 0, err
		}
	}
	if kb != nil {
		if err := p.AddInterface("reply_markup", kb); err != nil {
			return 0, err
		}
	}
	if it.key == "" && it.msg.File != nil && !a.refuses(it.chat, documents) {
		doc := maps.Clone(p)
		doc["caption"] = clip16(text, 1024)
		resp, err := a.bot.UploadFiles("sendDocument", doc, []tgbotapi.RequestFile{{Name: "document",
			Data: tgbotapi.FileBytes{Name: it.msg.File.Name, Bytes: it.msg.File.Data}}})
		if !noDocumentRights(err) {
			return messageID(resp, err)
		}
		// A group that takes no files from the bot gets the text alone, now and from now on.
		a.refuse(it.chat, documents)
		a.log.Info("the group refuses documents; sending the text only", "chat", it.chat)
	}
	if it.key == "" && it.msg.Picture != table.PictureNone && !a.refuses(it.chat, photos) {
		png, _, err := a.Service().Picture(it.msg, false)
		if err == nil {
			photo := maps.Clone(p)
			photo["caption"] = clip16(text, 1024)
			resp, err := a.bot.UploadFiles("sendPhoto", photo, []tgbotapi.RequestFile{{Name: "photo",
				Data: tgbotapi.FileBytes{Name: string(it.msg.Picture) + ".png", Bytes: png}}})
			if !noPhotoRights(err) {
				return messageID(resp, err)
			}
			// A group may take text but not photos from the bot (a restricted member): the
			// picture's text goes instead, now and from now on.
			a.refuse(it.chat, photos)
			a.log.Info("the group refuses photos; sending pictures as text", "chat", it.chat)
		} else {
			a.log.Warn("picture failed; sending text only", "picture", it.msg.Picture, "err", err)
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
func markup(rows [][]table.Button, extras ...any) (kb *keyboard, err error) {
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
func messageText(m table.Message) string {
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

package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf16"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
	"golang.org/x/time/rate"

	"github.com/kontermatt/kontermatt/core/table"
)

// The outbox keeps one queue per chat. A queue's worker waits for the chat's limiter before it
// takes the head, so an edit that waited is sent with the newest content that arrived meanwhile:
// a keyed message that is already queued is updated in place (the latest Version wins) instead of
// being queued again.

// KV buckets. Keys that begin with a table ID and "/" are that table's, and are pruned with it.
const (
	bucketMsg     = "telegram.msg"     // message Key → msgRecord: the Telegram message that shows it
	bucketSlot    = "telegram.slot"    // "table/live" or "table/hand/user" → the Key last shown there
	bucketHand    = "telegram.hand"    // "table/user" → the Key of the user's newest hand message
	bucketBlocked = "telegram.blocked" // user → "1": private messages fail (never started, or blocked)
	bucketPending = "telegram.pending" // user → []table.Message: the hands held back while blocked
	bucketTold    = "telegram.told"    // "table/user" → "1": the group was shown the deep link
	bucketRecent  = "telegram.recent"  // group → unix ms until which its minute window may hold our messages
)

// item is one message waiting for its chat's turn.
type item struct {
	chat    int64
	thread  int
	user    int64 // a private chat's user (== chat); 0 for groups
	key     string
	version uint64
	msg     table.Message
	replyTo int    // reply to this message (typed commands in groups)
	link    string // a URL button below the text (the deep link)
	label   string
	repost  bool // show the keyed message anew at the bottom of the chat, deleting the old one
	hand    bool // a hand the user asked for: if it cannot be sent, the group gets the deep link
	// fallback goes out instead if this private message cannot be sent because the user never
	// pressed Start or blocked the bot.
	fallback *item
	tries    int
}

// merge takes a newer version's content into a queued item.
func (it *item) merge(n *item) {
	if n.version >= it.version {
		it.msg, it.version = n.msg, n.version
	}
	it.repost = it.repost || n.repost
	it.hand = it.hand || n.hand
}

type chatQueue struct {
	chat    int64
	items   []*item
	lims    []*rate.Limiter
	running bool
	// busyUntil is how far ahead bucketRecent says the group had messages (see noteSend).
	busyUntil time.Time
}

// wait blocks until every limiter of the chat and the global one let a message through.
func (q *chatQueue) wait(ctx context.Context, global *rate.Limiter) error {
	for _, l := range q.lims {
		if err := l.Wait(ctx); err != nil {
			return err
		}
	}
	return global.Wait(ctx)
}

// idle reports whether the chat's limiters are full, so a fresh queue would behave the same.
func (q *chatQueue) idle(now time.Time) bool {
	for _, l := range q.lims {
		if l.TokensAt(now) < float64(l.Burst()) {
			return false
		}
	}
	return true
}

type outbox struct {
	mu      sync.Mutex
	queues  map[int64]*chatQueue
	closing bool
	wg      sync.WaitGroup
	global  *rate.Limiter
	cfg     Config
	born    time.Time // when this process began sending
}

func (o *outbox) init(cfg Config) {
	o.queues = map[int64]*chatQueue{}
	o.global = rate.NewLimiter(rate.Limit(cfg.GlobalPerSecond), max(1, int(cfg.GlobalPerSecond)))
	o.cfg = cfg
	o.born = time.Now()
}

// limiters gives a new chat's limits: groups (negative IDs) at most GroupPerMinute in any minute
// and one a second; private chats one per PrivateInterval.
//
// A process that crashed a moment ago may have spent a chat's budget just before it died, and
// Telegram counts those messages still. So a group that the bot wrote to in the last minutes
// (bucketRecent says so) starts with an empty bucket: together with the old process's bucket it
// never lets more through in any window than one bucket would, however often the bot restarts.
// The per-second limits start empty within a second of this process's start, for the same
// reason. Everything else starts full, so a fresh start costs an idle chat no delay.
func (a *Adapter) limiters(q *chatQueue) []*rate.Limiter {
	o := &a.out
	now := time.Now()
	empty := func(l *rate.Limiter) *rate.Limiter {
		l.AllowN(now, l.Burst())
		return l
	}
	second := func(l *rate.Limiter, every time.Duration) *rate.Limiter {
		if now.Sub(o.born) < every {
			return empty(l)
		}
		return l
	}
	if q.chat > 0 {
		return []*rate.Limiter{second(rate.NewLimiter(rate.Every(o.cfg.PrivateInterval), 1), o.cfg.PrivateInterval)}
	}
	minute := newLimiter(o.cfg.GroupPerMinute, time.Minute, 3)
	if q.busyUntil = a.recentUntil(q.chat); q.busyUntil.After(now) {
		empty(minute)
	}
	return []*rate.Limiter{minute, second(rate.NewLimiter(rate.Every(time.Second), 1), time.Second)}
}

// recentUntil reads until when a group may still have messages of an earlier process in its
// minute window.
func (a *Adapter) recentUntil(chat int64) time.Time {
	b, ok, err := a.kv.Get(bucketRecent, strconv.FormatInt(chat, 10))
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

// noteSend records, before a message to a group goes out, that the group's minute window holds
// messages of this process: stored ahead for two minutes at a time, so it costs one write a
// minute for a busy group and survives a crash right after the send.
func (a *Adapter) noteSend(q *chatQueue) {
	now := time.Now()
	if q.chat > 0 || q.busyUntil.After(now.Add(time.Minute)) {
		return
	}
	q.busyUntil = now.Add(2 * time.Minute)
	if err := a.kv.Put(bucketRecent, strconv.FormatInt(q.chat, 10), []byte(strconv.FormatInt(q.busyUntil.UnixMilli(), 10))); err != nil {
		a.log.Error("saving a group's recent sends", "chat", q.chat, "err", err)
	}
}

// close stops taking messages, lets the workers send what is queued for at most d, then cancels
// whatever still waits.
func (o *outbox) close(d time.Duration, cancel context.CancelFunc, log *slog.Logger) {
	o.mu.Lock()
	o.closing = true
	o.mu.Unlock()
	done := make(chan struct{})
	go func() {
		o.wg.Wait()
		close(done)
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		log.Warn("closing with messages still queued")
		cancel()
		<-done
	}
	cancel()
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

// enqueue adds an item to its chat's queue, merging it into a queued item of the same Key.
func (a *Adapter) enqueue(it *item) {
	o := &a.out
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closing {
		a.log.Warn("message after Close dropped", "chat", it.chat, "key", it.key)
		return
	}
	q := o.queues[it.chat]
	if q == nil {
		q = &chatQueue{chat: it.chat}
		q.lims = a.limiters(q)
		o.queues[it.chat] = q
	}
	if it.key != "" {
		for _, old := range q.items {
			if old.key == it.key {
				old.merge(it)
				return
			}
		}
	}
	q.items = append(q.items, it)
	if !q.running {
		q.running = true
		o.wg.Add(1)
		go a.work(q)
	}
}

// requeue puts an item that failed back at the head of its queue (or into a newer queued
// version of the same Key).
func (a *Adapter) requeue(q *chatQueue, it *item) {
	o := &a.out
	o.mu.Lock()
	defer o.mu.Unlock()
	if it.key != "" {
		for _, old := range q.items {
			if old.key == it.key {
				old.merge(it)
				return
			}
		}
	}
	q.items = append([]*item{it}, q.items...)
}

// work sends a chat's queue, one message at a time within the chat's limits, and ends when the
// queue is empty.
func (a *Adapter) work(q *chatQueue) {
	o := &a.out
	defer o.wg.Done()
	defer func() {
		if r := recover(); r != nil {
			a.log.Error("outbox worker panicked", "chat", q.chat, "panic", a.red.String(fmt.Sprint(r)))
			o.mu.Lock()
			q.running = false
			q.items = nil
			o.mu.Unlock()
		}
	}()
	for {
		o.mu.Lock()
		// What Telegram already shows as it is costs no call, so it waits for no limit.
		for len(q.items) > 0 && a.shownAlready(q.items[0]) {
			q.items = q.items[1:]
		}
		if len(q.items) == 0 {
			q.running = false
			if q.idle(time.Now()) {
				delete(o.queues, q.chat)
			}
			o.mu.Unlock()
			return
		}
		o.mu.Unlock()
		if err := q.wait(a.life, o.global); err != nil {
			o.mu.Lock()
			n := len(q.items)
			q.items, q.running = nil, false
			o.mu.Unlock()
			a.log.Warn("messages not sent before shutdown", "chat", q.chat, "count", n)
			return
		}
		o.mu.Lock()
		it := q.items[0]
		q.items = q.items[1:]
		o.mu.Unlock()
		a.noteSend(q)
		a.send(q, it)
	}
}

// shownAlready reports whether a keyed item would change nothing: its message shows this content,
// or a newer version, already (a restart publishes everything again).
func (a *Adapter) shownAlready(it *item) bool {
	if it.key == "" || it.repost {
		return false
	}
	rec, found := a.record(it.key)
	return found && (it.version < rec.Version || rec.Sum == digest(messageText(it.msg), it.msg.Buttons))
}

// send posts one item and deals with what Telegram answered.
func (a *Adapter) send(q *chatQueue, it *item) {
	err := a.post(it)
	if err == nil {
		return
	}
	var te *tgbotapi.Error
	isAPI := errors.As(err, &te)
	switch {
	case isAPI && te.RetryAfter > 0:
		a.log.Warn("flood control: waiting", "chat", it.chat, "retry_after", te.RetryAfter)
		a.requeue(q, it)
		sleep(a.life, time.Duration(te.RetryAfter)*time.Second)
	case isAPI && it.user != 0 && cannotMessage(te):
		a.log.Info("user cannot get private messages", "user", it.user, "reason", te.Message)
		a.out.mu.Lock()
		rest := q.items
		q.items = nil
		a.out.mu.Unlock()
		a.blocked(it.user, append([]*item{it}, rest...))
	case !isAPI && it.tries < 3 && a.life.Err() == nil:
		// The network or the server failed; the library does not retry.
		it.tries++
		a.log.Warn("send failed; retrying", "chat", it.chat, "try", it.tries, "err", a.red.Err(err))
		a.requeue(q, it)
		sleep(a.life, time.Duration(1<<it.tries)*time.Second)
	default:
		a.log.Warn("message dropped", "chat", it.chat, "key", it.key, "err", a.red.Err(err))
	}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
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
func editGone(err error) bool {
	var te *tgbotapi.Error
	if !errors.As(err, &te) {
		return false
	}
	m := strings.ToLower(te.Message)
	return strings.Contains(m, "message to edit not found") || strings.Contains(m, "message can't be edited") ||
		strings.Contains(m, "message_id_invalid")
}

// msgRecord is the Telegram message that shows a keyed message, and what it shows.
type msgRecord struct {
	Chat    int64  `json:"c"`
	ID      int    `json:"m"`
	Version uint64 `json:"v"`
	Sum     uint64 `json:"s"`
}

func (a *Adapter) record(key string) (msgRecord, bool) {
	var r msgRecord
	b, ok, err := a.kv.Get(bucketMsg, key)
	if err != nil {
		a.log.Error("reading message record", "key", key, "err", err)
		return r, false
	}
	if !ok || json.Unmarshal(b, &r) != nil || r.ID == 0 {
		return r, false
	}
	return r, true
}

func (a *Adapter) saveRecord(key string, r msgRecord) {
	b, _ := json.Marshal(r)
	if err := a.kv.Put(bucketMsg, key, b); err != nil {
		a.log.Error("saving message record", "key", key, "err", err)
	}
}

// post makes the API calls for one item: a new message, or an edit of the message that shows
// its Key.
func (a *Adapter) post(it *item) error {
	text := messageText(it.msg)
	kb, err := markup(it.msg.Buttons, it.link, it.label)
	if err != nil {
		a.log.Error("buttons dropped", "key", it.key, "err", err)
	}
	if it.key == "" {
		_, err := a.sendNew(it, text, kb)
		return err
	}
	sum := digest(text, it.msg.Buttons)
	rec, found := a.record(it.key)
	if found && it.version < rec.Version {
		return nil // a newer version is already shown
	}
	if found && !it.repost {
		if rec.Sum == sum {
			return nil // shown already (a restart publishes everything again)
		}
		err := a.edit(rec.Chat, rec.ID, text, kb)
		if err == nil || notModified(err) {
			a.saveRecord(it.key, msgRecord{Chat: rec.Chat, ID: rec.ID, Version: it.version, Sum: sum})
			return nil
		}
		if !editGone(err) {
			return err
		}
		a.log.Info("message to edit is gone; sending it anew", "key", it.key)
	}
	id, err := a.sendNew(it, text, kb)
	if err != nil {
		return err
	}
	a.saveRecord(it.key, msgRecord{Chat: it.chat, ID: id, Version: it.version, Sum: sum})
	if found && it.repost && rec.ID != id {
		if _, err := a.bot.Request(tgbotapi.NewDeleteMessage(rec.Chat, rec.ID)); err != nil {
			a.log.Debug("deleting the old message failed", "key", it.key, "err", a.red.Err(err))
		}
	}
	a.shown(it)
	return nil
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
	if old, found := a.record(string(prev)); found && it.msg.Kind == table.KindHand {
		if _, err := a.bot.Request(tgbotapi.NewDeleteMessage(old.Chat, old.ID)); err != nil {
			a.log.Debug("deleting the last game's hand failed", "err", a.red.Err(err))
		}
	}
	if err := a.kv.Delete(bucketMsg, string(prev)); err != nil {
		a.log.Error("pruning message record", "key", string(prev), "err", err)
	}
}

// sendNew sends a new message (or photo) and gives its message ID.
func (a *Adapter) sendNew(it *item, text string, kb *tgbotapi.InlineKeyboardMarkup) (int, error) {
	p := tgbotapi.Params{}
	p.AddNonZero64("chat_id", it.chat)
	p.AddNonZero("message_thread_id", it.thread)
	if it.replyTo != 0 {
		p.AddNonZero("reply_to_message_id", it.replyTo)
		p.AddBool("allow_sending_without_reply", true)
	}
	if kb != nil {
		if err := p.AddInterface("reply_markup", kb); err != nil {
			return 0, err
		}
	}
	if it.key == "" && it.msg.Picture != table.PictureNone && a.cfg.Picture != nil {
		png, err := a.cfg.Picture(it.msg)
		if err == nil {
			p["caption"] = clip16(text, 1024)
			resp, err := a.bot.UploadFiles("sendPhoto", p, []tgbotapi.RequestFile{{Name: "photo",
				Data: tgbotapi.FileBytes{Name: string(it.msg.Picture) + ".png", Bytes: png}}})
			return messageID(resp, err)
		}
		a.log.Warn("picture failed; sending text only", "picture", it.msg.Picture, "err", err)
	}
	p["text"] = text
	p.AddBool("disable_web_page_preview", true)
	resp, err := a.bot.MakeRequest("sendMessage", p)
	return messageID(resp, err)
}

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

func (a *Adapter) edit(chat int64, id int, text string, kb *tgbotapi.InlineKeyboardMarkup) error {
	if kb == nil {
		kb = &tgbotapi.InlineKeyboardMarkup{InlineKeyboard: [][]tgbotapi.InlineKeyboardButton{}} // removes the buttons
	}
	_, err := a.bot.Request(tgbotapi.EditMessageTextConfig{
		BaseEdit: tgbotapi.BaseEdit{ChatID: chat, MessageID: id, ReplyMarkup: kb},
		Text:     text, DisableWebPagePreview: true,
	})
	return err
}

// maxRow is Telegram's limit of buttons in one row.
const maxRow = 8

// markup turns button rows into an inline keyboard: rows of at most eight, callback data the
// encoded Action; link adds a URL button row. nil when there are no buttons.
func markup(rows [][]table.Button, link, label string) (kb *tgbotapi.InlineKeyboardMarkup, err error) {
	defer func() {
		if r := recover(); r != nil { // Action.Encode panics on data over 64 bytes
			kb, err = nil, fmt.Errorf("bad button: %v", r)
		}
	}()
	var out [][]tgbotapi.InlineKeyboardButton
	for _, row := range rows {
		for len(row) > 0 {
			n := min(len(row), maxRow)
			var r []tgbotapi.InlineKeyboardButton
			for _, b := range row[:n] {
				r = append(r, tgbotapi.NewInlineKeyboardButtonData(b.Label, b.Action.Encode()))
			}
			out = append(out, r)
			row = row[n:]
		}
	}
	if link != "" {
		out = append(out, tgbotapi.NewInlineKeyboardRow(tgbotapi.NewInlineKeyboardButtonURL(label, link)))
	}
	if len(out) == 0 {
		return nil, nil
	}
	return &tgbotapi.InlineKeyboardMarkup{InlineKeyboard: out}, nil
}

// digest identifies what a keyed message shows: its text and its buttons, but not the sequence
// numbers the buttons carry. The service sends a message again only when what it shows changes
// (its buttons stay valid until their presser acts), so a restart, which publishes everything
// again with the current sequence number, costs no edit.
func digest(text string, rows [][]table.Button) uint64 {
	h := fnv.New64a()
	h.Write([]byte(text))
	for _, row := range rows {
		h.Write([]byte{1})
		for _, b := range row {
			fmt.Fprintf(h, "\x02%s\x03%s\x03%s\x03%s", b.Label, b.Action.Verb, b.Action.Table, b.Action.Arg)
		}
	}
	return h.Sum64()
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

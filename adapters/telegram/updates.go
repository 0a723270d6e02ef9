package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/kontermatt/kontermatt/core/table"
)

// Updates are confirmed to Telegram only once handled. The library's GetUpdatesChan confirms a
// batch as soon as its updates are in the channel (it asks for the next offset at once), so a
// crash would lose every update taken but not yet handled. Here the offset of each getUpdates is
// the first update not yet handled (Bot API, getUpdates: "An update is considered confirmed as
// soon as getUpdates is called with an offset higher than its update_id"), so a crash makes
// Telegram send again what was taken and not handled; the service applies a command at most
// once per update ID (Command.EventID), so nothing counts twice.
//
// A chat's updates are handled in order, different chats' in parallel, and a slow one (an admin
// check that waits out its 30 s) holds only its own chat: polling goes on while it is handled.
// Telegram answers a long poll at once while an update at or after the offset waits, so while
// one is being handled the polls are short ones, a second apart, and skip what was taken
// already; once everything taken is handled, they are long polls again. (A poll gives at most 100
// updates: only when that many wait behind a slow one does it hold the others too.)

// update is one update with what the library's types lack.
type update struct {
	tgbotapi.Update
	thread int // message_thread_id of a message in a forum topic (the message, or the pressed button's)
	// media are the bot's granular rights in a my_chat_member update's new status.
	media mediaRights
	// again says Telegram sends the update again after it was handled once without its change
	// being stored: its sender was told then, and is not told again while it keeps failing.
	again bool
}

// mediaRights are what a restricted member may send beyond text (Bot API,
// ChatMemberRestricted); the library's ChatMember lacks them.
type mediaRights struct {
	Photos    bool `json:"can_send_photos"`
	Documents bool `json:"can_send_documents"`
}

// decodeUpdate reads one update as Telegram sends it.
func decodeUpdate(raw []byte) (update, error) {
	var u update
	if err := json.Unmarshal(raw, &u.Update); err != nil {
		return u, err
	}
	type rawMsg struct {
		Thread int  `json:"message_thread_id"`
		Topic  bool `json:"is_topic_message"`
	}
	var extra struct {
		Message  *rawMsg `json:"message"`
		Callback *struct {
			Message *rawMsg `json:"message"`
		} `json:"callback_query"`
		Member *struct {
			New mediaRights `json:"new_chat_member"`
		} `json:"my_chat_member"`
	}
	if err := json.Unmarshal(raw, &extra); err != nil {
		return u, err
	}
	if extra.Member != nil {
		u.media = extra.Member.New
	}
	m := extra.Message
	if extra.Callback != nil {
		m = extra.Callback.Message
	}
	// Only a topic's own messages carry the topic: a reply in the General topic names the thread
	// of the message replied to without being in it.
	if m != nil && m.Topic {
		u.thread = m.Thread
	}
	return u, nil
}

// pollRetry is how long polling waits after a failed getUpdates.
const pollRetry = 3 * time.Second

// busyPoll is how often polling asks for new updates while some it took are still being
// handled.
const busyPoll = time.Second

// poll long-polls for updates until ctx ends, handing each to its chat's queue (handled with
// hctx, which outlives ctx). On the way out it waits for what it took and, if mayConfirm still
// says so, confirms it, so a clean restart does not get those updates again.
func (a *Adapter) poll(ctx, hctx context.Context, mayConfirm func() bool) {
	w := newWindow()
	var c conflict
	failed := false
	for ctx.Err() == nil {
		offset, busy, changed := w.offset()
		// After a failure the first poll is a short one: it answers at once, so the health
		// check sees the way back without waiting out a long poll.
		timeout := int(a.cfg.PollTimeout / time.Second)
		if failed || busy {
			timeout = 0
		}
		batch, err := a.getUpdates(offset, timeout)
		failed = err != nil
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			if isConflict(err) {
				sleep(ctx, a.conflicted(&c, err))
				continue
			}
			a.link.Down(errors.New(a.red.Err(err)))
			a.log.Warn("failed to get updates; retrying", "in", pollRetry, "err", a.red.Err(err))
			sleep(ctx, pollRetry)
			continue
		}
		if a.polled(&c) {
			a.link.Up()
		}
		fresh := w.take(offset, batch)
		for _, u := range fresh {
			a.dispatch(hctx, u, func(error) { w.done(u.UpdateID) })
		}
		if busy && len(fresh) == 0 {
			// Nothing new: poll again once something taken is handled, or after a moment.
			t := time.NewTimer(busyPoll)
			select {
			case <-changed:
			case <-t.C:
			case <-ctx.Done():
			}
			t.Stop()
		}
	}
	a.in.wait()
	offset, _, _ := w.offset()
	if offset == 0 || !mayConfirm() {
		return
	}
	// A short getUpdates with the next offset confirms what was handled; what it returns is not
	// confirmed by it, so nothing is lost.
	a.client.setPollContext(context.Background())
	if _, err := a.getUpdatesLimit(offset, 0, 1); err != nil {
		a.log.Warn("confirming the last updates failed; Telegram sends them again at the next start", "err", a.red.Err(err))
	}
}

// window is what polling took: the updates not yet handled, and the highest update ID taken.
type window struct {
	mu      sync.Mutex
	high    int
	open    map[int]bool
	changed chan struct{} // closed when an update is handled
}

func newWindow() *window { return &window{open: map[int]bool{}, changed: make(chan struct{})} }

// offset is the next getUpdates offset: the first update not yet handled, or the one after the
// highest taken (0 before any); busy says some are being handled, and changed is closed when
// one of them is.
func (w *window) offset() (offset int, busy bool, changed <-chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.open) == 0 {
		if w.high == 0 {
			return 0, false, w.changed
		}
		return w.high + 1, false, w.changed
	}
	low := w.high
	for id := range w.open {
		low = min(low, id)
	}
	return low, true, w.changed
}

// take gives the updates of a batch polled with offset that were not taken before, and notes
// them taken. A poll past everything taken brings only new ones.
func (w *window) take(offset int, batch []update) []update {
	w.mu.Lock()
	defer w.mu.Unlock()
	past := offset > w.high
	var fresh []update
	for _, u := range batch {
		if !past && u.UpdateID <= w.high {
			continue // taken already: being handled, or handled behind one that is
		}
		fresh = append(fresh, u)
		w.open[u.UpdateID] = true
		w.high = max(w.high, u.UpdateID)
	}
	return fresh
}

// done notes an update handled.
func (w *window) done(id int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.open, id)
	close(w.changed)
	w.changed = make(chan struct{})
}

func (a *Adapter) getUpdates(offset, timeout int) ([]update, error) {
	return a.getUpdatesLimit(offset, timeout, 0)
}

func (a *Adapter) getUpdatesLimit(offset, timeout, limit int) ([]update, error) {
	p := tgbotapi.Params{}
	p.AddNonZero("offset", offset)
	p.AddNonZero("limit", limit)
	p.AddNonZero("timeout", timeout)
	if err := p.AddInterface("allowed_updates", allowedUpdates); err != nil {
		return nil, err
	}
	resp, err := a.bot.MakeRequest("getUpdates", p)
	if err != nil {
		return nil, err
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(resp.Result, &raws); err != nil {
		return nil, fmt.Errorf("reading updates: %w", err)
	}
	out := make([]update, 0, len(raws))
	for _, raw := range raws {
		u, err := decodeUpdate(raw)
		if err != nil {
			// One unreadable update must not stop the others; it is skipped (and confirmed).
			a.log.Error("an update the library cannot read; skipped", "err", err)
			var id struct {
				UpdateID int `json:"update_id"`
			}
			if json.Unmarshal(raw, &id) == nil {
				out = append(out, update{Update: tgbotapi.Update{UpdateID: id.UpdateID}})
			}
			continue
		}
		out = append(out, u)
	}
	return out, nil
}

// dispatch queues an update behind the ones from the same chat: a chat's commands are handled in
// the order they were sent, different chats in parallel. done is called once it is handled, with
// the reason if what it changed could not be stored (errNotStored, or a handler's panic).
func (a *Adapter) dispatch(ctx context.Context, u update, done func(error)) {
	a.traffic.Heard(time.Now())
	var chat int64
	switch {
	case u.CallbackQuery != nil && u.CallbackQuery.Message != nil:
		chat = u.CallbackQuery.Message.Chat.ID
	case u.CallbackQuery != nil && u.CallbackQuery.From != nil:
		chat = u.CallbackQuery.From.ID
	case u.Message != nil:
		chat = u.Message.Chat.ID
	case u.MyChatMember != nil:
		chat = u.MyChatMember.Chat.ID
	default:
		done(nil)
		return
	}
	a.in.do(chat, func() { done(a.handle(ctx, u)) })
}

// errNotStored is a handled update whose change the service could not store: nothing of it
// happened, and Telegram is to send it again.
var errNotStored = errors.New("the change could not be stored")

// errPanicked is an update whose handler panicked: what it did is not known to be stored.
var errPanicked = errors.New("the update's handler panicked")

func (a *Adapter) handle(ctx context.Context, u update) (err error) {
	defer func() {
		if r := recover(); r != nil {
			a.log.Error("update handler panicked", "update", u.UpdateID, "panic", a.red.String(fmt.Sprint(r)))
			err = errPanicked
		}
	}()
	switch {
	case u.CallbackQuery != nil:
		return a.onCallback(ctx, u)
	case u.Message != nil:
		return a.onMessage(ctx, u)
	case u.MyChatMember != nil:
		return a.onMyChatMember(ctx, u)
	}
	return nil
}

// notStored reports a Handle error that says the command's change could not be stored (or the
// service stopped before it could be): the command did nothing, and may be sent again.
func notStored(err error) bool {
	return errors.Is(err, table.ErrNotStored) || errors.Is(err, table.ErrStopped)
}

func eventID(u update) string { return "tg:" + strconv.Itoa(u.UpdateID) }

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// errConfigWebhook marks a webhook configuration the adapter cannot start with.
var errConfigWebhook = errors.New("telegram: webhook")

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
)

// Updates are confirmed to Telegram only once handled. The library's GetUpdatesChan confirms a
// batch as soon as its updates are in the channel (it asks for the next offset at once), so a
// crash would lose every update taken but not yet handled. Here each batch is handled — a
// chat's updates in order, different chats in parallel — before the next getUpdates call, whose
// offset is what confirms the batch. A crash before that makes Telegram send the batch again; the
// service applies a command at most once per update ID (Command.EventID), so nothing counts
// twice. (Bot API, getUpdates: "An update is considered confirmed as soon as getUpdates is called
// with an offset higher than its update_id.")

// update is one update with what the library's types lack.
type update struct {
	tgbotapi.Update
	thread int // message_thread_id of a message in a forum topic (the message, or the pressed button's)
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
	}
	if err := json.Unmarshal(raw, &extra); err != nil {
		return u, err
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

// poll long-polls for updates until ctx ends, handling each batch (with hctx, which outlives ctx)
// before asking for the next. On the way out it confirms what it handled, so a clean restart
// does not get the last batch again.
func (a *Adapter) poll(ctx, hctx context.Context) {
	offset := 0
	failed := false
	for ctx.Err() == nil {
		// After a failure the first poll is a short one: it answers at once, so the health
		// check sees the way back without waiting out a long poll.
		timeout := int(a.cfg.PollTimeout / time.Second)
		if failed {
			timeout = 0
		}
		batch, err := a.getUpdates(offset, timeout)
		failed = err != nil
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			a.link.Down(errors.New(a.red.Err(err)))
			a.log.Warn("failed to get updates; retrying", "in", pollRetry, "err", a.red.Err(err))
			sleep(ctx, pollRetry)
			continue
		}
		a.link.Up()
		a.handleBatch(hctx, batch)
		if n := len(batch); n > 0 {
			offset = batch[n-1].UpdateID + 1
		}
	}
	if offset == 0 {
		return
	}
	// A short getUpdates with the next offset confirms the last batch; what it returns is not
	// confirmed by it, so nothing is lost.
	a.client.setPollContext(context.Background())
	if _, err := a.getUpdatesLimit(offset, 0, 1); err != nil {
		a.log.Warn("confirming the last updates failed; Telegram sends them again at the next start", "err", a.red.Err(err))
	}
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

// handleBatch handles updates, a chat's in their order and different chats' in parallel, and
// returns when all are handled.
func (a *Adapter) handleBatch(ctx context.Context, batch []update) {
	var wg sync.WaitGroup
	for _, u := range batch {
		wg.Add(1)
		a.dispatch(ctx, u, wg.Done)
	}
	wg.Wait()
}

// dispatch queues an update behind the ones from the same chat: a chat's commands are handled in
// the order they were sent, different chats in parallel. done is called once it is handled.
func (a *Adapter) dispatch(ctx context.Context, u update, done func()) {
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
		done()
		return
	}
	a.in.do(chat, func() {
		defer done()
		a.handle(ctx, u)
	})
}

func (a *Adapter) handle(ctx context.Context, u update) {
	defer func() {
		if r := recover(); r != nil {
			a.log.Error("update handler panicked", "update", u.UpdateID, "panic", a.red.String(fmt.Sprint(r)))
		}
	}()
	switch {
	case u.CallbackQuery != nil:
		a.onCallback(ctx, u)
	case u.Message != nil:
		a.onMessage(ctx, u)
	case u.MyChatMember != nil:
		a.onMyChatMember(ctx, u.MyChatMember)
	}
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

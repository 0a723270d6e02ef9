package telegram

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// webhookView is Telegram's view of the webhook (Bot API, getWebhookInfo: the URL it posts to,
// the updates waiting for delivery, the last delivery error), asked now and then for the health
// check.
type webhookView struct {
	mu    sync.Mutex
	state string // one line for /readyz; empty: not asked yet
	err   error  // what keeps the copy from being ready; nil: nothing
}

// errWebhookElsewhere is Telegram posting to another URL than this bot's (another deployment set
// its own, or a copy in long-polling mode deleted it): no update reaches this copy.
var errWebhookElsewhere = errors.New("the webhook is set to another URL: Telegram posts the updates elsewhere")

// watchWebhook asks Telegram's view every InfoEvery until ctx ends.
func (a *Adapter) watchWebhook(ctx context.Context) {
	every := a.cfg.Webhook.InfoEvery
	if every <= 0 {
		every = time.Minute
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		a.askWebhook(time.Now())
	}
}

// askWebhook asks getWebhookInfo once and keeps what it says. Only a webhook set to another URL
// makes the copy not ready: a delivery error or a backlog is shown, but it would be the same at
// every copy, and taking them all out of rotation at once would keep Telegram from ever
// delivering again.
func (a *Adapter) askWebhook(now time.Time) {
	info, err := a.bot.GetWebhookInfo()
	v := &a.webhook
	v.mu.Lock()
	defer v.mu.Unlock()
	switch {
	case err != nil:
		// Telegram itself not answering is the link's to say (Connected).
		v.state, v.err = "unknown: getWebhookInfo: "+a.red.Err(err), nil
		return
	case info.URL != a.cfg.Webhook.URL:
		where := "nowhere (no webhook set)"
		if info.URL != "" {
			where = "another URL"
		}
		v.state, v.err = fmt.Sprintf("Telegram posts to %s, not %s", where, a.cfg.Webhook.URL), errWebhookElsewhere
		return
	}
	v.state, v.err = fmt.Sprintf("ok, %d pending", info.PendingUpdateCount), nil
	if info.LastErrorDate != 0 {
		ago := now.Sub(time.Unix(int64(info.LastErrorDate), 0)).Round(time.Second)
		v.state = fmt.Sprintf("%d pending, last delivery error %v ago: %s", info.PendingUpdateCount, ago, info.LastErrorMessage)
	}
}

// WebhookState is Telegram's view of the webhook for /readyz: a line, and an error when it keeps
// this copy from being ready. Empty before the first answer, and in long-polling mode.
func (a *Adapter) WebhookState() (string, error) {
	a.webhook.mu.Lock()
	defer a.webhook.mu.Unlock()
	return a.webhook.state, a.webhook.err
}

package telegram

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// Telegram gives a bot's updates to one long poll at a time: a second process polling with the
// same token ends the first one's poll with 409 "Conflict: terminated by other getUpdates
// request; make sure that only one bot instance is running", and that one's next poll ends the
// second's (the reference server, Client.cpp abort_long_poll). The two then share the updates,
// each applying its part to its own tables. A webhook set for the token gives polling nothing but
// 409 "can't use getUpdates method while webhook is active". Neither mends itself, and retrying
// quietly hides it: the adapter says it in an ERROR line (again every conflictLogEvery while it
// lasts, with how many polls were ended since), the health check reports it for as long as it
// lasts (not only until the next poll that happens to get through), and the polls back off.
const (
	conflictLogEvery = 10 * time.Minute
	// conflictQuiet is how long after the last 409 the conflict counts as over: longer than
	// the other process's long poll and back-off, so polls that get through between two 409s
	// do not end it.
	conflictQuiet = 5 * time.Minute
	conflictRetry = 5 * time.Second // the first back-off; it doubles up to a minute
)

// conflict is the state of a conflict over the token's updates; the zero value is none.
type conflict struct {
	err    error     // what the health check says
	last   time.Time // the last 409
	logged time.Time // the last ERROR line
	n      int       // 409s since that line
	tries  int       // 409s in a row, for the back-off
}

// isConflict reports getUpdates refused because another poll or a webhook has the updates.
func isConflict(err error) bool {
	var te *tgbotapi.Error
	return errors.As(err, &te) && te.Code == http.StatusConflict
}

// conflicted notes a 409 from getUpdates and gives how long to wait before the next poll.
func (a *Adapter) conflicted(c *conflict, err error) time.Duration {
	now := time.Now()
	said := a.red.Err(err)
	if strings.Contains(strings.ToLower(said), "webhook") {
		c.err = fmt.Errorf("a webhook is set for this bot token, so polling gets no updates (Telegram: %q): is another process running with a webhook? Run only one process per token", said)
	} else {
		c.err = fmt.Errorf("another process polls Telegram with this bot token and takes part of its updates (Telegram: %q): run only one process per token", said)
	}
	a.link.Down(c.err)
	c.last, c.n, c.tries = now, c.n+1, c.tries+1
	if now.Sub(c.logged) >= conflictLogEvery {
		a.log.Error(c.err.Error(), "polls_ended", c.n)
		c.logged, c.n = now, 0
	}
	return min(conflictRetry<<min(c.tries-1, 4), time.Minute)
}

// polled notes a poll that got through; false while a conflict lasts (the health check goes on
// reporting it).
func (a *Adapter) polled(c *conflict) bool {
	c.tries = 0
	if c.err == nil {
		return true
	}
	if time.Since(c.last) < conflictQuiet {
		return false
	}
	a.log.Info("polling gets every update again: Telegram has ended none of its polls for a while", "for", conflictQuiet)
	*c = conflict{}
	return true
}

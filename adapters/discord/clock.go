package discord

import (
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Interactions carry their age: an interaction's ID is a snowflake whose top bits are the
// milliseconds since Discord's epoch when it was made (developer docs, Reference: Snowflakes).
// Its token must see an answer within 3 s of that (developer docs, Interactions: Receiving and
// Responding); after a reconnect, RESUME replays the events that were missed, interactions whose
// window passed among them (developer docs, Gateway: Resuming). Such an interaction has already
// failed for its user ("This interaction failed"): applying it now would make a move the player
// saw refused, and they will press again.
//
// The age is measured against Discord's clock, not this machine's, which may be off by seconds:
// every REST answer carries Discord's time in its Date header.

// discordEpoch is the first second of 2015, where snowflake time starts.
const discordEpoch = 1420070400000

// answerWindow is how long an interaction's token waits for its first answer.
const answerWindow = 3 * time.Second

// snowflakeTime gives the time a snowflake was made.
func snowflakeTime(id string) (time.Time, bool) {
	n, err := strconv.ParseUint(id, 10, 64)
	if err != nil || n == 0 {
		return time.Time{}, false
	}
	return time.UnixMilli(int64(n>>22) + discordEpoch), true
}

// discordClock bounds Discord's present time from below. A Date header is Discord's time cut to
// the second when the answer left, so Discord's clock has reached at least date plus the time
// since the answer arrived; of all answers, the one giving the latest bound is kept. Only this
// machine's monotonic clock is used in between, so its wall clock may be wrong or jump.
type discordClock struct {
	mu   sync.Mutex
	date time.Time // Discord's time in the kept answer
	at   time.Time // when that answer arrived (with a monotonic reading)
	ok   bool
}

func (c *discordClock) observe(date, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.ok || date.Sub(c.date) > at.Sub(c.at) {
		c.date, c.at, c.ok = date, at, true
	}
}

// now gives a time Discord's clock has surely reached, or false before any answer.
func (c *discordClock) now() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.date.Add(time.Since(c.at)), c.ok
}

// age gives how old a snowflake surely is by Discord's clock (it may be older): 0 if unknown.
func (c *discordClock) age(id string) time.Duration {
	made, ok := snowflakeTime(id)
	now, known := c.now()
	if !ok || !known {
		return 0
	}
	return max(now.Sub(made), 0)
}

// clockTransport feeds the clock the Date of every answer from Discord.
type clockTransport struct {
	clock *discordClock
	next  http.RoundTripper
}

func (t *clockTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err == nil {
		if d, perr := http.ParseTime(resp.Header.Get("Date")); perr == nil {
			t.clock.observe(d, time.Now())
		}
	}
	return resp, err
}

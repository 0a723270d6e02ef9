package chat

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/kontermatt/kontermatt/core/table"
)

// Window is a platform's budget of sends to one place that holds across every copy of the bot
// on one store: at most N sends in any Per, and at least Gap between two (Telegram: 20 messages
// a minute to a group, about one a second; Bot FAQ, "My bot is hitting limits"). The times of
// the place's recent sends are one KV entry, moved by compare-and-swap (table.Swapper): a copy
// takes a slot by adding its send's time to the entry as it read it, or reads again. The times
// are the copies' clocks, which must agree within a fraction of Gap.
//
// With Burst set, the window's sends are spread evenly too: after a quiet spell Burst sends may
// go out Gap apart, and beyond them the other N-Burst of a window follow at the pace that fills
// it, one every Per/(N-Burst). Without it, N sends could go out Gap apart and leave the place
// silent for the rest of Per (Telegram: 20 sends in 20 s, then 40 s of nothing while the table
// moves on); with it the longest wait between two sends while something waits is that pace
// (3.5 s for 20 a minute with a burst of 3), and still no more than N go out in any Per.
type Window struct {
	KV     table.Swapper
	Bucket string // one entry per place, under the place's key
	N      int
	Per    time.Duration
	Gap    time.Duration
	Burst  int              // 0: no spreading (N sends Gap apart, then the window's rest)
	Now    func() time.Time // default time.Now
}

// Wait blocks until one more send to the place key fits in the window, and takes its slot; or it
// gives ctx's error, or the store's (then nothing was taken).
func (w *Window) Wait(ctx context.Context, key string) error {
	now := w.Now
	if now == nil {
		now = time.Now
	}
	raw, ok, err := w.KV.Get(ctx, w.Bucket, key)
	if err != nil {
		return err
	}
	if !ok {
		raw = nil
	}
	for {
		t := now()
		times := w.recent(raw, t)
		if at := w.next(times); at.After(t) {
			timer := time.NewTimer(at.Sub(t))
			select {
			case <-ctx.Done():
				timer.Stop()
				return ctx.Err()
			case <-timer.C:
			}
			if raw, ok, err = w.KV.Get(ctx, w.Bucket, key); err != nil {
				return err
			} else if !ok {
				raw = nil
			}
			continue
		}
		b, _ := json.Marshal(append(times, t.UnixMilli()))
		cur, err := w.KV.Swap(ctx, w.Bucket, key, raw, b)
		if errors.Is(err, table.ErrConflict) {
			raw = cur // another copy took a slot: decide again on the window as it is now
			continue
		}
		return err
	}
}

// recent reads the send times (unix ms) of an entry that are still within Per of now.
func (w *Window) recent(raw []byte, now time.Time) []int64 {
	var times []int64
	if raw != nil && json.Unmarshal(raw, &times) != nil {
		times = nil // unreadable: overwritten by the next send
	}
	from := now.Add(-w.Per).UnixMilli()
	kept := times[:0]
	for _, ms := range times {
		if ms > from {
			kept = append(kept, ms)
		}
	}
	slices.Sort(kept) // the copies' clocks differ a little
	return kept
}

// next is the earliest time one more send fits after the recent ones (in the order sent): Gap
// after the last, the window's N, and with Burst the even pace: of the j sends before it, the
// first is at least (j+1-Burst) paces before it.
func (w *Window) next(times []int64) time.Time {
	var at time.Time
	n := len(times)
	if n == 0 {
		return at
	}
	at = time.UnixMilli(times[n-1]).Add(w.Gap)
	if w.N > 0 && n >= w.N {
		at = maxTime(at, time.UnixMilli(times[n-w.N]).Add(w.Per))
	}
	if w.Burst > 0 && w.N > w.Burst {
		pace := w.Per / time.Duration(w.N-w.Burst)
		for j := w.Burst; j <= min(n, w.N); j++ {
			at = maxTime(at, time.UnixMilli(times[n-j]).Add(time.Duration(j+1-w.Burst)*pace))
		}
	}
	return at
}

// Follow gives the place to the budget of from as well: what was sent to from counts at to
// (a Telegram group that became a supergroup is one chat to its people).
func (w *Window) Follow(ctx context.Context, from, to string) error {
	src, ok, err := w.KV.Get(ctx, w.Bucket, from)
	if err != nil || !ok {
		return err
	}
	for {
		raw, ok, err := w.KV.Get(ctx, w.Bucket, to)
		if err != nil {
			return err
		}
		if !ok {
			raw = nil
		}
		now := time.Now()
		if w.Now != nil {
			now = w.Now()
		}
		merged := mergeSorted(w.recent(src, now), w.recent(raw, now))
		b, _ := json.Marshal(merged)
		if _, err := w.KV.Swap(ctx, w.Bucket, to, raw, b); !errors.Is(err, table.ErrConflict) {
			return err
		}
	}
}

func mergeSorted(a, b []int64) []int64 {
	out := make([]int64, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if a[0] <= b[0] {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return append(append(out, a...), b...)
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

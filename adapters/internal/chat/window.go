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
type Window struct {
	KV     table.Swapper
	Bucket string // one entry per place, under the place's key
	N      int
	Per    time.Duration
	Gap    time.Duration
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

// next is the earliest time one more send fits after the recent ones (in the order sent).
func (w *Window) next(times []int64) time.Time {
	var at time.Time
	if n := len(times); n > 0 {
		at = time.UnixMilli(times[n-1]).Add(w.Gap)
		if w.N > 0 && n >= w.N {
			at = maxTime(at, time.UnixMilli(times[n-w.N]).Add(w.Per))
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

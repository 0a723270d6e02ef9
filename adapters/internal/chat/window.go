package chat

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
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
// go out Gap apart, and beyond them the sends follow at the pace of a token bucket that lets N
// through in any Per: one every (Per+Slack)/(N-Burst+1) (Burst sends, and in the rest of any
// Per fewer than N-Burst+1 paces). Without it, N sends could go out Gap apart and leave the
// place silent for the rest of Per (Telegram: 20 sends in 20 s, then 40 s of nothing while the
// table moves on); with it the longest wait between two sends while something waits is that
// pace (3.025 s for 20 a minute without a burst, with a slack of half a second: one copy's pace,
// the adapter's own limiter), and still no more than N go out in any Per.
//
// A place's sends are nearly all its owner's (one copy tells a place's story; the others only
// answer whoever acted there), so a Window keeps the entry as it last read or wrote it and takes
// the next slot by compare-and-swap against that, without reading it first: one request to the
// store a send. The first send to a place reads the entry (what was sent in the last Per, by
// every copy: the previous owner's sends count after a take-over), and a swap that finds the
// entry changed by another copy decides again on what it finds.
type Window struct {
	KV     table.Swapper
	Bucket string // one entry per place, under the place's key
	N      int
	Per    time.Duration
	Gap    time.Duration
	Burst  int // 0: no spreading (N sends Gap apart, then the window's rest)
	// Slack lengthens the window the pace is reckoned over, so that a request delayed on its
	// way does not make two sends seem a window apart when they were not.
	Slack time.Duration
	Now   func() time.Time // default time.Now

	mu   sync.Mutex
	seen map[string][]byte // by place key: the entry as this copy last read or wrote it
}

// maxSeen bounds the entries a Window keeps; beyond it they are read again.
const maxSeen = 4096

// entry gives the place's entry as this copy last saw it, reading it on first use.
func (w *Window) entry(ctx context.Context, key string) ([]byte, error) {
	w.mu.Lock()
	raw, ok := w.seen[key]
	w.mu.Unlock()
	if ok {
		return raw, nil
	}
	raw, found, err := w.KV.Get(ctx, w.Bucket, key)
	if err != nil {
		return nil, err
	}
	if !found {
		raw = nil
	}
	w.see(key, raw)
	return raw, nil
}

// see keeps the place's entry as this copy read or wrote it.
func (w *Window) see(key string, raw []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.seen == nil || len(w.seen) >= maxSeen {
		w.seen = map[string][]byte{}
	}
	w.seen[key] = raw
}

// forget drops what this copy saw of a place's entry: it is read again at the next send.
func (w *Window) forget(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.seen, key)
}

// Wait blocks until one more send to the place key fits in the window, and takes its slot; or it
// gives ctx's error, or the store's (then nothing was taken).
func (w *Window) Wait(ctx context.Context, key string) error {
	now := w.Now
	if now == nil {
		now = time.Now
	}
	raw, err := w.entry(ctx, key)
	if err != nil {
		return err
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
			continue // the swap says whether another copy took a slot meanwhile
		}
		b, _ := json.Marshal(append(times, t.UnixMilli()))
		cur, err := w.KV.Swap(ctx, w.Bucket, key, raw, b)
		if errors.Is(err, table.ErrConflict) {
			raw = cur // another copy took a slot: decide again on the window as it is now
			w.see(key, raw)
			continue
		}
		if err != nil {
			w.forget(key) // unsure what the store holds now
			return err
		}
		w.see(key, b)
		return nil
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
		pace := (w.Per + w.Slack) / time.Duration(w.N-w.Burst+1)
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
			w.forget(to)
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

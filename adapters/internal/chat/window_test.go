package chat

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kontermatt/kontermatt/storage/mem"
)

// TestWindowHoldsAcrossCopies: two copies of the bot send to one group through one store, 15
// messages each, as fast as they may. Together they never send more than 20 in any minute, nor
// two within a second, and all 30 go out within the second minute.
func TestWindowHoldsAcrossCopies(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		kv := mem.New()
		var mu sync.Mutex
		var sent []time.Time
		start := time.Now()
		var wg sync.WaitGroup
		for range 2 {
			w := &Window{KV: kv, Bucket: "telegram.window", N: 20, Per: time.Minute, Gap: time.Second}
			wg.Go(func() {
				for range 15 {
					if err := w.Wait(t.Context(), "-100"); err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					sent = append(sent, time.Now())
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		slices.SortFunc(sent, func(a, b time.Time) int { return a.Compare(b) })
		if len(sent) != 30 {
			t.Fatalf("%d sent", len(sent))
		}
		for i := range sent {
			if i > 0 && sent[i].Sub(sent[i-1]) < time.Second {
				t.Errorf("sends %d and %d %v apart", i-1, i, sent[i].Sub(sent[i-1]))
			}
			if i >= 20 && sent[i].Sub(sent[i-20]) < time.Minute {
				t.Errorf("21 sends within %v", sent[i].Sub(sent[i-20]))
			}
		}
		if took := sent[29].Sub(start); took > 2*time.Minute {
			t.Errorf("30 sends took %v", took)
		}
	})
}

// TestWindowFollowsAMovedGroup: a group that became a supergroup keeps its minute's budget.
func TestWindowFollowsAMovedGroup(t *testing.T) {
	ctx := t.Context()
	synctest.Test(t, func(t *testing.T) {
		kv := mem.New()
		w := &Window{KV: kv, Bucket: "telegram.window", N: 3, Per: time.Minute}
		for range 3 {
			if err := w.Wait(t.Context(), "-1"); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Follow(ctx, "-1", "-1001"); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if err := w.Wait(t.Context(), "-1001"); err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(start); waited < time.Minute {
			t.Fatalf("the supergroup's first send waited %v: the group's minute did not count", waited)
		}
		for range 2 {
			if err := w.Wait(t.Context(), "-1001"); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if err := w.Wait(ctx, "-1001"); err == nil {
			t.Fatal("a full window let a cancelled wait through")
		}
	})
}

// TestWindowSpreadsEvenly: two copies of the bot send 20 messages each to one group, as fast as
// the window lets them. With Burst the sends come evenly: three at once after the quiet, then one
// every 3.33 s (60 s / 18), never a gap longer than that while messages wait, never more than 20
// in any minute; not 20 in 20 s and then 40 s of silence.
func TestWindowSpreadsEvenly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		kv := mem.New()
		var mu sync.Mutex
		var sent []time.Time
		var wg sync.WaitGroup
		for range 2 {
			w := &Window{KV: kv, Bucket: "telegram.window", N: 20, Per: time.Minute, Gap: time.Second, Burst: 3}
			wg.Go(func() {
				for range 20 {
					if err := w.Wait(t.Context(), "-100"); err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					sent = append(sent, time.Now())
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		slices.SortFunc(sent, func(a, b time.Time) int { return a.Compare(b) })
		pace := time.Minute / 18
		const ms = time.Millisecond // the window keeps times in milliseconds
		longest := time.Duration(0)
		for i := range sent {
			if i == 0 {
				continue
			}
			gap := sent[i].Sub(sent[i-1])
			longest = max(longest, gap)
			if gap < time.Second-ms {
				t.Errorf("sends %d and %d %v apart", i-1, i, gap)
			}
			if gap > pace+ms {
				t.Errorf("a gap of %v between sends %d and %d while messages waited", gap, i-1, i)
			}
			if i >= 3 && sent[i].Sub(sent[i-3]) < pace-ms {
				t.Errorf("sends %d to %d within %v: a burst", i-3, i, sent[i].Sub(sent[i-3]))
			}
			if i >= 20 && sent[i].Sub(sent[i-20]) < time.Minute-ms {
				t.Errorf("21 sends within %v", sent[i].Sub(sent[i-20]))
			}
		}
		t.Logf("40 sends in %v, the longest gap %v", sent[39].Sub(sent[0]), longest)
	})
}

// TestWindowPacesAsOneCopy: without a burst (Telegram's groupBurst), the copies of the bot
// together send to a group at the pace one copy alone does (its token bucket, newLimiter): 20 in
// any 60.5 s, one every 3.025 s, not one every 60/19 s; and never 21 in a minute. The owner of
// the group sends alone, and a second copy's reply takes a slot as well.
func TestWindowPacesAsOneCopy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		kv := mem.New()
		var sent []time.Time
		owner := &Window{KV: kv, Bucket: "telegram.window", N: 20, Per: time.Minute, Gap: time.Second, Burst: 1, Slack: 500 * time.Millisecond}
		other := &Window{KV: kv, Bucket: "telegram.window", N: 20, Per: time.Minute, Gap: time.Second, Burst: 1, Slack: 500 * time.Millisecond}
		for i := range 45 {
			w := owner
			if i == 30 {
				w = other // a reply of the copy that took a command
			}
			if err := w.Wait(t.Context(), "-100"); err != nil {
				t.Fatal(err)
			}
			sent = append(sent, time.Now())
		}
		pace := (time.Minute + 500*time.Millisecond) / 20
		const ms = time.Millisecond // the window keeps times in milliseconds
		for i := 1; i < len(sent); i++ {
			if gap := sent[i].Sub(sent[i-1]); gap > pace+ms || gap < pace-ms {
				t.Errorf("sends %d and %d %v apart, not %v", i-1, i, gap, pace)
			}
			if i >= 20 && sent[i].Sub(sent[i-20]) < time.Minute {
				t.Errorf("21 sends within %v", sent[i].Sub(sent[i-20]))
			}
		}
	})
}

package discord

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/bwmarrin/discordgo"
)

// TestIdentifyGateAtDiscordsPace runs the gate at Discord's own 5 s window, in a synctest
// bubble whose clock moves only when every goroutine waits: minutes of pacing in no time, with
// exact times. Four shards at max_concurrency 2 identify two at a time, a window apart (developer
// docs, Gateway: Sharding, "Max Concurrency"); a shard that gets no READY waits twice as long
// each time; and the gate refuses to spend the starts a start by hand needs.
func TestIdentifyGateAtDiscordsPace(t *testing.T) {
	const window = 5 * time.Second
	paced := window + window/10 // the gate's tenth of margin
	synctest.Test(t, func(t *testing.T) {
		g := newIdentifyGate(window)
		g.learn(discordgo.SessionInformation{Total: 1000, Remaining: 1000, ResetAfter: 86_400_000,
			MaxConcurrency: 2}, 4)
		start := time.Now()
		var mu sync.Mutex
		at := map[int]time.Duration{}
		var wg sync.WaitGroup
		for shard := range 4 {
			wg.Go(func() {
				if err := g.take(t.Context(), shard); err != nil {
					t.Errorf("shard %d: %v", shard, err)
				}
				mu.Lock()
				at[shard] = time.Since(start)
				mu.Unlock()
			})
			synctest.Wait() // in shard order, as openShards starts them
		}
		wg.Wait()
		// Buckets 0 (shards 0, 2) and 1 (shards 1, 3): the second of each bucket a window later.
		want := map[int]time.Duration{0: 0, 1: 0, 2: paced, 3: paced}
		for shard, w := range want {
			if at[shard] != w {
				t.Errorf("shard %d identified at %v, want %v", shard, at[shard], w)
			}
		}
		for shard := range 4 {
			g.ready(shard)
		}

		// Shard 0 gets no READY, again and again: 1, 2, 4, 8 windows after its last try.
		last := time.Now()
		for n, factor := range []time.Duration{1, 2, 4, 8} {
			if err := g.take(t.Context(), 0); err != nil {
				t.Fatal(err)
			}
			if n > 0 {
				if gap := time.Since(last); gap != factor/2*paced {
					t.Errorf("try %d came %v after the one before, want %v", n+1, gap, factor/2*paced)
				}
			}
			last = time.Now()
		}
		g.ready(0)

		// A stop ends a wait.
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() { done <- g.take(ctx, 2) }()
		synctest.Wait()
		cancel()
		if err := <-done; err != errIdentifyStopped {
			t.Errorf("a wait that was stopped: %v", err)
		}

		// Few starts left: the gate keeps what a start by hand needs.
		g.learn(discordgo.SessionInformation{Total: 1000, Remaining: 8, ResetAfter: 3_600_000, MaxConcurrency: 2}, 4)
		err := g.take(t.Context(), 1)
		if err == nil || !strings.Contains(err.Error(), "session starts are left") {
			t.Errorf("with 8 starts left and 4 shards: %v", err)
		}
	})
}

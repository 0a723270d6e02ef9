package discord

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/adapters/internal/chat"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// One process runs every shard on one service: a match in a server on shard 1, whose players'
// hands are in DMs, which Discord sends on shard 0 only.
func TestMatchOnShardOneWithHandsInDMs(t *testing.T) {
	f := newFakeDiscord(t)
	f.Shards, f.MaxConcurrency = 2, 2
	if got := f.shardOf(guildChannel); got != 1 {
		t.Fatalf("the test server is on shard %d", got)
	}
	store := mem.New()
	h := startHarness(t, f, store, store)
	f.mu.Lock()
	var shards []string
	for _, id := range f.identifies {
		b, _ := json.Marshal(id["shard"])
		shards = append(shards, string(b))
	}
	f.mu.Unlock()
	if strings.Join(shards, " ") != "[0,2] [1,2]" && strings.Join(shards, " ") != "[1,2] [0,2]" {
		t.Errorf("identified as %v, want shards 0 and 1 of 2", shards)
	}
	openTable(t, f, alice, []fakeUser{bob}, opt("stripes", 4, 1), opt("timer", 3, "none"), opt("level", 3, "easy"))
	n := playMatch(t, f, []seatPlayer{{u: alice}, {u: bob}}, rand.New(rand.NewPCG(41, 42)))
	h.a.Flush(context.Background())
	if !matchOver(f.channel(guildChannel)) {
		t.Errorf("the match did not end")
	}
	f.mu.Lock()
	onShard0, onShard1 := f.dispatched[0], f.dispatched[1]
	f.mu.Unlock()
	if onShard0 < n || onShard1 == 0 {
		t.Errorf("%d moves; %d interactions on shard 0 (the DMs), %d on shard 1 (the server)", n, onShard0, onShard1)
	}
}

// Shards start max_concurrency at a time, a bucket after the other (the fake refuses an
// IDENTIFY within the window of its bucket's last one).
func TestShardsStartWithinMaxConcurrency(t *testing.T) {
	f := newFakeDiscord(t)
	f.Shards, f.MaxConcurrency = 3, 2
	store := mem.New()
	startHarness(t, f, store, store)
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.identifies) != 3 {
		t.Errorf("%d identifies for 3 shards", len(f.identifies))
	}
}

// A start that would leave fewer session starts than a person needs to start the bot once more
// is refused, before any IDENTIFY, with the time the starts renew.
func TestSessionStartsAreKept(t *testing.T) {
	f := newFakeDiscord(t)
	f.Shards, f.StartsLeft = 2, 6
	a := mustNew(t, Config{Token: f.Token, APIURL: f.srv.URL, KV: mem.New()})
	a.Attach(handOnly{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second) // a wrong start serves until then
	defer cancel()
	err := a.Run(ctx)
	var se *chat.StartError
	if !errors.As(err, &se) || se.Fatal || se.RetryAfter() != 4*time.Hour || !strings.Contains(err.Error(), "session starts") {
		t.Fatalf("Run with 6 session starts left for 2 shards: %v", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.identifies) != 0 {
		t.Errorf("%d IDENTIFYs", len(f.identifies))
	}
	t.Log(err)
}

// A start that fails (here the command registration) returns an error worth a retry, having
// spent no session start, and Run works when called again.
func TestRunAgainAfterAFailedStart(t *testing.T) {
	f := newFakeDiscord(t)
	f.failRoute("PUT applications/{id}/guilds/{id}/commands", 500)
	store := mem.New()
	a := mustNew(t, Config{Token: f.Token, GuildID: f.GuildID, APIURL: f.srv.URL, KV: store})
	a.identifyWindow = f.IdentifyWindow
	svc := tabletest.New(table.Config{Store: store, Outboxes: map[string]table.Outbox{Platform: a}})
	defer svc.Close()
	a.Attach(svc)
	err := a.Run(context.Background())
	var se *chat.StartError
	if !errors.As(err, &se) || se.Permanent() || !strings.Contains(err.Error(), "registering") {
		t.Fatalf("Run with the registration failing: %v", err)
	}
	f.mu.Lock()
	identified := len(f.identifies)
	f.mu.Unlock()
	if identified != 0 {
		t.Errorf("a failed registration spent %d session starts", identified)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	f.waitFor("the second start", f.connected)
	if r := f.slash(alice, guildChannel, "help"); r.Type != 4 || !strings.Contains(r.Content, "/km new") {
		t.Errorf("help after the second start: %+v", r)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("second Run: %v", err)
	}
}

// An Invalid Session storm (a gateway incident: the session is invalidated, and every IDENTIFY
// for a while answered with another Invalid Session) is ridden out at the adapter's pace: each
// new session on a new connection, never an IDENTIFY on the connection the Invalid Session came
// on, each IDENTIFY after one that got no READY waiting twice as long as the one before, and the
// shard serves again once the storm is over.
func TestInvalidSessionStormIsPaced(t *testing.T) {
	f := newFakeDiscord(t)
	store := mem.New()
	h := startHarness(t, f, store, store)
	const storm = 3
	f.mu.Lock()
	f.invalidSessions = storm
	startsBefore, identifiesBefore := f.StartsLeft, len(f.identifies)
	f.mu.Unlock()
	f.invalidate(0)
	f.waitFor("the shard back after the storm", func() bool {
		return f.invalidSessions == 0 && f.connected() && len(f.identifies) == identifiesBefore+storm+1
	})
	if r := f.slash(alice, guildChannel, "help"); r.Type != 4 {
		t.Errorf("help after the storm: %+v", r)
	}
	f.mu.Lock()
	at := slices.Clone(f.identifiedAtList[identifiesBefore:])
	spent := startsBefore - f.StartsLeft
	f.mu.Unlock()
	if spent != storm+1 {
		t.Errorf("%d session starts spent for a storm of %d Invalid Sessions", spent, storm)
	}
	// The first IDENTIFY waits for its bucket only (the last was long ago); each after one that
	// got no READY waits the window, then twice, four times as long.
	for k := 1; k < len(at); k++ {
		want := f.IdentifyWindow << (k - 1)
		if gap := at[k].Sub(at[k-1]); gap < want-10*time.Millisecond {
			t.Errorf("IDENTIFY %d came %v after the one before, want at least %v", k+1, gap, want)
		}
	}
	if err := h.a.Connected(); err != nil {
		t.Errorf("after the storm: %v", err)
	}
}

// A storm that does not end stops at the reserve of the day's session starts: the shard stays
// down, the health check says so, and enough starts are left to start the bot by hand (one for
// the shard, and the reserve that start keeps itself).
func TestInvalidSessionStormKeepsTheReserve(t *testing.T) {
	f := newFakeDiscord(t)
	f.StartsLeft = minSessionStartsLeft + 4 // the start spends one, the storm may spend two more
	store := mem.New()
	h := startHarness(t, f, store, store)
	f.mu.Lock()
	f.invalidSessions = 1000
	f.mu.Unlock()
	f.invalidate(0)
	f.waitFor("the IDENTIFYs to stop at the reserve", func() bool {
		return f.StartsLeft == minSessionStartsLeft+1
	})
	// The next IDENTIFY would leave fewer than the reserve: none comes.
	time.Sleep(4 * f.IdentifyWindow)
	f.mu.Lock()
	left := f.StartsLeft
	f.mu.Unlock()
	if left < minSessionStartsLeft+1 {
		t.Errorf("%d session starts left, want %d kept", left, minSessionStartsLeft+1)
	}
	if err := h.a.Connected(); err == nil {
		t.Errorf("the shard is down and the health check says nothing")
	}
	h.allowErrors = append(h.allowErrors, "session starts")
}

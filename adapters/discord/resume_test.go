package discord

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/adapters/internal/chat"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// A press made while the bot was disconnected, replayed by RESUME long after its 3 s window:
// its player has seen "This interaction failed", so it is not applied (no move behind their
// back) and not answered (its token is dead); they press again, and that works.
func TestReplayedStaleInteractionIsNotApplied(t *testing.T) {
	f := newFakeDiscord(t)
	store := mem.New()
	h := startHarness(t, f, store, store)
	id := openTable(t, f, alice, []fakeUser{bob}, opt("timer", 3, "none"), opt("level", 3, "easy"))
	var who seatPlayer
	var view fakeMessage
	f.waitFor("a move", func() bool {
		for _, p := range []seatPlayer{{u: alice}, {u: bob}} {
			if m, ok := f.handViewLocked(p); ok && len(moves(m)) > 0 {
				who, view = p, m
				return true
			}
		}
		return false
	})
	move := moves(view)[0]
	before := len(store.Log(id))

	f.dropConnection(0)
	stale := f.missedWhileDown(who.u, view.ChannelID, buttonData(move.CustomID), &view, 3, 10*time.Second)
	f.waitFor("the RESUME", func() bool { return len(f.resumes) > 0 && f.connected() })
	// Either the adapter skips it (and says so) or it answers, too late.
	f.waitFor("the replayed press to be skipped or answered", func() bool {
		return stale.Late > 0 || stale.Resp != nil || strings.Contains(h.logs.String(), "interaction older than its answer window")
	})
	h.a.Flush(t.Context())

	f.mu.Lock()
	late, answered := stale.Late, stale.Resp != nil
	resumedAt := f.resumes
	f.mu.Unlock()
	if late > 0 || answered {
		t.Errorf("the stale press was answered (%d refused as too late)", late)
	}
	if n := len(store.Log(id)); n != before {
		t.Errorf("the stale press was applied: %d log entries, before %d", n, before)
	}
	if r := f.press(who.u, view, move.CustomID); !applied(r) {
		t.Errorf("pressing again after the reconnect: %+v", r)
	}
	if n := len(store.Log(id)); n != before+1 {
		t.Errorf("%d log entries after pressing again, want %d", n, before+1)
	}
	// discordgo v0.29.0 resumes at the address it first connected to, not resume_gateway_url.
	t.Logf("resumed at %v", resumedAt)
}

// An interaction's age is read from its snowflake against Discord's clock, as the Date headers
// of its answers give it, whatever this machine's wall clock says.
func TestInteractionAgeByDiscordsClock(t *testing.T) {
	// The example of the developer docs (Reference: Snowflakes).
	if at, ok := snowflakeTime("175928847299117063"); !ok || !at.Equal(time.UnixMilli(1462015105796)) {
		t.Errorf("snowflake time %v", at)
	}
	if _, ok := snowflakeTime("dm-bob"); ok {
		t.Errorf("a channel name read as a snowflake")
	}
	var c discordClock
	if c.age(snowflakeAt(time.Now().Add(-time.Hour))) != 0 {
		t.Errorf("an age without any answer from Discord")
	}
	// Discord's clock is an hour ahead of this machine's: its answers say so.
	discord := time.Now().Add(time.Hour)
	c.observe(discord.Add(-400*time.Millisecond).Truncate(time.Second), time.Now()) // an answer cut to its second
	c.observe(discord.Add(-5*time.Second).Truncate(time.Second), time.Now())        // a slower, older one: no better
	if age := c.age(snowflakeAt(discord.Add(-time.Second))); age > time.Second+50*time.Millisecond {
		t.Errorf("an interaction made a second ago by Discord's clock is %v old", age)
	}
	if age := c.age(snowflakeAt(discord.Add(-10 * time.Second))); age <= answerWindow {
		t.Errorf("an interaction made 10 s ago is %v old", age)
	}
}

func snowflakeAt(at time.Time) string {
	return strconv.FormatInt((at.UnixMilli()-discordEpoch)<<22, 10)
}

// TestConnectedFollowsTheGateway: the health check's view is "not yet" before Run, fine while
// every shard is connected, the shard that is not during an outage, and fine again once it has
// resumed.
func TestConnectedFollowsTheGateway(t *testing.T) {
	f := newFakeDiscord(t)
	store := mem.New()
	if err := mustNew(t, Config{Token: f.Token, APIURL: f.srv.URL, KV: store}).Connected(); !errors.Is(err, chat.ErrNotYet) {
		t.Errorf("before Run: %v", err)
	}
	h := startHarness(t, f, store, store)
	h.allowErrors = []string{"error connecting to gateway", "error reconnecting to gateway"} // discordgo's, during the outage
	f.waitFor("the adapter to see the gateway", func() bool { return h.a.Connected() == nil })
	f.mu.Lock()
	f.gatewayDown = true
	f.mu.Unlock()
	f.dropConnection(0)
	f.waitFor("the health check to see the outage", func() bool {
		err := h.a.Connected()
		return err != nil && strings.Contains(err.Error(), "shard 0 of 1 is not connected")
	})
	f.mu.Lock()
	f.gatewayDown = false
	f.mu.Unlock()
	f.waitFor("the resume", func() bool { return h.a.Connected() == nil })
}

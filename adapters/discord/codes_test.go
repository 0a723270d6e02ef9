package discord

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// Discord's refusals that no retry mends, each handled as what it means.

// The server's AutoMod blocks a table message (it names a player whose name is on its list): the
// message is dropped, not tried again as it was, and the one who just acted is told why.
func TestAutoModBlocksATableMessage(t *testing.T) { eachMode(t, testAutoModBlocksATableMessage) }

func testAutoModBlocksATableMessage(t *testing.T, f *fakeDiscord) {
	f.setChannel(fakeChannel{ID: guildChannel, Perms: Permissions, AutoMod: "voldemort"})
	store := mem.New()
	h := startHarness(t, f, store, store)
	vold := fakeUser{ID: "100000000000000031", Name: "Voldemort", Locale: "en-US"}
	f.slash(alice, guildChannel, "new")
	lobby, join := waitLobby(f)
	press := f.pressAsync(vold, lobby, join.CustomID) // the lobby's next version names him
	want := ephemeralText("en", "discord.automod")
	f.waitFor("Voldemort to be told", func() bool { // in the answer, or after it
		for _, id := range append([]string{press.Original}, press.Followups...) {
			if m, ok := f.msgs[id]; ok && m.Interaction == press.ID && m.Content == want && m.Flags&64 != 0 {
				return true
			}
		}
		return false
	})
	h.a.Flush(context.Background())
	if got := f.refusals(guildChannel); len(got) != 1 || got[0] != 200000 {
		t.Errorf("refusals %v, want the one 200000", got)
	}
	if !strings.Contains(h.logs.String(), "AutoMod") {
		t.Errorf("no log line says AutoMod blocked a message")
	}
}

// Blocked while nobody has just acted there: the next one to act in the channel is told, once.
func TestAutoModBlocksAMessageNobodyCaused(t *testing.T) {
	eachMode(t, testAutoModBlocksAMessageNobodyCaused)
}

func testAutoModBlocksAMessageNobodyCaused(t *testing.T, f *fakeDiscord) {
	f.setChannel(fakeChannel{ID: guildChannel, Perms: Permissions, AutoMod: "voldemort"})
	store := mem.New()
	h := startHarness(t, f, store, store)
	h.a.out.Enqueue(&item{Dest: "ch:" + guildChannel, Msg: api.Message{Target: api.Target{Kind: api.ToPlace,
		Place: api.Place{Platform: Platform, Chat: guildChannel}}, Kind: api.KindNotice, Text: "Voldemort's turn"}})
	h.a.Flush(context.Background())
	if got := f.refusals(guildChannel); len(got) != 1 || got[0] != 200000 {
		t.Fatalf("refusals %v, want one 200000", got)
	}
	want := ephemeralText("de", "discord.automod")
	if r := f.slash(bob, guildChannel, "rules"); !strings.HasSuffix(r.Content, want) {
		t.Errorf("the next answer there ends %q, want %q", r.Content[max(len(r.Content)-200, 0):], want)
	}
	if r := f.slash(bob, guildChannel, "rules"); strings.Contains(r.Content, want) {
		t.Errorf("told twice")
	}
}

// Opening DMs too fast (40003): the hands wait and then come, by DM; nobody is taken for someone
// who refuses DMs, and the bot does not ask again and again meanwhile.
func TestDMsOpenedTooFast(t *testing.T) { eachMode(t, testDMsOpenedTooFast) }

func testDMsOpenedTooFast(t *testing.T, f *fakeDiscord) {
	ctx := t.Context()
	f.DMOpenLimit = 1
	store := mem.New()
	startHarness(t, f, store, store, harnessOpt{adapter: func(a *Adapter) { a.dmOpenWait = 300 * time.Millisecond }})
	players := []fakeUser{alice, bob, carla, dan}
	openTable(t, f, alice, players[1:], opt("timer", 3, "none"))
	f.waitFor("a DM channel refused", func() bool { return f.dmOpenRefused > 0 })
	f.mu.Lock()
	f.DMOpenLimit = 0 // a while later Discord lets the bot open DMs again
	f.mu.Unlock()
	f.waitFor("every player's hand in their DMs", func() bool {
		for _, u := range players {
			if _, ok := f.handViewLocked(seatPlayer{u: u}); !ok {
				return false
			}
		}
		return true
	})
	f.mu.Lock()
	refused := f.dmOpenRefused
	f.mu.Unlock()
	if refused > len(players)-1 {
		t.Errorf("%d DM channels refused for %d players: asked again without waiting", refused, len(players))
	}
	for _, u := range players {
		if _, ok, _ := store.Get(ctx, bucketNoDM, u.ID); ok {
			t.Errorf("%s is taken for refusing DMs", u.Name)
		}
	}
}

// A user who shares no server with the bot (50278) cannot get DMs from it: as with closed DMs,
// that is remembered, their table's channel is told once, and the bot stops trying.
func TestNoMutualServer(t *testing.T) { eachMode(t, testNoMutualServer) }

func testNoMutualServer(t *testing.T, f *fakeDiscord) {
	ctx := t.Context()
	f.noMutual[bob.ID] = true
	store := mem.New()
	h := startHarness(t, f, store, store)
	openTable(t, f, alice, []fakeUser{bob}, opt("timer", 3, "none"))
	f.waitFor("the notice about Bob's DMs", func() bool {
		for _, m := range f.channelLocked(guildChannel) {
			if strings.HasPrefix(m.Content, "<@"+bob.ID+">") {
				return true
			}
		}
		return false
	})
	live, hand := liveMessage(f)
	f.press(bob, live, hand.CustomID) // his hand, ephemeral
	h.a.Flush(context.Background())
	f.mu.Lock()
	attempts := f.dmAttempts[bob.ID]
	f.mu.Unlock()
	if _, ok, _ := store.Get(ctx, bucketNoDM, bob.ID); !ok || attempts != 1 {
		t.Errorf("remembered %v, %d DM attempts, want remembered after 1", ok, attempts)
	}
}

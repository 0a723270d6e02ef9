package discord

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kontermatt/kontermatt/core/coach"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// quickCoach keeps the reviews small: a few deals per decision.
var quickCoach = harnessOpt{table: func(c *table.Config) { c.Coach = coach.New(coach.Config{Worlds: 6}) }}

func contents(msgs []fakeMessage) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, m.Content)
	}
	return out
}

func anyContains(texts []string, sub string) bool {
	for _, s := range texts {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// TestCoachInAChannel: /km coach mode:on, then a match in the channel: Alice's reviews arrive in
// her DMs, Carla (coach off) gets none, and the channel never shows one (its texts are checked
// against every card still held, as in every test). /km review asks for one again.
func TestCoachInAChannel(t *testing.T) { eachMode(t, testCoachInAChannel) }

func testCoachInAChannel(t *testing.T, f *fakeDiscord) {
	store := mem.New()
	startHarness(t, f, store, store, quickCoach)
	if r := f.slash(alice, guildChannel, "coach", opt("mode", 3, "on")); r.Flags&64 == 0 || r.Content != i18n.T("en", "coach.on") {
		t.Fatalf("/km coach mode:on answered %+v", r)
	}
	players := []seatPlayer{{u: alice}, {u: carla}}
	openTable(t, f, alice, []fakeUser{carla}, opt("stripes", 4, 2), opt("timer", 3, "none"), opt("level", 3, "easy"))
	playMatch(t, f, players, rand.New(rand.NewPCG(9, 9)))
	f.waitForOr("Alice's review of game 1 in her DMs", func() bool {
		return anyContains(contents(f.channelLocked(f.dms[alice.ID])), "🎓 Review of game 1")
	}, func() string { return strings.Join(contents(f.channelLocked(f.dms[alice.ID])), "\n---\n") })
	if anyContains(contents(f.dm(carla.ID)), "🎓") {
		t.Error("Carla got a review with the coach off")
	}
	if anyContains(contents(f.channel(guildChannel)), "🎓 Review") {
		t.Error("a review was shown in the channel")
	}
	r := f.slash(alice, guildChannel, "review", opt("game", 4, 1))
	if !strings.Contains(r.Content, "🎓 Review of game 1") || r.Flags&64 == 0 {
		t.Errorf("/km review game:1 answered %+v", r)
	}
}

// TestCoachWithClosedDMs: Bob's DMs are closed and his coach is on. His review cannot reach
// him privately, so the channel gets only the neutral pointer (never the review), and
// /km review answers him with it in an ephemeral reply.
func TestCoachWithClosedDMs(t *testing.T) { eachMode(t, testCoachWithClosedDMs) }

func testCoachWithClosedDMs(t *testing.T, f *fakeDiscord) {
	f.blocked[bob.ID] = true
	store := mem.New()
	startHarness(t, f, store, store, quickCoach)
	if r := f.slash(bob, guildChannel, "coach", opt("mode", 3, "on")); r.Content != i18n.T("de", "coach.on") {
		t.Fatalf("/km coach mode:on answered %+v", r)
	}
	openTable(t, f, alice, []fakeUser{bob}, opt("stripes", 4, 1), opt("timer", 3, "none"), opt("level", 3, "easy"))
	playMatch(t, f, []seatPlayer{{u: alice}, {u: bob, noDM: true}}, rand.New(rand.NewPCG(10, 10)))
	pointer := strings.ReplaceAll(i18n.T("de", "review.private"), "/review", "/km review")
	f.waitForOr("the channel's pointer to Bob's private review", func() bool {
		return anyContains(contents(f.channelLocked(guildChannel)), pointer)
	}, func() string { return strings.Join(contents(f.channelLocked(guildChannel)), "\n---\n") })
	title := i18n.T("de", "review.title", 1, 0, 0)[:12] // "🎓 Auswertung …" up to the numbers
	if anyContains(contents(f.channel(guildChannel)), title) {
		t.Error("Bob's review was shown in the channel")
	}
	if r := f.slash(bob, guildChannel, "review"); r.Flags&64 == 0 || !strings.Contains(r.Content, title) {
		t.Errorf("/km review with closed DMs answered %+v", r)
	}
}

// TestLearnInADM: /km learn in a channel points to the DMs; in a DM it deals a guided game there
// whose turns are explained, and /km hint answers.
func TestLearnInADM(t *testing.T) { eachMode(t, testLearnInADM) }

func testLearnInADM(t *testing.T, f *fakeDiscord) {
	store := mem.New()
	startHarness(t, f, store, store, quickCoach)
	if r := f.slash(bob, guildChannel, "learn"); r.Flags&64 == 0 || !strings.Contains(r.Content, "/km learn") {
		t.Errorf("/km learn in a channel answered %+v", r)
	}
	// Bob opens a DM with the bot (Discord makes the channel; the bot learns it from the event).
	f.mu.Lock()
	f.dms[bob.ID], f.dmUser["dm-bob"] = "dm-bob", bob.ID
	f.mu.Unlock()
	if r := f.slash(bob, "dm-bob", "learn"); r.Type != 4 || !strings.HasPrefix(r.Content, i18n.T("de", "learn.welcome.other", 9)[:30]) {
		t.Fatalf("/km learn in a DM answered %+v", r)
	}
	// Explained: naming trump with the tip about /km hint, or a card with the trumps' order.
	order, _, _ := strings.Cut(i18n.T("de", "learn.order", "\x00", ""), "\x00")
	f.waitForOr("a hand to play in the DM, its turn explained", func() bool {
		msgs := f.channelLocked("dm-bob")
		if !anyContains(contents(msgs), "/km hint") && !anyContains(contents(msgs), order) {
			return false
		}
		_, _, ok := lastWith(msgs, api.VerbPlay)
		_, _, trump := lastWith(msgs, api.VerbTrump)
		return ok || trump
	}, func() string { return strings.Join(contents(f.channelLocked("dm-bob")), "\n---\n") })
	if r := f.slash(bob, "dm-bob", "hint"); !strings.HasPrefix(r.Content, "🎓") {
		t.Errorf("/km hint answered %+v", r)
	}
}

package discord

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// A table in a thread that gets archived mid-match: the table message can no longer be edited
// (50083), so the table goes on in a new message, whose posting unarchives the thread.
func TestArchivedThreadGetsANewTableMessage(t *testing.T) {
	eachMode(t, testArchivedThreadGetsANewTableMessage)
}

func testArchivedThreadGetsANewTableMessage(t *testing.T, f *fakeDiscord) {
	f.setChannel(fakeChannel{ID: guildChannel, Thread: true, Perms: Permissions})
	store := mem.New()
	h := startHarness(t, f, store, store)
	openTable(t, f, alice, []fakeUser{bob}, opt("stripes", 4, 1), opt("timer", 3, "none"), opt("level", 3, "easy"))
	first, _ := liveMessage(f)
	f.archive(guildChannel)
	playMatch(t, f, []seatPlayer{{u: alice}, {u: bob}}, rand.New(rand.NewPCG(51, 52)))
	h.a.Flush(context.Background())

	if got := f.refusals(guildChannel); !slices.Equal(got, []int{50083}) {
		t.Errorf("refusals %v, want one 50083 for the first edit after archiving", got)
	}
	f.mu.Lock()
	archived := f.channels[guildChannel].Archived
	f.mu.Unlock()
	if archived {
		t.Errorf("the thread is still archived")
	}
	msgs := f.channel(guildChannel)
	i := slices.IndexFunc(msgs, func(m fakeMessage) bool { return m.ID == first.ID })
	var after []fakeMessage
	for _, m := range msgs[i+1:] {
		if _, ok := findButton(m, api.VerbRematch); ok {
			after = append(after, m)
		}
	}
	if len(after) != 1 || after[0].Edits == 0 {
		t.Errorf("the table did not go on in a new message after the first (%d messages with the end of the match)", len(after))
	}
	if !matchOver(msgs) {
		t.Errorf("the match did not end")
	}
}

// A thread the bot cannot post in, though app_permissions say it may: what the refusal taught
// stands, whatever the next interactions' app_permissions say, so the presses that follow make
// no request Discord refuses (each would count towards the ban for invalid requests), /km new
// says why no table shows instead of ✅, a table there pauses, and the thread is tried again
// only once what was refused may have changed: a post tried after a while, or the thread's own
// metadata.
func TestThreadTheBotCannotPostIn(t *testing.T) {
	const thread = "510000000000000002"
	t.Run("private thread the bot is not in", func(t *testing.T) {
		f, h := harnessWith(t, fakeChannel{ID: thread, Thread: true, Private: true, Perms: Permissions})
		want := ephemeralText("en", "discord.thread_private")
		// Nothing says so before the lobby is refused: "table opened" becomes the reason, and
		// the table nobody can see is closed.
		in := f.dispatch(alice, 2, thread, slashData("new", nil), nil)
		f.waitFor("the answer to /km new to say why no table shows", func() bool {
			m, ok := f.msgs[in.Original]
			return ok && m.Content == want
		})
		f.waitFor("the table nobody sees to be closed", func() bool {
			return h.svc.TableAt(api.Place{Platform: Platform, Chat: thread}) == ""
		})
		for _, u := range []fakeUser{eve, alice} {
			if r := f.slash(u, thread, "new"); r.Content != want {
				t.Errorf("/km new again answered %q, want %q", r.Content, want)
			}
		}
		if got := f.refusals(thread); !slices.Equal(got, []int{50001}) {
			t.Errorf("refusals %v, want the lobby's one 50001", got)
		}
	})
	t.Run("bot removed from a private thread mid-match", func(t *testing.T) {
		f, h := harnessWith(t, fakeChannel{ID: guildChannel, Thread: true, Private: true, Joined: true, Perms: Permissions})
		id := openTable(t, f, alice, []fakeUser{bob}, opt("timer", 3, "none"))
		live, hand := liveMessage(f)
		f.mu.Lock()
		f.channels[guildChannel].Joined = false
		edits := f.msgs[live.ID].Edits
		f.mu.Unlock()
		players := []seatPlayer{{u: alice}, {u: bob}}
		rng := rand.New(rand.NewPCG(61, 62))
		paused := func() bool { return h.svc.Paused(id) }
		// The table message's next edit is refused: the thread is out of the bot's sight, and the
		// table pauses at once; its players are told privately.
		for seq := uint64(0); seq != 0 || !paused(); {
			seq = playUnless(t, f, players, rng, seq, paused)
		}
		toldPrivately(t, f, "note.paused", alice, bob)
		want := ephemeralText("de", "discord.thread_private")
		for range 3 {
			// Bob looks at his hand in the thread: his interaction's app_permissions say all is
			// well; what the refusal taught stands.
			if r := f.press(bob, live, hand.CustomID); !strings.HasSuffix(r.Content, want) {
				t.Errorf("My hand in the thread answered %q, want it to end with %q", r.Content, want)
			}
		}
		h.a.Flush(context.Background())
		if got := f.refusals(guildChannel); !slices.Equal(got, []int{50001}) {
			t.Errorf("refusals %v, want one 50001: every press would add one", got)
		}
		// Someone adds the bot again. No interaction's app_permissions say so: once the refusal
		// is old, the next interaction there tries the thread again; the edit works, the table
		// shows again and goes on.
		f.mu.Lock()
		f.channels[guildChannel].Joined = true
		f.mu.Unlock()
		h.a.usersMu.Lock()
		h.a.permsFresh = time.Nanosecond
		h.a.usersMu.Unlock()
		f.press(bob, live, hand.CustomID)
		f.waitFor("the table message edited again", func() bool { return f.msgs[live.ID].Edits > edits })
		f.waitFor("the table to go on", func() bool { return !h.svc.Paused(id) })
		toldPrivately(t, f, "note.unpaused", alice, bob)
		h.a.Flush(context.Background()) // the adapter has seen the edit work
		h.a.usersMu.Lock()
		h.a.permsFresh = defaultPermsFresh
		h.a.usersMu.Unlock()
		if r := f.press(bob, live, hand.CustomID); strings.Contains(r.Content, want) {
			t.Errorf("after the table showed again, My hand still says %q", r.Content)
		}
	})
	t.Run("locked thread", func(t *testing.T) {
		f, h := harnessWith(t, fakeChannel{ID: thread, Thread: true, Locked: true, Perms: Permissions})
		// The interaction's channel says the thread is locked: no table, nothing tried.
		want := ephemeralText("en", "discord.thread_locked")
		for range 3 {
			if r := f.slash(alice, thread, "new"); r.Content != want {
				t.Errorf("/km new in a locked thread answered %q, want %q", r.Content, want)
			}
		}
		h.a.Flush(context.Background())
		if id := h.svc.TableAt(api.Place{Platform: Platform, Chat: thread}); id != "" || len(f.refusals(thread)) != 0 {
			t.Errorf("table %q opened, refusals %v", id, f.refusals(thread))
		}
		// A moderator unlocks it: the next interaction's channel says so.
		f.mu.Lock()
		f.channels[thread].Locked = false
		f.mu.Unlock()
		if r := f.slash(alice, thread, "new"); r.Content != ephemeralText("en", "note.opened") {
			t.Errorf("/km new after unlocking answered %q", r.Content)
		}
		f.waitFor("the lobby in the thread", func() bool { return len(f.order[thread]) == 1 })
	})
	t.Run("thread locked while nobody looks", func(t *testing.T) {
		f, h := harnessWith(t, fakeChannel{ID: thread, Thread: true, Perms: Permissions})
		f.slash(alice, thread, "new")
		f.waitFor("the lobby in the thread", func() bool { return len(f.order[thread]) == 1 })
		f.mu.Lock()
		f.channels[thread].Locked = true
		f.mu.Unlock()
		// Locked while nobody looks: the next message there is refused, and what that taught
		// stands for the messages after it.
		h.a.out.Enqueue(&item{Dest: "ch:" + thread, Msg: api.Message{Target: api.Target{Kind: api.ToPlace,
			Place: api.Place{Platform: Platform, Chat: thread}}, Kind: api.KindNotice, Text: "a notice"}})
		h.a.Flush(context.Background())
		if got := f.refusals(thread); !slices.Equal(got, []int{160005}) {
			t.Fatalf("refusals %v, want one 160005", got)
		}
		for range 3 {
			if r := f.slash(bob, thread, "board"); !strings.HasSuffix(r.Content, ephemeralText("de", "discord.thread_locked")) {
				t.Errorf("/km board in the locked thread answered %q", r.Content)
			}
		}
		h.a.out.Enqueue(&item{Dest: "ch:" + thread, Msg: api.Message{Target: api.Target{Kind: api.ToPlace,
			Place: api.Place{Platform: Platform, Chat: thread}}, Kind: api.KindNotice, Text: "another notice"}})
		h.a.Flush(context.Background())
		if got := f.refusals(thread); len(got) != 1 {
			t.Errorf("refusals %v: the lock learnt is tried again", got)
		}
	})
}

// harnessWith starts a harness whose fake has the channel c.
func harnessWith(t *testing.T, c fakeChannel) (*fakeDiscord, *harness) {
	t.Helper()
	f := newFakeDiscord(t)
	f.setChannel(c)
	store := mem.New()
	return f, startHarness(t, f, store, store)
}

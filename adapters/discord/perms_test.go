package discord

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/adapters/internal/chat"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// Permissions decide what is sent, not whether the channel lives.

// A channel where the bot may not send messages: /km new says which permission is missing and
// opens no table nobody could see, and the bot tries nothing there.
func TestNoTableWhereTheBotMayNotPost(t *testing.T) {
	const thread = "510000000000000001"
	for _, tc := range []struct {
		name    string
		channel fakeChannel
		missing []int64
	}{
		{"no Send Messages", fakeChannel{ID: guildChannel, Perms: permViewChannel | permAttachFiles | permSendInThreads}, []int64{permSendMessages}},
		{"no View Channel", fakeChannel{ID: guildChannel, Perms: permSendMessages | permAttachFiles}, []int64{permViewChannel}},
		// Send Messages does not count in threads (developer docs, Permissions for Threads).
		{"thread without Send Messages in Threads", fakeChannel{ID: thread, Thread: true, Perms: permViewChannel | permSendMessages | permAttachFiles},
			[]int64{permSendInThreads}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeDiscord(t)
			f.setChannel(tc.channel)
			store := mem.New()
			h := startHarness(t, f, store, store)
			r := f.slash(bob, tc.channel.ID, "new")
			want := ephemeralText("de", "discord.missing", permissionNames("de", tc.missing))
			if r.Type != 4 || r.Flags&64 == 0 || r.Content != want {
				t.Errorf("/km new answered %+v\nwant %q", r, want)
			}
			h.a.Flush(context.Background())
			if id := h.svc.TableAt(api.Place{Platform: Platform, Chat: tc.channel.ID}); id != "" {
				t.Errorf("a table was opened: %s", id)
			}
			if n := f.callCounts()["POST channels/{id}/messages"]; n != 0 || len(f.refusals(tc.channel.ID)) != 0 {
				t.Errorf("%d posts tried, refusals %v", n, f.refusals(tc.channel.ID))
			}
		})
	}
	// With the permission the same command works, in a thread too.
	f := newFakeDiscord(t)
	f.setChannel(fakeChannel{ID: thread, Thread: true, Perms: Permissions})
	store := mem.New()
	startHarness(t, f, store, store)
	if r := f.slash(alice, thread, "new"); r.Content != ephemeralText("en", "note.opened") {
		t.Errorf("/km new in a thread with every permission: %+v", r)
	}
	f.waitFor("the lobby in the thread", func() bool { return len(f.order[thread]) == 1 })
}

// A channel without Attach Files plays as any other; the board comes as text, the one who opens
// the table is told which permission would add pictures, and nothing is refused.
func TestChannelWithoutAttachFiles(t *testing.T) { eachMode(t, testChannelWithoutAttachFiles) }

func testChannelWithoutAttachFiles(t *testing.T, f *fakeDiscord) {
	f.setPerms(guildChannel, Permissions&^permAttachFiles)
	store := mem.New()
	h := startHarness(t, f, store, store)
	r := f.slash(alice, guildChannel, "new", opt("stripes", 4, 1), opt("timer", 3, "none"), opt("level", 3, "easy"))
	want := ephemeralText("en", "note.opened") + "\n\n" + ephemeralText("en", "discord.no_pictures", permissionNames("en", []int64{permAttachFiles}))
	if r.Content != want {
		t.Errorf("/km new answered %q\nwant %q", r.Content, want)
	}
	lobby, join := waitLobby(f)
	f.press(carla, lobby, join.CustomID)
	lobby, deal := waitButton(f, "the deal button", api.VerbDeal)
	f.press(alice, lobby, deal.CustomID)
	playMatch(t, f, []seatPlayer{{u: alice}, {u: carla}}, rand.New(rand.NewPCG(21, 22)))
	h.a.Flush(context.Background())
	summaries := 0
	for _, m := range f.channel(guildChannel) {
		if m.Files > 0 {
			t.Errorf("a picture in a channel without Attach Files: %q", m.Content)
		}
		if strings.Contains(m.Content, "(0)") { // a team's stripes, as the board's text shows them
			summaries++
		}
	}
	if summaries == 0 {
		t.Errorf("no summary with the board as text")
	}
	if got := f.refusals(guildChannel); len(got) != 0 {
		t.Errorf("requests refused: %v", got)
	}
	// The answers degrade as the posts do, decided from the interaction's app_permissions, so
	// none is refused: the board as text, a kept match's board by its alt text, its record said
	// to be impossible here.
	in := f.dispatch(carla, 2, guildChannel, slashData("board", nil), nil)
	r = answerOrRefusal(t, f, in)
	if r.Type != 4 || r.Files != 0 || !strings.Contains(r.Content, "(0)") {
		t.Errorf("/km board answered %+v", r)
	}
	f.slash(alice, guildChannel, "league history")
	var hist fakeMessage
	for _, m := range f.ephemerals(alice.ID) {
		if len(m.Rows) > 0 {
			hist = m
		}
	}
	if len(hist.Rows) == 0 {
		t.Fatalf("/km league history showed no match")
	}
	board := answerOrRefusal(t, f, f.pressAsync(alice, hist, hist.Rows[0].Components[0].CustomID))
	if board.Files != 0 || !strings.Contains(board.Content, ephemeralText("en", "pic.Title")+". ") {
		t.Errorf("a kept match's board answered %+v, want its alt text", board)
	}
	rec := answerOrRefusal(t, f, f.pressAsync(alice, hist, hist.Rows[0].Components[1].CustomID))
	if want := ephemeralText("en", "discord.no_file", permissionNames("en", []int64{permAttachFiles})); rec.Files != 0 ||
		!strings.Contains(rec.Content, want) {
		t.Errorf("a kept match's record answered %+v, want %q", rec, want)
	}
}

// The same when the answer is late: the deferred answer's edit and a button's follow-up carry no
// file where app_permissions lack Attach Files.
func TestLateAnswersWithoutAttachFiles(t *testing.T) { eachMode(t, testLateAnswersWithoutAttachFiles) }

func testLateAnswersWithoutAttachFiles(t *testing.T, f *fakeDiscord) {
	f.setPerms(guildChannel, Permissions&^permAttachFiles)
	store := mem.New()
	startHarness(t, f, store, store, harnessOpt{
		cfg:  func(c *Config) { c.AckAfter = 30 * time.Millisecond },
		wrap: func(h chat.Service) chat.Service { return slowHandler{h, 150 * time.Millisecond} },
	})
	f.response(f.dispatch(alice, 2, guildChannel, slashData("new", nil), nil))
	in := f.dispatch(alice, 2, guildChannel, slashData("board", nil), nil)
	if r := f.response(in); r.Type != 5 {
		t.Fatalf("slow /km board: first answer %+v, want deferred", r)
	}
	f.waitFor("the board in the deferred answer, or its refusal", func() bool {
		return len(in.Refused) > 0 || strings.Contains(f.msgs[in.Original].Content, ephemeralText("en", "board.title"))
	})
	f.mu.Lock()
	defer f.mu.Unlock()
	if m := f.msgs[in.Original]; len(in.Refused) > 0 || m.Files != 0 {
		t.Errorf("the deferred board: refusals %v, %d files", in.Refused, m.Files)
	}
}

// answerOrRefusal waits for the interaction's answer, failing if Discord refused it.
func answerOrRefusal(t *testing.T, f *fakeDiscord, in *fakeInteraction) fakeResponse {
	t.Helper()
	f.waitFor("an answer or a refusal", func() bool { return in.Resp != nil || len(in.Refused) > 0 })
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(in.Refused) > 0 {
		t.Errorf("answer refused: %v (the player sees \"This interaction failed\")", in.Refused)
		return fakeResponse{}
	}
	return *in.Resp
}

// An admin takes permissions away during a match: the first refusal of a kind of message
// degrades that kind only. Without Attach Files the summaries go as text, after one refusal;
// without Send Messages the table message is still edited (an edit needs no Send Messages) and
// the players asking in the channel are told what is missing.
func TestPermissionsTakenAwayMidMatch(t *testing.T) { eachMode(t, testPermissionsTakenAwayMidMatch) }

func testPermissionsTakenAwayMidMatch(t *testing.T, f *fakeDiscord) {
	store := mem.New()
	h := startHarness(t, f, store, store)
	openTable(t, f, alice, []fakeUser{carla}, opt("timer", 3, "none"), opt("level", 3, "easy"))
	liveMessage(f)
	f.setPerms(guildChannel, Permissions&^permAttachFiles)
	rng := rand.New(rand.NewPCG(31, 32))
	players := []seatPlayer{{u: alice}, {u: carla}}
	// Up to the first game's summary: the first message without buttons that shows the board.
	summary := func() (fakeMessage, bool) {
		for _, m := range f.channel(guildChannel) {
			if len(m.Rows) == 0 && strings.Contains(m.Content, "\\|") {
				return m, true
			}
		}
		return fakeMessage{}, false
	}
	var seq uint64
	for {
		if _, ok := summary(); ok {
			break
		}
		seq = playOne(t, f, players, rng, seq)
	}
	h.a.Flush(context.Background())
	if got := f.refusals(guildChannel); !slices.Equal(got, []int{50013}) {
		t.Fatalf("refusals %v, want one 50013, for the first picture", got)
	}
	if m, _ := summary(); m.Files != 0 {
		t.Errorf("the summary after the refusal has a picture: %+v", m)
	}

	f.setPerms(guildChannel, permViewChannel)
	live, hand := liveMessage(f)
	for range 3 {
		seq = playOne(t, f, players, rng, seq)
	}
	h.a.Flush(context.Background())
	f.mu.Lock()
	edited := f.msgs[live.ID].Edits > live.Edits
	f.mu.Unlock()
	if !edited {
		t.Errorf("the table message was not edited without Send Messages")
	}
	if got := f.refusals(guildChannel); len(got) > 2 {
		t.Errorf("refusals %v: a lack learned is tried again and again", got)
	}
	r := f.press(carla, live, hand.CustomID)
	if want := ephemeralText("fr", "discord.missing", permissionNames("fr", []int64{permSendMessages})); !strings.HasSuffix(r.Content, want) {
		t.Errorf("My hand in a channel without Send Messages answered %q, want it to end with %q", r.Content, want)
	}
}

// playOne makes the next move of whoever has one, after seq, and gives its sequence number.
func playOne(t *testing.T, f *fakeDiscord, players []seatPlayer, rng *rand.Rand, seq uint64) uint64 {
	t.Helper()
	var who seatPlayer
	var view fakeMessage
	f.waitFor("a move", func() bool {
		for _, p := range players {
			if m, ok := f.handViewLocked(p); ok && len(moves(m)) > 0 && actionOf(moves(m)[0]).Seq > seq {
				who, view = p, m
				return true
			}
		}
		return false
	})
	mv := moves(view)
	b := mv[rng.IntN(len(mv))]
	if r := f.press(who.u, view, b.CustomID); !applied(r) {
		t.Fatalf("move: %+v", r)
	}
	return actionOf(b).Seq
}

// A channel that loses only Send Messages keeps its table by editing the message it has — an
// edit needs no Send Messages (a Discord engineer, discord-api-docs#3096) — and pauses when a
// new message is needed (the game's summary): its messages wait, the computers stop, and the
// players are told privately. Carla looks at her hand in the channel: its app_permissions show
// what is missing, so the new message is not even tried. With the permission back, the next
// interaction there shows it: the summary goes out and play resumes.
func TestSendMessagesTakenAwayPausesAtANewMessage(t *testing.T) {
	f, h, id, live, hand := aliceAndCarla(t)
	posted := len(f.channel(guildChannel))
	f.setPerms(guildChannel, permViewChannel|permAttachFiles)
	want := ephemeralText("fr", "discord.missing", permissionNames("fr", []int64{permSendMessages}))
	if r := f.press(carla, live, hand.CustomID); !strings.HasSuffix(r.Content, want) {
		t.Errorf("My hand in a channel without Send Messages answered %q, want it to end with %q", r.Content, want)
	}
	players := []seatPlayer{{u: alice}, {u: carla}}
	rng := rand.New(rand.NewPCG(71, 72))
	paused := func() bool { return h.svc.Paused(id) }
	moves := 0
	for seq := uint64(0); ; moves++ {
		if seq = playUnless(t, f, players, rng, seq, paused); seq == 0 {
			break
		}
	}
	h.a.Flush(context.Background())
	f.mu.Lock()
	edits := f.msgs[live.ID].Edits - live.Edits
	f.mu.Unlock()
	if moves == 0 || edits == 0 {
		t.Errorf("%d moves, %d edits of the table message before the pause: the table did not go on by editing", moves, edits)
	}
	if n := len(f.channel(guildChannel)); n != posted {
		t.Errorf("%d new messages in a channel without Send Messages", n-posted)
	}
	if got := f.refusals(guildChannel); len(got) > 0 {
		t.Errorf("refusals %v: what app_permissions said is lacking was tried", got)
	}
	toldPrivately(t, f, "note.paused", alice, carla)

	f.setPerms(guildChannel, Permissions)
	f.press(carla, live, hand.CustomID) // its app_permissions show Send Messages is back
	f.waitFor("the table to go on", func() bool { return !h.svc.Paused(id) })
	f.waitFor("the message that waited", func() bool { return len(f.channelLocked(guildChannel)) > posted })
	toldPrivately(t, f, "note.unpaused", alice, carla)
}

// A channel that loses View Channel pauses at once: nothing there can be seen, not even the
// table message's edits. The players are told privately, nothing is tried again while the
// refusal stands, and the next interaction that shows the permission back resumes play.
func TestViewChannelTakenAwayPausesAtOnce(t *testing.T) {
	f, h, id, live, hand := aliceAndCarla(t)
	f.mu.Lock()
	edits := f.msgs[live.ID].Edits
	f.mu.Unlock()
	f.setPerms(guildChannel, Permissions&^permViewChannel)
	players := []seatPlayer{{u: alice}, {u: carla}}
	rng := rand.New(rand.NewPCG(73, 74))
	paused := func() bool { return h.svc.Paused(id) }
	for seq := uint64(0); seq != 0 || !paused(); {
		seq = playUnless(t, f, players, rng, seq, paused)
	}
	h.a.Flush(context.Background())
	f.mu.Lock()
	edited := f.msgs[live.ID].Edits - edits
	f.mu.Unlock()
	if edited > 0 {
		t.Errorf("the table message was edited %d times after View Channel was taken away", edited)
	}
	toldPrivately(t, f, "note.paused", alice, carla)
	for range 3 {
		want := ephemeralText("fr", "discord.missing", permissionNames("fr", []int64{permViewChannel}))
		if r := f.press(carla, live, hand.CustomID); !strings.HasSuffix(r.Content, want) {
			t.Errorf("My hand in a channel out of the bot's sight answered %q, want it to end with %q", r.Content, want)
		}
	}
	h.a.Flush(context.Background())
	if got := f.refusals(guildChannel); len(got) > 1 {
		t.Errorf("refusals %v: a channel out of sight is tried again and again", got)
	}

	f.setPerms(guildChannel, Permissions)
	f.press(carla, live, hand.CustomID)
	f.waitFor("the table to go on", func() bool { return !h.svc.Paused(id) })
	f.waitFor("the table message edited again", func() bool { return f.msgs[live.ID].Edits > edits })
	toldPrivately(t, f, "note.unpaused", alice, carla)
}

// aliceAndCarla deals a table to Alice, Carla and two computers, and gives the harness, the
// table and its live message with the "My hand" button.
func aliceAndCarla(t *testing.T) (*fakeDiscord, *harness, string, fakeMessage, fakeButton) {
	f := newFakeDiscord(t)
	store := mem.New()
	h := startHarness(t, f, store, store)
	id := openTable(t, f, alice, []fakeUser{carla}, opt("timer", 3, "none"), opt("level", 3, "easy"))
	live, hand := liveMessage(f)
	return f, h, id, live, hand
}

// playUnless makes the next move of whoever has one, after seq, and gives its sequence number;
// 0 if stop comes first.
func playUnless(t *testing.T, f *fakeDiscord, players []seatPlayer, rng *rand.Rand, seq uint64, stop func() bool) uint64 {
	t.Helper()
	var who seatPlayer
	var view fakeMessage
	stopped := false
	f.waitFor("a move", func() bool {
		if stop() {
			stopped = true
			return true
		}
		for _, p := range players {
			if m, ok := f.handViewLocked(p); ok && len(moves(m)) > 0 && actionOf(moves(m)[0]).Seq > seq {
				who, view = p, m
				return true
			}
		}
		return false
	})
	if stopped {
		return 0
	}
	mv := moves(view)
	b := mv[rng.IntN(len(mv))]
	if r := f.press(who.u, view, b.CustomID); !applied(r) {
		t.Fatalf("move: %+v", r)
	}
	return actionOf(b).Seq
}

// toldPrivately checks that each user got the notice by DM, in their language, once.
func toldPrivately(t *testing.T, f *fakeDiscord, key string, users ...fakeUser) {
	t.Helper()
	for _, u := range users {
		want := escape(i18n.T(i18n.Pick(u.Locale), key))
		f.waitFor(u.Name+" to be told "+key, func() bool {
			return slices.ContainsFunc(f.channelLocked(f.dms[u.ID]), func(m fakeMessage) bool { return strings.Contains(m.Content, want) })
		})
		n := 0
		for _, m := range f.dm(u.ID) {
			if strings.Contains(m.Content, want) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s was told %s %d times, want once", u.Name, key, n)
		}
	}
}

package telegram

import (
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// Removed or banned from a group: its tables close (the match so far is kept), the players see
// it in their private chats, and nothing more goes to the group, not even a retry. The bot
// learns it from my_chat_member, or from a send refused with 403 when that update is missing.
func TestRemovedFromGroup(t *testing.T) {
	ctx := t.Context()
	for _, tc := range []struct {
		name string
		tell bool
	}{{"my_chat_member", true}, {"refused send", false}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				humans := []tgUser{alice, bob}
				f, store, logs, e := startedEnv(t, humans...)
				seatAll(t, f, "timer=fast", humans...)
				tableID := tableOf(t, f)
				d := newDriver(t, f, 31)
				d.playUntil(humans, time.Hour, func() bool { return d.moves >= 3 })
				if tc.tell {
					f.removeBot(group, olga, true)
				} else {
					f.mu.Lock()
					f.left[group] = true // removed, the update lost
					f.mu.Unlock()
					// Until a send is refused: the table closes then, whatever the deal made of the
					// moves so far.
					d.playUntil(humans, time.Hour, func() bool {
						_, open := e.svc.Status(tableID)
						return d.moves >= 5 || !open
					})
				}
				settle(time.Second)
				known := len(f.Calls())
				if !tc.tell {
					// The next group message may wait for the group's budget (one every 3.5 s
					// after the first three): a minute at most.
					refused := func() int {
						return slices.IndexFunc(f.Calls(), func(c call) bool { return c.Chat == group && c.Err == errKicked }) + 1
					}
					for deadline := time.Now().Add(time.Minute); refused() == 0 && time.Now().Before(deadline); {
						settle(time.Second)
					}
					known = refused()
					if known == 0 {
						t.Fatal("no send was refused: the test needs one")
					}
				}
				settle(time.Hour)
				if st, ok := e.svc.Status(tableID); ok {
					t.Errorf("the removed group's table is %s", st)
				}
				for _, c := range f.Calls()[known:] {
					if c.Chat == group {
						t.Errorf("%s to the group after the bot was removed", c.Method)
					}
				}
				records := 0
				store.Records(ctx, func(string, []byte) error { records++; return nil })
				if records != 1 {
					t.Errorf("%d match records, want the match so far", records)
				}
				for _, u := range humans {
					hand, _ := lastHand(f, u.ID)
					if !strings.Contains(hand.Text, i18n.T("en", "live.closed")) || len(hand.buttons()) > 0 {
						t.Errorf("%s's private hand does not say the table closed:\n%s", u.First, hand.Text)
					}
				}
				// Added again: a welcome, and a new table can be opened.
				f.addBot(group, olga)
				settle(5 * time.Second)
				if _, _, ok := lastWith(f, group, api.VerbNew, ""); !ok {
					t.Error("no welcome when the bot was added again")
				}
				e.close()
				checkClean(t, f, logs)
			})
		})
	}
}

// lastHand is the newest message in a user's private chat that looks like a hand.
func lastHand(f *fakeAPI, user int64) (fmsg, bool) {
	ms := f.messages(user)
	prefix := strings.SplitN(i18n.T("en", "hand.title", 1), " ", 2)[0]
	for i := len(ms) - 1; i >= 0; i-- {
		if strings.Contains(ms[i].Text, prefix) {
			return ms[i], true
		}
	}
	return fmsg{}, false
}

// byItself lists a table's commands that nobody sent: computer moves and timeouts.
func byItself(store *mem.Store, tableID string, from int) []table.LogEntry {
	var out []table.LogEntry
	for _, l := range store.Log(tableID)[from:] {
		if strings.HasPrefix(l.Actor, "robot:") || l.Verb == api.VerbTimeout {
			out = append(out, l)
		}
	}
	return out
}

// No right to post in the group any more: its messages wait, the table pauses (no computer
// moves, no timeouts), the players are told privately once, and the API is not hammered. When
// the rights come back the waiting messages go out, the table goes on and the match finishes.
func TestNoRightToPostPausesTheTable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		humans := []tgUser{alice, bob}
		f, store, logs, e := startedEnv(t, humans...)
		seatAll(t, f, "timer=fast", humans...)
		tableID := tableOf(t, f)
		d := newDriver(t, f, 41)
		d.playUntil(humans, time.Hour, func() bool { return d.moves >= 3 })
		settle(time.Minute)
		f.restrict(group, olga, rights{}, false) // the update comes later, if at all
		moves := d.moves
		d.playUntil(humans, time.Hour, func() bool { return d.moves >= moves+1 || e.svc.Paused(tableID) })
		settle(5 * time.Second)
		if !e.svc.Paused(tableID) {
			t.Fatal("the table is not paused while the group refuses the bot")
		}
		from := len(store.Log(tableID))
		settle(2 * time.Hour)
		if got := byItself(store, tableID, from); len(got) > 0 {
			t.Errorf("the paused table moved by itself %d times: %+v", len(got), got[0])
		}
		_, failed := countCalls(f.Calls(), "editMessageText", group)
		_, failedSends := countCalls(f.Calls(), "sendMessage", group)
		if failed+failedSends > 3 {
			t.Errorf("%d refused calls to the group: the API was hammered", failed+failedSends)
		}
		for _, u := range humans {
			n := 0
			for _, m := range f.messages(u.ID) {
				if strings.Contains(m.Text, i18n.T("en", "note.paused")) {
					n++
				}
			}
			if n != 1 {
				t.Errorf("%s was told %d times that the table pauses, want once", u.First, n)
			}
		}

		f.unrestrict(group, olga)
		settle(10 * time.Second)
		if e.svc.Paused(tableID) {
			t.Fatal("the table is still paused with the rights back")
		}
		for _, u := range humans {
			var told bool
			for _, m := range f.messages(u.ID) {
				told = told || strings.Contains(m.Text, i18n.T("en", "note.unpaused"))
			}
			if !told {
				t.Errorf("%s was not told the table goes on", u.First)
			}
		}
		d.playUntil(humans, 3*time.Hour, func() bool { return over(f) })
		e.close()
		checkClean(t, f, logs)
	})
}

// A closed forum topic pauses only its own table; the group's other topics go on. Reopening it
// posts a service message there, and the table resumes.
func TestClosedTopic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, store, logs, e := startedEnv(t, alice)
		f.command(alice, group, 77, "/new@"+botUsername+" timer=fast")
		settle(10 * time.Second) // both lobbies: the group's messages go one every 3 s

		mustPress(t, f, alice, group, api.VerbDeal, "")
		settle(time.Minute)
		topicTable := e.svc.TableAt(placeOf(group, 77))
		f.closeTopic(group, 77, true, olga)
		d := newDriver(t, f, 51)
		d.playUntil([]tgUser{alice}, time.Hour, func() bool { return e.svc.Paused(topicTable) })
		from := len(store.Log(topicTable))

		f.command(bob, group, 0, "/new@"+botUsername)
		settle(10 * time.Second)
		general := e.svc.TableAt(placeOf(group, 0))
		if general == "" || e.svc.Paused(general) {
			t.Fatalf("the general topic's table: %q, paused %v", general, e.svc.Paused(general))
		}
		if _, _, ok := lastWith(f, group, api.VerbJoin, ""); !ok {
			t.Error("the general topic's lobby was not posted while another topic was closed")
		}
		settle(time.Hour)
		if got := byItself(store, topicTable, from); len(got) > 0 {
			t.Errorf("the closed topic's table moved by itself %d times", len(got))
		}

		f.closeTopic(group, 77, false, olga)
		settle(10 * time.Second)
		if e.svc.Paused(topicTable) {
			t.Error("the table is still paused after its topic reopened")
		}
		e.close()
		checkClean(t, f, logs)
	})
}

// A group that takes text but not photos from the bot gets a picture's text, and is not asked
// to take a photo again.
func TestNoRightToSendPhotos(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, _, logs, e := startedEnv(t, alice)
		f.command(alice, group, 0, "/new@"+botUsername)
		settle(3 * time.Second)
		f.restrict(group, olga, rights{text: true}, false)
		for range 2 {
			f.command(alice, group, 0, "/board")
			settle(5 * time.Second)
		}
		ok, failed := countCalls(f.Calls(), "sendPhoto", group)
		if ok != 0 || failed != 1 {
			t.Errorf("sendPhoto: %d sent, %d refused; want one refusal", ok, failed)
		}
		boards := 0
		for _, m := range f.messages(group) {
			if strings.Contains(m.Text, i18n.T("en", "board.title")) && !m.Photo {
				boards++
			}
		}
		if boards != 2 {
			t.Errorf("%d boards as text, want 2", boards)
		}
		e.close()
		checkClean(t, f, logs)
	})
}

// Telegram deletes a message only within 48 hours: an older hand that makes room for the hand
// asked for loses its buttons instead, so only one set of live buttons is left.
func TestOldMessageLosesItsButtons(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, _, logs, e := startedEnv(t, alice)
		seatAll(t, f, "timer=none", alice)
		settle(5 * time.Second)
		old, ok := handMessage(f, alice.ID)
		if !ok {
			t.Fatal("no hand for Alice")
		}
		time.Sleep(49 * time.Hour)
		f.command(alice, group, 0, "/hand") // brings the hand anew to her private chat
		settle(5 * time.Second)
		now, _ := handMessage(f, alice.ID)
		if now.ID == old.ID {
			t.Fatal("/hand did not bring the hand to the bottom")
		}
		var was fmsg
		for _, m := range f.messages(alice.ID) {
			if m.ID == old.ID {
				was = m
			}
		}
		if was.ID == 0 {
			t.Fatal("the old hand was deleted after 48 hours: the fake is not strict")
		}
		if len(was.buttons()) > 0 {
			t.Errorf("the old hand kept %d buttons", len(was.buttons()))
		}
		if _, failed := countCalls(f.Calls(), "deleteMessage", alice.ID); failed != 1 {
			t.Errorf("%d refused deletes", failed)
		}
		e.close()
		checkClean(t, f, logs)
	})
}

// A deleted forum topic takes nothing any more ("message thread not found") and never comes
// back: its table closes, as for a group the bot was removed from (the match so far is kept, its
// players learn it privately), nothing more goes to the topic, and the group's other topics go
// on.
func TestDeletedTopic(t *testing.T) {
	ctx := t.Context()
	synctest.Test(t, func(t *testing.T) {
		f, store, logs, e := startedEnv(t, alice, bob)
		f.command(bob, group, 0, "/new@"+botUsername)
		f.command(alice, group, 77, "/new@"+botUsername+" timer=fast")
		settle(10 * time.Second) // both lobbies: the group's messages go one every 3 s

		for _, m := range f.messages(group) {
			if m.Thread == 77 && len(m.buttons()) > 0 {
				f.press(alice, &m, mustData(t, m, api.VerbDeal))
			}
		}
		settle(3 * time.Second)
		topicTable, general := e.svc.TableAt(placeOf(group, 77)), e.svc.TableAt(placeOf(group, 0))
		d := newDriver(t, f, 57)
		d.playUntil([]tgUser{alice}, time.Hour, func() bool { return d.moves >= 2 })
		f.deleteTopic(group, 77)
		d.playUntil([]tgUser{alice}, time.Hour, func() bool {
			_, open := e.svc.Status(topicTable)
			return !open
		})
		settle(time.Minute)
		if st, ok := e.svc.Status(general); !ok || st != api.StatusLobby {
			t.Errorf("the general topic's table is %s", st)
		}
		known := slices.IndexFunc(f.Calls(), func(c call) bool { return c.Err == errNoThread })
		if known < 0 {
			t.Fatal("nothing was sent to the deleted topic: the test needs a refusal")
		}
		settle(time.Hour)
		for _, c := range f.Calls()[known+1:] {
			if c.Chat == group && c.Params["message_thread_id"] == "77" {
				t.Errorf("%s to the deleted topic after it was refused (%s)", c.Method, c.Err)
			}
		}
		hand, _ := lastHand(f, alice.ID)
		if !strings.Contains(hand.Text, i18n.T("en", "live.closed")) || len(hand.buttons()) > 0 {
			t.Errorf("Alice's private hand does not say the table closed:\n%s", hand.Text)
		}
		records := 0
		store.Records(ctx, func(string, []byte) error { records++; return nil })
		if records != 1 {
			t.Errorf("%d match records, want the match so far", records)
		}
		e.close()
		checkClean(t, f, logs)
	})
}

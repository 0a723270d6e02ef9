package telegram

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// A basic group and the supergroup it becomes.
const (
	basicGroup int64 = -424242
	superGroup int64 = -1004242424242
)

// A group upgraded to a supergroup in the middle of a game: the table follows it, the match
// finishes in the supergroup, and nothing goes to the old ID once the bot knows. It learns from
// the service messages both chats get, or, should those come late, from the first send refused
// with migrate_to_chat_id.
func TestGroupBecomesSupergroup(t *testing.T) {
	for _, tc := range []struct {
		name string
		tell bool
	}{{"service messages", true}, {"refused send", false}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				humans := []tgUser{alice, bob}
				f, store, logs, e := startedEnv(t, humans...)
				seatAllIn(t, f, basicGroup, "timer=fast stripes=3", humans...)
				tableID := tableIn(t, f, basicGroup)
				d := newDriver(t, f, 21)
				d.playUntil(humans, time.Hour, func() bool { return d.moves >= 4 })
				settle(time.Minute) // the group's table message is out
				oldLive, _, ok := lastWith(f, basicGroup, api.VerbBoard, "")
				if !ok {
					t.Fatalf("no table message: %+v", f.messages(basicGroup))
				}

				f.upgrade(basicGroup, superGroup, alice, tc.tell)
				if tc.tell {
					settle(time.Second) // the service messages are handled
				} else {
					moves := d.moves
					d.playUntil(humans, time.Hour, func() bool { return d.moves >= moves+2 })
				}
				known := -1 // the call after which the bot knows
				for i, c := range f.Calls() {
					if c.Chat == basicGroup && strings.Contains(c.Err, "upgraded") && known < 0 {
						known = i
					}
				}
				if tc.tell {
					known = len(f.Calls()) - 1
				}
				if known < 0 {
					t.Fatal("no send was refused: the test needs one to learn from")
				}

				// A press on a message from before the upgrade counts for the supergroup's table.
				id := f.press(bob, &oldLive, mustData(t, oldLive, api.VerbBoard))
				if text, _ := answerOf(t, f, id); text == i18n.T("en", "err.other_place") || text == i18n.T("en", "err.no_table") {
					t.Errorf("a press on the old group's message: %q", text)
				}
				// Should Telegram also say the bot joined the supergroup (the docs do not say), the
				// table it brought needs no welcome.
				f.memberUpdate(superGroup, alice, status("left"), status("member"))
				d.playUntil(humans, 3*time.Hour, func() bool { return overIn(f, superGroup) })
				if _, _, ok := lastWith(f, superGroup, api.VerbNew, ""); ok {
					t.Error("the supergroup got a welcome though it has its table")
				}
				settle(2 * time.Minute) // the last messages within the group's 20 a minute

				for _, c := range f.Calls()[known+1:] {
					if c.Chat == basicGroup {
						t.Errorf("%s to the old group after the bot knew of the upgrade (%s)", c.Method, c.Err)
					}
				}
				if got := e.svc.TableAt(placeOf(superGroup, 0)); got != tableID {
					t.Errorf("the supergroup's table is %q, want %q", got, tableID)
				}
				if got := e.svc.TableAt(placeOf(basicGroup, 0)); got != "" {
					t.Errorf("the old group still has table %q", got)
				}
				var summary bool
				for _, m := range f.messages(superGroup) {
					summary = summary || strings.HasPrefix(m.Text, "🏆")
				}
				if !summary {
					t.Error("no match summary in the supergroup")
				}
				e.close()

				// A restart knows it too: nothing goes to the old group.
				n := len(f.Calls())
				e = startEnv(t, f, store, logs)
				settle(10 * time.Second)
				for _, c := range f.Calls()[n:] {
					if c.Chat == basicGroup {
						t.Errorf("after a restart, %s to the old group", c.Method)
					}
				}
				e.close()
				checkClean(t, f, logs)
			})
		})
	}
}

// mustData gives the data of a message's button of verb.
func mustData(t testing.TB, m fmsg, verb api.Verb) string {
	t.Helper()
	for _, b := range m.buttons() {
		if act, err := api.ParseAction(b[1]); err == nil && act.Verb == verb {
			return b[1]
		}
	}
	t.Fatalf("no %s button on %q", verb, m.Text)
	return ""
}

// The group's budget of 20 messages a minute follows it into the supergroup it becomes: the same
// people's chat, where its table is published anew at once. A busy minute in the group, the
// upgrade, and more in the supergroup make no more than 20 messages in any 60 seconds to the two
// together, and nothing is lost.
func TestBudgetFollowsTheUpgrade(t *testing.T) {
	for _, tc := range []struct {
		name string
		tell bool
	}{{"service messages", true}, {"refused send", false}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f, _, logs, e := startedEnv(t, alice)
				f.command(alice, basicGroup, 0, "/new@"+botUsername)
				settle(2 * time.Minute)
				for range 15 {
					f.command(alice, basicGroup, 0, "/rules@"+botUsername)
				}
				settle(20 * time.Second)
				f.upgrade(basicGroup, superGroup, alice, tc.tell)
				for range 10 {
					f.command(alice, superGroup, 0, "/rules@"+botUsername)
				}
				settle(5 * time.Minute)
				n := f.maxPerMinute(basicGroup, superGroup)
				t.Logf("most messages in any 60 s to the group and the supergroup together: %d (limit 20)", n)
				if n > 20 {
					t.Errorf("%d messages in 60 s to the group and the supergroup it became, limit 20", n)
				}
				rules := 0
				for _, c := range []int64{basicGroup, superGroup} {
					for _, m := range f.messages(c) {
						if m.ReplyTo != 0 {
							rules++
						}
					}
				}
				if rules != 25 {
					t.Errorf("%d of the 25 answers to /rules arrived (the /new's is its lobby, no reply)", rules)
				}
				e.close()
				checkClean(t, f, logs)
			})
		})
	}
}

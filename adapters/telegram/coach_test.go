package telegram

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kontermatt/kontermatt/core/i18n"
)

// texts gives every text the bot wrote in a chat, in order.
func texts(f *fakeAPI, chat int64) []string {
	var out []string
	for _, m := range f.messages(chat) {
		out = append(out, m.Text)
	}
	return out
}

func anyHas(texts []string, sub string) bool {
	for _, t := range texts {
		if strings.Contains(t, sub) {
			return true
		}
	}
	return false
}

// TestCoachInAGroup: Alice switches the coach on in her private chat; after the first game of a
// group's match her review arrives there, Bob (coach off) gets none, and the group sees no review
// (the group's texts are checked against every card still held, as in every test). Bob's /review
// typed in the group is answered privately.
func TestCoachInAGroup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		humans := []tgUser{alice, bob}
		f, _, logs, e := startedEnv(t, humans...)
		f.command(alice, alice.ID, 0, "/coach on")
		settle(3 * time.Second)
		if got := newest(f, alice.ID).Text; got != i18n.T("en", "coach.on") {
			t.Fatalf("/coach on answered %q", got)
		}
		seatAll(t, f, "timer=fast stripes=3", humans...)
		d := newDriver(t, f, 6)
		reviewed := func() bool { return anyHas(texts(f, alice.ID), "🎓 Review of game 1") }
		d.playUntil(humans, 2*time.Hour, reviewed)
		if !reviewed() {
			t.Fatalf("no review in Alice's private chat after the first game:\n%s", strings.Join(texts(f, alice.ID), "\n---\n"))
		}
		if anyHas(texts(f, bob.ID), "🎓 Review") {
			t.Error("Bob got a review with the coach off")
		}
		if anyHas(texts(f, group), "🎓 Review") {
			t.Error("a review was shown in the group")
		}
		f.command(bob, group, 0, "/review@"+botUsername+" 1")
		settle(5 * time.Second)
		if !anyHas(texts(f, bob.ID), "🎓 Review of game 1") {
			t.Errorf("Bob's /review in the group: nothing in his private chat; the group says %q", newest(f, group).Text)
		}
		e.close()
		checkClean(t, f, logs)
	})
}

// TestLearnInAPrivateChat: /learn in a group is refused with a pointer to the private chat; in
// the private chat it deals a guided game whose turns are explained, /hint answers there, and
// the game can be played to its end with the buttons.
func TestLearnInAPrivateChat(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, _, logs, e := startedEnv(t, carla)
		f.command(carla, group, 0, "/learn@"+botUsername)
		settle(3 * time.Second)
		where := strings.ReplaceAll(i18n.T("en", "learn.where"), "/learn", "/learn@"+botUsername)
		if !anyHas(texts(f, group), where) {
			t.Errorf("/learn in the group: %q, want %q", texts(f, group), where)
		}
		f.command(carla, carla.ID, 0, "/learn")
		settle(3 * time.Second)
		private := texts(f, carla.ID)
		if !anyHas(private, "🎓 A guided game") {
			t.Fatalf("no welcome in the private chat:\n%s", strings.Join(private, "\n---\n"))
		}
		// The computer players before her play at a readable pace (core/table/pace.go: the new
		// deal stays in view 4 s, each card 0.6 s), so her turn comes some seconds after the deal.
		settle(10 * time.Second)
		f.command(carla, carla.ID, 0, "/hint")
		settle(3 * time.Second)
		if got := newest(f, carla.ID).Text; !strings.HasPrefix(got, "🎓") {
			t.Errorf("/hint answered %q", got)
		}
		d := newDriver(t, f, 8)
		explained := func() bool {
			ts := texts(f, carla.ID)
			return anyHas(ts, "You lead this trick") || anyHas(ts, "was led")
		}
		d.playUntil([]tgUser{carla}, time.Hour, func() bool { return explained() && overIn(f, carla.ID) })
		if !explained() || !overIn(f, carla.ID) {
			t.Errorf("the guided game did not explain a turn and end (%d moves):\n%s", d.moves,
				strings.Join(texts(f, carla.ID), "\n---\n"))
		}
		e.close()
		checkClean(t, f, logs)
	})
}

// TestNoticeWithoutPrivateChat: Bob never pressed Start. The reminder that it is his turn cannot
// reach him privately, so the group gets it, for him, as the delivery policy says (on Discord a
// player whose DMs are closed gets it so too); a secret notice would show only its public text
// (chat.Public).
func TestNoticeWithoutPrivateChat(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, _, logs, e := startedEnv(t, alice) // not Bob
		seatAll(t, f, "timer=fast", alice, bob)
		reminder := addressed(i18n.T("en", "term.for", bob.First)+" "+i18n.T("en", "note.reminder"), botUsername)
		told := func() bool { return anyHas(texts(f, group), reminder) }
		d := newDriver(t, f, 6)
		d.playUntil([]tgUser{alice}, 2*time.Hour, func() bool { return told() || overIn(f, group) })
		if !told() {
			t.Errorf("the group did not get Bob's reminder:\n%s", strings.Join(texts(f, group), "\n---\n"))
		}
		e.close()
		checkClean(t, f, logs)
	})
}

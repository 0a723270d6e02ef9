package telegram

import (
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// An anonymous admin has no person to seat: they are told why once, and may still do what an
// admin does (stop at once). A linked channel's posts, forwarded into the group by "Telegram"
// (user 777000, not marked as a bot), are not people either: they get no seat and no answer.
func TestAnonymousAdminsAndChannelPosts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, store, logs, e := startedEnv(t, alice, bob)
		f.command(alice, group, 0, "/new@"+botUsername+" timer=none")
		settle(3 * time.Second)
		tableID := tableOf(t, f)
		note := i18n.T("en", "err.anonymous")
		notes := func() int {
			n := 0
			for _, m := range f.messages(group) {
				if m.Text == note {
					n++
				}
			}
			return n
		}
		f.anonymousAdmin(group, "/join")
		settle(3 * time.Second)
		if n := notes(); n != 1 {
			t.Errorf("%d notes for an anonymous admin's /join, want 1", n)
		}
		f.anonymousAdmin(group, "/join@"+botUsername)
		f.anonymousAdmin(group, "/hand")
		settle(3 * time.Second)
		if n := notes(); n != 1 {
			t.Errorf("%d notes after more tries, want still the one", n)
		}

		before := len(f.messages(group))
		f.channelPost(group, "/join")
		f.channelPost(group, "/new@"+botUsername)
		settle(3 * time.Second)
		if n := len(f.messages(group)) - before; n != 0 {
			t.Errorf("%d answers to a channel's posts", n)
		}
		for _, l := range store.Log(tableID) {
			if l.Verb == api.VerbJoin {
				t.Errorf("%s took a seat", l.Actor)
			}
		}
		lobby, _, _ := lastWith(f, group, api.VerbJoin, "")
		if strings.Contains(lobby.Text, "Telegram") || strings.Contains(lobby.Text, "Konter club") {
			t.Errorf("someone who is not a person sits at the table:\n%s", lobby.Text)
		}

		mustPress(t, f, bob, group, api.VerbJoin, "")
		settle(3 * time.Second)
		mustPress(t, f, alice, group, api.VerbDeal, "")
		settle(5 * time.Second)
		f.anonymousAdmin(group, "/stop")
		settle(10 * time.Second)
		if st, ok := e.svc.Status(tableID); ok {
			t.Errorf("after an anonymous admin's /stop the table is %s", st)
		}
		var stopped bool
		for _, m := range f.messages(group) {
			stopped = stopped || m.Text == i18n.T("en", "note.stopped", "Konter club")
		}
		if !stopped {
			t.Error("the group was not told who stopped the match")
		}
		for _, c := range f.Calls() {
			if c.Method == "getChatMember" && c.Params["user_id"] == strconv.FormatInt(anonymousAdmin, 10) {
				t.Errorf("getChatMember asked for an anonymous admin (they are one by definition)")
			}
		}
		e.close()
		checkClean(t, f, logs)
	})
}

// An admin's right to stop a match at once holds for a press as for a typed /stop: the presser
// is the update's user, asked about like the typist.
func TestAdminStopByPress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, _, logs, e := startedEnv(t, alice)
		seatAll(t, f, "timer=none", alice)
		settle(time.Minute)
		tableID := tableOf(t, f)
		live, data, _ := lastWith(f, group, api.VerbBoard, "")
		act, _ := api.ParseAction(data)
		stop := api.Action{Verb: api.VerbStop, Table: act.Table, Seq: act.Seq}.Encode()

		id := f.press(olga, &live, stop)
		if text, alert := answerOf(t, f, id); !alert || text != i18n.T("en", "err.not_seated") {
			t.Errorf("a member's stop press: %q alert=%v", text, alert)
		}
		f.setMember(group, olga.ID, "administrator")
		id = f.press(olga, &live, stop)
		if text, alert := answerOf(t, f, id); alert {
			t.Errorf("an admin's stop press refused: %s", text)
		}
		settle(10 * time.Second)
		if st, ok := e.svc.Status(tableID); ok {
			t.Errorf("after an admin's stop press the table is %s", st)
		}
		e.close()
		checkClean(t, f, logs)
	})
}

// Telegram tells a bot that is not an admin about other members only when it can
// (getChatMember is "only guaranteed to work for other users if the bot is an administrator").
// When the check fails, an admin is not refused an admin action without being told why: the
// answer says the bot could not check, and how to fix it.
func TestAdminCheckFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, _, logs, e := startedEnv(t, alice)
		seatAll(t, f, "timer=none", alice)
		settle(time.Minute)
		f.setMember(group, olga.ID, "administrator")
		f.mu.Lock()
		f.membersHidden[group] = true
		f.mu.Unlock()
		why := tr("en", "admin_unknown")

		cmd := f.command(olga, group, 0, "/stop@"+botUsername)
		settle(5 * time.Second)
		var told bool
		for _, m := range f.messages(group) {
			told = told || m.ReplyTo == cmd.ID && strings.Contains(m.Text, why)
		}
		if !told {
			t.Error("an admin's /stop, refused because the admin check failed, does not say why")
		}

		live, data, _ := lastWith(f, group, api.VerbBoard, "")
		act, _ := api.ParseAction(data)
		stop := api.Action{Verb: api.VerbStop, Table: act.Table, Seq: act.Seq}.Encode()
		if text, _ := answerOf(t, f, f.press(olga, &live, stop)); !strings.Contains(text, why) {
			t.Errorf("an admin's stop press, refused because the admin check failed: %q", text)
		}

		// Made an admin, the bot can check: the stop works.
		f.mu.Lock()
		f.botAdmin[group] = true
		f.mu.Unlock()
		if text, alert := answerOf(t, f, f.press(olga, &live, stop)); alert {
			t.Errorf("an admin's stop press with the bot an admin: %q", text)
		}
		e.close()
		checkClean(t, f, logs)
	})
}

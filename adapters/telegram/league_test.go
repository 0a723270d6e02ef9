package telegram

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage/mem"
)

var teamWon = regexp.MustCompile(`🏆 Team ([AB]) \(`)

// TestLeagueInAGroup: two matches in a group, then stats, top and history as the group reads
// them, checked against the match summaries the group was shown; history's buttons send the
// board as a photo and the record as a file that replays.
func TestLeagueInAGroup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		humans := []tgUser{alice, bob}
		f, _, logs, e := startedEnv(t, humans...)
		seatAll(t, f, "timer=fast stripes=1", humans...)
		d := newDriver(t, f, 4)
		d.playUntil(humans, 2*time.Hour, func() bool { return over(f) })
		settle(5 * time.Second)
		mustPress(t, f, alice, group, api.VerbRematch, "")
		settle(5 * time.Second)
		d.playUntil(humans, 2*time.Hour, func() bool { return len(summaries(f)) == 2 })
		settle(10 * time.Second)
		// Alice sits in seat 1 (team A), Bob in seat 2 (team B).
		won := map[string]int{}
		for _, s := range summaries(f) {
			won[map[string]string{"A": "Alice", "B": "Bob"}[s]]++
		}

		f.command(alice, group, 0, "/stats@"+botUsername)
		settle(3 * time.Second)
		if text := newest(f, group).Text; !strings.Contains(text, "📊 Alice in ") || !strings.Contains(text, fmt.Sprintf("2 matches · won: %d (", won["Alice"])) {
			t.Errorf("stats in the group:\n%s", text)
		}
		f.command(bob, group, 0, "/top@"+botUsername+" all")
		settle(3 * time.Second)
		top := newest(f, group)
		if !top.Photo || !strings.HasPrefix(top.Text, "🏆 All-time table in ") ||
			!strings.Contains(top.Text, "Alice — ") || !strings.Contains(top.Text, fmt.Sprintf(" · won %d of 2", won["Bob"])) {
			t.Errorf("top in the group (photo %v):\n%s", top.Photo, top.Text)
		}
		f.command(bob, group, 0, "/history@"+botUsername)
		settle(3 * time.Second)
		hist := newest(f, group)
		if strings.Count(hist.Text, "\n") != 3 || len(hist.buttons()) != 4 {
			t.Fatalf("history in the group (%d buttons):\n%s", len(hist.buttons()), hist.Text)
		}
		// The newest match's buttons come first: its record, then its board.
		var rec, board string
		for _, btn := range hist.buttons() {
			if act, err := api.ParseAction(btn[1]); err == nil && rec == "" && strings.HasPrefix(act.Arg, "r:") {
				rec, board = act.Arg, "b:"+strings.TrimPrefix(act.Arg, "r:")
			}
		}
		mustPress(t, f, carla, group, api.VerbHistory, rec) // anyone in the group may ask
		settle(3 * time.Second)
		doc := newest(f, group)
		if doc.Document == nil || !strings.HasPrefix(doc.Text, "📄") {
			t.Fatalf("the record button sent %q", doc.Text)
		}
		if _, err := core.Replay(doc.Document); err != nil {
			t.Errorf("the record file does not replay: %v", err)
		}
		mustPress(t, f, carla, group, api.VerbHistory, board)
		settle(3 * time.Second)
		if m := newest(f, group); !m.Photo || !strings.HasPrefix(m.Text, "📋") {
			t.Errorf("the board button sent %q (photo %v)", m.Text, m.Photo)
		}

		// Restricted to text and photos, as my_chat_member says in its granular rights
		// (ChatMemberRestricted: can_send_photos, can_send_documents): a record goes as its
		// text without trying the file, the board still as a photo.
		f.restrict(group, olga, rights{text: true, photos: true}, true)
		settle(3 * time.Second)
		docs, _ := countCalls(f.Calls(), "sendDocument", group)
		mustPress(t, f, carla, group, api.VerbHistory, rec)
		settle(3 * time.Second)
		if m := newest(f, group); m.Document != nil || !strings.HasPrefix(m.Text, "📄") {
			t.Errorf("the record button in a group without documents sent %q (file %v)", m.Text, m.Document != nil)
		}
		if ok, failed := countCalls(f.Calls(), "sendDocument", group); ok != docs || failed != 0 {
			t.Errorf("sendDocument tried %d times in a group whose rights say no documents", ok-docs+failed)
		}
		mustPress(t, f, carla, group, api.VerbHistory, board)
		settle(3 * time.Second)
		if m := newest(f, group); !m.Photo {
			t.Errorf("the board in a group that takes photos went as text: %q", m.Text)
		}
		e.close()
		checkClean(t, f, logs)
	})
}

// summaries are the teams that won the matches the group was told of, in order.
func summaries(f *fakeAPI) []string {
	var out []string
	for _, m := range f.messages(group) {
		if g := teamWon.FindStringSubmatch(m.Text); g != nil && strings.Contains(m.Text, "wins the match") {
			out = append(out, g[1])
		}
	}
	return out
}

func newest(f *fakeAPI, chat int64) fmsg {
	ms := f.messages(chat)
	if len(ms) == 0 {
		return fmsg{}
	}
	return ms[len(ms)-1]
}

// TestAdminsChangeHouseRules: a group's admin changes its house rules at once (Telegram is asked
// whether they administer the group), a member without a seat may not, and the next table
// starts from them.
func TestAdminsChangeHouseRules(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, store, logs := newFake(testToken), mem.New(), &tabletest.Buffer{}
		e := startEnv(t, f, store, logs)
		f.command(olga, group, 0, "/settings@"+botUsername+" stripes=3")
		settle(3 * time.Second)
		if text := newest(f, group).Text; !strings.Contains(text, "Only an admin") {
			t.Errorf("a member's /settings: %q", text)
		}
		f.setMember(group, olga.ID, "administrator")
		f.command(olga, group, 0, "/settings@"+botUsername+" stripes=3 lang=de")
		settle(3 * time.Second)
		if text := newest(f, group).Text; !strings.Contains(text, "Saved") || !strings.Contains(text, "3 stripes") {
			t.Errorf("an admin's /settings: %q", text) // in Olga's language
		}
		f.command(alice, group, 0, "/new@"+botUsername)
		settle(3 * time.Second)
		if m, _, ok := lastWith(f, group, api.VerbJoin, ""); !ok || !strings.Contains(m.Text, "3 Striche") {
			t.Errorf("the new lobby: %q", m.Text) // in the house's language
		}
		e.close()
		checkClean(t, f, logs)
	})
}

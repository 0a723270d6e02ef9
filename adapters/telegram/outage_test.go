package telegram

import (
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kontermatt/kontermatt/core/table"
)

// lastUpdateID is the ID of the update the fake queued last.
func lastUpdateID(f *fakeAPI) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.nextUpd
}

// humanOnTurn plays until one of the humans must play a card, and gives them, the card and the
// hand message with its button.
func humanOnTurn(t *testing.T, f *fakeAPI, e *env, d *driver, tableID string, humans []tgUser) (tgUser, string, fmsg, string) {
	t.Helper()
	var who tgUser
	d.playUntil(humans, time.Hour, func() bool {
		p, legal, trump := e.svc.Turn(tableID)
		for _, h := range humans {
			if p == fmt.Sprintf("tg:%d", h.ID) && !trump && len(legal) > 0 {
				who = h
				return true
			}
		}
		return false
	})
	settle(5 * time.Second)
	_, legal, _ := e.svc.Turn(tableID)
	card := legal[0].String()
	m, data, ok := lastWith(f, who.ID, table.VerbPlay, card)
	if !ok {
		t.Fatalf("no %s button in %s's hand", card, who.First)
	}
	return who, card, m, data
}

// plays lists the table's accepted plays by a user, as their update IDs.
func plays(store *table.MemStore, tableID string, u tgUser) []string {
	var out []string
	for _, l := range store.Log(tableID) {
		if l.Verb == table.VerbPlay && l.Actor == fmt.Sprintf("tg:%d", u.ID) {
			out = append(out, l.EventID)
		}
	}
	return out
}

// After an outage Telegram still delivers what was typed up to a day before, but drops button
// presses after 150 s. A typed move that comes more than three minutes late is not applied (the
// game may have moved on); its sender is told once, privately, and the group nothing. A move
// typed a minute before the bot came back is applied.
func TestStaleUpdatesAfterAnOutage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		humans := []tgUser{alice, bob}
		f, store, logs, e := startedEnv(t, humans...)
		seatAll(t, f, "timer=none", humans...)
		tableID := tableOf(t, f)
		who, card, hand, data := humanOnTurn(t, f, e, newDriver(t, f, 71), tableID, humans)
		before := len(plays(store, tableID, who))
		privBefore, groupBefore := len(f.messages(who.ID)), len(f.messages(group))

		e.crash()
		f.command(who, group, 0, "/play "+card)        // ten minutes old when the bot is back
		press := f.press(who, &hand, data)             // dropped by Telegram after 150 s
		f.command(who, group, 0, "/stop")              // late too: still one notice
		f.command(olga, group, 5, "/new@"+botUsername) // Olga never pressed Start: told in the topic
		time.Sleep(9 * time.Minute)
		f.command(who, group, 0, "/play "+card) // a minute old: applied
		fresh := lastUpdateID(f)
		time.Sleep(time.Minute)

		e = startEnv(t, f, store, logs)
		settle(10 * time.Second)
		if got := plays(store, tableID, who)[before:]; len(got) != 1 || got[0] != fmt.Sprintf("tg:%d", fresh) {
			t.Errorf("plays applied after the outage: %v, want only the fresh one (tg:%d)", got, fresh)
		}
		if _, answered := f.answer(press); answered {
			t.Error("a press older than 150 s reached the bot")
		}
		late := strings.SplitN(tr("en", "late", "play"), " ", 4)[:3] // "Your /play came"
		told := 0
		for _, m := range f.messages(who.ID)[privBefore:] {
			if strings.Contains(m.Text, strings.Join(late, " ")) {
				told++
			}
		}
		if told != 1 {
			t.Errorf("%s was told %d times that their late commands were not applied, want once", who.First, told)
		}
		for _, m := range f.messages(group)[groupBefore:] {
			if strings.Contains(m.Text, tr("en", "late.public", who.First)) {
				t.Errorf("the group was told of a late command of a player who gets private messages: %q", m.Text)
			}
		}
		if id := e.svc.TableAt(placeOf(group, 5)); id != "" {
			t.Errorf("Olga's late /new opened table %s", id)
		}
		toOlga := 0
		for _, m := range f.messages(group)[groupBefore:] {
			if m.Thread == 5 && m.Text == tr("en", "late.public", olga.First) {
				toOlga++
			}
		}
		if toOlga != 1 {
			t.Errorf("Olga was told %d times in the topic that her late /new was not applied, want once", toOlga)
		}
		for _, l := range store.Log(tableID) {
			if l.Verb == table.VerbStop {
				t.Errorf("the late /stop was applied: %+v", l)
			}
		}
		e.close()
		checkClean(t, f, logs)
	})
}

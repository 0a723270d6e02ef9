package telegram

import (
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// lastUpdateID is the ID of the update the fake queued last.
func lastUpdateID(f *fakeAPI) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.nextUpd
}

// humanOnTurn plays until one of the humans must play a card, and gives them, the card and the
// hand message with its button.
func humanOnTurn(t testing.TB, f *fakeAPI, e *env, d *driver, tableID string, humans []tgUser) (tgUser, string, fmsg, string) {
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
	m, data, ok := lastWith(f, who.ID, api.VerbPlay, card)
	if !ok {
		t.Fatalf("no %s button in %s's hand", card, who.First)
	}
	return who, card, m, data
}

// plays lists the table's accepted plays by a user, as their update IDs.
func plays(store *mem.Store, tableID string, u tgUser) []string {
	var out []string
	for _, l := range store.Log(tableID) {
		if l.Verb == api.VerbPlay && l.Actor == fmt.Sprintf("tg:%d", u.ID) {
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
			if l.Verb == api.VerbStop {
				t.Errorf("the late /stop was applied: %+v", l)
			}
		}
		e.close()
		checkClean(t, f, logs)
	})
}

// The hands held back for a player who cannot get private messages are the table's: kept under
// its ID (so that pruning the closed table deletes them; core/table KV), never under the player
// alone, sent when the player writes to the bot, and gone with the table.
func TestHeldHandsAreTheTables(t *testing.T) {
	ctx := t.Context()
	synctest.Test(t, func(t *testing.T) {
		f, store, logs := newFake(testToken), mem.New(), &tabletest.Buffer{}
		f.setStarted(alice.ID) // Ursula never pressed Start
		e := startEnv(t, f, store, logs)
		f.command(alice, group, 0, "/new@"+botUsername+" timer=none")
		settle(2 * time.Second)
		f.command(ursula, group, 0, "/join@"+botUsername)
		settle(5 * time.Second)
		mustPress(t, f, alice, group, api.VerbDeal, "")
		settle(5 * time.Second)
		tableID := tableOf(t, f)
		held := func() (mine, users bool) {
			_, mine, _ = store.Get(ctx, bucketPending, userTable(ursula.ID, tableID))
			_, users, _ = store.Get(ctx, bucketPending, userKey(ursula.ID))
			return mine, users
		}
		if mine, users := held(); !mine || users {
			t.Fatalf("Ursula's held hand: under the table %v, under her alone %v", mine, users)
		}

		// She presses Start: the hand comes, and nothing is held any more.
		f.start(ursula, "")
		settle(5 * time.Second)
		if _, ok := handMessage(f, ursula.ID); !ok {
			t.Error("Ursula's held hand did not come when she pressed Start")
		}
		if mine, users := held(); mine || users {
			t.Errorf("after she pressed Start the hand is still held (table %v, hers %v)", mine, users)
		}

		// Blocked again, the table's next hand is held; when the table closes and is pruned, it
		// goes with it.
		f.mu.Lock()
		f.started[ursula.ID] = false
		f.mu.Unlock()
		e.a.reach.Set(ctx, userKey(ursula.ID), true)
		f.command(alice, group, 0, "/board@"+botUsername) // anything that changes the table's messages
		d := newDriver(t, f, 8)
		d.playUntil([]tgUser{alice}, time.Hour, func() bool { mine, _ := held(); return mine })
		f.setMember(group, alice.ID, "creator")
		f.command(alice, group, 0, "/stop@"+botUsername)
		settle(10 * time.Second)
		if _, open := e.svc.Status(tableID); open {
			t.Fatal("the table did not close")
		}
		if _, err := store.Prune(ctx, time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if mine, users := held(); mine || users {
			t.Errorf("a pruned table's held hand is still kept (table %v, hers %v)", mine, users)
		}
		e.close()
		checkClean(t, f, logs)
	})
}

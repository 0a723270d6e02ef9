package table

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// A place that gets a new ID in the middle of a game takes its table along: the move is stored,
// the table's messages are published anew for the new place, the match goes on there and the old
// place has no table any more, also after a restart.
func TestMovePlaceMidGame(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := mem.New()
		h, me := soloTableOn(t, store)
		h.playAsHuman(me, 5)
		synctest.Wait()
		id := h.svc.TableAt(h.place)
		old, moved := h.place, api.Place{Platform: "test", Chat: "g1-super"}
		before := len(h.out.all())
		if err := h.svc.MovePlace(context.Background(), old, moved); err != nil {
			t.Fatal(err)
		}
		if got := h.svc.TableAt(moved); got != id {
			t.Fatalf("TableAt(new place) = %q, want %q", got, id)
		}
		if got := h.svc.TableAt(old); got != "" {
			t.Errorf("the old place still has table %q", got)
		}
		var live, hand bool
		for _, m := range h.out.all()[before:] {
			if m.Target.Place.Key() != moved.Key() {
				t.Errorf("a %s message after the move is for %s", m.Kind, m.Target.Place.Key())
			}
			live = live || m.Kind == api.KindLive
			hand = hand || m.Kind == api.KindHand
		}
		if !live || !hand {
			t.Errorf("the move did not publish the table anew: live %v, hand %v", live, hand)
		}
		if got := h.out.all()[before:]; len(got) > 0 && got[0].Target.Place.Title != old.Title {
			t.Errorf("the title was lost in the move: %q", got[0].Target.Place.Title)
		}
		if e := errText(h.do(me, api.VerbBoard)); e != i18n.T("en", "err.no_table") {
			t.Errorf("a command at the old place: %q, want no table", e)
		}
		log := store.Log(id)
		if last := log[len(log)-1]; last.Verb != api.VerbMove || len(last.Args) != 1 || last.Args[0] != old.Key() {
			t.Errorf("the move is logged as %+v", last)
		}
		h.svc.Close()

		// A restart finds the table at the new place, and the match finishes there.
		h = resumed(t, store)
		h.place = moved
		if got := h.svc.TableAt(moved); got != id {
			t.Fatalf("after a restart TableAt(new place) = %q", got)
		}
		if got := h.svc.TableAt(old); got != "" {
			t.Errorf("after a restart the old place has table %q", got)
		}
		h.playAsHuman(me, 1000)
		if !h.over() {
			t.Error("the match did not finish at the new place")
		}
	})
}

// soloTableOn is soloTable over a given store.
func soloTableOn(t *testing.T, store *mem.Store) (*harness, api.Player) {
	t.Helper()
	h := newHarness(t, store)
	me := player(1)
	if e := errText(h.do(me, api.VerbNew, "timer=none")); e != "" {
		t.Fatalf("new: %s", e)
	}
	if e := errText(h.do(me, api.VerbDeal)); e != "" {
		t.Fatalf("deal: %s", e)
	}
	return h, me
}

func TestMovePlaceRefusesATakenPlace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mem.New())
		defer h.svc.Close()
		h.do(player(1), api.VerbNew)
		other := api.Place{Platform: "test", Chat: "g2"}
		h.svc.Handle(context.Background(), api.Command{Place: other, Actor: player(2), Verb: api.VerbNew})
		if err := h.svc.MovePlace(context.Background(), h.place, other); !errors.Is(err, ErrPlaceTaken) {
			t.Errorf("moving onto a place with a table: %v", err)
		}
		if err := h.svc.MovePlace(context.Background(), api.Place{Platform: "test", Chat: "none"}, other); err != nil {
			t.Errorf("moving a place without a table: %v", err)
		}
	})
}

// The bot removed from a chat: every table of the chat closes, in any thread, and a match in
// progress is kept as a record; other chats' tables go on.
func TestCloseChat(t *testing.T) {
	ctx := t.Context()
	synctest.Test(t, func(t *testing.T) {
		store := mem.New()
		h := newHarness(t, store)
		defer h.svc.Close()
		topic := api.Place{Platform: "test", Chat: h.place.Chat, Thread: "7"}
		elsewhere := api.Place{Platform: "test", Chat: "g2"}
		h.do(player(1), api.VerbNew, "timer=none")
		h.do(player(1), api.VerbDeal)
		h.svc.Handle(context.Background(), api.Command{Place: topic, Actor: player(2), Verb: api.VerbNew})
		h.svc.Handle(context.Background(), api.Command{Place: elsewhere, Actor: player(3), Verb: api.VerbNew})
		ids := []string{h.svc.TableAt(h.place), h.svc.TableAt(topic), h.svc.TableAt(elsewhere)}
		n, err := h.svc.CloseChat(context.Background(), "test", h.place.Chat)
		if err != nil || n != 2 {
			t.Fatalf("CloseChat = %d, %v; want the 2 tables of the chat", n, err)
		}
		synctest.Wait()
		for i, id := range ids[:2] {
			if st, ok := h.svc.Status(id); ok {
				t.Errorf("table %d of the chat is %s", i, st)
			}
		}
		if st, _ := h.svc.Status(ids[2]); st != api.StatusLobby {
			t.Errorf("another chat's table is %s", st)
		}
		records := 0
		store.Records(ctx, func(string, []byte) error { records++; return nil })
		if records != 1 {
			t.Errorf("%d match records, want the one in progress", records)
		}
		hand, _ := h.out.latest(api.KindHand, player(1).ID)
		if !strings.Contains(hand.Text, i18n.T("en", "live.closed")) || len(hand.Buttons) > 0 {
			t.Errorf("the player's hand does not say the table closed:\n%s", hand.Text)
		}
	})
}

// A place gone for good (a deleted forum topic): its table closes, the chat's other tables go on.
func TestClosePlace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mem.New())
		defer h.svc.Close()
		topic := api.Place{Platform: "test", Chat: h.place.Chat, Thread: "7"}
		h.do(player(1), api.VerbNew, "timer=none")
		h.svc.Handle(context.Background(), api.Command{Place: topic, Actor: player(2), Verb: api.VerbNew})
		general, inTopic := h.svc.TableAt(h.place), h.svc.TableAt(topic)
		if p, ok := h.svc.PlaceOf(inTopic); !ok || p.Key() != topic.Key() {
			t.Errorf("PlaceOf(the topic's table) = %v, %v", p, ok)
		}
		if n, err := h.svc.ClosePlace(context.Background(), topic); err != nil || n != 1 {
			t.Fatalf("ClosePlace = %d, %v; want the topic's table", n, err)
		}
		synctest.Wait()
		if st, ok := h.svc.Status(inTopic); ok {
			t.Errorf("the gone topic's table is %s", st)
		}
		if _, ok := h.svc.PlaceOf(inTopic); ok {
			t.Error("PlaceOf gives a place for a closed table")
		}
		if st, _ := h.svc.Status(general); st != api.StatusLobby {
			t.Errorf("the chat's other table is %s", st)
		}
	})
}

// A paused table runs no computer player and no timer, tells its players privately once, stays
// paused after a restart, and goes on when resumed; its people's own moves still count.
func TestPause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := mem.New()
		h := newHarness(t, store)
		me := player(1)
		h.do(me, api.VerbNew, "timer=fast")
		h.do(me, api.VerbDeal)
		synctest.Wait() // the computers have played up to my turn
		id := h.svc.TableAt(h.place)
		for range 2 {
			if err := h.svc.Pause(context.Background(), h.place, true); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		notes := 0
		for _, m := range h.out.all() {
			if m.Kind == api.KindNotice && m.Target.Kind == api.ToPlayer && m.Text == i18n.T("en", "note.paused") {
				notes++
			}
		}
		if notes != 1 {
			t.Errorf("%d private notes of the pause, want 1", notes)
		}
		// What runs by itself after sequence number from: computer moves and timeouts (the log
		// of a match that ended is pruned, so entries are told by their numbers).
		byItself := func(from uint64) []LogEntry {
			var out []LogEntry
			for _, l := range store.Log(id) {
				if l.Seq > from && (strings.HasPrefix(l.Actor, "robot:") || l.Verb == api.VerbTimeout) {
					out = append(out, l)
				}
			}
			return out
		}
		log := store.Log(id)
		from := log[len(log)-1].Seq
		time.Sleep(2 * time.Hour) // far beyond the fast timer
		synctest.Wait()
		h.playAsHuman(me, 1)
		time.Sleep(time.Hour)
		synctest.Wait()
		if got := byItself(from); len(got) > 0 {
			t.Errorf("the paused table moved by itself %d times, first %+v", len(got), got[0])
		}
		if log := store.Log(id); log[len(log)-1].Seq != from+1 {
			t.Errorf("%d commands while paused, want my one move", log[len(log)-1].Seq-from)
		}
		h.svc.Close()

		h = resumed(t, store)
		time.Sleep(time.Hour)
		synctest.Wait()
		if got := byItself(from); len(got) > 0 || !h.svc.Paused(id) {
			t.Errorf("after a restart: paused %v, %d moves by itself", h.svc.Paused(id), len(got))
		}
		if err := h.svc.Pause(context.Background(), h.place, false); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Hour)
		synctest.Wait()
		if got := byItself(from); len(got) == 0 {
			t.Error("nothing ran by itself after the pause ended")
		}
		var told bool
		for _, m := range h.out.all() {
			told = told || m.Target.Kind == api.ToPlayer && m.Text == i18n.T("en", "note.unpaused")
		}
		if !told {
			t.Error("the player was not told the pause ended")
		}
	})
}

// Someone speaking for the chat (an anonymous admin) takes no seat, and is told why with a reason
// the adapter can recognise; an admin's stop works at once.
func TestAnonymousActor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mem.New())
		defer h.svc.Close()
		group := api.Player{ID: "chat:g1", Name: "Café Konter"}
		anon := func(v api.Verb, args ...string) []api.Message {
			return msgsOf(h.svc.Handle(context.Background(), api.Command{Place: h.place, Actor: group, Verb: v, Args: args,
				Admin: true, Anonymous: true}))
		}
		reason := func(ms []api.Message) string {
			for _, m := range ms {
				if m.Kind == api.KindError {
					return m.Reason
				}
			}
			return ""
		}
		if r := reason(anon(api.VerbNew)); r != "err.anonymous" {
			t.Errorf("new by the group: reason %q", r)
		}
		h.do(player(1), api.VerbNew, "timer=none")
		for _, v := range []api.Verb{api.VerbJoin, api.VerbLeave, api.VerbRematch, api.VerbHand} {
			if r := reason(anon(v)); r != "err.anonymous" {
				t.Errorf("%s by the group: reason %q", v, r)
			}
		}
		if r := reason(anon(api.VerbLang, "de")); r != "err.anonymous" {
			t.Errorf("a personal language for the group: reason %q", r)
		}
		if r := reason(anon(api.VerbBot)); r != "" {
			t.Errorf("an admin adding a computer player: %q", r)
		}
		h.do(player(1), api.VerbDeal)
		if r := reason(anon(api.VerbBoard)); r != "" {
			t.Errorf("the board for the group: %q", r)
		}
		if r := reason(anon(api.VerbStop)); r != "" {
			t.Errorf("an admin's stop: %q", r)
		}
		if st, ok := h.svc.Status(h.svc.TableAt(h.place)); ok && st != api.StatusClosed {
			t.Errorf("after an anonymous admin's stop the table is %s", st)
		}
	})
}

// A "New table" button carries no table: it fits Telegram's 64 bytes, and pressing it opens one
// like a typed new.
func TestNewFromAButton(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mem.New())
		defer h.svc.Close()
		data := api.Action{Verb: api.VerbNew}.Encode()
		if len(data) > api.MaxActionLen {
			t.Fatalf("%q is longer than %d bytes", data, api.MaxActionLen)
		}
		act, err := api.ParseAction(data)
		if err != nil {
			t.Fatal(err)
		}
		r, _ := h.svc.Handle(context.Background(), act.Command(h.place, player(1), "cb1", false))
		if e := errText(r); e != "" {
			t.Fatalf("pressing New table: %s", e)
		}
		if h.svc.TableAt(h.place) == "" {
			t.Fatal("no table after pressing New table")
		}
		lobby, _ := h.out.latest(api.KindLobby, "")
		if !strings.Contains(lobby.Text, player(1).Name) {
			t.Errorf("the presser is not seated:\n%s", lobby.Text)
		}
		if r, _ := h.svc.Handle(context.Background(), act.Command(h.place, player(1), "cb1", false)); len(r) != 1 || r[0].Text != i18n.T("en", "note.duplicate") {
			t.Errorf("the same press delivered again: %+v", r)
		}
		if e := errText(h.svc.Handle(context.Background(), act.Command(h.place, player(2), "cb2", false))); e != i18n.T("en", "err.table_exists") {
			t.Errorf("a second New table: %q", e)
		}
	})
}

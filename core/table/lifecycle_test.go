package table

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// A refusal that names the actor's cards is secret and comes with a public text that names none.
func TestRefusalsThatShowCardsAreSecret(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, me := soloTable(t)
		defer h.svc.Close()
		for i := 0; i < 200; i++ {
			synctest.Wait()
			m, _ := h.out.latest(api.KindHand, me.ID)
			if strings.Contains(m.Text, "forehand") {
				b, _ := firstButton(m, api.VerbTrump, true)
				h.press(me, b)
				continue
			}
			game, held := h.svc.HeldCards(h.svc.TableAt(h.place))
			if game != 1 || held.Len() == 0 {
				t.Fatalf("HeldCards = game %d, %d cards", game, held.Len())
			}
			hand := h.do(me, api.VerbHand)
			if len(hand) != 1 || !hand[0].Secret || strings.Contains(hand[0].Public, "♠") {
				t.Fatalf("hand reply: %+v", hand)
			}
			var illegal, legal *api.Button
			for j := range m.Buttons[0] {
				if b := &m.Buttons[0][j]; !b.Legal && illegal == nil {
					illegal = b
				} else if b.Legal && legal == nil {
					legal = b
				}
			}
			if illegal == nil {
				h.press(me, *legal)
				continue
			}
			r := h.press(me, *illegal)
			if len(r) != 1 || r[0].Kind != api.KindError || !r[0].Secret {
				t.Fatalf("refusing %s: %+v", illegal.Label, r)
			}
			for _, c := range held.Cards() {
				if strings.Contains(r[0].Public, c.Chat()) {
					t.Errorf("the public text of a refusal names %s: %q", c.Chat(), r[0].Public)
				}
			}
			if !strings.Contains(r[0].Public, i18n.T("en", "btn.hand")) {
				t.Errorf("the public text does not say what to do: %q", r[0].Public)
			}
			// A reason that names no card stays public.
			if r := h.do(me, api.VerbTrump, "hearts"); len(r) != 1 || r[0].Secret {
				t.Errorf("trump refused after trump: %+v", r)
			}
			return
		}
		t.Fatal("never held an illegal card")
	})
}

// fourHumans opens a table of four people with the given options and deals.
func fourHumans(t *testing.T, h *harness, opts ...string) []api.Player {
	t.Helper()
	ps := []api.Player{player(1), player(2), player(3), player(4)}
	if e := errText(h.do(ps[0], api.VerbNew, opts...)); e != "" {
		t.Fatal(e)
	}
	for _, p := range ps[1:] {
		if e := errText(h.do(p, api.VerbJoin)); e != "" {
			t.Fatal(e)
		}
	}
	if e := errText(h.do(ps[0], api.VerbDeal)); e != "" {
		t.Fatal(e)
	}
	return ps
}

// toMove is the player whose latest hand message says they act, and that message.
func (h *harness) toMove(ps []api.Player) (api.Player, api.Message) {
	h.t.Helper()
	for _, p := range ps {
		m, ok := h.out.latest(api.KindHand, p.ID)
		if ok && (strings.Contains(m.Text, "▶") || strings.Contains(m.Text, "forehand")) {
			return p, m
		}
	}
	h.t.Fatal("nobody is to move")
	return api.Player{}, api.Message{}
}

// firstButton gives a message's first button for verb; legal: only a legal move's.
func firstButton(m api.Message, verb api.Verb, legal bool) (api.Button, bool) {
	for _, row := range m.Buttons {
		for _, b := range row {
			if b.Action.Verb == verb && (b.Legal || !legal) {
				return b, true
			}
		}
	}
	return api.Button{}, false
}

// Only the seat to move, or a change for everyone, starts the turn's time again: someone else
// changing the table language every ten seconds does not keep the absent player from being
// reminded and replaced.
func TestOthersDoNotRestartTheTurnTimer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mem.New())
		defer h.svc.Close()
		ps := fourHumans(t, h, "timer=fast")
		synctest.Wait()
		mover, _ := h.toMove(ps)
		var other api.Player
		for _, p := range ps {
			if p.ID != mover.ID {
				other = p
			}
		}
		langs := []string{"de", "en"}
		for i := range 5 { // 50 s: past the 20 s reminder and the 45 s timeout
			time.Sleep(10 * time.Second)
			if e := errText(h.do(other, api.VerbLang, "table", langs[i%2])); e != "" {
				t.Fatal(e)
			}
			h.do(other, api.VerbLang, langs[i%2]) // the person's own language: not a table change at all
			synctest.Wait()
		}
		reminded, away := false, false
		for _, m := range h.out.all() {
			reminded = reminded || m.Target.Kind == api.ToPlayer && m.Target.Player.ID == mover.ID && m.Kind == api.KindNotice
			away = away || strings.Contains(m.Text, mover.Name) && (strings.Contains(m.Text, "did not play in time") ||
				strings.Contains(m.Text, i18n.T("de", "note.away", mover.Name)))
		}
		if !reminded || !away {
			t.Errorf("after 50 s of others' commands: reminded %v, replaced %v", reminded, away)
		}
	})
}

// A person's language is their own: choosing it writes no table state, their hand follows at
// once, and it holds after a restart.
func TestLanguageIsThePersonsOwn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := mem.New()
		h := newHarness(t, store, withKV)
		ps := fourHumans(t, h, "timer=none")
		synctest.Wait()
		id := h.svc.TableAt(h.place)
		logged := len(store.Log(id))
		if r := h.do(ps[2], api.VerbLang, "lb"); errText(r) != "" || r[0].Text != i18n.T("lb", "note.lang_player") {
			t.Fatalf("lang lb: %+v", r)
		}
		synctest.Wait()
		if n := len(store.Log(id)); n != logged {
			t.Errorf("a person's language choice wrote %d table log entries", n-logged)
		}
		hand, _ := h.out.latest(api.KindHand, ps[2].ID)
		if !strings.HasPrefix(hand.Text, i18n.T("lb", "hand.title", 1)) {
			t.Errorf("the hand did not follow the language: %q", hand.Text)
		}
		h.svc.Close()

		// The table's state no longer carries it, the person's settings do.
		h2 := resumed(t, store, withKV)
		hand, _ = h2.out.latest(api.KindHand, ps[2].ID)
		if !strings.HasPrefix(hand.Text, i18n.T("lb", "hand.title", 1)) {
			t.Errorf("after a restart the hand is %q", hand.Text)
		}
		// With no table anywhere, a language choice still works and is kept.
		if r, _ := h2.svc.Handle(context.Background(), api.Command{Place: api.Place{Platform: "test", Chat: "dm"}, Actor: player(8),
			Verb: api.VerbLang, Args: []string{"fr"}, Private: true}); r[0].Text != i18n.T("fr", "note.lang_player") {
			t.Errorf("lang without a table: %+v", r)
		}
		if r, _ := h2.svc.Handle(context.Background(), api.Command{Actor: player(8), Verb: api.VerbHelp}); !strings.HasPrefix(r[0].Text, i18n.T("fr", "help.title")) {
			t.Errorf("help after lang fr: %q", r[0].Text)
		}
	})
}

// An announcement does not make the announcer's card buttons stale; a double click is applied
// once, and a button of a finished game is refused.
func TestAnnouncingKeepsTheCardButtons(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mem.New())
		defer h.svc.Close()
		ps := fourHumans(t, h, "timer=none", "stripes=20")
		var oldCall *api.Button // a call button of game 1, not pressed
		var oldCaller api.Player
		called, checkedOld := false, false
		for moves := 0; moves < 2000 && !(called && checkedOld); moves++ {
			synctest.Wait()
			if game, _ := h.svc.HeldCards(h.svc.TableAt(h.place)); game >= 2 && oldCall != nil && !checkedOld {
				checkedOld = true
				if e := errText(h.press(oldCaller, *oldCall)); !strings.Contains(e, "old") {
					t.Errorf("a call button of game 1 pressed in game %d: %q", game, e)
				}
			}
			p, m := h.toMove(ps)
			if b, ok := firstButton(m, api.VerbTrump, true); ok {
				if e := errText(h.press(p, b)); e != "" {
					t.Fatal(e)
				}
				continue
			}
			card, _ := firstButton(m, api.VerbPlay, true)
			call, canCall := firstButton(m, api.VerbAnnounce, true)
			game, _ := h.svc.HeldCards(h.svc.TableAt(h.place))
			switch {
			case canCall && game == 1 && oldCall == nil:
				oldCall, oldCaller = &call, p // keep it, and play without calling
			case canCall && !called:
				called = true
				if e := errText(h.press(p, call)); e != "" {
					t.Fatalf("calling %s: %s", call.Label, e)
				}
				// The card button of the same message, pressed a moment later.
				if e := errText(h.press(p, card)); e != "" {
					t.Fatalf("the card button after announcing: %s", e)
				}
				if e := errText(h.press(p, card)); !strings.Contains(e, "old") {
					t.Errorf("a double click on the card: %q", e)
				}
				continue
			}
			if e := errText(h.press(p, card)); e != "" {
				t.Fatal(e)
			}
		}
		if !called || !checkedOld {
			t.Fatalf("called %v, checked an old call button %v", called, checkedOld)
		}
	})
}

// failingStore fails the commits that match, a number of times.
type failingStore struct {
	*mem.Store
	mu     sync.Mutex
	match  func(Change) bool
	left   int
	failed int
}

func (f *failingStore) fails() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.failed
}

func (f *failingStore) Commit(ctx context.Context, c Change) error {
	f.mu.Lock()
	if f.left > 0 && f.match(c) {
		f.left--
		f.failed++
		f.mu.Unlock()
		return errors.New("disk hiccup")
	}
	f.mu.Unlock()
	return f.Store.Commit(ctx, c)
}

// A failed commit of a computer player's move or of a timeout is tried again later: a passing
// disk error never freezes a table.
func TestBackgroundCommitsAreRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &failingStore{Store: mem.New(), left: 3,
			match: func(c Change) bool { return strings.HasPrefix(c.Log.Actor, "robot:") }}
		h := newHarness(t, store.Store, func(c *Config) { c.Store = store })
		defer h.svc.Close()
		me := player(1)
		h.do(me, api.VerbNew, "timer=none")
		h.do(me, api.VerbDeal)
		// Play until the failures have happened, letting time pass for the retries (they back
		// off: 250 ms, 500 ms, 1 s).
		for i := 0; store.fails() < 3 && i < 100; i++ {
			synctest.Wait()
			if m, ok := h.out.latest(api.KindHand, me.ID); ok && (strings.Contains(m.Text, "▶") || strings.Contains(m.Text, "forehand")) {
				b, _ := firstButton(m, api.VerbPlay, true)
				if tb, ok := firstButton(m, api.VerbTrump, true); ok {
					b = tb
				}
				h.press(me, b)
			}
			time.Sleep(2 * time.Second)
		}
		h.playAsHuman(me, 10000)
		if !h.over() || store.fails() != 3 {
			t.Fatalf("over %v after %d failed computer commits", h.over(), store.fails())
		}

		// A timeout whose commit fails is retried too.
		store2 := &failingStore{Store: mem.New(), left: 2, match: func(c Change) bool { return c.Log.Verb == api.VerbTimeout }}
		h2 := newHarness(t, store2.Store, func(c *Config) { c.Store = store2 })
		defer h2.svc.Close()
		fourHumans(t, h2, "timer=fast")
		time.Sleep(25 * time.Second)
		synctest.Wait()
		reminded := false
		for _, m := range h2.out.all() {
			reminded = reminded || m.Target.Kind == api.ToPlayer && m.Kind == api.KindNotice
		}
		if !reminded || store2.fails() != 2 {
			t.Errorf("reminded %v after %d failed timeout commits", reminded, store2.fails())
		}
	})
}

// playToTheEnd plays the solo table's match with the first legal button.
func playToTheEnd(t *testing.T) (*harness, api.Player, string) {
	t.Helper()
	h, me := soloTable(t)
	id := h.svc.TableAt(h.place)
	h.playAsHuman(me, 10000)
	if !h.over() {
		t.Fatal("match not over")
	}
	return h, me, id
}

// A finished match waits a day for a rematch, then its table closes, its buttons are refused and
// it leaves memory.
func TestAFinishedTableClosesAfterADay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, me, id := playToTheEnd(t)
		defer h.svc.Close()
		live, _ := h.out.latest(api.KindLive, "")
		rematch, ok := firstButton(live, api.VerbRematch, false)
		if !ok {
			t.Fatalf("no rematch button: %+v", live.Buttons)
		}
		time.Sleep(23 * time.Hour)
		synctest.Wait()
		if st, _ := h.svc.Status(id); st != api.StatusOver {
			t.Fatalf("after 23 h the table is %q", st)
		}
		time.Sleep(2 * time.Hour)
		synctest.Wait()
		if n := h.svc.Tables(); n != 0 {
			t.Errorf("%d tables in memory after the finished one closed", n)
		}
		if h.store.Closed() != 1 {
			t.Errorf("the store keeps %d closed tables", h.store.Closed())
		}
		final, _ := h.out.latest(api.KindLive, "")
		if len(final.Buttons) != 0 || !strings.Contains(final.Text, i18n.T("en", "live.closed")) {
			t.Errorf("the table message after closing: %q with %d button rows", final.Text, len(final.Buttons))
		}
		if e := errText(h.press(me, rematch)); e != i18n.T("en", "err.closed") {
			t.Errorf("rematch on a closed table: %q", e)
		}
		// Resuming loads no closed table.
		if n := resumed(t, h.store).svc.Tables(); n != 0 {
			t.Errorf("resume loaded %d closed tables", n)
		}
	})
}

// A new table closes the finished one it replaces: its old Rematch button cannot bring back a
// second live table.
func TestANewTableClosesTheFinishedOne(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, me, old := playToTheEnd(t)
		defer h.svc.Close()
		live, _ := h.out.latest(api.KindLive, "")
		rematch, _ := firstButton(live, api.VerbRematch, false)
		if e := errText(h.do(player(2), api.VerbNew)); e != "" {
			t.Fatalf("new after a finished match: %s", e)
		}
		synctest.Wait()
		if cur := h.svc.TableAt(h.place); cur == old || cur == "" {
			t.Fatalf("the place's table is %q (old %q)", cur, old)
		}
		if e := errText(h.press(me, rematch)); e != i18n.T("en", "err.closed") {
			t.Errorf("the old table's Rematch: %q", e)
		}
		if n := h.svc.Tables(); n != 1 {
			t.Errorf("%d tables live in one place", n)
		}
	})
}

// A command sent in a group acts only on that group's table, and administering a group counts
// only there.
func TestCommandsStayInTheirPlace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mem.New())
		defer h.svc.Close()
		h.do(player(1), api.VerbNew, "timer=none")
		lobby, _ := h.out.latest(api.KindLobby, "")
		join, _ := firstButton(lobby, api.VerbJoin, false)
		elsewhere := api.Place{Platform: "test", Chat: "g2"}
		cmd := join.Action.Command(elsewhere, player(2), "x1", false)
		if e := errText(h.svc.Handle(context.Background(), cmd)); e != i18n.T("en", "err.other_place") {
			t.Errorf("a join button pressed in another group: %q", e)
		}
		deal, _ := firstButton(lobby, api.VerbDeal, false)
		cmd = deal.Action.Command(elsewhere, player(3), "x2", true)
		cmd.Admin = true // an admin of some other place, pressing in private
		if e := errText(h.svc.Handle(context.Background(), cmd)); e != i18n.T("en", "err.not_seated") {
			t.Errorf("an admin of another place dealing: %q", e)
		}
		cmd = deal.Action.Command(h.place, player(3), "x3", false)
		cmd.Admin = true // this place's admin may deal without a seat
		if e := errText(h.svc.Handle(context.Background(), cmd)); e != "" {
			t.Errorf("this place's admin dealing: %q", e)
		}
	})
}

// After the retention period a closed table's state, log and table-scoped KV keys are gone; the
// match record stays.
func TestClosedTablesArePrunedAfterRetention(t *testing.T) {
	ctx := t.Context()
	synctest.Test(t, func(t *testing.T) {
		store := mem.New()
		h := resumed(t, store, withKV)
		me := player(1)
		h.do(me, api.VerbNew, "timer=none")
		h.do(me, api.VerbDeal)
		h.playAsHuman(me, 40)
		id := h.svc.TableAt(h.place)
		for _, k := range []string{id, id + "/live/m1/1", "x" + id, "tg:1"} {
			store.Put(ctx, "adapter", k, []byte("v"))
		}
		h.do(me, api.VerbLang, "de") // a person's setting: not the table's
		if e := errText(h.do(me, api.VerbStop)); e != "" {
			t.Fatal(e)
		}
		synctest.Wait()
		kv := store.KVLen()
		time.Sleep(29 * 24 * time.Hour)
		synctest.Wait()
		if store.Closed() != 1 || len(store.Log(id)) == 0 {
			t.Fatalf("pruned before the retention period: %d closed", store.Closed())
		}
		time.Sleep(2 * 24 * time.Hour)
		synctest.Wait()
		if store.Closed() != 0 || len(store.Log(id)) != 0 {
			t.Errorf("after 31 days: %d closed tables, %d log entries", store.Closed(), len(store.Log(id)))
		}
		if n := store.KVLen(); n != kv-2 {
			t.Errorf("KV entries %d → %d, want the table's 2 gone", kv, n)
		}
		for _, k := range []string{"x" + id, "tg:1"} {
			if _, ok, _ := store.Get(ctx, "adapter", k); !ok {
				t.Errorf("pruning took %q", k)
			}
		}
		records := 0
		store.Records(ctx, func(string, []byte) error { records++; return nil })
		if records != 1 {
			t.Errorf("%d match records kept, want the stopped match's", records)
		}
	})
}

// The kept match is small: its compact games and the seats, nothing else.
func TestStoredMatchIsCompact(t *testing.T) {
	ctx := t.Context()
	synctest.Test(t, func(t *testing.T) {
		h, _, id := playToTheEnd(t)
		defer h.svc.Close()
		var data []byte
		h.store.Records(ctx, func(k string, d []byte) error {
			if k != StoredKey(id, 1) {
				t.Errorf("record key %q", k)
			}
			data = d
			return nil
		})
		rec, m, err := ParseStoredMatch(data)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) > 320+90*len(rec.Games) || rec.Seats[0].Name != player(1).Name || rec.Stopped || !m.Over() {
			t.Errorf("%d bytes for %d games; seats %+v", len(data), len(rec.Games), rec.Seats)
		}
		if w, _ := m.Winner(); w != core.TeamA && w != core.TeamB {
			t.Error("no winner")
		}
	})
}

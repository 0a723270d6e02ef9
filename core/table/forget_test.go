package table

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kontermatt/kontermatt/core/league"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// TestForgetLeavesEveryTable: the person forgotten leaves the tables they sit at — a computer
// takes their seat in a game, a lobby seat is freed, a guided game of theirs closes — and no
// table, closed or not, remembers their presses; what an adapter registered about them goes, as
// do their keys at a table still played, and every key of the closed tables they sat at. Others'
// keys stay.
func TestForgetLeavesEveryTable(t *testing.T) {
	ctx := t.Context()
	synctest.Test(t, func(t *testing.T) {
		store := mem.New()
		people := People{Platform: "test", Prefix: "p", Buckets: []string{"test.blocked"}}
		h := newHarness(t, store, withKV, func(c *Config) { c.People = []People{people} })
		defer h.svc.Close()
		ann, eve := player(1), player(2) // eve's key on the platform is "2"
		do := func(place api.Place, p api.Player, v api.Verb, args ...string) {
			t.Helper()
			if e := errText(h.svc.Handle(context.Background(), api.Command{Place: place, Actor: p, Verb: v, Args: args})); e != "" {
				t.Fatalf("%s %s: %s", p.Name, v, e)
			}
		}
		game, lobby, closed := api.Place{Platform: "test", Chat: "g1"}, api.Place{Platform: "test", Chat: "g2"}, api.Place{Platform: "test", Chat: "g3"}
		do(closed, ann, api.VerbNew, "timer=none")
		do(closed, eve, api.VerbJoin)
		closedID := h.svc.TableAt(closed)
		do(closed, ann, api.VerbStop) // Ann alone votes; Eve's vote is needed too
		do(closed, eve, api.VerbStop)
		do(game, ann, api.VerbNew, "timer=none")
		do(game, eve, api.VerbJoin)
		do(game, ann, api.VerbDeal)
		gameID := h.svc.TableAt(game)
		do(lobby, ann, api.VerbNew, "timer=none")
		do(lobby, eve, api.VerbJoin)
		lobbyID := h.svc.TableAt(lobby)
		private := api.Place{Platform: "test", Chat: "2"}
		if e := errText(h.svc.Handle(context.Background(), api.Command{Place: private, Actor: eve, Verb: api.VerbLearn, Private: true})); e != "" {
			t.Fatal(e)
		}
		learnID := h.svc.TableAt(private)
		synctest.Wait()
		for _, e := range []KVEntry{
			{Bucket: "test.blocked", Key: "2", Value: []byte("1")},
			{Bucket: "test.blocked", Key: "1", Value: []byte("1")},
			{Bucket: "test.hand", Key: gameID + "/2", Value: []byte("k")},
			{Bucket: "test.msg", Key: gameID + "/hand/m1/1/p2", Value: []byte("k")},
			{Bucket: "test.hand", Key: gameID + "/1", Value: []byte("k")},
			{Bucket: "test.msg", Key: gameID + "/live/m1/1", Value: []byte("k")},
			{Bucket: "test.told", Key: closedID + "/1", Value: []byte("1")},
		} {
			_ = store.Put(ctx, e.Bucket, e.Key, e.Value)
		}

		if _, err := h.svc.Forget(ctx, eve.ID); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		seats := func(id string) [4]SeatState {
			tb, ok := h.svc.index.get(id)
			if !ok {
				t.Fatalf("table %s is not in memory", id)
			}
			tb.mu.Lock()
			defer tb.mu.Unlock()
			for k := range tb.st.Acted {
				if strings.HasPrefix(k, eve.ID+"/") {
					t.Errorf("table %s remembers Eve's presses: %v", id, tb.st.Acted)
				}
			}
			return tb.st.Seats
		}
		if s := seats(gameID); !s[1].Robot || s[1].Player != nil {
			t.Errorf("Eve's seat in the game: %+v, want a computer", s[1])
		}
		if s := seats(lobbyID); !s[1].Empty() {
			t.Errorf("Eve's lobby seat: %+v, want free", s[1])
		}
		if _, ok := h.svc.Status(learnID); ok {
			t.Error("Eve's guided game is still open")
		}
		_ = store.ClosedTables(ctx, func(id string, data []byte) error {
			if strings.Contains(string(data), eve.ID) || strings.Contains(string(data), eve.Name) {
				t.Errorf("closed table %s still names Eve: %s", id, data)
			}
			return nil
		})
		for _, id := range []string{closedID, gameID, lobbyID, learnID} {
			for _, l := range store.Log(id) {
				if l.Actor == eve.ID {
					t.Errorf("table %s's log names Eve: %+v", id, l)
				}
			}
		}
		for _, k := range []struct {
			bucket, key string
			kept        bool
		}{
			{"test.blocked", "2", false}, {"test.blocked", "1", true},
			{"test.hand", gameID + "/2", false}, {"test.msg", gameID + "/hand/m1/1/p2", false},
			{"test.hand", gameID + "/1", true}, {"test.msg", gameID + "/live/m1/1", true},
			{"test.told", closedID + "/1", false}, // the closed table's keys go with it
		} {
			if _, ok, _ := store.Get(ctx, k.bucket, k.key); ok != k.kept {
				t.Errorf("%s %s: kept %v, want %v", k.bucket, k.key, ok, k.kept)
			}
		}
		// The game goes on without her.
		if e := errText(h.do(ann, api.VerbBoard)); e != "" {
			t.Errorf("the game after Eve was forgotten: %s", e)
		}
	})
}

// TestForgetsAtOnceForgetBoth: two people forgotten at the same moment are both gone from every
// record (each Forget writes back the records it read: run together, the second put the first's
// name back).
func TestForgetsAtOnceForgetBoth(t *testing.T) {
	ctx := t.Context()
	clk := &clock{now: time.Date(2026, 11, 2, 20, 0, 0, 0, league.Zone)}
	store := mem.New()
	h, people := leagueHarness(t, store, clk)
	playSeason(t, h, clk, people, 12, 5)
	for round := range 20 {
		a, b := people[round%5], people[(round+1)%5]
		var wg sync.WaitGroup
		for _, p := range []api.Player{a, b} {
			wg.Go(func() {
				if _, err := h.svc.Forget(ctx, p.ID); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		_ = store.Records(ctx, func(key string, data []byte) error {
			for _, p := range []api.Player{a, b} {
				if strings.Contains(string(data), `"`+p.ID+`"`) {
					t.Fatalf("round %d: record %s names %s again", round, key, p.Name)
				}
			}
			return nil
		})
		// They play again, to be forgotten again in a later round.
		playSeason(t, h, clk, people, 1, uint64(round))
	}
}

// forgetFailing is a store whose Forget makes its changes and then fails as an etcd store may:
// first with the cluster out of reach before its compaction, then with a compaction it may not
// do (ForgetPending).
type forgetFailing struct {
	*mem.Store
	calls int
	by    time.Time
}

func (f *forgetFailing) Forget(ctx context.Context, fg Forgetting) error {
	if err := f.Store.Forget(ctx, fg); err != nil {
		return err
	}
	f.calls++
	if f.calls == 1 {
		return fmt.Errorf("the changes are made, but the cluster was not compacted: %w", ErrUnavailable)
	}
	return &ForgetPending{By: f.by, Cause: errors.New("etcdserver: permission denied")}
}

// TestForgetTellsTheTruth (issue 32): a forget whose store made changes and then failed never says
// "nothing was changed"; it asks for forget yes again. One the store finished but for older
// versions its compaction removes later says done, and the exact time by which they go.
func TestForgetTellsTheTruth(t *testing.T) {
	store := &forgetFailing{Store: mem.New(), by: time.Date(2026, 12, 2, 15, 4, 0, 0, time.UTC)}
	h := newHarness(t, store.Store, func(c *Config) { c.Store, c.KV = store, store })
	defer h.svc.Close()
	eve := player(2)
	private := api.Place{Platform: "test", Chat: "2"}
	forget := func() string {
		t.Helper()
		r, _ := h.svc.Handle(context.Background(), api.Command{Place: private, Actor: eve, Verb: api.VerbForget, Args: []string{"yes"}, Private: true})
		if len(r) != 1 {
			t.Fatalf("forget yes answers %+v", r)
		}
		return r[0].Text
	}
	if text := forget(); strings.Contains(text, "nothing was changed") || !strings.Contains(text, "/forget yes") {
		t.Errorf("forget whose store failed after its changes answers %q", text)
	}
	if text := forget(); !strings.HasPrefix(text, "Done") || !strings.Contains(text, "2026-12-02 15:04 UTC") {
		t.Errorf("forget whose store compacts later answers %q", text)
	}
}

// TestPrivateButtonOnlyForOwnSeat (issue 32): a join button pressed (or forged) in a private chat
// with a group's table in it does not seat the person there; a table answers only where it
// lives, and a private chat only for the person's own seat there (their hand's buttons work).
func TestPrivateButtonOnlyForOwnSeat(t *testing.T) {
	h := newHarness(t, mem.New())
	defer h.svc.Close()
	ann, bob, eve := player(1), player(2), player(5)
	for _, c := range []api.Command{{Actor: ann, Verb: api.VerbNew, Args: []string{"timer=none"}}, {Actor: bob, Verb: api.VerbJoin}} {
		c.Place = h.place
		if e := errText(h.svc.Handle(context.Background(), c)); e != "" {
			t.Fatalf("%s: %s", c.Verb, e)
		}
	}
	id := h.svc.TableAt(h.place)
	strangers := api.Place{Platform: "test", Chat: "5"}
	r, _ := h.svc.Handle(context.Background(), api.Command{Place: strangers, Actor: eve, Verb: api.VerbJoin, Table: id, Args: []string{"4"}, Private: true})
	if errText(r) == "" {
		t.Errorf("a join pressed in a private chat was taken: %+v", r)
	}
	if v, _ := h.svc.Seen(context.Background(), id, eve); v.Reader.Valid() {
		t.Errorf("Eve sits at seat %d of the group's table after pressing join in her private chat", v.Reader)
	}
	// Bob's own seat answers his private chat.
	bobs := api.Place{Platform: "test", Chat: "2"}
	if e := errText(h.svc.Handle(context.Background(), api.Command{Place: bobs, Actor: bob, Verb: api.VerbLeave, Table: id, Private: true})); e != "" {
		t.Errorf("Bob leaving his seat from his private chat: %s", e)
	}
}

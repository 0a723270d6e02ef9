package storage_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/core/league"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage"
)

// The person forgotten in TestForgetLeavesNoCopy, as a Telegram adapter would name them.
const (
	eveKey  = "987654321" // her Telegram user ID, and her private chat's
	eveName = "Evelyn Quarendon"
)

// chatPeople is how the test's adapter keeps people, as the Telegram adapter registers it.
var chatPeople = table.People{Platform: "telegram", Prefix: "tg:", Buckets: []string{"telegram.blocked", "telegram.pending"}}

// forgetWorld is a service on bbolt where Eve and three others played: two finished matches at a
// table that then closed, a lobby she sits in, a match she is playing, and a guided game in her
// private chat; the adapter keeps notes about her by her key and at those tables.
type forgetWorld struct {
	path             string
	store            *storage.Store
	svc              *table.Service
	clk              *tabletest.Clock
	eve              api.Player
	others           []api.Player
	closed, playing  string // table IDs
	lobby, learn     string
	recordsBefore    int
	ratingsOfOthers  map[string]bool
	playingPlace     api.Place
	othersPlayingKey string // another player's note at the playing table, which must stay
}

func newForgetWorld(t testing.TB) *forgetWorld {
	ctx := t.Context()
	t.Helper()
	w := &forgetWorld{path: filepath.Join(t.TempDir(), "kontermatt.db"),
		clk: tabletest.NewClock(time.Date(2026, 3, 1, 18, 0, 0, 0, time.UTC))}
	var err error
	if w.store, err = storage.Open(w.path, storage.Options{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.store.Close() })
	w.svc = tabletest.New(table.Config{Store: w.store, KV: w.store, Seed: 5, Now: w.clk.Now, Robots: tabletest.RandomRobots,
		People: []table.People{chatPeople}})
	t.Cleanup(w.svc.Close)
	w.eve = api.Player{ID: "tg:" + eveKey, Name: eveName, Locale: "de"}
	for i, n := range []string{"Ann", "Bob", "Cid"} {
		w.others = append(w.others, api.Player{ID: fmt.Sprintf("tg:10%d", i), Name: n, Locale: "en"})
	}
	ann := w.others[0]
	people := []api.Player{ann, w.eve, w.others[1], w.others[2]}
	do := func(c api.Command) {
		t.Helper()
		if r, _ := w.svc.Handle(context.Background(), c); len(r) > 0 && r[0].Kind == api.KindError {
			t.Fatalf("%s by %s: %s", c.Verb, c.Actor.Name, r[0].Text)
		}
	}
	open := func(place api.Place, deal bool) tabletest.Table {
		tt := tabletest.Table{Place: place, Players: people}
		do(api.Command{Place: place, Actor: ann, Verb: api.VerbNew, Args: []string{"timer=none", "stripes=2"}})
		for _, p := range people[1:] {
			do(api.Command{Place: place, Actor: p, Verb: api.VerbJoin})
		}
		if deal {
			do(api.Command{Place: place, Actor: ann, Verb: api.VerbDeal})
		}
		tt.ID = w.svc.TableAt(place)
		return tt
	}
	step := func(tt tabletest.Table) {
		t.Helper()
		w.clk.Add(2 * time.Second)
		if _, err := tabletest.Step(w.svc, tt); err != nil {
			t.Fatal(err)
		}
	}
	playOut := func(tt tabletest.Table) {
		for st, _ := w.svc.Status(tt.ID); st == api.StatusPlaying; st, _ = w.svc.Status(tt.ID) {
			step(tt)
		}
	}
	do(api.Command{Place: api.Place{Platform: "telegram", Chat: eveKey}, Actor: w.eve, Verb: api.VerbLang, Args: []string{"de"}, Private: true})

	group := api.Place{Platform: "telegram", Chat: "-100200", Title: "Konter club"}
	tt := open(group, true)
	w.closed = tt.ID
	playOut(tt)
	step(tt) // the rematch
	playOut(tt)
	tt = open(group, false) // closes the finished table; Eve sits in the new lobby
	w.lobby = tt.ID

	w.playingPlace = api.Place{Platform: "telegram", Chat: "-100300", Title: "Café"}
	tt = open(w.playingPlace, true)
	w.playing = tt.ID
	for range 9 {
		step(tt)
	}

	private := api.Place{Platform: "telegram", Chat: eveKey}
	do(api.Command{Place: private, Actor: w.eve, Verb: api.VerbLearn, Private: true})
	w.learn = w.svc.TableAt(private)
	w.svc.Settle(context.Background())

	// What the adapter keeps about Eve: by her key, and at the tables.
	held := `[{"text":"🂠 Deine Karten, ` + eveName + `","table":"` + w.playing + `"}]`
	w.othersPlayingKey = w.playing + "/101"
	for _, e := range []struct{ bucket, key, value string }{
		{"telegram.blocked", eveKey, "1"},
		{"telegram.pending", eveKey, held},
		{"telegram.told", w.closed + "/" + eveKey, "1"},
		{"telegram.msg", w.closed + "/hand/m2/1/tg:" + eveKey, `{"Chat":"` + eveKey + `","ID":"7"}`},
		{"telegram.hand", w.playing + "/" + eveKey, w.playing + "/hand/m1/1/tg:" + eveKey},
		{"telegram.msg", w.playing + "/hand/m1/1/tg:" + eveKey, `{"Chat":"` + eveKey + `","ID":"9"}`},
		{"telegram.hand", w.othersPlayingKey, w.playing + "/hand/m1/1/tg:101"},
		{"telegram.msg", w.learn + "/live/m1/1", `{"Chat":"` + eveKey + `","ID":"11"}`},
	} {
		if err := w.store.Put(ctx, e.bucket, e.key, []byte(e.value)); err != nil {
			t.Fatal(err)
		}
	}
	w.ratingsOfOthers = map[string]bool{}
	for _, p := range w.others {
		_, ok, _ := w.store.Get(ctx, league.BucketRatings, p.ID)
		w.ratingsOfOthers[p.ID] = ok
	}
	_ = w.store.Records(ctx, func(string, []byte) error { w.recordsBefore++; return nil })
	return w
}

// forget says "forget yes" as Eve, in her private chat.
func (w *forgetWorld) forget(t testing.TB) string {
	t.Helper()
	r, _ := w.svc.Handle(context.Background(), api.Command{Place: api.Place{Platform: "telegram", Chat: eveKey},
		Actor: w.eve, Verb: api.VerbForget, Args: []string{"yes"}, Private: true})
	if len(r) != 1 || r[0].Kind == api.KindError {
		t.Fatalf("forget yes answered %+v", r)
	}
	return r[0].Text
}

// hits counts where a file shows Eve's name or her numeric ID.
func hits(t testing.TB, path string) map[string]int {
	t.Helper()
	return tabletest.Traces(t, path, eveKey, eveName, "Quarendon")
}

// TestForgetLeavesNoCopy: after "forget yes", neither the database file nor a backup taken then
// holds Eve's name or her numeric ID anywhere — not her finished matches' records, the closed
// table and its log, the tables she was sitting at, the adapter's notes about her, her settings,
// nor the pages bbolt freed when all that was rewritten. Everyone else's results, notes and
// tables stay. (Before, the file and every backup still held her ID 45 times and her name 15:
// freed pages, the closed table, the adapter's buckets, the tables she sat at.)
func TestForgetLeavesNoCopy(t *testing.T) {
	ctx := t.Context()
	w := newForgetWorld(t)
	if h := hits(t, w.path); h[eveKey] == 0 || h[eveName] == 0 {
		t.Fatalf("the test's world does not name Eve: %v", h)
	}
	text := w.forget(t)
	t.Log(text)

	backup := filepath.Join(t.TempDir(), "backup.db")
	if err := w.store.BackupFile(backup); err != nil {
		t.Fatal(err)
	}
	var streamed bytes.Buffer
	if _, err := w.store.Backup(&streamed); err != nil {
		t.Fatal(err)
	}
	streamedPath := filepath.Join(t.TempDir(), "streamed.db")
	if err := os.WriteFile(streamedPath, streamed.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{w.path, backup, streamedPath} {
		if h := hits(t, f); len(h) > 0 {
			t.Errorf("%s still shows Eve: %v", filepath.Base(f), h)
		}
	}

	// The others' matches, ratings and notes stay; the tables go on without her.
	records := 0
	_ = w.store.Records(ctx, func(string, []byte) error { records++; return nil })
	if records < w.recordsBefore {
		t.Errorf("%d records after, %d before", records, w.recordsBefore)
	}
	for id, had := range w.ratingsOfOthers {
		if _, ok, _ := w.store.Get(ctx, league.BucketRatings, id); ok != had {
			t.Errorf("%s's rating: kept %v, had one %v", id, ok, had)
		}
	}
	if _, ok, _ := w.store.Get(ctx, "telegram.hand", w.othersPlayingKey); !ok {
		t.Error("Ann's note at the table being played went too")
	}
	if st, ok := w.svc.Status(w.playing); !ok || st != api.StatusPlaying {
		t.Errorf("the match Eve was playing is %v (in memory %v), want playing on", st, ok)
	}
	if _, ok := w.svc.Status(w.learn); ok {
		t.Error("Eve's guided game is still open without her")
	}
	if st, _ := w.svc.Status(w.lobby); st != api.StatusLobby {
		t.Errorf("the lobby Eve left is %v", st)
	}
	// The store goes on in its new file: it holds the lock, commits, and reopens.
	if _, err := storage.Open(w.path, storage.Options{Timeout: 50 * time.Millisecond}); !errors.Is(err, storage.ErrLocked) {
		t.Errorf("a second Open of the compacted file: %v, want ErrLocked", err)
	}
	tt := tabletest.Table{ID: w.playing, Place: w.playingPlace, Players: w.others}
	for {
		w.svc.Settle(context.Background()) // the computer in Eve's seat
		if st, _ := w.svc.Status(w.playing); st != api.StatusPlaying {
			break
		}
		w.clk.Add(2 * time.Second)
		if _, err := tabletest.Step(w.svc, tt); err != nil {
			t.Fatal(err)
		}
	}
	w.svc.Close()
	if err := w.store.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := storage.Open(w.path, storage.Options{})
	if err != nil {
		t.Fatalf("reopening after the compaction: %v", err)
	}
	defer again.Close()
	n := 0
	_ = again.Records(ctx, func(key string, _ []byte) error {
		if strings.HasPrefix(key, w.playing+"/") {
			n++
		}
		return nil
	})
	if n != 1 {
		t.Errorf("the match played on after the forget has %d records, want 1", n)
	}
}

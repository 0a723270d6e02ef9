package keeper_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/league"
	"github.com/kontermatt/kontermatt/core/league/keeper"
	"github.com/kontermatt/kontermatt/core/picture"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// The keeper through the engine's League port (table.League), as the engine calls it: on a
// memory store, the engine's Store and KV port. Matches are played with the core's rules.

var (
	cafe  = api.Place{Platform: "telegram", Chat: "-100", Title: "Café"}
	other = api.Place{Platform: "discord", Chat: "7", Thread: "8"}
	names = []string{"Ann", "Ben", "Cleo", "Dan"}
	ended = time.Date(2026, 11, 20, 21, 0, 0, 0, time.UTC)
)

// play plays a match of one stripe to its end with random legal moves (seeded), as the engine
// would have kept it.
func play(t *testing.T, seed uint64) *core.Match {
	t.Helper()
	rules := core.DefaultRules()
	rules.Stripes = 1
	m, err := core.NewMatch(rules, 0)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	for !m.Over() {
		g, err := m.Deal(core.DealHands(rng, m.NextDealer()))
		if err != nil {
			t.Fatal(err)
		}
		for g.Phase() != core.PhaseOver {
			s := g.ToMove()
			mv := core.NameTrump(s, core.Suits[rng.IntN(4)])
			if g.Phase() != core.PhaseTrump {
				cards := g.LegalCards(s).Cards()
				mv = core.Play(s, cards[rng.IntN(len(cards))])
			}
			if err := g.Apply(mv); err != nil {
				t.Fatal(err)
			}
		}
	}
	return m
}

// record is the kept match as the engine writes it (table.StoredMatch), of the people at place:
// its games in the engine's compact form, by way of the replay format (table.CompactRecord).
func record(t *testing.T, key string, place api.Place, seats [4]table.StoredSeat, m *core.Match) table.Record {
	t.Helper()
	full, err := json.Marshal(m.Record())
	if err != nil {
		t.Fatal(err)
	}
	_, data, err := table.CompactRecord(key+"/match", full, nil)
	if err != nil {
		t.Fatal(err)
	}
	var sm table.StoredMatch
	if err := json.Unmarshal(data, &sm); err != nil {
		t.Fatal(err)
	}
	sm.Place, sm.End, sm.Seats = place.Key(), ended.UnixMilli(), seats
	if data, err = json.Marshal(sm); err != nil {
		t.Fatal(err)
	}
	return table.Record{Key: key, Data: data}
}

func people(prefix string) [4]table.StoredSeat {
	var s [4]table.StoredSeat
	for i, n := range names {
		s[i] = table.StoredSeat{ID: prefix + n, Name: n}
	}
	return s
}

// end is a match end as the engine commits it: the update's entries written with the match,
// guarded by its Expect, then Done.
func end(t *testing.T, k *keeper.Keeper, st *mem.Store, rec table.Record, m *core.Match) error {
	t.Helper()
	u, err := k.Learn(t.Context(), rec, m)
	if err != nil {
		return err
	}
	err = st.Commit(t.Context(), table.Change{Records: []table.Record{rec}, KV: u.KV, Expect: u.Expect})
	u.Done(err == nil)
	return err
}

func TestMatch(t *testing.T) {
	m := play(t, 1)
	seats := people("tg:")
	seats[1].Away, seats[1].Forfeit = true, true                // kept before the level was kept with an absent seat
	seats[2] = table.StoredSeat{Name: "Robot", Robot: "strong"} // a computer player
	seats[3].Away, seats[3].Robot, seats[3].Absent = true, "easy", []int{1}
	sm := table.StoredMatch{Place: cafe.Key(), End: ended.UnixMilli(), Seats: seats, Hints: true}
	got := keeper.Match("t1/m1", sm, m)
	w, _ := m.Winner()
	if got.Key != "t1/m1" || got.Place != cafe.Key() || !got.End.Equal(ended) || !got.Hints || got.Winner != int(w) ||
		len(got.Games) != m.NumGames() {
		t.Errorf("match %+v", got)
	}
	want := [4]league.Seat{{ID: "tg:Ann", Name: "Ann"}, {ID: "tg:Ben", Name: "Ben", Robot: "normal", Away: true, Forfeit: true},
		{Name: "Robot", Robot: "strong"}, {ID: "tg:Dan", Name: "Dan", Robot: "easy", Away: true, Absent: []int{1}}}
	for i := range want {
		g := got.Seats[i]
		if g.ID != want[i].ID || g.Name != want[i].Name || g.Robot != want[i].Robot || g.Away != want[i].Away ||
			g.Forfeit != want[i].Forfeit || len(g.Absent) != len(want[i].Absent) {
			t.Errorf("seat %d: %+v, want %+v", i, g, want[i])
		}
	}
}

func TestLearn(t *testing.T) {
	t.Run("a match end teaches the league", func(t *testing.T) {
		st := mem.New()
		k := keeper.New(st, false, nil)
		m := play(t, 2)
		if err := end(t, k, st, record(t, "t1/m1", cafe, people("tg:"), m), m); err != nil {
			t.Fatal(err)
		}
		p := k.Cache.Place(t.Context(), cafe.Key())
		if p.Matches != 1 || len(p.Recent) != 1 || p.Recent[0].Key != "t1/m1" || len(p.Players) != 4 {
			t.Fatalf("the place's league: %+v", p)
		}
		for _, n := range names {
			if pl := p.Players["tg:"+n]; pl == nil || pl.Matches != 1 || pl.Games != m.NumGames() {
				t.Errorf("%s: %+v", n, pl)
			}
			if _, rated := k.Cache.Person(t.Context(), "tg:"+n); !rated {
				t.Errorf("%s has no rating across places", n)
			}
		}
		if got := k.Cache.Month(t.Context(), "2026-11"); len(got) != 1 || got[0] != cafe.Key() {
			t.Errorf("November's places %v", got)
		}
	})
	t.Run("not stored, not learned", func(t *testing.T) {
		st := mem.New()
		k := keeper.New(st, false, nil)
		m := play(t, 2)
		st.Fail = table.ErrUnavailable
		if err := end(t, k, st, record(t, "t1/m1", cafe, people("tg:"), m), m); !errors.Is(err, table.ErrUnavailable) {
			t.Fatalf("commit: %v", err)
		}
		if p := k.Cache.Place(t.Context(), cafe.Key()); p.Matches != 0 {
			t.Errorf("the league learned a match not stored: %+v", p)
		}
	})
	t.Run("a record that does not read", func(t *testing.T) {
		k := keeper.New(mem.New(), false, nil)
		if _, err := k.Learn(t.Context(), table.Record{Key: "t1/m1", Data: []byte("{")}, play(t, 2)); err == nil {
			t.Fatal("learned from a record that does not read")
		}
	})
	t.Run("two ends at once: the second learns again", func(t *testing.T) {
		// Ann plays at two places; both match ends are worked out from the league before
		// either is stored. The second's commit must fail (ErrConflict) rather than overwrite
		// the first's rating of Ann; learned again, it counts both.
		st := mem.New()
		k := keeper.New(st, false, nil)
		m1, m2 := play(t, 3), play(t, 4)
		r1 := record(t, "t1/m1", cafe, people("tg:"), m1)
		s2 := people("dc:")
		s2[0] = table.StoredSeat{ID: "tg:Ann", Name: "Ann"}
		r2 := record(t, "t2/m1", other, s2, m2)
		u1, err := k.Learn(t.Context(), r1, m1)
		if err != nil {
			t.Fatal(err)
		}
		u2, err := k.Learn(t.Context(), r2, m2)
		if err != nil {
			t.Fatal(err)
		}
		err = st.Commit(t.Context(), table.Change{Records: []table.Record{r1}, KV: u1.KV, Expect: u1.Expect})
		u1.Done(err == nil)
		if err != nil {
			t.Fatal(err)
		}
		err = st.Commit(t.Context(), table.Change{Records: []table.Record{r2}, KV: u2.KV, Expect: u2.Expect})
		u2.Done(err == nil)
		if !errors.Is(err, table.ErrConflict) {
			t.Fatalf("the second end overwrote the first: %v", err)
		}
		if err := end(t, k, st, r2, m2); err != nil {
			t.Fatal(err)
		}
		rebuilt, matches, skipped, err := keeper.Rebuild(t.Context(), st.Records)
		if err != nil || matches != 2 || skipped != 0 {
			t.Fatalf("rebuild: %d matches, %d skipped, %v", matches, skipped, err)
		}
		for _, e := range rebuilt {
			got, _, err := st.Get(t.Context(), e.Bucket, e.Key)
			if err != nil || !bytes.Equal(got, e.Value) {
				t.Errorf("%s/%s as learned:\n%s\nas rebuilt:\n%s", e.Bucket, e.Key, got, e.Value)
			}
		}
	})
}

// TestRebuild: the league made anew from the records is the league the match ends taught,
// and a record that does not read is skipped and counted.
func TestRebuild(t *testing.T) {
	st := mem.New()
	k := keeper.New(st, false, nil)
	for i, key := range []string{"t1/m1", "t1/m2", "t1/m3"} {
		m := play(t, uint64(10+i))
		if err := end(t, k, st, record(t, key, cafe, people("tg:"), m), m); err != nil {
			t.Fatal(err)
		}
	}
	broken := table.Change{Records: []table.Record{{Key: "t9/m1", Data: []byte("{")}}}
	if err := st.Commit(t.Context(), broken); err != nil {
		t.Fatal(err)
	}
	entries, buckets, err := k.Rebuild(t.Context(), st.Records)
	if err != nil || len(entries) == 0 {
		t.Fatalf("%d entries, %v", len(entries), err)
	}
	if len(buckets) != len(league.Buckets) {
		t.Errorf("buckets %v", buckets)
	}
	for _, e := range entries {
		got, _, _ := st.Get(t.Context(), e.Bucket, e.Key)
		if !bytes.Equal(got, e.Value) {
			t.Errorf("%s/%s as learned:\n%s\nas rebuilt:\n%s", e.Bucket, e.Key, got, e.Value)
		}
	}
	if _, matches, skipped, _ := keeper.Rebuild(t.Context(), st.Records); matches != 3 || skipped != 1 {
		t.Errorf("%d matches, %d skipped; want 3 and 1", matches, skipped)
	}
}

// outbox keeps what the league posts.
type outbox struct {
	mu   sync.Mutex
	msgs []api.Message
}

func (o *outbox) deliver(_ context.Context, platform string, msgs []api.Message) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, m := range msgs {
		if m.Target.Place.Platform != platform {
			panic("a message for " + m.Target.Place.Platform + " delivered to " + platform)
		}
	}
	o.msgs = append(o.msgs, msgs...)
}

// onlyKV is a KV without compare-and-swap (a table.Swapper): the keeper marks a month posted
// with Put there.
type onlyKV struct{ kv table.KV }

func (o onlyKV) Get(ctx context.Context, b, k string) ([]byte, bool, error) {
	return o.kv.Get(ctx, b, k)
}
func (o onlyKV) Put(ctx context.Context, b, k string, v []byte) error { return o.kv.Put(ctx, b, k, v) }
func (o onlyKV) Delete(ctx context.Context, b, k string) error        { return o.kv.Delete(ctx, b, k) }

func TestPostSeasons(t *testing.T) {
	dec3 := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	cases := []struct {
		name    string
		now     time.Time
		hidden  []string // people never shown
		posts   int      // how many posts in all, over two turns of the engine's lease
		noSwaps bool
	}{
		{name: "last month's table, once", now: dec3, posts: 1},
		{name: "on a KV without compare-and-swap, once too", now: dec3, posts: 1, noSwaps: true},
		{name: "not weeks later", now: time.Date(2026, 12, 8, 9, 0, 0, 0, time.UTC)},
		{name: "not in the same month", now: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)},
		{name: "nobody to rank", now: dec3, hidden: []string{"tg:Ann", "tg:Ben", "tg:Cleo", "tg:Dan"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := mem.New()
			var kv table.KV = st
			if tc.noSwaps {
				kv = onlyKV{st}
			}
			k := keeper.New(kv, false, nil)
			m := play(t, 5)
			if err := end(t, k, st, record(t, "t1/m1", cafe, people("tg:"), m), m); err != nil {
				t.Fatal(err)
			}
			out := &outbox{}
			hidden := func(id string) bool { return strings.Contains(strings.Join(tc.hidden, " "), id) }
			at := table.Posting{Now: tc.now, Hidden: hidden, Deliver: out.deliver,
				Lang: func(_ context.Context, key string) string { return map[string]string{cafe.Key(): "lb"}[key] }}
			k.PostSeasons(t.Context(), at)
			k.PostSeasons(t.Context(), at) // the lease's next turn, or another copy's
			if len(out.msgs) != tc.posts {
				t.Fatalf("%d posts, want %d: %+v", len(out.msgs), tc.posts, out.msgs)
			}
			if tc.posts == 0 {
				return
			}
			msg := out.msgs[0]
			if msg.Target.Kind != api.ToPlace || msg.Target.Place.Key() != cafe.Key() || msg.Lang != "lb" ||
				msg.Picture != api.PictureStandings || msg.Season != "2026-11" ||
				!strings.HasPrefix(msg.Text, i18n.T("lb", "season.final", league.MonthName("lb", "2026-11"))) {
				t.Errorf("the post: %+v", msg)
			}
			for _, n := range names {
				if !strings.Contains(msg.Text, n) {
					t.Errorf("the table lacks %s:\n%s", n, msg.Text)
				}
			}
		})
	}
}

func TestStandingsPicture(t *testing.T) {
	st := mem.New()
	k := keeper.New(st, false, nil)
	m := play(t, 6)
	if err := end(t, k, st, record(t, "t1/m1", cafe, people("tg:"), m), m); err != nil {
		t.Fatal(err)
	}
	hidden := func(id string) bool { return id == "tg:Ben" }
	for _, season := range []string{"all", "2026-11"} {
		png, alt, err := k.StandingsPicture(t.Context(), cafe, season, "de", picture.Theme(0), hidden)
		if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
			t.Fatalf("%s: %d bytes, %v", season, len(png), err)
		}
		if !strings.Contains(alt, "Café") || !strings.Contains(alt, "Ann") || strings.Contains(alt, "Ben") {
			t.Errorf("%s: the alt text %q", season, alt)
		}
	}
	for _, season := range []string{"", "last", "2026-13"} {
		if _, _, err := k.StandingsPicture(t.Context(), cafe, season, "en", picture.Theme(0), hidden); !errors.Is(err, table.ErrNoPicture) {
			t.Errorf("season %q: %v, want ErrNoPicture", season, err)
		}
	}
}

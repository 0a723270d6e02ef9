package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/league"
	"github.com/kontermatt/kontermatt/core/rating"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage"
)

// seatPlan is how a person plays a match: their turns of the first upTo games (0: all of
// them), then they leave the table, or (leave false) go silent until a computer plays for them.
type seatPlan struct {
	p     api.Player
	upTo  int
	leave bool
}

// playPlanned plays a match at place with options, people seated as planned (nil: a computer
// player), the person in seat 1 opening the table. With stopAfter > 0 everyone asks to stop once
// that many games are over. Computers and timers run on the bubble's clock.
func playPlanned(t *testing.T, svc *table.Service, place api.Place, options []string, seats [4]*seatPlan, stopAfter int) {
	t.Helper()
	do := func(p api.Player, v api.Verb, args ...string) {
		t.Helper()
		if r, _ := svc.Handle(context.Background(), api.Command{Place: place, Actor: p, Verb: v, Args: args}); len(r) > 0 && r[0].Kind == api.KindError {
			t.Fatalf("%s %s %v: %s", p.Name, v, args, r[0].Text)
		}
	}
	do(seats[0].p, api.VerbNew, append([]string{"timer=fast", "stripes=2"}, options...)...)
	for i, s := range seats[1:] {
		if s != nil {
			do(s.p, api.VerbJoin, strconv.Itoa(i+2))
		}
	}
	do(seats[0].p, api.VerbDeal)
	id := svc.TableAt(place)
	left := map[string]bool{}
	for moves := 0; ; moves++ {
		if moves > 100000 {
			t.Fatal("the match does not end")
		}
		synctest.Wait()
		if st, ok := svc.Status(id); !ok || st != api.StatusPlaying {
			return
		}
		game, _ := svc.HeldCards(id)
		if stopAfter > 0 && game > stopAfter {
			for _, s := range seats {
				if s != nil && !left[s.p.ID] {
					do(s.p, api.VerbStop)
				}
			}
			continue
		}
		who, legal, trump := svc.Turn(id)
		i := slices.IndexFunc(seats[:], func(s *seatPlan) bool { return s != nil && s.p.ID == who })
		switch {
		case i < 0: // a computer's turn, or nobody's
			time.Sleep(time.Second)
		case seats[i].upTo == 0 || game <= seats[i].upTo:
			verb, args := tabletest.Move(legal, trump)
			do(seats[i].p, verb, args...)
		case seats[i].leave:
			do(seats[i].p, api.VerbLeave)
			left[who] = true
		default: // silent: the timer marks them away
			time.Sleep(time.Second)
		}
	}
}

// exportedMatch is an exported match file as docs/records.md describes it, read here without the
// table package's types: the test reads the export as anyone would.
type exportedMatch struct {
	core.MatchRecord
	Key   string `json:"key"`
	Place string `json:"place"`
	End   string `json:"end"`
	Seats [4]struct {
		ID, Name, Robot     string
		Away, Left, Forfeit bool
		Absent              []int
	} `json:"seats"`
}

// TestExportRecomputesTheLeague plays matches at two places across a month's end — rated ones,
// one a person left, one a person was away for, one with hints, one stopped — then exports the
// database and makes the league anew from the export's match files alone, by the rules
// docs/records.md states: every place's statistics and tables, every month's, and everyone's
// rating across places come out exactly as the bot kept them.
func TestExportRecomputesTheLeague(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db := filepath.Join(t.TempDir(), "k.db")
		st, err := storage.Open(db, storage.Options{})
		if err != nil {
			t.Fatal(err)
		}
		offset := time.Until(time.Date(2026, 10, 30, 19, 0, 0, 0, time.UTC))
		now := func() time.Time { return time.Now().Add(offset) }
		svc := tabletest.New(table.Config{Store: st, KV: st, Seed: 11, Now: now, Robots: tabletest.RandomRobots})
		var p [6]api.Player
		for i, n := range []string{"Ann", "Bob", "Cy", "Dee", "Eve", "Fay"} {
			p[i] = api.Player{ID: "test:" + strconv.Itoa(100+i), Name: n, Locale: "en"}
		}
		all := func(ps ...api.Player) (out [4]*seatPlan) {
			for i, q := range ps {
				if q.ID != "" {
					out[i] = &seatPlan{p: q}
				}
			}
			return out
		}
		a, b := api.Place{Platform: "test", Chat: "a"}, api.Place{Platform: "test", Chat: "b"}
		next := func(at time.Time) { time.Sleep(at.Sub(now())) }
		playPlanned(t, svc, a, nil, all(p[0], p[1], p[2], p[3]), 0)
		next(time.Date(2026, 10, 31, 22, 30, 0, 0, time.UTC)) // 23:30 in Luxembourg: still October
		playPlanned(t, svc, a, []string{"level=strong"}, all(p[0], p[1], p[4]), 0)
		next(time.Date(2026, 11, 1, 19, 0, 0, 0, time.UTC))
		leaves := all(p[0], p[2], p[4], p[5])
		leaves[2].upTo, leaves[2].leave = 1, true // Eve leaves after the first game
		playPlanned(t, svc, a, []string{"level=easy"}, leaves, 0)
		next(time.Date(2026, 11, 2, 19, 0, 0, 0, time.UTC))
		away := all(p[1], api.Player{}, p[3])
		away[2].upTo = 1 // Dee goes silent after the first game
		playPlanned(t, svc, a, []string{"level=normal"}, away, 0)
		playPlanned(t, svc, b, []string{"hints=on"}, all(p[0], p[1], p[2], p[3]), 0)
		next(time.Date(2026, 11, 3, 19, 0, 0, 0, time.UTC))
		playPlanned(t, svc, b, []string{"stripes=7"}, all(p[0], p[1], p[2], p[3]), 1) // long enough to be stopped after its first game
		next(time.Date(2026, 11, 4, 19, 0, 0, 0, time.UTC))
		playPlanned(t, svc, b, nil, all(p[2], p[3], p[4], p[5]), 0)
		next(time.Date(2026, 11, 5, 19, 0, 0, 0, time.UTC))
		playPlanned(t, svc, a, nil, all(p[5], p[4], p[3], p[2]), 0)
		svc.Close()
		live := leagueEntries(t, st)
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}

		dir := t.TempDir()
		var stdout, stderr bytes.Buffer
		if code := run([]string{"export", "-db", db, dir}, nil, &stdout, &stderr); code != 0 {
			t.Fatalf("export: exit %d: %s", code, stderr.String())
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*-match.json"))
		if len(files) != 8 {
			t.Fatalf("%d match files exported, want 8", len(files))
		}
		type match struct {
			end time.Time
			lm  league.Match
		}
		var matches []match
		seen := map[string]bool{}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var e exportedMatch
			if err := json.Unmarshal(data, &e); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			m, err := core.ReplayMatch(e.MatchRecord)
			if err != nil {
				t.Fatalf("%s does not replay: %v", f, err)
			}
			end, err := time.Parse(time.RFC3339Nano, e.End)
			if err != nil {
				t.Fatalf("%s: end %q: %v", f, e.End, err)
			}
			var seats [4]league.Seat
			for i, s := range e.Seats {
				seats[i] = league.Seat{ID: s.ID, Name: s.Name, Robot: cmp.Or(s.Robot, "normal"), Away: s.Away, Left: s.Left,
					Forfeit: s.Forfeit, Absent: s.Absent}
				seen["left"] = seen["left"] || s.Left && s.Forfeit && len(s.Absent) > 0
				seen["away"] = seen["away"] || s.Away && s.Forfeit && len(s.Absent) > 0
			}
			_, won := m.Winner()
			seen["hints"] = seen["hints"] || e.Hints
			seen["stopped"] = seen["stopped"] || !won
			lm := league.FromCore(e.Key, e.Place, end, seats, m)
			lm.Hints = e.Hints
			matches = append(matches, match{end, lm})
		}
		for _, what := range []string{"left", "away", "hints", "stopped"} {
			if !seen[what] {
				t.Errorf("the export has no %s match: the test tests less than it says", what)
			}
		}
		slices.SortFunc(matches, func(x, y match) int { return cmp.Or(x.end.Compare(y.end), cmp.Compare(x.lm.Key, y.lm.Key)) })
		places := map[string]*league.Place{}
		people := map[string]rating.Rating{}
		for _, m := range matches {
			pl := places[m.lm.Place]
			if pl == nil {
				pl = league.NewPlace(m.lm.Place)
				places[m.lm.Place] = pl
			}
			pl.Add(m.lm, people)
		}

		// Every number the bot kept, made again from the export.
		for _, key := range []string{a.Key(), b.Key()} {
			var kept league.Place
			if err := json.Unmarshal([]byte(live[league.BucketPlaces+" "+key]), &kept); err != nil {
				t.Fatalf("the bot's league of %s: %v", key, err)
			}
			again := places[key]
			if again == nil {
				t.Fatalf("no match of %s in the export", key)
			}
			if got, want := placeJSON(t, again), placeJSON(t, &kept); got != want {
				t.Errorf("%s made from the export:\n%s\nthe bot kept:\n%s", key, got, want)
			}
			tables := map[string][2][]league.Standing{"all": {league.Rank(again.AllTime(), nil), league.Rank(kept.AllTime(), nil)}}
			for month := range kept.Seasons {
				tables[month] = [2][]league.Standing{league.Rank(again.SeasonTable(month), nil), league.Rank(kept.SeasonTable(month), nil)}
			}
			for which, tb := range tables {
				if !slices.Equal(tb[0], tb[1]) || len(tb[1]) == 0 {
					t.Errorf("%s, top %s: from the export %+v, the bot's %+v", key, which, tb[0], tb[1])
				}
			}
		}
		if len(people) < 6 {
			t.Errorf("%d people rated across places", len(people))
		}
		for id, r := range people {
			var kept rating.Rating
			if err := json.Unmarshal([]byte(live[league.BucketRatings+" "+id]), &kept); err != nil || kept != r {
				t.Errorf("%s across places: %v from the export, the bot kept %v (%v)", id, r, kept, err)
			}
		}
		for k := range live {
			if bucket, id, _ := strings.Cut(k, " "); bucket == league.BucketRatings && people[id] == (rating.Rating{}) {
				t.Errorf("the bot rated %s, the export nobody of that ID", id)
			}
		}
	})
}

// placeJSON is a place's league as JSON with its times in UTC, to compare two of them.
func placeJSON(t *testing.T, p *league.Place) string {
	t.Helper()
	c := *p
	c.Last = c.Last.UTC()
	c.Recent = slices.Clone(c.Recent)
	for i := range c.Recent {
		c.Recent[i].End = c.Recent[i].End.UTC()
	}
	data, err := json.MarshalIndent(c, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

package table

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/league"
	"github.com/kontermatt/kontermatt/core/rating"
)

// clock is a settable Now.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

// tally is what the test itself counts of a season, from what the chat was told, to check the
// league against: nothing here comes from core/league.
type tally struct {
	matches, won, games map[string]int
	rating              map[string]rating.Rating // every person's rating at this place, all time
	month               map[string]map[string]rating.Rating
	together            map[[2]string][2]int // partners (sorted IDs) → matches, won
	last                []string             // "Ann & Cid beat Bob & Dan", newest first
}

var matchWon = regexp.MustCompile(`Team ([AB]) \(.*\) wins the match after (\d+) games?!`)

// playSeason plays n matches of four people drawn from people at the harness's place, one a day
// from start, each to its end with random legal moves, and counts what the summaries say.
func playSeason(t *testing.T, h *harness, clk *clock, people []Player, n int, seed uint64) *tally {
	t.Helper()
	t.Logf("season seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 15))
	tl := &tally{matches: map[string]int{}, won: map[string]int{}, games: map[string]int{},
		rating: map[string]rating.Rating{}, month: map[string]map[string]rating.Rating{}, together: map[[2]string][2]int{}}
	get := func(book map[string]rating.Rating, id string) rating.Rating {
		if r, ok := book[id]; ok {
			return r
		}
		return league.Model.New()
	}
	for i := range n {
		seats := slices.Clone(people)
		rng.Shuffle(len(seats), func(a, b int) { seats[a], seats[b] = seats[b], seats[a] })
		seats = seats[:4]
		if e := errText(h.do(seats[0], VerbNew, "stripes=1", "timer=none")); e != "" {
			t.Fatalf("match %d: new: %s", i, e)
		}
		for s, p := range seats[1:] {
			if e := errText(h.do(p, VerbJoin, strconv.Itoa(s+2))); e != "" {
				t.Fatalf("match %d: join: %s", i, e)
			}
		}
		from := len(h.out.all())
		if e := errText(h.do(seats[0], VerbDeal)); e != "" {
			t.Fatalf("match %d: deal: %s", i, e)
		}
		id := h.svc.TableAt(h.place)
		for moves := 0; ; moves++ {
			who, legal, trump := h.svc.Turn(id)
			if who == "" {
				break
			}
			if moves > 2000 {
				t.Fatalf("match %d does not end", i)
			}
			p := seats[slices.IndexFunc(seats, func(p Player) bool { return p.ID == who })]
			v, arg := VerbPlay, ""
			if trump {
				v, arg = VerbTrump, []string{"S", "H", "D", "C"}[rng.IntN(4)]
			} else {
				arg = legal[rng.IntN(len(legal))].String()
			}
			if e := errText(h.do(p, v, arg)); e != "" {
				t.Fatalf("match %d: %s %s: %s", i, v, arg, e)
			}
		}
		var winner, games = -1, 0
		for _, m := range h.out.all()[from:] {
			if g := matchWon.FindStringSubmatch(m.Text); g != nil {
				winner, _ = map[string]int{"A": 0, "B": 1}[g[1]], 0
				games, _ = strconv.Atoi(g[2])
			}
		}
		if winner < 0 {
			t.Fatalf("match %d: no summary says who won", i)
		}
		// Seat s is on team s%2 (A: seats 1 and 3 as players count them).
		teams := [][]rating.Rating{{get(tl.rating, seats[0].ID), get(tl.rating, seats[2].ID)},
			{get(tl.rating, seats[1].ID), get(tl.rating, seats[3].ID)}}
		ranks := []int{1, 1}
		ranks[winner] = 0
		out := league.Model.Rate(teams, ranks)
		mo := clk.now.In(league.Zone).Format("2006-01")
		if tl.month[mo] == nil {
			tl.month[mo] = map[string]rating.Rating{}
		}
		mteams := [][]rating.Rating{{get(tl.month[mo], seats[0].ID), get(tl.month[mo], seats[2].ID)},
			{get(tl.month[mo], seats[1].ID), get(tl.month[mo], seats[3].ID)}}
		mout := league.Model.Rate(mteams, ranks)
		for s, p := range seats {
			tl.matches[p.ID]++
			tl.games[p.ID] += games
			if s%2 == winner {
				tl.won[p.ID]++
			}
			tl.rating[p.ID] = out[s%2][s/2]
			tl.month[mo][p.ID] = mout[s%2][s/2]
		}
		for team := range 2 {
			pair := [2]string{seats[team].ID, seats[team+2].ID}
			slices.Sort(pair[:])
			c := tl.together[pair]
			c[0]++
			if team == winner {
				c[1]++
			}
			tl.together[pair] = c
		}
		w := winner
		tl.last = append([]string{seats[w].Name + " & " + seats[w+2].Name + " beat " + seats[1-w].Name + " & " + seats[3-w].Name}, tl.last...)
		clk.now = clk.now.Add(24 * time.Hour)
	}
	return tl
}

// leagueHarness is a harness with a KV and a clock, and five people.
func leagueHarness(t *testing.T, store *MemStore, clk *clock) (*harness, []Player) {
	h := newHarness(t, store, withKV, func(c *Config) { c.Now = clk.Now; c.Robots = nil })
	t.Cleanup(h.svc.Close)
	var people []Player
	for i, name := range []string{"Ann", "Bob", "Cid", "Dan", "Eve"} {
		people = append(people, Player{ID: fmt.Sprintf("u%d", i+1), Name: name, Locale: "en"})
	}
	return h, people
}

func replyText(t *testing.T, msgs []Message) string {
	t.Helper()
	if len(msgs) != 1 || msgs[0].Kind == KindError {
		t.Fatalf("want one answer, got %+v", msgs)
	}
	return msgs[0].Text
}

// TestASeasonThroughTheService plays two months of matches and checks stats, top and history
// against the test's own counts and ratings.
func TestASeasonThroughTheService(t *testing.T) {
	clk := &clock{now: time.Date(2026, 10, 12, 20, 0, 0, 0, league.Zone)}
	h, people := leagueHarness(t, NewMemStore(), clk)
	tl := playSeason(t, h, clk, people, 36, 2026)

	for _, p := range people {
		text := replyText(t, h.do(p, VerbStats))
		r := tl.rating[p.ID]
		want := []string{
			"📊 " + p.Name + " in Café Konter",
			fmt.Sprintf("Rating %s (mean %s, uncertainty %s)", decimal("en", r.Ordinal()), decimal("en", r.Mu), decimal("en", r.Sigma)),
			fmt.Sprintf("%d matches · won: %d (", tl.matches[p.ID], tl.won[p.ID]),
			fmt.Sprintf("%d games · won: ", tl.games[p.ID]),
		}
		for _, w := range want {
			if !strings.Contains(text, w) {
				t.Errorf("stats of %s lacks %q:\n%s", p.Name, w, text)
			}
		}
		// The best partner: most matches won together in share, among three or more.
		best, share := "", -1.0
		for pair, c := range tl.together {
			i := slices.Index(pair[:], p.ID)
			if i < 0 || c[0] < 3 {
				continue
			}
			if s := float64(c[1]) / float64(c[0]); s > share || s == share && pair[1-i] < best {
				best, share = pair[1-i], s
			}
		}
		if best != "" {
			name := people[slices.IndexFunc(people, func(q Player) bool { return q.ID == best })].Name
			if !strings.Contains(text, "Best partner: "+name+" ") {
				t.Errorf("stats of %s: best partner should be %s:\n%s", p.Name, name, text)
			}
		}
	}

	// The all-time table: established players by ordinal, then provisional ones.
	order := slices.Clone(people)
	slices.SortStableFunc(order, func(a, b Player) int {
		ra, rb := tl.rating[a.ID], tl.rating[b.ID]
		if pa, pb := ra.Sigma > league.Provisional, rb.Sigma > league.Provisional; pa != pb {
			if pa {
				return 1
			}
			return -1
		}
		switch {
		case ra.Ordinal() > rb.Ordinal():
			return -1
		case ra.Ordinal() < rb.Ordinal():
			return 1
		}
		return 0
	})
	top := replyText(t, h.do(people[0], VerbTop, "all"))
	lines := strings.Split(top, "\n")
	if lines[0] != "🏆 All-time table in Café Konter" || len(lines) != 1+len(people) {
		t.Fatalf("top all:\n%s", top)
	}
	for i, p := range order {
		r := tl.rating[p.ID]
		want := fmt.Sprintf("%d. %s — %s · won %d of %d", i+1, p.Name, decimal("en", r.Ordinal()), tl.won[p.ID], tl.matches[p.ID])
		if !strings.HasPrefix(lines[i+1], want) {
			t.Errorf("top all, line %d = %q, want %q", i+1, lines[i+1], want)
		}
	}

	// October's table has October's ratings; "top" alone is this month's (November).
	for _, tc := range []struct{ arg, month, name string }{{"2026-10", "2026-10", "October 2026"}, {"", "2026-11", "November 2026"}} {
		text := replyText(t, h.do(people[1], VerbTop, tc.arg))
		if !strings.HasPrefix(text, "🏆 Table of "+tc.name+" in Café Konter\n") {
			t.Errorf("top %q:\n%s", tc.arg, text)
		}
		for id, r := range tl.month[tc.month] {
			name := people[slices.IndexFunc(people, func(q Player) bool { return q.ID == id })].Name
			if !strings.Contains(text, ". "+name+" — "+decimal("en", r.Ordinal())+" ·") {
				t.Errorf("top %q lacks %s at %s:\n%s", tc.arg, name, decimal("en", r.Ordinal()), text)
			}
		}
	}

	hist := h.do(people[2], VerbHistory)
	text := replyText(t, hist)
	lines = strings.Split(text, "\n")
	if len(lines) != 1+maxHistory+1 {
		t.Fatalf("history has %d lines:\n%s", len(lines), text)
	}
	for i := range maxHistory {
		l := lines[i+1]
		parts := strings.SplitN(l, " · ", 3) // "1. 2026-11-16 …", "Ann & Cid beat Bob & Dan after …"
		if len(parts) < 2 || !strings.HasPrefix(parts[1], tl.last[i]+" after ") {
			t.Errorf("history line %d = %q, want %q", i+1, l, tl.last[i])
		}
	}
	if len(hist[0].Buttons) != maxHistory {
		t.Fatalf("history has %d rows of buttons", len(hist[0].Buttons))
	}

	// The newest match's record is its replay file; its board is a picture of that match.
	rec := h.press(people[2], hist[0].Buttons[0][1])
	if len(rec) != 1 || rec[0].File == nil || !json.Valid(rec[0].File.Data) {
		t.Fatalf("the record button answers %+v", rec)
	}
	if _, err := core.Replay(rec[0].File.Data); err != nil {
		t.Errorf("the record does not replay: %v", err)
	}
	board := h.press(people[2], hist[0].Buttons[0][0])
	if len(board) != 1 || board[0].Picture != PictureBoard || board[0].Record == "" {
		t.Fatalf("the board button answers %+v", board)
	}
	if png, alt, err := h.svc.Picture(board[0], false); err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) || alt == "" {
		t.Errorf("the board of a kept match: %v", err)
	}
	// Typed, the same match is number 1.
	if got := h.do(people[2], VerbHistory, "record", "1"); len(got) != 1 || got[0].File == nil || !bytes.Equal(got[0].File.Data, rec[0].File.Data) {
		t.Errorf("history record 1 answers %+v", got)
	}
	for _, bad := range [][]string{{"record", "9"}, {"board", "x"}, {"r:elsewhere/m1"}} {
		if e := errText(h.do(people[2], VerbHistory, bad...)); e == "" {
			t.Errorf("history %v is not refused", bad)
		}
	}
}

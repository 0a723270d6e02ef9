package table

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/league"
	"github.com/kontermatt/kontermatt/core/privacy"
	"github.com/kontermatt/kontermatt/core/rating"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/storage/mem"
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

var shareRange = regexp.MustCompile(`won: \d+ \((\d+)%, likely (\d+)–(\d+)%\)`)

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

var matchWon = regexp.MustCompile(`Team ([AB]) \(.*\) wins the match after (\d+) games?!`)

// playSeason plays n matches of four people drawn from people at the harness's place, one a day
// from start, each to its end with random legal moves, and counts what the summaries say.
func playSeason(t *testing.T, h *harness, clk *clock, people []api.Player, n int, seed uint64) *tally {
	t.Helper()
	return playSeasonWith(t, h, clk, people, n, seed)
}

// playSeasonWith is playSeason at tables opened with more options (its counts of ratings assume
// rated matches).
func playSeasonWith(t *testing.T, h *harness, clk *clock, people []api.Player, n int, seed uint64, options ...string) *tally {
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
		if e := errText(h.do(seats[0], api.VerbNew, append([]string{"stripes=1", "timer=none"}, options...)...)); e != "" {
			t.Fatalf("match %d: new: %s", i, e)
		}
		for s, p := range seats[1:] {
			if e := errText(h.do(p, api.VerbJoin, strconv.Itoa(s+2))); e != "" {
				t.Fatalf("match %d: join: %s", i, e)
			}
		}
		from := len(h.out.all())
		if e := errText(h.do(seats[0], api.VerbDeal)); e != "" {
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
			p := seats[slices.IndexFunc(seats, func(p api.Player) bool { return p.ID == who })]
			v, arg := api.VerbPlay, ""
			if trump {
				v, arg = api.VerbTrump, []string{"S", "H", "D", "C"}[rng.IntN(4)]
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
func leagueHarness(t *testing.T, store *mem.Store, clk *clock) (*harness, []api.Player) {
	h := newHarness(t, store, withKV, func(c *Config) { c.Now = clk.Now; c.Robots = nil })
	t.Cleanup(h.svc.Close)
	var people []api.Player
	for i, name := range []string{"Ann", "Bob", "Cid", "Dan", "Eve"} {
		people = append(people, api.Player{ID: fmt.Sprintf("u%d", i+1), Name: name, Locale: "en"})
	}
	return h, people
}

func replyText(t *testing.T, msgs []api.Message) string {
	t.Helper()
	if len(msgs) != 1 || msgs[0].Kind == api.KindError {
		t.Fatalf("want one answer, got %+v", msgs)
	}
	return msgs[0].Text
}

// TestASeasonThroughTheService plays two months of matches and checks stats, top and history
// against the test's own counts and ratings.
func TestASeasonThroughTheService(t *testing.T) {
	ctx := t.Context()
	clk := &clock{now: time.Date(2026, 10, 12, 20, 0, 0, 0, league.Zone)}
	h, people := leagueHarness(t, mem.New(), clk)
	tl := playSeason(t, h, clk, people, 36, 2026)

	for _, p := range people {
		text := replyText(t, h.do(p, api.VerbStats))
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
		// The win share's 95% interval (Wilson's) is a range inside 0–100%, around the share.
		if g := shareRange.FindStringSubmatch(text); g == nil {
			t.Errorf("stats of %s shows no win share range:\n%s", p.Name, text)
		} else if share, lo, hi := atoi(g[1]), atoi(g[2]), atoi(g[3]); lo < 0 || hi > 100 || lo > share || share > hi || lo == hi {
			t.Errorf("stats of %s: share %d%% in %d–%d%%", p.Name, share, lo, hi)
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
			name := people[slices.IndexFunc(people, func(q api.Player) bool { return q.ID == best })].Name
			if !strings.Contains(text, "Best partner: "+name+" ") {
				t.Errorf("stats of %s: best partner should be %s:\n%s", p.Name, name, text)
			}
		}
	}

	// The all-time table: established players by ordinal, then provisional ones; ties by matches
	// won, fewer matches played, then name (docs/league.md).
	order := slices.Clone(people)
	slices.SortFunc(order, func(a, b api.Player) int {
		ra, rb := tl.rating[a.ID], tl.rating[b.ID]
		if pa, pb := ra.Sigma > league.Provisional, rb.Sigma > league.Provisional; pa != pb {
			if pa {
				return 1
			}
			return -1
		}
		return cmp.Or(cmp.Compare(rb.Ordinal(), ra.Ordinal()), cmp.Compare(tl.won[b.ID], tl.won[a.ID]),
			cmp.Compare(tl.matches[a.ID], tl.matches[b.ID]), cmp.Compare(a.Name, b.Name))
	})
	top := replyText(t, h.do(people[0], api.VerbTop, "all"))
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
		text := replyText(t, h.do(people[1], api.VerbTop, tc.arg))
		if !strings.HasPrefix(text, "🏆 Table of "+tc.name+" in Café Konter\n") {
			t.Errorf("top %q:\n%s", tc.arg, text)
		}
		for id, r := range tl.month[tc.month] {
			name := people[slices.IndexFunc(people, func(q api.Player) bool { return q.ID == id })].Name
			if !strings.Contains(text, ". "+name+" — "+decimal("en", r.Ordinal())+" ·") {
				t.Errorf("top %q lacks %s at %s:\n%s", tc.arg, name, decimal("en", r.Ordinal()), text)
			}
		}
	}

	hist := h.do(people[2], api.VerbHistory)
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
	// It names the people as the chat saw them, never their platform IDs.
	var file ExportedMatch
	if err := json.Unmarshal(rec[0].File.Data, &file); err != nil || file.Seats[0].Name == "" || file.Key == "" {
		t.Errorf("the record file lacks its seats: %v\n%s", err, rec[0].File.Data)
	}
	for _, p := range people {
		if bytes.Contains(rec[0].File.Data, []byte(`"`+p.ID+`"`)) {
			t.Errorf("the record file in the chat holds %s's ID", p.Name)
		}
	}
	board := h.press(people[2], hist[0].Buttons[0][0])
	if len(board) != 1 || board[0].Picture != api.PictureBoard || board[0].Record == "" {
		t.Fatalf("the board button answers %+v", board)
	}
	if png, alt, err := h.svc.Picture(ctx, board[0], false); err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) || alt == "" {
		t.Errorf("the board of a kept match: %v", err)
	}
	// Typed, the same match is number 1.
	if got := h.do(people[2], api.VerbHistory, "record", "1"); len(got) != 1 || got[0].File == nil || !bytes.Equal(got[0].File.Data, rec[0].File.Data) {
		t.Errorf("history record 1 answers %+v", got)
	}
	for _, bad := range [][]string{{"record", "9"}, {"board", "x"}, {"r:elsewhere/m1"}} {
		if e := errText(h.do(people[2], api.VerbHistory, bad...)); e == "" {
			t.Errorf("history %v is not refused", bad)
		}
	}
}

// placeLeague is the league of the harness's place as its KV keeps it.
func (h *harness) placeLeague(ctx context.Context) *league.Place {
	return league.NewCache(h.svc.cfg.KV, slog.New(slog.DiscardHandler)).Place(ctx, h.place.Key())
}

// leagueKV is every entry of the league's buckets in a mem.Store, as "bucket key" → value.
func leagueKV(m *mem.Store) map[string]string {
	out := map[string]string{}
	for _, bucket := range league.Buckets {
		for key, v := range m.Bucket(bucket) {
			out[bucket+" "+key] = string(v)
		}
	}
	return out
}

// TestRebuildEqualsTheLiveLeague: what the league learned match by match is what Rebuild makes
// from the records alone, byte for byte.
func TestRebuildEqualsTheLiveLeague(t *testing.T) {
	ctx := t.Context()
	clk := &clock{now: time.Date(2026, 11, 20, 20, 0, 0, 0, league.Zone)}
	store := mem.New()
	h, people := leagueHarness(t, store, clk)
	playSeason(t, h, clk, people, 24, 7)
	// A stopped match counts its games, not as a match.
	h.do(people[0], api.VerbNew, "timer=none")
	for _, p := range people[1:4] {
		h.do(p, api.VerbJoin)
	}
	h.do(people[0], api.VerbDeal)
	id := h.svc.TableAt(h.place)
	for range 30 { // a few tricks into the first game
		who, legal, trump := h.svc.Turn(id)
		p := people[slices.IndexFunc(people, func(q api.Player) bool { return q.ID == who })]
		if trump {
			h.do(p, api.VerbTrump, "H")
		} else {
			h.do(p, api.VerbPlay, legal[0].String())
		}
	}
	for _, p := range people[:4] {
		h.do(p, api.VerbStop)
	}
	live := leagueKV(store)
	if len(live) == 0 {
		t.Fatal("the league kept nothing")
	}
	entries, buckets, err := h.svc.cfg.League.Rebuild(ctx, store.Records)
	if err != nil || !slices.Equal(buckets, league.Buckets) {
		t.Fatalf("Rebuild: %v, buckets %v", err, buckets)
	}
	matches := 0
	_ = store.Records(ctx, func(_ string, data []byte) error {
		if _, _, err := ParseStoredMatch(data); err == nil {
			matches++
		}
		return nil
	})
	if matches != 25 {
		t.Errorf("the store kept %d matches that read, want 25 (24 won, 1 stopped)", matches)
	}
	rebuilt := map[string]string{}
	for _, e := range entries {
		rebuilt[e.Bucket+" "+e.Key] = string(e.Value)
	}
	for k, v := range live {
		if rebuilt[k] != v {
			t.Errorf("%s: live %s\nrebuilt %s", k, v, rebuilt[k])
		}
	}
	for k := range rebuilt {
		if _, ok := live[k]; !ok {
			t.Errorf("%s is rebuilt but was never kept", k)
		}
	}
	// A restarted service reads the same league from the KV.
	h2 := newHarness(t, store, withKV, func(c *Config) { c.Now = clk.Now })
	t.Cleanup(h2.svc.Close)
	for _, p := range people {
		if a, b := replyText(t, h.do(p, api.VerbStats)), replyText(t, h2.do(p, api.VerbStats)); a != b {
			t.Errorf("after a restart, stats of %s:\n%s\nwas:\n%s", p.Name, b, a)
		}
	}
}

// TestForgetKeepsTheOthersResults: a forgotten person's name leaves every record and table; the
// others' numbers stay exactly as they were.
func TestForgetKeepsTheOthersResults(t *testing.T) {
	ctx := t.Context()
	clk := &clock{now: time.Date(2026, 11, 2, 20, 0, 0, 0, league.Zone)}
	store := mem.New()
	h, people := leagueHarness(t, store, clk)
	tl := playSeason(t, h, clk, people, 20, 99)
	eve := people[4]
	h.do(eve, api.VerbLang, "de")
	before := h.placeLeague(ctx)

	ask := h.do(eve, api.VerbForget)
	if len(ask) != 1 || !ask[0].Secret || !strings.Contains(ask[0].Text, "/forget yes") {
		t.Fatalf("forget asks %+v", ask)
	}
	if after := h.placeLeague(ctx); after.Players[eve.ID] == nil {
		t.Fatal("forget without yes forgot")
	}
	done := h.do(eve, api.VerbForget, "yes")
	if len(done) != 1 || !done[0].Secret || !strings.Contains(done[0].Text, fmt.Sprintf(" %d ", tl.matches[eve.ID])) {
		t.Fatalf("forget yes answers %+v (Eve played %d matches)", done, tl.matches[eve.ID])
	}
	after := h.placeLeague(ctx)
	if after.Players[eve.ID] != nil {
		t.Error("Eve is still in the league")
	}
	for _, p := range people[:4] {
		b, a := before.Players[p.ID], after.Players[p.ID]
		if a == nil || a.Rating != b.Rating || a.Matches != b.Matches || a.MatchesWon != b.MatchesWon || a.Games != b.Games {
			t.Errorf("%s changed: %+v, was %+v", p.Name, a, b)
		}
	}
	_ = store.Records(ctx, func(key string, data []byte) error {
		if bytes.Contains(data, []byte(eve.ID)) || bytes.Contains(data, []byte(`"Eve"`)) {
			t.Errorf("record %s still names Eve: %s", key, data)
		}
		return nil
	})
	if _, ok, _ := store.Get(ctx, privacy.Bucket, eve.ID); ok {
		t.Error("Eve's settings are kept")
	}
	if _, ok, _ := store.Get(ctx, league.BucketRatings, eve.ID); ok {
		t.Error("Eve's rating across places is kept")
	}
	if text := replyText(t, h.do(eve, api.VerbStats)); !strings.Contains(text, "has not finished a game") {
		t.Errorf("Eve's stats after forget:\n%s", text)
	}
	top := replyText(t, h.do(people[0], api.VerbTop, "all"))
	if strings.Contains(top, "Eve") || strings.Contains(top, "\n5.") || strings.Count(top, "\n") != 4 {
		t.Errorf("top after forget:\n%s", top)
	}
	if hist := replyText(t, h.do(people[0], api.VerbHistory)); strings.Contains(hist, "Eve") {
		t.Errorf("history after forget:\n%s", hist)
	}
	if text := errText(h.do(people[0], api.VerbStats, "Eve")); text != `Nobody called “Eve” has played here.` {
		t.Errorf("stats Eve after forget:\n%s", text)
	}
}

// TestStatsOffHidesAPerson: a person who asks not to be ranked leaves the table and their
// statistics are theirs alone; on ranks them again.
func TestStatsOffHidesAPerson(t *testing.T) {
	clk := &clock{now: time.Date(2026, 11, 2, 20, 0, 0, 0, league.Zone)}
	h, people := leagueHarness(t, mem.New(), clk)
	playSeason(t, h, clk, people, 8, 3)
	ann := people[0]
	h.do(ann, api.VerbStats, "off")
	if top := replyText(t, h.do(people[1], api.VerbTop, "all")); strings.Contains(top, "Ann") {
		t.Errorf("top shows Ann, who is off:\n%s", top)
	}
	if text := replyText(t, h.do(people[1], api.VerbStats, "ann")); text != "Ann asked not to be ranked." {
		t.Errorf("Bob asks for Ann's stats: %q", text)
	}
	// Her own statistics are still hers to see, privately: never posted in the group.
	own := h.do(ann, api.VerbStats)
	if text := replyText(t, own); !strings.Contains(text, "📊 Ann in Café Konter") {
		t.Errorf("Ann's own stats: %q", text)
	}
	if !own[0].Secret || own[0].Public != i18n.T("en", "league.private") {
		t.Errorf("Ann's own stats, hidden, are posted in the group: secret %v, public %q", own[0].Secret, own[0].Public)
	}
	if text := replyText(t, h.do(ann, api.VerbMyData)); !strings.Contains(text, "you are not ranked") || !strings.Contains(text, "ID u1") {
		t.Errorf("Ann's data: %q", text)
	}
	h.do(ann, api.VerbStats, "on")
	if top := replyText(t, h.do(people[1], api.VerbTop, "all")); !strings.Contains(top, "Ann") {
		t.Errorf("top without Ann, who is on again:\n%s", top)
	}
}

// TestHouseRules: settings shows and sets a place's defaults; an admin sets them at once, the
// people at the table all together; new starts from them, and what new says wins.
func TestHouseRules(t *testing.T) {
	clk := &clock{now: time.Date(2026, 11, 2, 20, 0, 0, 0, league.Zone)}
	h, people := leagueHarness(t, mem.New(), clk)
	ann, bob := people[0], people[1]
	admin := func(args ...string) []api.Message {
		h.event++
		return msgsOf(h.svc.Handle(context.Background(), api.Command{Place: h.place, Actor: bob, Verb: api.VerbSettings, Args: args, Admin: true, EventID: fmt.Sprint("adm", h.event)}))
	}
	if e := errText(h.do(ann, api.VerbSettings, "stripes=9")); !strings.Contains(e, "Only an admin") {
		t.Errorf("a stranger sets the house rules: %q", e)
	}
	if e := errText(admin("stripes=99")); !strings.Contains(e, "stripes") {
		t.Errorf("a bad option: %q", e)
	}
	if e := errText(admin("lang=xx")); !strings.Contains(e, "xx") {
		t.Errorf("a bad language: %q", e)
	}
	if text := replyText(t, admin("stripes=3", "timer=relaxed", "lang=lb")); !strings.Contains(text, "Saved") {
		t.Errorf("admin sets: %q", text)
	}
	if text := replyText(t, h.do(ann, api.VerbSettings)); !strings.Contains(text, "3 stripes") || !strings.Contains(text, "Lëtzebuergesch") {
		t.Errorf("settings shows:\n%s", text)
	}
	h.do(ann, api.VerbNew, "stripes=4")
	id := h.svc.TableAt(h.place)
	tb, _ := h.svc.index.get(id)
	tb.mu.Lock()
	stripes, timer, lang := tb.opts.Rules.Stripes, tb.opts.Timer, tb.st.Lang
	tb.mu.Unlock()
	if stripes != 4 || timer != "relaxed" || lang != "lb" {
		t.Errorf("new at the place: stripes %d timer %q lang %q, want 4 (typed), relaxed and lb (the house's)", stripes, timer, lang)
	}
	// Everyone at the table must ask for the same change.
	for _, p := range people[1:4] {
		h.do(p, api.VerbJoin)
	}
	for i, p := range people[:4] {
		text := replyText(t, h.do(p, api.VerbSettings, "stripes=5"))
		if i < 3 && !strings.Contains(text, fmt.Sprintf("%d vu(n) 4", i+1)) && !strings.Contains(text, fmt.Sprintf("%d of 4", i+1)) {
			t.Errorf("vote %d: %q", i+1, text)
		}
		if i == 3 && !strings.Contains(text, "5 stripes") {
			t.Errorf("the last vote: %q", text)
		}
	}
	if e := errText(h.do(people[4], api.VerbSettings, "stripes=6")); e == "" {
		t.Error("Eve, not at the table, voted")
	}
}

// TestLastMonthsTableIsPostedOnce: on the first of the month the places that played get last
// month's table, once, and a place that did not play gets nothing.
func TestLastMonthsTableIsPostedOnce(t *testing.T) {
	ctx := t.Context()
	clk := &clock{now: time.Date(2026, 10, 27, 20, 0, 0, 0, league.Zone)}
	store := mem.New()
	h, people := leagueHarness(t, store, clk)
	playSeason(t, h, clk, people, 4, 5) // 27–30 October
	clk.now = time.Date(2026, 11, 1, 0, 30, 0, 0, league.Zone)
	from := len(h.out.all())
	h.svc.postSeasons(context.Background())
	h.svc.postSeasons(context.Background())
	var posts []api.Message
	for _, m := range h.out.all()[from:] {
		if m.Picture == api.PictureStandings {
			posts = append(posts, m)
		}
	}
	if len(posts) != 1 || posts[0].Target.Place.Key() != h.place.Key() || posts[0].Season != "2026-10" ||
		!strings.HasPrefix(posts[0].Text, "🗓 October 2026 is over. The final table:\n1. ") {
		t.Fatalf("posts: %+v", posts)
	}
	if png, alt, err := h.svc.Picture(ctx, posts[0], true); err != nil || len(png) == 0 || !strings.Contains(alt, "October 2026") {
		t.Errorf("the standings picture: %v, %q", err, alt)
	}
	// A restart on the same day does not post it again.
	h2 := newHarness(t, store, withKV, func(c *Config) { c.Now = clk.Now })
	t.Cleanup(h2.svc.Close)
	h2.svc.postSeasons(context.Background())
	if n := len(h2.out.all()); n != 0 {
		t.Errorf("posted again after a restart: %d messages", n)
	}
}

// TestAMonthOfHintsIsNotPosted: a month whose only matches were played with hints has nothing to
// rank, and no table is posted for it — not even where the league once listed the place (before
// hinted matches were left out of that list).
func TestAMonthOfHintsIsNotPosted(t *testing.T) {
	ctx := t.Context()
	clk := &clock{now: time.Date(2026, 10, 27, 20, 0, 0, 0, league.Zone)}
	store := mem.New()
	h, people := leagueHarness(t, store, clk)
	playSeasonWith(t, h, clk, people, 3, 5, "hints=on") // 27–29 October
	clk.now = time.Date(2026, 11, 1, 0, 30, 0, 0, league.Zone)
	posted := func() int {
		t.Helper()
		from := len(h.out.all())
		h.svc.postSeasons(context.Background())
		n := 0
		for _, m := range h.out.all()[from:] {
			if m.Picture == api.PictureStandings {
				n++
				t.Logf("posted:\n%s", m.Text)
			}
		}
		return n
	}
	if n := posted(); n != 0 {
		t.Fatalf("%d tables posted for a month of hinted matches", n)
	}
	if months, _ := leagueKV(store)[league.BucketMonths+" 2026-10"]; months != "" {
		t.Errorf("October lists places where a match was won without hints: %s", months)
	}
	// A league kept by an older version lists the place: still nothing to rank, nothing posted.
	h2 := newHarness(t, store, withKV, func(c *Config) { c.Now = clk.Now })
	t.Cleanup(h2.svc.Close)
	if err := store.Put(ctx, league.BucketMonths, "2026-10", []byte(`["`+h.place.Key()+`"]`)); err != nil {
		t.Fatal(err)
	}
	h2.svc.postSeasons(context.Background())
	for _, m := range h2.out.all() {
		if m.Picture == api.PictureStandings {
			t.Errorf("posted a table with nothing to rank:\n%s", m.Text)
		}
	}
}

// playWithAbsent plays a match at a table of the given level where Ann (seat 1) plays her turns
// of the first annGames games and then no more: she goes silent (and is marked away, a computer
// playing for her), or with leave she leaves the table at her first turn after them. Bob (seat
// 3, her partner) plays every turn of his; the others are computers. It gives the kept match.
func playWithAbsent(t *testing.T, h *harness, level string, annGames int, leave bool) StoredMatch {
	ctx := t.Context()
	t.Helper()
	ann, bob := player(1), player(2)
	for _, e := range []string{errText(h.do(ann, api.VerbNew, "timer=fast", "stripes=2", "level="+level)),
		errText(h.do(bob, api.VerbJoin, "3")), errText(h.do(ann, api.VerbDeal))} {
		if e != "" {
			t.Fatal(e)
		}
	}
	id := h.svc.TableAt(h.place)
	play := func(p api.Player, legal []core.Card, trump bool) {
		if trump {
			h.do(p, api.VerbTrump, "H")
		} else {
			h.do(p, api.VerbPlay, legal[0].String())
		}
	}
	for i := 0; !h.over(); i++ {
		if i > 100000 {
			t.Fatal("the match does not end")
		}
		synctest.Wait()
		who, legal, trump := h.svc.Turn(id)
		game, _ := h.svc.HeldCards(id)
		switch {
		case who == bob.ID:
			play(bob, legal, trump)
		case who == ann.ID && game <= annGames:
			play(ann, legal, trump)
		case who == ann.ID && leave:
			if e := errText(h.do(ann, api.VerbLeave)); e != "" {
				t.Fatal(e)
			}
			leave = false
		default: // Ann's turn as she stays silent, or a computer's: let the time run
			time.Sleep(time.Second)
		}
	}
	var kept []StoredMatch
	_ = h.store.Records(ctx, func(key string, data []byte) error {
		rec, _, err := ParseStoredMatch(data)
		if err != nil {
			t.Fatal(err)
		}
		kept = append(kept, rec)
		return nil
	})
	if len(kept) != 1 {
		t.Fatalf("%d matches kept", len(kept))
	}
	return kept[0]
}

// TestAnAbsentSeatIsRatedAtTheTablesLevel: the computer that played for an absent person is the
// table's level, kept as such in the record, and the others are rated against that level's
// anchor — not always against normal's.
func TestAnAbsentSeatIsRatedAtTheTablesLevel(t *testing.T) {
	ctx := t.Context()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mem.New(), withKV)
		defer h.svc.Close()
		rec := playWithAbsent(t, h, "strong", 0, false)
		if s := rec.Seats[0]; s.ID != player(1).ID || !s.Away || s.Robot != "strong" {
			t.Fatalf("Ann's seat is kept as %+v, want away with the strong computer playing for her", s)
		}
		_, m, _ := ParseStoredMatch(mustJSON(rec))
		w, ok := m.Winner()
		if !ok {
			t.Fatal("no winner")
		}
		strong := league.Anchors["strong"]
		teams := [][]rating.Rating{{strong, league.Model.New()}, {strong, strong}}
		ranks := []int{1, 1}
		ranks[w] = 0
		want := league.Model.Rate(teams, ranks)[0][1]
		if got := h.placeLeague(ctx).Players[player(2).ID].Rating; got != want {
			t.Errorf("Bob's rating %v, want %v (his partner's seat rated as the strong anchor)", got, want)
		}
	})
}

// TestWhoWasNotThereLostTheMatch: Ann plays the first game, then leaves (or goes silent and is
// marked away) and a computer finishes the match for her. She is credited with the one game she
// played, not with those the computer played for her; she lost the match, whatever her team did,
// and is rated so; the record says all of it (docs/records.md).
func TestWhoWasNotThereLostTheMatch(t *testing.T) {
	ctx := t.Context()
	for _, leave := range []bool{true, false} {
		t.Run(map[bool]string{true: "left", false: "away"}[leave], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, mem.New(), withKV)
				defer h.svc.Close()
				rec := playWithAbsent(t, h, "easy", 1, leave)
				_, m, _ := ParseStoredMatch(mustJSON(rec))
				n := len(m.Games())
				if n < 2 {
					t.Fatalf("a match of %d game", n)
				}
				var absent []int
				for g := 2; g <= n; g++ {
					absent = append(absent, g)
				}
				s := rec.Seats[0]
				if s.ID != player(1).ID || s.Left != leave || s.Away == leave || !s.Forfeit || s.Robot != "easy" || !slices.Equal(s.Absent, absent) {
					t.Fatalf("Ann's seat is kept as %+v, want the computer's games %v", s, absent)
				}
				if b := rec.Seats[2]; b.Forfeit || b.Absent != nil || b.Left || b.Away {
					t.Errorf("Bob's seat is kept as %+v", b)
				}
				pl := h.placeLeague(ctx)
				ann := pl.Players[player(1).ID]
				if ann == nil || ann.Games != 1 || ann.Matches != 1 || ann.MatchesWon != 0 {
					t.Fatalf("Ann: %+v, want 1 game and 1 match lost", ann)
				}
				w, _ := m.Winner()
				easy := league.Anchors["easy"]
				ranks := []int{1, 1}
				ranks[w] = 0
				bobWant := league.Model.Rate([][]rating.Rating{{easy, league.Model.New()}, {easy, easy}}, ranks)[0][1]
				annWant := league.Model.Rate([][]rating.Rating{{league.Model.New(), league.Model.New()}, {easy, easy}}, []int{1, 0})[0][0]
				if ann.Rating != annWant {
					t.Errorf("Ann %v, want %v (a loss)", ann.Rating, annWant)
				}
				if bob := pl.Players[player(2).ID]; bob.Rating != bobWant || bob.Games != n {
					t.Errorf("Bob %v in %d games, want %v in %d (his partner's seat the easy anchor)", bob.Rating, bob.Games, bobWant, n)
				}
			})
		})
	}
}

// decimal writes a rating with one decimal as lang writes numbers (i18n.Decimal).
func decimal(lang string, x float64) string { return i18n.Decimal(lang, x) }

// TestTheEngineKnowsNoLeague: the engine reaches the league only through its League port
// (core/league/keeper implements it), so the league can change without the engine, and the
// engine's own packages never import core/league, however indirectly.
func TestTheEngineKnowsNoLeague(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for dep := range strings.Lines(string(out)) {
		if dep = strings.TrimSpace(dep); strings.HasPrefix(dep, "github.com/kontermatt/kontermatt/core/league") {
			t.Errorf("core/table imports %s", dep)
		}
	}
}

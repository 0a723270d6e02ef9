package league

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/rating"
)

// playMatch plays a whole match of random legal moves (calling whenever a call is possible) and
// gives its engine match; maxGames > 0 stops it early (a stopped match).
func playMatch(rng *rand.Rand, stripes, maxGames int) *core.Match {
	rules := core.DefaultRules()
	rules.Stripes = stripes
	m, _ := core.NewMatch(rules, core.Seat(rng.IntN(4)))
	for !m.Over() && (maxGames == 0 || m.NumGames() < maxGames) {
		g, _ := m.Deal(core.DealHands(rng, m.NextDealer()))
		fore := g.Forehand()
		g.NameTrump(fore, g.FirstPacket(fore).Nth(rng.IntN(3)).Suit())
		for g.Phase() != core.PhaseOver {
			s := g.ToMove()
			if calls := g.PossibleCalls(s); len(calls) > 0 && rng.IntN(2) == 0 {
				g.Announce(s, calls[rng.IntN(len(calls))])
			}
			legal := g.LegalCards(s)
			g.Play(s, legal.Nth(rng.IntN(legal.Len())))
		}
	}
	return m
}

func people(names ...string) [4]Seat {
	var s [4]Seat
	for i, n := range names {
		if n == "" {
			s[i] = Seat{Robot: "normal"}
		} else {
			s[i] = Seat{ID: "id:" + n, Name: n}
		}
	}
	return s
}

// A season of random matches: every count is the one the games give, counted here again.
func TestCountsAreTheGames(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	p := NewPlace("test:club")
	names := []string{"Ann", "Bob", "Cy", "Dee", "Eve"}
	type tally struct{ matches, won, games, gamesWon, draws, trumps, konter int }
	want := map[string]*tally{}
	for _, n := range names {
		want[n] = &tally{}
	}
	start := time.Date(2026, 11, 3, 20, 0, 0, 0, time.UTC)
	for i := range 40 {
		rng.Shuffle(len(names), func(a, b int) { names[a], names[b] = names[b], names[a] })
		seats := people(names[0], names[1], names[2], names[3])
		stop := 0
		if i%7 == 6 {
			stop = 2 // now and then a match is stopped after two games
		}
		m := playMatch(rng, 1+rng.IntN(3), stop)
		lm := FromCore(fmt.Sprint("t/m", i), p.Key, start.Add(time.Duration(i)*time.Hour), seats, m)
		p.Add(lm, nil)
		w, over := m.Winner()
		for s := range 4 {
			tl := want[seats[s].Name]
			if over {
				tl.matches++
				if int(w) == s%2 {
					tl.won++
				}
			}
			for _, g := range m.Games() {
				r := g.Result()
				tl.games++
				if gw, ok := r.Outcome.Winner(); ok && int(gw) == s%2 {
					tl.gamesWon++
				} else if r.Outcome == core.Draw {
					tl.draws++
				}
				if int(g.Forehand()) == s {
					tl.trumps++
				}
				for _, a := range g.Announcements() {
					if int(a.Seat) == s && a.Call&core.CallKonter != 0 {
						tl.konter++
					}
				}
			}
		}
	}
	for _, n := range names {
		pl, w := p.Players["id:"+n], want[n]
		got := tally{pl.Matches, pl.MatchesWon, pl.Games, pl.GamesWon, pl.Draws, pl.TrumpNamed, pl.KonterCalled}
		if got != *w {
			t.Errorf("%s: %+v, want %+v", n, got, *w)
		}
		if pl.BestRun < pl.Run || pl.Matches > 0 && pl.Rating == Model.New() {
			t.Errorf("%s: run %d best %d, rating %v", n, pl.Run, pl.BestRun, pl.Rating)
		}
	}
	if p.Matches != 40 || len(p.Recent) != 40 {
		t.Errorf("%d matches, %d in the history", p.Matches, len(p.Recent))
	}
}

// Computers are anchors: they move their opponents and never themselves; a person a computer
// played for is not rated; a stopped match rates nobody.
func TestWhoIsRated(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	p := NewPlace("test:club")
	seats := people("Ann", "", "Bob", "")
	seats[2].Away = true
	m := playMatch(rng, 1, 0)
	p.Add(FromCore("t/m1", p.Key, time.Now(), seats, m), nil)
	if r := p.Players["id:Ann"].Rating; r == Model.New() {
		t.Error("Ann was not rated")
	}
	if pl := p.Players["id:Bob"]; pl.Rating != Model.New() || pl.Matches != 0 || pl.Games == 0 {
		t.Errorf("the absent Bob: %+v", pl)
	}
	if Anchors["normal"] != (rating.Rating{Mu: 23, Sigma: 1}) {
		t.Error("an anchor moved")
	}
	q := NewPlace("test:other")
	q.Add(FromCore("t/m2", q.Key, time.Now(), people("Ann", "Cy", "Bob", "Dee"), playMatch(rng, 9, 2)), nil)
	for id, pl := range q.Players {
		if pl.Rating != Model.New() || pl.Matches != 0 || pl.Games != 2 {
			t.Errorf("%s after a stopped match: %+v", id, pl)
		}
	}
}

// The model's numbers: after eleven matches among four people new to the league nobody is
// provisional any more, after eight they all are; provisional players never rank above
// established ones; hidden people are not ranked.
func TestProvisionalAfterAboutTenMatches(t *testing.T) {
	p := NewPlace("test:club")
	rng := rand.New(rand.NewPCG(9, 9))
	seats := people("Ann", "Bob", "Cy", "Dee")
	for i := range 11 {
		if i == 8 {
			for _, s := range Rank(p.AllTime(), nil) {
				if !s.Provisional {
					t.Errorf("after eight matches %s is established (sigma %.2f)", s.Name, s.Rating.Sigma)
				}
			}
		}
		p.Add(FromCore(fmt.Sprint("t/m", i), p.Key, time.Now(), seats, playMatch(rng, 1, 0)), nil)
	}
	for _, s := range Rank(p.AllTime(), nil) {
		if s.Provisional {
			t.Errorf("after eleven matches %s is provisional (sigma %.2f)", s.Name, s.Rating.Sigma)
		}
	}
	rows := []Standing{{ID: "a", Rating: rating.Rating{Mu: 40, Sigma: 8}}, {ID: "b", Rating: rating.Rating{Mu: 20, Sigma: 5}},
		{ID: "c", Rating: rating.Rating{Mu: 30, Sigma: 2}}}
	got := Rank(rows, func(id string) bool { return id == "c" })
	if len(got) != 2 || got[0].ID != "b" || got[1].ID != "a" || !got[1].Provisional {
		t.Errorf("ranked %+v", got)
	}
}

// A month's table has its own ratings, from that month's matches.
func TestSeasons(t *testing.T) {
	p := NewPlace("test:club")
	rng := rand.New(rand.NewPCG(5, 5))
	nov := time.Date(2026, 11, 30, 22, 0, 0, 0, time.UTC)  // 23:00 in Luxembourg: still November
	dec := time.Date(2026, 11, 30, 23, 30, 0, 0, time.UTC) // 00:30 on the first of December there
	p.Add(FromCore("t/m1", p.Key, nov, people("Ann", "Bob", "Cy", "Dee"), playMatch(rng, 1, 0)), nil)
	p.Add(FromCore("t/m2", p.Key, dec, people("Ann", "Bob", "Eve", "Dee"), playMatch(rng, 1, 0)), nil)
	if n := len(p.SeasonTable("2026-11")); n != 4 {
		t.Errorf("November: %d players", n)
	}
	if rows := p.SeasonTable("2026-12"); len(rows) != 4 || p.SeasonTable("2026-10") != nil {
		t.Errorf("December: %+v", rows)
	}
	for _, s := range p.SeasonTable("2026-12") {
		if s.Matches != 1 {
			t.Errorf("%s played %d matches in December", s.Name, s.Matches)
		}
	}
}

func TestBestCompany(t *testing.T) {
	book := map[string]*Company{"a": {Name: "A", Matches: 5, Won: 4}, "b": {Name: "B", Matches: 2, Won: 2},
		"c": {Name: "C", Matches: 3, Won: 0}}
	if id, _ := Best(book, false); id != "a" {
		t.Errorf("best partner %q", id)
	}
	if id, _ := Best(book, true); id != "c" {
		t.Errorf("toughest %q", id)
	}
	if id, _ := Best(map[string]*Company{"b": book["b"]}, false); id != "" {
		t.Errorf("with fewer than three matches: %q", id)
	}
}

// A win share's 95% interval is Wilson's: inside 0..1 however few the matches or lopsided the
// share, and never of width 0 (the values from Wilson's formula worked by hand).
func TestShareInterval(t *testing.T) {
	for _, c := range []struct {
		won, played   int
		share, lo, hi float64
	}{
		{9, 10, 0.9, 0.5958, 0.9821},
		{10, 10, 1, 0.7225, 1},
		{0, 5, 0, 0, 0.4345},
		{3, 4, 0.75, 0.3006, 0.9544},
		{0, 0, 0, 0, 1},
	} {
		share, lo, hi := Share(c.won, c.played)
		if math.Abs(share-c.share) > 1e-9 || math.Abs(lo-c.lo) > 5e-5 || math.Abs(hi-c.hi) > 5e-5 {
			t.Errorf("%d of %d: %.4f in %.4f..%.4f, want %.4f in %.4f..%.4f", c.won, c.played, share, lo, hi, c.share, c.lo, c.hi)
		}
		if lo < 0 || hi > 1 || lo > share || share > hi || lo == hi {
			t.Errorf("%d of %d: %v outside %v..%v", c.won, c.played, share, lo, hi)
		}
	}
}

// A match played with hints counts for its games, never for a rating: not the place's, not the
// person's across places, not the season's.
func TestHintedMatchIsNotRated(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	p := NewPlace("test:club")
	global := map[string]rating.Rating{}
	m := FromCore("t/m1", p.Key, time.Date(2026, 11, 3, 20, 0, 0, 0, time.UTC), people("Ann", "Cy", "Bob", "Dee"), playMatch(rng, 2, 0))
	m.Hints = true
	p.Add(m, global)
	if p.Matches != 1 || len(p.Recent) != 1 {
		t.Errorf("the match is not kept: %d matches, %d recent", p.Matches, len(p.Recent))
	}
	for id, pl := range p.Players {
		if pl.Rating != Model.New() || pl.Matches != 0 || pl.Games != len(m.Games) || pl.Games == 0 {
			t.Errorf("%s after a hinted match: %+v", id, pl)
		}
	}
	if len(global) != 0 || len(p.SeasonTable("2026-11")) != 0 {
		t.Errorf("a hinted match moved ratings: global %v, season %v", global, p.SeasonTable("2026-11"))
	}
	m.Hints = false // the same match without hints is rated
	p.Add(m, global)
	if p.Players["id:Ann"].Rating == Model.New() || len(global) != 4 {
		t.Error("the same match without hints was not rated")
	}
}

// The anchors give the match win shares the levels were measured to have against each other:
// two of level a against two of level b, 80 matches from 9 stripes each (kontermatt duel -a A
// -b B -matches 40 -seed 3501 -nodes-per-ms 12000, strong–normal with seed 3502, one core each,
// with issue 34's inference and Strong's model of rule players), within the measure's 95% interval.
func TestAnchorsMatchTheDuels(t *testing.T) {
	for _, d := range []struct {
		a, b          string
		share, margin float64
	}{
		{"strong", "easy", 0.9875, 0.0245},
		{"strong", "normal", 0.5875, 0.0692},
		{"normal", "easy", 0.9500, 0.0471},
	} {
		a, b := Anchors[d.a], Anchors[d.b]
		got := Model.WinChance([]rating.Rating{a, a}, []rating.Rating{b, b})
		if got < d.share-d.margin || got > d.share+d.margin {
			t.Errorf("%s against %s: the anchors give %.3f, the duel measured %.3f ± %.3f", d.a, d.b, got, d.share, d.margin)
		}
		t.Logf("%s against %s: model %.3f, measured %.4f ± %.4f", d.a, d.b, got, d.share, d.margin)
	}
}

// Tied rows come out in one order, whatever order they came in (a map's): by ordinal, matches
// won, fewer matches played, name (case aside) and ID. Partners who always play together tie
// exactly, so a place's own table shows it too.
func TestTiesAreBrokenTheSameWay(t *testing.T) {
	r := rating.Rating{Mu: 25, Sigma: 5}
	want := []Standing{
		{ID: "z", Name: "Zoe", Rating: rating.Rating{Mu: 30, Sigma: 5}, Matches: 9, Won: 5},
		{ID: "e", Name: "Eve", Rating: r, Matches: 8, Won: 6},
		{ID: "d", Name: "Dan", Rating: r, Matches: 7, Won: 5},
		{ID: "c2", Name: "ann", Rating: r, Matches: 8, Won: 5},
		{ID: "b", Name: "Ann", Rating: r, Matches: 8, Won: 5},
		{ID: "c1", Name: "ann", Rating: r, Matches: 8, Won: 5},
		{ID: "a", Name: "Bob", Rating: r, Matches: 8, Won: 5},
	}
	// "Ann" and "ann" are the same name case aside: their IDs decide.
	want[3], want[4], want[5] = want[4], want[5], want[3]
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		rows := slices.Clone(want)
		rng.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
		got := Rank(rows, nil)
		for i := range got {
			if got[i].ID != want[i].ID {
				t.Fatalf("ranked %v, want %v", ids(got), ids(want))
			}
		}
	}
	p := NewPlace("test:club")
	for i := range 6 {
		p.Add(FromCore(fmt.Sprint("t/m", i), p.Key, time.Now(), people("Ann", "Bob", "Cy", "Dee"), playMatch(rand.New(rand.NewPCG(3, uint64(i))), 1, 0)), nil)
	}
	first := ids(Rank(p.AllTime(), nil))
	for range 20 {
		if got := ids(Rank(p.AllTime(), nil)); !slices.Equal(got, first) {
			t.Fatalf("the same table ranked %v, then %v", first, got)
		}
	}
	if a, c := p.Players["id:Ann"].Rating, p.Players["id:Cy"].Rating; a != c {
		t.Fatalf("partners Ann and Cy do not tie: %v, %v", a, c)
	}
}

func ids(rows []Standing) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r.ID)
	}
	return out
}

// The seasons' zone comes with the program (time/tzdata): a host without time-zone data (a
// distroless or scratch image) still has Luxembourg's months, not UTC's.
func TestZoneDataIsEmbedded(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go tool to list the package's dependencies: %v", err)
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	if !slices.Contains(strings.Fields(string(out)), "time/tzdata") {
		t.Error("the league does not embed time/tzdata: without the host's zone data its seasons would be UTC's")
	}
	if Zone.String() != "Europe/Luxembourg" {
		t.Errorf("the seasons' zone is %s", Zone)
	}
}

// A person is credited only with the games they played a move of: not with those a computer
// played entirely for them (Absent). A person not at the table when the match was won (left, or
// away: Forfeit) lost it, whatever their team did, and is rated so; the others are rated against
// the computer that finished in that seat. An away seat of an older record (no Forfeit) is not
// rated, as it was then.
func TestAbsentGamesAndForfeits(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 12))
	var m *core.Match
	for m == nil || len(m.Games()) < 2 {
		m = playMatch(rng, 2, 0)
	}
	w, _ := m.Winner()
	winner := int(w)
	// Seats: Ann (a winner) left after game 1 and forfeits; Bob her partner; Cy and Dee the others.
	seats := [4]Seat{}
	names := [4]string{"Ann", "Cy", "Bob", "Dee"}
	if winner == 1 {
		names = [4]string{"Cy", "Ann", "Dee", "Bob"}
	}
	annSeat := slices.Index(names[:], "Ann")
	for i, n := range names {
		seats[i] = Seat{ID: "id:" + n, Name: n}
	}
	seats[annSeat] = Seat{ID: "id:Ann", Name: "Ann", Robot: "strong", Left: true, Forfeit: true}
	for g := 2; g <= len(m.Games()); g++ {
		seats[annSeat].Absent = append(seats[annSeat].Absent, g)
	}
	p := NewPlace("test:club")
	global := map[string]rating.Rating{}
	p.Add(FromCore("t/m1", p.Key, time.Date(2026, 11, 3, 20, 0, 0, 0, time.UTC), seats, m), global)
	ann, bob := p.Players["id:Ann"], p.Players["id:Bob"]
	if ann.Games != 1 || bob.Games != len(m.Games()) {
		t.Errorf("Ann played 1 game, credited %d; Bob %d of %d", ann.Games, bob.Games, len(m.Games()))
	}
	if ann.Matches != 1 || ann.MatchesWon != 0 || bob.MatchesWon != 1 {
		t.Errorf("Ann: %d matches, %d won (she forfeited); Bob won %d", ann.Matches, ann.MatchesWon, bob.MatchesWon)
	}
	if ann.With != nil || ann.Against != nil || bob.With["id:Ann"] != nil {
		t.Errorf("Ann, who left, counts as company: %v %v %v", ann.With, ann.Against, bob.With)
	}
	// The match as it was played: Ann's seat is the strong anchor for the others.
	teams := [][]rating.Rating{make([]rating.Rating, 2), make([]rating.Rating, 2)}
	for i := range seats {
		teams[i%2][i/2] = Model.New()
	}
	teams[annSeat%2][annSeat/2] = Anchors["strong"]
	ranks := []int{1, 1}
	ranks[winner] = 0
	played := Model.Rate(teams, ranks)
	bobSeat := slices.Index(names[:], "Bob")
	if bob.Rating != played[bobSeat%2][bobSeat/2] {
		t.Errorf("Bob %v, want %v", bob.Rating, played[bobSeat%2][bobSeat/2])
	}
	// Ann's own: her team lost, with her own rating in her seat.
	teams[annSeat%2][annSeat/2] = Model.New()
	lost := []int{0, 0}
	lost[winner] = 1
	want := Model.Rate(teams, lost)[annSeat%2][annSeat/2]
	if ann.Rating != want || global["id:Ann"] != want || ann.Rating.Mu >= Model.New().Mu {
		t.Errorf("Ann %v (global %v), want the loss %v", ann.Rating, global["id:Ann"], want)
	}
	if sp := p.Seasons["2026-11"].Players["id:Ann"]; sp == nil || sp.Matches != 1 || sp.Won != 0 || sp.Rating != want {
		t.Errorf("Ann in November: %+v", sp)
	}
	// An older record's away seat, no Forfeit: not rated, as then.
	q := NewPlace("test:old")
	old := seats
	old[annSeat] = Seat{ID: "id:Ann", Name: "Ann", Robot: "normal", Away: true}
	q.Add(FromCore("t/m2", q.Key, time.Now(), old, m), nil)
	if a := q.Players["id:Ann"]; a.Matches != 0 || a.Rating != Model.New() || a.Games != len(m.Games()) {
		t.Errorf("Ann away in an older record: %+v", a)
	}
}

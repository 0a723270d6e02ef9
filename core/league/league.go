// Package league keeps a place's memory of who beat whom: statistics, ratings, the season tables
// and the recent matches. Everything here is derived from the kept matches (the records are the
// truth): a Place is built by Adding matches in the order they ended, and rebuilding it from the
// records gives the same numbers.
//
// Who counts (docs/league.md says the same for players):
//   - A match counts for the ratings only if a team won it. A match stopped before that counts
//     for the games its players played, not as a match played or won.
//   - A computer player is rated as the fixed anchor of its level: it moves its opponents'
//     ratings, and its own never moves, so a group's numbers mean the same in every group.
//   - A person who was not at the table when a team won the match — they left it, or a computer
//     was playing for them (away) — forfeited it: they lost it, whatever their team did, and are
//     rated so; the others are rated against the computer that finished in that seat, as its
//     level's anchor. (Records kept before forfeits were written: an away person is not rated.)
//   - A person is credited with the games they made a move of, not with those a computer played
//     entirely for them.
//   - A match played with hints on (or a guided game) moves no rating, and counts for the games
//     its players played, not as a match played or won.
package league

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
	_ "time/tzdata" // Zone's rules, where the host has none

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/rating"
)

// Model is the rating model: OpenSkill's Bradley-Terry full pairing with a small tau, so that a
// long-known player's rating still follows their form.
var Model = func() rating.Model {
	m := rating.Default
	m.Tau = rating.Default.Sigma / 100
	return m
}()

// Anchors are the computer levels' fixed ratings, set so that the model's chance for a team of
// two of one level against two of another is the match win share measured between them by
// `duel -matches` (docs/league.md; TestAnchorsMatchTheDuels). Normal stays at 23; the others
// are placed from it.
var Anchors = map[string]rating.Rating{
	"easy":   {Mu: 13.8, Sigma: 1},
	"normal": {Mu: 23, Sigma: 1},
	"strong": {Mu: 24.1, Sigma: 1},
}

// Provisional is the uncertainty above which a rating is still provisional: four people new to
// the league who play only each other get below it after about ten matches (8.33 at the start,
// about 7.0 after ten: TestProvisionalAfterAboutTenMatches).
const Provisional = 7.05

// Match is what the league learns from one kept match.
type Match struct {
	Key    string // the record's key
	Place  string // the place's key
	End    time.Time
	Seats  [4]Seat
	Games  []Game // the finished games
	Winner int    // 0 team A, 1 team B, -1: stopped before a team won
	Board  [2]int // the open stripes at the end
	// Hints says its players could ask for hints (or it was a guided game): its games count in
	// the statistics, and it counts for no rating.
	Hints bool
}

// Rated reports whether the match moves ratings: a team won it, without hints.
func (m Match) Rated() bool { return m.Winner >= 0 && !m.Hints }

// Seat is who sat in a seat at the end of a match.
type Seat struct {
	ID, Name string // a person; ID empty for a computer player
	Robot    string // a computer player's level, or the one that played for an absent person
	Away     bool   // a computer was playing for this person at the end
	Left     bool   // the person left during the match; the computer finished it for them
	// Forfeit says the person was not at the table when the match was won (they left, or were
	// away) and lost it, whatever their team's result. Records kept before it was written lack
	// it: an away person of such a record is not rated for the match, as then.
	Forfeit bool
	Absent  []int // the games (numbered from 1) a computer played entirely for the person
}

// present reports whether the seat's person was at the table at the end: they are rated for
// the match as it was played.
func (s Seat) present() bool { return s.ID != "" && !s.Away && !s.Left }

// forfeits reports whether the seat's person lost the match for not being at the table.
func (s Seat) forfeits() bool { return s.ID != "" && s.Forfeit && !s.present() }

// counts reports whether the match counts as played for the seat's person, once it is rated.
func (s Seat) counts() bool { return s.present() || s.forfeits() }

// Game is one finished game's facts.
type Game struct {
	No        int // its number in the match, from 1
	Forehand  int
	TrumpTeam int
	Outcome   core.Outcome
	Points    [2]int
	TricksWon [2]int
	Calls     []core.Announcement
}

// FromCore reads a match's facts from the engine's match.
func FromCore(key, place string, end time.Time, seats [4]Seat, m *core.Match) Match {
	out := Match{Key: key, Place: place, End: end, Seats: seats, Winner: -1}
	for i, g := range m.Games() {
		if g.Phase() != core.PhaseOver {
			continue
		}
		r := g.Result()
		out.Games = append(out.Games, Game{No: i + 1, Forehand: int(g.Forehand()), TrumpTeam: int(g.TrumpTeam()),
			Outcome: r.Outcome, Points: r.Points, TricksWon: r.TricksWon, Calls: g.Announcements()})
	}
	if w, ok := m.Winner(); ok {
		out.Winner = int(w)
	}
	out.Board = m.Board().OpenBoth()
	return out
}

// Place is a place's league: everyone who played there and what they did.
type Place struct {
	Key     string             `json:"key"`
	Matches int                `json:"matches"` // matches kept (stopped ones too)
	Players map[string]*Player `json:"players"`
	Seasons map[string]*Season `json:"seasons"` // "2026-11" → that month's table
	Recent  []Line             `json:"recent"`  // the last matches, newest last
	Last    time.Time          `json:"last"`    // when the newest match ended
}

// Season is one calendar month's table: its own ratings, from that month's matches only.
type Season struct {
	Players map[string]*SeasonPlayer `json:"players"`
}

// SeasonPlayer is one person in a season.
type SeasonPlayer struct {
	Name    string        `json:"name"`
	Matches int           `json:"matches"`
	Won     int           `json:"won"`
	Rating  rating.Rating `json:"rating"`
}

// Line is a match in the place's history.
type Line struct {
	Key    string    `json:"key"`
	End    time.Time `json:"end"`
	Teams  [2]string `json:"teams"` // "Ann & Bob"
	Winner int       `json:"winner"`
	Board  [2]int    `json:"board"`
	Games  int       `json:"games"`
}

// MaxRecent is how many matches the history keeps at least (at most twice as many).
const MaxRecent = 50

// Player is one person's record at a place.
type Player struct {
	Name       string        `json:"name"`
	Rating     rating.Rating `json:"rating"`
	Matches    int           `json:"matches"` // finished matches played
	MatchesWon int           `json:"matches_won"`
	Games      int           `json:"games"`
	GamesWon   int           `json:"games_won"`
	Draws      int           `json:"draws"` // Stänner: 20 to 20
	// Calls made and how the game went for the caller's team.
	KonterCalled int `json:"konter_called,omitempty"`
	KonterWon    int `json:"konter_won,omitempty"`
	MattCalled   int `json:"matt_called,omitempty"`
	MattWon      int `json:"matt_won,omitempty"`
	// Games this person named trump in, and won.
	TrumpNamed int `json:"trump_named,omitempty"`
	TrumpWon   int `json:"trump_won,omitempty"`
	// Games their team took every trick, or none.
	AllTricks int `json:"all_tricks,omitempty"`
	NoTricks  int `json:"no_tricks,omitempty"`
	// Matches won in a row: now, and the longest.
	Run     int                 `json:"run,omitempty"`
	BestRun int                 `json:"best_run,omitempty"`
	With    map[string]*Company `json:"with,omitempty"`
	Against map[string]*Company `json:"against,omitempty"`
}

// Company counts the finished matches two people played together or against each other, and how
// many of them the first won.
type Company struct {
	Name    string `json:"name"`
	Matches int    `json:"matches"`
	Won     int    `json:"won"`
}

// NewPlace is an empty league.
func NewPlace(key string) *Place {
	return &Place{Key: key, Players: map[string]*Player{}, Seasons: map[string]*Season{}}
}

// Season key of a time: its calendar month where the league keeps time.
func SeasonOf(t time.Time) string { return t.In(Zone).Format("2006-01") }

// Zone is where a season's month begins and ends: Luxembourg's, the game's home. Its rules come
// with the program (time/tzdata) where the host has no zone data of its own, so the seasons
// never silently become UTC's.
var Zone = func() *time.Location {
	l, err := time.LoadLocation("Europe/Luxembourg")
	if err != nil {
		panic("league: the seasons' time zone: " + err.Error()) // cannot happen with time/tzdata
	}
	return l
}()

func (p *Place) player(s Seat) *Player {
	pl := p.Players[s.ID]
	if pl == nil {
		pl = &Player{Rating: Model.New()}
		p.Players[s.ID] = pl
	}
	pl.Name = s.Name
	return pl
}

// Add learns one match. Matches must come in the order they ended; global is the person's rating
// across all places, updated the same way (nil: none kept).
func (p *Place) Add(m Match, global map[string]rating.Rating) {
	p.Matches++
	if m.End.After(p.Last) {
		p.Last = m.End
	}
	for i, s := range m.Seats {
		if s.ID == "" {
			continue
		}
		team := i % 2
		pl := p.player(s)
		for _, g := range m.Games {
			if !slices.Contains(s.Absent, g.No) {
				pl.countGame(g, i, team)
			}
		}
	}
	line := Line{Key: m.Key, End: m.End, Winner: m.Winner, Board: m.Board, Games: len(m.Games),
		Teams: [2]string{teamName(m.Seats[0], m.Seats[2]), teamName(m.Seats[1], m.Seats[3])}}
	p.Recent = append(p.Recent, line)
	if len(p.Recent) >= 2*MaxRecent { // trimmed now and then, not at every match
		p.Recent = slices.Clone(p.Recent[len(p.Recent)-MaxRecent:])
	}
	if !m.Rated() {
		return // stopped, or played with hints: its games count, the match does not
	}
	for i, s := range m.Seats {
		if !s.counts() {
			continue
		}
		pl := p.player(s)
		won := s.present() && i%2 == m.Winner
		pl.Matches++
		if won {
			pl.MatchesWon++
			pl.Run++
			pl.BestRun = max(pl.BestRun, pl.Run)
		} else {
			pl.Run = 0
		}
		if !s.present() {
			continue // partners and opponents are those who finished the match together
		}
		for j, o := range m.Seats {
			if j == i || !o.present() {
				continue
			}
			book := &pl.Against
			if j%2 == i%2 {
				book = &pl.With
			}
			if *book == nil {
				*book = map[string]*Company{}
			}
			c := (*book)[o.ID]
			if c == nil {
				c = &Company{}
				(*book)[o.ID] = c
			}
			c.Name = o.Name
			c.Matches++
			if won {
				c.Won++
			}
		}
	}
	rate(m, func(s Seat) rating.Rating { return p.player(s).Rating }, func(s Seat, r rating.Rating) { p.player(s).Rating = r })
	if global != nil {
		rate(m, func(s Seat) rating.Rating {
			if r, ok := global[s.ID]; ok {
				return r
			}
			return Model.New()
		}, func(s Seat, r rating.Rating) { global[s.ID] = r })
	}
	season := p.Seasons[SeasonOf(m.End)]
	if season == nil {
		season = &Season{Players: map[string]*SeasonPlayer{}}
		p.Seasons[SeasonOf(m.End)] = season
	}
	for i, s := range m.Seats {
		if !s.counts() {
			continue
		}
		sp := season.Players[s.ID]
		if sp == nil {
			sp = &SeasonPlayer{Rating: Model.New()}
			season.Players[s.ID] = sp
		}
		sp.Name = s.Name
		sp.Matches++
		if s.present() && i%2 == m.Winner {
			sp.Won++
		}
	}
	rate(m, func(s Seat) rating.Rating { return season.Players[s.ID].Rating },
		func(s Seat, r rating.Rating) { season.Players[s.ID].Rating = r })
}

func teamName(a, b Seat) string {
	name := func(s Seat) string {
		if s.ID == "" {
			return "🤖"
		}
		return s.Name
	}
	return name(a) + " & " + name(b)
}

// countGame adds one finished game to a player's statistics.
func (pl *Player) countGame(g Game, seat, team int) {
	pl.Games++
	won, _ := g.Outcome.Winner()
	if g.Outcome == core.WonByA || g.Outcome == core.WonByB {
		if int(won) == team {
			pl.GamesWon++
		}
	} else {
		pl.Draws++
	}
	teamWon := (g.Outcome == core.WonByA || g.Outcome == core.WonByB) && int(won) == team
	for _, a := range g.Calls {
		if int(a.Seat) != seat {
			continue
		}
		if a.Call&core.CallKonter != 0 {
			pl.KonterCalled++
			if teamWon {
				pl.KonterWon++
			}
		}
		if a.Call&core.CallMatt != 0 {
			pl.MattCalled++
			if teamWon {
				pl.MattWon++
			}
		}
	}
	if g.Forehand == seat {
		pl.TrumpNamed++
		if teamWon {
			pl.TrumpWon++
		}
	}
	switch {
	case g.TricksWon[team] == 6:
		pl.AllTricks++
	case g.TricksWon[team] == 0:
		pl.NoTricks++
	}
}

// rate updates, through get and set, the ratings of a finished match's people. The match is
// rated as it was played: the people at the table at the end with their ratings, computer players
// and the absent as their level's anchor, which does not move. A person who forfeited is rated
// as if their team had lost that same match, with their own rating in their seat.
func rate(m Match, get func(Seat) rating.Rating, set func(Seat, rating.Rating)) {
	teams := [][]rating.Rating{make([]rating.Rating, 2), make([]rating.Rating, 2)}
	for i, s := range m.Seats {
		if s.present() {
			teams[i%2][i/2] = get(s)
		} else {
			teams[i%2][i/2] = anchor(s.Robot)
		}
	}
	ranks := []int{1, 1}
	ranks[m.Winner] = 0
	out := Model.Rate(teams, ranks)
	for team := range 2 {
		var forfeited [][]rating.Rating
		for i, s := range m.Seats {
			if i%2 != team || !s.forfeits() {
				continue
			}
			if forfeited == nil {
				forfeited = [][]rating.Rating{slices.Clone(teams[0]), slices.Clone(teams[1])}
			}
			forfeited[team][i/2] = get(s)
		}
		if forfeited == nil {
			continue
		}
		lost := []int{0, 0}
		lost[team] = 1
		fout := Model.Rate(forfeited, lost)
		for i, s := range m.Seats {
			if i%2 == team && s.forfeits() {
				out[team][i/2] = fout[team][i/2]
			}
		}
	}
	for i, s := range m.Seats {
		if s.counts() {
			set(s, out[i%2][i/2])
		}
	}
}

func anchor(level string) rating.Rating {
	if r, ok := Anchors[level]; ok {
		return r
	}
	return Anchors["normal"]
}

// Standing is one row of a table.
type Standing struct {
	ID, Name    string
	Rating      rating.Rating
	Matches     int
	Won         int
	Provisional bool
}

// Rank orders a table: established players before provisional ones, each by ordinal, then by
// matches won, then by fewer matches played (the same wins in fewer matches), then by name (case
// aside) and last by ID, so that rows that tie on every number — partners who always play
// together do — come out in the same order every time. hidden are people who asked not to be
// ranked.
func Rank(rows []Standing, hidden func(id string) bool) []Standing {
	out := slices.DeleteFunc(slices.Clone(rows), func(s Standing) bool { return hidden != nil && hidden(s.ID) })
	for i := range out {
		out[i].Provisional = out[i].Rating.Sigma > Provisional
	}
	slices.SortFunc(out, func(a, b Standing) int {
		if a.Provisional != b.Provisional {
			if a.Provisional {
				return 1
			}
			return -1
		}
		return cmp.Or(cmp.Compare(b.Rating.Ordinal(), a.Rating.Ordinal()), cmp.Compare(b.Won, a.Won),
			cmp.Compare(a.Matches, b.Matches), cmp.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)),
			cmp.Compare(a.ID, b.ID))
	})
	return out
}

// AllTime is the place's table of all time.
func (p *Place) AllTime() []Standing {
	var rows []Standing
	for id, pl := range p.Players {
		if pl.Matches == 0 {
			continue
		}
		rows = append(rows, Standing{ID: id, Name: pl.Name, Rating: pl.Rating, Matches: pl.Matches, Won: pl.MatchesWon})
	}
	return rows
}

// SeasonTable is a month's table ("2026-11"), or nil when nobody played then.
func (p *Place) SeasonTable(month string) []Standing {
	s := p.Seasons[month]
	if s == nil {
		return nil
	}
	var rows []Standing
	for id, sp := range s.Players {
		rows = append(rows, Standing{ID: id, Name: sp.Name, Rating: sp.Rating, Matches: sp.Matches, Won: sp.Won})
	}
	return rows
}

// Share is a win share with its 95% interval, Wilson's score interval: unlike the normal
// approximation's "share ± margin" it stays inside 0..1 and is never of width 0 (9 of 10 is 0.90
// in 0.60..0.98, 10 of 10 is 1 in 0.72..1). With no match played it is 0 in 0..1.
func Share(won, played int) (share, lo, hi float64) {
	if played == 0 {
		return 0, 0, 1
	}
	const z = 1.96
	n := float64(played)
	share = float64(won) / n
	d := 1 + z*z/n
	center := (share + z*z/(2*n)) / d
	half := z / d * math.Sqrt(share*(1-share)/n+z*z/(4*n*n))
	return share, max(0, center-half), min(1, center+half)
}

// Best is the company a player did best with (or, with worst, worst against) among those they
// played at least three matches with: ("", nil) when there is none.
func Best(book map[string]*Company, worst bool) (string, *Company) {
	var bestID string
	var best *Company
	for _, id := range slices.Sorted(maps.Keys(book)) {
		c := book[id]
		if c.Matches < 3 {
			continue
		}
		share := float64(c.Won) / float64(c.Matches)
		if best == nil {
			bestID, best = id, c
			continue
		}
		bs := float64(best.Won) / float64(best.Matches)
		if !worst && share > bs || worst && share < bs {
			bestID, best = id, c
		}
	}
	return bestID, best
}

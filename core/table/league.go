package table

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/league"
	"github.com/kontermatt/kontermatt/core/privacy"
)

// The league's KV buckets (league.BucketPlaces and the others), named here for the store's tools.
const (
	BucketLeague  = league.BucketPlaces
	BucketRatings = league.BucketRatings
	BucketMonths  = league.BucketMonths
)

// LeagueBuckets are the KV buckets made from the records alone (Rebuild's).
var LeagueBuckets = league.Buckets

// LeagueMatch is what the league learns from a kept match.
func LeagueMatch(key string, rec StoredMatch, m *core.Match) league.Match {
	var seats [4]league.Seat
	for i, s := range rec.Seats {
		seats[i] = league.Seat{ID: s.ID, Name: s.Name, Robot: s.Robot, Away: s.Away, Left: s.Left, Forfeit: s.Forfeit,
			Absent: s.Absent}
		if s.Away && s.Robot == "" {
			seats[i].Robot = "normal" // kept before the level was kept with an absent seat
		}
	}
	lm := league.FromCore(key, rec.Place, time.UnixMilli(rec.End), seats, m)
	lm.Hints = rec.Hints
	return lm
}

// leftSeat is a seat whose person leaves during the match: a computer player finishes it for
// them, and the record keeps that they left (they forfeit the match: docs/league.md).
func leftSeat(at core.Seat, seat SeatState) SeatState {
	robot := robotSeat(at)
	robot.Left, robot.Moved, robot.Absent = seat.Player, seat.Moved, seat.Absent
	return robot
}

// noteAbsent marks game n, just finished, in the seats of the people who made none of its moves
// themselves: a computer played all of it for them (they were away, or had left), and it does
// not count in their statistics (table lock held).
func (t *tbl) noteAbsent(n int) {
	for i := range t.st.Seats {
		seat := &t.st.Seats[i]
		if (seat.Player != nil || seat.Left != nil) && !seat.Moved {
			seat.Absent = append(seat.Absent, n)
		}
	}
}

// leagueMatch is the league's view of the table's match as it ends (table lock held).
func (s *Service) leagueMatch(t *tbl, rec Record) league.Match {
	var sm StoredMatch
	if err := json.Unmarshal(rec.Data, &sm); err != nil {
		panic(fmt.Sprintf("table %s: own record: %v", t.st.ID, err)) // made a moment ago by matchRecord
	}
	return LeagueMatch(rec.Key, sm, t.match)
}

// PlaceLeague gives a copy of a place's league, for tools and tests.
func (s *Service) PlaceLeague(ctx context.Context, placeKey string) *league.Place {
	return s.league.Place(ctx, placeKey).Clone()
}

// Rebuild makes every league entry anew from the kept matches (league.Rebuild) and gives the KV
// entries to write; records that do not read are skipped and counted. records is a Store's
// Records (or one like it), called with ctx.
func Rebuild(ctx context.Context, records func(ctx context.Context, fn func(key string, data []byte) error) error) (entries []KVEntry, matches, skipped int, err error) {
	each := func(fn func(key string, data []byte) error) error { return records(ctx, fn) }
	es, matches, skipped, err := league.Rebuild(each, func(key string, data []byte) (league.Match, error) {
		rec, m, err := ParseStoredMatch(data)
		if err != nil {
			return league.Match{}, err
		}
		return LeagueMatch(key, rec, m), nil
	})
	return kvEntries(es), matches, skipped, err
}

// kvEntries are the league's entries as a Change writes them.
func kvEntries(es []league.Entry) []KVEntry {
	out := make([]KVEntry, len(es))
	for i, e := range es {
		out[i] = KVEntry{Bucket: e.Bucket, Key: e.Key, Value: e.Value}
	}
	return out
}

// keepMatch keeps the table's match as it ends (finished or stopped): its record, and what the
// league learns from it.
func (s *Service) keepMatch(t *tbl, out *outcome) {
	rec := s.matchRecord(t)
	out.records = append(out.records, rec)
	m := s.leagueMatch(t, rec)
	out.league = &m
}

// store writes a change; the league learns a match that ended in the same transaction, and its
// cache reads the entries again once the change is stored. The change expects the league's
// entries as the update read them (Change.Expect): if another match end (at another table of
// this copy, or at another copy) changed one meanwhile, the commit fails with ErrConflict and
// the command is applied again, so the match is learned from that update instead of
// overwriting it. No lock is held while the store writes, and no match end waits for another.
func (s *Service) store(ctx context.Context, c Change, ended *league.Match) error {
	if ended == nil {
		return s.timedCommit(ctx, c)
	}
	u, err := s.league.Learn(ctx, *ended)
	if err != nil {
		s.cfg.Log.Error("the league could not learn a match; stats rebuild repairs it", "table", c.TableID, "err", err)
		return s.timedCommit(ctx, c)
	}
	c.KV, c.Expect = kvEntries(u.Entries), kvEntries(u.Expect)
	err = s.timedCommit(ctx, c)
	s.league.Done(u, err == nil)
	return err
}

// seasonPostDays is how long into a month last month's table is still posted: a bot that was
// down on the first posts it when it is back, but not weeks later.
const seasonPostDays = 7

// postSeasons posts last month's final table, once, to every place where a rated match was won
// that month and that has someone to rank (a month of hinted matches has nobody, nor has one
// whose players all asked not to be ranked). It is marked posted before it is sent: a crash
// between the two loses one post rather than sending it twice.
func (s *Service) postSeasons(ctx context.Context) {
	now := s.cfg.Now().In(league.Zone)
	if now.Day() > seasonPostDays {
		return
	}
	month := league.SeasonOf(firstOfMonth(now).Add(-time.Hour))
	places := s.league.Month(ctx, month)
	if len(places) == 0 || s.league.Posted(ctx, month) {
		return
	}
	if err := s.markPosted(ctx, month, now); err != nil {
		if !errors.Is(err, ErrConflict) {
			s.cfg.Log.Error("marking a season posted; trying again later", "month", month, "err", err)
		}
		return // or another copy marked it first, and posts it
	}
	sent := 0
	for _, key := range places {
		p, ok := ParsePlaceKey(key)
		if !ok || len(s.standings(ctx, key, month)) == 0 {
			continue
		}
		sent++
		lang := cmp.Or(s.placeSettings(ctx, key).Lang, i18n.Pick())
		text := i18n.T(lang, "season.final", monthName(lang, month)) + s.standingsRows(ctx, key, month, lang)
		s.deliver(ctx, p.Platform, []Message{{Target: Target{Kind: ToPlace, Place: p}, Kind: KindNotice,
			Text: text, Picture: PictureStandings, Season: month, Lang: lang}})
	}
	s.cfg.Log.Info("posted last month's tables", "month", month, "places", sent)
}

// markPosted marks the month's tables posted, by compare-and-swap where the KV can (ErrConflict:
// another copy marked them first): of two copies posting at once, one does.
func (s *Service) markPosted(ctx context.Context, month string, now time.Time) error {
	sw, ok := s.claims()
	if !ok {
		return s.league.MarkPosted(ctx, month, now)
	}
	_, err := sw.Swap(ctx, league.BucketPosted, month, nil, []byte(strconv.Quote(now.Format(time.RFC3339))))
	return err
}

// sayAbout gives the text for key about the person id, named by its first argument; but when
// that person is the one reading their own screen (Surface.Personal), the text's second-person
// variant (key.you) with the other arguments, as say does for a seat: "You have not finished a
// game", not "You has …" with the terminal's "You" as a name.
func (s *Service) sayAbout(cmd Command, id, lang, key string, name string, args ...any) string {
	if id == cmd.Actor.ID && s.surface(cmd.Place).Personal {
		return i18n.T(lang, key+".you", args...)
	}
	return i18n.T(lang, key, append([]any{name}, args...)...)
}

// placeTitle is how the place is named in the league's texts.
func placeTitle(cmd Command, lang string) string {
	if cmd.Place.Title != "" {
		return cmd.Place.Title
	}
	return i18n.T(lang, "league.here")
}

func (s *Service) statsVerb(ctx context.Context, _ *tbl, c *call) *userError {
	cmd, lang := c.Command, c.lang
	arg := strings.TrimSpace(strings.Join(cmd.Args, " "))
	if word := strings.ToLower(arg); word == "off" || word == "on" {
		if err := s.users.Change(ctx, cmd.Actor.ID, func(p *privacy.Choices) { p.Hidden = word == "off" }); err != nil {
			return storeRefusal(err)
		}
		return c.answer(reply(cmd, lang, KindNotice, i18n.T(lang, "stats."+word)))
	}
	p := s.league.Place(ctx, cmd.Place.Key())
	id := cmd.Actor.ID
	if arg != "" && strings.ToLower(arg) != "me" {
		// Of two people with the name, the one who played more here (then the smaller ID).
		id = ""
		for _, pid := range slices.Sorted(maps.Keys(p.Players)) {
			pl := p.Players[pid]
			if i18n.Fold(pl.Name) == i18n.Fold(arg) && !strings.HasPrefix(pid, forgottenPrefix) &&
				(id == "" || pl.Games > p.Players[id].Games) {
				id = pid
			}
		}
		if id == "" {
			return refuse("stats.nobody", lit(arg))
		}
	}
	pl, ok := p.Players[id]
	name := cmd.Actor.Name
	if ok {
		name = pl.Name
	}
	switch {
	case id != cmd.Actor.ID && s.users.Get(id).Hidden:
		return c.answer(reply(cmd, lang, KindReply, i18n.T(lang, "stats.hidden", name)))
	case !ok || pl.Games == 0:
		return c.answer(reply(cmd, lang, KindReply, s.sayAbout(cmd, id, lang, "stats.none", name, placeTitle(cmd, lang))))
	}
	var b strings.Builder
	b.WriteString(s.sayAbout(cmd, id, lang, "stats.title", name, placeTitle(cmd, lang)))
	ranked := league.Rank(p.AllTime(), s.hidden)
	rank := slices.IndexFunc(ranked, func(r league.Standing) bool { return r.ID == id })
	if pl.Matches > 0 {
		line := i18n.T(lang, "stats.rating", decimal(lang, pl.Rating.Ordinal()), decimal(lang, pl.Rating.Mu), decimal(lang, pl.Rating.Sigma))
		if rank >= 0 {
			line += " · " + i18n.T(lang, "stats.rank", rank+1, len(ranked))
		}
		if pl.Rating.Sigma > league.Provisional {
			line += " · " + i18n.T(lang, "stats.provisional")
		}
		b.WriteString("\n" + line)
		share, lo, hi := league.Share(pl.MatchesWon, pl.Matches)
		b.WriteString("\n" + i18n.N(lang, "stats.matches", pl.Matches, pl.MatchesWon, percent(share), percent(lo), percent(hi)))
	}
	b.WriteString("\n" + i18n.N(lang, "stats.games", pl.Games, pl.GamesWon, pl.Draws))
	if _, c := league.Best(s.shown(pl.With), false); c != nil {
		b.WriteString("\n" + i18n.T(lang, "stats.partner", c.Name, c.Won, c.Matches))
	}
	if _, c := league.Best(s.shown(pl.Against), true); c != nil {
		b.WriteString("\n" + i18n.T(lang, "stats.opponent", c.Name, c.Won, c.Matches))
	}
	b.WriteString("\n" + i18n.T(lang, "stats.calls", pl.KonterCalled, pl.KonterWon, pl.MattCalled, pl.MattWon,
		pl.TrumpNamed, pl.TrumpWon))
	b.WriteString("\n" + i18n.T(lang, "stats.tricks", pl.AllTricks, pl.NoTricks, pl.BestRun))
	m := reply(cmd, lang, KindReply, b.String())
	if id == cmd.Actor.ID && s.users.Get(id).Hidden {
		// Someone who is not ranked sees their statistics alone, never in the group.
		m.Secret, m.Public = true, i18n.T(lang, "league.private")
	}
	return c.answer(m)
}

// hidden reports whether a person asked not to be ranked, or is a forgotten person's placeholder
// (rated, so that the others' ratings stay as they were, and never shown).
func (s *Service) hidden(id string) bool {
	return strings.HasPrefix(id, forgottenPrefix) || s.users.Get(id).Hidden
}

// shown is a player's book of partners or opponents without those never shown.
func (s *Service) shown(book map[string]*league.Company) map[string]*league.Company {
	out := make(map[string]*league.Company, len(book))
	for id, c := range book {
		if !s.hidden(id) {
			out[id] = c
		}
	}
	return out
}

// season reads top's argument: "" or "month" is this month, "all" all time, "2026-11" that
// month, "last" the month before.
func (s *Service) season(arg string) (string, bool) {
	now := s.cfg.Now()
	switch strings.ToLower(strings.TrimSpace(arg)) {
	case "", "month", "mount", "monat", "mois":
		return league.SeasonOf(now), true
	case "last":
		return league.SeasonOf(firstOfMonth(now).Add(-time.Hour)), true
	case "all", "alles", "tout":
		return "", true
	}
	if t, err := time.Parse("2006-01", strings.TrimSpace(arg)); err == nil {
		return t.Format("2006-01"), true
	}
	return "", false
}

// firstOfMonth is midnight of the first of now's month where the league keeps time.
func firstOfMonth(now time.Time) time.Time {
	t := now.In(league.Zone)
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, league.Zone)
}

func (s *Service) topVerb(ctx context.Context, _ *tbl, c *call) *userError {
	cmd, lang := c.Command, c.lang
	month, ok := s.season(strings.Join(cmd.Args, " "))
	if !ok {
		return refuse("top.usage")
	}
	m := reply(cmd, lang, KindReply, s.standingsText(ctx, cmd.Place.Key(), placeTitle(cmd, lang), month, lang))
	m.Picture, m.Season = PictureStandings, seasonArg(month)
	return c.answer(m)
}

func seasonArg(month string) string {
	if month == "" {
		return "all"
	}
	return month
}

// standingsText is a place's table of a month ("" all time) as text.
func (s *Service) standingsText(ctx context.Context, placeKey, title, month, lang string) string {
	head := i18n.T(lang, "top.all", title)
	if month != "" {
		head = i18n.T(lang, "top.month", title, monthName(lang, month))
	}
	return head + s.standingsRows(ctx, placeKey, month, lang)
}

// standings is a place's ranked table of a month ("" all time), hidden people left out.
func (s *Service) standings(ctx context.Context, placeKey, month string) []league.Standing {
	p := s.league.Place(ctx, placeKey)
	rows := p.AllTime()
	if month != "" {
		rows = p.SeasonTable(month)
	}
	return league.Rank(rows, s.hidden)
}

// standingsRows are the table's lines, each after a line break.
func (s *Service) standingsRows(ctx context.Context, placeKey, month, lang string) string {
	ranked := s.standings(ctx, placeKey, month)
	if len(ranked) == 0 {
		return "\n" + i18n.T(lang, "top.empty")
	}
	var b strings.Builder
	for i, r := range ranked {
		line := i18n.T(lang, "top.row", i+1, r.Name, decimal(lang, r.Rating.Ordinal()), r.Won, r.Matches)
		if r.Provisional {
			line += " " + i18n.T(lang, "top.provisional")
		}
		b.WriteString("\n" + line)
	}
	return b.String()
}

// monthName is "November 2026" in lang.
func monthName(lang, month string) string {
	t, err := time.Parse("2006-01", month)
	if err != nil {
		return month
	}
	names := strings.Split(i18n.T(lang, "months"), ",")
	if len(names) != 12 {
		return month
	}
	return names[t.Month()-1] + " " + strconv.Itoa(t.Year())
}

// maxHistory is how many matches history lists: two buttons each fit every platform's limits.
const maxHistory = 8

func (s *Service) historyVerb(ctx context.Context, _ *tbl, c *call) *userError {
	cmd, lang := c.Command, c.lang
	recent := slices.Clone(s.league.Place(ctx, cmd.Place.Key()).Recent)
	recent = recent[max(0, len(recent)-maxHistory):]
	slices.Reverse(recent)
	// A button names its match by key ("b:KEY"); typed, it is its number in the list ("board 2").
	switch arg := strings.TrimSpace(strings.Join(cmd.Args, " ")); {
	case arg == "":
	case strings.HasPrefix(arg, "b:"), strings.HasPrefix(arg, "r:"):
		return s.historyItem(ctx, c, arg[:1], arg[2:])
	default:
		what, n, _ := strings.Cut(strings.ToLower(arg), " ")
		i, err := strconv.Atoi(strings.TrimSpace(n))
		if (what != "board" && what != "record") || err != nil || i < 1 || i > len(recent) {
			return refuse("history.bad")
		}
		return s.historyItem(ctx, c, what[:1], recent[i-1].Key)
	}
	if len(recent) == 0 {
		return c.answer(reply(cmd, lang, KindReply, i18n.T(lang, "history.empty", placeTitle(cmd, lang))))
	}
	var b strings.Builder
	b.WriteString(i18n.T(lang, "history.title", placeTitle(cmd, lang)))
	var rows [][]Button
	for i, l := range recent {
		when := l.End.In(league.Zone).Format("2006-01-02 15:04")
		var line string
		switch w := l.Winner; w {
		case -1:
			line = i18n.T(lang, "history.stopped", i+1, when, l.Teams[0], l.Teams[1], l.Board[0], l.Board[1])
		default: // the winners first, their stripes too
			line = i18n.N(lang, "history.line", l.Games, i+1, when, l.Teams[w], l.Teams[1-w], l.Board[w], l.Board[1-w])
		}
		b.WriteString("\n" + line)
		n := strconv.Itoa(i + 1)
		rows = append(rows, []Button{
			{Label: "📋 " + n, Action: Action{Verb: VerbHistory, Arg: "b:" + l.Key}, Style: StyleSecondary},
			{Label: "📄 " + n, Action: Action{Verb: VerbHistory, Arg: "r:" + l.Key}, Style: StyleSecondary},
		})
	}
	if s.surface(cmd.Place).Typed {
		b.WriteString("\n" + i18n.T(lang, "history.buttons.typed"))
		rows = nil
	} else {
		b.WriteString("\n" + i18n.T(lang, "history.buttons"))
	}
	m := reply(cmd, lang, KindReply, b.String())
	m.Buttons = rows
	return c.answer(m)
}

// historyItem sends one kept match of the place: its board picture, or its record as a file in
// the replay format.
func (s *Service) historyItem(ctx context.Context, c *call, what, key string) *userError {
	cmd, lang := c.Command, c.lang
	known := slices.ContainsFunc(s.league.Place(ctx, cmd.Place.Key()).Recent, func(l league.Line) bool { return l.Key == key })
	var data []byte
	found := false
	if known {
		var err error
		if data, found, err = s.cfg.Store.Record(ctx, key); err != nil {
			s.cfg.Log.Error("reading a kept match", "record", key, "err", err)
			return storeRefusal(err)
		}
	}
	if !found { // a match of another place, or one pruned since: not this place's to show
		return refuse("history.gone")
	}
	m := reply(cmd, lang, KindReply, i18n.T(lang, "history.board"))
	m.Record = key
	if what == "b" {
		m.Picture = PictureBoard
		return c.answer(m)
	}
	recs, err := Export(data)
	if err != nil {
		return refuse("history.gone")
	}
	m.Text = i18n.T(lang, "history.record")
	m.File = &File{Name: strings.ReplaceAll(key, "/", "-") + ".json", Data: mustJSON(recs[key+"/match"].(ExportedMatch).Public())}
	return c.answer(m)
}

func mustJSON(v any) []byte {
	data, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		panic(fmt.Sprintf("a record does not encode: %v", err)) // records are plain data
	}
	return data
}

// decimal writes a rating with one decimal as lang writes numbers (i18n.Decimal).
func decimal(lang string, x float64) string { return i18n.Decimal(lang, x) }

// percent is a chance as a whole percentage.
func percent(p float64) int { return int(math.Round(100 * p)) }

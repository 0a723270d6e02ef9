// Package verbs answers the league's verbs: stats, top and history, about the place a command
// is sent in. The table service dispatches them (table.Config.Verbs) without a table's lock:
// they read the league, which the service's match ends write.
//
// verbs_test.go answers each verb through a service's registry, over a league learned as a match
// end teaches it; core/table's league_test.go says them over whole matches, its services
// registering them as the bot does (tabletest.Wire).
package verbs

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/league"
	"github.com/kontermatt/kontermatt/core/privacy"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// League is what the verbs read: the league the service's match ends write (the Cache of the
// keeper.Keeper that is table.Config.League), and the kept matches history shows.
type League struct {
	Cache *league.Cache
	// Records reads a kept match (a table.Store's Record).
	Records interface {
		Record(ctx context.Context, key string) ([]byte, bool, error)
	}
	Now func() time.Time // nil: time.Now
	Log *slog.Logger     // nil: none
}

// Verbs are the league's verbs, for table.Config.Verbs.
func (l *League) Verbs() []table.OutsideVerb {
	if l.Now == nil {
		l.Now = time.Now
	}
	if l.Log == nil {
		l.Log = slog.New(slog.DiscardHandler)
	}
	return []table.OutsideVerb{
		{Verb: api.VerbStats, Place: true, Run: l.stats},
		{Verb: api.VerbTop, Place: true, Run: l.top},
		{Verb: api.VerbHistory, Place: true, Run: l.history},
	}
}

func (l *League) stats(ctx context.Context, r *table.Request) ([]api.Message, error) {
	lang := r.Lang
	arg := strings.TrimSpace(strings.Join(r.Args, " "))
	if word := strings.ToLower(arg); word == "off" || word == "on" {
		if err := r.Choices.Change(ctx, r.Actor.ID, func(p *privacy.Choices) { p.Hidden = word == "off" }); err != nil {
			return nil, table.NotStored(err)
		}
		return []api.Message{r.Reply(api.KindNotice, i18n.T(lang, "stats."+word))}, nil
	}
	p := l.Cache.Place(ctx, r.Place.Key())
	id := r.Actor.ID
	if arg != "" && strings.ToLower(arg) != "me" {
		// Of two people with the name, the one who played more here (then the smaller ID).
		id = ""
		for _, pid := range slices.Sorted(maps.Keys(p.Players)) {
			pl := p.Players[pid]
			if i18n.Fold(pl.Name) == i18n.Fold(arg) && !table.IsForgotten(pid) &&
				(id == "" || pl.Games > p.Players[id].Games) {
				id = pid
			}
		}
		if id == "" {
			return nil, table.Refuse("stats.nobody", arg)
		}
	}
	pl, ok := p.Players[id]
	name := r.Actor.Name
	if ok {
		name = pl.Name
	}
	switch {
	case id != r.Actor.ID && r.Choices.Get(id).Hidden:
		return []api.Message{r.Reply(api.KindReply, i18n.T(lang, "stats.hidden", name))}, nil
	case !ok || pl.Games == 0:
		return []api.Message{r.Reply(api.KindReply, r.SayAbout(id, "stats.none", name, r.PlaceTitle()))}, nil
	}
	var b strings.Builder
	b.WriteString(r.SayAbout(id, "stats.title", name, r.PlaceTitle()))
	ranked := league.Rank(p.AllTime(), r.Hidden)
	rank := slices.IndexFunc(ranked, func(s league.Standing) bool { return s.ID == id })
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
	if _, c := league.Best(shown(r, pl.With), false); c != nil {
		b.WriteString("\n" + i18n.T(lang, "stats.partner", c.Name, c.Won, c.Matches))
	}
	if _, c := league.Best(shown(r, pl.Against), true); c != nil {
		b.WriteString("\n" + i18n.T(lang, "stats.opponent", c.Name, c.Won, c.Matches))
	}
	b.WriteString("\n" + i18n.T(lang, "stats.calls", pl.KonterCalled, pl.KonterWon, pl.MattCalled, pl.MattWon,
		pl.TrumpNamed, pl.TrumpWon))
	b.WriteString("\n" + i18n.T(lang, "stats.tricks", pl.AllTricks, pl.NoTricks, pl.BestRun))
	m := r.Reply(api.KindReply, b.String())
	if id == r.Actor.ID && r.Choices.Get(id).Hidden {
		// Someone who is not ranked sees their statistics alone, never in the group.
		m.Secret, m.Public = true, i18n.T(lang, "league.private")
	}
	return []api.Message{m}, nil
}

// shown is a player's book of partners or opponents without those never shown.
func shown(r *table.Request, book map[string]*league.Company) map[string]*league.Company {
	out := make(map[string]*league.Company, len(book))
	for id, c := range book {
		if !r.Hidden(id) {
			out[id] = c
		}
	}
	return out
}

// season reads top's argument: "" or "month" is this month, "all" all time, "2026-11" that
// month, "last" the month before.
func (l *League) season(arg string) (string, bool) {
	now := l.Now()
	switch strings.ToLower(strings.TrimSpace(arg)) {
	case "", "month", "mount", "monat", "mois":
		return league.SeasonOf(now), true
	case "last":
		return league.SeasonOf(league.FirstOfMonth(now).Add(-time.Hour)), true
	case "all", "alles", "tout":
		return "", true
	}
	if t, err := time.Parse("2006-01", strings.TrimSpace(arg)); err == nil {
		return t.Format("2006-01"), true
	}
	return "", false
}

func (l *League) top(ctx context.Context, r *table.Request) ([]api.Message, error) {
	lang := r.Lang
	month, ok := l.season(strings.Join(r.Args, " "))
	if !ok {
		return nil, table.Refuse("top.usage")
	}
	head := i18n.T(lang, "top.all", r.PlaceTitle())
	if month != "" {
		head = i18n.T(lang, "top.month", r.PlaceTitle(), league.MonthName(lang, month))
	}
	m := r.Reply(api.KindReply, head+league.StandingsRows(lang, l.Cache.Standings(ctx, r.Place.Key(), month, r.Hidden)))
	m.Picture, m.Season = api.PictureStandings, seasonArg(month)
	return []api.Message{m}, nil
}

func seasonArg(month string) string {
	if month == "" {
		return "all"
	}
	return month
}

// maxHistory is how many matches history lists: two buttons each fit every platform's limits.
const maxHistory = 8

func (l *League) history(ctx context.Context, r *table.Request) ([]api.Message, error) {
	lang := r.Lang
	recent := slices.Clone(l.Cache.Place(ctx, r.Place.Key()).Recent)
	recent = recent[max(0, len(recent)-maxHistory):]
	slices.Reverse(recent)
	// A button names its match by key ("b:KEY"); typed, it is its number in the list ("board 2").
	switch arg := strings.TrimSpace(strings.Join(r.Args, " ")); {
	case arg == "":
	case strings.HasPrefix(arg, "b:"), strings.HasPrefix(arg, "r:"):
		return l.historyItem(ctx, r, arg[:1], arg[2:])
	default:
		what, n, _ := strings.Cut(strings.ToLower(arg), " ")
		i, err := strconv.Atoi(strings.TrimSpace(n))
		if (what != "board" && what != "record") || err != nil || i < 1 || i > len(recent) {
			return nil, table.Refuse("history.bad")
		}
		return l.historyItem(ctx, r, what[:1], recent[i-1].Key)
	}
	if len(recent) == 0 {
		return []api.Message{r.Reply(api.KindReply, i18n.T(lang, "history.empty", r.PlaceTitle()))}, nil
	}
	var b strings.Builder
	b.WriteString(i18n.T(lang, "history.title", r.PlaceTitle()))
	var rows [][]api.Button
	for i, ln := range recent {
		when := ln.End.In(league.Zone).Format("2006-01-02 15:04")
		var line string
		switch w := ln.Winner; w {
		case -1:
			line = i18n.T(lang, "history.stopped", i+1, when, ln.Teams[0], ln.Teams[1], ln.Board[0], ln.Board[1])
		default: // the winners first, their stripes too
			line = i18n.N(lang, "history.line", ln.Games, i+1, when, ln.Teams[w], ln.Teams[1-w], ln.Board[w], ln.Board[1-w])
		}
		b.WriteString("\n" + line)
		n := strconv.Itoa(i + 1)
		rows = append(rows, []api.Button{
			{Label: "📋 " + n, Action: api.Action{Verb: api.VerbHistory, Arg: "b:" + ln.Key}, Style: api.StyleSecondary},
			{Label: "📄 " + n, Action: api.Action{Verb: api.VerbHistory, Arg: "r:" + ln.Key}, Style: api.StyleSecondary},
		})
	}
	if r.Surface.Typed {
		b.WriteString("\n" + i18n.T(lang, "history.buttons.typed"))
		rows = nil
	} else {
		b.WriteString("\n" + i18n.T(lang, "history.buttons"))
	}
	m := r.Reply(api.KindReply, b.String())
	m.Buttons = rows
	return []api.Message{m}, nil
}

// historyItem sends one kept match of the place: its board picture, or its record as a file in
// the replay format.
func (l *League) historyItem(ctx context.Context, r *table.Request, what, key string) ([]api.Message, error) {
	lang := r.Lang
	known := slices.ContainsFunc(l.Cache.Place(ctx, r.Place.Key()).Recent, func(ln league.Line) bool { return ln.Key == key })
	var data []byte
	found := false
	if known {
		var err error
		if data, found, err = l.Records.Record(ctx, key); err != nil {
			l.Log.Error("reading a kept match", "record", key, "err", err)
			return nil, table.NotStored(err)
		}
	}
	if !found { // a match of another place, or one pruned since: not this place's to show
		return nil, table.Refuse("history.gone")
	}
	m := r.Reply(api.KindReply, i18n.T(lang, "history.board"))
	m.Record = key
	if what == "b" {
		m.Picture = api.PictureBoard
		return []api.Message{m}, nil
	}
	recs, err := table.Export(data)
	if err != nil {
		return nil, table.Refuse("history.gone")
	}
	m.Text = i18n.T(lang, "history.record")
	m.File = &api.File{Name: strings.ReplaceAll(key, "/", "-") + ".json", Data: mustJSON(recs[key+"/match"].(table.ExportedMatch).Public())}
	return []api.Message{m}, nil
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

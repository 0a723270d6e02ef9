// Package keeper keeps the league for the table engine: its Keeper is the engine's League port
// (table.Config.League). It is the one place where the engine's kept matches become the league's
// (Match), where a match end's update is handed to the engine's commit, and where the league's
// tables are posted and drawn at places. The league itself (core/league) knows no engine; the
// engine (core/table) knows no league.
package keeper

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/league"
	"github.com/kontermatt/kontermatt/core/picture"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/render"
)

// Keeper is the league of every place, as the engine's match ends teach it.
type Keeper struct {
	Cache *league.Cache // the league the verbs read too (core/league/verbs)
	// kv is where the league is kept, the Cache's: a season is marked posted on it, by
	// compare-and-swap where it is a table.Swapper.
	kv  table.KV
	log *slog.Logger
}

var _ table.League = (*Keeper)(nil)

// New is a Keeper of the league kept on kv; log (nil: none) hears what cannot be read or
// marked. shared: other copies of the bot write the same KV, so nothing read is kept
// (league.Cache.Shared).
func New(kv table.KV, shared bool, log *slog.Logger) *Keeper {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := league.NewCache(kv, log)
	if shared {
		c.Shared()
	}
	return &Keeper{Cache: c, kv: kv, log: log}
}

// Match is what the league learns from a kept match.
func Match(key string, rec table.StoredMatch, m *core.Match) league.Match {
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

// Learn works out what a kept match changes in the league (league.Cache.Learn), for the engine
// to write with the match under compare-and-swap: if another match end (at another table of
// this copy, or at another copy) changed an entry meanwhile, the commit fails with ErrConflict
// and the engine applies the command again, so the match is learned from that update instead
// of overwriting it. No lock is held while the store writes, and no match end waits for another.
func (k *Keeper) Learn(ctx context.Context, rec table.Record, m *core.Match) (table.LeagueUpdate, error) {
	var sm table.StoredMatch
	if err := json.Unmarshal(rec.Data, &sm); err != nil {
		return table.LeagueUpdate{}, err
	}
	u, err := k.Cache.Learn(ctx, Match(rec.Key, sm, m))
	if err != nil {
		return table.LeagueUpdate{}, err
	}
	return table.LeagueUpdate{KV: kvEntries(u.Entries), Expect: kvEntries(u.Expect),
		Done: func(stored bool) { k.Cache.Done(u, stored) }}, nil
}

// Hold keeps match ends from learning while the whole league is written anew (league.Cache.Hold).
func (k *Keeper) Hold() (release func()) { return k.Cache.Hold() }

// Rebuild makes every league entry anew from records, for a change that writes them
// (forgetting a person); those that do not read are skipped.
func (k *Keeper) Rebuild(ctx context.Context, records func(ctx context.Context, fn func(key string, data []byte) error) error) ([]table.KVEntry, []string, error) {
	entries, _, _, err := Rebuild(ctx, records)
	return entries, league.Buckets, err
}

// Rebuild makes every league entry anew from the kept matches (league.Rebuild) and gives the KV
// entries to write (in the buckets league.Buckets); records that do not read are skipped and
// counted. records is a Store's Records (or one like it), called with ctx.
func Rebuild(ctx context.Context, records func(ctx context.Context, fn func(key string, data []byte) error) error) (entries []table.KVEntry, matches, skipped int, err error) {
	each := func(fn func(key string, data []byte) error) error { return records(ctx, fn) }
	es, matches, skipped, err := league.Rebuild(each, func(key string, data []byte) (league.Match, error) {
		rec, m, err := table.ParseStoredMatch(data)
		if err != nil {
			return league.Match{}, err
		}
		return Match(key, rec, m), nil
	})
	return kvEntries(es), matches, skipped, err
}

// kvEntries are the league's entries as a Change writes them.
func kvEntries(es []league.Entry) []table.KVEntry {
	out := make([]table.KVEntry, len(es))
	for i, e := range es {
		out[i] = table.KVEntry{Bucket: e.Bucket, Key: e.Key, Value: e.Value}
	}
	return out
}

// seasonPostDays is how long into a month last month's table is still posted: a bot that was
// down on the first posts it when it is back, but not weeks later.
const seasonPostDays = 7

// PostSeasons posts last month's final table, once, to every place where a rated match was won
// that month and that has someone to rank (a month of hinted matches has nobody, nor has one
// whose players all asked not to be ranked). It is marked posted before it is sent: a crash
// between the two loses one post rather than sending it twice.
func (k *Keeper) PostSeasons(ctx context.Context, at table.Posting) {
	now := at.Now.In(league.Zone)
	if now.Day() > seasonPostDays {
		return
	}
	month := league.SeasonOf(league.FirstOfMonth(now).Add(-time.Hour))
	places := k.Cache.Month(ctx, month)
	if len(places) == 0 || k.Cache.Posted(ctx, month) {
		return
	}
	if err := k.markPosted(ctx, month, now); err != nil {
		if !errors.Is(err, table.ErrConflict) {
			k.log.Error("marking a season posted; trying again later", "month", month, "err", err)
		}
		return // or another copy marked it first, and posts it
	}
	sent := 0
	for _, key := range places {
		p, ok := api.ParsePlaceKey(key)
		if !ok || len(k.Cache.Standings(ctx, key, month, at.Hidden)) == 0 {
			continue
		}
		sent++
		lang := cmp.Or(at.Lang(ctx, key), i18n.Pick())
		text := i18n.T(lang, "season.final", league.MonthName(lang, month)) +
			league.StandingsRows(lang, k.Cache.Standings(ctx, key, month, at.Hidden))
		at.Deliver(ctx, p.Platform, []api.Message{{Target: api.Target{Kind: api.ToPlace, Place: p},
			Kind: api.KindNotice, Text: text, Picture: api.PictureStandings, Season: month, Lang: lang}})
	}
	k.log.Info("posted last month's tables", "month", month, "places", sent)
}

// markPosted marks the month's tables posted, by compare-and-swap where the KV can (ErrConflict:
// another copy marked them first): of two copies posting at once, one does.
func (k *Keeper) markPosted(ctx context.Context, month string, now time.Time) error {
	sw, ok := k.kv.(table.Swapper)
	if !ok {
		return k.Cache.MarkPosted(ctx, month, now)
	}
	_, err := sw.Swap(ctx, league.BucketPosted, month, nil, []byte(strconv.Quote(now.Format(time.RFC3339))))
	return err
}

// StandingsPicture draws a place's table of a season ("2026-11", or "all").
func (k *Keeper) StandingsPicture(ctx context.Context, p api.Place, season, lang string, th picture.Theme, hidden func(id string) bool) ([]byte, string, error) {
	month := season
	if season == "all" {
		month = ""
	} else if _, err := time.Parse("2006-01", season); err != nil {
		return nil, "", table.ErrNoPicture
	}
	title := p.Title
	if title == "" {
		title = i18n.T(lang, "league.here")
	}
	in := picture.StandingsInput{Title: i18n.T(lang, "top.all", title), Labels: render.Labels(lang)}
	if month != "" {
		in.Title = i18n.T(lang, "top.month", title, league.MonthName(lang, month))
	}
	in.Title = strings.TrimLeft(in.Title, "🏆 ") // the picture has no emoji font
	for _, r := range k.Cache.Standings(ctx, p.Key(), month, hidden) {
		in.Rows = append(in.Rows, picture.StandingRow{Name: r.Name, Rating: i18n.Decimal(lang, r.Rating.Ordinal()),
			Won: r.Won, Played: r.Matches, Provisional: r.Provisional})
	}
	png, err := picture.Standings(in, th)
	return png, in.AltText(), err
}

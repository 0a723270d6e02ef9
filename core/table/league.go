package table

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/league"
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
	month := league.SeasonOf(league.FirstOfMonth(now).Add(-time.Hour))
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
		text := i18n.T(lang, "season.final", league.MonthName(lang, month)) + league.StandingsRows(lang, s.standings(ctx, key, month))
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
func sayAbout(surface Surface, cmd Command, id, lang, key string, name string, args ...any) string {
	if id == cmd.Actor.ID && surface.Personal {
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

// hidden reports whether a person asked not to be ranked, or is a forgotten person's placeholder
// (rated, so that the others' ratings stay as they were, and never shown).
func (s *Service) hidden(id string) bool { return IsForgotten(id) || s.users.Get(id).Hidden }

// IsForgotten reports whether a player ID is a forgotten person's placeholder (Forget).
func IsForgotten(id string) bool { return strings.HasPrefix(id, forgottenPrefix) }

// standings is a place's ranked table of a month ("" all time), hidden people left out.
func (s *Service) standings(ctx context.Context, placeKey, month string) []league.Standing {
	return s.league.Standings(ctx, placeKey, month, s.hidden)
}

// decimal writes a rating with one decimal as lang writes numbers (i18n.Decimal).
func decimal(lang string, x float64) string { return i18n.Decimal(lang, x) }

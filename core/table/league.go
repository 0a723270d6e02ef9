package table

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/league"
	"github.com/kontermatt/kontermatt/core/rating"
)

// The league's KV buckets. They are derived from the kept matches and written in the same
// transaction as the match that changes them; `stats rebuild` makes them anew from the records.
const (
	BucketLeague  = "league.place"  // place key → league.Place
	BucketRatings = "league.person" // player ID → rating.Rating across all places
	BucketMonths  = "league.month"  // "2026-11" → []place key: the places where a rated match was won that month
	bucketPosted  = "league.posted" // "2026-11" → when that month's tables were posted
)

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

// leagues caches the league's KV entries in front of the KV. Its lock is held from a match end's
// change until that change is stored, so the cache only ever holds what the store holds.
type leagues struct {
	mu     sync.Mutex
	kv     KV
	log    *slog.Logger
	places map[string]*league.Place
	people map[string]rating.Rating
	months map[string][]string
}

func (l *leagues) init(kv KV, log *slog.Logger) {
	l.kv, l.log = kv, log
	l.places, l.people, l.months = map[string]*league.Place{}, map[string]rating.Rating{}, map[string][]string{}
}

// get reads a bucket's JSON entry into v; false when there is none (or no KV).
func (l *leagues) get(bucket, key string, v any) bool {
	if l.kv == nil {
		return false
	}
	data, ok, err := l.kv.Get(bucket, key)
	if err != nil {
		l.log.Error("reading the league", "bucket", bucket, "err", err)
		return false
	}
	if ok {
		if err := json.Unmarshal(data, v); err != nil {
			l.log.Error("a league entry does not decode; stats rebuild makes it anew", "bucket", bucket, "key", key, "err", err)
			return false
		}
	}
	return ok
}

// place gives a place's league (l.mu held).
func (l *leagues) place(key string) *league.Place {
	if p, ok := l.places[key]; ok {
		return p
	}
	p := league.NewPlace(key)
	if l.get(BucketLeague, key, p) && p.Players == nil {
		p = league.NewPlace(key)
	}
	l.places[key] = p
	return p
}

// person gives a person's rating across places (l.mu held).
func (l *leagues) person(id string) (rating.Rating, bool) {
	if r, ok := l.people[id]; ok {
		return r, true
	}
	var r rating.Rating
	if !l.get(BucketRatings, id, &r) {
		return r, false
	}
	l.people[id] = r
	return r, true
}

func (l *leagues) month(m string) []string {
	if ps, ok := l.months[m]; ok {
		return ps
	}
	var ps []string
	l.get(BucketMonths, m, &ps)
	l.months[m] = ps
	return ps
}

// update is a match end's change to the league, to be written with the match.
type update struct {
	place  *league.Place
	people map[string]rating.Rating
	month  string
	months []string
	kv     []KVEntry
}

// learn works out, on copies, what a finished or stopped match changes (l.mu held).
func (l *leagues) learn(m league.Match) (*update, error) {
	cur := l.place(m.Place)
	data, err := json.Marshal(cur)
	if err != nil {
		return nil, err
	}
	next := league.NewPlace(m.Place)
	if err := json.Unmarshal(data, next); err != nil {
		return nil, err
	}
	people := map[string]rating.Rating{}
	for _, s := range m.Seats {
		if s.ID != "" {
			if r, ok := l.person(s.ID); ok {
				people[s.ID] = r
			}
		}
	}
	next.Add(m, people)
	u := &update{place: next, people: people}
	if data, err = json.Marshal(next); err != nil {
		return nil, err
	}
	u.kv = append(u.kv, KVEntry{Bucket: BucketLeague, Key: m.Place, Value: data})
	for id, r := range people {
		b, _ := json.Marshal(r)
		u.kv = append(u.kv, KVEntry{Bucket: BucketRatings, Key: id, Value: b})
	}
	u.month = league.SeasonOf(m.End)
	months := l.month(u.month)
	if m.Rated() && !contains(months, m.Place) {
		u.months = append(append([]string(nil), months...), m.Place)
		b, _ := json.Marshal(u.months)
		u.kv = append(u.kv, KVEntry{Bucket: BucketMonths, Key: u.month, Value: b})
	}
	return u, nil
}

// keep takes a stored update into the cache (l.mu held).
func (l *leagues) keep(u *update) {
	l.places[u.place.Key] = u.place
	for id, r := range u.people {
		l.people[id] = r
	}
	if u.months != nil {
		l.months[u.month] = u.months
	}
}

func contains(list []string, s string) bool { return slices.Contains(list, s) }

// leagueMatch is the league's view of the table's match as it ends (table lock held).
func (s *Service) leagueMatch(t *tbl, rec Record) league.Match {
	var sm StoredMatch
	if err := json.Unmarshal(rec.Data, &sm); err != nil {
		panic(fmt.Sprintf("table %s: own record: %v", t.st.ID, err)) // made a moment ago by matchRecord
	}
	return LeagueMatch(rec.Key, sm, t.match)
}

// PlaceLeague gives a copy of a place's league, for tools and tests.
func (s *Service) PlaceLeague(placeKey string) *league.Place {
	s.league.mu.Lock()
	defer s.league.mu.Unlock()
	data, _ := json.Marshal(s.league.place(placeKey))
	p := league.NewPlace(placeKey)
	_ = json.Unmarshal(data, p)
	return p
}

// Rebuild makes every league entry anew from the kept matches, in the order they ended, and gives
// the KV entries to write (every place's league, every person's rating, the months). Stopped and
// finished matches alike; records that do not read are skipped and counted.
func Rebuild(records func(fn func(key string, data []byte) error) error) (entries []KVEntry, matches, skipped int, err error) {
	type kept struct {
		at  int64
		key string
		m   league.Match
	}
	var all []kept
	err = records(func(key string, data []byte) error {
		rec, m, err := ParseStoredMatch(data)
		if err != nil {
			skipped++
			return nil
		}
		all = append(all, kept{rec.End, key, LeagueMatch(key, rec, m)})
		return nil
	})
	if err != nil {
		return nil, 0, skipped, err
	}
	slices.SortFunc(all, func(a, b kept) int { return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.key, b.key)) })
	places := map[string]*league.Place{}
	people := map[string]rating.Rating{}
	months := map[string][]string{}
	for _, k := range all {
		p := places[k.m.Place]
		if p == nil {
			p = league.NewPlace(k.m.Place)
			places[k.m.Place] = p
		}
		p.Add(k.m, people)
		if mo := league.SeasonOf(k.m.End); k.m.Rated() && !contains(months[mo], k.m.Place) {
			months[mo] = append(months[mo], k.m.Place)
		}
	}
	for key, p := range places {
		data, _ := json.Marshal(p)
		entries = append(entries, KVEntry{Bucket: BucketLeague, Key: key, Value: data})
	}
	for id, r := range people {
		data, _ := json.Marshal(r)
		entries = append(entries, KVEntry{Bucket: BucketRatings, Key: id, Value: data})
	}
	for mo, ps := range months {
		data, _ := json.Marshal(ps)
		entries = append(entries, KVEntry{Bucket: BucketMonths, Key: mo, Value: data})
	}
	return entries, len(all), skipped, nil
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
	var posted string
	s.league.mu.Lock()
	done := s.league.get(bucketPosted, month, &posted)
	places := slices.Clone(s.league.month(month))
	s.league.mu.Unlock()
	if done || len(places) == 0 {
		return
	}
	if err := s.cfg.KV.Put(bucketPosted, month, []byte(strconv.Quote(now.Format(time.RFC3339)))); err != nil {
		s.cfg.Log.Error("marking a season posted; trying again later", "month", month, "err", err)
		return
	}
	sent := 0
	for _, key := range places {
		p, ok := ParsePlaceKey(key)
		if !ok || len(s.standings(key, month)) == 0 {
			continue
		}
		sent++
		lang := cmp.Or(s.placeSettings(key).Lang, i18n.Pick())
		text := i18n.T(lang, "season.final", monthName(lang, month)) + s.standingsRows(key, month, lang)
		s.deliver(ctx, p.Platform, []Message{{Target: Target{Kind: ToPlace, Place: p}, Kind: KindNotice,
			Text: text, Picture: PictureStandings, Season: month, Lang: lang}})
	}
	s.cfg.Log.Info("posted last month's tables", "month", month, "places", sent)
}

package table

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/privacy"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/render"
)

// Forgetting a person ("forget yes") is core/privacy's Forgetter (see there for everything it
// reaches); the engine's part is what only it can do, under each table's lock: a table in memory,
// a closed table's stored state and a kept match forget the person (forgetTables).

// Forgotten is the name a forgotten person has in the kept matches; their ID there begins with
// forgottenPrefix.
const (
	Forgotten       = "—"
	forgottenPrefix = privacy.ForgottenPrefix
)

// Forget removes a person from what the bot keeps (privacy.Forgetter). It gives how many kept
// matches named them; with a *ForgetPending error it is done but for the store's older versions.
// With other copies on the store it first waits for the lease privacy.Lease.
func (s *Service) Forget(ctx context.Context, id string) (int, error) {
	return s.forgetter.Forget(ctx, id)
}

// newForgetter gives the service's Forgetter: the engine's part is forgetTables.
func (s *Service) newForgetter() *privacy.Forgetter {
	return &privacy.Forgetter{Tables: forgetTables{s}, Store: s.cfg.Store, Leases: s.cfg.Leases, League: s.cfg.League,
		People: s.cfg.People, Book: s.users, Places: s.places, Claims: bucketClaims, Random: s.draw.uint64,
		Observe: s.clustered.Lease, Log: s.cfg.Log}
}

// forgetTables is the engine's part of forgetting a person (privacy.Tables).
type forgetTables struct{ s *Service }

// Leave makes every table in memory forget the person, one table's lock at a time.
func (ft forgetTables) Leave(p *privacy.Person) (tables, places []string, err error) {
	s := ft.s
	for _, t := range s.index.all() {
		t.mu.Lock()
		key := t.st.Place.Key()
		at, err := ft.forgetAt(t, p)
		t.mu.Unlock()
		if err != nil {
			return nil, nil, err
		}
		if at {
			tables = append(tables, t.id())
			places = append(places, key)
		}
	}
	return tables, places, nil
}

// ScrubClosed makes a closed table's state forget the person.
func (forgetTables) ScrubClosed(p *privacy.Person, data []byte) ([]byte, bool, error) {
	st := new(state)
	if json.Unmarshal(data, st) != nil || !scrub(p, st) {
		return nil, false, nil
	}
	b, err := json.Marshal(st)
	return b, true, err
}

// ScrubRecord makes a kept match forget the person: their seat gets the placeholder, and a
// private chat of theirs its own.
func (forgetTables) ScrubRecord(p *privacy.Person, key string, data []byte) (Record, bool) {
	var rec StoredMatch
	if json.Unmarshal(data, &rec) != nil {
		return Record{}, false
	}
	touched := false
	for i := range rec.Seats {
		if rec.Seats[i].ID == p.ID {
			rec.Seats[i].ID, rec.Seats[i].Name = p.As, Forgotten
			touched = true
		}
	}
	if c, ok := p.Private(rec.Place); ok && touched {
		rec.Place = placeOf(c).Key()
	}
	if !touched {
		return Record{}, false
	}
	return recordOf(key, rec), true
}

// placeOf is the place a private chat's placeholder is.
func placeOf(c privacy.Chat) api.Place { return api.Place{Platform: c.Platform, Chat: c.Chat} }

// forgetAt makes a table in memory forget the person (table lock held): they leave their seat,
// as /leave would (a table with no other person closes), and their presses and votes go. It
// reports whether the table named them.
func (ft forgetTables) forgetAt(t *tbl, p *privacy.Person) (bool, error) {
	s := ft.s
	for attempt := 1; ; attempt++ {
		at, uerr := ft.forgetAtOnce(t, p)
		if uerr == errConflicted && attempt < maxAttempts && s.follow.reload(s.ctx, t, "conflict") == nil {
			continue // another copy changed the table meanwhile: forget it there as it is now
		}
		if uerr != nil {
			return false, fmt.Errorf("table %s could not forget a person", t.st.ID)
		}
		return at, nil
	}
}

// forgetAtOnce is one attempt of forgetAt.
func (ft forgetTables) forgetAtOnce(t *tbl, p *privacy.Person) (bool, *userError) {
	s, st := ft.s, t.st
	if st.Status == api.StatusClosed { // closing: the store has it among the closed tables
		return false, nil
	}
	seat := seatOf(st, p.ID)
	if seat == core.NoSeat && !mentioned(p, st) {
		return false, nil
	}
	if st.Learn {
		p.Privately(st.Place.Key(), st.Place.Platform) // a guided game is played in private
	}
	out := outcome{changed: true}
	if seat != core.NoSeat {
		others := 0
		for i, o := range st.Seats {
			if core.Seat(i) != seat && o.Human() {
				others++
			}
		}
		switch {
		case others == 0:
			s.play.close(t, &out) // the match so far is kept, and rewritten below with the others
		case st.Status == api.StatusPlaying:
			out.public = append(out.public, s.play.notice(t, "note.left_robot", render.SeatRef(seat)))
			st.Seats[seat] = SeatState{Robot: true}
		default:
			st.Seats[seat] = SeatState{}
		}
	}
	unmention(p, st)
	cmd := api.Command{Place: st.Place, Table: st.ID, Actor: api.Player{ID: p.As}, Verb: api.VerbForget}
	if uerr := s.commit(s.ctx, t, cmd, &out, actedNone, true); uerr != nil {
		return false, uerr
	}
	return true, nil
}

// mentioned reports whether a table remembers the person's presses, votes or language.
func mentioned(p *privacy.Person, st *state) bool {
	for k := range st.Acted {
		if strings.HasPrefix(k, p.ID+"/") {
			return true
		}
	}
	_, lang := st.Langs[p.ID]
	return lang || slices.Contains(st.Votes, p.ID)
}

// unmention drops the person's presses, votes and language from a table.
func unmention(p *privacy.Person, st *state) {
	maps.DeleteFunc(st.Acted, func(k string, _ uint64) bool { return strings.HasPrefix(k, p.ID+"/") })
	st.Votes = slices.DeleteFunc(st.Votes, func(v string) bool { return v == p.ID })
	delete(st.Langs, p.ID)
}

// scrub makes a closed table's state forget the person: their seat gets the placeholder, and a
// private chat of theirs its own. It reports whether the table named them.
func scrub(p *privacy.Person, st *state) bool {
	named := mentioned(p, st)
	for i, seat := range st.Seats {
		if seat.Player != nil && seat.Player.ID == p.ID {
			st.Seats[i].Player = &api.Player{ID: p.As, Name: Forgotten}
			named = true
		}
	}
	if !named {
		return false
	}
	unmention(p, st)
	if st.Learn {
		p.Privately(st.Place.Key(), st.Place.Platform)
	}
	if c, ok := p.Private(st.Place.Key()); ok {
		st.Place = placeOf(c)
	}
	return true
}

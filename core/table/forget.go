package table

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/places"
	"github.com/kontermatt/kontermatt/core/privacy"
)

// Forgetting a person ("forget yes") reaches everything the bot keeps that names them:
//
//   - the tables they sit at: they leave (a computer takes their seat in a game; a table with no
//     other person closes), and no table remembers their presses or votes;
//   - the kept matches and the closed tables (until pruned) that name them, and every table's
//     command log: their seat gets a placeholder of its own (so the others' results, partners and
//     opponents stay right, and two forgotten people stay two), their commands its ID;
//   - their private chat, where a guided game was played: its key gives way to a placeholder;
//   - their settings and ratings, and every league, made anew from the rewritten records;
//   - what the adapters keep: the keys of the buckets each registered (Config.People), the keys
//     that name them at a table still played, and every KV key of the closed tables they sat at
//     (those tables' messages are final);
//
// and the store then leaves no copy of what was replaced in its file (Store.Forget), so a backup
// taken afterwards holds none either.

// Forgotten is the name a forgotten person has in the kept matches; their ID there begins with
// forgottenPrefix, and a private chat of theirs becomes a place whose chat begins with
// forgottenChat.
const (
	Forgotten       = "—"
	forgottenPrefix = "forgotten:"
	forgottenChat   = "forgotten-"
)

// ReasonForgotten is the Reason of the reply that tells a person they are forgotten: a surface
// that cannot deliver it writes nothing about them (no "cannot get private messages" mark), as
// nothing of a forgotten person may be written again.
const ReasonForgotten = "forget.done"

// forgetting is one person being forgotten: who, what they become, where they were.
type forgetting struct {
	id, as, suffix string
	// private maps the keys of the person's private chats to the placeholders they become.
	private map[string]Place
}

// privately notes a place as the person's private chat.
func (f *forgetting) privately(p Place) {
	f.private[p.Key()] = Place{Platform: p.Platform, Chat: forgottenChat + f.suffix}
}

// forgetLease is the lease a copy holds while it forgets someone (Config.Leases): a Forget reads
// every kept record and writes back those that name the person, so two at once, on two copies,
// would each write back the other's person as they read them, not forgotten. One at a time,
// the second reads what the first wrote.
const forgetLease = "forget"

// errForgetLease is a Forget given up because the lease was lost before it was written.
var errForgetLease = errors.New("table: the lease to forget someone was lost; nothing was forgotten, try again")

// Forget removes a person from what the bot keeps (see above). It gives how many kept matches
// named them; with a *ForgetPending error it is done but for the store's older versions. With
// other copies on the store it first waits for the lease forgetLease.
func (s *Service) Forget(ctx context.Context, id string) (int, error) {
	s.forgetMu.Lock()
	defer s.forgetMu.Unlock()
	held := ctx
	if s.cfg.Leases != nil {
		h, release, err := s.cfg.Leases.Hold(ctx, forgetLease)
		if err != nil {
			return 0, fmt.Errorf("table: waiting to forget someone: %w", err)
		}
		defer release()
		s.observeLease(forgetLease, true)
		defer s.observeLease(forgetLease, false)
		held = h
	}
	return s.forget1(id, held)
}

// forget1 is Forget under its lease, held while held lasts.
func (s *Service) forget1(id string, held context.Context) (int, error) {
	suffix := strconv.FormatUint(s.randomID(), 36)
	f := forgetting{id: id, as: forgottenPrefix + suffix, suffix: suffix, private: map[string]Place{}}
	out := Forgetting{Actor: id, As: f.as, Names: []string{id}, Closed: map[string][]byte{}}
	out.KV = append(out.KV, KVEntry{Bucket: privacy.Bucket, Key: id})
	for _, p := range s.cfg.People {
		key, ok := p.Key(id)
		if !ok {
			continue
		}
		out.Names = append(out.Names, key)
		for _, b := range p.Buckets {
			out.KV = append(out.KV, KVEntry{Bucket: b, Key: key})
		}
		// A chat whose ID is the person's own is their private chat (Telegram's are).
		f.privately(Place{Platform: p.Platform, Chat: key})
	}

	// The tables in memory: the person leaves them, and they forget the person.
	var seatedAt []string // the places of those tables
	for _, t := range s.all() {
		t.mu.Lock()
		key := t.st.Place.Key()
		at, err := s.forgetAt(t, &f)
		t.mu.Unlock()
		if err != nil {
			return 0, err
		}
		if at {
			out.Tables = append(out.Tables, t.id())
			seatedAt = append(seatedAt, key)
		}
	}
	// The closed tables the store still keeps.
	err := s.cfg.Store.ClosedTables(held, func(tid string, data []byte) error {
		st := new(state)
		if json.Unmarshal(data, st) != nil || !f.scrub(st) {
			return nil
		}
		b, err := json.Marshal(st)
		out.Closed[tid] = b
		out.Drop = append(out.Drop, tid)
		return err
	})
	if err != nil {
		return 0, err
	}
	// The kept matches.
	err = s.cfg.Store.Records(held, func(key string, data []byte) error {
		var rec StoredMatch
		if json.Unmarshal(data, &rec) != nil {
			return nil
		}
		touched := false
		for i := range rec.Seats {
			if rec.Seats[i].ID == id {
				rec.Seats[i].ID, rec.Seats[i].Name = f.as, Forgotten
				touched = true
			}
		}
		if p, ok := f.private[rec.Place]; ok && touched {
			rec.Place = p.Key()
		}
		if touched {
			out.Records = append(out.Records, recordOf(key, rec))
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	// The settings of the person's private chats go with them.
	for _, key := range slices.Sorted(maps.Keys(f.private)) {
		out.KV = append(out.KV, KVEntry{Bucket: places.Bucket, Key: key})
	}

	if s.cfg.League != nil {
		// No match end learns from the league while it is made anew; release empties the cache,
		// which is older than the store by then.
		release := s.cfg.League.Hold()
		defer release()
		// The league is made from the records as they will be after the change.
		rewritten := map[string][]byte{}
		for _, r := range out.Records {
			rewritten[r.Key] = r.Data
		}
		entries, buckets, err := s.cfg.League.Rebuild(held, func(ctx context.Context, fn func(string, []byte) error) error {
			return s.cfg.Store.Records(ctx, func(key string, data []byte) error {
				if d, ok := rewritten[key]; ok {
					data = d
				}
				return fn(key, data)
			})
		})
		if err != nil {
			return 0, err
		}
		out.Emptied, out.KV = buckets, append(entries, out.KV...)
	}
	// Which table a private chat of theirs had names the chat, which is the person's.
	for key := range f.private {
		out.KV = append(out.KV, KVEntry{Bucket: bucketClaims, Key: key})
	}
	if held.Err() != nil {
		return 0, errForgetLease // another copy may be forgetting someone now, from the records as they were
	}
	var pending *ForgetPending
	if err := s.cfg.Store.Forget(held, out); err != nil && !errors.As(err, &pending) {
		return 0, err
	}
	s.users.Forget(id)
	// A vote is given at a table one sits at: the person's are at the places of those tables.
	for _, key := range seatedAt {
		if err := s.places.Unvote(held, key, id); err != nil {
			s.cfg.Log.Error("forgetting a vote on a place's settings", "err", err)
		}
	}
	if pending != nil {
		return len(out.Records), pending
	}
	return len(out.Records), nil
}

// forgetAt makes a table in memory forget the person (table lock held): they leave their seat,
// as /leave would (a table with no other person closes), and their presses and votes go. It
// reports whether the table named them.
func (s *Service) forgetAt(t *tbl, f *forgetting) (bool, error) {
	for attempt := 1; ; attempt++ {
		at, uerr := s.forgetAtOnce(t, f)
		if uerr == errConflicted && attempt < maxAttempts && s.reload(s.ctx, t, "conflict") == nil {
			continue // another copy changed the table meanwhile: forget it there as it is now
		}
		if uerr != nil {
			return false, fmt.Errorf("table %s could not forget a person", t.st.ID)
		}
		return at, nil
	}
}

// forgetAtOnce is one attempt of forgetAt.
func (s *Service) forgetAtOnce(t *tbl, f *forgetting) (bool, *userError) {
	st := t.st
	if st.Status == StatusClosed { // closing: the store has it among the closed tables
		return false, nil
	}
	seat := seatOf(st, f.id)
	if seat == core.NoSeat && !f.mentioned(st) {
		return false, nil
	}
	if st.Learn {
		f.privately(st.Place) // a guided game is played in private
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
			s.close(t, &out) // the match so far is kept, and rewritten below with the others
		case st.Status == StatusPlaying:
			out.public = append(out.public, s.notice(t, "note.left_robot", seatRef(seat)))
			st.Seats[seat] = SeatState{Robot: true}
		default:
			st.Seats[seat] = SeatState{}
		}
	}
	f.unmention(st)
	cmd := Command{Place: st.Place, Table: st.ID, Actor: Player{ID: f.as}, Verb: VerbForget}
	if uerr := s.commit(s.ctx, t, cmd, &out, actedNone, true); uerr != nil {
		return false, uerr
	}
	return true, nil
}

// mentioned reports whether a table remembers the person's presses, votes or language.
func (f *forgetting) mentioned(st *state) bool {
	for k := range st.Acted {
		if strings.HasPrefix(k, f.id+"/") {
			return true
		}
	}
	_, lang := st.Langs[f.id]
	return lang || slices.Contains(st.Votes, f.id)
}

// unmention drops the person's presses, votes and language from a table.
func (f *forgetting) unmention(st *state) {
	maps.DeleteFunc(st.Acted, func(k string, _ uint64) bool { return strings.HasPrefix(k, f.id+"/") })
	st.Votes = slices.DeleteFunc(st.Votes, func(v string) bool { return v == f.id })
	delete(st.Langs, f.id)
}

// scrub makes a closed table's state forget the person: their seat gets the placeholder, and a
// private chat of theirs its own. It reports whether the table named them.
func (f *forgetting) scrub(st *state) bool {
	named := f.mentioned(st)
	for i, seat := range st.Seats {
		if seat.Player != nil && seat.Player.ID == f.id {
			st.Seats[i].Player = &Player{ID: f.as, Name: Forgotten}
			named = true
		}
	}
	if !named {
		return false
	}
	f.unmention(st)
	if st.Learn {
		f.privately(st.Place)
	}
	if p, ok := f.private[st.Place.Key()]; ok {
		st.Place = p
	}
	return true
}

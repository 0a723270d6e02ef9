package table

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kontermatt/kontermatt/core"
)

// StoredMatchFormat names the form matches are kept in.
const StoredMatchFormat = "kontermatt-stored/1"

// StoredMatch is how a finished or stopped match is kept for ever: who sat where, the rules, and
// the games in the compact form the table state uses (about 80 bytes a game). Everything else —
// the match and game records of docs/records.md, the score sheet, statistics — is derived from it
// by replaying the games through the engine, so it can never disagree with them.
type StoredMatch struct {
	Format  string            `json:"format"`
	Table   string            `json:"table"`
	Match   int               `json:"match"`
	Place   string            `json:"place,omitempty"` // the place's key ("telegram:-100123")
	Start   int64             `json:"start,omitempty"` // unix ms the match began and ended
	End     int64             `json:"end,omitempty"`
	Seats   [4]StoredSeat     `json:"seats"`
	Rules   *core.RulesRecord `json:"rules"`
	First   int               `json:"first_dealer"`
	Games   []string          `json:"games"`
	Stopped bool              `json:"stopped,omitempty"` // ended by /stop before a team won
	// Hints says the table gave hints (or was a guided game): the match counts for no rating.
	Hints bool `json:"hints,omitempty"`
}

// StoredSeat is who sat in a seat at the end of the match.
type StoredSeat struct {
	ID   string `json:"id,omitempty"` // the player; empty for a computer player
	Name string `json:"name,omitempty"`
	// Robot is a computer player's level, or for an absent player the level of the computer that
	// played for them. Records kept before it was written for absent players lack it: they were
	// rated with normal's anchor, and still are.
	Robot string `json:"robot,omitempty"`
	Away  bool   `json:"away,omitempty"` // a computer was playing for the absent player
	Left  bool   `json:"left,omitempty"` // the player left during the match; the computer finished it
	// Forfeit says the player was not at the table when a team won the match (Away or Left) and
	// lost it, whatever their team did. Written since forfeits count: an older record's away
	// player is not rated for the match, as then.
	Forfeit bool `json:"forfeit,omitempty"`
	// Absent lists the games (from 1) a computer played entirely for the player: they are not
	// credited with them. An older record lacks it and credits every game.
	Absent []int `json:"absent,omitempty"`
}

// StoredKey is the record key of a table's match.
func StoredKey(tableID string, match int) string { return tableID + "/m" + strconv.Itoa(match) }

// matchRecord keeps the table's current match (table lock held).
func (t *tbl) matchRecord(end time.Time) Record {
	st := t.st
	rec := StoredMatch{Format: StoredMatchFormat, Table: st.ID, Match: st.MatchNo, Place: st.Place.Key(),
		Start: st.MatchAt, End: end.UnixMilli(), Rules: t.opts.Rules.Record(), First: st.First,
		Stopped: !t.match.Over(), Hints: t.hintsOn()}
	for i, seat := range st.Seats {
		switch {
		case seat.Player != nil:
			rec.Seats[i] = StoredSeat{ID: seat.Player.ID, Name: seat.Player.Name, Away: seat.Away, Absent: seat.Absent}
			if seat.Away {
				rec.Seats[i].Robot = t.opts.Level
			}
		case seat.Left != nil:
			rec.Seats[i] = StoredSeat{ID: seat.Left.ID, Name: seat.Left.Name, Robot: t.opts.Level, Left: true, Absent: seat.Absent}
		default:
			rec.Seats[i] = StoredSeat{Robot: t.opts.Level}
		}
		// Not at the table when a team won: the match is lost for them (docs/league.md).
		s := &rec.Seats[i]
		s.Forfeit = s.ID != "" && (s.Away || s.Left) && t.match.Over()
	}
	for _, g := range t.match.Games() {
		rec.Games = append(rec.Games, encodeGame(g))
	}
	return recordOf(StoredKey(st.ID, st.MatchNo), rec)
}

// ParseStoredMatch reads a kept match and replays its games through the engine.
func ParseStoredMatch(data []byte) (StoredMatch, *core.Match, error) {
	var rec StoredMatch
	if err := json.Unmarshal(data, &rec); err != nil {
		return rec, nil, fmt.Errorf("%w: stored match: %v", core.ErrBadRecord, err)
	}
	if rec.Format != StoredMatchFormat {
		return rec, nil, fmt.Errorf("%w: stored match format %q", core.ErrBadRecord, rec.Format)
	}
	rules, err := rec.Rules.Rules()
	if err != nil {
		return rec, nil, err
	}
	m, err := core.NewMatch(rules, core.Seat(rec.First&3))
	if err != nil {
		return rec, nil, err
	}
	for i, gs := range rec.Games {
		if err := decodeGame(m, gs); err != nil {
			return rec, nil, fmt.Errorf("stored match %s game %d: %w", StoredKey(rec.Table, rec.Match), i+1, err)
		}
	}
	return rec, m, nil
}

// ExportedMatch is a kept match as export writes it (docs/records.md): the kontermatt-match/1
// record, which replay reads, with the extra fields the format allows that say the rest of what
// was kept — the record's key, the place, when the match began and ended, whether it was stopped,
// and who sat where — so that the league can be made anew from an export alone.
type ExportedMatch struct {
	core.MatchRecord
	Key     string        `json:"key"`
	Table   string        `json:"table"`
	Match   int           `json:"match"`
	Place   string        `json:"place,omitempty"`
	Start   string        `json:"start,omitempty"` // RFC 3339 in UTC, to the millisecond
	End     string        `json:"end,omitempty"`
	Stopped bool          `json:"stopped,omitempty"`
	Seats   [4]StoredSeat `json:"seats"`
}

// exportTime is a kept unix-ms time as an export writes it: RFC 3339 in UTC, to the millisecond
// ("" for none).
func exportTime(ms int64) string {
	if ms == 0 {
		return ""
	}
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z07:00")
}

// Export gives a kept match as the records docs/records.md describes: the match record (an
// ExportedMatch), then each game's kontermatt-game/1 record, keyed by the names export files take
// ("<table>/m1/match", "<table>/m1/g1", ...).
func Export(data []byte) (map[string]any, error) {
	rec, m, err := ParseStoredMatch(data)
	if err != nil {
		return nil, err
	}
	base := StoredKey(rec.Table, rec.Match)
	mr := ExportedMatch{MatchRecord: m.Record(), Key: base, Table: rec.Table, Match: rec.Match, Place: rec.Place,
		Start: exportTime(rec.Start), End: exportTime(rec.End), Stopped: rec.Stopped, Seats: rec.Seats}
	mr.Hints = rec.Hints
	out := map[string]any{base + "/match": mr}
	for i, g := range m.Games() {
		out[base+"/g"+strconv.Itoa(i+1)] = g.Record()
	}
	return out, nil
}

// Public is the exported match as a chat may see it (history's record button): the people's
// names as the chat showed them, without their platform IDs or the place's key.
func (e ExportedMatch) Public() ExportedMatch {
	e.Place = ""
	for i := range e.Seats {
		e.Seats[i].ID = ""
	}
	return e
}

// CompactRecord turns a match kept by schema 1 — a full docs/records.md match record under
// "<table>/m<n>/match" — into a StoredMatch under its new key. The table's state, if it is still
// kept and at that match, names the seats; otherwise they stay unnamed.
func CompactRecord(oldKey string, full, tableState []byte) (key string, data []byte, err error) {
	base, ok := strings.CutSuffix(oldKey, "/match")
	tableID, matchNo, ok2 := strings.Cut(base, "/m")
	n, err := strconv.Atoi(matchNo)
	if !ok || !ok2 || err != nil {
		return "", nil, fmt.Errorf("%w: record key %q", core.ErrBadRecord, oldKey)
	}
	var mr core.MatchRecord
	if err := json.Unmarshal(full, &mr); err != nil {
		return "", nil, fmt.Errorf("%w: record %q: %v", core.ErrBadRecord, oldKey, err)
	}
	m, err := core.ReplayMatch(mr)
	if err != nil {
		return "", nil, fmt.Errorf("record %q: %w", oldKey, err)
	}
	rec := StoredMatch{Format: StoredMatchFormat, Table: tableID, Match: n, Rules: m.Rules().Record(),
		Stopped: !m.Over()}
	if games := m.Games(); len(games) > 0 {
		rec.First = int(games[0].Dealer())
	}
	for _, g := range m.Games() {
		rec.Games = append(rec.Games, encodeGame(g))
	}
	if st := new(state); tableState != nil && json.Unmarshal(tableState, st) == nil && st.ID == tableID {
		rec.Place = st.Place.Key()
		if st.MatchNo == n {
			for i, seat := range st.Seats {
				if seat.Player != nil {
					rec.Seats[i] = StoredSeat{ID: seat.Player.ID, Name: seat.Player.Name}
				} else {
					rec.Seats[i] = StoredSeat{Robot: st.Options.Level}
				}
			}
		}
	}
	data, err = json.Marshal(rec)
	return StoredKey(tableID, n), data, err
}

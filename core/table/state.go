package table

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/options"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// SeatState is who sits in a seat: a human (Player set), a computer player, or nobody.
type SeatState struct {
	Player *api.Player `json:"player,omitempty"`
	Robot  bool        `json:"robot,omitempty"`
	Away   bool        `json:"away,omitempty"` // a computer player acts for the absent human
	// No is a computer player's number, its name ("Computer 3"): the seat it sat down in, kept
	// when seats change (rematch rotate), so that new partners show. 0 in states written before:
	// then the seat's number.
	No int `json:"no,omitempty"`
	// Left is the person who left the seat during the match; a computer player finishes it.
	Left *api.Player `json:"left,omitempty"`
	// Moved says the seat's person made a move of the current game themselves; Absent lists the
	// match's games (from 1) a computer played entirely for them (see noteAbsent).
	Moved  bool  `json:"moved,omitempty"`
	Absent []int `json:"absent,omitempty"`
}

// robotSeat is a computer player sitting down in seat.
func robotSeat(seat core.Seat) SeatState { return SeatState{Robot: true, No: int(seat) + 1} }

// robotNo is the number the computer player in seat goes by.
func (s SeatState) robotNo(seat core.Seat) int {
	if s.No > 0 {
		return s.No
	}
	return int(seat) + 1
}

// Empty reports whether nobody sits here.
func (s SeatState) Empty() bool { return s.Player == nil && !s.Robot }

// Human reports whether a person sits here.
func (s SeatState) Human() bool { return s.Player != nil }

// stateVersion is the layout of state below; bump it and convert in decodeState when it changes.
const stateVersion = 1

// state is everything about a table that must survive a restart. The match is stored compactly
// (one short string per game) so that writing the state on every command stays cheap; the full
// docs/records.md form is derived from it by replaying through the engine.
type state struct {
	V        int               `json:"v"`
	ID       string            `json:"id"`
	Place    api.Place         `json:"place"`
	Lang     string            `json:"lang"`
	Options  optionsState      `json:"options"`
	Seats    [4]SeatState      `json:"seats"`
	Status   api.Status        `json:"status"`
	Seq      uint64            `json:"seq"`
	Secret   []byte            `json:"secret"` // secretSize bytes: every deal and seed of the table comes from it (random.go)
	Deals    uint64            `json:"deals"`  // deals made so far
	MatchNo  int               `json:"match_no"`
	Games    []string          `json:"games,omitempty"` // this match's games, compact form
	First    int               `json:"first_dealer"`
	TurnAt   int64             `json:"turn_at,omitempty"` // unix ms the current turn (or lobby) began
	Reminded bool              `json:"reminded,omitempty"`
	Votes    []string          `json:"votes,omitempty"`     // players who asked to stop
	Events   []string          `json:"events,omitempty"`    // recent platform event IDs
	Acted    map[string]uint64 `json:"acted,omitempty"`     // "<player>/game|call|table" → seq of their last accepted command of that kind
	GameFrom uint64            `json:"game_from,omitempty"` // the first seq of the current game: older game buttons are stale
	MatchAt  int64             `json:"match_at,omitempty"`  // unix ms the current match began
	Paused   bool              `json:"paused,omitempty"`    // the place cannot be written to: no timers, no computer moves (see Pause)
	Learn    bool              `json:"learn,omitempty"`     // a guided solo game (learn, coach.go)
	Created  int64             `json:"created"`
	// Langs is read from states written before people's languages became their own settings
	// (see users); it is never written.
	Langs map[string]string `json:"langs,omitempty"`
}

type optionsState struct {
	Rules *core.RulesRecord   `json:"rules"`
	Timer options.TimerPreset `json:"timer"`
	Level string              `json:"level"`
	Hints bool                `json:"hints,omitempty"`
	Pace  options.PacePreset  `json:"pace,omitempty"` // "": normal (stored before the option)
}

// stateOfOptions is how a table's options are stored.
func stateOfOptions(o options.Options) optionsState {
	return optionsState{Rules: o.Rules.Record(), Timer: o.Timer, Level: o.Level, Hints: o.Hints, Pace: o.Pace}
}

func (o optionsState) options() (options.Options, error) {
	r, err := o.Rules.Rules()
	return options.Options{Rules: r, Timer: o.Timer, Level: o.Level, Hints: o.Hints, Pace: cmp.Or(o.Pace, options.PaceNormal)}, err
}

// maxEvents is how many recent event IDs a table remembers to drop duplicate deliveries.
const maxEvents = 64

// Compact game form: "<dealer><24 card letters>:<moves>", a card letter being 'a'+card-1, a move
// "<seat><card letter>" for a play, "<seat>T<suit>" for trump and "<seat>K<call digit>" for an
// announcement. A 6-trick game is about 80 bytes.
func encodeGame(g *core.Game) string {
	var b strings.Builder
	b.WriteByte(byte('0' + g.Dealer()))
	for s := core.Seat(0); s < 4; s++ {
		for _, c := range g.Dealt(s) {
			b.WriteByte(byte('a' + c - 1))
		}
	}
	b.WriteByte(':')
	for _, m := range g.Moves() {
		b.WriteByte(byte('0' + m.Seat))
		switch m.Kind {
		case core.MoveTrump:
			b.WriteString("T" + m.Suit.String())
		case core.MoveAnnounce:
			b.WriteByte('K')
			b.WriteByte(byte('0' + m.Call))
		case core.MovePlay:
			b.WriteByte(byte('a' + m.Card - 1))
		}
	}
	return b.String()
}

func letterCard(b byte) core.Card {
	c := core.Card(b - 'a' + 1)
	if !c.Valid() {
		return core.NoCard
	}
	return c
}

// decodeGame replays a compact game through the match (so the engine checks every move again).
func decodeGame(m *core.Match, s string) error {
	if len(s) < 26 || s[25] != ':' {
		return fmt.Errorf("%w: short game %q", core.ErrBadRecord, s)
	}
	dealer := core.Seat(s[0] - '0')
	var hands [4][6]core.Card
	for i := 0; i < 24; i++ {
		hands[i/6][i%6] = letterCard(s[1+i])
	}
	g, err := m.DealBy(dealer, hands)
	if err != nil {
		return err
	}
	moves := s[26:]
	for len(moves) >= 2 {
		seat := core.Seat(moves[0] - '0')
		var mv core.Move
		switch moves[1] {
		case 'T':
			if len(moves) < 3 {
				return fmt.Errorf("%w: truncated move", core.ErrBadRecord)
			}
			suit, err := core.ParseSuit(moves[2:3])
			if err != nil {
				return fmt.Errorf("%w: %v", core.ErrBadRecord, err)
			}
			mv, moves = core.NameTrump(seat, suit), moves[3:]
		case 'K':
			if len(moves) < 3 {
				return fmt.Errorf("%w: truncated move", core.ErrBadRecord)
			}
			mv, moves = core.Announce(seat, core.Call(moves[2]-'0')), moves[3:]
		default:
			mv, moves = core.Play(seat, letterCard(moves[1])), moves[2:]
		}
		if err := g.Apply(mv); err != nil {
			return err
		}
	}
	if moves != "" {
		return fmt.Errorf("%w: trailing %q", core.ErrBadRecord, moves)
	}
	return nil
}

// decodeState reads a stored table and rebuilds its match through the engine.
func decodeState(data []byte) (*state, options.Options, *core.Match, error) {
	st := new(state)
	if err := json.Unmarshal(data, st); err != nil {
		return nil, options.Options{}, nil, fmt.Errorf("table state: %w", err)
	}
	if st.V != stateVersion {
		return nil, options.Options{}, nil, fmt.Errorf("table state version %d, this build reads %d", st.V, stateVersion)
	}
	opts, err := st.Options.options()
	if err != nil {
		return nil, options.Options{}, nil, fmt.Errorf("table %s options: %w", st.ID, err)
	}
	var m *core.Match
	if st.Status != api.StatusLobby || len(st.Games) > 0 {
		if m, err = core.NewMatch(opts.Rules, core.Seat(st.First&3)); err != nil {
			return nil, options.Options{}, nil, err
		}
		for i, gs := range st.Games {
			if err := decodeGame(m, gs); err != nil {
				return nil, options.Options{}, nil, fmt.Errorf("table %s game %d: %w", st.ID, i, err)
			}
		}
	}
	return st, opts, m, nil
}

package core

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// The record formats this package reads and writes (docs/records.md).
const (
	GameFormat  = "kontermatt-game/1"
	MatchFormat = "kontermatt-match/1"
)

// RulesRecord is the "rules" object of a record; a missing key takes the default.
type RulesRecord struct {
	Direction      *string `json:"direction,omitempty"`
	Stripes        *int    `json:"stripes,omitempty"`
	DrawPenalty    *string `json:"draw_penalty,omitempty"`
	AllTricksBonus *bool   `json:"all_tricks_bonus,omitempty"`
	Announcements  *bool   `json:"announcements,omitempty"`
}

// Record writes every option of r.
func (r Rules) Record() *RulesRecord {
	dir, pen := r.Direction.String(), r.DrawPenalty.String()
	stripes, bonus, ann := r.Stripes, r.AllTricksBonus, r.Announcements
	return &RulesRecord{Direction: &dir, Stripes: &stripes, DrawPenalty: &pen, AllTricksBonus: &bonus, Announcements: &ann}
}

// Rules reads the options, defaults filled in; a nil record gives the defaults.
func (rr *RulesRecord) Rules() (Rules, error) {
	r := DefaultRules()
	if rr == nil {
		return r, nil
	}
	if rr.Direction != nil {
		switch *rr.Direction {
		case "clockwise":
			r.Direction = Clockwise
		case "anticlockwise":
			r.Direction = Anticlockwise
		default:
			return r, fmt.Errorf("%w: direction %q", ErrBadRules, *rr.Direction)
		}
	}
	if rr.Stripes != nil {
		r.Stripes = *rr.Stripes
	}
	if rr.DrawPenalty != nil {
		switch *rr.DrawPenalty {
		case "stake":
			r.DrawPenalty = DrawStake
		case "flat1":
			r.DrawPenalty = DrawFlat1
		default:
			return r, fmt.Errorf("%w: draw_penalty %q", ErrBadRules, *rr.DrawPenalty)
		}
	}
	if rr.AllTricksBonus != nil {
		r.AllTricksBonus = *rr.AllTricksBonus
	}
	if rr.Announcements != nil {
		r.Announcements = *rr.Announcements
	}
	return r, r.Validate()
}

// MoveRecord is one move of a record: exactly one of Trump, Announce and Play is set.
type MoveRecord struct {
	Seat     *int   `json:"seat"`
	Trump    string `json:"trump,omitempty"`
	Announce string `json:"announce,omitempty"`
	Play     string `json:"play,omitempty"`
}

// GameRecord is a kontermatt-game/1 record; inside a match record Format and Rules are empty.
type GameRecord struct {
	Format string       `json:"format,omitempty"`
	Rules  *RulesRecord `json:"rules,omitempty"`
	Dealer *int         `json:"dealer"`
	Hands  [][]string   `json:"hands"`
	Moves  []MoveRecord `json:"moves"`
}

// MatchRecord is a kontermatt-match/1 record.
type MatchRecord struct {
	Format string       `json:"format"`
	Rules  *RulesRecord `json:"rules,omitempty"`
	Games  []GameRecord `json:"games"`
	// Hints marks a match played with the coach's hints (or a guided game): an extra field,
	// which docs/records.md allows in output; replay ignores it.
	Hints bool `json:"hints,omitempty"`
}

// ReplayError says which part of a record broke which rule. Move is the index of the offending
// move, or -1 for the record as a whole; Game is the index of the game in a match record, or -1.
type ReplayError struct {
	Game int
	Move int
	Err  error
}

func (e *ReplayError) Error() string {
	if e.Game >= 0 {
		return fmt.Sprintf("game %d, move %d: %v", e.Game, e.Move, e.Err)
	}
	return fmt.Sprintf("move %d: %v", e.Move, e.Err)
}

func (e *ReplayError) Unwrap() error { return e.Err }

// MarshalJSON writes the error object docs/records.md specifies.
func (e *ReplayError) MarshalJSON() ([]byte, error) {
	code := Code(e.Err)
	if code == "" {
		code = ErrBadRecord.Code
	}
	obj := struct {
		Error   string `json:"error"`
		Game    *int   `json:"game,omitempty"`
		Move    int    `json:"move"`
		Message string `json:"message"`
	}{Error: code, Move: e.Move, Message: e.Err.Error()}
	if e.Game >= 0 {
		obj.Game = &e.Game
	}
	return json.Marshal(obj)
}

func recordErr(game, move int, err error) *ReplayError {
	return &ReplayError{Game: game, Move: move, Err: err}
}

func seatOf(p *int) (Seat, error) {
	if p == nil {
		return NoSeat, fmt.Errorf("%w: missing seat", ErrBadRecord)
	}
	if *p < 0 || *p > 3 {
		return NoSeat, fmt.Errorf("%w: seat %d is not 0..3", ErrBadRecord, *p)
	}
	return Seat(*p), nil
}

// parseDeal reads the hands: cards that do not parse are a bad record, a deal that is not 24
// distinct cards in four sixes is a bad deal.
func parseDeal(in [][]string) ([4][6]Card, error) {
	var hands [4][6]Card
	for s, h := range in {
		for _, text := range h {
			if _, err := ParseCard(text); err != nil {
				return hands, fmt.Errorf("%w: hand %d: %v", ErrBadRecord, s, err)
			}
		}
	}
	if len(in) != 4 {
		return hands, fmt.Errorf("%w: %d hands, want 4", ErrBadDeal, len(in))
	}
	for s, h := range in {
		if len(h) != 6 {
			return hands, fmt.Errorf("%w: hand %d has %d cards, want 6", ErrBadDeal, s, len(h))
		}
		for i, text := range h {
			hands[s][i], _ = ParseCard(text)
		}
	}
	return hands, CheckDeal(hands)
}

// parseMove reads one move record.
func parseMove(mr MoveRecord) (Move, error) {
	seat, err := seatOf(mr.Seat)
	if err != nil {
		return Move{}, err
	}
	set := 0
	for _, f := range []string{mr.Trump, mr.Announce, mr.Play} {
		if f != "" {
			set++
		}
	}
	if set != 1 {
		return Move{}, fmt.Errorf("%w: a move needs exactly one of trump, announce, play", ErrBadRecord)
	}
	switch {
	case mr.Trump != "":
		s, err := ParseSuit(mr.Trump)
		if err != nil {
			return Move{}, fmt.Errorf("%w: %v", ErrBadRecord, err)
		}
		return NameTrump(seat, s), nil
	case mr.Announce != "":
		c, err := ParseCall(mr.Announce)
		if err != nil {
			return Move{}, err
		}
		return Announce(seat, c), nil
	default:
		c, err := ParseCard(mr.Play)
		if err != nil {
			return Move{}, fmt.Errorf("%w: %v", ErrBadRecord, err)
		}
		return Play(seat, c), nil
	}
}

// playMoves replays a record's moves on g through the engine's own Apply.
func playMoves(g *Game, game int, moves []MoveRecord) error {
	for i, mr := range moves {
		m, err := parseMove(mr)
		if err != nil {
			return recordErr(game, i, err)
		}
		if err := g.Apply(m); err != nil {
			return recordErr(game, i, err)
		}
	}
	return nil
}

// ReplayGame rebuilds a game from its record. Errors are *ReplayError.
func ReplayGame(rec GameRecord) (*Game, error) {
	if rec.Format != GameFormat {
		return nil, recordErr(-1, -1, fmt.Errorf("%w: format %q, want %q", ErrBadRecord, rec.Format, GameFormat))
	}
	rules, err := rec.Rules.Rules()
	if err != nil {
		return nil, recordErr(-1, -1, err)
	}
	return replayGame(rules, rec, -1, nil)
}

func replayGame(rules Rules, rec GameRecord, game int, m *Match) (*Game, error) {
	dealer, err := seatOf(rec.Dealer)
	if err != nil {
		return nil, recordErr(game, -1, fmt.Errorf("dealer: %w", err))
	}
	hands, err := parseDeal(rec.Hands)
	if err != nil {
		return nil, recordErr(game, -1, err)
	}
	var g *Game
	if m != nil {
		g, err = m.DealBy(dealer, hands)
	} else {
		g, err = NewGame(rules, dealer, hands)
	}
	if err != nil {
		return nil, recordErr(game, -1, err)
	}
	return g, playMoves(g, game, rec.Moves)
}

// ReplayMatch rebuilds a match from its record. Errors are *ReplayError.
func ReplayMatch(rec MatchRecord) (*Match, error) {
	if rec.Format != MatchFormat {
		return nil, recordErr(-1, -1, fmt.Errorf("%w: format %q, want %q", ErrBadRecord, rec.Format, MatchFormat))
	}
	rules, err := rec.Rules.Rules()
	if err != nil {
		return nil, recordErr(-1, -1, err)
	}
	first := Seat(0)
	if len(rec.Games) > 0 {
		if first, err = seatOf(rec.Games[0].Dealer); err != nil {
			return nil, recordErr(0, -1, fmt.Errorf("dealer: %w", err))
		}
	}
	m, _ := NewMatch(rules, first)
	for i, gr := range rec.Games {
		if i > 0 && m.Current().Phase() != PhaseOver {
			return nil, recordErr(i, -1, fmt.Errorf("%w: game %d is unfinished but another game follows", ErrBadRecord, i-1))
		}
		if _, err := replayGame(rules, gr, i, m); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Record writes the game as a kontermatt-game/1 record.
func (g *Game) Record() GameRecord {
	rec := g.record()
	rec.Format = GameFormat
	rec.Rules = g.rules.Record()
	return rec
}

func (g *Game) record() GameRecord {
	dealer := int(g.dealer)
	rec := GameRecord{Dealer: &dealer, Hands: make([][]string, 4), Moves: make([]MoveRecord, 0, g.nMoves)}
	for s, h := range g.dealt {
		rec.Hands[s] = make([]string, 0, len(h))
		for _, c := range h {
			if c.Valid() { // a game made from a position may not know all six
				rec.Hands[s] = append(rec.Hands[s], c.String())
			}
		}
	}
	for _, m := range g.moves[:g.nMoves] {
		seat := int(m.Seat)
		mr := MoveRecord{Seat: &seat}
		switch m.Kind {
		case MoveTrump:
			mr.Trump = m.Suit.String()
		case MoveAnnounce:
			mr.Announce = m.Call.String()
		case MovePlay:
			mr.Play = m.Card.String()
		}
		rec.Moves = append(rec.Moves, mr)
	}
	return rec
}

// Record writes the match as a kontermatt-match/1 record.
func (m *Match) Record() MatchRecord {
	rec := MatchRecord{Format: MatchFormat, Rules: m.rules.Record(), Games: make([]GameRecord, 0, len(m.games))}
	for _, g := range m.games {
		rec.Games = append(rec.Games, g.record())
	}
	return rec
}

// TrickSummary is one trick in replay output.
type TrickSummary struct {
	Leader int      `json:"leader"`
	Cards  []string `json:"cards"`
	Winner *int     `json:"winner,omitempty"`
	Points *int     `json:"points,omitempty"`
}

// AnnouncementSummary is one call in replay output.
type AnnouncementSummary struct {
	Seat int    `json:"seat"`
	Call string `json:"call"`
}

// GameSummary is what replay prints for a game (docs/records.md). Board is set only inside a match.
type GameSummary struct {
	Dealer        int                   `json:"dealer"`
	Trump         *string               `json:"trump"`
	TrumpTeam     string                `json:"trump_team"`
	Tricks        []TrickSummary        `json:"tricks"`
	Announcements []AnnouncementSummary `json:"announcements"`
	Stake         int                   `json:"stake"`
	Points        [2]int                `json:"points"`
	TricksWon     [2]int                `json:"tricks_won"`
	Result        string                `json:"result"`
	Stripes       *[2]int               `json:"stripes,omitempty"`
	Phase         string                `json:"phase,omitempty"`
	ToMove        *int                  `json:"to_move,omitempty"`
	Legal         []string              `json:"legal,omitempty"`
	Trick         *TrickSummary         `json:"trick,omitempty"`
	Board         *[2]int               `json:"board,omitempty"`
}

func trickSummary(t Trick) TrickSummary {
	ts := TrickSummary{Leader: int(t.Leader), Cards: make([]string, 0, t.N)}
	for _, c := range t.Cards[:t.N] {
		ts.Cards = append(ts.Cards, c.String())
	}
	if t.Winner.Valid() {
		w, p := int(t.Winner), t.Points()
		ts.Winner, ts.Points = &w, &p
	}
	return ts
}

// Summary gives what replay prints for the game.
func (g *Game) Summary() GameSummary {
	r := g.Result()
	s := GameSummary{
		Dealer: int(g.dealer), TrumpTeam: g.TrumpTeam().String(), Tricks: []TrickSummary{},
		Announcements: []AnnouncementSummary{}, Stake: r.Stake, Points: r.Points, TricksWon: r.TricksWon,
		Result: r.Outcome.String(),
	}
	if g.trump.Valid() {
		t := g.trump.String()
		s.Trump = &t
	}
	for _, t := range g.tricks[:g.done] {
		s.Tricks = append(s.Tricks, trickSummary(t))
	}
	for _, a := range g.anns[:g.nAnns] {
		s.Announcements = append(s.Announcements, AnnouncementSummary{Seat: int(a.Seat), Call: a.Call.String()})
	}
	if g.phase == PhaseOver {
		s.Stripes = &r.Stripes
		return s
	}
	s.Phase = g.phase.String()
	to := int(g.turn)
	s.ToMove = &to
	if g.phase == PhasePlay {
		s.Legal = []string{}
		for _, c := range g.LegalCards(g.turn).Cards() {
			s.Legal = append(s.Legal, c.String())
		}
		if t := g.tricks[g.done]; t.N > 0 {
			ts := trickSummary(t)
			s.Trick = &ts
		}
	}
	return s
}

// MatchSummary is what replay prints for a match.
type MatchSummary struct {
	Games  []GameSummary `json:"games"`
	Board  [2]int        `json:"board"`
	Winner *string       `json:"winner"`
}

// Summary gives what replay prints for the match.
func (m *Match) Summary() MatchSummary {
	out := MatchSummary{Games: []GameSummary{}}
	hist := m.History()
	for i, g := range m.games {
		gs := g.Summary()
		if i < len(hist) {
			b := hist[i].Board.OpenBoth()
			gs.Board = &b
		}
		out.Games = append(out.Games, gs)
	}
	out.Board = m.Board().OpenBoth()
	if w, ok := m.Winner(); ok {
		ws := w.String()
		out.Winner = &ws
	}
	return out
}

// Replay reads a game or match record and gives its summary (GameSummary or MatchSummary). Any
// error is a *ReplayError that marshals to the error object docs/records.md specifies.
func Replay(data []byte) (any, error) {
	// One pass reads either format; the fields of the other format are kept raw, so that they are
	// only checked to be JSON, as extra fields are.
	var rec struct {
		Format string          `json:"format"`
		Rules  json.RawMessage `json:"rules"`
		Dealer json.RawMessage `json:"dealer"`
		Hands  json.RawMessage `json:"hands"`
		Moves  json.RawMessage `json:"moves"`
		Games  json.RawMessage `json:"games"`
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, recordErr(-1, -1, fmt.Errorf("%w: %s", ErrBadRecord, jsonProblem("", err)))
	}
	switch rec.Format {
	case GameFormat:
		gr := GameRecord{Format: rec.Format}
		for _, err := range []error{field("rules", rec.Rules, &gr.Rules), field("dealer", rec.Dealer, &gr.Dealer),
			field("hands", rec.Hands, &gr.Hands), field("moves", rec.Moves, &gr.Moves)} {
			if err != nil {
				return nil, err
			}
		}
		g, err := ReplayGame(gr)
		if err != nil {
			return nil, err
		}
		return g.Summary(), nil
	case MatchFormat:
		mr := MatchRecord{Format: rec.Format}
		for _, err := range []error{field("rules", rec.Rules, &mr.Rules), field("games", rec.Games, &mr.Games)} {
			if err != nil {
				return nil, err
			}
		}
		m, err := ReplayMatch(mr)
		if err != nil {
			return nil, err
		}
		return m.Summary(), nil
	}
	return nil, recordErr(-1, -1, fmt.Errorf("%w: unknown format %q", ErrBadRecord, rec.Format))
}

// field decodes one field of a record into v; an absent field leaves v as it is.
func field(name string, raw json.RawMessage, v any) error {
	if raw == nil {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return recordErr(-1, -1, fmt.Errorf("%w: %s", ErrBadRecord, jsonProblem(name, err)))
	}
	return nil
}

// jsonProblem says what is wrong with a record's JSON in the record's words: the field and what
// it should hold, never the Go type the decoder had in mind.
func jsonProblem(name string, err error) string {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		where := strings.Trim(name+"."+te.Field, ".")
		want := "an object"
		switch te.Type.Kind() {
		case reflect.Int, reflect.Int64, reflect.Uint8:
			want = "a number"
		case reflect.String:
			want = "a string"
		case reflect.Bool:
			want = "true or false"
		case reflect.Slice, reflect.Array:
			want = "a list"
		}
		if where == "" {
			return fmt.Sprintf("a record is an object, not %s", article(te.Value))
		}
		return fmt.Sprintf("%s should be %s, not %s", where, want, article(te.Value))
	case errors.As(err, &se):
		return fmt.Sprintf("not JSON (at byte %d): %s", se.Offset, se.Error())
	}
	return err.Error()
}

func article(kind string) string {
	switch kind {
	case "array":
		return "a list"
	case "object":
		return "an object"
	case "string", "number":
		return "a " + kind
	}
	return kind
}

// AsReplayError turns any error from Replay into a *ReplayError.
func AsReplayError(err error) *ReplayError {
	var re *ReplayError
	if errors.As(err, &re) {
		return re
	}
	return recordErr(-1, -1, err)
}

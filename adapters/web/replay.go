package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// A replay steps through a kept match of the table's place, trick by trick: the deal (every hand
// shown: the match is over, and its record holds them), trump, each call, each card, each trick's
// winner and each game's result. The kept matches and their records come from the service's
// history verb, as the chats' /history gives them; the record is read by core.ReplayMatch, as
// `bot replay` reads it, and each game is played again move by move through the engine's own
// Apply: nothing of the rules is written here.

// ReplayMatch is a kept match as the page steps through it.
type ReplayMatch struct {
	Line  string       `json:"line"` // the match as history lists it
	Seats [4]string    `json:"seats"`
	Games []ReplayGame `json:"games"`
}

// ReplayGame is one game's steps, in order.
type ReplayGame struct {
	No    int          `json:"no"`
	Steps []ReplayStep `json:"steps"`
}

// ReplayStep is the table after one thing happened, and what happened in words.
type ReplayStep struct {
	Say    string        `json:"say"`
	Hands  [4][]ViewCard `json:"hands"` // what each seat still holds
	Trick  []ViewPlay    `json:"trick"` // the trick on the felt
	Winner int           `json:"winner"`
	Trump  string        `json:"trump,omitempty"` // its label
	Score  string        `json:"score"`
}

// ReplayList is what history lists at a place: a line per kept match, newest first.
type ReplayList struct {
	Lines []string `json:"lines"`
	Empty string   `json:"empty,omitempty"` // said when there is none
}

var errNoRecord = errors.New("no such record")

// replyError is the service's refusal, in the words it said it.
type replyError string

func (e replyError) Error() string { return string(e) }

// replays lists the kept matches of the place of the table the socket is at.
func (k *sock) replays() (ReplayList, error) {
	replies, err := k.history()
	if err != nil {
		return ReplayList{}, err
	}
	if len(replies) == 0 {
		return ReplayList{}, errNoRecord
	}
	r := replies[0] // history answers with one message
	if r.Kind == api.KindError {
		return ReplayList{}, replyError(r.Text)
	}
	if len(r.Buttons) == 0 && r.File == nil && !strings.Contains(r.Text, "\n") {
		return ReplayList{Lines: []string{}, Empty: r.Text}, nil
	}
	lines := strings.Split(r.Text, "\n")
	if len(lines) < 3 { // title, a line per match, and how to ask for one
		return ReplayList{Lines: []string{}, Empty: r.Text}, nil
	}
	return ReplayList{Lines: lines[1 : len(lines)-1]}, nil
}

// replay gives the steps of the n-th match history lists (from 1).
func (k *sock) replay(n int) (ReplayMatch, error) {
	list, err := k.replays()
	if err != nil {
		return ReplayMatch{}, err
	}
	if n < 1 || n > len(list.Lines) {
		return ReplayMatch{}, errNoRecord
	}
	replies, err := k.history("record", fmt.Sprint(n))
	if err != nil {
		return ReplayMatch{}, err
	}
	for _, r := range replies {
		if r.Kind == api.KindError {
			return ReplayMatch{}, replyError(r.Text)
		}
		if r.File != nil {
			rm, err := replaySteps(k.langNow(), r.File.Data)
			rm.Line = list.Lines[n-1]
			return rm, err
		}
	}
	return ReplayMatch{}, errNoRecord
}

// history asks the service's history verb at the table's place, as the socket's person.
func (k *sock) history(args ...string) ([]api.Message, error) {
	svc := k.s.service()
	place, ok := svc.PlaceOf(k.table)
	if !ok {
		return nil, errNoRecord
	}
	p := k.player
	p.Locale = k.langNow()
	return svc.Handle(k.ctx, api.Command{Place: place, Actor: p, Verb: api.VerbHistory, Args: args})
}

// replaySteps reads a kept match's record (history's file: the match record with who sat where)
// and gives its steps in lang.
func replaySteps(lang string, data []byte) (ReplayMatch, error) {
	var rec struct {
		core.MatchRecord
		Seats [4]table.StoredSeat `json:"seats"`
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		return ReplayMatch{}, fmt.Errorf("%w: %v", core.ErrBadRecord, err)
	}
	m, err := core.ReplayMatch(rec.MatchRecord)
	if err != nil {
		return ReplayMatch{}, err
	}
	var names [4]string
	for i, s := range rec.Seats {
		names[i] = s.Name
		if s.ID == "" && s.Name == "" {
			names[i] = i18n.T(lang, "seat.robot", i+1)
		}
	}
	out := ReplayMatch{Seats: names, Games: []ReplayGame{}}
	hist := m.History()
	for i, g := range m.Games() {
		rg, err := gameSteps(lang, names, m.Rules(), g)
		if err != nil {
			return ReplayMatch{}, err
		}
		rg.No = i + 1
		if r := g.Result(); g.Phase() == core.PhaseOver && i < len(hist) {
			last := rg.Steps[len(rg.Steps)-1]
			last.Say = resultText(lang, names, i+1, r) + " " +
				i18n.T(lang, "web.result.stake", r.Stake) + " · " +
				i18n.T(lang, "web.result.stripes", signed(hist[i].Applied[0]), signed(hist[i].Applied[1]))
			rg.Steps = append(rg.Steps, last)
		}
		out.Games = append(out.Games, rg)
	}
	return out, nil
}

// gameSteps plays g again from its deal through the engine, a step after each move.
func gameSteps(lang string, names [4]string, rules core.Rules, g *core.Game) (ReplayGame, error) {
	var hands [4][6]core.Card
	for s := range hands {
		hands[s] = g.Dealt(core.Seat(s))
	}
	re, err := core.NewGame(rules, g.Dealer(), hands)
	if err != nil {
		return ReplayGame{}, err
	}
	step := func(say string, tr core.Trick) ReplayStep {
		st := ReplayStep{Say: say, Winner: -1, Trick: []ViewPlay{},
			Score: i18n.T(lang, "live.score", re.TricksWon()[0], re.TricksWon()[1], re.Points()[0], re.Points()[1])}
		for s := range st.Hands {
			st.Hands[s] = []ViewCard{}
			for _, c := range handOrder(re.Hand(core.Seat(s)), re.Trump()) {
				st.Hands[s] = append(st.Hands[s], viewCard(lang, c))
			}
		}
		for i := 0; i < tr.N; i++ {
			st.Trick = append(st.Trick, ViewPlay{Seat: int(tr.SeatOf(i)), Card: viewCard(lang, tr.Cards[i])})
		}
		if tr.N == 4 && tr.Winner.Valid() { // the zero Trick has seat 0 for its winner
			st.Winner = int(tr.Winner)
		}
		if re.Trump().Valid() {
			st.Trump = i18n.SuitLabel(lang, re.Trump())
		}
		return st
	}
	rg := ReplayGame{Steps: []ReplayStep{step(i18n.T(lang, "web.replay.deal", names[g.Dealer()]), core.Trick{})}}
	for _, mv := range g.Moves() {
		done := re.TricksDone()
		if err := re.Apply(mv); err != nil {
			return ReplayGame{}, err
		}
		who := names[mv.Seat]
		switch mv.Kind {
		case core.MoveTrump:
			rg.Steps = append(rg.Steps, step(i18n.T(lang, "web.trump_named", who, i18n.SuitLabel(lang, mv.Suit)), core.Trick{}))
		case core.MoveAnnounce:
			rg.Steps = append(rg.Steps, step(i18n.T(lang, "note.announced", who, mv.Call.Title()), re.CurrentTrick()))
		case core.MovePlay:
			if re.TricksDone() == done {
				rg.Steps = append(rg.Steps, step(i18n.Label(lang, who, i18n.Card(lang, mv.Card)), re.CurrentTrick()))
				continue
			}
			last, _ := re.LastTrick()
			full := step(i18n.Label(lang, who, i18n.Card(lang, mv.Card)), last)
			full.Winner = -1
			won := step(i18n.N(lang, "trick.won", last.Points(), names[last.Winner]), last)
			rg.Steps = append(rg.Steps, full, won)
		}
	}
	return rg, nil
}

// resultText is a game's result as the chat's summary says it.
func resultText(lang string, names [4]string, n int, r core.Result) string {
	w, ok := r.Outcome.Winner()
	if !ok {
		return i18n.T(lang, "summary.draw", n)
	}
	seats := w.Seats()
	return i18n.T(lang, "summary.won", n, w.String(), names[seats[0]]+" & "+names[seats[1]], r.Points[w], r.Points[w.Other()])
}

// signed writes a change of stripes with its sign, as the page does ("+1", "-2", "0").
func signed(n int) string {
	if n > 0 {
		return fmt.Sprintf("+%d", n)
	}
	return fmt.Sprint(n)
}

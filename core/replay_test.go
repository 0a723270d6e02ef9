package core_test

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kontermatt/kontermatt/core"
)

// example01 is testdata/example-01.json: dealer 3, so seat 0 names trump (hearts) and leads.
// Hands: 0 AH KH AS 9C 10D 9H, 1 KS 10S AD KC 10C JH, 2 QS KD AC 9D 9S 10H, 3 QH QD JS QC JC JD.
// Moves: 0 trump H; first trick 0 AH, 1 JH, 2 10H, 3 QD (seat 0 wins); then 20 more cards.
func example01(t *testing.T) core.GameRecord {
	t.Helper()
	data, err := os.ReadFile("../testdata/example-01.json")
	if err != nil {
		t.Fatal(err)
	}
	var rec core.GameRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

func intp(n int) *int { return &n }

func mv(seat int, kind, value string) core.MoveRecord {
	m := core.MoveRecord{Seat: intp(seat)}
	switch kind {
	case "trump":
		m.Trump = value
	case "announce":
		m.Announce = value
	case "play":
		m.Play = value
	}
	return m
}

// inGame returns rec with its format and rules removed, as a match record holds its games.
func inGame(rec core.GameRecord) core.GameRecord {
	rec.Format, rec.Rules = "", nil
	return rec
}

func marshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestReplayErrors produces every error code of docs/records.md from a crafted bad record and
// checks the move (and game) it names.
func TestReplayErrors(t *testing.T) {
	type bad struct {
		name  string
		make  func(t *testing.T) []byte
		code  string
		game  int
		move  int
		is    error
		match bool
	}
	game := func(edit func(r *core.GameRecord)) func(t *testing.T) []byte {
		return func(t *testing.T) []byte {
			r := example01(t)
			edit(&r)
			return marshal(t, r)
		}
	}
	match := func(rules *core.RulesRecord, edits ...func(r *core.GameRecord)) func(t *testing.T) []byte {
		return func(t *testing.T) []byte {
			mr := core.MatchRecord{Format: core.MatchFormat, Rules: rules}
			for i, edit := range edits {
				r := inGame(example01(t))
				r.Dealer = intp((3 + i) % 4)
				if edit != nil {
					edit(&r)
				}
				mr.Games = append(mr.Games, r)
			}
			return marshal(t, mr)
		}
	}
	raw := func(s string) func(t *testing.T) []byte { return func(*testing.T) []byte { return []byte(s) } }
	insert := func(r *core.GameRecord, i int, m ...core.MoveRecord) {
		r.Moves = slices.Insert(r.Moves, i, m...)
	}
	oneStripe := &core.RulesRecord{Stripes: intp(1)}
	cases := []bad{
		{name: "not JSON", make: raw(`{"format": "kontermatt-game/1",`), code: "bad_record", game: -1, move: -1},
		{name: "not an object", make: raw(`[1, 2]`), code: "bad_record", game: -1, move: -1},
		{name: "dealer is a string", make: raw(`{"format": "kontermatt-game/1", "dealer": "x"}`), code: "bad_record", game: -1, move: -1},
		{name: "hands is a string", make: raw(`{"format": "kontermatt-game/1", "dealer": 1, "hands": "x"}`), code: "bad_record", game: -1, move: -1},
		{name: "a match's game is a number", make: raw(`{"format": "kontermatt-match/1", "games": [1]}`), code: "bad_record", game: -1, move: -1},
		{name: "trailing garbage", make: raw(`{"format": "kontermatt-game/1"} x`), code: "bad_record", game: -1, move: -1},
		{name: "unknown format", make: game(func(r *core.GameRecord) { r.Format = "kontermatt-game/2" }), code: "bad_record", game: -1, move: -1},
		{name: "no format", make: game(func(r *core.GameRecord) { r.Format = "" }), code: "bad_record", game: -1, move: -1},
		{name: "bad card in a hand", make: game(func(r *core.GameRecord) { r.Hands[1][0] = "XX" }), code: "bad_record", game: -1, move: -1},
		{name: "bad rules", make: game(func(r *core.GameRecord) { r.Rules = &core.RulesRecord{Stripes: intp(0)} }), code: "bad_record", game: -1, move: -1, is: core.ErrBadRules},
		{name: "bad draw penalty", make: raw(`{"format": "kontermatt-game/1", "rules": {"draw_penalty": "double"}, "dealer": 0}`), code: "bad_record", game: -1, move: -1},
		{name: "no dealer", make: game(func(r *core.GameRecord) { r.Dealer = nil }), code: "bad_record", game: -1, move: -1},
		{name: "dealer 4", make: game(func(r *core.GameRecord) { r.Dealer = intp(4) }), code: "bad_record", game: -1, move: -1},
		{name: "bad card in a move", make: game(func(r *core.GameRecord) { r.Moves[2].Play = "1H" }), code: "bad_record", game: -1, move: 2},
		{name: "seat 4", make: game(func(r *core.GameRecord) { r.Moves[3].Seat = intp(4) }), code: "bad_record", game: -1, move: 3},
		{name: "move without seat", make: game(func(r *core.GameRecord) { r.Moves[3].Seat = nil }), code: "bad_record", game: -1, move: 3},
		{name: "two actions in a move", make: game(func(r *core.GameRecord) { r.Moves[1].Announce = "konter" }), code: "bad_record", game: -1, move: 1},
		{name: "empty move", make: game(func(r *core.GameRecord) { r.Moves[1] = core.MoveRecord{Seat: intp(0)} }), code: "bad_record", game: -1, move: 1},
		{name: "unknown call", make: game(func(r *core.GameRecord) { insert(r, 1, mv(0, "announce", "schneider")) }), code: "bad_record", game: -1, move: 1},
		{name: "unknown trump", make: game(func(r *core.GameRecord) { r.Moves[0].Trump = "X" }), code: "bad_record", game: -1, move: 0},
		{name: "card dealt twice", make: game(func(r *core.GameRecord) { r.Hands[0][0] = "KS" }), code: "bad_deal", game: -1, move: -1},
		{name: "five cards", make: game(func(r *core.GameRecord) { r.Hands[0] = r.Hands[0][:5] }), code: "bad_deal", game: -1, move: -1},
		{name: "three hands", make: game(func(r *core.GameRecord) { r.Hands = r.Hands[:3] }), code: "bad_deal", game: -1, move: -1},
		{name: "no hands", make: game(func(r *core.GameRecord) { r.Hands = nil }), code: "bad_deal", game: -1, move: -1},
		{name: "wrong dealer", make: match(nil, nil, func(r *core.GameRecord) { r.Dealer = intp(2) }), code: "wrong_dealer", game: 1, move: -1, match: true},
		{name: "not your turn", make: game(func(r *core.GameRecord) { r.Moves[1].Seat = intp(1) }), code: "not_your_turn", game: -1, move: 1},
		{name: "not forehand's trump", make: game(func(r *core.GameRecord) { r.Moves[0].Seat = intp(2) }), code: "not_your_turn", game: -1, move: 0},
		{name: "trump not named", make: game(func(r *core.GameRecord) { r.Moves = r.Moves[1:] }), code: "trump_not_named", game: -1, move: 0},
		{name: "trump already named", make: game(func(r *core.GameRecord) { insert(r, 1, mv(0, "trump", "S")) }), code: "trump_already_named", game: -1, move: 1},
		{name: "card not in hand", make: game(func(r *core.GameRecord) { r.Moves[1].Play = "KS" }), code: "card_not_in_hand", game: -1, move: 1},
		{name: "card played twice", make: game(func(r *core.GameRecord) { r.Moves[5].Play = "AH" }), code: "card_not_in_hand", game: -1, move: 5},
		{name: "must follow suit", make: game(func(r *core.GameRecord) { r.Moves[0].Trump = "S"; r.Moves[2].Play = "KC" }), code: "must_follow_suit", game: -1, move: 2},
		{name: "must play trump", make: game(func(r *core.GameRecord) { r.Moves[2].Play = "KS" }), code: "must_play_trump", game: -1, move: 2},
		{name: "announce after the first trick", make: game(func(r *core.GameRecord) { insert(r, 5, mv(3, "announce", "konter")) }), code: "announce_window_closed", game: -1, move: 5},
		{name: "announce after the own card", make: game(func(r *core.GameRecord) { insert(r, 3, mv(1, "announce", "konter")) }), code: "announce_window_closed", game: -1, move: 3},
		{name: "announcements off", make: game(func(r *core.GameRecord) {
			off := false
			r.Rules = &core.RulesRecord{Announcements: &off}
			insert(r, 4, mv(3, "announce", "konter"))
		}), code: "announce_window_closed", game: -1, move: 4, is: core.ErrAnnouncementsOff},
		{name: "announce missing cards", make: game(func(r *core.GameRecord) { insert(r, 1, mv(0, "announce", "matt")) }), code: "announce_missing_cards", game: -1, move: 1},
		{name: "announce duplicate", make: game(func(r *core.GameRecord) {
			insert(r, 4, mv(3, "announce", "konter"), mv(3, "announce", "konter"))
		}), code: "announce_duplicate", game: -1, move: 5},
		{name: "a card after the game", make: game(func(r *core.GameRecord) { r.Moves = append(r.Moves, mv(0, "play", "AS")) }), code: "game_over", game: -1, move: 25},
		{name: "a game after the match", make: match(oneStripe, nil, nil), code: "match_over", game: 1, move: -1, match: true},
		{name: "a game after an unfinished one", make: match(nil, func(r *core.GameRecord) { r.Moves = r.Moves[:7] }, nil), code: "bad_record", game: 1, move: -1, match: true},
		{name: "a bad move in the second game", make: match(nil, nil, func(r *core.GameRecord) {
			r.Moves = []core.MoveRecord{mv(1, "trump", "C"), mv(1, "play", "QS")}
		}), code: "card_not_in_hand", game: 1, move: 1, match: true},
	}
	seen := map[string]bool{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := core.Replay(tc.make(t))
			if err == nil {
				t.Fatalf("replay accepted the record: %+v", out)
			}
			var re *core.ReplayError
			if !errors.As(err, &re) {
				t.Fatalf("error %T is not a *ReplayError", err)
			}
			if core.Code(err) != tc.code || re.Move != tc.move || re.Game != tc.game {
				t.Errorf("got %s at game %d move %d (%v), want %s at game %d move %d",
					core.Code(err), re.Game, re.Move, err, tc.code, tc.game, tc.move)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v is not %v", err, tc.is)
			}
			var obj map[string]any
			if err := json.Unmarshal(marshal(t, core.AsReplayError(err)), &obj); err != nil {
				t.Fatal(err)
			}
			want := map[string]any{"error": tc.code, "move": float64(tc.move), "message": re.Err.Error()}
			if tc.match {
				want["game"] = float64(tc.game)
			}
			if !reflect.DeepEqual(obj, want) {
				t.Errorf("error object %v, want %v", obj, want)
			}
			// The message speaks of the record, never of Go types.
			if msg := re.Err.Error(); strings.Contains(msg, "Go value") || strings.Contains(msg, "struct {") || strings.Contains(msg, "json.") {
				t.Errorf("the message names Go types: %q", msg)
			}
			seen[tc.code] = true
		})
	}
	for code := range replayCodes {
		if !seen[code] {
			t.Errorf("no case produces %s", code)
		}
	}
}

// TestReplayInProgress replays records that stop early: the summary says whose turn it is and
// what they may play.
func TestReplayInProgress(t *testing.T) {
	cases := []struct {
		name  string
		moves int
		want  string // the summary's JSON, less the keys every summary has
	}{
		{"before trump", 0, `{"phase":"trump","to_move":0,"trump":null,"tricks":[],"announcements":[],"stake":1,
			"points":[0,0],"tricks_won":[0,0]}`},
		{"first card", 2, `{"phase":"play","to_move":1,"legal":["JH"],"trick":{"leader":0,"cards":["AH"]},"trump":"H",
			"tricks":[],"announcements":[],"stake":1,"points":[0,0],"tricks_won":[0,0]}`},
		{"after the first trick", 5, `{"phase":"play","to_move":0,"legal":["AS","KH","9H","10D","9C"],"trump":"H",
			"tricks":[{"leader":0,"cards":["AH","JH","10H","QD"],"winner":0,"points":7}],"announcements":[],"stake":1,
			"points":[7,0],"tricks_won":[1,0]}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := example01(t)
			rec.Moves = rec.Moves[:tc.moves]
			out, err := core.Replay(marshal(t, rec))
			if err != nil {
				t.Fatal(err)
			}
			got := toMap(t, out)
			var want map[string]any
			if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			want["dealer"], want["trump_team"], want["result"] = float64(3), "A", "in_progress"
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got  %s\nwant %s", marshal(t, got), marshal(t, want))
			}
		})
	}
	t.Run("match", func(t *testing.T) {
		second := inGame(example01(t))
		second.Dealer, second.Moves = intp(0), nil
		out, err := core.Replay(marshal(t, core.MatchRecord{Format: core.MatchFormat, Games: []core.GameRecord{inGame(example01(t)), second}}))
		if err != nil {
			t.Fatal(err)
		}
		got := toMap(t, out)
		games := got["games"].([]any)
		if len(games) != 2 || got["winner"] != nil || !reflect.DeepEqual(got["board"], []any{float64(8), float64(9)}) {
			t.Fatalf("summary %s", marshal(t, got))
		}
		first, next := games[0].(map[string]any), games[1].(map[string]any)
		if !reflect.DeepEqual(first["board"], []any{float64(8), float64(9)}) || first["result"] != "A" {
			t.Errorf("first game %v", first)
		}
		if next["board"] != nil || next["phase"] != "trump" || next["to_move"] != float64(1) || next["result"] != "in_progress" {
			t.Errorf("second game %v", next)
		}
	})
}

// TestMatch plays whole matches through Match and checks the end and what follows it.
func TestMatch(t *testing.T) {
	rules := core.DefaultRules()
	rules.Stripes = 1
	m, err := core.NewMatch(rules, 3)
	if err != nil {
		t.Fatal(err)
	}
	rec := example01(t)
	var hands [4][6]core.Card
	for s, h := range rec.Hands {
		for i, c := range h {
			hands[s][i] = core.MustCards(c)[0]
		}
	}
	if _, err := m.DealBy(2, hands); !errors.Is(err, core.ErrWrongDealer) {
		t.Errorf("dealer 2 instead of 3: %v", err)
	}
	g, err := m.Deal(hands)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Deal(hands); !errors.Is(err, core.ErrGameOver) {
		t.Errorf("a deal during a game: %v", err)
	}
	for i, mr := range rec.Moves {
		m := core.Move{Kind: core.MovePlay, Seat: core.Seat(*mr.Seat)}
		if mr.Trump != "" {
			m = core.NameTrump(m.Seat, core.Hearts)
		} else {
			m.Card = core.MustCards(mr.Play)[0]
		}
		if err := g.Apply(m); err != nil {
			t.Fatalf("move %d: %v", i, err)
		}
	}
	if w, over := m.Winner(); !over || w != core.TeamA || m.Board().OpenBoth() != [2]int{0, 1} {
		t.Fatalf("winner %v over %v board %v", w, over, m.Board().OpenBoth())
	}
	h := m.History()
	if len(h) != 1 || h[0].Applied != [2]int{-1, 0} || h[0].Trump != core.Hearts || h[0].Dealer != 3 {
		t.Errorf("history %+v", h)
	}
	if _, err := m.Deal(hands); !errors.Is(err, core.ErrMatchOver) {
		t.Errorf("a deal after the match: %v", err)
	}
	if _, err := core.NewMatch(rules, 4); !errors.Is(err, core.ErrBadRecord) {
		t.Errorf("first dealer 4: %v", err)
	}
	rules.Stripes = 21
	if _, err := core.NewMatch(rules, 0); !errors.Is(err, core.ErrBadRules) {
		t.Errorf("21 stripes: %v", err)
	}
}

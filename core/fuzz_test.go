package core_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kontermatt/kontermatt/core"
)

func FuzzParseCard(f *testing.F) {
	for _, s := range []string{"QS", "10h", "Q♠", "♠Q", "q♥️", "♦︎10", " 9c ", "", "Q", "QQ", "11S", "Qſ", "10♠♠", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := core.ParseCard(s)
		if err != nil {
			var pe *core.ParseError
			if !errors.Is(err, core.ErrInvalidCard) || !errors.As(err, &pe) || pe.Input != s || c != core.NoCard {
				t.Fatalf("ParseCard(%q) = %v, %v: want NoCard and a *ParseError wrapping ErrInvalidCard", s, c, err)
			}
		} else {
			if !c.Valid() {
				t.Fatalf("ParseCard(%q) = invalid card %d", s, c)
			}
			for _, form := range []string{c.String(), c.Chat(), strings.ToLower(c.String()), c.Suit().Symbol() + c.Rank().String()} {
				if back, err := core.ParseCard(form); err != nil || back != c {
					t.Fatalf("ParseCard(%q) = %v; its form %q reads as %v, %v", s, c, form, back, err)
				}
			}
		}
		x, err := core.ParseSuit(s)
		if (err == nil) != x.Valid() || (err != nil && !errors.Is(err, core.ErrInvalidSuit)) {
			t.Fatalf("ParseSuit(%q) = %v, %v", s, x, err)
		}
	})
}

// replayCodes are the codes docs/records.md allows; see rules_test.go.

func FuzzReplay(f *testing.F) {
	files, _ := filepath.Glob("../testdata/example-*.json")
	for _, name := range files {
		if strings.HasSuffix(name, ".expected.json") {
			continue
		}
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		// The same game as the only game of a match.
		var rec map[string]any
		if err := json.Unmarshal(data, &rec); err != nil {
			f.Fatal(err)
		}
		// The game stopped halfway, and written with symbols and lower case.
		moves := rec["moves"].([]any)
		rec["moves"] = moves[:len(moves)/2]
		half, _ := json.Marshal(rec)
		f.Add(half)
		f.Add([]byte(strings.NewReplacer(`S"`, `♠"`, `H"`, `♥️"`, `"Q`, `"q`).Replace(string(half))))
		rec["moves"] = moves
		delete(rec, "format")
		m, _ := json.Marshal(map[string]any{"format": core.MatchFormat, "rules": map[string]any{"stripes": 1}, "games": []any{rec, rec}})
		f.Add(m)
	}
	for _, s := range []string{"", "null", "{}", "[]", `{"format":"kontermatt-game/1"}`, `{"format":"kontermatt-match/1","games":[]}`,
		`{"format":"kontermatt-game/1","dealer":0,"hands":[[],[],[],[]],"moves":[{"seat":1,"trump":"H"}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := core.Replay(data)
		if err != nil {
			var re *core.ReplayError
			if !errors.As(err, &re) {
				t.Fatalf("error %T %v is not a *ReplayError", err, err)
			}
			if !replayCodes[core.Code(err)] || re.Move < -1 || re.Game < -1 {
				t.Fatalf("error %v: code %q, game %d, move %d", err, core.Code(err), re.Game, re.Move)
			}
			b, merr := json.Marshal(re)
			var obj struct {
				Error   string `json:"error"`
				Move    *int   `json:"move"`
				Message string `json:"message"`
			}
			if merr != nil || json.Unmarshal(b, &obj) != nil || obj.Error != core.Code(err) || obj.Move == nil || obj.Message == "" {
				t.Fatalf("error object %s, %v", b, merr)
			}
			return
		}
		if _, err := json.Marshal(out); err != nil {
			t.Fatalf("summary does not marshal: %v", err)
		}
		// What replays once replays again from the engine's own record, to the same summary.
		var rec any
		switch out.(type) {
		case core.GameSummary:
			var gr core.GameRecord
			if err := json.Unmarshal(data, &gr); err != nil {
				t.Fatalf("accepted but not a game record: %v", err)
			}
			g, err := core.ReplayGame(gr)
			if err != nil {
				t.Fatalf("Replay accepts, ReplayGame refuses: %v", err)
			}
			rec = g.Record()
		case core.MatchSummary:
			var mr core.MatchRecord
			if err := json.Unmarshal(data, &mr); err != nil {
				t.Fatalf("accepted but not a match record: %v", err)
			}
			m, err := core.ReplayMatch(mr)
			if err != nil {
				t.Fatalf("Replay accepts, ReplayMatch refuses: %v", err)
			}
			rec = m.Record()
		default:
			t.Fatalf("summary of type %T", out)
		}
		again, _ := json.Marshal(rec)
		out2, err := core.Replay(again)
		if err != nil || !reflect.DeepEqual(out, out2) {
			t.Fatalf("the engine's record %s replays as %v, %v", again, out2, err)
		}
	})
}

func FuzzParsePosition(f *testing.F) {
	for _, s := range []string{
		"H AS.KH.9C/QH.9S/10D/JC 1:KS #0",
		"S 9H/JD.JC/10H/KH 2:AD.9D.KC #2 won=1,1 points=5,9 dealer=0",
		"H QS.QH.QD/9D/10S/JS 0:- #0 calls=0:konter,0:matt ann=on draw=flat1 bonus=off dir=anticlockwise stripes=3",
		"S -/-/-/- 1:- #6 won=3,3 points=20,20",
		"- AH.KH.AS.9C.10D.9H/KS.10S.AD.KC.10C.JH/QS.KD.AC.9D.9S.10H/QH.QD.JS.QC.JC.JD 0:- #0",
		"H -/-/-/9C 0:AS.KS.QD #5 won=5,0 points=31,0 calls=2:konter-a-matt dealer=0",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		g, err := core.ParsePosition(s)
		if err != nil {
			if !errors.Is(err, core.ErrInvalidPosition) || g != nil {
				t.Fatalf("ParsePosition(%q) = %v, %v: want nil and ErrInvalidPosition", s, g, err)
			}
			return
		}
		p := g.Position()
		g2, err := core.ParsePosition(p)
		if err != nil || *g2 != *g || g2.Position() != p {
			t.Fatalf("%q prints as %q, which reads as %v, %v", s, p, g2, err)
		}
		for seat := core.NoSeat; seat < 4; seat++ {
			_ = g.View(seat)
		}
		// Play on with the first legal card (or name spades) until the game ends or a partial
		// position runs out of cards.
		for range 30 {
			seat := g.ToMove()
			var err error
			switch {
			case g.Phase() == core.PhaseTrump:
				err = g.NameTrump(seat, core.Spades)
			case g.Phase() == core.PhasePlay && !g.LegalCards(seat).Empty():
				err = g.Play(seat, g.LegalCards(seat).First())
			default:
				if g.Phase() == core.PhaseOver {
					_ = g.Result()
					_ = g.Summary()
				}
				return
			}
			if err != nil {
				t.Fatalf("from %q: legal move refused: %v", s, err)
			}
		}
		t.Fatalf("from %q: no end after 30 moves", s)
	})
}

// FuzzPlay drives a game with moves read from the fuzzer's bytes, two bytes a move, and checks
// each against the reference rules of the simulation: a card or a call is accepted exactly when
// those rules allow it, a refused move changes nothing, and the game's record replays.
func FuzzPlay(f *testing.F) {
	f.Add(uint64(1), []byte{0, 0, 12, 0, 12, 1, 12, 2, 12, 3})
	f.Add(uint64(7), []byte{1, 2, 13, 5, 5, 1, 6, 2, 14, 0, 15, 9, 12, 200, 8, 24, 9, 3})
	f.Add(uint64(42), bytes.Repeat([]byte{12, 7}, 30))
	f.Fuzz(func(t *testing.T, seed uint64, script []byte) {
		r := rand.New(rand.NewPCG(seed, seed>>32))
		rules := core.DefaultRules()
		rules.Announcements = seed&4 == 0
		dealer := core.Seat(seed & 3)
		g, err := core.NewGame(rules, dealer, core.DealHands(r, dealer))
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i+1 < len(script); i += 2 {
			a, b := script[i], script[i+1]
			seat := core.Seat(a & 3)
			var m core.Move
			switch (a >> 2) & 3 {
			case 0:
				m = core.NameTrump(seat, core.Suit(1+b%4))
			case 1:
				m = core.Announce(seat, core.Call(1+b%3))
			case 2:
				m = core.Play(seat, core.Card(1+b%24))
			case 3: // the seat to move plays one of its legal cards, so games get far
				legal := g.LegalCards(g.ToMove())
				if legal.Empty() {
					continue
				}
				m = core.Play(g.ToMove(), legal.Nth(int(b)%legal.Len()))
			}
			want := refAllows(g, m)
			before := *g
			err := g.Apply(m)
			if (err == nil) != want {
				t.Fatalf("%v at %s: engine says %v, reference says allowed=%v", m, before.Position(), err, want)
			}
			if err != nil && (!replayCodes[core.Code(err)] || *g != before) {
				t.Fatalf("%v refused with %v (code %q); game changed: %v", m, err, core.Code(err), *g != before)
			}
		}
		rec, _ := json.Marshal(g.Record())
		out, err := core.Replay(rec)
		if err != nil || !reflect.DeepEqual(out, g.Summary()) {
			t.Fatalf("record %s replays as %v, %v", rec, out, err)
		}
	})
}

// refAllows is the reference answer to "may this move be made now" (RULES.md 6-10).
func refAllows(g *core.Game, m core.Move) bool {
	if g.Phase() == core.PhaseOver || m.Seat != g.ToMove() {
		return false
	}
	switch m.Kind {
	case core.MoveTrump:
		return g.Phase() == core.PhaseTrump
	case core.MoveAnnounce:
		if g.Phase() != core.PhasePlay || !g.Rules().Announcements || g.TricksDone() != 0 {
			return false
		}
		var made core.Call
		for _, a := range g.Announcements() {
			made |= a.Call
		}
		return m.Call.Queens()&^g.Hand(m.Seat) == 0 && made&m.Call == 0
	case core.MovePlay:
		return g.Phase() == core.PhasePlay &&
			slices.Contains(refLegal(g.Hand(m.Seat).Cards(), g.CurrentTrick().Led(), g.Trump()), m.Card)
	}
	return false
}

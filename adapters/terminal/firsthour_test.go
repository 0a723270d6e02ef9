package terminal

import (
	"context"
	"strings"
	"testing"

	"math/rand/v2"

	"github.com/kontermatt/kontermatt/core/coach"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// The terminal's first hour (issue 35), each as the screen shows it.

// -learn -new after an unfinished hot-seat match stops that match and gives a lesson for one
// player, not another hot seat.
func TestLearnNewAfterAHotSeat(t *testing.T) {
	store := mem.New()
	if _, err := session(t, store, Config{Humans: 4, Insist: Insist{Humans: true}, Options: []string{"timer=none"}}, 6); err != nil {
		t.Fatal(err)
	}
	if su := setupAt(t, store); len(su.People) != 4 || su.Status != api.StatusPlaying {
		t.Fatalf("the hot seat is not stored unfinished: %d people, status %v", len(su.People), su.Status)
	}
	got, err := session(t, store, Config{Humans: 1, Learn: true, Fresh: true}, 4)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "🎓 A guided game") {
		t.Errorf("-learn -new gives no lesson:\n%s", got)
	}
	if strings.Contains(got, "Pass the keyboard") || strings.Contains(got, "Player 2") {
		t.Errorf("-learn -new gives a hot seat:\n%s", got)
	}
	if su := setupAt(t, store); !su.Learn || len(su.People) != 1 {
		t.Errorf("the table stored after -learn -new: learn %v, %d people", su.Learn, len(su.People))
	}
}

// After "announce konter" the screen says the call first, then the table's line with the calls,
// then the player's cards and moves again: it is still their turn.
func TestAnnounceThenTheMovesAgain(t *testing.T) {
	for seed := uint64(1); seed < 400; seed++ {
		out := &tabletest.Buffer{}
		term := New(Config{Out: out, Humans: 1, Options: []string{"timer=none"}})
		announced := false
		var before string
		term.cfg.In = &typist{next: func() (string, bool) {
			if announced {
				return "", false
			}
			_, m, ok := term.toMove()
			if !ok || !strings.Contains(strings.Join(legalMoves(m), "|"), "announce konter") {
				return "", false
			}
			announced, before = true, out.String()
			return "announce konter", true
		}}
		svc := tabletest.New(table.Config{Store: mem.New(), Outboxes: map[string]table.Outbox{Platform: term},
			Surfaces: map[string]api.Surface{Platform: Surface}, Robots: term.Robots(robots), Seed: seed, Coach: coach.New(coach.Config{})})
		if err := term.Run(context.Background(), svc); err != nil {
			t.Fatal(err)
		}
		svc.Close()
		if !announced {
			continue
		}
		after := strings.TrimPrefix(out.String(), before)
		call, calls, moves := strings.Index(after, "📣 You announce Konter!"), strings.Index(after, "Calls: Konter"), strings.Index(after, "Type one of: play")
		if call < 0 || calls < 0 || moves < 0 || !(call < calls && calls < moves) {
			t.Errorf("seed %d: after announce konter the screen says (call %d, calls %d, moves %d):\n%s", seed, call, calls, moves, after)
		}
		if strings.Contains(after[max(moves, 0):], "announce konter") {
			t.Errorf("seed %d: konter is offered again:\n%s", seed, after)
		}
		return
	}
	t.Fatal("no seed below 400 gives the player both red queens in the first trick")
}

// Watching four computers ends without asking anyone to type rematch: nobody can.
func TestWatchingEndsWithoutRematch(t *testing.T) {
	got, err := session(t, mem.New(), Config{Humans: 0, Insist: Insist{Humans: true}, Options: []string{"timer=none", "stripes=1"}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "wins the match") {
		t.Fatalf("no match watched:\n%s", got)
	}
	if strings.Contains(got, "rematch") {
		t.Errorf("watching ends with what nobody can type:\n%s", got[max(0, len(got)-600):])
	}
}

// Outside -learn the opening says what the stripes are for: fewer is better.
func TestTheOpeningSaysFewerStripesWin(t *testing.T) {
	for _, lang := range []string{"en", "lb", "de", "fr"} {
		got, err := session(t, mem.New(), Config{Humans: 1, Lang: lang, Options: []string{"timer=none"}}, 0)
		if err != nil {
			t.Fatal(err)
		}
		opening, _, _ := strings.Cut(got, " — 🂠")
		if want := i18n.N(lang, "term.goal", 9); !strings.Contains(opening, want) || !i18n.Has(lang, "term.goal.other") {
			t.Errorf("%s: the opening does not say %q:\n%s", lang, want, opening)
		}
	}
}

// Input that ends (Ctrl-D) in an unfinished match says it is kept and how to go on.
func TestEndOfInputSaysTheMatchIsKept(t *testing.T) {
	store := mem.New()
	got, err := session(t, store, Config{Humans: 1, Options: []string{"timer=none"}}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if want := i18n.T("en", "term.kept"); !strings.HasSuffix(strings.TrimSpace(got), want) {
		t.Errorf("the screen does not end with %q:\n%s", want, got[max(0, len(got)-400):])
	}
	if got, _ := session(t, store, Config{Humans: 1, In: strings.NewReader("quit\n")}, 0); !strings.HasSuffix(strings.TrimSpace(got), i18n.T("en", "term.kept")) {
		t.Errorf("quit does not say the match is kept:\n%s", got[max(0, len(got)-400):])
	}
}

// In German the screen writes a queen D♠ and a jack B♣, the moves offered say "play DS", and
// "play D♠", "play DS" and "play QS" are all understood: a whole match typed so ends, with no card
// refused and no English rank letter on the screen.
func TestGermanRankLettersAtTheTerminal(t *testing.T) {
	out := &tabletest.Buffer{}
	term := New(Config{Out: out, Humans: 1, Lang: "de", Options: []string{"timer=none", "stripes=1"}})
	rng := rand.New(rand.NewPCG(5, 5))
	forms := 0
	term.cfg.In = &typist{next: func() (string, bool) {
		if strings.Contains(out.String(), "🏆") {
			return "", false
		}
		_, m, ok := term.toMove()
		if !ok {
			return "board", true
		}
		moves := legalMoves(m)
		move := moves[rng.IntN(len(moves))]
		if arg, ok := strings.CutPrefix(move, "play "); ok {
			c, err := i18n.ParseCard(arg)
			if err != nil {
				t.Fatalf("the offered move %q does not parse: %v", move, err)
			}
			switch forms++; forms % 3 {
			case 1:
				move = "play " + i18n.Card("de", c) // D♠, as the hand shows it
			case 2:
				move = "play " + c.String() // QS, the English letters
			}
		}
		return move, true
	}}
	svc := newService(mem.New(), term)
	defer svc.Close()
	if err := term.Run(context.Background(), svc); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if !strings.Contains(got, "🏆 Team") || !strings.Contains(got, "gewinnt die Partie nach") {
		t.Fatalf("the match did not end:\n%s", got[max(0, len(got)-1500):])
	}
	if strings.Contains(got, "keine Karte") {
		t.Errorf("a card was refused:\n%s", got)
	}
	for _, english := range []string{"Q♠", "Q♥", "Q♦", "Q♣", "J♠", "J♥", "J♦", "J♣", "play QS", "play JC"} {
		if strings.Contains(got, english) {
			t.Errorf("the German screen shows %q", english)
		}
	}
	if !strings.Contains(got, "D♠") && !strings.Contains(got, "D♥") || !strings.Contains(got, "play D") && !strings.Contains(got, "play B") {
		t.Errorf("no German rank letter on the screen:\n%s", got[:min(len(got), 2000)])
	}
}

package web

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// A person at the table asks for the kept matches of its place: none before the first match
// ends (history's own words), then the match just played; its replay has, for each game, the
// deal with every hand, trump, each card, each trick's winner and the result, in the order the
// record holds them, and it agrees with what `bot replay` makes of the same record.
func TestReplayOfAKeptMatch(t *testing.T) {
	e := newEnv(t, fastPlayer)
	id, p, place := e.soloTable(1)
	k := e.open(e.session(p, id))
	ask := func(m map[string]any) outbound {
		t.Helper()
		if err := k.sendJSON(m); err != nil {
			t.Fatal(err)
		}
		for {
			o, err := k.read(10 * time.Second)
			if err != nil {
				t.Fatalf("no answer to %v: %v", m, err)
			}
			if o.T == "replays" || o.T == "replay" || o.T == "note" || o.T == "refused" {
				return o
			}
		}
	}
	if o := ask(map[string]any{"t": "replays"}); o.List == nil || len(o.List.Lines) != 0 || o.List.Empty == "" {
		t.Fatalf("before any match ended: %+v", o)
	}
	playAlong(t, k, 5000)
	o := ask(map[string]any{"t": "replays"})
	if o.List == nil || len(o.List.Lines) != 1 {
		t.Fatalf("after a match: %+v", o)
	}
	o = ask(map[string]any{"t": "replay", "n": 1})
	if o.Replay == nil {
		t.Fatalf("the replay of match 1: %+v", o)
	}
	rm := o.Replay
	replies, err := e.svc.Handle(context.Background(), api.Command{Place: place, Actor: p, Verb: api.VerbHistory, Args: []string{"record", "1"}})
	if err != nil || len(replies) != 1 || replies[0].File == nil {
		t.Fatalf("history's record: %v %+v", err, replies)
	}
	out, err := core.Replay(replies[0].File.Data)
	if err != nil {
		t.Fatal(err)
	}
	sum := out.(core.MatchSummary)
	if len(rm.Games) != len(sum.Games) || rm.Line != o.Replay.Line || !strings.Contains(rm.Line, "Jang 1") {
		t.Fatalf("%d games replayed, %d in the record; line %q", len(rm.Games), len(sum.Games), rm.Line)
	}
	for i, g := range rm.Games {
		gs := sum.Games[i]
		first, last := g.Steps[0], g.Steps[len(g.Steps)-1]
		for s := range 4 {
			if len(first.Hands[s]) != 6 || len(last.Hands[s]) != 0 {
				t.Fatalf("game %d: seat %d holds %d cards at the deal, %d at the end", g.No, s, len(first.Hands[s]), len(last.Hands[s]))
			}
		}
		var tricks []core.TrickSummary
		for _, st := range g.Steps {
			if st.Winner < 0 {
				continue
			}
			ts := core.TrickSummary{Leader: st.Trick[0].Seat, Winner: &st.Winner}
			for _, pl := range st.Trick {
				ts.Cards = append(ts.Cards, pl.Card.Card)
			}
			if len(tricks) == 0 || !slices.Equal(tricks[len(tricks)-1].Cards, ts.Cards) {
				tricks = append(tricks, ts)
			}
		}
		if len(tricks) != len(gs.Tricks) {
			t.Fatalf("game %d: %d tricks won in the replay, %d in the record", g.No, len(tricks), len(gs.Tricks))
		}
		for j, tr := range tricks {
			want := gs.Tricks[j]
			if tr.Leader != want.Leader || *tr.Winner != *want.Winner || !slices.Equal(tr.Cards, want.Cards) {
				t.Fatalf("game %d trick %d: %+v, the record %+v", g.No, j+1, tr, want)
			}
		}
		if gs.Trump == nil || !strings.Contains(last.Trump, i18n.Suit("en", mustSuit(t, *gs.Trump))) {
			t.Fatalf("game %d: trump %q, the record %v", g.No, last.Trump, gs.Trump)
		}
		if !strings.Contains(last.Say, "🏁") || !strings.Contains(last.Say, "Stripes") {
			t.Fatalf("game %d ends with %q", g.No, last.Say)
		}
	}
	if o := ask(map[string]any{"t": "replay", "n": 2}); o.T != "note" || o.Text != i18n.T("en", "history.gone") {
		t.Fatalf("a match that is not kept: %+v", o)
	}
}

func mustSuit(t *testing.T, s string) core.Suit {
	t.Helper()
	x, err := core.ParseSuit(s)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

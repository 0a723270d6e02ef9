package robot

import (
	"context"
	"math/rand/v2"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/robot/dd"
	"github.com/kontermatt/kontermatt/core/robot/robottest"
)

// Judge ranks the cards best first, gives the same choice for equivalent cards, and finds the
// card Strong plays on the same deals best.
func TestJudgeRanksCards(t *testing.T) {
	seed := uint64(9)
	r := rand.New(rand.NewPCG(seed, 0))
	checked := 0
	for i := 0; checked < 12 && i < 500; i++ {
		v, _ := randomView(r, 4+r.IntN(12))
		if v.Legal.Len() < 2 || v.Phase != core.PhasePlay {
			continue
		}
		j, ok := Judge(context.Background(), v, 1, Effort{Worlds: 40, Nodes: 1 << 40})
		if !ok || j.Worlds == 0 {
			t.Fatalf("seed %d case %d: nothing judged", seed, i)
		}
		covered := core.CardSet(0)
		for k, c := range j.Choices {
			if k > 0 && c.Worth > j.Choices[k-1].Worth {
				t.Fatalf("seed %d case %d: not best first: %+v", seed, i, j.Choices)
			}
			if c.Win < 0 || c.Win+c.Draw > 1+1e-9 || c.Points < float64(v.Points[v.Seat.Team()]) || c.Points > 40 {
				t.Fatalf("seed %d case %d: odd choice %+v", seed, i, c)
			}
			covered = covered.Add(c.Move.Card)
			for _, o := range c.Same {
				covered = covered.Add(o)
			}
		}
		if covered != v.Legal {
			t.Fatalf("seed %d case %d: choices cover %v, legal %v", seed, i, covered, v.Legal)
		}
		for _, c := range v.Legal.Cards() {
			if _, _, ok := j.Find(core.Play(v.Seat, c)); !ok {
				t.Fatalf("seed %d case %d: %v not found", seed, i, c)
			}
		}
		checked++
	}
	if checked < 12 {
		t.Fatalf("only %d positions judged", checked)
	}
	v, _ := randomView(r, -1)
	j, ok := Judge(context.Background(), v, 1, Effort{})
	if !ok || len(j.Choices) != 4 || j.Choices[0].Move.Kind != core.MoveTrump || j.Choices[0].Worth < j.Choices[3].Worth {
		t.Fatalf("trump judgement %+v, %v", j, ok)
	}
	if m := NewWith(Strong, 1, quick).Decide(context.Background(), v); m.Suit != j.Best().Move.Suit {
		t.Errorf("Strong names %v, the judgement's best is %v", m.Suit, j.Best().Move.Suit)
	}
}

// A judgement's budget is work, not time: the same view and seed give the same judgement on a
// machine whose every core is busy with something else. The time cap is only a safety bound,
// and a judgement it cuts says so.
func TestJudgeIsTheSameOnABusyMachine(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 0))
	var v core.View
	for v.Legal.Len() < 3 || len(v.Calls) > 0 {
		v, _ = randomView(r, 5) // in the second trick
	}
	e := Effort{Nodes: 100_000}
	want, ok := Judge(context.Background(), v, 7, e)
	if !ok || want.Cut || want.Worlds < 1 || want.Nodes < e.Nodes {
		t.Fatalf("judged %+v, %v", want, ok)
	}
	stop := robottest.Busy(2 * runtime.GOMAXPROCS(0))
	busy, _ := Judge(context.Background(), v, 7, e)
	stop()
	if !reflect.DeepEqual(busy, want) {
		t.Errorf("on a busy machine %+v\nalone %+v", busy, want)
	}
	cut, _ := Judge(context.Background(), v, 7, Effort{Nodes: 1 << 40, Cap: time.Millisecond})
	if !cut.Cut {
		t.Errorf("a judgement the cap ended does not say so: %+v", cut)
	}
}

// With three cards in hand Judge measures as Strong decides, without strategy fusion: no card is
// worth more than solving each deal open-handed says (with the others modelled as Strong models
// them), some are worth less, and the card Strong
// plays is one the judgement ranks best, so the coach never calls Strong's last-trick play a
// mistake nor praises a card that only wins with the others' cards in view.
func TestJudgeEndgameWithoutFusion(t *testing.T) {
	seed := uint64(11)
	r := rand.New(rand.NewPCG(seed, 0))
	sv := dd.NewSolver()
	checked, lower := 0, 0
	for i := 0; checked < 60 && i < 20000; i++ {
		v, _ := randomView(r, 12+r.IntN(4))
		if v.Hand.Len() != endgameHand || v.Legal.Len() < 2 || len(v.Calls) > 0 || Decided(v) {
			continue
		}
		ws := newSearcher(Strong, 1, Options{Threads: 1}).source(v)
		if ws.all == nil || len(ws.all) > 400 { // fewer deals keep the test quick under -race
			continue
		}
		j, ok := Judge(context.Background(), v, 1, Effort{Nodes: 1 << 40})
		if !ok || j.Cut || j.Worlds != len(ws.all) {
			t.Fatalf("seed %d case %d: judged %d of %d deals, cut %v", seed, i, j.Worlds, len(ws.all), j.Cut)
		}
		team := v.Seat.Team()
		have := v.Points[team]
		u := utilities(v, v.Stake, false)
		open := map[core.Card]float64{}
		wsum := 0.0
		for k := range ws.all {
			hands, w := ws.world(k)
			wsum += w
			for _, c := range v.Legal.Cards() {
				sv.Reset(dd.Position{Trump: v.Trump, Hands: hands, Leader: v.Trick.Leader, Trick: v.Trick.Played()}, team)
				sv.SetModel(ws.modelled(k), easyModel)
				gain, _, _ := sv.Play(c)
				open[c] += w * u[class(have, gain+sv.Value())]
			}
		}
		for _, ch := range j.Choices {
			o := open[ch.Move.Card] / wsum
			if ch.Worth > o+1e-9 {
				t.Fatalf("seed %d case %d: %v judged worth %v, open-handed %v", seed, i, ch.Move.Card, ch.Worth, o)
			}
			if ch.Worth < o-1e-9 {
				lower++
			}
		}
		m := NewWith(Strong, 1, Options{Threads: 1, Budget: time.Minute}).Decide(context.Background(), v)
		if c, _, ok := j.Find(m); !ok || c.Worth < j.Best().Worth-1e-9 {
			t.Fatalf("seed %d case %d: Strong plays %v, judged %+v; best %+v", seed, i, m, c, j.Best())
		}
		checked++
	}
	if checked < 60 || lower == 0 {
		t.Fatalf("seed %d: %d positions, %d cards judged worth less than open-handed", seed, checked, lower)
	}
	t.Logf("seed %d: %d positions, %d cards judged worth less than open-handed", seed, checked, lower)
}

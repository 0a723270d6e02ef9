package coach

import (
	"bytes"
	"context"
	"log/slog"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/robot"
	"github.com/kontermatt/kontermatt/core/robot/robottest"
)

// hintSeed is the seed the hints of these tests are judged with.
const hintSeed = 1

// When the workers are busy the queue fills: a review that does not fit is refused; a review
// asked for again while it waits is queued once; once the workers are free each queued review
// is judged, kept and handed on once.
func TestReviewQueueFull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hold := make(chan struct{})
		c := New(Config{Workers: 1, Queue: 2, Worlds: 4, Nodes: 200_000, hold: hold})
		defer c.Close()
		g := randomGame(t, 4)
		got := make(chan string, 8)
		done := func(text string) { got <- text }
		for i, want := range []bool{true, true, false} {
			key := string(rune('a' + i))
			if ok := c.Review(key, *g, core.Seat(i), [2]int{9, 9}, 1, "en", done); ok != want {
				t.Fatalf("review %d queued %v, want %v", i+1, ok, want)
			}
		}
		if !c.Review("a", *g, 0, [2]int{9, 9}, 1, "en", done) {
			t.Error("a review already queued was refused")
		}
		close(hold)
		synctest.Wait()
		if len(got) != 2 {
			t.Fatalf("%d reviews handed on, want 2", len(got))
		}
		if text, ok := c.Reviewed("a"); !ok || !strings.HasPrefix(text, "🎓") {
			t.Errorf("review a kept: %v %q", ok, text)
		}
		if _, ok := c.Reviewed("c"); ok {
			t.Error("the refused review was made")
		}
	})
	c := New(Config{})
	c.Close()
	if c.Review("a", core.Game{}, 0, [2]int{9, 9}, 1, "en", func(string) {}) {
		t.Error("a closed coach took a review")
	}
}

// Every lesson renders in every language, for every kind of turn.
func TestLessonsInEveryLanguage(t *testing.T) {
	r := newTestGames(t)
	for _, lang := range i18n.Languages {
		for _, v := range r {
			text := lesson(lang, v)
			if text == "" || strings.Contains(text, "%!") || strings.Contains(text, "learn.") {
				t.Errorf("%s: %q", lang, text)
			}
		}
	}
}

// newTestGames gives views of a seat at each kind of turn: naming trump, leading, following a
// trump and a plain lead with and without the suit, and with a call to make.
func newTestGames(t *testing.T) []core.View {
	t.Helper()
	var out []core.View
	kinds := map[string]bool{}
	for seed := uint64(1); seed < 200 && len(kinds) < 6; seed++ {
		m, _ := core.NewMatch(core.DefaultRules(), 0)
		g, _ := m.Deal(core.DealHands(newRand(seed), 0))
		for g.Phase() != core.PhaseOver {
			s := g.ToMove()
			v := g.View(s)
			kind := "lead"
			switch {
			case v.Phase == core.PhaseTrump:
				kind = "trump"
			case len(v.Calls) > 0:
				kind = "call"
			case v.Trick.N > 0 && core.IsTrump(v.Trick.Led(), v.Trump):
				kind = "trump led"
			case v.Trick.N > 0 && v.Legal == v.Hand:
				kind = "void"
			case v.Trick.N > 0:
				kind = "suit"
			}
			if !kinds[kind] {
				kinds[kind] = true
				out = append(out, v)
			}
			var mv core.Move
			if v.Phase == core.PhaseTrump {
				mv = core.NameTrump(s, v.Hand.First().Suit())
			} else {
				mv = core.Play(s, v.Legal.First())
			}
			if err := g.Apply(mv); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(kinds) < 6 {
		t.Fatalf("only %v turns found", kinds)
	}
	return out
}

// reviewDecisions finds every decision of the seat: the trump choice, each card with a choice,
// and the chance to call.
func TestReviewDecisions(t *testing.T) {
	for seed := uint64(1); seed < 30; seed++ {
		m, _ := core.NewMatch(core.DefaultRules(), 0)
		g, _ := m.Deal(core.DealHands(newRand(seed), 0))
		var choices [4]int
		var announced, pending [4]bool
		for g.Phase() != core.PhaseOver {
			s := g.ToMove()
			v := g.View(s)
			var mv core.Move
			switch {
			case v.Phase == core.PhaseTrump:
				mv = core.NameTrump(s, v.Hand.First().Suit())
				choices[s]++
			case len(v.Calls) > 0 && seed%2 == 0:
				mv = core.Announce(s, v.Calls[0])
				if !announced[s] { // the call and the card after it are one decision
					announced[s], pending[s] = true, true
					choices[s]++
				}
			default:
				if pending[s] {
					pending[s] = false
				} else if v.Legal.Len() > 1 || len(v.Calls) > 0 {
					choices[s]++
				}
				mv = core.Play(s, v.Legal.Nth(v.Legal.Len()-1))
			}
			if err := g.Apply(mv); err != nil {
				t.Fatal(err)
			}
		}
		for s := core.Seat(0); s < 4; s++ {
			ds := reviewDecisions(*g, s, [2]int{9, 9})
			if len(ds) != choices[s] {
				t.Fatalf("seed %d seat %d: %d decisions, want %d", seed, s, len(ds), choices[s])
			}
			for _, d := range ds {
				if d.view.Seat != s || d.view.Open != [2]int{9, 9} || (d.move.Kind == core.MovePlay && !d.view.Legal.Has(d.move.Card)) {
					t.Fatalf("seed %d seat %d: decision %+v", seed, s, d)
				}
			}
		}
	}
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 3)) }

// BenchmarkReview is one player's review of one game between Normal players, at the default
// budget (20,000,000 solver nodes) and deal cap: what a review costs one core. It logs the review
// of the first game as a player would read it (go test -bench Review -v).
func BenchmarkReview(b *testing.B) {
	c := New(Config{})
	m, _ := core.NewMatch(core.DefaultRules(), 0)
	g, _ := m.Deal(core.DealHands(newRand(11), 0))
	var ps [4]robot.Player
	for i := range ps {
		ps[i] = robot.NewWith(robot.Normal, uint64(i), robot.Options{Threads: 1})
	}
	for g.Phase() != core.PhaseOver {
		s := g.ToMove()
		if err := g.Apply(ps[s].Decide(context.Background(), m.View(s))); err != nil {
			b.Fatal(err)
		}
	}
	job := reviewJob{seat: 1, game: *g, open: [2]int{9, 9}, gameNo: 1, lang: "en"}
	var text string
	cpu0 := cpuTime()
	for b.Loop() {
		ctx, cancel := context.WithTimeout(context.Background(), c.cfg.Cap)
		text = c.reviewText(ctx, job)
		cancel()
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(len(reviewDecisions(*g, 1, job.open))), "decisions")
	b.Logf("review of seat 2 (budget %d nodes):\n%s", c.cfg.Nodes, text)
}

// BenchmarkHint is a hint at the first card of a fresh deal, the costliest one, at the default
// budget: what a hint costs one core while its player waits.
func BenchmarkHint(b *testing.B) {
	c := New(Config{})
	m, _ := core.NewMatch(core.DefaultRules(), 0)
	g, _ := m.Deal(core.DealHands(newRand(5), 0))
	_ = g.NameTrump(g.Forehand(), core.Hearts)
	var text string
	cpu0 := cpuTime()
	for b.Loop() {
		text = c.Hint(context.Background(), g.View(g.ToMove()), hintSeed, "en")
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
	b.Logf("hint (budget %d nodes): %s", c.cfg.HintNodes, text)
}

// A review reads well in every language: every kind of finding renders.
func TestReviewInEveryLanguage(t *testing.T) {
	c := New(Config{Worlds: 4})
	for seed := uint64(1); seed <= 1; seed++ {
		m, _ := core.NewMatch(core.DefaultRules(), 0)
		g, _ := m.Deal(core.DealHands(newRand(seed), 0))
		r := newRand(seed + 100)
		for g.Phase() != core.PhaseOver {
			s := g.ToMove()
			v := g.View(s)
			var mv core.Move
			switch {
			case v.Phase == core.PhaseTrump:
				mv = core.NameTrump(s, core.Suits[r.IntN(4)])
			case len(v.Calls) > 0 && r.IntN(2) == 0:
				mv = core.Announce(s, v.Calls[0])
			default:
				mv = core.Play(s, v.Legal.Nth(r.IntN(v.Legal.Len())))
			}
			if err := g.Apply(mv); err != nil {
				t.Fatal(err)
			}
		}
		for seat := core.Seat(0); seat < 4; seat++ {
			job := reviewJob{seat: seat, game: *g, open: [2]int{9, 9}, gameNo: 1}
			ds := c.judgeDecisions(context.Background(), job)
			for _, lang := range i18n.Languages {
				job.lang = lang
				text := renderReview(job, ds)
				title, _, _ := strings.Cut(i18n.T(lang, "review.title", 1, 0, 0), " ")
				if !strings.HasPrefix(text, title) || strings.Contains(text, "%!") || strings.Contains(text, "review.") {
					t.Fatalf("seed %d seat %d %s:\n%s", seed, seat, lang, text)
				}
			}
		}
	}
}

// Each kind of finding is said, the costliest first and at most three, with the count of
// decisions that matched.
func TestReviewFindings(t *testing.T) {
	ks, qs, as := core.NewCard(core.Spades, core.King), core.QueenSpades, core.NewCard(core.Spades, core.Ace)
	trump := func(x core.Suit, win float64) robot.Choice {
		return robot.Choice{Move: core.NameTrump(0, x), Win: win, Points: -1, Worth: win}
	}
	card := func(c core.Card, win, pts float64) robot.Choice {
		return robot.Choice{Move: core.Play(0, c), Win: win, Points: pts, Worth: win}
	}
	legal := core.SetOf(ks, qs, as)
	ds := []decision{
		{move: core.NameTrump(0, core.Clubs), ok: true, judged: robot.Judgement{Choices: []robot.Choice{trump(core.Hearts, 0.6), trump(core.Clubs, 0.5)}}},
		{trick: 2, move: core.Play(0, ks), view: core.View{Legal: legal}, ok: true,
			judged: robot.Judgement{Choices: []robot.Choice{card(as, 0.7, 25), card(ks, 0.5, 21)}}},
		{trick: 3, move: core.Play(0, ks), view: core.View{Legal: legal}, ok: true,
			judged: robot.Judgement{Choices: []robot.Choice{card(as, 0.7, 25), card(ks, 0.7, 22)}}},
		{trick: 4, move: core.Play(0, as), view: core.View{Legal: legal}, ok: true,
			judged: robot.Judgement{Choices: []robot.Choice{card(as, 0.7, 25), card(ks, 0.7, 22)}}},
		{trick: 1, move: core.Play(0, as), view: core.View{Legal: legal}, ok: true,
			judged: robot.Judgement{Choices: []robot.Choice{card(as, 0.9, 30)}, Call: core.CallMatt, CallStripes: 0.6, CallWorth: 0.6}},
		{trick: 1, move: core.Play(0, as), view: core.View{Legal: legal}, ok: false},
	}
	for _, lang := range i18n.Languages {
		job := reviewJob{seat: 0, gameNo: 3, lang: lang}
		text := renderReview(job, ds)
		lines := strings.Split(text, "\n")
		if len(lines) != 6 || strings.Contains(text, "%!") {
			t.Fatalf("%s:\n%s", lang, text)
		}
		if want := i18n.N(lang, "review.matched", 6, 2); lines[1] != want {
			t.Errorf("%s: %q, want %q", lang, lines[1], want)
		}
		// Trick 2 cost 20%, trump 10%, the call 15% and trick 3 only points: three findings.
		want := []string{
			i18n.T(lang, "review.card", 2, i18n.Card(lang, ks), "4", 20, i18n.Card(lang, as)),
			i18n.T(lang, "review.could_call", "Matt", stripesText(lang, 0.6)),
			i18n.T(lang, "review.trump", i18n.SuitLabel(lang, core.Clubs), 10, i18n.SuitLabel(lang, core.Hearts)),
		}
		for i, w := range want {
			if lines[2+i] != "· "+w {
				t.Errorf("%s finding %d: %q, want %q", lang, i+1, lines[2+i], w)
			}
		}
	}
	if got := renderReview(reviewJob{lang: "en", gameNo: 1}, nil); !strings.Contains(got, i18n.T("en", "review.nothing")) {
		t.Errorf("no decisions: %q", got)
	}
}

// randomGame is a finished game of seeded random legal moves.
func randomGame(t *testing.T, seed uint64) *core.Game {
	t.Helper()
	m, _ := core.NewMatch(core.DefaultRules(), 0)
	g, _ := m.Deal(core.DealHands(newRand(seed), 0))
	r := newRand(seed + 100)
	for g.Phase() != core.PhaseOver {
		v := g.View(g.ToMove())
		var mv core.Move
		if v.Phase == core.PhaseTrump {
			mv = core.NameTrump(v.Seat, core.Suits[r.IntN(4)])
		} else {
			mv = core.Play(v.Seat, v.Legal.Nth(r.IntN(v.Legal.Len())))
		}
		if err := g.Apply(mv); err != nil {
			t.Fatal(err)
		}
	}
	return g
}

// TestCoachIsTheSameOnABusyMachine: a review and a hint are judged within a budget of work, not
// of time, so the same game gives the same words and numbers on a machine whose every core is
// busy with something else; the time caps only bound an overloaded machine, and what they cut
// is logged.
func TestCoachIsTheSameOnABusyMachine(t *testing.T) {
	// Caps far above what the budgets take, even with -race on a loaded machine.
	c := New(Config{Nodes: 60_000, HintNodes: 30_000, Cap: time.Hour, HintCap: time.Hour})
	g := randomGame(t, 4)
	job := reviewJob{seat: 1, game: *g, open: [2]int{9, 9}, gameNo: 1, lang: "en"}
	// A hint in the second trick of a fresh deal.
	m, _ := core.NewMatch(core.DefaultRules(), 0)
	fresh, _ := m.Deal(core.DealHands(newRand(5), 0))
	_ = fresh.NameTrump(fresh.Forehand(), core.Hearts)
	for range 5 {
		_ = fresh.Play(fresh.ToMove(), fresh.LegalCards(fresh.ToMove()).First())
	}
	judge := func() (review, hint string) {
		ctx, cancel := context.WithTimeout(context.Background(), c.cfg.Cap)
		defer cancel()
		return c.reviewText(ctx, job), c.Hint(context.Background(), fresh.View(fresh.ToMove()), hintSeed, "en")
	}
	review, hint := judge()
	t.Logf("alone:\n%s\n%s", review, hint)
	stop := robottest.Busy(runtime.GOMAXPROCS(0))
	busyReview, busyHint := judge()
	stop()
	if busyReview != review || busyHint != hint {
		t.Errorf("on a busy machine:\n%s\n%s\nalone:\n%s\n%s", busyReview, busyHint, review, hint)
	}

	var logged bytes.Buffer
	tight := New(Config{Log: slog.New(slog.NewTextHandler(&logged, nil)),
		Nodes: 1 << 40, Cap: time.Millisecond, HintNodes: 1 << 40, HintCap: time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), tight.cfg.Cap)
	tight.reviewText(ctx, job)
	cancel()
	tight.Hint(context.Background(), fresh.View(fresh.ToMove()), hintSeed, "en")
	for _, want := range []string{"cut a review short", "cut a hint short"} {
		if !strings.Contains(logged.String(), want) {
			t.Errorf("the log does not say %q:\n%s", want, logged.String())
		}
	}
}

// A hint says the game's own chances: wins, and 20–20 draws apart — never a draw counted as half
// a win without saying so.
func TestHintSaysWinsAndDrawsApart(t *testing.T) {
	ks, as := core.NewCard(core.Spades, core.King), core.NewCard(core.Spades, core.Ace)
	play := core.View{Phase: core.PhasePlay, Legal: core.SetOf(ks, as)}
	cards := robot.Judgement{Choices: []robot.Choice{{Move: core.Play(0, as), Win: 0.5, Draw: 0.2, Points: 24},
		{Move: core.Play(0, ks), Win: 0.45, Points: 22}}}
	trump := robot.Judgement{Choices: []robot.Choice{{Move: core.NameTrump(0, core.Hearts), Win: 0.55, Draw: 0.08, Points: -1},
		{Move: core.NameTrump(0, core.Clubs), Win: 0.5, Points: -1}}}
	for _, lang := range i18n.Languages {
		got := renderHint(lang, play, cards)
		want := i18n.T(lang, "hint.card.draws", i18n.Card(lang, as), 50, 20, 24) + " " + i18n.T(lang, "hint.next", i18n.Card(lang, ks), 45)
		if got != want {
			t.Errorf("%s: %q, want %q", lang, got, want)
		}
		if strings.Contains(got, "60") {
			t.Errorf("%s: a draw counted as half a win: %q", lang, got)
		}
		got = renderHint(lang, core.View{Phase: core.PhaseTrump}, trump)
		if want := i18n.T(lang, "hint.trump.draws", i18n.SuitLabel(lang, core.Hearts), 55, 8) + " " +
			i18n.T(lang, "hint.next", i18n.SuitLabel(lang, core.Clubs), 50); got != want {
			t.Errorf("%s: %q, want %q", lang, got, want)
		}
		cards.Choices[0].Draw = 0 // no draws: nothing said of them
		if got, want := renderHint(lang, play, cards), i18n.T(lang, "hint.card", i18n.Card(lang, as), 50, 24); !strings.HasPrefix(got, want) {
			t.Errorf("%s: %q, want %q", lang, got, want)
		}
		cards.Choices[0].Draw = 0.2
	}
}

// A card that cost win chance but no card points (the better card keeps fewer points on average:
// it gives up a trick for a surer 21) is said without a negative "points lost"; a review that
// gives a win chance says a draw counts half in it.
func TestReviewSaysNoNegativeLoss(t *testing.T) {
	ks, as := core.NewCard(core.Spades, core.King), core.NewCard(core.Spades, core.Ace)
	ds := []decision{{trick: 2, move: core.Play(0, ks), view: core.View{Legal: core.SetOf(ks, as)}, ok: true,
		judged: robot.Judgement{Choices: []robot.Choice{
			{Move: core.Play(0, as), Win: 0.6, Draw: 0.1, Points: 23.9, Worth: 0.6},
			{Move: core.Play(0, ks), Win: 0.5, Draw: 0.1, Points: 24, Worth: 0.5}}}}}
	for _, lang := range i18n.Languages {
		text := renderReview(reviewJob{seat: 0, gameNo: 1, lang: lang}, ds)
		lines := strings.Split(text, "\n")
		if want := "· " + i18n.T(lang, "review.card.chance", 2, i18n.Card(lang, ks), 10, i18n.Card(lang, as)); len(lines) < 3 || lines[2] != want {
			t.Errorf("%s:\n%s\nwant the finding %q", lang, text, want)
		}
		if strings.Contains(text, "−") || strings.Contains(text, "-0") {
			t.Errorf("%s: a negative loss:\n%s", lang, text)
		}
		if !strings.HasSuffix(text, i18n.T(lang, "review.how")+" "+i18n.T(lang, "review.draws")) {
			t.Errorf("%s: the review does not say how a draw counts:\n%s", lang, text)
		}
	}
}

// TestGuidedGameNamesTheRaise reads what the guided game says of a call: Konter and Matt raise the
// stake by one stripe, Konter a Matt (which counts as both) by two, in every language.
func TestGuidedGameNamesTheRaise(t *testing.T) {
	hand := core.SetOf(core.MustCards("QS QH QD AH KH 9C")...)
	for _, tc := range []struct {
		calls []core.Call
		raise int
		en    string
	}{
		{[]core.Call{core.CallKonter, core.CallMatt, core.CallKonterAMatt}, 2, "It raises the stake by 2 stripes"},
		{[]core.Call{core.CallKonter}, 1, "It raises the stake by 1 stripe:"},
		{[]core.Call{core.CallMatt}, 1, "It raises the stake by 1 stripe:"},
	} {
		v := core.View{Phase: core.PhasePlay, Trump: core.Hearts, Hand: hand, Legal: hand, Calls: tc.calls, Stake: 1}
		if got := lesson("en", v); !strings.Contains(got, tc.en) {
			t.Errorf("%v: %q\nwant it to say %q", tc.calls, got, tc.en)
		}
		for _, lang := range i18n.Languages {
			c := tc.calls[len(tc.calls)-1]
			want := i18n.N(lang, "learn.call", tc.raise, chatCards(lang, c.Queens()), c.Title(), c.String())
			if got := lesson(lang, v); !strings.Contains(got, want) {
				t.Errorf("%s %v: %q\nwant %q", lang, tc.calls, got, want)
			}
		}
	}
}

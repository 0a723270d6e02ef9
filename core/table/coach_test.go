package table

import (
	"bytes"
	"context"
	"encoding/json"
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

// quickCoach judges few deals, so that reviews and hints are quick (they repeat exactly anyway:
// their budget is work, not time).
func quickCoach(c *Config) { c.Coach = CoachConfig{Worlds: 6} }

// reviews are the review messages delivered to a player.
func (o *outbox) reviews(playerID string) []Message {
	var out []Message
	for _, m := range o.all() {
		if m.Target.Kind == ToPlayer && m.Target.Player.ID == playerID && strings.HasPrefix(m.Text, "🎓 Review") {
			out = append(out, m)
		}
	}
	return out
}

// playGames makes p act until n more games have finished (or the match is over).
func (h *harness) playGames(p Player, n int) {
	h.t.Helper()
	id := h.svc.TableAt(h.place)
	t, _ := h.svc.table(id)
	done := func() int {
		t.mu.Lock()
		defer t.mu.Unlock()
		return len(t.match.History())
	}
	want := done() + n
	for i := 0; i < 500 && done() < want && !h.over(); i++ {
		h.playAsHuman(p, 1)
	}
	synctest.Wait()
}

// A player with the coach on gets a private review after each game, with a public text that
// shows nothing; review sends the same again; with the coach off no review comes.
func TestCoachReviewsEachGamePrivately(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, NewMemStore(), quickCoach)
		defer h.svc.Close()
		me := player(1)
		if r := h.do(me, VerbCoach, "on"); len(r) != 1 || r[0].Text != i18n.T("en", "coach.on") {
			t.Fatalf("coach on: %+v", r)
		}
		if r := h.do(me, VerbCoach); r[0].Text != i18n.T("en", "coach.on") {
			t.Fatalf("coach without a word tells the setting: %+v", r)
		}
		if e := errText(h.do(me, VerbCoach, "maybe")); e != i18n.T("en", "coach.usage") {
			t.Fatalf("coach maybe: %q", e)
		}
		if e := errText(h.do(me, VerbNew, "timer=none")); e != "" {
			t.Fatal(e)
		}
		if e := errText(h.do(me, VerbReview)); e != i18n.T("en", "err.no_game") {
			t.Fatalf("review in the lobby: %q", e)
		}
		h.do(me, VerbDeal)
		if e := errText(h.do(me, VerbReview)); e != i18n.T("en", "review.none") {
			t.Fatalf("review before a game ended: %q", e)
		}
		h.playGames(me, 1)
		got := h.out.reviews(me.ID)
		if len(got) != 1 {
			t.Fatalf("%d reviews after one game", len(got))
		}
		rv := got[0]
		if !rv.Secret || rv.Public == "" || rv.Public != i18n.T("en", "review.private") || rv.Title != "Table in Café Konter" {
			t.Fatalf("the review is not private: %+v", rv)
		}
		if !strings.Contains(rv.Text, "decision") || !strings.Contains(rv.Text, i18n.T("en", "review.how")) {
			t.Errorf("review text:\n%s", rv.Text)
		}
		t.Logf("review as sent:\n%s", rv.Text)
		// On request: the same text, as a reply to the asker alone.
		r := h.do(me, VerbReview, "1")
		if len(r) != 1 || r[0].Text != rv.Text || !r[0].Secret || r[0].Target.Kind != ToActor {
			t.Fatalf("review 1: %+v", r)
		}
		for _, bad := range []string{"0", "2", "x"} {
			if e := errText(h.do(me, VerbReview, bad)); !strings.Contains(e, "no game") {
				t.Errorf("review %s: %q", bad, e)
			}
		}
		h.do(me, VerbCoach, "off")
		h.playGames(me, 1)
		if n := len(h.out.reviews(me.ID)); n != 1 {
			t.Errorf("%d reviews with the coach off, want still 1", n)
		}
	})
}

// When the workers are busy the queue fills, and a review that does not fit is dropped with a
// note to its player; review asks for it again later.
func TestReviewDroppedWhenBusy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hold := make(chan struct{})
		h := newHarness(t, NewMemStore(), func(c *Config) { c.Coach = CoachConfig{Workers: 1, Queue: 2, Worlds: 4, hold: hold} })
		defer h.svc.Close()
		ps := []Player{player(1), player(2), player(3), player(4)}
		for _, p := range ps {
			h.do(p, VerbCoach, "on")
		}
		fourHumans(t, h, "timer=none")
		for i := 0; i < 200; i++ {
			synctest.Wait()
			p, m := h.toMove(ps)
			b, ok := firstButton(m, VerbTrump, true)
			if !ok {
				b, _ = firstButton(m, VerbPlay, true)
			}
			h.press(p, b)
			if tb, _ := h.svc.table(h.svc.TableAt(h.place)); func() bool {
				tb.mu.Lock()
				defer tb.mu.Unlock()
				return len(tb.match.History()) > 0
			}() {
				break
			}
		}
		synctest.Wait()
		dropped := 0
		for _, m := range h.out.all() {
			if m.Target.Kind == ToPlayer && m.Text == i18n.T("en", "review.dropped", 1) {
				dropped++
			}
		}
		if dropped != 2 {
			t.Fatalf("%d reviews dropped, want 2 (two queued)", dropped)
		}
		close(hold)
		synctest.Wait()
		sent := 0
		for _, p := range ps {
			sent += len(h.out.reviews(p.ID))
		}
		if sent != 2 {
			t.Errorf("%d reviews sent once the coach was free, want 2", sent)
		}
	})
}

// Hints: only at a table with hints on, only on one's own turn, privately; the lobby says so,
// and the kept match is marked so that it counts for no rating.
func TestHintsAreAnOption(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, NewMemStore(), quickCoach)
		defer h.svc.Close()
		me := player(1)
		h.do(me, VerbNew, "timer=none")
		h.do(me, VerbDeal)
		synctest.Wait()
		if e := errText(h.do(me, VerbHint)); e != i18n.T("en", "hint.off") {
			t.Fatalf("hint without the option: %q", e)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		store := NewMemStore()
		h := newHarness(t, store, quickCoach, withKV)
		defer h.svc.Close()
		me := player(1)
		h.do(me, VerbNew, "timer=none", "hints=on")
		lobby, _ := h.out.latest(KindLobby, "")
		if !strings.Contains(lobby.Text, "hints on") {
			t.Errorf("the lobby does not show the hints:\n%s", lobby.Text)
		}
		h.do(me, VerbDeal)
		hinted := 0
		for i := 0; i < 3000 && !h.over(); i++ {
			synctest.Wait()
			if h.over() {
				break
			}
			who, _, _ := h.svc.Turn(h.svc.TableAt(h.place))
			if hinted >= 4 { // a few hints are enough; the match plays on without
				if who == me.ID {
					h.playAsHuman(me, 1)
				}
				continue
			}
			r := h.do(me, VerbHint)
			if who != me.ID {
				if e := errText(r); e != i18n.T("en", "hint.not_turn") && e != "" {
					t.Fatalf("hint out of turn: %q", e)
				}
				continue
			}
			if len(r) != 1 || r[0].Kind != KindReply || !r[0].Secret || r[0].Public == "" || !strings.HasPrefix(r[0].Text, "🎓") {
				t.Fatalf("hint: %+v", r)
			}
			hinted++
			h.playAsHuman(me, 1)
		}
		if !h.over() || hinted == 0 {
			t.Fatalf("match over %v after %d hints", h.over(), hinted)
		}
		var rec StoredMatch
		var kept []byte
		store.Records(func(key string, data []byte) error { kept = data; return json.Unmarshal(data, &rec) })
		if !rec.Hints {
			t.Errorf("the kept match is not marked: %+v", rec)
		}
		// The match's record file (history, export) says so too, and still replays.
		recs, err := Export(kept)
		if err != nil {
			t.Fatal(err)
		}
		file := mustJSON(recs[StoredKey(rec.Table, rec.Match)+"/match"])
		var marked struct{ Hints bool }
		if json.Unmarshal(file, &marked); !marked.Hints {
			t.Errorf("the match record does not say it had hints: %s", file)
		}
		if _, err := core.Replay(file); err != nil {
			t.Errorf("the marked record does not replay: %v", err)
		}
		pl := h.svc.PlaceLeague(h.place.Key()).Players[me.ID]
		if pl == nil || pl.Games == 0 || pl.Matches != 0 {
			t.Errorf("the league after a hinted match: %+v", pl)
		}
	})
}

// learn opens a guided game in a private chat only; at each of the learner's turns a private
// lesson says what may be played and why; after each game another says how the stripes moved.
func TestLearnIsAGuidedGame(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, NewMemStore(), quickCoach)
		defer h.svc.Close()
		me := player(1)
		if e := errText(h.do(me, VerbLearn)); e != i18n.T("en", "learn.where") {
			t.Fatalf("learn in a group: %q", e)
		}
		dm := Place{Platform: "test", Chat: "dm-p1"}
		h.place = dm
		learn := func(args ...string) []Message {
			return h.svc.Handle(context.Background(), Command{Place: dm, Actor: me, Verb: VerbLearn, Private: true, Args: args})
		}
		if e := errText(learn("level=grandmaster")); !strings.Contains(e, "level") {
			t.Fatalf("learn with a bad option: %q", e)
		}
		r := learn()
		if len(r) != 1 || !strings.HasPrefix(r[0].Text, "🎓 A guided game") {
			t.Fatalf("learn: %+v", r)
		}
		if e := errText(learn()); e != i18n.T("en", "err.table_exists") {
			t.Fatalf("a second learn: %q", e)
		}
		lessons := func() []Message {
			var out []Message
			for _, m := range h.out.all() {
				if m.Target.Kind == ToPlayer && m.Kind == KindNotice && m.Secret {
					out = append(out, m)
				}
			}
			return out
		}
		h.playGames(me, 1)
		ls := lessons()
		if len(ls) < 3 {
			t.Fatalf("%d lessons in a game", len(ls))
		}
		sawStripes := false
		for _, m := range ls {
			if m.Public != i18n.T("en", "learn.private") || m.Target.Player.ID != me.ID {
				t.Errorf("lesson not private: %+v", m)
			}
			if strings.Contains(m.Text, "Open stripes now") {
				sawStripes = true
			}
		}
		if !sawStripes {
			t.Error("no lesson on the stripes after the game")
		}
		// The table is the learner's: its texts speak to them, and the match is not rated.
		tb, _ := h.svc.table(h.svc.TableAt(dm))
		tb.mu.Lock()
		if h.svc.reader(tb) != 0 || !tb.hintsOn() || tb.opts.Level != "easy" {
			t.Errorf("learn table: reader %v hints %v level %q", h.svc.reader(tb), tb.hintsOn(), tb.opts.Level)
		}
		tb.mu.Unlock()
		if r := h.svc.Handle(context.Background(), Command{Place: dm, Actor: me, Verb: VerbHint, Private: true}); len(r) != 1 {
			t.Errorf("hint at a guided game: %+v", r)
		}
	})
}

// Every lesson renders in every language, for every kind of turn.
func TestLessonsInEveryLanguage(t *testing.T) {
	r := newTestGames(t)
	for _, lang := range i18n.Languages {
		for _, v := range r {
			text := learnText(lang, v)
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
	svc := New(Config{Store: NewMemStore()})
	defer svc.Close()
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
		ctx, cancel := context.WithTimeout(context.Background(), svc.coach.cfg.Cap)
		text = svc.reviewText(ctx, job)
		cancel()
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(len(reviewDecisions(*g, 1, job.open))), "decisions")
	b.Logf("review of seat 2 (budget %d nodes):\n%s", svc.coach.cfg.Nodes, text)
}

// BenchmarkHint is a hint at the first card of a fresh deal, the costliest one, at the default
// budget: what a hint costs one core while its player waits.
func BenchmarkHint(b *testing.B) {
	svc := New(Config{Store: NewMemStore()})
	defer svc.Close()
	m, _ := core.NewMatch(core.DefaultRules(), 0)
	g, _ := m.Deal(core.DealHands(newRand(5), 0))
	_ = g.NameTrump(g.Forehand(), core.Hearts)
	tb := &tbl{st: &state{ID: "t1", Secret: make([]byte, secretSize)}}
	var text string
	cpu0 := cpuTime()
	for b.Loop() {
		text = svc.hintText(tb, g.View(g.ToMove()), "en")
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
	b.Logf("hint (budget %d nodes): %s", svc.coach.cfg.HintNodes, text)
}

// boardSeer records the boards its views show.
type boardSeer struct {
	randomDecider
	seen chan [2]int
}

func (b *boardSeer) Decide(ctx context.Context, v core.View) core.Move {
	select {
	case b.seen <- v.Open:
	default:
	}
	return b.randomDecider.Decide(ctx, v)
}

// Computer players at a table see the board, so that they play for the match.
func TestComputersSeeTheBoard(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		seen := make(chan [2]int, 64)
		h := newHarness(t, NewMemStore(), func(c *Config) {
			c.Robots = func(level string, seed uint64) Decider {
				return &boardSeer{randomDecider: randomDecider{rng: newRand(seed)}, seen: seen}
			}
		})
		defer h.svc.Close()
		me := player(1)
		h.do(me, VerbNew, "timer=none", "stripes=7")
		h.do(me, VerbDeal)
		h.playGames(me, 1)
		close(seen)
		n := 0
		for open := range seen {
			if open == [2]int{} || n == 0 && open != [2]int{7, 7} {
				t.Fatalf("decision %d: a computer saw the board %v", n, open)
			}
			n++
		}
		if n == 0 {
			t.Fatal("no computer decided")
		}
	})
}

// A review reads well in every language: every kind of finding renders.
func TestReviewInEveryLanguage(t *testing.T) {
	svc := New(Config{Store: NewMemStore(), Coach: CoachConfig{Worlds: 4}})
	defer svc.Close()
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
			ds := svc.judgeDecisions(context.Background(), job)
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
			i18n.T(lang, "review.card", 2, ks.Chat(), "4", 20, as.Chat()),
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
	svc := New(Config{Store: NewMemStore(), Coach: CoachConfig{Nodes: 60_000, HintNodes: 30_000, Cap: time.Hour, HintCap: time.Hour}})
	defer svc.Close()
	g := randomGame(t, 4)
	job := reviewJob{seat: 1, game: *g, open: [2]int{9, 9}, gameNo: 1, lang: "en"}
	// A hint in the second trick of a fresh deal.
	m, _ := core.NewMatch(core.DefaultRules(), 0)
	fresh, _ := m.Deal(core.DealHands(newRand(5), 0))
	_ = fresh.NameTrump(fresh.Forehand(), core.Hearts)
	for range 5 {
		_ = fresh.Play(fresh.ToMove(), fresh.LegalCards(fresh.ToMove()).First())
	}
	tb := &tbl{st: &state{ID: "t1", Secret: make([]byte, secretSize)}}
	judge := func() (review, hint string) {
		ctx, cancel := context.WithTimeout(context.Background(), svc.coach.cfg.Cap)
		defer cancel()
		return svc.reviewText(ctx, job), svc.hintText(tb, fresh.View(fresh.ToMove()), "en")
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
	tight := New(Config{Store: NewMemStore(), Log: slog.New(slog.NewTextHandler(&logged, nil)),
		Coach: CoachConfig{Nodes: 1 << 40, Cap: time.Millisecond, HintNodes: 1 << 40, HintCap: time.Millisecond}})
	defer tight.Close()
	ctx, cancel := context.WithTimeout(context.Background(), tight.coach.cfg.Cap)
	tight.reviewText(ctx, job)
	cancel()
	tight.hintText(tb, fresh.View(fresh.ToMove()), "en")
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
		want := i18n.T(lang, "hint.card.draws", as.Chat(), 50, 20, 24) + " " + i18n.T(lang, "hint.next", ks.Chat(), 45)
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
		if got, want := renderHint(lang, play, cards), i18n.T(lang, "hint.card", as.Chat(), 50, 24); !strings.HasPrefix(got, want) {
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
		if want := "· " + i18n.T(lang, "review.card.chance", 2, ks.Chat(), 10, as.Chat()); len(lines) < 3 || lines[2] != want {
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

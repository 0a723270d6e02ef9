package table

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/coach"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// quickCoach judges few deals, so that reviews and hints are quick (they repeat exactly anyway:
// their budget is work, not time).
func quickCoach(c *Config) { c.Coach = coach.New(coach.Config{Worlds: 6}) }

// reviews are the review messages delivered to a player.
func (o *outbox) reviews(playerID string) []api.Message {
	var out []api.Message
	for _, m := range o.all() {
		if m.Target.Kind == api.ToPlayer && m.Target.Player.ID == playerID && strings.HasPrefix(m.Text, "🎓 Review") {
			out = append(out, m)
		}
	}
	return out
}

// playGames makes p act until n more games have finished (or the match is over).
func (h *harness) playGames(p api.Player, n int) {
	h.t.Helper()
	id := h.svc.TableAt(h.place)
	t, _ := h.svc.index.get(id)
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
		h := newHarness(t, mem.New(), quickCoach)
		defer h.svc.Close()
		me := player(1)
		if r := h.do(me, api.VerbCoach, "on"); len(r) != 1 || r[0].Text != i18n.T("en", "coach.on") {
			t.Fatalf("coach on: %+v", r)
		}
		if r := h.do(me, api.VerbCoach); r[0].Text != i18n.T("en", "coach.on") {
			t.Fatalf("coach without a word tells the setting: %+v", r)
		}
		if e := errText(h.do(me, api.VerbCoach, "maybe")); e != i18n.T("en", "coach.usage") {
			t.Fatalf("coach maybe: %q", e)
		}
		if e := errText(h.do(me, api.VerbNew, "timer=none")); e != "" {
			t.Fatal(e)
		}
		if e := errText(h.do(me, api.VerbReview)); e != i18n.T("en", "err.no_game") {
			t.Fatalf("review in the lobby: %q", e)
		}
		h.do(me, api.VerbDeal)
		if e := errText(h.do(me, api.VerbReview)); e != i18n.T("en", "review.none") {
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
		r := h.do(me, api.VerbReview, "1")
		if len(r) != 1 || r[0].Text != rv.Text || !r[0].Secret || r[0].Target.Kind != api.ToActor {
			t.Fatalf("review 1: %+v", r)
		}
		for _, bad := range []string{"0", "2", "x"} {
			if e := errText(h.do(me, api.VerbReview, bad)); !strings.Contains(e, "no game") {
				t.Errorf("review %s: %q", bad, e)
			}
		}
		h.do(me, api.VerbCoach, "off")
		h.playGames(me, 1)
		if n := len(h.out.reviews(me.ID)); n != 1 {
			t.Errorf("%d reviews with the coach off, want still 1", n)
		}
	})
}

// When the coach is busy its queue fills, and a review that does not fit is dropped with a
// note to its player; the queued ones reach their players once the coach is free.
func TestReviewDroppedWhenBusy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		busy := &busyCoach{Coach: coach.New(coach.Config{Worlds: 4}), room: 2}
		h := newHarness(t, mem.New(), func(c *Config) { c.Coach = busy })
		defer h.svc.Close()
		ps := []api.Player{player(1), player(2), player(3), player(4)}
		for _, p := range ps {
			h.do(p, api.VerbCoach, "on")
		}
		fourHumans(t, h, "timer=none")
		for i := 0; i < 200; i++ {
			synctest.Wait()
			p, m := h.toMove(ps)
			b, ok := firstButton(m, api.VerbTrump, true)
			if !ok {
				b, _ = firstButton(m, api.VerbPlay, true)
			}
			h.press(p, b)
			if tb, _ := h.svc.index.get(h.svc.TableAt(h.place)); func() bool {
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
			if m.Target.Kind == api.ToPlayer && m.Text == i18n.T("en", "review.dropped", 1) {
				dropped++
			}
		}
		if dropped != 2 {
			t.Fatalf("%d reviews dropped, want 2 (two queued)", dropped)
		}
		busy.free()
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
	ctx := t.Context()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mem.New(), quickCoach)
		defer h.svc.Close()
		me := player(1)
		h.do(me, api.VerbNew, "timer=none")
		h.do(me, api.VerbDeal)
		synctest.Wait()
		if e := errText(h.do(me, api.VerbHint)); e != i18n.T("en", "hint.off") {
			t.Fatalf("hint without the option: %q", e)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		store := mem.New()
		h := newHarness(t, store, quickCoach, withKV)
		defer h.svc.Close()
		me := player(1)
		h.do(me, api.VerbNew, "timer=none", "hints=on")
		lobby, _ := h.out.latest(api.KindLobby, "")
		if !strings.Contains(lobby.Text, "hints on") {
			t.Errorf("the lobby does not show the hints:\n%s", lobby.Text)
		}
		h.do(me, api.VerbDeal)
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
			r := h.do(me, api.VerbHint)
			if who != me.ID {
				if e := errText(r); e != i18n.T("en", "hint.not_turn") && e != "" {
					t.Fatalf("hint out of turn: %q", e)
				}
				continue
			}
			if len(r) != 1 || r[0].Kind != api.KindReply || !r[0].Secret || r[0].Public == "" || !strings.HasPrefix(r[0].Text, "🎓") {
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
		store.Records(ctx, func(key string, data []byte) error { kept = data; return json.Unmarshal(data, &rec) })
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
		pl := h.placeLeague(ctx).Players[me.ID]
		if pl == nil || pl.Games == 0 || pl.Matches != 0 {
			t.Errorf("the league after a hinted match: %+v", pl)
		}
	})
}

// learn opens a guided game in a private chat only; at each of the learner's turns a private
// lesson says what may be played and why; after each game another says how the stripes moved.
func TestLearnIsAGuidedGame(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mem.New(), quickCoach)
		defer h.svc.Close()
		me := player(1)
		if e := errText(h.do(me, api.VerbLearn)); e != i18n.T("en", "learn.where") {
			t.Fatalf("learn in a group: %q", e)
		}
		dm := api.Place{Platform: "test", Chat: "dm-p1"}
		h.place = dm
		learn := func(args ...string) []api.Message {
			return msgsOf(h.svc.Handle(context.Background(), api.Command{Place: dm, Actor: me, Verb: api.VerbLearn, Private: true, Args: args}))
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
		lessons := func() []api.Message {
			var out []api.Message
			for _, m := range h.out.all() {
				if m.Target.Kind == api.ToPlayer && m.Kind == api.KindNotice && m.Secret {
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
		tb, _ := h.svc.index.get(h.svc.TableAt(dm))
		tb.mu.Lock()
		if h.svc.view.Reader(h.svc.pub.sight(tb)) != 0 || !tb.hintsOn() || tb.opts.Level != "easy" {
			t.Errorf("learn table: reader %v hints %v level %q", h.svc.view.Reader(h.svc.pub.sight(tb)), tb.hintsOn(), tb.opts.Level)
		}
		tb.mu.Unlock()
		if r, _ := h.svc.Handle(context.Background(), api.Command{Place: dm, Actor: me, Verb: api.VerbHint, Private: true}); len(r) != 1 {
			t.Errorf("hint at a guided game: %+v", r)
		}
	})
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 3)) }

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
		h := newHarness(t, mem.New(), func(c *Config) {
			c.Robots = func(level string, seed uint64) Decider {
				return &boardSeer{randomDecider: randomDecider{rng: newRand(seed)}, seen: seen}
			}
		})
		defer h.svc.Close()
		me := player(1)
		h.do(me, api.VerbNew, "timer=none", "stripes=7")
		h.do(me, api.VerbDeal)
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

// busyCoach is a coach whose workers are busy: it holds up to room reviews and refuses the
// rest until free passes the held ones to the real coach.
type busyCoach struct {
	*coach.Coach
	mu    sync.Mutex
	room  int
	held  []func()
	freed bool
}

func (b *busyCoach) Review(key string, g core.Game, seat core.Seat, open [2]int, n int, lang string, done func(string)) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	ask := func() { b.Coach.Review(key, g, seat, open, n, lang, done) }
	switch {
	case b.freed:
		return b.Coach.Review(key, g, seat, open, n, lang, done)
	case len(b.held) == b.room:
		return false
	}
	b.held = append(b.held, ask)
	return true
}

func (b *busyCoach) free() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.freed = true
	for _, ask := range b.held {
		ask()
	}
}

// The table service runs computer players and the coach behind interfaces: it does not import
// the robot package (go list -deps).
func TestTheServiceDoesNotImportTheRobots(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go tool to list the package's dependencies: %v", err)
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if i := slices.IndexFunc(deps, func(p string) bool { return strings.Contains(p, "/core/robot") || strings.HasSuffix(p, "/core/coach") }); i >= 0 {
		t.Errorf("core/table depends on %s", deps[i])
	}
}

// Without a coach the service gives no hints, reviews or lessons and says so; a guided game
// still deals.
func TestWithoutACoach(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mem.New())
		defer h.svc.Close()
		me := player(1)
		none := i18n.T("en", "coach.none")
		if e := errText(h.do(me, api.VerbCoach, "on")); e != none {
			t.Errorf("coach on: %q", e)
		}
		h.do(me, api.VerbNew, "timer=none", "hints=on")
		h.do(me, api.VerbDeal)
		synctest.Wait()
		for _, v := range []api.Verb{api.VerbHint, api.VerbReview} {
			if e := errText(h.do(me, v)); e != none {
				t.Errorf("%s: %q", v, e)
			}
		}
		dm := api.Place{Platform: "test", Chat: "dm-p1"}
		r, _ := h.svc.Handle(context.Background(), api.Command{Place: dm, Actor: me, Verb: api.VerbLearn, Private: true})
		if len(r) != 1 || r[0].Kind == api.KindError {
			t.Fatalf("learn: %+v", r)
		}
		synctest.Wait()
		for _, m := range h.out.all() {
			if m.Target.Kind == api.ToPlayer && m.Public == i18n.T("en", "learn.private") {
				t.Errorf("a lesson without a coach: %q", m.Text)
			}
		}
	})
}

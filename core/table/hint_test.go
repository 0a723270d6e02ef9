package table

import (
	"context"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/coach"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// slowCoach is a coach whose hints take until released (or until their context ends): a search
// as long as a busy machine makes it.
type slowCoach struct {
	*coach.Coach
	asked   chan context.Context // each hint's context, as it starts
	release chan struct{}
}

func (c *slowCoach) Hint(ctx context.Context, v core.View, seed uint64, lang string) string {
	c.asked <- ctx
	select {
	case <-c.release:
	case <-ctx.Done():
	}
	return "🎓 a hint"
}

// waitFor is how long a test waits for what must not wait for a hint being judged.
const waitFor = 2 * time.Second

// within runs f and fails the test if it takes longer than waitFor; it gives f's answer, or nil.
func within(t *testing.T, what string, f func() []api.Message) []api.Message {
	t.Helper()
	got := make(chan []api.Message, 1)
	go func() { got <- f() }()
	select {
	case r := <-got:
		return r
	case <-time.After(waitFor):
		t.Errorf("%s waited %v for a hint being judged", what, waitFor)
		return nil
	}
}

// A hint is judged off the table's lock, on the asker's context: meanwhile the others' commands
// and the asker's own move answer, ending the asker's command ends the search, and a hint whose
// table moved on while it was judged is not given.
func TestHintIsJudgedOffTheTable(t *testing.T) {
	setup := func(t *testing.T) (*harness, *slowCoach, []api.Player, api.Player) {
		c := &slowCoach{Coach: coach.New(coach.Config{}), asked: make(chan context.Context, 4), release: make(chan struct{})}
		h := newHarness(t, mem.New(), func(cfg *Config) { cfg.Coach, cfg.Robots = c, nil })
		t.Cleanup(h.svc.Close)
		ps := fourHumans(t, h, "timer=none", "hints=on")
		mover, _ := h.toMove(ps)
		return h, c, ps, mover
	}
	hintOf := func(h *harness, ctx context.Context, p api.Player) chan []api.Message {
		answer := make(chan []api.Message, 1)
		go func() { answer <- msgsOf(h.svc.Handle(ctx, api.Command{Place: h.place, Actor: p, Verb: api.VerbHint})) }()
		return answer
	}
	t.Run("the table moves on meanwhile", func(t *testing.T) {
		h, c, ps, mover := setup(t)
		answer := hintOf(h, context.Background(), mover)
		<-c.asked
		other := ps[0]
		if other == mover {
			other = ps[1]
		}
		if r := within(t, "another player's board", func() []api.Message { return h.do(other, api.VerbBoard) }); r != nil && errText(r) != "" {
			t.Errorf("board: %s", errText(r))
		}
		_, m := h.toMove(ps)
		b, _ := firstButton(m, api.VerbTrump, true)
		if r := within(t, "the asker's own move", func() []api.Message { return h.press(mover, b) }); r != nil && errText(r) != "" {
			t.Errorf("trump: %s", errText(r))
		}
		close(c.release)
		if got := errText(<-answer); got != i18n.T("en", "hint.moved") {
			t.Errorf("the hint for a turn that is over: %q, want %q", got, i18n.T("en", "hint.moved"))
		}
	})
	t.Run("the asker's command ends", func(t *testing.T) {
		h, c, _, mover := setup(t)
		ctx, cancel := context.WithCancel(context.Background())
		answer := hintOf(h, ctx, mover)
		hintCtx := <-c.asked
		cancel()
		select {
		case <-hintCtx.Done():
		case <-time.After(waitFor):
			t.Errorf("the hint's search went on %v after its command ended", waitFor)
			close(c.release)
		}
		<-answer
	})
	t.Run("a hint for the turn", func(t *testing.T) {
		h, c, _, mover := setup(t)
		answer := hintOf(h, context.Background(), mover)
		<-c.asked
		close(c.release)
		if r := <-answer; len(r) != 1 || r[0].Text != "🎓 a hint" || !r[0].Secret || r[0].Table == "" {
			t.Errorf("hint: %+v", r)
		}
	})
}

package table

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// recorder is an Observer that keeps what it hears.
type recorder struct {
	mu        sync.Mutex
	commands  []string // "verb outcome"
	commits   int
	failed    int
	decisions int
}

func (r *recorder) Command(v api.Verb, outcome string, _ time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.commands = append(r.commands, string(v)+" "+outcome)
}

func (r *recorder) Commit(_ time.Duration, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.commits++
	if err != nil {
		r.failed++
	}
}

func (r *recorder) Decision(level string, _ time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.decisions++
}

// The service tells its observer of every command with its outcome, every commit and every
// computer decision; Count tells the tables by status.
func TestObserverHearsEverything(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		h := newHarness(t, mem.New(), func(c *Config) { c.Observe = rec })
		defer h.svc.Close()
		me := player(1)
		h.do(me, api.VerbNew, "timer=none")
		h.do(me, api.VerbPlay, "QS") // no game yet: refused
		h.do(me, api.VerbDeal)
		synctest.Wait()
		rec.mu.Lock()
		defer rec.mu.Unlock()
		want := []string{"new ok", "play refused", "deal ok"}
		if len(rec.commands) != 3 || rec.commands[0] != want[0] || rec.commands[1] != want[1] || rec.commands[2] != want[2] {
			t.Errorf("commands %q, want %q", rec.commands, want)
		}
		if rec.commits < 2 || rec.failed != 0 {
			t.Errorf("commits %d, failed %d", rec.commits, rec.failed)
		}
		if n := h.svc.Count()[api.StatusPlaying]; n != 1 {
			t.Errorf("Count: %v", h.svc.Count())
		}
		if rec.decisions == 0 {
			if hand, _ := h.out.latest(api.KindHand, me.ID); len(legalButtons(hand)) == 0 {
				t.Error("no computer decided, yet the human is not to move")
			}
		}
	})
}

func legalButtons(m api.Message) []api.Button {
	var out []api.Button
	for _, row := range m.Buttons {
		for _, b := range row {
			if b.Legal {
				out = append(out, b)
			}
		}
	}
	return out
}

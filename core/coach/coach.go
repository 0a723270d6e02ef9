// Package coach judges players' decisions for them (issue 16): a hint for one's own turn, a
// private review of each finished game, and the lessons of a guided game. Each judges a decision
// from what its player could see then, with the strong computer player's search over the deals
// that fit that view (robot.Judge); never with the other hands. The table service is given a
// Coach as it is given computer players (table.Config.Coach): it shows the coach a seat's View,
// or a game that has ended, and says what the coach wrote.
package coach

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/robot"
)

// Config sizes the coach. Reviews run off the command path on a few workers with a budget of
// work per player and game; when the queue is full a review is refused. Budgets are solver
// nodes, not time, so that a review or a hint of the same game says the same on any machine,
// however busy; the caps in time only keep an overloaded machine from waiting for ever, and
// every review or hint they cut is logged.
type Config struct {
	Workers int // reviews judged at once; default 1
	Queue   int // reviews waiting; default 8
	// Nodes is one player's review of one game, in solver nodes shared by its decisions;
	// default 20,000,000 (about 2 s of one core). Cap bounds its time; default 10 s.
	Nodes  uint64
	Cap    time.Duration
	Worlds int // deals judged per decision at most; default robot.DefaultJudgeWorlds
	// HintNodes is one hint, judged while its player waits; default robot.DefaultJudgeNodes
	// (3,000,000: about 300 ms). HintCap bounds its time; default 2 s.
	HintNodes uint64
	HintCap   time.Duration
	Log       *slog.Logger // hears what the caps cut; default: nothing

	// hold, when a test sets it, keeps the workers from taking any review until it is closed:
	// the queue then fills as on a busy machine.
	hold chan struct{}
}

func (c Config) withDefaults() Config {
	if c.Workers <= 0 {
		c.Workers = 1
	}
	if c.Queue <= 0 {
		c.Queue = 8
	}
	if c.Nodes == 0 {
		c.Nodes = 20_000_000
	}
	if c.Cap <= 0 {
		c.Cap = 10 * time.Second
	}
	if c.HintNodes == 0 {
		c.HintNodes = robot.DefaultJudgeNodes
	}
	if c.HintCap <= 0 {
		c.HintCap = 2 * time.Second
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	return c
}

// maxReviews is how many finished reviews are kept to send again on request.
const maxReviews = 256

// Coach judges hints on the asker's goroutine and reviews on its workers, which start with the
// first review asked for and stop at Close.
type Coach struct {
	cfg Config

	mu     sync.Mutex
	jobs   chan reviewJob // nil until the workers start
	cancel context.CancelFunc
	closed bool
	wg     sync.WaitGroup
	done   map[string]string // review key → its text
	order  []string          // keys, oldest first
	busy   map[string]bool   // keys queued or being judged
}

// New makes a coach.
func New(cfg Config) *Coach {
	return &Coach{cfg: cfg.withDefaults(), done: map[string]string{}, busy: map[string]bool{}}
}

// Close stops the workers and waits for them: a review being judged is dropped, its done never
// called. A closed coach takes no more reviews.
func (c *Coach) Close() {
	c.mu.Lock()
	c.closed = true
	if c.cancel != nil {
		c.cancel()
	}
	c.mu.Unlock()
	c.wg.Wait()
}

// start starts the workers (c.mu held).
func (c *Coach) start() {
	ctx, cancel := context.WithCancel(context.Background())
	c.jobs, c.cancel = make(chan reviewJob, c.cfg.Queue), cancel
	for range c.cfg.Workers {
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			if c.cfg.hold != nil {
				select {
				case <-c.cfg.hold:
				case <-ctx.Done():
					return
				}
			}
			for {
				select {
				case <-ctx.Done():
					return
				case j := <-c.jobs:
					c.judge(ctx, j)
				}
			}
		}()
	}
}

// Review asks for the review of seat's decisions in game g, the n-th of its match, begun with
// the stripes open: it is judged on a worker, kept under key, and done gets its text in lang
// there. A review asked for again while it is queued or judged is judged once (only the first
// done hears of it). False when the queue has no room, or the coach is closed.
func (c *Coach) Review(key string, g core.Game, seat core.Seat, open [2]int, n int, lang string, done func(text string)) bool {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return false
	}
	if c.jobs == nil {
		c.start()
	}
	if c.busy[key] {
		c.mu.Unlock()
		return true
	}
	c.busy[key] = true
	jobs := c.jobs
	c.mu.Unlock()
	select {
	case jobs <- reviewJob{key: key, game: g, seat: seat, open: open, gameNo: n, lang: lang, done: done}:
		return true
	default:
		c.mu.Lock()
		delete(c.busy, key)
		c.mu.Unlock()
		return false
	}
}

// Reviewed gives the text of a review made under key, while it is kept.
func (c *Coach) Reviewed(key string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	text, ok := c.done[key]
	return text, ok
}

// judge judges one review within the budget and the cap, keeps it and hands it on.
func (c *Coach) judge(ctx context.Context, j reviewJob) {
	rctx, cancel := context.WithTimeout(ctx, c.cfg.Cap)
	text := c.reviewText(rctx, j)
	cancel()
	if ctx.Err() != nil {
		return
	}
	c.keep(j.key, text)
	j.done(text)
}

func (c *Coach) keep(key, text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.busy, key)
	if _, ok := c.done[key]; !ok {
		c.order = append(c.order, key)
	}
	c.done[key] = text
	for len(c.order) > maxReviews {
		delete(c.done, c.order[0])
		c.order = c.order[1:]
	}
}

// Hint is the strong choice for the view with a one-line reason, in lang: judged on ctx (the
// asker's) within the coach's hint budget and cap; seed makes it repeat.
func (c *Coach) Hint(ctx context.Context, v core.View, seed uint64, lang string) string {
	if v.Phase == core.PhasePlay && v.Legal.Len() == 1 && len(v.Calls) == 0 {
		return i18n.T(lang, "hint.only", i18n.Card(lang, v.Legal.First()))
	}
	cfg := c.cfg
	j, ok := robot.Judge(ctx, v, seed, robot.Effort{Nodes: cfg.HintNodes, Worlds: cfg.Worlds, Cap: cfg.HintCap})
	if j.Cut && ctx.Err() == nil {
		cfg.Log.Warn("the coach's time cap cut a hint short: the machine is too busy for its budget, and the hint's numbers come from fewer deals",
			"cap", cfg.HintCap, "deals", j.Worlds, "nodes", j.Nodes, "budget", cfg.HintNodes)
	}
	if !ok {
		return i18n.T(lang, "hint.none")
	}
	return renderHint(lang, v, j)
}

package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/term"
)

// progressEvery is how often a long command says how far it is, as a line on stderr; a bar on a
// terminal is redrawn every second. 0 says it at every unit done (for tests).
var progressEvery = 5 * time.Second

// progress tells how far a long command (duel, selfplay) is, on stderr: done of total, the time
// taken and an estimate of what is left. On a terminal it is one line redrawn as a bar; piped, a
// line every progressEvery; with -q, nothing.
type progress struct {
	w      io.Writer
	name   string // the command: "duel"
	unit   string // what is counted: "deals", "matches"
	total  int
	bar    bool
	each   bool // a line at every unit done
	mu     sync.Mutex
	done   atomic.Int64
	start  time.Time
	stop   chan struct{}
	wg     sync.WaitGroup
	closed sync.Once
}

// startProgress begins telling how far name is through total units, on w (nothing if quiet).
func startProgress(w io.Writer, quiet bool, name, unit string, total int) *progress {
	p := &progress{w: w, name: name, unit: unit, total: total, start: time.Now(), stop: make(chan struct{})}
	if quiet {
		return p
	}
	p.bar = isTerminal(w)
	every := progressEvery
	switch {
	case p.bar:
		every = time.Second
	case every <= 0:
		p.each = true
		return p
	}
	p.wg.Go(func() {
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-tick.C:
				p.say()
			}
		}
	})
	return p
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// add counts one more unit done.
func (p *progress) add() {
	p.done.Add(1)
	if p.each {
		p.say()
	}
}

// finish stops the reports; a bar is cleared, so that what the command prints next stands alone.
func (p *progress) finish() {
	p.closed.Do(func() {
		close(p.stop)
		p.wg.Wait()
		if p.bar {
			fmt.Fprint(p.w, "\r\033[K")
		}
	})
}

func (p *progress) say() {
	p.mu.Lock()
	defer p.mu.Unlock()
	done := int(p.done.Load())
	elapsed := time.Since(p.start).Round(time.Second)
	left := "estimating"
	if done > 0 {
		rest := time.Duration(float64(time.Since(p.start)) * float64(p.total-done) / float64(done))
		left = "about " + rest.Round(time.Second).String() + " left"
	}
	line := fmt.Sprintf("%s: %d of %d %s, %s, %s", p.name, done, p.total, p.unit, elapsed, left)
	if !p.bar {
		fmt.Fprintln(p.w, line)
		return
	}
	const width = 30
	filled := width * done / max(p.total, 1)
	fmt.Fprintf(p.w, "\r\033[K[%s%s] %3d%% %s", strings.Repeat("#", filled), strings.Repeat(".", width-filled), 100*done/max(p.total, 1), line)
}

package main

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// fakeChat is a platform whose first starts fail with err.
type fakeChat struct {
	name     string
	failures int
	err      error

	mu      sync.Mutex
	starts  []time.Time
	serving bool
}

func (c *fakeChat) Deliver(context.Context, []api.Message) {}
func (c *fakeChat) Attach(*table.Service)                  {}
func (c *fakeChat) Close() error                           { return nil }
func (c *fakeChat) Name() string                           { return c.name }
func (c *fakeChat) Describe() string                       { return c.name }

func (c *fakeChat) Run(ctx context.Context) error {
	c.mu.Lock()
	c.starts = append(c.starts, time.Now())
	fail := len(c.starts) <= c.failures
	c.serving = !fail
	c.mu.Unlock()
	if fail {
		return c.err
	}
	<-ctx.Done()
	c.mu.Lock()
	c.serving = false
	c.mu.Unlock()
	return nil
}

func (c *fakeChat) state() (starts int, serving bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.starts), c.serving
}

type startErr struct {
	msg       string
	permanent bool
	after     time.Duration
}

func (e startErr) Error() string             { return e.msg }
func (e startErr) Permanent() bool           { return e.permanent }
func (e startErr) RetryAfter() time.Duration { return e.after }

// A platform that fails to start is tried again with a growing wait and does not stop the
// other; one whose token is refused stops alone, its error returned at the end; a platform
// asking to wait (its session starts renew later) is not tried before.
func TestAFailedStartIsRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		flaky := &fakeChat{name: "flaky", failures: 3, err: errors.New("gateway unreachable")}
		steady := &fakeChat{name: "steady"}
		refused := &fakeChat{name: "refused", failures: 1 << 30, err: startErr{msg: "token refused", permanent: true}}
		later := &fakeChat{name: "later", failures: 1, err: startErr{msg: "session starts used up", after: time.Hour}}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		start := time.Now()
		go func() {
			done <- runChats(ctx, []chatAdapter{flaky, steady, refused, later}, slog.New(slog.DiscardHandler))
		}()
		time.Sleep(time.Minute)
		synctest.Wait()
		if n, serving := flaky.state(); n != 4 || !serving {
			t.Errorf("flaky: %d starts, serving %v; want 4 (5 s, 10 s, 20 s apart) and serving", n, serving)
		}
		if n, serving := steady.state(); n != 1 || !serving {
			t.Errorf("steady: %d starts, serving %v", n, serving)
		}
		if n, _ := refused.state(); n != 1 {
			t.Errorf("refused: %d starts, want 1", n)
		}
		if n, _ := later.state(); n != 1 {
			t.Errorf("later: tried again after %v, before the hour it asked for", later.starts[len(later.starts)-1].Sub(start))
		}
		time.Sleep(time.Hour)
		synctest.Wait()
		if n, serving := later.state(); n != 2 || !serving {
			t.Errorf("later, after the hour: %d starts, serving %v", n, serving)
		}
		flaky.mu.Lock()
		gaps := []time.Duration{flaky.starts[1].Sub(flaky.starts[0]), flaky.starts[2].Sub(flaky.starts[1]), flaky.starts[3].Sub(flaky.starts[2])}
		flaky.mu.Unlock()
		if gaps[0] != 5*time.Second || gaps[1] != 10*time.Second || gaps[2] != 20*time.Second {
			t.Errorf("waits between starts %v", gaps)
		}
		cancel()
		err := <-done
		if err == nil || err.Error() != "token refused" {
			t.Errorf("runChats: %v, want the refused token", err)
		}
	})
}

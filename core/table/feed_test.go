package table

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// scriptedWatcher answers each Watch with the next of its scripts (then a watch that sends nothing
// until its ctx ends), and notes where each watch began and when.
type scriptedWatcher struct {
	mu      sync.Mutex
	rev     uint64
	scripts [][]TableChange
	from    []uint64
	at      []time.Time
}

func (w *scriptedWatcher) Revision(context.Context) (uint64, error) { return w.rev, nil }

func (w *scriptedWatcher) Watch(ctx context.Context, from uint64) <-chan TableChange {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.from, w.at = append(w.from, from), append(w.at, time.Now())
	var script []TableChange
	if len(w.scripts) > 0 {
		script, w.scripts = w.scripts[0], w.scripts[1:]
	}
	ch := make(chan TableChange)
	go func() {
		defer close(ch)
		for _, c := range script {
			select {
			case ch <- c:
			case <-ctx.Done():
				return
			}
		}
		if len(script) == 0 || script[len(script)-1].Err == nil {
			<-ctx.Done()
		}
	}()
	return ch
}

// TestChangeFeedKeepsWatching: the feed hands every change on in order; a watch cut off is
// started again after a pause from the revision after the last change heard, the pause doubling
// while the store stays away and starting afresh once a change comes; a watch whose changes are
// no longer kept reads every table again (resync) and watches on from the revision before it.
func TestChangeFeedKeepsWatching(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &scriptedWatcher{rev: 40, scripts: [][]TableChange{
			{{TableID: "a", Rev: 11}, {TableID: "b", Rev: 12}, {Err: ErrUnavailable}},
			{{Err: ErrUnavailable}},
			{{TableID: "a", Rev: 13}, {Err: ErrUnavailable}},
			{{Err: ErrCompacted}},
			{{TableID: "c", Rev: 41}},
		}}
		var heard []string
		resyncs := 0
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		f := changeFeed{w: w, log: slog.New(slog.DiscardHandler),
			heard:  func(c TableChange) { heard = append(heard, c.TableID) },
			resync: func() { resyncs++ }}
		start := time.Now()
		go func() { f.run(ctx, 11); close(done) }()
		time.Sleep(time.Minute)
		synctest.Wait()
		cancel()
		<-done
		if want := []string{"a", "b", "a", "c"}; !slices.Equal(heard, want) {
			t.Errorf("heard %v, want %v", heard, want)
		}
		if resyncs != 1 {
			t.Errorf("%d resyncs, want 1", resyncs)
		}
		if want := []uint64{11, 13, 13, 14, 41}; !slices.Equal(w.from, want) {
			t.Errorf("watched from %v, want %v", w.from, want)
		}
		var waited []time.Duration
		for _, at := range w.at {
			waited = append(waited, at.Sub(start))
			start = at
		}
		// Cut off twice in a row: 100 ms, then 200 ms; a change came, so 100 ms again; then
		// compacted: at once.
		if want := []time.Duration{0, 100 * time.Millisecond, 200 * time.Millisecond, 100 * time.Millisecond, 0}; !slices.Equal(waited, want) {
			t.Errorf("each watch began after %v, want %v", waited, want)
		}
	})
}

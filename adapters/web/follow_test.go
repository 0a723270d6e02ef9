package web

import (
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/core/table"
)

// stalledViews is the service with SeatView held up once stall is called: each call then waits
// until release (or the test ends), so a refresher of the hub can be caught in the middle.
type stalledViews struct {
	Service
	mu       sync.Mutex
	stalled  bool
	entered  chan struct{} // one value per stalled call
	released chan struct{}
}

func newStalledViews(svc Service) *stalledViews {
	return &stalledViews{Service: svc, entered: make(chan struct{}, 16), released: make(chan struct{})}
}

func (s *stalledViews) stall() {
	s.mu.Lock()
	s.stalled = true
	s.mu.Unlock()
}

func (s *stalledViews) SeatView(id string, p table.Player) (table.SeatView, bool) {
	s.mu.Lock()
	stalled := s.stalled
	s.mu.Unlock()
	if stalled {
		s.entered <- struct{}{}
		<-s.released
	}
	return s.Service.SeatView(id, p)
}

// refreshers counts the goroutines in the hub's refresh loop.
func refreshers() int {
	buf := make([]byte, 1<<20)
	n := runtime.Stack(buf, true)
	return strings.Count(string(buf[:n]), "web.(*hub).refresh(")
}

// Close joins the hub's refresh goroutines: none outlives it, even one that was asking the
// service for a view when Close was called (issue 22).
func TestCloseJoinsTheRefreshers(t *testing.T) {
	e := newEnv(t)
	id, p, _ := e.soloTable(1)
	sv := newStalledViews(e.svc)
	e.web.Attach(sv)
	k := e.open(e.session(p, id))
	_ = k
	sv.stall()
	e.web.hub.changed(id)
	select {
	case <-sv.entered:
	case <-time.After(5 * time.Second):
		t.Fatal("the hub did not ask for the new view")
	}
	closed := make(chan struct{})
	go func() {
		e.web.Close()
		close(closed)
	}()
	select {
	case <-closed:
		n := refreshers()
		close(sv.released)
		t.Fatalf("Close returned with %d refresher(s) of the hub still running", n)
	case <-time.After(300 * time.Millisecond):
	}
	close(sv.released)
	<-closed
	if n := refreshers(); n != 0 {
		t.Fatalf("%d refresher(s) of the hub outlive Close", n)
	}
}

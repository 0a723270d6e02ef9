package web

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/render"
)

// stalledViews is the service with Seen held up once stall is called: each call then waits
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

func (s *stalledViews) Seen(ctx context.Context, id string, p api.Player) (render.Seen, bool) {
	s.mu.Lock()
	stalled := s.stalled
	s.mu.Unlock()
	if stalled {
		s.entered <- struct{}{}
		<-s.released
	}
	return s.Service.Seen(ctx, id, p)
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
	// A refresher that has said it is done (its deferred wg.Done) may show in a stack dump for
	// a moment more while its goroutine exits: one still there after a second outlived Close.
	deadline := time.Now().Add(time.Second)
	for refreshers() != 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := refreshers(); n != 0 {
		t.Fatalf("%d refresher(s) of the hub outlive Close", n)
	}
}

// playAlong makes the socket's player's moves from the views it gets until the match is over,
// and gives every view it got.
func playAlong(t *testing.T, k *client, limit int) []SeatView {
	t.Helper()
	views := []SeatView{k.view}
	moved := uint64(0)
	for n := 0; n < limit; n++ {
		v := k.view
		if v.Status != api.StatusPlaying {
			return views
		}
		if g := v.Game; g != nil && g.ToMove == v.You && v.Seq > moved {
			verb, arg := v.FirstMove()
			k.move(verb, arg, v.Seq, fmt.Sprint("a", n))
			moved = v.Seq
		}
		m := k.next("view")
		views = append(views, *m.View)
	}
	t.Fatalf("the match did not end in %d views", limit)
	return nil
}

// Against computer players that answer at once, every trick taken and every game's end reach
// the page, though it is sent only the newest view of the table: each as the last trick of a
// view (with its winner), the last trick of a game and its result as the view's ended game.
// Before, the table had dealt the next game by the time the page was sent a view, and a game's
// last trick and result never reached it.
func TestEveryTrickAndGameEndReachThePage(t *testing.T) {
	e := newEnv(t, fastPlayer)
	id, p, _ := e.soloTable(1)
	k := e.open(e.session(p, id))
	views := playAlong(t, k, 5000)
	type trick struct{ game, no int }
	seen := map[trick]bool{}
	ended := map[int]string{}
	for _, v := range views {
		if g := v.Game; g != nil && g.Last != nil {
			if len(g.Last.Plays) != 4 || g.Last.Winner < 0 || g.Last.Won == "" {
				t.Fatalf("a last trick without its four cards or winner: %+v", g.Last)
			}
			seen[trick{g.No, g.Last.No}] = true
		}
		if x := v.Ended; x != nil {
			seen[trick{x.No, x.Last.No}] = true
			ended[x.No] = x.Text
		}
	}
	last := views[len(views)-1]
	games := len(last.Board.Games)
	if games < 2 || last.Status != api.StatusOver {
		t.Fatalf("the match ended with %d games, status %s", games, last.Status)
	}
	for g := 1; g <= games; g++ {
		for no := 1; no <= 6; no++ {
			if !seen[trick{g, no}] {
				t.Errorf("game %d: trick %d never reached the page", g, no)
			}
		}
		if ended[g] == "" {
			t.Errorf("game %d: its result never reached the page", g)
		}
	}
}

// Heartbeats: the server's first word is a ping with the beat, it pings a page that hears
// nothing else, takes the page's pings without answering them as moves, and ends the socket of a
// page that says nothing for eight beats.
func TestHeartbeats(t *testing.T) {
	const beat = 40 * time.Millisecond
	e := newEnv(t, func(c *Config) { c.Heartbeat = beat })
	id, p, _ := e.soloTable(1)
	k, err := e.dial(e.session(p, id), "")
	if err != nil {
		t.Fatal(err)
	}
	first, err := k.read(2 * time.Second)
	if err != nil || first.T != "ping" || first.Beat != beat.Milliseconds() {
		t.Fatalf("the first word: %+v, %v", first, err)
	}
	pings := 0
	start := time.Now()
	for time.Since(start) < 4*beat {
		if err := k.sendJSON(map[string]string{"t": "ping"}); err != nil {
			t.Fatal(err)
		}
		m, err := k.read(2 * beat)
		if err != nil {
			t.Fatalf("a page that pings: %v (got %s)", err, k.kinds())
		}
		switch m.T {
		case "ping":
			pings++
		case "refused", "note":
			t.Fatalf("the page's ping was answered: %+v", m)
		}
	}
	if pings < 2 {
		t.Fatalf("%d pings from the server in %v of silence", pings, 4*beat)
	}
	// Silence from the page: the server ends the socket after eight beats, not before five.
	silent := time.Now()
	for {
		if _, err := k.read(20 * beat); err != nil {
			break
		}
	}
	if took := time.Since(silent); took < 5*beat || took > 16*beat {
		t.Fatalf("a silent page's socket ended after %v (beat %v)", took, beat)
	}
}

// "I'm back" from the page gives a player marked away their seat again: the view shows them
// away with the table's note, and back after the page's move, which is answered with no note.
func TestImBackTakesTheSeat(t *testing.T) {
	e := newEnv(t, fastPlayer)
	id, p, _ := e.soloTable(1, "timer=fast", "stripes=3")
	k := e.open(e.session(p, id))
	for k.view.Game.ToMove != k.view.You {
		k.next("view")
	}
	if c := k.view.Clock; c == nil || c.Seat != k.view.You || c.Total != 45_000 {
		t.Fatalf("the turn's clock: %+v", c)
	}
	e.restartAfter(50 * time.Second) // down longer than the turn's time: away at once
	for !k.view.Seats[k.view.You].Away {
		k.next("view")
	}
	k.move("back", "", k.view.Seq, "back1")
	for k.view.Seats[k.view.You].Away {
		m, err := k.read(5 * time.Second)
		if err != nil {
			t.Fatalf("waiting to be back: %v (got %s)", err, k.kinds())
		}
		if m.T == "note" || m.T == "refused" {
			t.Fatalf("I'm back was answered with %+v", m)
		}
	}
}

// movedMeanwhile is the service with another player's move made right after the first view of
// a socket's player is taken: the table changes while the socket has its view but is not yet
// among the sockets the hub brings new views to.
type movedMeanwhile struct {
	Service
	reader api.Player
	move   func()
	once   sync.Once
}

func (s *movedMeanwhile) Seen(ctx context.Context, id string, p api.Player) (render.Seen, bool) {
	sn, ok := s.Service.Seen(ctx, id, p)
	if p.ID == s.reader.ID {
		s.once.Do(s.move)
	}
	return sn, ok
}

// A move made while a page connects (after its first view is taken, before its socket is
// among the table's) reaches the page: else the page shows the table from before it until the
// next move, which may be its own player's, who does not see it is their turn. Before the
// fix the page waited here in 20 runs of 20 (go test -race -count=20 -run TestAMoveWhileAPageConnects).
func TestAMoveWhileAPageConnects(t *testing.T) {
	ctx := t.Context()
	e := newEnv(t)
	id, ps, place := e.fourTable(1) // four people: nothing moves but what they send
	var mover, reader api.Player
	var first SeatView
	for _, p := range ps {
		if v, _ := e.web.SeatView(ctx, id, p); v.Game != nil && v.Game.ToMove == v.You {
			mover, first = p, v
		} else {
			reader = p
		}
	}
	verb, arg := first.FirstMove()
	e.web.Attach(&movedMeanwhile{Service: e.svc, reader: reader, move: func() { e.do(place, mover, moveVerbs[verb], arg) }})
	k := e.open(e.session(reader, id))
	deadline := time.Now().Add(3 * time.Second)
	for k.view.Seq <= first.Seq {
		if _, err := k.read(time.Until(deadline)); err != nil {
			t.Fatalf("the page shows the table at %d, before the move made while it connected (%v; got %s)", k.view.Seq, err, k.kinds())
		}
	}
}

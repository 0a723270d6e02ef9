package table

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kontermatt/kontermatt/core/options"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// shownSeen is what the service holds of a place's shown-ness, as the tests read it.
type shownSeen struct {
	reports          bool
	published, shown uint64
}

// shownOf reads what the service holds of a place's shown-ness.
func (h *harness) shownOf() shownSeen {
	h.t.Helper()
	t, ok := h.svc.index.get(h.svc.TableAt(h.place))
	if !ok {
		h.t.Fatal("no table at the place")
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	reports, published := t.shown.place.Reported()
	shown, _ := t.shown.place.Last()
	return shownSeen{reports: reports, published: published, shown: shown}
}

func TestShownKeepsTheNewestVersionShown(t *testing.T) {
	h := newHarness(t, mem.New())
	defer h.svc.Close()
	h.svc.Shown(h.place, 3) // no table there yet: nothing to note, nothing to fail
	if e := errText(h.do(player(1), api.VerbNew, "timer=none")); e != "" {
		t.Fatal(e)
	}
	lobby, ok := h.out.latest(api.KindLobby, "")
	if !ok {
		t.Fatal("no lobby message")
	}
	st := h.shownOf()
	if st.reports || st.published != lobby.Version {
		t.Fatalf("before any report: %+v, want not reporting and the lobby's version %d published", st, lobby.Version)
	}
	h.svc.Shown(h.place, lobby.Version)
	h.svc.Shown(h.place, lobby.Version-1) // a late report of an older edit goes back to nothing
	if st = h.shownOf(); !st.reports || st.shown != lobby.Version {
		t.Fatalf("after reports of %d then %d: %+v", lobby.Version, lobby.Version-1, st)
	}
	other := h.place
	other.Chat = "elsewhere"
	h.svc.Shown(other, 99) // another place's report is that place's
	if st = h.shownOf(); st.shown != lobby.Version {
		t.Fatalf("another place's report changed this one: %+v", st)
	}
}

// showingSurface is an outbox that reports each public table message shown after delay, as an
// adapter reports what the platform took (Shown); until stopAfter reports (0: never stops).
type showingSurface struct {
	*outbox
	svc       func() *Service
	delay     time.Duration
	stopAfter int

	mu        sync.Mutex
	reports   int
	delivered map[uint64]time.Time // public table version → when it was handed over
	shownAt   map[uint64]time.Time
}

func (s *showingSurface) Deliver(ctx context.Context, msgs []api.Message) {
	s.outbox.Deliver(ctx, msgs)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range msgs {
		if m.Target.Kind != api.ToPlace || m.Key == "" {
			continue
		}
		s.delivered[m.Version] = time.Now()
		if s.stopAfter > 0 && s.reports >= s.stopAfter {
			continue
		}
		s.reports++
		place, v := m.Target.Place, m.Version
		time.AfterFunc(s.delay, func() {
			s.mu.Lock()
			s.shownAt[v] = time.Now()
			s.mu.Unlock()
			s.svc().Shown(place, v)
		})
	}
}

// pacedMatch plays a match of one person, who plays at once whenever it is their turn, and three
// computers, at a place whose surface shows each table version after delay. It gives the public
// table messages in order, and which versions the person made.
func pacedMatch(t *testing.T, surface *showingSurface, stripes string) (*harness, []api.Message, map[uint64]bool) {
	t.Helper()
	var h *harness
	h = newHarness(t, mem.New(), func(c *Config) {
		surface.outbox = &outbox{}
		surface.svc = func() *Service { return h.svc }
		surface.delivered, surface.shownAt = map[uint64]time.Time{}, map[uint64]time.Time{}
		c.Outboxes = map[string]Outbox{"test": surface}
	})
	h.out = surface.outbox
	t.Cleanup(h.svc.Close)
	me := player(1)
	if e := errText(h.do(me, api.VerbNew, "timer=none", "stripes="+stripes)); e != "" {
		t.Fatal(e)
	}
	time.Sleep(time.Second) // the lobby is shown: the place is known to report from then on
	if e := errText(h.do(me, api.VerbDeal)); e != "" {
		t.Fatal(e)
	}
	id := h.svc.TableAt(h.place)
	mine := map[uint64]bool{}
	for i := 0; ; i++ {
		if i > 100000 {
			t.Fatal("the match does not end")
		}
		synctest.Wait()
		if h.over() {
			break
		}
		if who, _, _ := h.svc.Turn(id); who != me.ID {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		m, _ := h.out.latest(api.KindHand, me.ID)
		pick := legalButton(m)
		if pick == nil {
			// Her turn, but her hand does not say so yet: after a finished trick or a deal it
			// waits until the place shows the table (holdHands). She plays once it does.
			time.Sleep(50 * time.Millisecond)
			continue
		}
		if e := errText(h.press(me, *pick)); e != "" {
			t.Fatalf("pressing %s: %s", pick.Label, e)
		}
		live, _ := h.out.latest(api.KindLive, "")
		mine[live.Version] = true
	}
	var public []api.Message
	for _, m := range h.out.all() {
		if m.Target.Kind == api.ToPlace && m.Key != "" && m.Kind == api.KindLive {
			public = append(public, m)
		}
	}
	return h, public, mine
}

// TestComputersWaitForThePlace: at a place whose surface shows each table version 300 ms after it
// is published, no computer moves before the place shows the table as it was, and then not before
// the pace's time for what it shows has passed: a card 0.6 s, a finished trick with its winner
// 2 s, a game's result and the new deal 4 s (normal pace).
func TestComputersWaitForThePlace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const delay = 300 * time.Millisecond
		surface := &showingSurface{delay: delay}
		_, public, mine := pacedMatch(t, surface, "2")
		p := DefaultPaces[options.PaceNormal]
		checked := map[string]int{}
		for i := 1; i < len(public); i++ {
			prev, m := public[i-1], public[i]
			if mine[m.Version] || m.Version == prev.Version {
				continue // the person's own move never waits; a game's last edit and the next deal come together
			}
			shown, ok := surface.shownAt[prev.Version]
			if !ok {
				t.Fatalf("version %d was never shown", prev.Version)
			}
			want, what := p.Card, "card"
			switch {
			case prev.Key != public[max(i-2, 0)].Key && i >= 2 && !strings.HasSuffix(prev.Key, "/1"):
				want, what = p.Game, "game"
			case prev.HoldFor > 0:
				want, what = p.Trick, "trick"
			}
			if got := surface.delivered[m.Version].Sub(shown); got < want {
				t.Errorf("a computer moved %v after version %d (a %s) was shown, want ≥ %v:\n%s\nthen:\n%s", got, prev.Version, what, want, prev.Text, m.Text)
			}
			checked[what]++
		}
		t.Logf("computer moves checked after: %v", checked)
		if checked["card"] == 0 || checked["trick"] == 0 || checked["game"] == 0 {
			t.Errorf("the match did not have computers move after each kind of moment: %v", checked)
		}
	})
}

// TestComputersGoOnWhenThePlaceFallsSilent: a surface that stops reporting holds each computer
// move back for Pace.Wait at most, and the match ends.
func TestComputersGoOnWhenThePlaceFallsSilent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		surface := &showingSurface{delay: 100 * time.Millisecond, stopAfter: 3}
		_, public, mine := pacedMatch(t, surface, "1")
		p := DefaultPaces[options.PaceNormal]
		waited := 0
		for i := 1; i < len(public); i++ {
			prev, m := public[i-1], public[i]
			if mine[m.Version] || m.Version == prev.Version {
				continue
			}
			if _, shown := surface.shownAt[prev.Version]; shown {
				continue
			}
			got := surface.delivered[m.Version].Sub(surface.delivered[prev.Version])
			if got < p.Wait || got > p.Wait+p.Game {
				t.Errorf("a computer moved %v after unshown version %d, want %v to %v", got, prev.Version, p.Wait, p.Wait+p.Game)
			}
			waited++
		}
		if waited == 0 {
			t.Error("no computer waited for a version never shown")
		}
	})
}

// TestHeldMoveGivesWayToAPause: a computer's move waiting for the place is let go when the table
// changes under it (here a pause: nobody can see the place); it is decided afresh when the table
// goes on, and is played then.
func TestHeldMoveGivesWayToAPause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		surface := &showingSurface{delay: 100 * time.Millisecond, stopAfter: 1} // the lobby, then silence
		var h *harness
		h = newHarness(t, mem.New(), func(c *Config) {
			surface.outbox = &outbox{}
			surface.svc = func() *Service { return h.svc }
			surface.delivered, surface.shownAt = map[uint64]time.Time{}, map[uint64]time.Time{}
			c.Outboxes = map[string]Outbox{"test": surface}
		})
		h.out = surface.outbox
		defer h.svc.Close()
		me := player(1)
		if e := errText(h.do(me, api.VerbNew, "timer=none")); e != "" {
			t.Fatal(e)
		}
		time.Sleep(time.Second)
		id := h.svc.TableAt(h.place)
		// Deal until a computer moves first (the dealer is drawn).
		if e := errText(h.do(me, api.VerbDeal)); e != "" {
			t.Fatal(e)
		}
		synctest.Wait()
		if who, _, _ := h.svc.Turn(id); who == me.ID {
			t.Fatal("the person moves first: the test needs a deal (Seed 7) where a computer does")
		}
		p := DefaultPaces[options.PaceNormal]
		seq := func() uint64 {
			tb, _ := h.svc.index.get(id)
			tb.mu.Lock()
			defer tb.mu.Unlock()
			return tb.st.Seq
		}
		dealt := seq()
		time.Sleep(p.Wait / 2) // the computer's move is held: the deal was never shown
		synctest.Wait()
		if got := seq(); got != dealt {
			t.Fatalf("a computer moved (seq %d → %d) before the place showed the deal or Pace.Wait passed", dealt, got)
		}
		if err := h.svc.Pause(context.Background(), h.place, true); err != nil {
			t.Fatal(err)
		}
		paused := seq()
		time.Sleep(2 * p.Wait) // the held move's time passes while paused
		synctest.Wait()
		if got := seq(); got != paused {
			t.Fatalf("a computer moved while the table was paused (seq %d → %d)", paused, got)
		}
		if err := h.svc.Pause(context.Background(), h.place, false); err != nil {
			t.Fatal(err)
		}
		resumed := seq()
		time.Sleep(p.Wait + p.Game + time.Second)
		synctest.Wait()
		if got := seq(); got <= resumed {
			t.Fatalf("no computer moved after the pause ended (seq %d)", got)
		}
	})
}

// TestRestartedOwnerPaces: what a place shows is not stored, but a restarted service whose
// adapter says it reports (Reports, before Resume) paces the place from its first move: a
// computer whose move was held when the bot stopped waits again for the place, which shows
// nothing after the restart, Pace.Wait at most; without the adapter's word it moved at once.
func TestRestartedOwnerPaces(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := mem.New()
		// reporting shows the first n public messages it is given, then nothing.
		reporting := func(h **harness, n int) func(c *Config) {
			return func(c *Config) {
				s := &showingSurface{outbox: &outbox{}, delay: 100 * time.Millisecond, stopAfter: 1, reports: 1 - n,
					delivered: map[uint64]time.Time{}, shownAt: map[uint64]time.Time{}}
				s.svc = func() *Service { return (*h).svc }
				c.Outboxes = map[string]Outbox{"test": s}
			}
		}
		var h *harness
		h = newHarness(t, store, reporting(&h, 1)) // the lobby
		me := player(1)
		if e := errText(h.do(me, api.VerbNew, "timer=none")); e != "" {
			t.Fatal(e)
		}
		time.Sleep(time.Second)
		if e := errText(h.do(me, api.VerbDeal)); e != "" {
			t.Fatal(e)
		}
		synctest.Wait()
		id := h.svc.TableAt(h.place)
		if who, _, _ := h.svc.Turn(id); who == me.ID {
			t.Fatal("the person moves first: the test needs a deal (Seed 7) where a computer does")
		}
		h.svc.Close() // the computer's move is held: the deal was never shown
		seqOf := func(h *harness) uint64 {
			tb, _ := h.svc.index.get(id)
			tb.mu.Lock()
			defer tb.mu.Unlock()
			return tb.st.Seq
		}
		var r *harness
		r = newHarness(t, store, reporting(&r, 0))
		r.svc.Reports("test")
		defer r.svc.Close()
		if err := r.svc.Resume(context.Background()); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		p := DefaultPaces[options.PaceNormal]
		dealt := seqOf(r)
		time.Sleep(p.Wait / 2)
		synctest.Wait()
		if got := seqOf(r); got != dealt {
			t.Fatalf("after the restart a computer moved (seq %d → %d) before the place showed the deal or Pace.Wait passed", dealt, got)
		}
		time.Sleep(p.Wait)
		synctest.Wait()
		if got := seqOf(r); got == dealt {
			t.Fatalf("no computer moved after Pace.Wait (seq %d)", got)
		}
	})
}

// hangingStore is a memory store whose next commit, once hangNext is called, hangs until release
// closes and then fails: a disk stuck on an fsync that gives up in the end.
type hangingStore struct {
	*mem.Store
	hang    atomic.Bool
	stuck   chan struct{} // closed once the commit hangs
	release chan struct{}
}

func (s *hangingStore) hangNext() {
	s.stuck, s.release = make(chan struct{}), make(chan struct{})
	s.hang.Store(true)
}

func (s *hangingStore) Commit(ctx context.Context, c Change) error {
	if s.hang.CompareAndSwap(true, false) {
		close(s.stuck)
		<-s.release
		return errors.New("disk gave up")
	}
	return s.Store.Commit(ctx, c)
}

// TestShownDoesNotWaitForACommit: an adapter's report of what its place shows is taken at once,
// even while the table's commit hangs (Shown never waits for the table's lock), and what the
// report lets go still goes, as soon as the table is free: the hands held at a finished trick
// reach the players the moment the hung commit gives up, not Pace.Wait later.
func TestShownDoesNotWaitForACommit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &hangingStore{Store: mem.New()}
		h := newHarness(t, store.Store, func(c *Config) { c.Store, c.KV = store, store.Store })
		defer h.svc.Close()
		h.svc.Reports("test") // the place reports what it shows: hands wait for it at a trick's end
		ps := fourHumans(t, h, "timer=none")
		tb, _ := h.svc.index.get(h.svc.TableAt(h.place))
		heldAt := func() uint64 {
			tb.mu.Lock()
			defer tb.mu.Unlock()
			if tb.shown.hands == nil {
				return 0
			}
			return tb.shown.hands.seq
		}
		for i := 0; heldAt() == 0; i++ {
			if i > 20 {
				t.Fatal("no trick finished")
			}
			p, m := h.toMove(ps)
			b := legalButton(m)
			if b == nil {
				t.Fatalf("no legal button for %s:\n%s", p.ID, m.Text)
			}
			if e := errText(h.press(p, *b)); e != "" {
				t.Fatalf("pressing %s: %s", b.Label, e)
			}
			synctest.Wait()
		}
		seq := heldAt()
		// toPlay counts the players whose hand of the finished trick says it is their turn.
		toPlay := func() (n int) {
			for _, p := range ps {
				if m, _ := h.out.latest(api.KindHand, p.ID); m.Version >= seq && strings.Contains(m.Text, "▶") {
					n++
				}
			}
			return n
		}
		if n := toPlay(); n != 0 {
			t.Fatalf("%d players are told to play before the place shows the finished trick", n)
		}

		store.hangNext()
		paused := make(chan error, 1)
		go func() { paused <- h.svc.Pause(context.Background(), h.place, true) }()
		<-store.stuck
		reported := make(chan struct{})
		go func() {
			h.svc.Shown(h.place, seq)
			close(reported)
		}()
		synctest.Wait()
		select {
		case <-reported:
		default:
			t.Error("Shown waits for the table's commit")
		}
		start := time.Now()
		close(store.release)
		if err := <-paused; err == nil {
			t.Error("the pause was stored by a store that gave up")
		}
		<-reported
		synctest.Wait()
		if heldAt() != 0 {
			t.Errorf("the hands are still held %v after the place showed the trick and the commit gave up", time.Since(start))
		}
		if told := toPlay(); told != 1 {
			t.Errorf("%d players are told to play once the place shows the finished trick, want 1", told)
		}
	})
}

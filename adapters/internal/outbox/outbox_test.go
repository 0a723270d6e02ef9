package outbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// fakePlatform records what is shown; failures are planned per call.
type fakePlatform struct {
	mu      sync.Mutex
	shown   []string // "dest key version new|edit"
	waits   int
	fail    []error // the next Show calls fail with these, in order (nil: succeed)
	block   chan struct{}
	refused [][]*Item[string]
	nextID  int
}

var (
	errNet       = errors.New("connection reset")
	errLimited   = errors.New("429")
	errGone      = errors.New("message to edit not found")
	errForbidden = errors.New("403")
	errBad       = errors.New("400")
	errMoved     = errors.New("moved to b")
	errNoRights  = errors.New("not enough rights to send text messages")
)

func (p *fakePlatform) Wait(ctx context.Context, dest string) error {
	p.mu.Lock()
	p.waits++
	p.mu.Unlock()
	return ctx.Err()
}

func (p *fakePlatform) Show(ctx context.Context, it *Item[string], rec *Record) (string, string, error) {
	p.mu.Lock()
	block := p.block
	p.mu.Unlock()
	if block != nil {
		<-block
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.fail) > 0 {
		err := p.fail[0]
		p.fail = p.fail[1:]
		if err != nil {
			return "", "", err
		}
	}
	how, id := "new", ""
	if rec != nil && !it.Repost {
		how, id = "edit", rec.ID
	} else {
		p.nextID++
		id = strconv.Itoa(p.nextID)
	}
	p.shown = append(p.shown, fmt.Sprintf("%s %s v%d %s", it.Dest, it.Msg.Text, it.Version, how))
	return it.Dest, id, nil
}

func (p *fakePlatform) Classify(err error) *Error {
	switch {
	case errors.Is(err, errLimited):
		return &Error{Class: RetryAfter, After: 2 * time.Second, Err: err}
	case errors.Is(err, errGone):
		return &Error{Class: Gone, Err: err}
	case errors.Is(err, errForbidden):
		return &Error{Class: Forbidden, Err: err}
	case errors.Is(err, errBad):
		return &Error{Class: BadRequest, Err: err}
	case errors.Is(err, errMoved):
		return &Error{Class: Moved, To: "b", Err: err}
	case errors.Is(err, errNoRights):
		return &Error{Class: Paused, Err: err}
	}
	return &Error{Class: Transient, Err: err}
}

func (p *fakePlatform) Refused(dest string, items []*Item[string], err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refused = append(p.refused, items)
}

// setBlock makes Show wait until ch is closed (nil: no waiting).
func (p *fakePlatform) setBlock(ch chan struct{}) {
	p.mu.Lock()
	p.block = ch
	p.mu.Unlock()
}

// setFail plans the next Show calls' failures.
func (p *fakePlatform) setFail(errs ...error) {
	p.mu.Lock()
	p.fail = errs
	p.mu.Unlock()
}

func (p *fakePlatform) got() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.shown...)
}

func msg(dest, key string, v uint64, text string) *Item[string] {
	m := api.Message{Key: key, Version: v, Text: text}
	return &Item[string]{Dest: dest, Msg: m, Key: key, Version: v, Sum: Digest(m)}
}

func newEngine(t *testing.T, p *fakePlatform, kv *mem.Store, tweak ...func(*Config[string])) *Engine[string] {
	cfg := Config[string]{Platform: p, KV: kv, Bucket: "test.msg"}
	for _, f := range tweak {
		f(&cfg)
	}
	e := New(cfg)
	t.Cleanup(func() { e.Close(time.Second) })
	return e
}

func flush(t *testing.T, e *Engine[string]) {
	t.Helper()
	if err := e.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func equal(t *testing.T, what string, got, want []string) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s:\n got %q\nwant %q", what, got, want)
	}
}

// Each destination keeps its order; a queued keyed message takes the newest version's content;
// an older version never replaces a newer one; the second version of a Key is an edit.
func TestOrderMergeAndEdit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &fakePlatform{block: make(chan struct{})}
		e := newEngine(t, p, mem.New())
		e.Enqueue(msg("a", "", 0, "first"))
		e.Enqueue(msg("a", "k", 2, "v2"))
		e.Enqueue(msg("a", "", 0, "third"))
		e.Enqueue(msg("a", "k", 4, "v4"))
		e.Enqueue(msg("a", "k", 3, "v3")) // late, older: ignored
		e.Enqueue(msg("b", "", 0, "other"))
		synctest.Wait()
		unblock := p.block
		p.setBlock(nil)
		close(unblock)
		flush(t, e)
		got := p.got()
		var a []string
		for _, s := range got {
			if s[0] == 'a' {
				a = append(a, s)
			}
		}
		equal(t, "destination a", a, []string{"a first v0 new", "a v4 v4 new", "a third v0 new"})
		if len(got) != 4 {
			t.Errorf("shown %q", got)
		}
		e.Enqueue(msg("a", "k", 5, "v5"))
		flush(t, e)
		if got := p.got(); got[len(got)-1] != "a v5 v5 edit" {
			t.Errorf("the next version: %q", got[len(got)-1])
		}
	})
}

// A keyed message already showing the same content (a restart publishes everything again), or a
// newer version, is not sent, and waits for no rate limit.
func TestUnchangedIsSkippedBeforeTheLimit(t *testing.T) {
	p := &fakePlatform{}
	kv := mem.New()
	e := newEngine(t, p, kv)
	e.Enqueue(msg("a", "k", 1, "same"))
	flush(t, e)
	waits := p.waits
	e.Enqueue(msg("a", "k", 7, "same")) // newer sequence number, same content
	e.Enqueue(msg("a", "k2", 1, "x"))
	flush(t, e)
	e.Enqueue(msg("a", "k2", 0, "older")) // an older version than the one shown
	flush(t, e)
	equal(t, "shown", p.got(), []string{"a same v1 new", "a x v1 new"})
	if p.waits != waits+1 {
		t.Errorf("waited %d times for the limit for one real send", p.waits-waits)
	}
	if s := e.Stats(); s.Skipped != 2 || s.Sent != 2 {
		t.Errorf("stats %+v", s)
	}
}

// Rate limited: the message waits and goes out with the newest content that came meanwhile.
// Transient failures are retried a few times, then the message is dropped.
func TestRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &fakePlatform{fail: []error{errLimited}}
		e := newEngine(t, p, mem.New())
		e.Enqueue(msg("a", "k", 1, "v1"))
		synctest.Wait()
		e.Enqueue(msg("a", "k", 2, "v2"))
		time.Sleep(time.Second)
		synctest.Wait()
		if got := p.got(); len(got) != 0 {
			t.Fatalf("sent during the wait: %q", got)
		}
		flush(t, e)
		equal(t, "after the wait", p.got(), []string{"a v2 v2 new"})

		p.setFail(errNet, errNet)
		e.Enqueue(msg("b", "", 0, "flaky"))
		flush(t, e)
		p.setFail(errNet, errNet, errNet)
		e.Enqueue(msg("b", "", 0, "dead"))
		flush(t, e)
		equal(t, "transient", p.got()[1:], []string{"b flaky v0 new"})
		if s := e.Stats(); s.Failed != 1 || s.RateLimited != 1 {
			t.Errorf("stats %+v", s)
		}
	})
}

// An edit of a message that is gone sends it anew; a destination that refuses the bot gives its
// whole queue to the adapter; a bad request drops the one message.
func TestGoneForbiddenBad(t *testing.T) {
	ctx := t.Context()
	synctest.Test(t, func(t *testing.T) {
		p := &fakePlatform{}
		kv := mem.New()
		e := newEngine(t, p, kv)
		e.Enqueue(msg("a", "k", 1, "v1"))
		flush(t, e)
		p.setFail(errGone)
		e.Enqueue(msg("a", "k", 2, "v2"))
		flush(t, e)
		equal(t, "gone", p.got(), []string{"a v1 v1 new", "a v2 v2 new"})
		if rec, _ := e.Record("k"); rec.ID != "2" {
			t.Errorf("record after resending: %+v", rec)
		}
		if b, _, _ := kv.Get(ctx, "test.msg", "k"); !json.Valid(b) || string(b) == "" {
			t.Errorf("the new message's record is not in the KV: %q", b)
		}

		p.setBlock(make(chan struct{}))
		p.setFail(errForbidden)
		e.Enqueue(msg("u", "", 0, "one"))
		synctest.Wait()
		e.Enqueue(msg("u", "", 0, "two"))
		e.Enqueue(msg("u", "h", 1, "three"))
		unblock := p.block
		p.setBlock(nil)
		close(unblock)
		flush(t, e)
		if len(p.refused) != 1 || len(p.refused[0]) != 3 || p.refused[0][0].Msg.Text != "one" {
			t.Errorf("refused: %+v", p.refused)
		}

		p.setFail(errBad)
		e.Enqueue(msg("c", "", 0, "bad"))
		e.Enqueue(msg("c", "", 0, "good"))
		flush(t, e)
		equal(t, "after a bad request", p.got()[2:], []string{"c good v0 new"})
	})
}

// A held queue sends nothing; an item taken is not sent; one given back goes out at release,
// unless a newer version is waiting; a take waits for an older version on its way.
func TestHold(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &fakePlatform{}
		e := newEngine(t, p, mem.New())
		e.Enqueue(msg("dm", "hand", 1, "v1"))
		flush(t, e)
		h := e.Hold("dm")
		if h == nil || e.Hold("dm") != nil {
			t.Fatal("a queue held twice")
		}
		e.Enqueue(msg("dm", "hand", 2, "v2"))
		it, ok := h.Take(func(it *Item[string]) bool { return it.Key == "hand" })
		if !ok || it.Version != 2 {
			t.Fatalf("took %+v, %v", it, ok)
		}
		e.Enqueue(msg("dm", "hand", 3, "v3"))
		time.Sleep(time.Second)
		synctest.Wait()
		if got := p.got(); len(got) != 1 {
			t.Fatalf("sent while held: %q", got)
		}
		h.GiveBack(it) // v3 is waiting: v2 is not sent
		h.Release()
		h.Release()
		flush(t, e)
		equal(t, "after the hold", p.got(), []string{"dm v1 v1 new", "dm v3 v3 edit"})

		// An older version on its way: the take waits for it.
		p.setBlock(make(chan struct{}))
		e.Enqueue(msg("dm", "hand", 4, "v4"))
		synctest.Wait() // v4 is being sent
		h = e.Hold("dm")
		e.Enqueue(msg("dm", "hand", 5, "v5"))
		took := make(chan bool)
		go func() {
			_, ok := h.Take(func(it *Item[string]) bool { return it.Key == "hand" })
			took <- ok
		}()
		synctest.Wait()
		unblock := p.block
		p.setBlock(nil)
		close(unblock)
		if !<-took {
			t.Error("the take gave up though the older version was sent at once")
		}
		h.Release()
		flush(t, e)
		equal(t, "taken", p.got()[2:], []string{"dm v4 v4 edit"})
	})
}

// Flush waits for the queues without polling; a queue is bounded; Close gives up on what a
// destination cannot take in time.
func TestFlushBoundAndClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &fakePlatform{block: make(chan struct{})}
		e := newEngine(t, p, mem.New(), func(c *Config[string]) { c.MaxQueue = 3 })
		for i := range 5 {
			e.Enqueue(msg("a", "", 0, strconv.Itoa(i)))
		}
		e.Enqueue(msg("a", "k", 1, "keyed")) // merges or appends: keyed ones are not dropped
		done := make(chan struct{})
		go func() { e.Flush(context.Background()); close(done) }()
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("Flush returned with messages queued")
		default:
		}
		unblock := p.block
		p.setBlock(nil)
		close(unblock)
		<-done
		if got := p.got(); len(got) != 4 || e.Stats().Dropped != 2 {
			t.Errorf("shown %q, stats %+v", got, e.Stats())
		}

		p.setBlock(make(chan struct{})) // a destination that never answers
		e.Enqueue(msg("slow", "", 0, "stuck"))
		start := time.Now()
		stuck := p.block
		go func() { time.Sleep(time.Hour); close(stuck) }()
		e.Close(5 * time.Second)
		if d := time.Since(start); d > time.Hour {
			t.Errorf("Close waited %v", d)
		}
		e.Enqueue(msg("a", "", 0, "after close"))
	})
}

// Edited records go to the KV at the next write-back, not on every edit; new ones at once.
// Records written by the adapters before this package still read.
func TestRecords(t *testing.T) {
	ctx := t.Context()
	synctest.Test(t, func(t *testing.T) {
		p := &fakePlatform{}
		kv := mem.New()
		e := newEngine(t, p, kv)
		e.Enqueue(msg("a", "k", 1, "v1"))
		synctest.Wait()
		before, _, _ := kv.Get(ctx, "test.msg", "k")
		e.Enqueue(msg("a", "k", 2, "v2"))
		synctest.Wait()
		if now, _, _ := kv.Get(ctx, "test.msg", "k"); string(now) != string(before) {
			t.Errorf("an edit wrote its record at once: %s", now)
		}
		time.Sleep(31 * time.Second)
		synctest.Wait()
		var rec Record
		b, _, _ := kv.Get(ctx, "test.msg", "k")
		if err := json.Unmarshal(b, &rec); err != nil || rec.Version != 2 {
			t.Errorf("after the write-back: %s (%v)", b, err)
		}
		for _, old := range []string{`{"c":-100123,"m":42,"v":7,"s":99}`, `{"c":"5001","id":"6001","v":7,"h":"00ff"}`} {
			var r Record
			if err := json.Unmarshal([]byte(old), &r); err != nil || r.ID == "" || r.Chat == "" || r.Version != 7 {
				t.Errorf("old record %s: %+v, %v", old, r, err)
			}
		}
	})
}

// A destination that moved: its waiting items go ahead of the new destination's, in order, a Key
// waiting at both once in its newer version; a send that finds it moved takes the queue along
// and says so.
func TestMove(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &fakePlatform{block: make(chan struct{})}
		e := newEngine(t, p, mem.New())
		e.Enqueue(msg("a", "", 0, "held")) // being sent while the rest waits
		e.Enqueue(msg("a", "", 0, "a1"))
		e.Enqueue(msg("a", "k", 3, "k3"))
		e.Enqueue(msg("b", "", 0, "b0")) // being sent too
		e.Enqueue(msg("b", "k", 4, "k4"))
		e.Enqueue(msg("b", "", 0, "b1"))
		synctest.Wait()
		if n := e.Move("a", "b"); n != 2 {
			t.Errorf("moved %d items, want the 2 waiting", n)
		}
		unblock := p.block
		p.setBlock(nil)
		close(unblock)
		flush(t, e)
		var b []string
		for _, s := range p.got() {
			if s[0] == 'b' {
				b = append(b, s)
			}
		}
		equal(t, "shown at b", b, []string{"b b0 v0 new", "b a1 v0 new", "b k4 v4 new", "b b1 v0 new"})
		if len(p.got()) != 5 {
			t.Errorf("shown %q", p.got())
		}

		var moved []string
		e2 := newEngine(t, &fakePlatform{}, mem.New(), func(c *Config[string]) {
			c.Moved = func(from, to string) { moved = append(moved, from+">"+to) }
		})
		p2 := e2.cfg.Platform.(*fakePlatform)
		p2.setFail(errMoved)
		e2.Enqueue(msg("a", "", 0, "x"))
		e2.Enqueue(msg("a", "", 0, "y"))
		flush(t, e2)
		equal(t, "shown after the move", p2.got(), []string{"b x v0 new", "b y v0 new"})
		equal(t, "told", moved, []string{"a>b"})
	})
}

// Discard drops what waits for a destination, and only that.
func TestDiscard(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &fakePlatform{block: make(chan struct{})}
		e := newEngine(t, p, mem.New())
		e.Enqueue(msg("a", "", 0, "in flight"))
		e.Enqueue(msg("a", "", 0, "a1"))
		e.Enqueue(msg("a", "k", 1, "a2"))
		e.Enqueue(msg("b", "", 0, "b1"))
		synctest.Wait()
		if n := e.Discard(func(it *Item[string]) bool { return it.Dest == "a" }); n != 2 {
			t.Errorf("discarded %d, want 2", n)
		}
		unblock := p.block
		p.setBlock(nil)
		close(unblock)
		flush(t, e)
		got := p.got()
		if len(got) != 2 || fmt.Sprint(got) != fmt.Sprint([]string{"a in flight v0 new", "b b1 v0 new"}) && fmt.Sprint(got) != fmt.Sprint([]string{"b b1 v0 new", "a in flight v0 new"}) {
			t.Errorf("shown %q", got)
		}
	})
}

// A destination that refuses the bot for now pauses: what comes meanwhile waits there (the newest
// version of a Key, the newest one-off messages), Flush does not wait for it, and the adapter is
// told once. A probe tries the first waiting message again, at most every ProbeEvery unless it
// must be now; a refusal keeps the pause without telling again, and the first send that works
// ends it and sends the rest in order. A pause whose messages were all discarded ends at the
// next probe.
func TestPausedDestination(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &fakePlatform{}
		var told []string
		e := newEngine(t, p, mem.New(), func(c *Config[string]) {
			c.MaxPaused = 2
			c.ProbeEvery = time.Minute
			c.Paused = func(dest string, it *Item[string]) { told = append(told, dest+" "+it.Msg.Text) }
		})
		p.setFail(errNoRights)
		e.Enqueue(msg("g", "k", 1, "v1"))
		flush(t, e)
		e.Enqueue(msg("g", "k", 2, "v2"))
		for _, text := range []string{"n1", "n2", "n3"} {
			e.Enqueue(msg("g", "", 0, text))
		}
		e.Enqueue(msg("other", "", 0, "goes on"))
		flush(t, e)
		equal(t, "shown while paused", p.got(), []string{"other goes on v0 new"})
		equal(t, "told", told, []string{"g v1"})
		equal(t, "paused", e.Paused(func(string) bool { return true }), []string{"g"})

		p.setFail(errNoRights)
		if !e.Probe("g") {
			t.Fatal("the first probe did not begin")
		}
		flush(t, e)
		if e.Probe("g") {
			t.Error("a second probe within ProbeEvery began")
		}
		equal(t, "told after a refused probe", told, []string{"g v1"})
		time.Sleep(time.Minute)
		if !e.Probe("g") {
			t.Fatal("no probe after ProbeEvery")
		}
		flush(t, e)
		equal(t, "shown after the pause", p.got()[1:], []string{"g v2 v2 new", "g n2 v0 new", "g n3 v0 new"})
		if got := e.Paused(func(string) bool { return true }); len(got) != 0 {
			t.Errorf("still paused: %v", got)
		}

		p.setFail(errNoRights)
		e.Enqueue(msg("h", "", 0, "lost"))
		flush(t, e)
		e.Discard(func(it *Item[string]) bool { return it.Dest == "h" })
		if !e.ProbeNow("h") {
			t.Fatal("ProbeNow did not begin")
		}
		flush(t, e)
		e.Enqueue(msg("h", "", 0, "next"))
		flush(t, e)
		equal(t, "after an empty probe", p.got()[4:], []string{"h next v0 new"})
		equal(t, "told", told, []string{"g v1", "h lost"})
	})
}

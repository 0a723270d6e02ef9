// Package outbox is the message queue both chat adapters are built on. It keeps one FIFO queue
// per destination (a chat, a channel, a user's private chat) with a worker of its own, so a slow
// or rate-limited destination holds back only itself. Editable messages are merged by Key, the
// newest version winning, and a record of which platform message shows which Key lets an edit
// replace a send, and lets a send that would change nothing be skipped before it waits for any
// rate limit (a restart publishes everything again). Failures are handled by class — wait and
// retry, retry a few times, send anew, pause the destination, give up on it, drop — so no
// adapter matches error strings. A queue can be held while an interaction shows one of its
// messages itself, and Flush drains every queue without polling.
//
// A destination that refuses the bot for now (it lost the right to post, a forum topic was
// closed, a channel went out of its sight) is paused, next to held: its messages wait there, the
// newest version of each Key and the newest one-off messages, and nothing is sent until a probe
// tries the first of them again; the first that goes through ends the pause. Both chat adapters
// pause the table of such a place (Config.Paused), so that nobody plays on where nobody sees it.
//
// Several copies of the bot on one store (Config.Shared) each run an engine, and the same keyed
// message may reach two of them (each delivers every editable message at its start, a table's
// moves may be committed at either). Their records are then the store's, not the engine's: each
// send of a keyed message first claims the record by compare-and-swap (table.Swapper), sends
// under the claim and settles the record with what it showed, so a message is posted once (a
// copy that finds a claim waits for it, then edits what the claimer posted) and never edited
// back to an older version (it skips a version older than the record's).
//
// An adapter supplies a Platform: its rate limits (Wait), how to show a message (Show) and what
// its library's errors mean (Classify). Its own data for each message (a reply-to, a mention)
// is the engine's type parameter D: one item, typed, with no copy of the engine's fields.
package outbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// Item is one message on its way to a destination, with the adapter's data D.
type Item[D any] struct {
	Dest    string      // the adapter's name of the destination; one queue each
	Msg     api.Message // what to show
	Key     string      // the record key: Msg.Key for editable messages, "" for a new message every time
	Version uint64      // rises with the content; an older version never replaces a newer one
	Sum     uint64      // what it shows (see Digest): a keyed message already showing it is not sent
	Repost  bool        // show it anew at the bottom of the chat, the old message going
	Data    D           // the adapter's own (a reply-to, a mention, ...)
	tries   int
}

// Once reports whether the item is a keyed message that is shown once and never edited (a game's
// or a match's summary): its Key's record means it is out. Such messages follow from the stored
// state like the editable ones (core/table's timeline), so they are delivered again after a
// restart or a take-over, and the record is what tells each of them once.
func (it *Item[D]) Once() bool { return it.Key != "" && it.Msg.Kind == api.KindSummary }

// Record is the platform message that shows a Key, and what it shows.
type Record struct {
	Chat    string // where the message is
	ID      string // the platform's message ID
	Version uint64
	Sum     uint64
}

// Class says what a failure means for the item and its queue.
type Class uint8

// The classes of failure.
const (
	Transient  Class = iota // the network or the server failed: try again a few times, later
	RetryAfter              // rate limited: wait Error.After, then try again
	Gone                    // the message to edit is gone or may not be edited: send it anew
	Forbidden               // the destination refuses the bot: give its queue to Platform.Refused
	// Paused: the destination refuses the bot for now and may take its messages later (no right
	// to post, a closed topic, a channel out of sight). The item goes back to the head of its
	// queue, the queue pauses and Config.Paused is told; nothing is sent there until Probe.
	Paused
	BadRequest // the platform refuses this message: drop it and say so
	Drop       // nothing to send after all (the adapter decided): drop it quietly
	// Moved: the destination has a new name (a Telegram group became a supergroup). The item and
	// its queue go to Error.To, and Config.Moved is told.
	Moved
)

// Error is a classified failure.
type Error struct {
	Class Class
	After time.Duration // for RetryAfter
	To    string        // for Moved: the destination's new name
	Err   error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Platform is what an adapter provides, for items with its data D.
type Platform[D any] interface {
	// Wait blocks until one more message may go to dest under the platform's limits, or ctx ends.
	Wait(ctx context.Context, dest string) error
	// Show makes the item visible and gives the chat and ID of the message that shows it: an
	// edit of rec's message, or (rec nil, or the item a Repost) a new message.
	Show(ctx context.Context, it *Item[D], rec *Record) (chat, id string, err error)
	// Classify tells what an error of Show means.
	Classify(err error) *Error
	// Refused gets the items of a destination that refuses the bot (the failed one first); the
	// queue is empty afterwards. The adapter may remember the refusal and queue other messages.
	Refused(dest string, items []*Item[D], err error)
}

// Config sets an Engine up. Platform, KV and Bucket are required.
type Config[D any] struct {
	Platform Platform[D]
	KV       table.KV
	Bucket   string // the KV bucket of the records
	Log      *slog.Logger
	// MaxQueue bounds a destination's queue; a new message beyond it is dropped and logged
	// (keyed messages merge into their queued versions and never count twice). Default 256.
	MaxQueue int
	// Tries bounds the attempts of a message whose sends fail transiently. Default 3.
	Tries int
	// Backoff is the wait before the n-th retry of a transient failure, n from 1. Default 1 s,
	// 2 s, 4 s ...
	Backoff func(n int) time.Duration
	// Merge takes a newer item into a queued one of the same Key (both locked); the default
	// keeps the newer content. Adapters with their own Data merge it here.
	Merge func(queued, newer *Item[D])
	// WriteBack is how often edited records are written to the KV; a crash loses at most that
	// much of them (the messages are then edited once more). Default 30 s.
	WriteBack time.Duration
	// Moved, if set, is told when a send found its destination moved (class Moved), after the
	// destination's queue went to the new one. It runs in the queue's worker.
	Moved func(from, to string)
	// Paused, if set, is told when a destination pauses (a send classed Paused), with the item
	// that was refused; not again while it stays paused. It runs in the queue's worker, outside
	// the engine's locks, so it may call the table service (to pause the place's table).
	Paused func(dest string, it *Item[D])
	// MaxPaused bounds the one-off messages a paused destination keeps: beyond it the oldest
	// goes (keyed messages keep their newest version and never count). Default 32.
	MaxPaused int
	// ProbeEvery is how often at most Probe tries a paused destination again: each try the
	// destination refuses is a request the platform counts against the bot. Default 1 min.
	ProbeEvery time.Duration
	// Shared says several copies of the bot deliver through this KV (store: etcd): every record
	// is read from it afresh and moves by compare-and-swap (KV must be a table.Swapper), a send
	// of a keyed message under a claim of its record. Off, the engine is the only writer of its
	// records and keeps them in memory in front of the KV.
	Shared bool
	// ClaimTTL is how long a shared record's claim holds: a copy that died while sending leaves
	// its claim, and another copy takes the message over after this long. Longer than a send may
	// take (the adapter's request timeout). Default 45 s.
	ClaimTTL time.Duration
	// Fence, if set, gives the fence under which this copy tells a message now (of several
	// copies, the lease of its place's partition as this copy holds it, written as a string;
	// "" none). A shared record's claim carries it, and a claim under another fence than the
	// one the claiming copy holds now is dead at once: its maker lost the place (one copy holds
	// a lease at a time), so a copy killed while it sent holds the place's messages up only as
	// long as its lease, not ClaimTTL.
	Fence func(m api.Message) string
	// Now is the clock of the claims; default time.Now.
	Now func() time.Time
	// Tells, if set, says whether this copy tells a message now (chat.Teller: of several copies,
	// only a place's owner tells its timeline). A message it does not tell is dropped quietly,
	// when it is queued and again just before it is sent (the copy may have lost the place
	// meanwhile; the new owner tells it). A repost is not asked: it answers a request this copy
	// took.
	Tells func(m api.Message) bool
	// Out, if set, is told of each keyed item that is out: sent, or skipped because its message
	// shows it already (another copy, or this one before a restart, showed it). It runs in the
	// queue's worker, outside the engine's locks, so it may call the table service (Shown: the
	// state a public message shows, which computer players wait for).
	Out func(it *Item[D])
}

// Engine runs the queues of items with the adapter's data D.
type Engine[D any] struct {
	cfg  Config[D]
	recs records

	mu      sync.Mutex
	changed *sync.Cond // queue state changed: for Flush, Take and Close
	queues  map[string]*queue[D]
	closing bool
	running int // workers

	life     context.Context // ends when Close gives up on what is queued
	lifeStop context.CancelFunc
	stopTick chan struct{}
	stats    Stats
}

// Stats count what happened, for metrics: messages sent, skipped (nothing had changed), dropped
// (a full queue, a shutdown), failed (given up on), and the platform's rate limits hit.
type Stats struct {
	Sent, Skipped, Dropped, Failed, RateLimited uint64
}

type queue[D any] struct {
	dest     string
	items    []*Item[D]
	running  bool
	held     bool
	inflight string // the Key being sent, or ""
	// paused: the destination refuses the bot for now (class Paused); probing: a probe lets the
	// worker try its first item again; probed: when the last probe began.
	paused, probing bool
	probed          time.Time
}

// waiting reports whether the queue's items wait for something other than their turn: a hold,
// or a pause that no probe is trying (e.mu held).
func (q *queue[D]) waiting() bool { return q.held || q.paused && !q.probing }

// New makes an engine; its records are written back every Config.WriteBack until Close.
func New[D any](cfg Config[D]) *Engine[D] {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxQueue <= 0 {
		cfg.MaxQueue = 256
	}
	if cfg.Tries <= 0 {
		cfg.Tries = 3
	}
	if cfg.Backoff == nil {
		cfg.Backoff = func(n int) time.Duration { return time.Second << min(n-1, 6) }
	}
	if cfg.Merge == nil {
		cfg.Merge = func(queued, newer *Item[D]) {}
	}
	if cfg.WriteBack <= 0 {
		cfg.WriteBack = 30 * time.Second
	}
	if cfg.MaxPaused <= 0 {
		cfg.MaxPaused = 32
	}
	if cfg.ProbeEvery <= 0 {
		cfg.ProbeEvery = time.Minute
	}
	if cfg.ClaimTTL <= 0 {
		cfg.ClaimTTL = 45 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	e := &Engine[D]{cfg: cfg, queues: map[string]*queue[D]{}, stopTick: make(chan struct{})}
	e.changed = sync.NewCond(&e.mu)
	// The engine's workers live from New to Close, not with any caller's request: life is
	// theirs, ended by Close.
	e.life, e.lifeStop = context.WithCancel(context.Background())
	e.recs.init(cfg.KV, cfg.Bucket, cfg.Log)
	if cfg.Shared {
		sw, ok := cfg.KV.(table.Swapper)
		if !ok {
			panic("outbox: Config.Shared needs a KV that is a table.Swapper")
		}
		e.recs.share(sw, cfg.ClaimTTL, cfg.Now)
	}
	go e.tick()
	return e
}

func (e *Engine[D]) tick() {
	t := time.NewTicker(e.cfg.WriteBack)
	defer t.Stop()
	for {
		select {
		case <-e.stopTick:
			return
		case <-t.C:
			e.recs.writeBack()
		}
	}
}

// Digest fingerprints what a message shows, for Item.Sum: its title, text, picture and buttons
// (without the sequence numbers the buttons carry: a button stays valid until its presser acts,
// so a message whose only change is newer sequence numbers need not be edited). extra is what
// else the adapter shows with it (a mention, a link).
func Digest(m api.Message, extra ...string) uint64 {
	h := m.Digest()
	for _, x := range extra {
		h = api.HashString(h, x)
	}
	return h
}

// Enqueue adds an item to its destination's queue, merging it into a queued item of the same
// Key (the newer version's content wins).
func (e *Engine[D]) Enqueue(it *Item[D]) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closing {
		e.stats.Dropped++
		e.cfg.Log.Warn("message after Close dropped", "dest", it.Dest, "key", it.Key)
		return
	}
	if !e.tells(it) {
		e.stats.Skipped++
		return
	}
	q := e.queue(it.Dest)
	if it.Key != "" {
		for _, old := range q.items {
			if old.Key == it.Key {
				e.merge(old, it)
				return
			}
		}
	} else if q.paused && e.oneOffs(q) >= e.cfg.MaxPaused {
		// A destination that refuses the bot keeps its newest messages: the oldest one-off goes.
		for i, old := range q.items {
			if old.Key == "" {
				q.items = append(q.items[:i:i], q.items[i+1:]...)
				break
			}
		}
		e.stats.Dropped++
		e.cfg.Log.Warn("a paused destination keeps only its newest messages: the oldest dropped", "dest", it.Dest)
	} else if len(q.items) >= e.cfg.MaxQueue {
		e.stats.Dropped++
		e.cfg.Log.Warn("queue full: message dropped", "dest", it.Dest, "kind", it.Msg.Kind, "queued", len(q.items))
		return
	}
	q.items = append(q.items, it)
	e.start(q)
}

// tells reports whether this copy tells the item (Config.Tells).
func (e *Engine[D]) tells(it *Item[D]) bool {
	return e.cfg.Tells == nil || it.Repost || e.cfg.Tells(it.Msg)
}

// oneOffs counts a queue's items without a Key (e.mu held).
func (e *Engine[D]) oneOffs(q *queue[D]) int {
	n := 0
	for _, it := range q.items {
		if it.Key == "" {
			n++
		}
	}
	return n
}

func (e *Engine[D]) merge(old, it *Item[D]) {
	if it.Version >= old.Version {
		old.Msg, old.Version, old.Sum = it.Msg, it.Version, it.Sum
	}
	old.Repost = old.Repost || it.Repost
	e.cfg.Merge(old, it)
}

// queue gives dest's queue, making it (e.mu held).
func (e *Engine[D]) queue(dest string) *queue[D] {
	q := e.queues[dest]
	if q == nil {
		q = &queue[D]{dest: dest}
		e.queues[dest] = q
	}
	return q
}

// start runs the queue's worker if it has work and may run; it forgets an idle queue, but not a
// paused one (e.mu held).
func (e *Engine[D]) start(q *queue[D]) {
	switch {
	case q.running || q.waiting():
	case len(q.items) > 0:
		q.running = true
		e.running++
		go e.work(q)
	case q.paused: // a probe found nothing to try: the next message will
		q.paused, q.probing = false, false
		fallthrough
	default:
		delete(e.queues, q.dest)
	}
}

// work sends a queue's items in order until it is empty, held or paused.
func (e *Engine[D]) work(q *queue[D]) {
	defer func() {
		if p := recover(); p != nil {
			e.cfg.Log.Error("outbox worker panicked; its queue is dropped", "dest", q.dest, "panic", fmt.Sprint(p))
			e.mu.Lock()
			q.items, q.inflight = nil, ""
			e.stop(q)
			e.mu.Unlock()
		}
	}()
	for {
		e.mu.Lock()
		if skipped := e.skipShown(q); len(skipped) > 0 {
			e.mu.Unlock()
			e.out(skipped...)
			continue
		}
		if len(q.items) == 0 || q.waiting() {
			e.stop(q)
			e.mu.Unlock()
			return
		}
		dest := q.dest
		head := q.items[0]
		key, version, sum, repost, once := head.Key, head.Version, head.Sum, head.Repost, head.Once()
		e.mu.Unlock()
		if e.recs.shared() && key != "" && !repost && e.recs.stale(key, version, sum, once) {
			// Another copy showed it already: skipped before it waits for any limit (each
			// copy delivers every editable message at its start).
			e.mu.Lock()
			skipped := len(q.items) > 0 && q.items[0] == head && head.Version == version
			if skipped {
				q.items = q.items[1:]
				e.stats.Skipped++
			}
			e.mu.Unlock()
			if skipped {
				e.out(head)
			}
			continue
		}
		if err := e.cfg.Platform.Wait(e.life, dest); err != nil {
			e.mu.Lock()
			n := len(q.items)
			q.items = nil
			e.stats.Dropped += uint64(n)
			e.stop(q)
			e.mu.Unlock()
			e.cfg.Log.Warn("messages not sent before shutdown", "dest", dest, "count", n)
			return
		}
		e.mu.Lock()
		if len(q.items) == 0 || q.waiting() { // taken by a hold, or paused, while the limit was waited for
			e.mu.Unlock()
			continue
		}
		it := q.items[0]
		q.items[0] = nil
		q.items = q.items[1:]
		q.inflight = it.Key
		e.mu.Unlock()
		if !e.tells(it) { // the place went to another copy while this one waited
			e.count(func(s *Stats) { s.Skipped++ })
		} else {
			e.send(q, it)
		}
		e.mu.Lock()
		q.inflight = ""
		e.changed.Broadcast()
		e.mu.Unlock()
	}
}

// stop ends a queue's worker (e.mu held).
func (e *Engine[D]) stop(q *queue[D]) {
	q.running = false
	e.running--
	e.start(q) // a hold released meanwhile may want it again; else the queue is forgotten
	e.changed.Broadcast()
}

// skipShown drops the keyed items at the head of a queue that would change nothing: their
// message already shows this content or a newer version. They cost no request, so they wait for
// no limit (e.mu held).
func (e *Engine[D]) skipShown(q *queue[D]) (skipped []*Item[D]) {
	for len(q.items) > 0 {
		it := q.items[0]
		if it.Key == "" || it.Repost {
			return skipped
		}
		if e.recs.shared() {
			// The cache is only what this copy saw last: only an older version is surely stale.
			if rec, ok := e.recs.cached(it.Key); !ok || it.Version >= rec.Version && !it.Once() {
				return skipped
			}
		} else if rec, ok := e.recs.get(it.Key); !ok || it.Version >= rec.Version && it.Sum != rec.Sum && !it.Once() {
			return skipped
		}
		q.items = q.items[1:]
		e.stats.Skipped++
		skipped = append(skipped, it)
	}
	return skipped
}

// out tells Config.Out of keyed items that are out (no lock held).
func (e *Engine[D]) out(items ...*Item[D]) {
	if e.cfg.Out == nil {
		return
	}
	for _, it := range items {
		if it.Key != "" {
			e.cfg.Out(it)
		}
	}
}

// send shows one item and deals with the outcome.
func (e *Engine[D]) send(q *queue[D], it *Item[D]) {
	var rec *Record
	var cl *claimed
	if it.Key != "" && e.recs.shared() {
		var skip bool
		var err error
		var fence string
		if e.cfg.Fence != nil {
			fence = e.cfg.Fence(it.Msg)
		}
		cl, skip, err = e.recs.claim(e.life, it.Key, it.Version, it.Sum, it.Repost, it.Once(), fence)
		switch {
		case skip:
			e.count(func(s *Stats) { s.Skipped++ })
			e.out(it)
			return
		case err != nil:
			e.storeFailed(q, it, err)
			return
		}
		rec = cl.shown
	} else if it.Key != "" {
		if r, ok := e.recs.get(it.Key); ok && it.Once() {
			e.count(func(s *Stats) { s.Skipped++ })
			return
		} else if ok {
			rec = &r
		}
	}
	chat, id, err := e.cfg.Platform.Show(e.life, it, rec)
	var ce *Error
	if err != nil {
		ce = e.cfg.Platform.Classify(err)
		if ce.Class == Gone && rec != nil {
			e.cfg.Log.Info("the message to edit is gone; sending it anew", "dest", it.Dest, "key", it.Key)
			rec = nil
			if chat, id, err = e.cfg.Platform.Show(e.life, it, nil); err != nil {
				ce = e.cfg.Platform.Classify(err)
			}
		}
	}
	e.mu.Lock()
	if q.paused && (err == nil || ce.Class != Paused) {
		// The destination answered otherwise than with a refusal of the bot: the pause is over.
		q.paused, q.probing = false, false
		e.cfg.Log.Info("a paused destination takes messages again", "dest", it.Dest)
	}
	e.mu.Unlock()
	if cl != nil {
		if err == nil {
			e.recs.settle(cl, Record{Chat: chat, ID: id, Version: it.Version, Sum: it.Sum})
		} else {
			e.recs.unclaim(cl)
		}
	}
	if err == nil {
		e.count(func(s *Stats) { s.Sent++ })
		if it.Key != "" && cl == nil {
			moved := rec == nil || rec.Chat != chat || rec.ID != id
			// A new message's record must survive a crash, or the message would be posted twice;
			// an edit's can wait for the next write-back.
			e.recs.put(it.Key, Record{Chat: chat, ID: id, Version: it.Version, Sum: it.Sum}, moved)
		}
		e.out(it)
		return
	}
	err = ce.Err // what the adapter made of it: safe to log
	switch ce.Class {
	case RetryAfter:
		e.count(func(s *Stats) { s.RateLimited++ })
		e.cfg.Log.Warn("rate limited: waiting", "dest", it.Dest, "retry_after", ce.After)
		e.requeue(q, it)
		sleep(e.life, ce.After)
	case Transient:
		it.tries++
		if it.tries < e.cfg.Tries && e.life.Err() == nil {
			e.cfg.Log.Warn("send failed; retrying", "dest", it.Dest, "try", it.tries, "err", err)
			e.requeue(q, it)
			sleep(e.life, e.cfg.Backoff(it.tries))
			return
		}
		e.failed(it, err)
	case Forbidden:
		e.mu.Lock()
		rest := q.items
		q.items = nil
		e.mu.Unlock()
		e.cfg.Platform.Refused(it.Dest, append([]*Item[D]{it}, rest...), err)
	case Paused:
		e.requeue(q, it)
		e.mu.Lock()
		first := !q.paused
		q.paused, q.probing = true, false
		e.mu.Unlock()
		if first {
			e.cfg.Log.Warn("the destination refuses the bot for now: its messages wait", "dest", it.Dest, "err", err)
			if e.cfg.Paused != nil {
				e.cfg.Paused(it.Dest, it)
			}
		}
	case Moved:
		from := it.Dest
		e.cfg.Log.Info("the destination moved; its queue follows", "dest", from, "to", ce.To)
		e.mu.Lock()
		items := append([]*Item[D]{it}, q.items...)
		q.items = nil
		e.moveLocked(items, ce.To)
		e.mu.Unlock()
		if e.cfg.Moved != nil {
			e.cfg.Moved(from, ce.To)
		}
	case Drop:
	default:
		e.failed(it, err)
	}
}

// storeFailed handles a send whose record could not be claimed (the store is unreachable): the
// item is tried again a few times, as after a transient failure.
func (e *Engine[D]) storeFailed(q *queue[D], it *Item[D], err error) {
	it.tries++
	if it.tries < e.cfg.Tries && e.life.Err() == nil {
		e.cfg.Log.Warn("claiming a message record failed; retrying", "dest", it.Dest, "key", it.Key, "try", it.tries, "err", err)
		e.requeue(q, it)
		sleep(e.life, e.cfg.Backoff(it.tries))
		return
	}
	e.failed(it, err)
}

func (e *Engine[D]) count(f func(*Stats)) {
	e.mu.Lock()
	f(&e.stats)
	e.mu.Unlock()
}

func (e *Engine[D]) failed(it *Item[D], err error) {
	e.count(func(s *Stats) { s.Failed++ })
	e.cfg.Log.Warn("message dropped", "dest", it.Dest, "kind", it.Msg.Kind, "key", it.Key, "err", err)
}

// requeue puts an item that failed back at the head of its queue, or into a newer queued version
// of its Key.
func (e *Engine[D]) requeue(q *queue[D], it *Item[D]) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if it.Key != "" {
		for _, old := range q.items {
			if old.Key == it.Key {
				e.merge(old, it)
				old.tries = it.tries
				return
			}
		}
	}
	q.items = append([]*Item[D]{it}, q.items...)
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// Hold holds a destination's queue while an interaction shows one of its messages itself: nothing
// is sent meanwhile, so no older version can overtake a newer one. It gives nil if the queue is
// held already (a double click).
func (e *Engine[D]) Hold(dest string) *Hold[D] {
	e.mu.Lock()
	defer e.mu.Unlock()
	q := e.queue(dest)
	if q.held {
		return nil
	}
	q.held = true
	return &Hold[D]{e: e, q: q}
}

// Hold is a held queue.
type Hold[D any] struct {
	e        *Engine[D]
	q        *queue[D]
	back     *Item[D]
	released bool
}

// maxTakeWait bounds how long Take waits for an older version of its item that is being sent.
const maxTakeWait = 100 * time.Millisecond

// Take removes the first queued item that match accepts, to be shown by the caller. If an
// older version of its Key is being sent right now, it waits a moment for that send to end (the
// held queue sends nothing after it), and gives up if it takes too long.
func (h *Hold[D]) Take(match func(*Item[D]) bool) (*Item[D], bool) {
	if h == nil {
		return nil, false
	}
	e, q := h.e, h.q
	e.mu.Lock()
	defer e.mu.Unlock()
	deadline := time.Now().Add(maxTakeWait)
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		i := -1
		for j, it := range q.items {
			if match(it) {
				i = j
				break
			}
		}
		if i < 0 {
			return nil, false
		}
		it := q.items[i]
		if it.Key == "" || q.inflight != it.Key {
			q.items = append(q.items[:i], q.items[i+1:]...)
			return it, true
		}
		if !time.Now().Before(deadline) {
			return nil, false
		}
		if timer == nil {
			timer = time.AfterFunc(maxTakeWait, func() {
				e.mu.Lock()
				e.changed.Broadcast()
				e.mu.Unlock()
			})
		}
		e.changed.Wait()
	}
}

// GiveBack returns a taken item the caller could not show: it is sent after all at Release.
func (h *Hold[D]) GiveBack(it *Item[D]) { h.back = it }

// Release ends the hold (once; a nil hold is none). An item given back goes to the front of the
// queue, unless a newer version of it is waiting.
func (h *Hold[D]) Release() {
	if h == nil || h.released {
		return
	}
	h.released = true
	e, q := h.e, h.q
	e.mu.Lock()
	defer e.mu.Unlock()
	q.held = false
	if it := h.back; it != nil {
		merged := false
		for _, old := range q.items {
			if it.Key != "" && old.Key == it.Key {
				merged = true
			}
		}
		if !merged {
			q.items = append([]*Item[D]{it}, q.items...)
		}
	}
	e.start(q) // a held queue is never forgotten, so q is still the destination's
	e.changed.Broadcast()
}

// Probe has a paused destination try its first waiting message again, unless it was tried less
// than Config.ProbeEvery ago: the adapter heard from the place, so it may take messages again.
// If it does, the pause ends and the rest follows; if it refuses, the destination stays paused
// (Config.Paused is not told again). It reports whether a try began.
func (e *Engine[D]) Probe(dest string) bool { return e.probe(dest, false) }

// ProbeNow is Probe at once, however recent the last try: the platform said the destination
// takes the bot's messages again (its rights came back).
func (e *Engine[D]) ProbeNow(dest string) bool { return e.probe(dest, true) }

func (e *Engine[D]) probe(dest string, now bool) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	q, ok := e.queues[dest]
	if !ok || !q.paused || q.probing || !now && time.Since(q.probed) < e.cfg.ProbeEvery {
		return false
	}
	q.probing, q.probed = true, time.Now()
	e.start(q)
	e.changed.Broadcast()
	return true
}

// Paused lists the paused destinations that match.
func (e *Engine[D]) Paused(match func(dest string) bool) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for d, q := range e.queues {
		if q.paused && match(d) {
			out = append(out, d)
		}
	}
	return out
}

// Move sends what waits for one destination to another from now on, in its order and ahead of
// what waits there already (it is older); a Key queued at both is sent once, in its newer
// version. An item being sent to from right now is not moved: its send fails, and is classified,
// as the platform decides. It gives how many items moved.
func (e *Engine[D]) Move(from, to string) int {
	if from == to {
		return 0
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	q, ok := e.queues[from]
	if !ok || len(q.items) == 0 {
		return 0
	}
	items := q.items
	q.items = nil
	e.moveLocked(items, to)
	if !q.running && !q.held {
		delete(e.queues, from)
	}
	return len(items)
}

// moveLocked puts items at the head of dest's queue (e.mu held).
func (e *Engine[D]) moveLocked(items []*Item[D], dest string) {
	tq := e.queue(dest)
	rest := tq.items
	for _, it := range items {
		it.Dest = dest
		if it.Key == "" {
			continue
		}
		for i, later := range rest {
			if later.Key == it.Key {
				e.merge(it, later)
				rest = append(rest[:i:i], rest[i+1:]...)
				break
			}
		}
	}
	tq.items = append(items, rest...)
	e.start(tq)
	e.changed.Broadcast()
}

// Discard drops the waiting items that match, in every queue: those for a destination that will
// never take them (the bot was removed from a group), or of a table nobody will see. An item
// being sent is not dropped. A paused destination stays paused. It gives how many it dropped.
func (e *Engine[D]) Discard(match func(*Item[D]) bool) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for dest, q := range e.queues {
		kept := q.items[:0]
		for _, it := range q.items {
			if match(it) {
				n++
			} else {
				kept = append(kept, it)
			}
		}
		clear(q.items[len(kept):])
		q.items = kept
		if len(q.items) == 0 && !q.running && !q.held && !q.paused {
			delete(e.queues, dest)
		}
	}
	e.stats.Dropped += uint64(n)
	e.changed.Broadcast()
	return n
}

// Record gives the record of a Key (shared: as the store has it now).
func (e *Engine[D]) Record(key string) (Record, bool) {
	if e.recs.shared() {
		return e.recs.fresh(key)
	}
	return e.recs.get(key)
}

// Shown records that a Key's message shows this content now, shown by someone else than the
// engine (an interaction's response). Shared, a record of a newer version is kept.
func (e *Engine[D]) Shown(key string, rec Record) {
	if e.recs.shared() {
		e.recs.shownShared(key, rec)
		return
	}
	e.recs.put(key, rec, false)
}

// Forget drops a Key's record: nothing will edit its message any more.
func (e *Engine[D]) Forget(key string) { e.recs.forget(key) }

// Queued gives how many items wait in all queues, and how many queues there are.
func (e *Engine[D]) Queued() (items, queues int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, q := range e.queues {
		items += len(q.items)
	}
	return items, len(e.queues)
}

// NoteRateLimited counts a rate limit the platform's library waited out by itself.
func (e *Engine[D]) NoteRateLimited() { e.count(func(s *Stats) { s.RateLimited++ }) }

// Stats gives the counters.
func (e *Engine[D]) Stats() Stats {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.stats
}

// Flush waits until every queue is empty and its worker done (held and paused queues aside), then
// writes the edited records to the KV; or gives up when ctx ends.
func (e *Engine[D]) Flush(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() {
		e.mu.Lock()
		e.changed.Broadcast()
		e.mu.Unlock()
	})
	defer stop()
	e.mu.Lock()
	for !e.idle() && ctx.Err() == nil {
		e.changed.Wait()
	}
	e.mu.Unlock()
	e.recs.writeBack()
	return ctx.Err()
}

// idle reports whether nothing is queued or being sent (e.mu held).
func (e *Engine[D]) idle() bool {
	if e.running > 0 {
		return false
	}
	for _, q := range e.queues {
		if len(q.items) > 0 && !q.waiting() {
			return false
		}
	}
	return true
}

// Close stops taking items, sends what is queued for at most d, gives up on the rest and writes
// the records back. Later calls do nothing.
func (e *Engine[D]) Close(d time.Duration) {
	e.mu.Lock()
	if e.closing {
		e.mu.Unlock()
		return
	}
	e.closing = true
	e.mu.Unlock()
	// Close's last sends have their own bound, d: the caller's context has usually ended (a
	// SIGTERM) when the queue is drained.
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	if err := e.Flush(ctx); err != nil {
		items, _ := e.Queued()
		e.cfg.Log.Warn("closing with messages still queued", "count", items)
	}
	e.mu.Lock()
	paused := 0
	for _, q := range e.queues {
		if q.paused {
			paused += len(q.items)
		}
	}
	e.mu.Unlock()
	if paused > 0 {
		// The service delivers every editable message again at the next start.
		e.cfg.Log.Info("closing with messages waiting for destinations that refuse the bot", "count", paused)
	}
	e.lifeStop()
	e.mu.Lock()
	for e.running > 0 {
		e.changed.Wait()
	}
	e.mu.Unlock()
	close(e.stopTick)
	e.recs.writeBack()
}

// records caches the KV's records in front of it: a new message's record is written at once, an
// edit's is written back later (every KV write is a transaction, two fsyncs on bbolt, that would
// otherwise compete with the service's commits on every edit).
type records struct {
	mu     sync.Mutex
	kv     table.KV
	bucket string
	log    *slog.Logger
	recs   map[string]Record
	dirty  map[string]bool
	// Shared records (shared.go): the store's compare-and-swap, how long a claim holds, the
	// claims' clock, and this engine's name in its claims.
	sw    table.Swapper
	ttl   time.Duration
	now   func() time.Time
	owner string
	// ctx is for the records' KV reads and writes. The records outlive the engine's life (the
	// last write-back comes after Close gave up on the queue), so they own their own: each call
	// is bounded by the store's timeout.
	ctx context.Context
}

// maxCached bounds the records kept in memory; beyond it the clean ones are dropped at the next
// write-back.
const maxCached = 4096

func (r *records) init(kv table.KV, bucket string, log *slog.Logger) {
	r.kv, r.bucket, r.log = kv, bucket, log
	// The records outlive the engine's life (Close writes them back after it gave up on the
	// queue), so they own their context; each KV call is bounded by the store's own timeout.
	r.ctx = context.Background()
	r.recs, r.dirty = map[string]Record{}, map[string]bool{}
}

func (r *records) get(key string) (Record, bool) {
	r.mu.Lock()
	rec, ok := r.recs[key]
	r.mu.Unlock()
	if ok {
		return rec, true
	}
	b, found, err := r.kv.Get(r.ctx, r.bucket, key)
	if err != nil {
		r.log.Error("reading a message record", "key", key, "err", err)
		return rec, false
	}
	if !found {
		return rec, false
	}
	if err := json.Unmarshal(b, &rec); err != nil || rec.ID == "" {
		r.log.Warn("unreadable message record; the message is sent anew", "key", key, "err", err)
		return Record{}, false
	}
	r.mu.Lock()
	if _, ok := r.recs[key]; !ok {
		r.recs[key] = rec
	}
	r.mu.Unlock()
	return rec, true
}

func (r *records) put(key string, rec Record, durable bool) {
	r.mu.Lock()
	r.recs[key] = rec
	if durable {
		delete(r.dirty, key)
	} else {
		r.dirty[key] = true
	}
	n := len(r.recs)
	r.mu.Unlock()
	if durable {
		b, _ := json.Marshal(rec)
		if err := r.kv.Put(r.ctx, r.bucket, key, b); err != nil {
			r.log.Error("saving a message record", "key", key, "err", err)
			r.mu.Lock()
			r.dirty[key] = true
			r.mu.Unlock()
		}
	}
	if n > maxCached {
		r.writeBack()
	}
}

func (r *records) forget(key string) {
	r.mu.Lock()
	delete(r.recs, key)
	delete(r.dirty, key)
	r.mu.Unlock()
	if err := r.kv.Delete(r.ctx, r.bucket, key); err != nil {
		r.log.Error("pruning a message record", "key", key, "err", err)
	}
}

// writeBack writes the edited records to the KV and, when the cache is large, drops the clean ones.
func (r *records) writeBack() {
	r.mu.Lock()
	todo := make(map[string]Record, len(r.dirty))
	for k := range r.dirty {
		todo[k] = r.recs[k]
	}
	clear(r.dirty)
	r.mu.Unlock()
	for k, rec := range todo {
		b, _ := json.Marshal(rec)
		if err := r.kv.Put(r.ctx, r.bucket, k, b); err != nil {
			r.log.Error("saving a message record", "key", k, "err", err)
			r.mu.Lock()
			r.dirty[k] = true
			r.mu.Unlock()
		}
	}
	r.mu.Lock()
	if len(r.recs) > maxCached {
		for k := range r.recs {
			if !r.dirty[k] {
				delete(r.recs, k)
			}
		}
	}
	r.mu.Unlock()
}

// MarshalJSON writes a record compactly.
func (r Record) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Chat    string `json:"c"`
		ID      string `json:"m"`
		Version uint64 `json:"v"`
		Sum     uint64 `json:"s"`
	}{r.Chat, r.ID, r.Version, r.Sum})
}

// UnmarshalJSON reads a record, also as the adapters wrote them before this package: Telegram's
// with numbers for the chat and message, Discord's with "id". (Their content sums were computed
// otherwise, so such a message is edited once more.)
func (r *Record) UnmarshalJSON(b []byte) error {
	var raw struct {
		Chat    json.RawMessage `json:"c"`
		ID      json.RawMessage `json:"m"`
		OldID   string          `json:"id"`
		Version uint64          `json:"v"`
		Sum     uint64          `json:"s"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	text := func(m json.RawMessage) string {
		var s string
		if json.Unmarshal(m, &s) == nil {
			return s
		}
		var n json.Number
		if json.Unmarshal(m, &n) == nil {
			return n.String()
		}
		return ""
	}
	r.Chat, r.ID, r.Version, r.Sum = text(raw.Chat), text(raw.ID), raw.Version, raw.Sum
	if r.ID == "" {
		r.ID = raw.OldID
	}
	if r.ID == "" {
		return errors.New("a message record without a message ID")
	}
	return nil
}

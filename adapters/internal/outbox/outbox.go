// Package outbox is the message queue both chat adapters are built on. It keeps one FIFO queue
// per destination (a chat, a channel, a user's private chat) with a worker of its own, so a slow
// or rate-limited destination holds back only itself. Editable messages are merged by Key, the
// newest version winning, and a record of which platform message shows which Key lets an edit
// replace a send, and lets a send that would change nothing be skipped before it waits for any
// rate limit (a restart publishes everything again). Failures are handled by class — wait and
// retry, retry a few times, send anew, give up on the destination, drop — so no adapter matches
// error strings. A queue can be held while an interaction shows one of its messages itself, and
// Flush drains every queue without polling.
//
// An adapter supplies a Platform: its rate limits (Wait), how to show a message (Show) and what
// its library's errors mean (Classify).
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
)

// Item is one message on its way to a destination.
type Item struct {
	Dest    string        // the adapter's name of the destination; one queue each
	Msg     table.Message // what to show
	Key     string        // the record key: Msg.Key for editable messages, "" for a new message every time
	Version uint64        // rises with the content; an older version never replaces a newer one
	Sum     uint64        // what it shows (see Digest): a keyed message already showing it is not sent
	Repost  bool          // show it anew at the bottom of the chat, the old message going
	Data    any           // the adapter's own (a reply-to, a mention, ...)
	tries   int
}

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
	BadRequest              // the platform refuses this message: drop it and say so
	Drop                    // nothing to send after all (the adapter decided): drop it quietly
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

// Platform is what an adapter provides.
type Platform interface {
	// Wait blocks until one more message may go to dest under the platform's limits, or ctx ends.
	Wait(ctx context.Context, dest string) error
	// Show makes the item visible and gives the chat and ID of the message that shows it: an
	// edit of rec's message, or (rec nil, or the item a Repost) a new message.
	Show(ctx context.Context, it *Item, rec *Record) (chat, id string, err error)
	// Classify tells what an error of Show means.
	Classify(err error) *Error
	// Refused gets the items of a destination that refuses the bot (the failed one first); the
	// queue is empty afterwards. The adapter may remember the refusal and queue other messages.
	Refused(dest string, items []*Item, err error)
}

// Config sets an Engine up. Platform, KV and Bucket are required.
type Config struct {
	Platform Platform
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
	Merge func(queued, newer *Item)
	// WriteBack is how often edited records are written to the KV; a crash loses at most that
	// much of them (the messages are then edited once more). Default 30 s.
	WriteBack time.Duration
	// Moved, if set, is told when a send found its destination moved (class Moved), after the
	// destination's queue went to the new one. It runs in the queue's worker.
	Moved func(from, to string)
}

// Engine runs the queues.
type Engine struct {
	cfg  Config
	recs records

	mu      sync.Mutex
	changed *sync.Cond // queue state changed: for Flush, Take and Close
	queues  map[string]*queue
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

type queue struct {
	dest     string
	items    []*Item
	running  bool
	held     bool
	inflight string // the Key being sent, or ""
}

// New makes an engine; its records are written back every Config.WriteBack until Close.
func New(cfg Config) *Engine {
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
		cfg.Merge = func(queued, newer *Item) {}
	}
	if cfg.WriteBack <= 0 {
		cfg.WriteBack = 30 * time.Second
	}
	e := &Engine{cfg: cfg, queues: map[string]*queue{}, stopTick: make(chan struct{})}
	e.changed = sync.NewCond(&e.mu)
	e.life, e.lifeStop = context.WithCancel(context.Background())
	e.recs.init(cfg.KV, cfg.Bucket, cfg.Log)
	go e.tick()
	return e
}

func (e *Engine) tick() {
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
func Digest(m table.Message, extra ...string) uint64 {
	h := m.Digest()
	for _, x := range extra {
		h = table.HashString(h, x)
	}
	return h
}

// Enqueue adds an item to its destination's queue, merging it into a queued item of the same
// Key (the newer version's content wins).
func (e *Engine) Enqueue(it *Item) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closing {
		e.stats.Dropped++
		e.cfg.Log.Warn("message after Close dropped", "dest", it.Dest, "key", it.Key)
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
	} else if len(q.items) >= e.cfg.MaxQueue {
		e.stats.Dropped++
		e.cfg.Log.Warn("queue full: message dropped", "dest", it.Dest, "kind", it.Msg.Kind, "queued", len(q.items))
		return
	}
	q.items = append(q.items, it)
	e.start(q)
}

func (e *Engine) merge(old, it *Item) {
	if it.Version >= old.Version {
		old.Msg, old.Version, old.Sum = it.Msg, it.Version, it.Sum
	}
	old.Repost = old.Repost || it.Repost
	e.cfg.Merge(old, it)
}

// queue gives dest's queue, making it (e.mu held).
func (e *Engine) queue(dest string) *queue {
	q := e.queues[dest]
	if q == nil {
		q = &queue{dest: dest}
		e.queues[dest] = q
	}
	return q
}

// start runs the queue's worker if it has work and may run; it forgets an idle queue (e.mu held).
func (e *Engine) start(q *queue) {
	switch {
	case q.running || q.held:
	case len(q.items) > 0:
		q.running = true
		e.running++
		go e.work(q)
	default:
		delete(e.queues, q.dest)
	}
}

// work sends a queue's items in order until it is empty or held.
func (e *Engine) work(q *queue) {
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
		e.skipShown(q)
		if len(q.items) == 0 || q.held {
			e.stop(q)
			e.mu.Unlock()
			return
		}
		dest := q.dest
		e.mu.Unlock()
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
		if len(q.items) == 0 || q.held { // taken by a hold while the limit was waited for
			e.mu.Unlock()
			continue
		}
		it := q.items[0]
		q.items[0] = nil
		q.items = q.items[1:]
		q.inflight = it.Key
		e.mu.Unlock()
		e.send(q, it)
		e.mu.Lock()
		q.inflight = ""
		e.changed.Broadcast()
		e.mu.Unlock()
	}
}

// stop ends a queue's worker (e.mu held).
func (e *Engine) stop(q *queue) {
	q.running = false
	e.running--
	e.start(q) // a hold released meanwhile may want it again; else the queue is forgotten
	e.changed.Broadcast()
}

// skipShown drops the keyed items at the head of a queue that would change nothing: their
// message already shows this content or a newer version. They cost no request, so they wait for
// no limit (e.mu held).
func (e *Engine) skipShown(q *queue) {
	for len(q.items) > 0 {
		it := q.items[0]
		if it.Key == "" || it.Repost {
			return
		}
		rec, ok := e.recs.get(it.Key)
		if !ok || it.Version >= rec.Version && it.Sum != rec.Sum {
			return
		}
		q.items = q.items[1:]
		e.stats.Skipped++
	}
}

// send shows one item and deals with the outcome.
func (e *Engine) send(q *queue, it *Item) {
	var rec *Record
	if it.Key != "" {
		if r, ok := e.recs.get(it.Key); ok {
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
	if err == nil {
		e.count(func(s *Stats) { s.Sent++ })
		if it.Key != "" {
			moved := rec == nil || rec.Chat != chat || rec.ID != id
			// A new message's record must survive a crash, or the message would be posted twice;
			// an edit's can wait for the next write-back.
			e.recs.put(it.Key, Record{Chat: chat, ID: id, Version: it.Version, Sum: it.Sum}, moved)
		}
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
		e.cfg.Platform.Refused(it.Dest, append([]*Item{it}, rest...), err)
	case Moved:
		from := it.Dest
		e.cfg.Log.Info("the destination moved; its queue follows", "dest", from, "to", ce.To)
		e.mu.Lock()
		items := append([]*Item{it}, q.items...)
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

func (e *Engine) count(f func(*Stats)) {
	e.mu.Lock()
	f(&e.stats)
	e.mu.Unlock()
}

func (e *Engine) failed(it *Item, err error) {
	e.count(func(s *Stats) { s.Failed++ })
	e.cfg.Log.Warn("message dropped", "dest", it.Dest, "kind", it.Msg.Kind, "key", it.Key, "err", err)
}

// requeue puts an item that failed back at the head of its queue, or into a newer queued version
// of its Key.
func (e *Engine) requeue(q *queue, it *Item) {
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
	q.items = append([]*Item{it}, q.items...)
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// Hold pauses a destination's queue while an interaction shows one of its messages itself: nothing
// is sent meanwhile, so no older version can overtake a newer one. It gives nil if the queue is
// held already (a double click).
func (e *Engine) Hold(dest string) *Hold {
	e.mu.Lock()
	defer e.mu.Unlock()
	q := e.queue(dest)
	if q.held {
		return nil
	}
	q.held = true
	return &Hold{e: e, q: q}
}

// Hold is a paused queue.
type Hold struct {
	e        *Engine
	q        *queue
	back     *Item
	released bool
}

// maxTakeWait bounds how long Take waits for an older version of its item that is being sent.
const maxTakeWait = 100 * time.Millisecond

// Take removes the first queued item that match accepts, to be shown by the caller. If an
// older version of its Key is being sent right now, it waits a moment for that send to end (the
// held queue sends nothing after it), and gives up if it takes too long.
func (h *Hold) Take(match func(*Item) bool) (*Item, bool) {
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
func (h *Hold) GiveBack(it *Item) { h.back = it }

// Release ends the hold (once; a nil hold is none). An item given back goes to the front of the
// queue, unless a newer version of it is waiting.
func (h *Hold) Release() {
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
			q.items = append([]*Item{it}, q.items...)
		}
	}
	e.start(q) // a held queue is never forgotten, so q is still the destination's
	e.changed.Broadcast()
}

// Move sends what waits for one destination to another from now on, in its order and ahead of
// what waits there already (it is older); a Key queued at both is sent once, in its newer
// version. An item being sent to from right now is not moved: its send fails, and is classified,
// as the platform decides. It gives how many items moved.
func (e *Engine) Move(from, to string) int {
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
func (e *Engine) moveLocked(items []*Item, dest string) {
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

// Discard drops what waits for a destination that will never take it (the bot was removed from
// a group). It gives how many items were dropped.
func (e *Engine) Discard(dest string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	q, ok := e.queues[dest]
	if !ok {
		return 0
	}
	n := len(q.items)
	q.items = nil
	e.stats.Dropped += uint64(n)
	if !q.running && !q.held {
		delete(e.queues, dest)
	}
	e.changed.Broadcast()
	return n
}

// Record gives the record of a Key.
func (e *Engine) Record(key string) (Record, bool) { return e.recs.get(key) }

// Shown records that a Key's message shows this content now, shown by someone else than the
// engine (an interaction's response).
func (e *Engine) Shown(key string, rec Record) { e.recs.put(key, rec, false) }

// Forget drops a Key's record: nothing will edit its message any more.
func (e *Engine) Forget(key string) { e.recs.forget(key) }

// Queued gives how many items wait in all queues, and how many queues there are.
func (e *Engine) Queued() (items, queues int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, q := range e.queues {
		items += len(q.items)
	}
	return items, len(e.queues)
}

// NoteRateLimited counts a rate limit the platform's library waited out by itself.
func (e *Engine) NoteRateLimited() { e.count(func(s *Stats) { s.RateLimited++ }) }

// Stats gives the counters.
func (e *Engine) Stats() Stats {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.stats
}

// Flush waits until every queue is empty and its worker done (held queues aside), then writes the
// edited records to the KV; or gives up when ctx ends.
func (e *Engine) Flush(ctx context.Context) error {
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
func (e *Engine) idle() bool {
	if e.running > 0 {
		return false
	}
	for _, q := range e.queues {
		if len(q.items) > 0 && !q.held {
			return false
		}
	}
	return true
}

// Close stops taking items, sends what is queued for at most d, gives up on the rest and writes
// the records back. Later calls do nothing.
func (e *Engine) Close(d time.Duration) {
	e.mu.Lock()
	if e.closing {
		e.mu.Unlock()
		return
	}
	e.closing = true
	e.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	if err := e.Flush(ctx); err != nil {
		items, _ := e.Queued()
		e.cfg.Log.Warn("closing with messages still queued", "count", items)
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
}

// maxCached bounds the records kept in memory; beyond it the clean ones are dropped at the next
// write-back.
const maxCached = 4096

func (r *records) init(kv table.KV, bucket string, log *slog.Logger) {
	r.kv, r.bucket, r.log = kv, bucket, log
	r.recs, r.dirty = map[string]Record{}, map[string]bool{}
}

func (r *records) get(key string) (Record, bool) {
	r.mu.Lock()
	rec, ok := r.recs[key]
	r.mu.Unlock()
	if ok {
		return rec, true
	}
	b, found, err := r.kv.Get(r.bucket, key)
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
		if err := r.kv.Put(r.bucket, key, b); err != nil {
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
	if err := r.kv.Delete(r.bucket, key); err != nil {
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
		if err := r.kv.Put(r.bucket, k, b); err != nil {
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

package storage

import (
	"context"
	"errors"
	"sync"

	bolt "go.etcd.io/bbolt"

	"github.com/kontermatt/kontermatt/core/store"
)

// Group commit. One bbolt transaction costs two fsyncs however much it writes, so writes that
// arrive while a transaction is being committed wait for it and then go together in the next one:
// the writer that finds no transaction running commits at once (a lone writer waits for nobody),
// and the writers that came meanwhile share one transaction after it. Unlike bbolt's Batch nothing
// waits for company on a timer, and no write runs twice in one outcome: each write is checked
// first, by reads alone (a stale change fails with store.ErrConflict there, and alone: the others
// of its transaction go on), and only then applied. A write that fails while applying spoils its
// transaction, which is rolled back; each of its writes is then tried in a transaction of its own,
// so only the failing one fails. Every caller returns after its transaction is on disk.

// write is one queued write.
type write struct {
	// check reads tx and refuses the write (its error) before anything is written; nil: none.
	check func(tx *bolt.Tx) error
	// apply writes; an error spoils the transaction.
	apply func(tx *bolt.Tx) error
	// change is what a watch hears once the write is on disk; none when TableID is "".
	change store.TableChange

	err  error
	done chan struct{} // closed when err is final
	lead chan struct{} // signalled when this write is to commit the next group
}

// queue holds the writes waiting for the transaction being committed.
type queue struct {
	mu      sync.Mutex
	waiting []*write
	busy    bool // a leader is committing
}

// errSpoiled marks a transaction rolled back because one of its writes failed while applying.
var errSpoiled = errors.New("a write of the group failed")

// do queues w and returns once it is on disk (or refused). A ctx that has ended keeps w from
// being queued; once queued, w is written with its group (a bbolt transaction is not
// interrupted, and an fsync takes milliseconds), and its caller waits for it.
func (s *Store) do(ctx context.Context, w *write) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.solo {
		s.mu.RLock()
		defer s.mu.RUnlock()
		s.wmu.Lock()
		defer s.wmu.Unlock()
		s.commitGroup([]*write{w})
		return w.err
	}
	w.done, w.lead = make(chan struct{}), make(chan struct{}, 1)
	q := &s.q
	q.mu.Lock()
	q.waiting = append(q.waiting, w)
	if q.busy {
		q.mu.Unlock()
		select {
		case <-w.done:
			return w.err
		case <-w.lead: // the previous leader is done; w is still waiting, first in line
		}
		q.mu.Lock()
	}
	q.busy = true
	group := q.waiting
	q.waiting = nil
	q.mu.Unlock()

	s.mu.RLock()
	s.wmu.Lock()
	s.commitGroup(group)
	s.wmu.Unlock()
	s.mu.RUnlock()

	q.mu.Lock()
	if len(q.waiting) > 0 {
		q.waiting[0].lead <- struct{}{} // hand on: the leader's own caller is not kept waiting
	} else {
		q.busy = false
	}
	q.mu.Unlock()
	for _, o := range group {
		if o != w {
			close(o.done)
		}
	}
	return w.err
}

// commitGroup commits the writes in one transaction, or, if one spoils it, each alone; then it
// tells the watches of what was written, in order (s.wmu held).
func (s *Store) commitGroup(group []*write) {
	err := s.db.Update(func(tx *bolt.Tx) error {
		for _, w := range group {
			w.err = nil
			if w.check != nil {
				if w.err = w.check(tx); w.err != nil {
					continue // refused alone: nothing of it was written
				}
			}
			if err := w.apply(tx); err != nil {
				w.err = err
				return errSpoiled
			}
		}
		return nil
	})
	if err != nil && len(group) > 1 {
		for _, w := range group {
			s.commitGroup([]*write{w})
		}
		return
	}
	if err != nil && !errors.Is(err, errSpoiled) {
		group[0].err = err // the commit itself failed (the disk)
	}
	for _, w := range group {
		if w.err == nil && w.change.TableID != "" {
			s.feed.Publish(w.change)
		}
	}
}

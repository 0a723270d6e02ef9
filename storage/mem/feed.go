package mem

import (
	"context"
	"slices"
	"sync"

	"github.com/kontermatt/kontermatt/core/store"
)

// Feed is the watch of a store that lives in one process (mem.Store, the bbolt store): the store
// publishes each committed change, in commit order, and every Watch hears it. It keeps the last
// FeedKeep changes, so a watch may start a little in the past, or fall a little behind, as etcd's
// watches may until its history is compacted; further back is store.ErrCompacted. Revisions count from
// 1, from the Feed's making. The zero Feed is ready to use.
type Feed struct {
	mu     sync.Mutex
	kept   []store.TableChange // the last changes, oldest first, revisions without gaps
	rev    uint64              // the last revision published
	wake   chan struct{}       // closed (and replaced) at each publish and at Close
	closed bool
}

// FeedKeep is how many changes a Feed keeps for watches that start in the past or lag behind.
const FeedKeep = 1024

// Publish gives the changes the next revisions, in order, and tells every watch. Call it after
// the changes are durable, in the order they were committed, never for two commits at once.
func (f *Feed) Publish(changes ...store.TableChange) {
	if len(changes) == 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range changes {
		f.rev++
		c.Rev = f.rev
		c.State = slices.Clone(c.State)
		f.kept = append(f.kept, c)
	}
	if over := len(f.kept) - FeedKeep; over > 0 {
		f.kept = slices.Delete(f.kept, 0, over)
	}
	f.signal()
}

// signal wakes every watch (f.mu held).
func (f *Feed) signal() {
	if f.wake != nil {
		close(f.wake)
		f.wake = nil
	}
}

// Revision is the last revision published.
func (f *Feed) Revision() (uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.rev, nil
}

// Close ends every watch (their channels close) and the watches started later.
func (f *Feed) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	f.signal()
}

// Watch sends the changes from revision from on (0: from now) until ctx ends or the Feed closes.
// A watch whose next change is no longer kept ends with store.ErrCompacted.
func (f *Feed) Watch(ctx context.Context, from uint64) <-chan store.TableChange {
	ch := make(chan store.TableChange, 16)
	f.mu.Lock()
	if from == 0 {
		from = f.rev + 1
	}
	f.mu.Unlock()
	go func() {
		defer close(ch)
		for {
			f.mu.Lock()
			var batch []store.TableChange
			if len(f.kept) > 0 && from < f.kept[0].Rev {
				batch = []store.TableChange{{Err: store.ErrCompacted}}
			} else if len(f.kept) > 0 && from <= f.rev {
				batch = slices.Clone(f.kept[from-f.kept[0].Rev:])
			} else if from <= f.rev {
				batch = []store.TableChange{{Err: store.ErrCompacted}} // nothing kept, yet published
			}
			if f.wake == nil {
				f.wake = make(chan struct{})
			}
			wake, closed := f.wake, f.closed
			f.mu.Unlock()
			for _, c := range batch {
				select {
				case ch <- c:
				case <-ctx.Done():
					return
				}
				if c.Err != nil {
					return
				}
				from = c.Rev + 1
			}
			if closed {
				return
			}
			if len(batch) > 0 {
				continue
			}
			select {
			case <-wake:
			case <-ctx.Done():
				return
			}
		}
	}()
	return ch
}

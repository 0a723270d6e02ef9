package store

import (
	"context"
	"slices"
	"sync"
)

// Leases decide which copy of the bot does what only one copy may do at a time: fire a group of
// tables' timers, hold the Telegram poller or a Discord shard. A lease is held by one copy, and
// while that copy lives it keeps it; a copy that dies or is cut off from the store loses its
// leases within their time to live, and a copy waiting in Hold takes them over.
//
// A lease is a promise about the future only as far as clocks and networks allow: a copy that
// lost a lease may act for a moment before its held context ends. What must happen at most once
// is guarded by the store besides (ErrConflict, Swapper); a lease makes it happen at one copy at
// least, and at only one in the normal course.
type Leases interface {
	// Hold waits until this copy holds the lease called name, or ctx ends (then it gives ctx's
	// error). held ends when the lease is lost or given up, or ctx ends; release gives it up at
	// once (another copy may take it then) and waits until it is given up. release may be called
	// more than once.
	Hold(ctx context.Context, name string) (held context.Context, release func(), err error)
	// Held lists the leases this copy holds now, sorted: for /healthz.
	Held() []string
}

// LocalLeases are the leases of a bot that is the only copy on its store (bbolt): each is held
// by one holder of this process at a time, and given at once when free. The zero value is ready.
type LocalLeases struct {
	mu   sync.Mutex
	held map[string]chan struct{} // closed when the lease is given up
}

// Hold waits until no other holder of this process holds name.
func (l *LocalLeases) Hold(ctx context.Context, name string) (context.Context, func(), error) {
	for {
		l.mu.Lock()
		if l.held == nil {
			l.held = map[string]chan struct{}{}
		}
		freed, taken := l.held[name]
		if !taken {
			freed = make(chan struct{})
			l.held[name] = freed
			l.mu.Unlock()
			held, cancel := context.WithCancel(ctx)
			var once sync.Once
			release := func() {
				once.Do(func() {
					cancel()
					l.mu.Lock()
					delete(l.held, name)
					l.mu.Unlock()
					close(freed)
				})
			}
			// A holder whose ctx ends gives the lease up, as an etcd session's end does.
			context.AfterFunc(held, release)
			return held, release, nil
		}
		l.mu.Unlock()
		select {
		case <-freed:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	}
}

// Held lists the leases held in this process.
func (l *LocalLeases) Held() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	names := make([]string, 0, len(l.held))
	for name := range l.held {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// Spread is what Leases held in a store that several copies share offer besides (etcdstore's):
// enough to spread many leases evenly over the live copies (the places' partitions, core/table's owner.go)
// and to fence what a copy does under one.
type Spread interface {
	Leases
	// Copies counts the copies of the bot alive on the store now, this one included.
	Copies(ctx context.Context) (int, error)
	// Taken gives the names of the leases under prefix that some copy holds or waits for now.
	Taken(ctx context.Context, prefix string) (map[string]bool, error)
	// Fence gives the fence of a lease this copy holds; false when it holds none by that name.
	Fence(name string) (Fence, bool)
}

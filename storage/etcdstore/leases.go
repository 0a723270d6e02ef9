package etcdstore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/kontermatt/kontermatt/core/store"
)

// DefaultLeaseTTL is how long a copy that stopped answering keeps its leases: within it, another
// copy takes them over.
const DefaultLeaseTTL = 5 * time.Second

// Leases are store.Leases held in the cluster: each lease is an etcd election (the concurrency
// package's, as etcd's own lock and election services are built) under prefix+"leases/<name>/",
// campaigned for with one etcd lease per copy, kept alive while the copy runs. A copy that is
// killed or cut off stops keeping it alive: the cluster deletes its keys when its time to live
// runs out, and the next copy in line holds the lease. The copy that lost it learns so from its
// session's end, which its held contexts follow.
type Leases struct {
	s     *Store
	ttl   time.Duration
	id    string            // what a held lease's key holds: which copy holds it
	local store.LocalLeases // one holder of a name in this copy at a time
	mu    sync.Mutex
	sess  *concurrency.Session // nil until the first Hold, or after it ended
	// held are the names won in the cluster and not yet ended (local has those campaigning
	// too); under their own lock, which session's network calls never hold.
	heldMu sync.Mutex
	held   map[string]*concurrency.Election
	// member is the session whose lease the copy's key among the members (Copies) is put with.
	member clientv3.LeaseID
}

var _ store.Spread = (*Leases)(nil)

// Leases gives the copy's leases in the cluster. copyID names the copy in the keys it holds (its
// host and process, say); ttl is rounded up to whole seconds, as etcd's leases count; 0 is
// DefaultLeaseTTL.
func (s *Store) Leases(copyID string, ttl time.Duration) *Leases {
	if ttl <= 0 {
		ttl = DefaultLeaseTTL
	}
	return &Leases{s: s, ttl: ttl, id: copyID}
}

// session gives the copy's live session, making a new one when there is none or the last ended.
func (l *Leases) session(ctx context.Context) (*concurrency.Session, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.sess != nil {
		select {
		case <-l.sess.Done():
			l.sess = nil
		default:
			return l.sess, nil
		}
	}
	ttl := int64((l.ttl + time.Second - 1) / time.Second)
	// The lease is granted here, within the timeout, rather than by NewSession, whose context
	// is the one that keeps the lease alive afterwards.
	grantCtx, cancel := context.WithTimeout(clientv3.WithRequireLeader(ctx), l.s.timeout)
	defer cancel()
	grant, err := l.s.cli.Grant(grantCtx, ttl)
	if err != nil {
		return nil, l.s.classify(err)
	}
	sess, err := concurrency.NewSession(l.s.cli, concurrency.WithLease(grant.ID))
	if err != nil {
		return nil, l.s.classify(err)
	}
	l.sess = sess
	return sess, nil
}

// Hold waits until this copy holds the lease name: campaigns for it, and after the cluster was
// out of reach campaigns again, until ctx ends.
func (l *Leases) Hold(ctx context.Context, name string) (context.Context, func(), error) {
	localHeld, localRelease, err := l.local.Hold(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	wait := 50 * time.Millisecond
	for {
		e, sess, err := l.campaign(localHeld, name)
		if err == nil {
			held, cancel := context.WithCancel(localHeld)
			l.mark(name, e)
			var once sync.Once
			end := func(resign bool) {
				once.Do(func() {
					l.mark(name, nil)
					cancel()
					if resign {
						// Resigning comes after the holder's ctx ended (or as it is given
						// up): it owns its own short life, bounded by the store's timeout.
						ctx, done := context.WithTimeout(context.Background(), l.s.timeout)
						defer done()
						_ = e.Resign(ctx) // failing, the key goes with the session's lease
					}
					localRelease()
				})
			}
			release := func() { end(true) }
			go func() {
				select {
				case <-sess.Done():
					// Lost: the cluster may have given it to another copy already. Nothing is
					// said to the cluster, as a copy that died says nothing: the key goes with
					// the session's lease, and a copy whose connection was closed is taken
					// over only when that lease runs out.
					end(false)
				case <-held.Done():
					end(true)
				}
			}()
			return held, release, nil
		}
		if ctx.Err() != nil {
			localRelease()
			return nil, nil, ctx.Err()
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			localRelease()
			return nil, nil, ctx.Err()
		}
		wait = min(2*wait, time.Second)
	}
}

// campaign waits to lead the election of name once, with the copy's session now.
func (l *Leases) campaign(ctx context.Context, name string) (*concurrency.Election, *concurrency.Session, error) {
	sess, err := l.session(ctx)
	if err != nil {
		return nil, nil, err
	}
	e := concurrency.NewElection(sess, l.s.p+"leases/"+name)
	if err := e.Campaign(clientv3.WithRequireLeader(ctx), l.id); err != nil {
		return nil, nil, fmt.Errorf("etcdstore: lease %s: %w", name, l.s.classify(err))
	}
	// The session may have ended while the campaign waited: its key is gone then, and another
	// copy may lead.
	select {
	case <-sess.Done():
		return nil, nil, fmt.Errorf("etcdstore: lease %s: %w", name, errSessionEnded)
	default:
	}
	return e, sess, nil
}

var errSessionEnded = errors.New("the copy's session ended while it campaigned")

// mark notes that this copy holds name in the cluster, won in election e, or no longer does
// (nil).
func (l *Leases) mark(name string, e *concurrency.Election) {
	l.heldMu.Lock()
	defer l.heldMu.Unlock()
	if l.held == nil {
		l.held = map[string]*concurrency.Election{}
	}
	if e != nil {
		l.held[name] = e
	} else {
		delete(l.held, name)
	}
}

// Fence gives the fence of a lease this copy holds: its key in the election, and the revision
// that created it. A commit fenced by it (store.Change.Fence) compares that key's creation in its
// transaction: once the copy's session lease ran out (the copy paused, or cut off), the key is
// gone, or another copy's, and the commit fails with store.ErrFenced, whatever the copy believes.
func (l *Leases) Fence(name string) (store.Fence, bool) {
	l.heldMu.Lock()
	defer l.heldMu.Unlock()
	e, ok := l.held[name]
	if !ok {
		return store.Fence{}, false
	}
	return store.Fence{Key: e.Key(), Rev: e.Rev()}, true
}

// membersKey is the prefix of the copies' keys among the members: one key per live copy, with
// its session's lease, so that it goes when the copy dies.
func (l *Leases) membersKey() string { return l.s.p + "members/" }

// Copies counts the live copies on the cluster, this one included: the keys among the members,
// after this copy put its own there (with its session's lease, once per session).
func (l *Leases) Copies(ctx context.Context) (int, error) {
	sess, err := l.session(ctx)
	if err != nil {
		return 0, err
	}
	l.mu.Lock()
	put := l.member != sess.Lease()
	l.mu.Unlock()
	if put {
		key := fmt.Sprintf("%s%s/%x", l.membersKey(), l.id, sess.Lease())
		err := l.s.call(ctx, func(ctx context.Context, _ bool) error {
			_, err := l.s.cli.Put(ctx, key, "", clientv3.WithLease(sess.Lease()))
			return err
		})
		if err != nil {
			return 0, err
		}
		l.mu.Lock()
		l.member = sess.Lease()
		l.mu.Unlock()
	}
	resp, err := l.s.get(ctx, l.membersKey(), clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return 0, err
	}
	return int(resp.Count), nil
}

// Taken gives the names of the leases under prefix that some copy holds or campaigns for: those
// whose election has a key.
func (l *Leases) Taken(ctx context.Context, prefix string) (map[string]bool, error) {
	root := l.s.p + "leases/"
	resp, err := l.s.get(ctx, root+prefix, clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return nil, err
	}
	taken := map[string]bool{}
	for _, kv := range resp.Kvs {
		k := string(kv.Key[len(root):])
		if i := strings.LastIndexByte(k, '/'); i > 0 {
			taken[k[:i]] = true // the election's name, without the campaigner's lease ID
		}
	}
	return taken, nil
}

// Held lists the leases this copy holds in the cluster, sorted; not those it campaigns for.
func (l *Leases) Held() []string {
	l.heldMu.Lock()
	defer l.heldMu.Unlock()
	return slices.Sorted(maps.Keys(l.held))
}

// Close gives up every lease of this copy at once (its session's lease is revoked), so that
// another copy need not wait out the time to live: for a copy that stops on purpose.
func (l *Leases) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.sess == nil {
		return nil
	}
	err := l.sess.Close()
	l.sess = nil
	return l.s.classify(err)
}

package etcdstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/kontermatt/kontermatt/core/store"
)

// etcd keeps every version of every key until its history is compacted: at about 5 KB a commit
// its default quota (2 GiB) is full after some 1,300 matches, and old table states, names and
// deal secrets included, stay readable at old revisions. TrimHistory bounds that history to a
// window: the bot calls it now and then, on one copy (under a lease, cmd/bot), and the host's
// etcd may compact on its own too (--auto-compaction-mode=periodic, docs/cluster.md): whichever
// comes first, the other finds the revision compacted already.
//
// The window is counted in time, but etcd compacts by revision: TrimHistory notes the current
// revision with the time in a checkpoint (the key "history"), and compacts to the newest one that
// is at least a window old.

// DefaultHistory is the window of history the cluster keeps when the host says nothing
// (etcd.history): as long as a copy's watch may lag and still catch up, and short enough that
// what forget replaced is gone within the hour.
const DefaultHistory = time.Hour

// ErrNoCompactRights is a compaction the cluster refused: etcd lets only a user with its root
// role compact or defragment, and a host may give the bot a user without it (docs/cluster.md).
// The cluster's own --auto-compaction must then bound its history.
var ErrNoCompactRights = errors.New("etcd refuses this user compaction and defragmentation (only its root role may)")

// checkpoint is a revision and when it was current.
type checkpoint struct {
	At  int64 `json:"at"` // unix ms
	Rev int64 `json:"rev"`
}

// HistoryReport says what one TrimHistory did and found.
type HistoryReport struct {
	// Compacted is the revision the history was compacted to now, by this call or before it by
	// the cluster itself; 0: no checkpoint is a window old yet.
	Compacted int64
	// Refused is the cluster refusing the bot's compaction (ErrNoCompactRights): etcd's own
	// --auto-compaction must do it.
	Refused error
	// Stale, when not zero, is a time from before which history is still readable although it
	// is older than twice the window: nobody compacts it (the bot may not, and etcd's
	// --auto-compaction is off or keeps more).
	Stale time.Time
}

func (s *Store) historyKey() string { return s.p + "history" }

// TrimHistory compacts the cluster's history to the newest checkpoint at least window old, notes
// a new checkpoint at now, and reports whether the history is bounded. Two copies calling it at
// once compact alike; only one of them writes its checkpoint. It gives up when ctx ends.
func (s *Store) TrimHistory(ctx context.Context, now time.Time, window time.Duration) (HistoryReport, error) {
	var rep HistoryReport
	var resp *clientv3.GetResponse
	err := s.callIn(ctx, func(ctx context.Context, _ bool) error {
		var err error
		resp, err = s.cli.Get(ctx, s.historyKey())
		return err
	})
	if err != nil {
		return rep, fmt.Errorf("etcdstore: history: %w", err)
	}
	var points []checkpoint
	var modRev int64
	if len(resp.Kvs) > 0 {
		modRev = resp.Kvs[0].ModRevision
		if err := json.Unmarshal(resp.Kvs[0].Value, &points); err != nil {
			points = nil // a hand-written value: start again, it is only a hint
		}
	}
	points = append(points, checkpoint{At: now.UnixMilli(), Rev: resp.Header.Revision})
	keepFrom := 0
	if i := newestBefore(points, now.Add(-window)); i >= 0 {
		rep.Compacted = points[i].Rev
		err := s.callIn(ctx, func(ctx context.Context, _ bool) error {
			_, err := s.cli.Compact(ctx, points[i].Rev)
			return err
		})
		switch {
		case err == nil, errors.Is(err, store.ErrCompacted): // etcd, or another copy, was first
			keepFrom = i
		case noRights(err):
			rep.Refused = fmt.Errorf("%w: %w", ErrNoCompactRights, err)
			rep.Compacted = 0
			if j := newestBefore(points, now.Add(-2*window)); j >= 0 {
				keepFrom = j
				if stale, err := s.readableBefore(ctx, points[j].Rev); err != nil {
					return rep, fmt.Errorf("etcdstore: history: %w", err)
				} else if stale {
					rep.Stale = time.UnixMilli(points[j].At)
				}
			}
		default:
			return rep, fmt.Errorf("etcdstore: history: compact to revision %d: %w", points[i].Rev, err)
		}
	}
	points = points[keepFrom:]
	if len(points) > 256 { // a window long against the calls' interval: every other is enough
		points = slices.Delete(points, 1, len(points)-255)
	}
	value, _ := json.Marshal(points)
	key := s.historyKey()
	err = s.callIn(ctx, func(ctx context.Context, _ bool) error {
		_, err := s.cli.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(key), "=", modRev)).
			Then(clientv3.OpPut(key, string(value))).Commit()
		return err
	})
	if err != nil {
		return rep, fmt.Errorf("etcdstore: history: note the revision: %w", err)
	}
	return rep, nil
}

// newestBefore is the index of the newest checkpoint at or before t, or -1.
func newestBefore(points []checkpoint, t time.Time) int {
	for i := len(points) - 1; i >= 0; i-- {
		if points[i].At <= t.UnixMilli() {
			return i
		}
	}
	return -1
}

// readableBefore reports whether the revision before rev can still be read.
func (s *Store) readableBefore(ctx context.Context, rev int64) (bool, error) {
	if rev <= 1 {
		return false, nil
	}
	err := s.callIn(ctx, func(ctx context.Context, _ bool) error {
		_, err := s.cli.Get(ctx, s.p+"schema", clientv3.WithRev(rev-1), clientv3.WithKeysOnly())
		return err
	})
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, store.ErrCompacted):
		return false, nil
	}
	return false, err
}

// noRights reports whether the cluster refused a call for the user's rights.
func noRights(err error) bool {
	if errors.Is(err, rpctypes.ErrPermissionDenied) || errors.Is(err, rpctypes.ErrGRPCPermissionDenied) {
		return true
	}
	var ee rpctypes.EtcdError
	if errors.As(err, &ee) && ee.Code() == codes.PermissionDenied {
		return true
	}
	return status.Code(err) == codes.PermissionDenied
}

// Alarms are the cluster's raised alarms, each as "NOSPACE on member 8e9e05c52164694d": NOSPACE
// is a member whose database reached --quota-backend-bytes; the cluster then refuses every write
// until the host compacts, defragments and disarms it (docs/cluster.md). Any user may ask.
func (s *Store) Alarms(ctx context.Context) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	resp, err := s.cli.AlarmList(ctx)
	if err != nil {
		return nil, fmt.Errorf("etcdstore: alarms: %w", s.classify(err))
	}
	var out []string
	for _, a := range resp.Alarms {
		out = append(out, fmt.Sprintf("%s on member %x", a.Alarm, a.MemberID))
	}
	slices.Sort(out)
	return out, nil
}

// AlarmNames are the alarm kinds etcd raises, as Alarms and the bot's metrics name them.
var AlarmNames = []string{"NOSPACE", "CORRUPT"}

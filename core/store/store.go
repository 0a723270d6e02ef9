// Package store is the storage vocabulary: what the table engine (core/table) asks of a store
// and what it hands one. Every store of this repository speaks it — storage/mem in memory,
// storage (bbolt) in one file, storage/etcdstore on a cluster — and storage/storagetest's
// conformance suite holds each to it. It imports nothing of the engine, so a store needs only
// this package, and the engine's own tests may use storage/mem.
package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kontermatt/kontermatt/core/table/api"
)

// Errors of a Store, the same from every store (test them with errors.Is).
var (
	// ErrConflict is the table changed since the state this change was made from: another copy
	// committed first; nothing was written. A Change that writes a log entry (State not nil, a
	// Log.Verb) is guarded by its Log.Seq, the table's own revision: it must be exactly one more
	// than the Seq of the table's last logged change (0 for a table never stored, deleted or
	// pruned). A Change with Expect is guarded by those KV entries too: each must hold what the
	// change was made from. Read the table (and the entries) again and decide afresh.
	ErrConflict = errors.New("the table changed since the state this change was made from: another copy committed first; nothing was written")

	// ErrUnavailable is the store cannot be reached now: the database cluster lost its quorum,
	// or its members are down or cut off. The call gave up after its timeout rather than hang.
	// A read or a refused write changed nothing; a Commit that timed out may still be applied
	// once the cluster is back, and then a later commit from the same state fails with
	// ErrConflict. Tell the player the database is unreachable and to try again. A call whose
	// ctx ended fails with ctx's error instead, and the same holds for a Commit it interrupted.
	ErrUnavailable = errors.New("the database is unreachable")

	// ErrCompacted is a Watch from a revision whose changes the store no longer keeps: read the
	// tables again (Store.Tables, Store.Table) and watch from the revision now.
	ErrCompacted = errors.New("the changes since that revision are no longer kept")
)

// Store keeps tables durably. Commit writes a table's new state, its log entry and any finished
// records in one transaction, before anyone is told.
type Store interface {
	// Commit writes the change in one transaction, or nothing of it: a change from a stale state
	// fails with ErrConflict (see there).
	Commit(ctx context.Context, c Change) error
	// Table gives one table's last committed state, live or closed (not yet pruned); false when
	// there is none. A copy whose commit failed with ErrConflict reads the table back with it.
	Table(ctx context.Context, id string) (state []byte, ok bool, err error)
	// Tables calls fn for every live (not closed) table; a table fn cannot read is reported by fn
	// and skipped. Closed tables are not listed, so start-up costs nothing for them.
	Tables(ctx context.Context, fn func(id string, state []byte) error) error
	// Records calls fn for every kept match record (a StoredMatch).
	Records(ctx context.Context, fn func(key string, record []byte) error) error
	// Record gives one kept match record; false when there is none under key.
	Record(ctx context.Context, key string) ([]byte, bool, error)
	// Prune deletes what is kept of the tables closed before the given time: their state, their
	// command log and every KV entry of theirs (see KV). Records stay. It gives how many tables it
	// deleted.
	Prune(ctx context.Context, before time.Time) (int, error)
	// Rewrite writes kept records again, empties the given KV buckets and writes the entries, in
	// one transaction: making anew what is derived from the records.
	Rewrite(ctx context.Context, records []Record, emptied []string, entries []KVEntry) error
	// ClosedTables calls fn for every closed table not yet pruned: its ID and its last state.
	ClosedTables(ctx context.Context, fn func(id string, state []byte) error) error
	// Forget makes the changes that forget a person in one transaction, and then leaves no copy of
	// what it replaced or deleted where it can still be read: not in the store's file, and so not
	// in a backup taken later.
	Forget(ctx context.Context, f Forgetting) error
}

// KV is a small durable key-value space for adapters and the service's per-person settings:
// which platform message shows which message Key, which users cannot be sent private messages.
// Buckets and keys are their owner's. A key that is a table ID, or begins with a table ID and
// "/", belongs to that table: Store.Prune deletes it with the table. Such a key that has a
// person's player ID or platform key as a later "/"-separated part is about that person at that
// table: forgetting the person deletes it. A bucket keyed by people is registered with People.
type KV interface {
	Get(ctx context.Context, bucket, key string) ([]byte, bool, error)
	Put(ctx context.Context, bucket, key string, value []byte) error
	Delete(ctx context.Context, bucket, key string) error
}

// Swapper is a KV whose entries move by compare-and-swap, for what several copies of the bot
// write under one key (the record of a message sent). Every store of this repository has it.
type Swapper interface {
	KV
	// Swap writes value at bucket/key (a nil value deletes it) if the key holds old now (a nil
	// old: the key is absent; an empty one: an empty value), in one atomic step. Otherwise it
	// fails with ErrConflict, writes nothing and gives the value the key holds now (nil: none),
	// so the caller can decide again without another read.
	Swap(ctx context.Context, bucket, key string, old, value []byte) (current []byte, err error)
}

// Watcher is a Store that tells of its table changes as they are committed, by anyone (every
// copy of the bot on one database): what a copy serving a table hears of moves made elsewhere.
// Every store of this repository has it; an in-process store's revisions count from its opening.
type Watcher interface {
	// Revision is the store's revision now: every change committed after this call has a
	// greater one. Read it, then the tables, then watch from it plus one, and nothing is missed
	// (a change may come twice: a table's Seq tells which is newer).
	Revision(ctx context.Context) (uint64, error)
	// Watch sends every table change committed at revision from or later (0: from now on), in
	// commit order (in order per table at least), until ctx ends; then it closes the channel. A
	// watch that cannot go on sends one TableChange with Err set (ErrCompacted,
	// ErrUnavailable) and closes. A slow reader holds back only its own watch.
	Watch(ctx context.Context, from uint64) <-chan TableChange
}

// Forgetting is what Store.Forget changes to forget a person.
type Forgetting struct {
	// Records are the kept matches that named the person, written again with their seat
	// anonymous.
	Records []Record
	// Closed are the closed tables that named the person, by ID: their states written again the
	// same way (still closed, since the same time).
	Closed map[string][]byte
	// Actor is the person's player ID and As the anonymous one their seats have now: every
	// table's log entries by Actor become As's.
	Actor, As string
	// Drop are closed tables whose KV entries (see KV) all go now rather than when Prune comes:
	// their messages are final.
	Drop []string
	// At the tables in Tables (still played), a KV key of theirs that has one of Names (the
	// person's player ID, their key on their platform) as a later "/"-separated part names the
	// person there ("<table>/hand/m1/2/tg:42", "<table>/42"): it goes, in every bucket.
	Tables, Names []string
	// Emptied are KV buckets emptied (the league, made anew from the records), and KV entries
	// then written; a nil Value deletes (the person's settings, what adapters keep about them).
	Emptied []string
	KV      []KVEntry
}

// NamesPersonAt reports whether key, a KV key of the table id (one of Tables), names the person:
// a "/"-separated part after the table ID is one of Names.
func (f Forgetting) NamesPersonAt(id, key string) bool {
	rest, ok := strings.CutPrefix(key, id+"/")
	if !ok {
		return false
	}
	for part := range strings.SplitSeq(rest, "/") {
		if slices.Contains(f.Names, part) {
			return true
		}
	}
	return false
}

// Change is one atomic write.
type Change struct {
	TableID string
	State   []byte   // the table's new state; nil deletes the table
	Log     LogEntry // appended to the table's log
	Records []Record // finished matches to keep
	// KV entries written in the same transaction: what is derived from the records (a place's
	// league) stays in step with them, whatever crashes when.
	KV []KVEntry
	// Expect are KV entries as they were read to make this change (the league's entries a match
	// end learned from): each key must hold its Value when the change is written (a nil Value:
	// the key is absent; an empty one: an empty value), checked in the same transaction, or the
	// change fails with ErrConflict and writes nothing. Of two changes of one entry at once (two
	// matches of one person ending, at one copy of the bot or two), the second then reads it
	// again and learns from the first's update instead of overwriting it.
	Expect []KVEntry
	// Closed says the table is closed for good: the store keeps its state apart from the live
	// tables, stamped with Log.Time, until Prune removes it.
	Closed bool
	// PruneLog says a match ended with this change and is kept in Records: the table's log before
	// this change's entry is deleted. The entry itself is written, so the log still only grows.
	PruneLog bool
	// Fence, when set, is the lease the change is the owner's work under (a computer player's
	// move, a timer): the store writes it only while that lease is still held as fenced, in the
	// same transaction, and else fails with ErrFenced (see Fence).
	Fence Fence
}

// LogEntry is one accepted command in a table's log.
type LogEntry struct {
	Seq     uint64   `json:"seq"`
	Time    int64    `json:"time"` // unix milliseconds
	Actor   string   `json:"actor,omitempty"`
	Verb    api.Verb `json:"verb"`
	Args    []string `json:"args,omitempty"`
	EventID string   `json:"event,omitempty"`
}

// Record is a finished (or stopped) match to keep for ever, as a StoredMatch.
type Record struct {
	Key  string // "<table>/m<match number>"
	Data []byte
}

// KVEntry is one KV write of a Change; a nil Value deletes the key.
type KVEntry struct {
	Bucket, Key string
	Value       []byte
}

// TableChange is one committed change as a Watcher tells it.
type TableChange struct {
	Rev     uint64 // the store's revision of the change
	TableID string
	Seq     uint64 // the change's Log.Seq; 0 when it wrote no log entry
	State   []byte // the table's new state; nil: the table was deleted or pruned
	Closed  bool   // the table is closed (State is its last)
	Err     error  // set on the last value of a watch that ended early
}

// Fence is proof that a copy holds a lease, which a store checks in a commit's transaction
// (Change.Fence): the lease's key in the store, and the revision at which the copy's claim to it
// was made. A copy paused past its lease's time to live, or cut off from the store, may still
// believe it holds the lease when it commits; the store, which knows the lease went, refuses. The
// zero Fence fences nothing (the only copy, LocalLeases).
type Fence struct {
	Key string
	Rev int64
}

// ErrFenced is a Change made under a lease this copy no longer holds (Change.Fence): nothing was
// written; another copy owns the work now.
var ErrFenced = errors.New("this copy no longer holds the lease its change was made under; nothing was written")

// ForgetPending is a Store.Forget that made every change but may not remove the older versions
// of what it replaced now (an etcd user without the right to compact): the store's own upkeep
// removes them by By. The person is told so, not "done" alone, and not "nothing was changed".
type ForgetPending struct {
	By    time.Time
	Cause error
}

func (e *ForgetPending) Error() string {
	return fmt.Sprintf("the changes are made; their older versions stay readable in the store until %s: %v", e.By.UTC().Format(time.RFC3339), e.Cause)
}

func (e *ForgetPending) Unwrap() error { return e.Cause }

package table

import (
	"context"
	"errors"
	"time"

	"github.com/kontermatt/kontermatt/core"
)

// The ports: everything the engine needs from outside it, in one place. The storage packages
// satisfy Store, KV, Swapper and Watcher; the chat adapters Outbox; core/robot Decider; core/coach
// Coach. Leases (leases.go) decide which copy of the bot fires the timers. The clock is
// Config.Now, randomness Config.Random.
//
// Every method that may wait on a disk, a network or another process takes the caller's ctx
// first and returns an error: a cancelled ctx ends the wait (the call then fails with an error
// that wraps ctx's), so no command can hang on a store that does not answer.

// Errors of the service, the same for every command (test them with errors.Is).
var (
	// ErrNotStored is Handle's error when the command's change could not be stored, or what it
	// needed could not be read: the service rolled the table back, and the replies say so to
	// the actor. It wraps the store's error
	// (ErrUnavailable, ErrConflict, a cancelled ctx's). The platform may deliver the same command
	// again: its event ID makes it count once. A commit that failed with ErrUnavailable or a
	// cancelled ctx may still be applied by the store later (see ErrUnavailable); the command
	// sent again is then answered as a duplicate.
	ErrNotStored = errors.New("the command's change could not be stored")
	// ErrStopped is Handle's error once Close has been called: the command was not applied.
	ErrStopped = errors.New("the table service is stopping")
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

// Outbox delivers messages for one platform. The service calls Deliver after the change behind the
// messages is stored, with the table's lock held: Deliver must only queue (adapters rate-limit and
// send from their own goroutines, and do what they write to their KV there: a write is an fsync
// the table would wait for) and must not call back into the Service. So it neither waits nor
// fails, and gives no error: what cannot be sent is the adapter's to retry or log. After a restart
// (Resume) the service delivers every editable message once more, as it stands: an adapter that
// remembers what it last showed under a Key can skip an edit whose text and buttons are unchanged
// (button sequence numbers aside).
type Outbox interface {
	Deliver(ctx context.Context, msgs []Message)
}

// Decider is a computer player: it sees one seat's View and returns a move for it. The robot
// package's players satisfy it; the service never shows a Decider anything but a View. It thinks
// within ctx, which the service bounds by Config.Think, and always gives a move.
type Decider interface {
	Decide(ctx context.Context, v core.View) core.Move
}

// Coach judges players' decisions for them (issue 16, coach.go): a hint for one's own turn at a
// table with hints on, a private review of each game for the players who ask for it, and the lessons of a guided game
// (learn). core/coach's Coach is the one the bot gives the service; without one there are no
// hints, reviews or lessons. It is shown what its player could see and nothing more: their View,
// or a game that has ended (every card in it has been played face up). The service closes it
// when it closes. Its methods compute within a budget of their own and do no I/O; Review only
// queues.
type Coach interface {
	// Hint is the strong choice for the view with a one-line reason, in lang. It is judged on
	// ctx, the asker's command's, within the coach's budget; seed makes it repeat.
	Hint(ctx context.Context, v core.View, seed uint64, lang string) string
	// Review asks for the review of seat's decisions in game g, the n-th of its match, begun with
	// the stripes open; done gets its text in lang from one of the coach's workers. The review
	// is kept under key (see Reviewed); asked for again while it is judged, it is judged once.
	// False when the coach has no room for it.
	Review(key string, g core.Game, seat core.Seat, open [2]int, n int, lang string, done func(text string)) bool
	// Reviewed gives a review made under key, while the coach keeps it.
	Reviewed(key string) (string, bool)
	// Lesson explains a guided game's turn to its learner, who sees v.
	Lesson(lang string, v core.View) string
	// Stripes explains to a guided game's learner how game g, just finished, moved the stripes,
	// open now as board says.
	Stripes(lang string, g *core.Game, board core.Board) string
	// Close stops the coach's workers and waits for them.
	Close()
}

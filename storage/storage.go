// Package storage keeps the table service's data durably in one bbolt file: every table's state,
// its command log, the finished game and match records, and small key-value buckets for the chat
// adapters. It implements store.Store and store.KV.
//
// Every write is committed (and fsynced) before the call returns; writes that arrive together share
// one bbolt transaction (queue.go). A change from a stale state fails with store.ErrConflict.
// Callbacks (Tables, Records, Log) run outside any transaction, so they may call back into the
// Store, for example to Commit a repaired table. A backup, and the file after Forget, hold only the
// live data: nothing deleted or replaced before can be read from them (backup.go).
//
// Layout (schema version 1):
//
//	meta     "schema" → big-endian uint64 schema version
//	tables   table id → state bytes
//	logs     table id → nested bucket: big-endian uint64 seq → JSON store.LogEntry; the running
//	         match's commands and the one that ended the last match (Change.PruneLog)
//	records  record key → record bytes
//	kv       adapter bucket → nested bucket: key → value
package storage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/kontermatt/kontermatt/core/store"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// The Store satisfies the service's interfaces.
var (
	_ store.Store   = (*Store)(nil)
	_ store.KV      = (*Store)(nil)
	_ store.Swapper = (*Store)(nil)
	_ store.Watcher = (*Store)(nil)
)

// Errors returned by the Store. They are wrapped with context (path, table id, key, versions) but
// never with stored bytes; test them with errors.Is.
var (
	// ErrLocked is returned by Open when another process (another instance of the bot) holds the
	// database file. It is joined with bbolt's ErrTimeout.
	ErrLocked = errors.New("database is locked: another instance of the bot is running")

	// ErrNewerSchema is returned by Open when the database was written by a newer binary, whose
	// schema version this binary does not know. The file is left untouched.
	ErrNewerSchema = errors.New("database schema is newer than this binary")

	// ErrBadKey is returned for an empty or too long (over 32768 bytes) table id, record key, KV
	// bucket or KV key. Nothing is written.
	ErrBadKey = errors.New("empty or too long key")

	// ErrLogSeq is the name this package had for store.ErrConflict, when the guard only
	// wanted a log that grows: it is the same error.
	//
	// Deprecated: use store.ErrConflict.
	ErrLogSeq = store.ErrConflict

	// ErrCorrupt is returned when stored data cannot be decoded or the layout is broken.
	ErrCorrupt = errors.New("corrupt data")

	// ErrDamaged is returned when the file itself is damaged: its meta pages are invalid, it is
	// shorter than its pages say, or a page bbolt reads is garbage (bbolt panics on those; Open,
	// Backup and the iterations recover and return this instead). Restore the file from a backup.
	ErrDamaged = errors.New("database file is damaged")

	// ErrOlderSchema is returned by Open with Options.ReadOnly when the database has an older
	// schema version: a read-only Store cannot migrate it. Open it once without ReadOnly (start
	// the bot on it) to bring it forward.
	ErrOlderSchema = errors.New("database schema is older than this binary")
)

// DefaultTimeout is how long Open waits for the file lock when Options.Timeout is zero.
const DefaultTimeout = time.Second

// Options tune Open. The zero value is the production setting.
type Options struct {
	// Timeout is how long to wait for the file lock before failing with ErrLocked; 0 means
	// DefaultTimeout. A negative value waits forever (not recommended).
	Timeout time.Duration

	// NoGroupCommit gives every write a transaction (and two fsyncs) of its own instead of
	// grouping the writes that arrive while one is being committed (queue.go). For the
	// benchmarks that compare the two; there is no reason to set it otherwise.
	NoGroupCommit bool

	// ReadOnly opens the file without writing to it, under a shared lock (so it still fails with
	// ErrLocked while a bot holds the file). A missing or empty file is not created: Open fails
	// with an error matching fs.ErrNotExist. The schema is not migrated: it must be the current
	// one (ErrNewerSchema, ErrOlderSchema otherwise). Writes fail with bbolt's
	// ErrDatabaseReadOnly. For tools that copy or export a database.
	ReadOnly bool
}

// Store is the bbolt-backed store. It is safe for concurrent use.
type Store struct {
	// mu is held shared around every use of db, and alone while Forget swaps a compacted file
	// in (forget.go).
	mu sync.RWMutex
	// wmu is held from the start of a write transaction until the watches are told of it, so
	// they hear the changes in the order they were committed.
	wmu      sync.Mutex
	db       *bolt.DB
	path     string
	solo     bool // Options.NoGroupCommit
	readOnly bool
	q        queue
	feed     mem.Feed
}

// Open opens (creating if needed) the database at path, brings its schema to the current version
// and returns the Store. If another process has the file open, Open fails after opts.Timeout with
// an error matching ErrLocked; a database with a newer schema fails with ErrNewerSchema. Open reads
// every page in use once, so a damaged file fails here with ErrDamaged rather than in the middle of
// a game (a panic inside bbolt's own Open may leave the file's descriptor open: exit then).
func Open(path string, opts Options) (*Store, error) {
	timeout := opts.Timeout
	switch {
	case timeout == 0:
		timeout = DefaultTimeout
	case timeout < 0:
		timeout = 0 // bbolt: wait forever
	}
	if opts.ReadOnly {
		// bbolt would write fresh meta pages into an empty file, which a read-only one refuses
		// with an unhelpful "bad file descriptor": an empty file holds no database.
		if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() && fi.Size() == 0 {
			return nil, fmt.Errorf("storage: open %s: the file is empty: %w", path, fs.ErrNotExist)
		}
	}
	db, err := openBolt(path, &bolt.Options{Timeout: timeout, ReadOnly: opts.ReadOnly})
	if err != nil {
		switch {
		case errors.Is(err, berrors.ErrTimeout):
			return nil, fmt.Errorf("storage: open %s: %w (waited %v): %w", path, ErrLocked, timeout, err)
		case isDamage(err) && !errors.Is(err, ErrDamaged):
			return nil, fmt.Errorf("storage: open %s: %w: %w", path, ErrDamaged, err)
		}
		return nil, fmt.Errorf("storage: open %s: %w", path, err)
	}
	// Check the pages before migrating: never write into a damaged file.
	if err := view(db, verify); err != nil {
		db.Close()
		return nil, fmt.Errorf("storage: open %s: %w", path, err)
	}
	if opts.ReadOnly {
		err = db.View(checkVersion)
	} else {
		err = migrate(db, migrations)
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("storage: open %s: %w", path, err)
	}
	if !opts.ReadOnly {
		// A compaction this process's predecessor did not finish: the database is the file
		// at path, and this process holds its lock.
		_ = os.Remove(compactPath(path))
	}
	return &Store{db: db, path: path, solo: opts.NoGroupCommit, readOnly: opts.ReadOnly}, nil
}

// checkVersion is what a read-only Open does instead of migrating: the file must have the current
// schema and layout, since the Store cannot bring it forward.
func checkVersion(tx *bolt.Tx) error {
	have, err := schemaVersion(tx)
	if err != nil {
		return err
	}
	switch want := SchemaVersion(); {
	case have > want:
		return fmt.Errorf("%w: database has version %d, this binary knows up to %d", ErrNewerSchema, have, want)
	case have < want:
		return fmt.Errorf("%w: database has version %d, this binary reads %d", ErrOlderSchema, have, want)
	}
	return checkLayout(tx)
}

// Close closes the database, waiting for running transactions. Later calls fail with bbolt's
// ErrDatabaseNotOpen.
func (s *Store) Close() error {
	s.feed.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.db.Close()
}

// Path is the database file's path.
func (s *Store) Path() string {
	return s.path
}

// update runs one read-write transaction outside the commit queue (Prune, Rewrite, Forget), and
// then tells the watches of changes (nil: none), in commit order. fn must not call back into
// the Store.
func (s *Store) update(fn func(*bolt.Tx) error, changes func() []store.TableChange) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.db.Update(fn); err != nil {
		return err
	}
	if changes != nil {
		s.feed.Publish(changes()...)
	}
	return nil
}

// CheckKey refuses, with ErrBadKey, a key or bucket name that bbolt cannot keep (empty, or
// longer than its limit): what names a table, a record or a KV entry. Every store of the
// repository takes the same keys, so data moves between them (migrate, backup).
func CheckKey(what, k string) error {
	if k == "" || len(k) > bolt.MaxKeySize {
		return fmt.Errorf("storage: %s of %d bytes: %w", what, len(k), ErrBadKey)
	}
	return nil
}

// CheckKeys is CheckKey of every record's key and every KV entry's bucket and key, of all the
// lists of entries given.
func CheckKeys(records []store.Record, entries ...[]store.KVEntry) error {
	for _, r := range records {
		if err := CheckKey("record key", r.Key); err != nil {
			return err
		}
	}
	for _, list := range entries {
		for _, e := range list {
			if err := CheckKV(e.Bucket, e.Key); err != nil {
				return err
			}
		}
	}
	return nil
}

// clone copies bytes out of a transaction; it keeps nil as nil and empty as empty.
func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append(make([]byte, 0, len(b)), b...)
}

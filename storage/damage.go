package storage

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"sync/atomic"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// bbolt trusts the file: a garbage page makes it panic ("page 7: has unexpected type"), and a page
// number that points outside the mapping makes it read memory that is not there, which the Go
// runtime treats as a fatal fault unless the goroutine asked for a panic instead. The functions
// here are the only doors through which this package reads pages it has not checked: Open (bbolt's
// own Open and verify), the iterations behind Tables, Records and Log, and Backup. Each turns a
// panic or a fault into ErrDamaged.

// guardPages makes a fault a panic for the calling goroutine and recovers any panic into an
// ErrDamaged stored in *err. Use it as `defer guardPages(&err)()` around bbolt calls only, never
// around a caller's callback: a bug there is not a damaged file.
func guardPages(err *error) func() {
	old := debug.SetPanicOnFault(true)
	return func() {
		debug.SetPanicOnFault(old)
		if r := recover(); r != nil {
			// bbolt's panic messages name pages and offsets, never stored bytes.
			*err = fmt.Errorf("%w: %v", ErrDamaged, r)
		}
	}
}

// openBolt is bolt.Open behind guardPages: with a garbage freelist page bbolt's Open panics. The
// descriptor bbolt opened is then lost (it has not returned the DB), so the process should exit.
func openBolt(path string, opts *bolt.Options) (db *bolt.DB, err error) {
	defer guardPages(&err)()
	return bolt.Open(path, 0o600, opts)
}

// view is db.View behind guardPages. bbolt's View rolls its transaction back while a panic
// unwinds, so the database stays usable (and closable) after a recovered one.
func view(db *bolt.DB, fn func(*bolt.Tx) error) (err error) {
	defer guardPages(&err)()
	return db.View(fn)
}

// view runs a read transaction behind guardPages.
func (s *Store) view(fn func(*bolt.Tx) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return view(s.db, fn)
}

// isDamage tells whether an error from bolt.Open means the file is damaged rather than absent,
// locked or unreadable.
func isDamage(err error) bool {
	if errors.Is(err, ErrDamaged) || errors.Is(err, berrors.ErrInvalid) ||
		errors.Is(err, berrors.ErrChecksum) || errors.Is(err, berrors.ErrVersionMismatch) {
		return true
	}
	// bbolt has no sentinel for a file shorter than its two meta pages; TestOpenDamaged pins
	// this text, so a bbolt that words it differently fails a test rather than a user.
	return strings.HasPrefix(err.Error(), "file size too small")
}

// verify reads every page in use once: the file must be as long as its meta page says, and every
// bucket, key and value must be reachable. It touches every page of every value, so a value that
// points outside the file faults here, inside the guard, and not later in a game.
func verify(tx *bolt.Tx) error {
	fi, err := os.Stat(tx.DB().Path())
	if err != nil {
		return err
	}
	if fi.Size() < tx.Size() {
		return fmt.Errorf("%w: the file has %d bytes, its pages need %d (truncated)", ErrDamaged, fi.Size(), tx.Size())
	}
	var sum byte
	err = tx.ForEach(func(_ []byte, b *bolt.Bucket) error {
		sum ^= walk(b)
		return nil
	})
	touched.Store(uint32(sum))
	return err
}

// touched keeps the bytes walk reads observable, so no compiler may drop the reads.
var touched atomic.Uint32

// walk reads every key and value of b and of its nested buckets, one byte per page of each value,
// and returns their XOR.
func walk(b *bolt.Bucket) byte {
	const step = 1024 // bbolt's smallest page size
	var sum byte
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if len(k) > 0 {
			sum ^= k[0] ^ k[len(k)-1]
		}
		if v == nil {
			if nested := b.Bucket(k); nested != nil {
				sum ^= walk(nested)
			}
			continue
		}
		for i := 0; i < len(v); i += step {
			sum ^= v[i]
		}
		if len(v) > 0 {
			sum ^= v[len(v)-1]
		}
	}
	return sum
}

package storage

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"
)

// bbolt never overwrites a page it frees: what a transaction replaced or deleted stays in the
// file, readable, until a later write happens to reuse the page, and tx.WriteTo copies the whole
// file, free pages and all. So a backup here is a compacted copy — bbolt's Compact writes every
// bucket, key and value in use into a fresh file, and nothing else — and Forget, after its
// transaction, swaps a compacted copy in for the file itself (compact.go).

// compactTxSize bounds one transaction of a compaction: a large database is copied in several,
// so the copy never holds the whole database in memory.
const compactTxSize = 32 << 20

// copyLive writes what src holds into dst, a new, empty database opened with NoSync, and makes it
// durable. src's pages are read behind the damage guard.
func copyLive(dst, src *bolt.DB) (err error) {
	func() {
		defer guardPages(&err)()
		// bolt.Compact commits its last batch after its read transaction has ended, from values
		// that still point into src's memory map (Put keeps the value it is given until the
		// commit): with commits going on, src's pages could be reused or remapped by then, and
		// the copy held garbage (TestBackup, 2 runs in 20). A read transaction held across the
		// whole copy keeps every page it read where it was.
		var hold *bolt.Tx
		if hold, err = src.Begin(false); err != nil {
			return
		}
		defer hold.Rollback()
		err = bolt.Compact(dst, src, compactTxSize)
	}()
	if err != nil {
		return err
	}
	dst.NoSync = false
	return dst.Sync()
}

// compactTo writes the live data into a new bbolt file at path (created, or an empty file) and
// gives its size. The copy comes from one read transaction: commits go on meanwhile and are not in
// it (while it lasts, a commit that grows the file waits: bbolt remaps only without readers).
func (s *Store) compactTo(path string) (int64, error) {
	dst, err := bolt.Open(path, 0o600, &bolt.Options{NoSync: true})
	if err != nil {
		return 0, err
	}
	s.mu.RLock()
	err = copyLive(dst, s.db)
	s.mu.RUnlock()
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// Backup writes a consistent copy of the database to w while the Store stays in use, and gives the
// number of bytes written. The copy is a bbolt file that Open accepts, holding only what the
// database holds now: nothing deleted or replaced before (see above). It is first compacted into a
// temporary file beside the database, so w taking its time holds no transaction open. A damaged
// file fails with ErrDamaged.
func (s *Store) Backup(w io.Writer) (int64, error) {
	dir, base := filepath.Split(s.path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".backup-*")
	if err != nil {
		return 0, fmt.Errorf("storage: backup: %w", err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if _, err := s.compactTo(f.Name()); err != nil {
		return 0, fmt.Errorf("storage: backup: %w", err)
	}
	n, err := io.Copy(w, f)
	if err != nil {
		return n, fmt.Errorf("storage: backup: %w", err)
	}
	return n, nil
}

// BackupFile writes a Backup to path atomically: into a temporary file in the same directory,
// synced, then renamed over path. On failure path is unchanged and the temporary file is removed.
func (s *Store) BackupFile(path string) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("storage: backup: %w", err)
	}
	tmp := f.Name()
	f.Close()
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	if _, err = s.compactTo(tmp); err != nil {
		return fmt.Errorf("storage: backup: %w", err)
	}
	if err = os.Chmod(tmp, 0o600); err != nil {
		return fmt.Errorf("storage: backup: %w", err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("storage: backup: %w", err)
	}
	syncDir(dir)
	return nil
}

// syncDir makes a rename in dir durable; not every system can sync a directory, so this is best
// effort.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

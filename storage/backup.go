package storage

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"
)

// Backup writes a consistent copy of the whole database to w while the Store stays in use: it runs
// in one read transaction, so commits go on meanwhile and are not in the copy. It returns the
// number of bytes written. The copy is a bbolt file that Open accepts. A file that turns out shorter
// than its pages (truncated while open) fails with ErrDamaged.
//
// The read transaction lasts until w has taken the last byte, and while it lasts a commit that
// grows the file waits (bbolt remaps the file only without readers): give Backup a writer that
// cannot stall, such as a local file, never a network client.
func (s *Store) Backup(w io.Writer) (int64, error) {
	var n int64
	err := s.view(func(tx *bolt.Tx) error {
		var err error
		n, err = tx.WriteTo(w)
		if errors.Is(err, io.EOF) {
			// WriteTo copies tx.Size() bytes from the file; an EOF means it is not that long.
			return fmt.Errorf("%w: the file ends before its last page", ErrDamaged)
		}
		return err
	})
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
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err = s.Backup(f); err != nil {
		return err
	}
	if err = f.Chmod(0o600); err != nil {
		return fmt.Errorf("storage: backup: %w", err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("storage: backup: %w", err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("storage: backup: %w", err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("storage: backup: %w", err)
	}
	// Make the rename durable; not every system can sync a directory, so this is best effort.
	if d, derr := os.Open(dir); derr == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

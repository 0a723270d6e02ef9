package storage_test

import (
	"path/filepath"
	"testing"

	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/storage"
	"github.com/kontermatt/kontermatt/storage/storagetest"
)

// TestBoltConforms: the bbolt store keeps the contract every store keeps, with and without group
// commit.
func TestBoltConforms(t *testing.T) {
	for _, solo := range []bool{false, true} {
		name := "group commit"
		if solo {
			name = "no group commit"
		}
		t.Run(name, func(t *testing.T) {
			storagetest.Suite{Open: func(t *testing.T) storagetest.Store {
				s, err := storage.Open(filepath.Join(t.TempDir(), "km.db"), storage.Options{NoGroupCommit: solo})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				return s
			}, Log: BoltLog, BadKey: storage.ErrBadKey}.Run(t)
		})
	}
}

// BoltLog reads a bbolt store's log of a table.
func BoltLog(t *testing.T, s storagetest.Store, id string) []table.LogEntry {
	ctx := t.Context()
	t.Helper()
	var out []table.LogEntry
	if err := s.(*storage.Store).Log(ctx, id, func(e table.LogEntry) error { out = append(out, e); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

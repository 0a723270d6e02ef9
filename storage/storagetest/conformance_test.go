package storagetest_test

import (
	"testing"

	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/storage/storagetest"
)

// TestMemStoreConforms: the in-memory store keeps the contract every store keeps.
func TestMemStoreConforms(t *testing.T) {
	storagetest.Suite{
		Open: func(*testing.T) storagetest.Store { return table.NewMemStore() },
		Log: func(_ *testing.T, s storagetest.Store, id string) []table.LogEntry {
			return s.(*table.MemStore).Log(id)
		},
	}.Run(t)
}

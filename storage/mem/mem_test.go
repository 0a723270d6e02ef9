package mem_test

import (
	"testing"

	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/storage/mem"
	"github.com/kontermatt/kontermatt/storage/storagetest"
)

// TestConforms: the in-memory store keeps the contract every store keeps.
func TestConforms(t *testing.T) {
	storagetest.Suite{
		Open: func(*testing.T) storagetest.Store { return mem.New() },
		Log: func(_ *testing.T, s storagetest.Store, id string) []table.LogEntry {
			return s.(*mem.Store).Log(id)
		},
	}.Run(t)
}

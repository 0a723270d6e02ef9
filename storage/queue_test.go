package storage

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
)

var errBroken = errors.New("broken write")

// TestGroupCommitConflictFailsAlone: writes that share a transaction each get their own outcome:
// a stale change among them is refused and the others are stored, and a write that fails while
// applying (a key bbolt refuses) fails alone too.
func TestGroupCommitConflictFailsAlone(t *testing.T) {
	ctx := t.Context()
	s, _ := openTemp(t, Options{})
	for i := range 32 {
		commit(t, s, table.Change{TableID: fmt.Sprint("t", i), State: []byte("1"), Log: entry(1, api.VerbNew)})
	}
	for round := range 20 {
		var wg sync.WaitGroup
		errs := make([]error, 34)
		start := make(chan struct{})
		for i := range 32 {
			wg.Go(func() {
				<-start
				errs[i] = s.Commit(ctx, table.Change{TableID: fmt.Sprint("t", i), State: fmt.Appendf(nil, "%d", round+2), Log: entry(uint64(round+2), api.VerbPlay)})
			})
		}
		wg.Go(func() { // stale
			<-start
			errs[32] = s.Commit(ctx, table.Change{TableID: "t0", State: []byte("stale"), Log: entry(1, api.VerbPlay)})
		})
		wg.Go(func() { // spoils its transaction while applying
			<-start
			errs[33] = s.do(ctx, &write{apply: func(*bolt.Tx) error { return errBroken }})
		})
		close(start)
		wg.Wait()
		for i := range 32 {
			if errs[i] != nil {
				t.Fatalf("round %d: commit of t%d: %v", round, i, errs[i])
			}
		}
		if !errors.Is(errs[32], table.ErrConflict) {
			t.Fatalf("round %d: the stale change: %v, want ErrConflict", round, errs[32])
		}
		if !errors.Is(errs[33], errBroken) {
			t.Fatalf("round %d: the write that fails while applying: %v", round, errs[33])
		}
	}
	tables := allTables(t, s)
	for i := range 32 {
		if tables[fmt.Sprint("t", i)] != "21" {
			t.Errorf("t%d = %q, want 21", i, tables[fmt.Sprint("t", i)])
		}
	}
}

package storage

import (
	"errors"
	"testing"

	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// TestCommitPrunesAFinishedMatchsLog: a change with PruneLog (a match ended and is kept in its
// records) leaves the table's log with its own entry only, and the log still only grows.
func TestCommitPrunesAFinishedMatchsLog(t *testing.T) {
	ctx := t.Context()
	s, _ := openTemp(t, Options{})
	for seq := uint64(1); seq <= 40; seq++ {
		commit(t, s, table.Change{TableID: "t1", State: []byte("playing"), Log: entry(seq, api.VerbPlay, "q♠")})
	}
	commit(t, s, table.Change{TableID: "t2", State: []byte("other"), Log: entry(1, api.VerbJoin)})
	commit(t, s, table.Change{TableID: "t1", State: []byte("over"), Log: entry(41, api.VerbPlay, "a♥"), PruneLog: true,
		Records: []table.Record{{Key: "t1/m1", Data: []byte(`{"match":1}`)}}})
	equalJSON(t, "log of t1 after its match", allLog(t, s, "t1"), []table.LogEntry{entry(41, api.VerbPlay, "a♥")})
	equalJSON(t, "log of t2", allLog(t, s, "t2"), []table.LogEntry{entry(1, api.VerbJoin)})
	if err := s.Commit(ctx, table.Change{TableID: "t1", State: []byte("x"), Log: entry(41, api.VerbRematch)}); !errors.Is(err, table.ErrConflict) {
		t.Errorf("a sequence number not after the pruned log's last: %v, want table.ErrConflict", err)
	}
	commit(t, s, table.Change{TableID: "t1", State: []byte("playing"), Log: entry(42, api.VerbRematch)})
	s = reopen(t, s)
	equalJSON(t, "log of t1 in the next match", allLog(t, s, "t1"), []table.LogEntry{entry(41, api.VerbPlay, "a♥"), entry(42, api.VerbRematch)})
}

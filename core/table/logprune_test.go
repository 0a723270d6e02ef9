package table

import (
	"testing"
	"testing/synctest"

	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// TestFinishedMatchLogIsPruned: a table that keeps rematching keeps the command log of the match
// being played only. When a match ends its record is kept and its log goes, all but the entry
// that ended it (the log's last sequence number, so it still only grows); the next match's
// commands start a log of their own. Before, the log of every match a table ever played stayed
// until the table closed and was pruned: it grew without bound.
func TestFinishedMatchLogIsPruned(t *testing.T) {
	ctx := t.Context()
	synctest.Test(t, func(t *testing.T) {
		store := mem.New()
		h := newHarness(t, store)
		defer h.svc.Close()
		me := player(1)
		h.do(me, api.VerbNew, "timer=none", "stripes=1")
		h.do(me, api.VerbDeal)
		id := h.svc.TableAt(h.place)
		for match := 1; match <= 3; match++ {
			h.playAsHuman(me, 1000)
			if !h.over() {
				t.Fatalf("match %d did not end", match)
			}
			log := store.Log(id)
			if len(log) != 1 {
				t.Fatalf("after match %d the log keeps %d entries, want the one that ended it", match, len(log))
			}
			if _, ok, _ := store.Record(ctx, StoredKey(id, match)); !ok {
				t.Fatalf("match %d has no record", match)
			}
			last := log[0].Seq
			if e := errText(h.do(me, api.VerbRematch)); e != "" {
				t.Fatalf("rematch: %s", e)
			}
			synctest.Wait()
			log = store.Log(id)
			if len(log) < 2 || log[0].Seq != last || log[1].Verb != api.VerbRematch {
				t.Fatalf("the next match's log starts %+v", log[:min(len(log), 2)])
			}
		}
	})
}

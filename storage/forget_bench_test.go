package storage_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/core/league"
	"github.com/kontermatt/kontermatt/core/league/keeper"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage"
)

var forgetMatches = flag.Int("forget.matches", 1000, "BenchmarkForget: kept matches in the database")

// BenchmarkForget measures "forget yes" on a database of -forget.matches (1,000) kept matches
// among 200 people at 50 places, with the closed tables of the last 30 days (a tenth of them)
// and their leagues: each iteration forgets another person who played about 20 of them. It
// reports the time one forget takes — reading the records and closed tables, making the leagues
// anew, the one transaction and the compaction of the file — the compaction's alone (during which
// every other use of the store waits), and the file's size.
//
//	go test -run '^$' -bench Forget -benchtime 10x ./storage
func BenchmarkForget(b *testing.B) {
	ctx := b.Context()
	path := filepath.Join(b.TempDir(), "kontermatt.db")
	store, err := storage.Open(path, storage.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	// One real match, its last state and its record, copied with other people at other places.
	closed, record := oneClosedMatch(b)
	var rec table.StoredMatch
	if err := json.Unmarshal(record, &rec); err != nil {
		b.Fatal(err)
	}
	person := func(n int) (id, name string) {
		return fmt.Sprintf("tg:5000%05d", n%200), fmt.Sprintf("Person %03d", n%200)
	}
	for i := range *forgetMatches {
		c := closed
		c.TableID = fmt.Sprintf("c%06d", i)
		state := c.State
		r := rec
		r.Table, r.Place, r.End = c.TableID, fmt.Sprintf("telegram:-100%d", i%50), rec.End+int64(i)*60000
		for s := range r.Seats {
			id, name := person(i*7 + s*53)
			r.Seats[s].ID, r.Seats[s].Name = id, name
			state = bytes.ReplaceAll(state, []byte(fmt.Sprintf(`"b0-%d"`, s)), []byte(`"`+id+`"`))
			state = bytes.ReplaceAll(state, []byte(fmt.Sprintf(`"b0-%d/`, s)), []byte(`"`+id+`/`))
		}
		data, _ := json.Marshal(r)
		c.Records = []table.Record{{Key: table.StoredKey(c.TableID, 1), Data: data}}
		c.State = state
		if i%10 != 0 {
			c.State, c.Closed = nil, false // pruned long ago: only the record is left
		}
		if err := store.Commit(ctx, c); err != nil {
			b.Fatal(err)
		}
	}
	entries, _, _, err := keeper.Rebuild(ctx, store.Records)
	if err != nil {
		b.Fatal(err)
	}
	if err := store.Rewrite(ctx, nil, league.Buckets, entries); err != nil {
		b.Fatal(err)
	}
	svc := tabletest.New(table.Config{Store: store, KV: store, Seed: 2})
	defer svc.Close()
	named, n := 0, 0
	var took time.Duration
	for b.Loop() {
		id, _ := person(n)
		n++
		start := time.Now()
		got, err := svc.Forget(ctx, id)
		took += time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		named += got
	}
	b.StopTimer()
	// The compaction alone: a Forget that deletes one entry about someone.
	if err := store.Put(ctx, "bench.people", "p", []byte("1")); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if err := store.Forget(ctx, table.Forgetting{KV: []table.KVEntry{{Bucket: "bench.people", Key: "p"}}}); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/1000, "compact-ms")
	info, _ := os.Stat(path)
	b.ReportMetric(float64(took.Microseconds())/float64(b.N)/1000, "ms/forget")
	b.ReportMetric(float64(named)/float64(b.N), "matches/forget")
	b.ReportMetric(float64(info.Size())/(1<<20), "file-MB")
}

package storage_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage"
	"github.com/kontermatt/kontermatt/storage/mem"
)

var (
	retentionMatches = flag.Int("retention.matches", 1000, "BenchmarkRetention: matches to play")
	startupClosed    = flag.Int("startup.closed", 100000, "BenchmarkStartup: closed matches stored")
)

// playMatches plays n whole matches of four humans through the service, in places that each play
// one match after another (a new table closes the finished one), two seconds per command.
func playMatches(b *testing.B, svc *table.Service, clk *tabletest.Clock, n, places int) {
	for i := range n {
		tt, err := tabletest.Open(svc, i%places)
		if err != nil {
			b.Fatalf("match %d: %v", i, err)
		}
		for {
			if st, _ := svc.Status(tt.ID); st != api.StatusPlaying {
				break
			}
			clk.Add(2 * time.Second)
			if _, err := tabletest.Step(svc, tt); err != nil {
				b.Fatalf("match %d: %v", i, err)
			}
		}
	}
}

func heapNow() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkRetention plays -retention.matches matches (1,000) through the service on bbolt, lets
// the retention period pass and prunes as the service's janitor does, then reports per match kept:
// the file, the pages in use and the record, and the heap left for the tables that closed.
//
//	go test -run '^$' -bench Retention -benchtime 1x ./storage
func BenchmarkRetention(b *testing.B) {
	ctx := b.Context()
	for b.Loop() {
		path := filepath.Join(b.TempDir(), "kontermatt.db")
		store, err := storage.Open(path, storage.Options{})
		if err != nil {
			b.Fatal(err)
		}
		clk := tabletest.NewClock(time.Date(2026, 1, 1, 18, 0, 0, 0, time.UTC))
		svc := tabletest.New(table.Config{Store: store, KV: store, Seed: 1, Now: clk.Now})
		const places = 50
		playMatches(b, svc, clk, *retentionMatches, places)
		// The last match of every place is still open for a rematch: stop them as an admin would.
		for p := range places {
			place := api.Place{Platform: "bench", Chat: fmt.Sprint(p)}
			svc.Handle(context.Background(), api.Command{Place: place, Actor: api.Player{ID: "admin"}, Verb: api.VerbStop, Admin: true})
		}
		fileBefore, usedBefore, _ := store.Space()
		clk.Add(table.DefaultRetention + time.Hour)
		pruned, err := store.Prune(ctx, clk.Now().Add(-table.DefaultRetention))
		if err != nil || pruned != *retentionMatches {
			b.Fatalf("pruned %d tables (%v), want %d", pruned, err, *retentionMatches)
		}
		var records, recordBytes int
		store.Records(ctx, func(_ string, data []byte) error {
			records++
			recordBytes += len(data)
			return nil
		})
		// What the service still holds is what it costs alive minus what is left once it is gone
		// (bbolt's own free-page lists grow with the file, not with the tables).
		time.Sleep(10 * time.Millisecond) // closed tables leave memory in a goroutine of their own
		inMemory := svc.Tables()
		withService := heapNow()
		svc.Close()
		svc = nil
		heap := int64(withService) - int64(heapNow())
		file, used, _ := store.Space()
		store.Close()
		n := float64(records)
		b.ReportMetric(float64(records), "matches")
		b.ReportMetric(float64(fileBefore)/n/1024, "file-KB/match-before")
		b.ReportMetric(float64(usedBefore)/n/1024, "used-KB/match-before")
		b.ReportMetric(float64(file)/n/1024, "file-KB/match")
		b.ReportMetric(float64(used)/n/1024, "used-KB/match")
		b.ReportMetric(float64(recordBytes)/n/1024, "record-KB/match")
		b.ReportMetric(float64(heap)/n, "service-heap-B/match")
		b.ReportMetric(float64(inMemory), "tables-in-memory")
	}
}

// BenchmarkStartup opens a database holding -startup.closed (100,000) kept matches and the
// closed tables of the last 30 days (a tenth of them), and resumes the service on it.
//
//	go test -run '^$' -bench Startup -benchtime 5x ./storage
func BenchmarkStartup(b *testing.B) {
	ctx := b.Context()
	path := filepath.Join(b.TempDir(), "kontermatt.db")
	store, err := storage.Open(path, storage.Options{})
	if err != nil {
		b.Fatal(err)
	}
	// One real match, its last state and its record, copied under many table IDs. Closed now, so
	// within the retention period when the service resumes on the real clock: start-up loads
	// none of them and prunes none.
	closed, record := oneClosedMatch(b)
	const batch = 1000
	for i := 0; i < *startupClosed; i += batch {
		for j := i; j < min(i+batch, *startupClosed); j++ {
			c := closed
			c.TableID = fmt.Sprintf("c%06d", j)
			c.Records = []table.Record{{Key: table.StoredKey(c.TableID, 1), Data: record}}
			if j%10 != 0 {
				c.State, c.Closed = nil, false // pruned long ago: only the record is left
			}
			if err := store.Commit(ctx, c); err != nil {
				b.Fatal(err)
			}
		}
	}
	store.Close()
	info, _ := os.Stat(path)
	var took time.Duration
	for b.Loop() {
		start := time.Now()
		store, err := storage.Open(path, storage.Options{})
		if err != nil {
			b.Fatal(err)
		}
		svc := tabletest.New(table.Config{Store: store, KV: store, Seed: 1})
		if err := svc.Resume(context.Background()); err != nil {
			b.Fatal(err)
		}
		took += time.Since(start)
		svc.Close()
		store.Close()
	}
	b.ReportMetric(float64(took.Microseconds())/float64(b.N)/1000, "startup-ms")
	b.ReportMetric(float64(info.Size())/(1<<20), "file-MB")
}

// oneClosedMatch plays one match of four in memory, closes its table now, and gives the change
// that closed it (without its records) and the match's record, for benchmarks to copy.
func oneClosedMatch(b *testing.B) (table.Change, []byte) {
	ms := &keepLast{Store: mem.New()}
	clk := tabletest.NewClock(time.Now())
	svc := tabletest.New(table.Config{Store: ms, Seed: 1, Now: clk.Now})
	playMatches(b, svc, clk, 1, 1)
	svc.Handle(context.Background(), api.Command{Place: api.Place{Platform: "bench", Chat: "0"},
		Actor: api.Player{ID: "admin"}, Verb: api.VerbStop, Admin: true})
	svc.Close()
	if ms.closed.TableID == "" || len(ms.record) == 0 {
		b.Fatal("no closed table or record to copy")
	}
	return ms.closed, ms.record
}

// keepLast keeps the last closing change and the last record the service commits.
type keepLast struct {
	*mem.Store
	mu     sync.Mutex
	closed table.Change
	record []byte
}

func (k *keepLast) Commit(ctx context.Context, c table.Change) error {
	k.mu.Lock()
	if c.Closed {
		k.closed = c
		k.closed.Records = nil
	}
	for _, r := range c.Records {
		k.record = r.Data
	}
	k.mu.Unlock()
	return k.Store.Commit(ctx, c)
}

// BenchmarkDiskPerMatch plays whole matches of four humans through the service on bbolt and
// reports what each finished match leaves on disk: the pages in use that the file gained per
// match (B/match), and the bytes of command log among them (log-B/match). "rematch" is one table
// that keeps rematching, which retention never prunes; "new" opens a new table at the place each
// time, closing the finished one (kept until the retention period is over).
//
//	go test -run '^$' -bench DiskPerMatch -benchtime 40x ./storage
func BenchmarkDiskPerMatch(b *testing.B) {
	for _, mode := range []string{"rematch", "new"} {
		b.Run(mode, func(b *testing.B) {
			store, err := storage.Open(filepath.Join(b.TempDir(), "kontermatt.db"), storage.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer store.Close()
			clk := tabletest.NewClock(time.Date(2026, 1, 1, 18, 0, 0, 0, time.UTC))
			svc := tabletest.New(table.Config{Store: store, KV: store, Seed: 1, Now: clk.Now})
			defer svc.Close()
			tt, err := tabletest.Open(svc, 0)
			if err != nil {
				b.Fatal(err)
			}
			var tables []string
			play := func() { // one whole match, from its deal to its end
				switch st, _ := svc.Status(tt.ID); {
				case st == api.StatusOver && mode == "rematch":
					if _, err := tabletest.Step(svc, tt); err != nil { // the rematch
						b.Fatal(err)
					}
				case st == api.StatusOver:
					if tt, err = tabletest.Open(svc, 0); err != nil {
						b.Fatal(err)
					}
				}
				tables = append(tables, tt.ID)
				for {
					if st, _ := svc.Status(tt.ID); st != api.StatusPlaying {
						return
					}
					clk.Add(2 * time.Second)
					if _, err := tabletest.Step(svc, tt); err != nil {
						b.Fatal(err)
					}
				}
			}
			for range 3 { // the places' league, the buckets: what the first matches make once
				play()
			}
			_, before, _ := store.Space()
			logBefore := logBytes(b, store, tables)
			for b.Loop() {
				play()
			}
			_, after, _ := store.Space()
			n := float64(b.N)
			b.ReportMetric(float64(after-before)/n, "B/match")
			b.ReportMetric(float64(logBytes(b, store, tables)-logBefore)/n, "log-B/match")
		})
	}
}

// logBytes adds up the JSON of every log entry the tables keep.
func logBytes(b *testing.B, store *storage.Store, tables []string) int {
	ctx := b.Context()
	total := 0
	seen := map[string]bool{}
	for _, id := range tables {
		if seen[id] {
			continue
		}
		seen[id] = true
		if err := store.Log(ctx, id, func(e table.LogEntry) error {
			j, _ := json.Marshal(e)
			total += len(j)
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
	return total
}

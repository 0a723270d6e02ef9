package storage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// The sizes the benchmarks write: a table's state of about 2 KB and a log entry of about 150
// bytes of JSON, as the service writes for one accepted command.
var (
	benchState = bytes.Repeat([]byte(`{"k":"v"},`), 205)[:2048]
	benchEntry = table.LogEntry{Time: 1767225600000, Actor: "tg:123456789", Verb: api.VerbPlay,
		Args: []string{"q♠"}, EventID: "cb:5829384756382910-1234567890123456789"}
)

func benchLog(seq uint64) table.LogEntry {
	e := benchEntry
	e.Seq = seq
	return e
}

func TestBenchSizes(t *testing.T) {
	j, err := json.Marshal(benchLog(123456))
	if err != nil {
		t.Fatal(err)
	}
	if len(benchState) != 2048 || len(j) < 130 || len(j) > 170 {
		t.Errorf("state %d bytes, log entry %d bytes; want 2048 and about 150", len(benchState), len(j))
	}
}

// BenchmarkRawUpdate is the floor: one bbolt Update per command, writing the state and a log entry
// into a nested bucket, with no Store around it.
func BenchmarkRawUpdate(b *testing.B) {
	db, err := bolt.Open(filepath.Join(b.TempDir(), "raw.db"), 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucket([]byte("tables"))
		if err == nil {
			_, err = tx.CreateBucket([]byte("logs"))
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	entry, err := json.Marshal(benchLog(1))
	if err != nil {
		b.Fatal(err)
	}
	id := []byte("dc:123456789012345678")
	b.SetBytes(int64(len(benchState) + len(entry)))
	b.ResetTimer()
	for seq := uint64(1); seq <= uint64(b.N); seq++ {
		err := db.Update(func(tx *bolt.Tx) error {
			if err := tx.Bucket([]byte("tables")).Put(id, benchState); err != nil {
				return err
			}
			log, err := tx.Bucket([]byte("logs")).CreateBucketIfNotExists(id)
			if err != nil {
				return err
			}
			return log.Put(seqKey(seq), entry)
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "updates/s")
}

// BenchmarkCommit is Store.Commit with 1, 16 and 256 tables committing at once, each table from
// its own goroutine (as the service does: one writer per table at a time).
func BenchmarkCommit(b *testing.B) {
	for _, n := range []int{1, 16, 256} {
		b.Run(fmt.Sprint("tables=", n), func(b *testing.B) { benchCommit(b, Options{}, n, 0) })
	}
}

// BenchmarkCommitNoGroup is BenchmarkCommit with Options.NoGroupCommit: a transaction per
// commit.
func BenchmarkCommitNoGroup(b *testing.B) {
	for _, n := range []int{1, 16, 256} {
		b.Run(fmt.Sprint("tables=", n), func(b *testing.B) { benchCommit(b, Options{NoGroupCommit: true}, n, 0) })
	}
}

// benchCommit commits from the tables at once, each as fast as it can (every 0) or once every
// interval, the tables' starts spread over it, and reports p50, p99 and the commits a second.
func benchCommit(b *testing.B, opts Options, tables int, every time.Duration) {
	ctx := b.Context()
	s, _ := openTemp(b, opts)
	var done atomic.Int64
	var wg sync.WaitGroup
	took := make([][]time.Duration, tables)
	b.SetBytes(int64(len(benchState)) + 150)
	b.ResetTimer()
	begin := time.Now()
	for g := range tables {
		wg.Go(func() {
			id := fmt.Sprintf("dc:1234567890123%05d", g)
			next := begin.Add(every * time.Duration(g) / time.Duration(tables))
			for seq := uint64(1); done.Add(1) <= int64(b.N); seq++ {
				if every > 0 {
					time.Sleep(time.Until(next))
					next = next.Add(every)
				}
				start := time.Now()
				if err := s.Commit(ctx, table.Change{TableID: id, State: benchState, Log: benchLog(seq)}); err != nil {
					b.Error(err)
					return
				}
				took[g] = append(took[g], time.Since(start))
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	all := slices.Concat(took...)
	slices.Sort(all)
	if len(all) > 0 {
		b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commits/s")
}

// BenchmarkTablesLoad is the start of the bot: Tables over 10,000 stored tables of 2 KB each (each
// with a log of one entry, which Tables does not read).
func BenchmarkTablesLoad(b *testing.B) {
	ctx := b.Context()
	const n = 10_000
	s, _ := openTemp(b, Options{})
	err := s.db.Update(func(tx *bolt.Tx) error {
		for i := range n {
			c := table.Change{TableID: fmt.Sprintf("dc:1234567890123%05d", i), State: benchState, Log: benchLog(1)}
			e, err := prepare(c)
			if err != nil {
				return err
			}
			if err := apply(tx, c, e); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(n * int64(len(benchState)))
	b.ResetTimer()
	for b.Loop() {
		count := 0
		if err := s.Tables(ctx, func(string, []byte) error { count++; return nil }); err != nil {
			b.Fatal(err)
		}
		if count != n {
			b.Fatalf("loaded %d tables, want %d", count, n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/table")
}

// BenchmarkCommitPaced is 256 tables that commit at a pace, not as fast as they can: each table
// every interval, the tables' starts spread over it, as tables of people do (a table of four
// makes a move every second or two; 50 ms a table is 5,120 commits/s offered, far above that).
// With writers that never pause (BenchmarkCommit), the wait is the queue's length over the
// throughput whatever the store does; paced, it is what a move costs when the disk keeps up.
func BenchmarkCommitPaced(b *testing.B) {
	for _, every := range []time.Duration{500 * time.Millisecond, 100 * time.Millisecond, 50 * time.Millisecond} {
		b.Run(fmt.Sprint("tables=256/every=", every), func(b *testing.B) { benchCommit(b, Options{}, 256, every) })
		b.Run(fmt.Sprint("tables=256/every=", every, "/nogroup"), func(b *testing.B) {
			benchCommit(b, Options{NoGroupCommit: true}, 256, every)
		})
	}
}

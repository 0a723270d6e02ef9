package table_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// BenchmarkServiceMemory is the service's own cost per command: storage in memory.
func BenchmarkServiceMemory(b *testing.B) {
	tabletest.RunTables(b, mem.New(), 1)
}

// BenchmarkResume10000 loads 10,000 stored tables in mid-game, as at start, and reports the
// memory each idle table holds.
func BenchmarkResume10000(b *testing.B) {
	const n = 10000
	store := mem.New()
	svc := table.New(table.Config{Store: store, Seed: 1})
	for i := range n {
		tt, err := tabletest.Open(svc, i)
		if err != nil {
			b.Fatal(err)
		}
		for range 5 {
			if _, err := tabletest.Step(svc, tt); err != nil {
				b.Fatal(err)
			}
		}
	}
	svc.Close()
	b.ResetTimer()
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		s2 := table.New(table.Config{Store: store, Seed: 2})
		start := time.Now()
		if err := s2.Resume(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(time.Since(start).Seconds()*1000, "resume-ms")
		if s2.Tables() != n {
			b.Fatalf("resumed %d tables", s2.Tables())
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "B/table")
		s2.Close()
	}
}

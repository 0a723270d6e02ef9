package etcdstore_test

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage"
	"github.com/kontermatt/kontermatt/storage/etcdstore"
	"github.com/kontermatt/kontermatt/storage/etcdstore/etcdtest"
)

// BenchmarkStores plays real commands through table.Service, 1, 16 and 256 tables at once, on
// bbolt with group commit, bbolt without (a transaction per command) and a three-member etcd
// cluster in this process that fsyncs as a real one does; every command is durable before it is
// answered. It reports commands/s and the p50/p99 of one command, and at the end the ratios to
// bbolt with group commit.
func BenchmarkStores(b *testing.B) {
	ctx := b.Context()
	cluster := etcdtest.Start(b, etcdtest.Options{Durable: true})
	var mu sync.Mutex
	rate := map[string]float64{} // "kind/tables=n" → commands/s of the last run
	kinds := []struct {
		name string
		open func(b *testing.B) table.Store
	}{
		{"bbolt", func(b *testing.B) table.Store { return openBolt(b, storage.Options{}) }},
		{"bbolt-nogroup", func(b *testing.B) table.Store { return openBolt(b, storage.Options{NoGroupCommit: true}) }},
		{"etcd", func(b *testing.B) table.Store {
			s, err := etcdstore.Open(ctx, etcdstore.Options{Endpoints: cluster.Endpoints(), Prefix: fmt.Sprintf("bench%d/", prefixes.Add(1)), Timeout: 30 * time.Second})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { s.Close() })
			return s
		}},
	}
	for _, n := range []int{1, 16, 256} {
		for _, k := range kinds {
			name := fmt.Sprintf("%s/tables=%d", k.name, n)
			b.Run(name, func(b *testing.B) {
				tabletest.RunTables(b, k.open(b), n)
				mu.Lock()
				rate[name] = float64(b.N) / b.Elapsed().Seconds()
				mu.Unlock()
			})
		}
	}
	for _, n := range []int{1, 16, 256} {
		base := rate[fmt.Sprintf("bbolt/tables=%d", n)]
		if base == 0 {
			continue
		}
		b.Logf("tables=%d: bbolt %.0f cmds/s; bbolt-nogroup %.2f×, etcd %.2f× of it", n, base,
			rate[fmt.Sprintf("bbolt-nogroup/tables=%d", n)]/base, rate[fmt.Sprintf("etcd/tables=%d", n)]/base)
	}
}

func openBolt(b *testing.B, opts storage.Options) *storage.Store {
	s, err := storage.Open(filepath.Join(b.TempDir(), "bench.db"), opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

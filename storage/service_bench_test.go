package storage_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage"
	"github.com/kontermatt/kontermatt/storage/mem"
	bolt "go.etcd.io/bbolt"
)

// sizes measures what the service writes per command in mid-game: the state and the log entry.
func sizes(b *testing.B) (state, entry int) {
	ms := &sizingStore{Store: mem.New()}
	svc := tabletest.New(table.Config{Store: ms, Seed: 1})
	defer svc.Close()
	tt, err := tabletest.Open(svc, 0)
	if err != nil {
		b.Fatal(err)
	}
	for range 30 {
		if _, err := tabletest.Step(svc, tt); err != nil {
			b.Fatal(err)
		}
	}
	return ms.state, ms.entry
}

type sizingStore struct {
	*mem.Store
	state, entry int
}

func (s *sizingStore) Commit(ctx context.Context, c table.Change) error {
	entry, _ := json.Marshal(c.Log) // the store keeps log entries as JSON
	s.state, s.entry = len(c.State), len(entry)
	return s.Store.Commit(ctx, c)
}

// BenchmarkDurable compares, in one run, durable commands through the whole service on bbolt with
// raw bbolt Updates of the same size, for 1, 16 and 256 tables written at once. The service
// should reach at least 80% of the raw rate: the disk, not our code, is the limit.
func BenchmarkDurable(b *testing.B) {
	stateSize, entrySize := sizes(b)
	for _, n := range []int{1, 16, 256} {
		b.Run(fmt.Sprintf("raw/tables=%d", n), func(b *testing.B) {
			db, err := bolt.Open(filepath.Join(b.TempDir(), "raw.db"), 0o600, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			state, entry := make([]byte, stateSize), make([]byte, entrySize)
			b.ResetTimer()
			var wg sync.WaitGroup
			for i := range n {
				count := b.N / n
				if i < b.N%n {
					count++
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					id := []byte(fmt.Sprint("t", i))
					for seq := range count {
						err := db.Update(func(tx *bolt.Tx) error {
							tables, err := tx.CreateBucketIfNotExists([]byte("tables"))
							if err != nil {
								return err
							}
							if err := tables.Put(id, state); err != nil {
								return err
							}
							logs, err := tx.CreateBucketIfNotExists(id)
							if err != nil {
								return err
							}
							return logs.Put(binary.BigEndian.AppendUint64(nil, uint64(seq)), entry)
						})
						if err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cmds/s")
		})
		b.Run(fmt.Sprintf("service/tables=%d", n), func(b *testing.B) {
			st, err := storage.Open(filepath.Join(b.TempDir(), "bench.db"), storage.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			tabletest.RunTables(b, st, n)
		})
	}
	b.Logf("state %d bytes, log entry %d bytes", stateSize, entrySize)
}

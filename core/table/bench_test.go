package table_test

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/storage"
)

// benchTable opens a table of four humans at place i and deals.
func benchTable(b *testing.B, svc *table.Service, i int) (string, []table.Player) {
	place := table.Place{Platform: "bench", Chat: fmt.Sprint(i)}
	var ps []table.Player
	for s := 0; s < 4; s++ {
		ps = append(ps, table.Player{ID: fmt.Sprintf("b%d-%d", i, s), Name: "P"})
	}
	cmds := []table.Command{{Verb: table.VerbNew, Actor: ps[0], Args: []string{"timer=none"}}}
	for _, p := range ps[1:] {
		cmds = append(cmds, table.Command{Verb: table.VerbJoin, Actor: p})
	}
	cmds = append(cmds, table.Command{Verb: table.VerbDeal, Actor: ps[0]})
	for _, c := range cmds {
		c.Place = place
		if r := svc.Handle(context.Background(), c); len(r) > 0 && r[0].Kind == table.KindError {
			b.Fatal(r[0].Text)
		}
	}
	return svc.TableAt(place), ps
}

// step makes the player to move at a table act: name trump or play the first legal card. It
// returns how long the durable command took.
func step(b *testing.B, svc *table.Service, id string, place table.Place, players []table.Player) time.Duration {
	who, legal, trump := svc.Turn(id)
	var actor table.Player
	for _, p := range players {
		if p.ID == who {
			actor = p
		}
	}
	cmd := table.Command{Place: place, Actor: actor, Verb: table.VerbPlay}
	switch {
	case who == "": // the match is over: play another
		cmd.Actor, cmd.Verb = players[0], table.VerbRematch
	case trump:
		cmd.Verb, cmd.Args = table.VerbTrump, []string{"H"}
	default:
		cmd.Args = []string{legal[0].String()}
	}
	start := time.Now()
	r := svc.Handle(context.Background(), cmd)
	d := time.Since(start)
	if len(r) > 0 && r[0].Kind == table.KindError {
		b.Fatalf("%v: %s", cmd, r[0].Text)
	}
	return d
}

// runTables drives n tables from n goroutines for b.N commands in all, and reports commands per
// second and the p50/p99 latency of one command.
func runTables(b *testing.B, store table.Store, n int) {
	svc := table.New(table.Config{Store: store, Seed: 1})
	defer svc.Close()
	ids := make([]string, n)
	players := make([][]table.Player, n)
	for i := range n {
		ids[i], players[i] = benchTable(b, svc, i)
	}
	per := make([][]time.Duration, n)
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
			place := table.Place{Platform: "bench", Chat: fmt.Sprint(i)}
			for range count {
				per[i] = append(per[i], step(b, svc, ids[i], place, players[i]))
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	all := slices.Concat(per...)
	slices.Sort(all)
	if len(all) > 0 {
		b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cmds/s")
}

// BenchmarkServiceMemory is the service's own cost per command: storage in memory.
func BenchmarkServiceMemory(b *testing.B) {
	runTables(b, table.NewMemStore(), 1)
}

// BenchmarkServiceBolt is durable commands per second on bbolt with 1, 16 and 256 tables active
// at once; BenchmarkRawUpdate in package storage is the raw rate to compare with.
func BenchmarkServiceBolt(b *testing.B) {
	for _, n := range []int{1, 16, 256} {
		b.Run(fmt.Sprintf("tables=%d", n), func(b *testing.B) {
			st, err := storage.Open(filepath.Join(b.TempDir(), "bench.db"), storage.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			runTables(b, st, n)
		})
	}
}

// BenchmarkResume10000 loads 10,000 stored tables in mid-game, as at start, and reports the
// memory each idle table holds.
func BenchmarkResume10000(b *testing.B) {
	const n = 10000
	store := table.NewMemStore()
	svc := table.New(table.Config{Store: store, Seed: 1})
	for i := range n {
		id, ps := benchTable(b, svc, i)
		for range 5 {
			step(b, svc, id, table.Place{Platform: "bench", Chat: fmt.Sprint(i)}, ps)
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

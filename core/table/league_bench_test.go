package table_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/core/league"
	"github.com/kontermatt/kontermatt/core/league/keeper"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// playedMatches plays n whole matches of four people through a service and gives their kept
// records, to be copied into bigger histories.
func playedMatches(b *testing.B, n int) []table.StoredMatch {
	ctx := b.Context()
	b.Helper()
	store := mem.New()
	svc := tabletest.New(table.Config{Store: store, Seed: 11})
	defer svc.Close()
	for i := range n {
		tt, err := tabletest.Open(svc, i)
		if err != nil {
			b.Fatal(err)
		}
		for {
			if who, _, _ := svc.Turn(tt.ID); who == "" {
				break
			}
			if _, err := tabletest.Step(svc, tt); err != nil {
				b.Fatal(err)
			}
		}
	}
	var out []table.StoredMatch
	_ = store.Records(ctx, func(_ string, data []byte) error {
		var sm table.StoredMatch
		if err := json.Unmarshal(data, &sm); err != nil {
			b.Fatal(err)
		}
		out = append(out, sm)
		return nil
	})
	return out
}

// history is n kept matches, copies of played ones, at places places, one every ten minutes from
// a date. Each place has its own group of people (IDs p0…, people per place), the seats drawn
// from it by a seeded source; every tenth match one seat is someone from the next place's group,
// as people who play in two groups.
func history(b *testing.B, n, places, people int) []table.Record {
	b.Helper()
	played := playedMatches(b, 40)
	rng := rand.New(rand.NewPCG(2026, 12))
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	recs := make([]table.Record, n)
	for i := range recs {
		sm := played[i%len(played)]
		sm.Table, sm.Match = fmt.Sprintf("h%06d", i), 1
		sm.Place = fmt.Sprintf("bench:%d", i%places)
		sm.End = start.Add(time.Duration(i) * 10 * time.Minute).UnixMilli()
		group := (i % places) * people
		perm := rng.Perm(people)
		for s := range sm.Seats {
			id := group + perm[s]
			if s == 0 && i%10 == 0 {
				id = (group + people + perm[s]) % (places * people)
			}
			sm.Seats[s] = table.StoredSeat{ID: fmt.Sprintf("p%d", id), Name: fmt.Sprintf("Player %d", id)}
		}
		data, err := json.Marshal(sm)
		if err != nil {
			b.Fatal(err)
		}
		recs[i] = table.Record{Key: table.StoredKey(sm.Table, 1), Data: data}
	}
	return recs
}

func each(recs []table.Record) func(context.Context, func(string, []byte) error) error {
	return func(_ context.Context, fn func(string, []byte) error) error {
		for _, r := range recs {
			if err := fn(r.Key, r.Data); err != nil {
				return err
			}
		}
		return nil
	}
}

// BenchmarkRebuild100000 makes the league anew from 100,000 kept matches (stats rebuild's work):
// the target is under 10 s on one core (go test -cpu 1).
func BenchmarkRebuild100000(b *testing.B) {
	recs := history(b, 100_000, 200, 10)
	b.ResetTimer()
	for b.Loop() {
		entries, matches, skipped, err := keeper.Rebuild(context.Background(), each(recs))
		if err != nil || skipped != 0 || matches != len(recs) || len(entries) == 0 {
			b.Fatalf("Rebuild: %d matches, %d skipped, %v", matches, skipped, err)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/rebuild")
}

// BenchmarkStatsTop10000: stats and top at a place with 10,000 kept matches answer from the
// league kept when each match ended, not from the records: the target is under 20 ms each.
func BenchmarkStatsTop10000(b *testing.B) {
	ctx := b.Context()
	recs := history(b, 10_000, 1, 12)
	entries, _, _, err := keeper.Rebuild(context.Background(), each(recs))
	if err != nil {
		b.Fatal(err)
	}
	store := mem.New()
	if err := store.Rewrite(ctx, recs, league.Buckets, entries); err != nil {
		b.Fatal(err)
	}
	place := api.Place{Platform: "bench", Chat: "0"}
	for _, tc := range []struct {
		name string
		cmd  api.Command
	}{
		{"stats", api.Command{Place: place, Actor: api.Player{ID: "p3", Name: "Player 3"}, Verb: api.VerbStats}},
		{"top", api.Command{Place: place, Actor: api.Player{ID: "p3", Name: "Player 3"}, Verb: api.VerbTop, Args: []string{"all"}}},
		{"top-month", api.Command{Place: place, Actor: api.Player{ID: "p3", Name: "Player 3"}, Verb: api.VerbTop, Args: []string{"2025-03"}}},
		{"history", api.Command{Place: place, Actor: api.Player{ID: "p3", Name: "Player 3"}, Verb: api.VerbHistory}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			// A fresh service reads the place's league from the KV on the first request.
			svc := tabletest.New(table.Config{Store: store, KV: store, Seed: 1})
			defer svc.Close()
			first := time.Now()
			if r, _ := svc.Handle(context.Background(), tc.cmd); len(r) != 1 || r[0].Kind == api.KindError {
				b.Fatalf("%s: %+v", tc.name, r)
			}
			firstMs := float64(time.Since(first).Microseconds()) / 1000
			for b.Loop() {
				svc.Handle(context.Background(), tc.cmd)
			}
			b.ReportMetric(firstMs, "first-ms")
		})
	}
}

// BenchmarkMatchEnd measures the command that ends a match at a place whose league holds 10,000
// kept matches: the league learns the match and is written with the table in one commit. Its
// time is reported as end-µs (the other commands of each match are played untimed): "single" is
// one copy alone on its store, "shared" a copy that knows others share it (Config.Shared: the
// league is read from the store at each match end, and the commit is guarded by what was read).
func BenchmarkMatchEnd(b *testing.B) {
	ctx := b.Context()
	recs := history(b, 10_000, 1, 12)
	entries, _, _, err := keeper.Rebuild(context.Background(), each(recs))
	if err != nil {
		b.Fatal(err)
	}
	for _, shared := range []bool{false, true} {
		name := "single"
		if shared {
			name = "shared"
		}
		b.Run(name, func(b *testing.B) {
			store := mem.New()
			if err := store.Rewrite(ctx, recs, league.Buckets, entries); err != nil {
				b.Fatal(err)
			}
			svc := tabletest.New(table.Config{Store: store, KV: store, Seed: 1, Shared: shared})
			defer svc.Close()
			tt, err := tabletest.Open(svc, 0) // at bench:0, the place of the history
			if err != nil {
				b.Fatal(err)
			}
			var ends time.Duration
			for b.Loop() {
				for {
					d, err := tabletest.Step(svc, tt)
					if err != nil {
						b.Fatal(err)
					}
					if who, _, _ := svc.Turn(tt.ID); who == "" {
						ends += d
						break
					}
				}
				if _, err := tabletest.Step(svc, tt); err != nil { // the rematch
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(ends.Microseconds())/float64(b.N), "end-µs")
		})
	}
}

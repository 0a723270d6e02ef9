package discord

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"io"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/storage"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// The aim: an interaction is answered within 50 ms at the 99th percentile, with the
// real bbolt store (every command fsynced before its answer).
const latencyAim = 50 * time.Millisecond

func openBolt(t testing.TB) *storage.Store {
	t.Helper()
	st, err := storage.Open(filepath.Join(t.TempDir(), "km.db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// A match of four people on the bbolt store: how long from a dispatched interaction to its
// answer, and what the match costs in REST calls.
func TestLatencyWithBolt(t *testing.T) { eachMode(t, testLatencyWithBolt) }

func testLatencyWithBolt(t *testing.T, f *fakeDiscord) {
	st := openBolt(t)
	h := startHarness(t, f, st, st)
	before := f.callCounts()
	f.takeLatencies()
	openTable(t, f, alice, []fakeUser{bob, carla, dan}, opt("stripes", 4, 2), opt("timer", 3, "none"))
	n := playMatch(t, f, []seatPlayer{{u: alice}, {u: bob}, {u: carla}, {u: dan}}, rand.New(rand.NewPCG(11, 12)))
	if err := h.a.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	lat := f.takeLatencies()
	total, lines := restSummary(before, f.callCounts())
	p50, p99 := percentile(lat, .5), percentile(lat, .99)
	t.Logf("bbolt: %d moves, %d interactions: p50 %v, p99 %v, max %v (race detector: %v)", n, len(lat), p50, p99,
		percentile(lat, 1), raceEnabled)
	t.Logf("%d REST calls for the match:\n  %s", total, strings.Join(lines, "\n  "))
	// The 99th percentile on a shared machine follows the disk's fsync stalls (BenchmarkCommand
	// reports it); the median must be well inside the aim. The race detector slows everything
	// several times and gets a looser bound.
	limit := latencyAim
	if raceEnabled {
		limit = 5 * latencyAim
	}
	if p50 > limit {
		t.Errorf("p50 %v over %v", p50, limit)
	}
}

// BenchmarkCommand measures a command that changes the table (/km join and /km leave in turn), from
// the interaction's dispatch to its answer at the fake, on the memory store and on bbolt.
func BenchmarkCommand(b *testing.B) {
	for _, tc := range []struct {
		name  string
		store func(testing.TB) (table.Store, table.KV)
	}{
		{"mem", func(testing.TB) (table.Store, table.KV) { s := mem.New(); return s, s }},
		{"bolt", func(t testing.TB) (table.Store, table.KV) { s := openBolt(t); return s, s }},
		{"bolt-memkv", func(t testing.TB) (table.Store, table.KV) { return openBolt(t), mem.New() }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			f := newFakeDiscord(b)
			store, kv := tc.store(b)
			startHarness(b, f, store, kv)
			f.slash(alice, guildChannel, "new", opt("timer", 3, "none"))
			f.takeLatencies()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				verb := "join"
				if i%2 == 1 {
					verb = "leave"
				}
				if r := f.slash(bob, guildChannel, verb); r.Content != doneText {
					b.Fatalf("%s: %+v", verb, r)
				}
			}
			b.StopTimer()
			lat := f.takeLatencies()
			b.ReportMetric(float64(percentile(lat, .5).Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(percentile(lat, .99).Microseconds())/1000, "p99-ms")
		})
	}
}

// BenchmarkMatchByHTTP plays whole matches of four people whose interactions come by HTTP (one
// match an iteration, each at a table of its own), and measures each interaction from its post
// to the bot's HTTP answer (p50, p99 over the matches), while a stranger posts badly signed
// interactions to the endpoint as fast as it refuses them: how many it refuses a second beside
// the match.
func BenchmarkMatchByHTTP(b *testing.B) {
	for _, attack := range []bool{false, true} {
		b.Run(map[bool]string{false: "quiet", true: "bad-signatures"}[attack], func(b *testing.B) {
			var lat []time.Duration
			var refused, other atomic.Int64
			var playing time.Duration
			b.StopTimer()
			for i := range b.N {
				f := newFakeDiscordVia(b, viaHTTP)
				store := mem.New()
				h := startHarness(b, f, store, store)
				stop := make(chan struct{})
				var wg sync.WaitGroup
				if attack {
					wg.Go(func() { badSignatures(f, stop, &refused, &other) })
				}
				f.takeLatencies()
				start := time.Now()
				b.StartTimer()
				openTable(b, f, alice, []fakeUser{bob, carla, dan}, opt("stripes", 4, 2), opt("timer", 3, "none"))
				playMatch(b, f, []seatPlayer{{u: alice}, {u: bob}, {u: carla}, {u: dan}}, rand.New(rand.NewPCG(21, uint64(i))))
				b.StopTimer()
				playing += time.Since(start)
				close(stop)
				wg.Wait()
				lat = append(lat, f.takeLatencies()...)
				h.stop()
			}
			b.ReportMetric(float64(len(lat))/float64(b.N), "interactions/match")
			b.ReportMetric(float64(percentile(lat, .5).Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(percentile(lat, .99).Microseconds())/1000, "p99-ms")
			if attack {
				b.ReportMetric(float64(refused.Load())/playing.Seconds(), "refused/s")
				if other.Load() > 0 {
					b.Errorf("%d badly signed posts were not answered 401", other.Load())
				}
			}
		})
	}
}

// badSignatures posts interactions signed with a stranger's key to the endpoint, four at a time,
// until stop, counting the 401s and anything else.
func badSignatures(f *fakeDiscord, stop <-chan struct{}, refused, other *atomic.Int64) {
	f.mu.Lock()
	endpoint := f.Endpoint
	f.mu.Unlock()
	stranger := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{3}, ed25519.SeedSize))
	body := []byte(`{"id":"1577490628684546060","application_id":"900000000000000001","type":2,"token":"x","version":1}`)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	defer client.CloseIdleConnections()
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				resp, err := client.Do(signed(endpoint, body, stranger, time.Now()))
				if err != nil {
					other.Add(1)
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusUnauthorized {
					refused.Add(1)
				} else {
					other.Add(1)
				}
			}
		})
	}
	wg.Wait()
}

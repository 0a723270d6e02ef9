package league

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// memKV is a KV in memory that counts its reads.
type memKV struct {
	mu    sync.Mutex
	m     map[string][]byte
	reads int
}

func (k *memKV) Get(_ context.Context, bucket, key string) ([]byte, bool, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.reads++
	v, ok := k.m[bucket+" "+key]
	return v, ok, nil
}

func (k *memKV) Put(_ context.Context, bucket, key string, value []byte) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.m[bucket+" "+key] = value
	return nil
}

// write stores an update's entries, as a store's commit does.
func (k *memKV) write(u *Update) {
	for _, e := range u.Entries {
		_ = k.Put(context.Background(), e.Bucket, e.Key, e.Value)
	}
}

// TestCacheWaitsOnlyForTheSameEntries: while one match end is being stored, readers answer from
// the cache as it was, a match end of other people at another place learns at once, and one that
// shares a player waits, then learns from the stored rating; one whose store failed leaves the
// cache as it was. (The places are in the month's list already: the first rated match of two
// places in a month both write the list, and the second waits for it.)
func TestCacheWaitsOnlyForTheSameEntries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		kv := &memKV{m: map[string][]byte{BucketMonths + " 2026-11": []byte(`["p:1","p:2","p:3"]`)}}
		c := NewCache(kv, slog.New(slog.DiscardHandler))
		end := time.Date(2026, 11, 5, 20, 0, 0, 0, Zone)
		rng := rand.New(rand.NewPCG(1, 2))
		match := func(place string, names ...string) Match {
			return FromCore(place+"/m1", place, end, people(names...), playMatch(rng, 2, 0))
		}
		first, err := c.Learn(ctx, match("p:1", "Ann", "Bob", "Cy", "Dee"))
		if err != nil {
			t.Fatal(err)
		}
		// Stored, not yet taken in: the readers see the league as it was.
		kv.write(first)
		if p := c.Place(ctx, "p:1"); p.Matches != 0 {
			t.Errorf("a reader sees a match not yet taken in: %d matches", p.Matches)
		}
		other, err := c.Learn(ctx, match("p:2", "Eve", "Fay", "Gus", "Hal"))
		if err != nil {
			t.Fatal(err)
		}
		c.Done(other, true)
		learned := make(chan *Update)
		go func() {
			u, err := c.Learn(ctx, match("p:3", "Ann", "Ivo", "Jo", "Kim"))
			if err != nil {
				t.Error(err)
			}
			learned <- u
		}()
		synctest.Wait()
		select {
		case <-learned:
			t.Fatal("a match end with Ann learned while Ann's last match was being stored")
		default:
		}
		c.Done(first, true)
		second := <-learned
		annAfterFirst, _ := c.Person(ctx, "id:Ann")
		c.Done(second, false) // its store failed
		if r, _ := c.Person(ctx, "id:Ann"); r != annAfterFirst {
			t.Errorf("a failed store changed Ann's rating: %v, was %v", r, annAfterFirst)
		}
		if p := c.Place(ctx, "p:1"); p.Matches != 1 {
			t.Errorf("the stored match is not taken in: %d matches", p.Matches)
		}
		if p := c.Place(ctx, "p:3"); p.Matches != 0 {
			t.Errorf("the match whose store failed is in the cache: %d matches", p.Matches)
		}
		// The second learned from Ann's rating after the first: what its entries say of her
		// moved on from there.
		var moved bool
		for _, e := range second.Entries {
			if e.Bucket == BucketRatings && e.Key == "id:Ann" {
				moved = string(e.Value) != string(mustEntry(t, first, "id:Ann"))
			}
		}
		if !moved {
			t.Error("the second match end did not learn from the first's rating of Ann")
		}
	})
}

func mustEntry(t *testing.T, u *Update, id string) []byte {
	t.Helper()
	for _, e := range u.Entries {
		if e.Bucket == BucketRatings && e.Key == id {
			return e.Value
		}
	}
	t.Fatalf("no rating of %s", id)
	return nil
}

// TestHoldWaitsForMatchEnds: Hold waits for the match end in flight, keeps new ones from
// learning until it is released, and then the cache reads the KV anew.
func TestHoldWaitsForMatchEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		kv := &memKV{m: map[string][]byte{}}
		c := NewCache(kv, slog.New(slog.DiscardHandler))
		rng := rand.New(rand.NewPCG(3, 4))
		end := time.Date(2026, 11, 5, 20, 0, 0, 0, Zone)
		inFlight, _ := c.Learn(ctx, FromCore("p:1/m1", "p:1", end, people("Ann", "Bob", "", ""), playMatch(rng, 2, 0)))
		held := make(chan func())
		go func() { held <- c.Hold() }()
		synctest.Wait()
		select {
		case <-held:
			t.Fatal("Hold did not wait for the match end in flight")
		default:
		}
		kv.write(inFlight)
		c.Done(inFlight, true)
		release := <-held
		learned := make(chan *Update)
		go func() {
			u, _ := c.Learn(ctx, FromCore("p:2/m1", "p:2", end, people("Cy", "", "", ""), playMatch(rng, 2, 0)))
			learned <- u
		}()
		synctest.Wait()
		select {
		case <-learned:
			t.Fatal("a match end learned while the league was held")
		default:
		}
		_ = kv.Put(ctx, BucketPlaces, "p:1", []byte(`{"key":"p:1","matches":7,"players":{}}`)) // written anew
		release()
		c.Done(<-learned, false)
		if p := c.Place(ctx, "p:1"); p.Matches != 7 {
			t.Errorf("after Hold the cache still says %d matches, the KV 7", p.Matches)
		}
	})
}

package league

import (
	"context"
	"encoding/json"
	"log/slog"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kontermatt/kontermatt/core/rating"
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

// commit stores an update's entries as a store's commit does: only while every entry it expects
// holds what it was read as (a nil Value: absent); otherwise it writes nothing and says so.
func (k *memKV) commit(u *Update) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, e := range u.Expect {
		cur, ok := k.m[e.Bucket+" "+e.Key]
		if ok != (e.Value != nil) || string(cur) != string(e.Value) {
			return false
		}
	}
	for _, e := range u.Entries {
		k.m[e.Bucket+" "+e.Key] = e.Value
	}
	return true
}

// TestMatchEndsLearnAtOnce: no match end waits for another. Two match ends of one person learn
// at once; the store takes the first and refuses the second, whose entries expect Ann's rating
// as it was before the first (compare-and-swap); learned again, the second moves on from the
// first's rating. A reader answers from the cache meanwhile, a refused update leaves the cache
// as it was, and a stored one is read anew.
func TestMatchEndsLearnAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		kv := &memKV{m: map[string][]byte{}}
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
		learned := make(chan *Update, 1)
		go func() {
			u, err := c.Learn(ctx, match("p:3", "Ann", "Ivo", "Jo", "Kim"))
			if err != nil {
				t.Error(err)
			}
			learned <- u
		}()
		synctest.Wait()
		var second *Update
		select {
		case second = <-learned:
		default:
			t.Fatal("a match end with Ann waited for Ann's last match to be stored")
		}
		if len(second.Expect) == 0 {
			t.Fatal("a match end expects nothing of the entries it learned from")
		}
		if !kv.commit(first) {
			t.Fatal("the first match end was refused")
		}
		if p := c.Place(ctx, "p:2"); p.Matches != 0 {
			t.Errorf("another place has %d matches", p.Matches)
		}
		c.Done(first, true)
		if kv.commit(second) {
			t.Fatal("the second match end overwrote the first's rating of Ann")
		}
		annAfterFirst, _ := c.Person(ctx, "id:Ann")
		c.Done(second, false) // refused: learned again
		if r, _ := c.Person(ctx, "id:Ann"); r != annAfterFirst {
			t.Errorf("a refused update changed Ann's rating: %v, was %v", r, annAfterFirst)
		}
		if p := c.Place(ctx, "p:3"); p.Matches != 0 {
			t.Errorf("the refused match is in the cache: %d matches", p.Matches)
		}
		again, err := c.Learn(ctx, match("p:3", "Ann", "Ivo", "Jo", "Kim"))
		if err != nil {
			t.Fatal(err)
		}
		if !kv.commit(again) {
			t.Fatal("the match end learned again was refused")
		}
		c.Done(again, true)
		if string(mustEntry(t, again, "id:Ann")) == string(mustEntry(t, first, "id:Ann")) {
			t.Error("learned again, the match end did not move on from the first's rating of Ann")
		}
		for place, want := range map[string]int{"p:1": 1, "p:3": 1} {
			if p := c.Place(ctx, place); p.Matches != want {
				t.Errorf("%s has %d matches in the cache, want %d", place, p.Matches, want)
			}
		}
		var stored rating.Rating
		if data, _, _ := kv.Get(ctx, BucketRatings, "id:Ann"); json.Unmarshal(data, &stored) != nil {
			t.Fatal("Ann's rating does not read")
		}
		if r, _ := c.Person(ctx, "id:Ann"); r != stored {
			t.Errorf("the cache says %v of Ann, the KV %v", r, stored)
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
		kv.commit(inFlight)
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

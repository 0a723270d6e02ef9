package web

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/storage/mem"
)

// TestOneTimeLinkIsOnceAcrossCopies: two copies of the bot share one store and one link key
// (configuration). A link made at one copy opens a session at the other once; used there, it is
// used at the first as well; and of the two copies redeeming one link at the same instant, one
// wins, for each of many links.
func TestOneTimeLinkIsOnceAcrossCopies(t *testing.T) {
	ctx := t.Context()
	store := mem.New()
	// A store across the network answers in a moment, not at once.
	slow := func(c *Config) { c.KV = slowKV{store} }
	a := newEnvOn(t, store, fastPlayer, slow)
	b := newEnvOn(t, store, fastPlayer, slow)
	id, p, _ := a.soloTable(1)

	_, token, _ := strings.Cut(a.link(p, id), "#link=")
	if code, out := b.post(map[string]string{"link": token}, ""); code != http.StatusOK || out["session"] == "" {
		t.Fatalf("a link made at copy a, redeemed at copy b: %d %v", code, out)
	}
	for _, e := range []*env{a, b} {
		if code, _ := e.post(map[string]string{"link": token}, ""); code != http.StatusUnauthorized {
			t.Fatalf("a used link redeemed again: %d", code)
		}
	}

	const links = 100
	var won atomic.Int32
	for range links {
		l, err := a.web.Link(p, id)
		if err != nil {
			t.Fatal(err)
		}
		_, token, _ := strings.Cut(l, "#link=")
		var wg sync.WaitGroup
		for _, e := range []*env{a, b} {
			wg.Go(func() {
				if _, ok := e.web.redeem(ctx, token, e.clock.Now()); ok {
					won.Add(1)
				}
			})
		}
		wg.Wait()
	}
	if n := won.Load(); n != links {
		t.Fatalf("%d redemptions of %d links redeemed at two copies at once", n, links)
	}
}

// slowKV is a store whose reads and writes take a millisecond, as etcd's do over the network.
type slowKV struct{ *mem.Store }

func (s slowKV) Get(ctx context.Context, bucket, key string) ([]byte, bool, error) {
	time.Sleep(time.Millisecond)
	return s.Store.Get(ctx, bucket, key)
}

func (s slowKV) Put(ctx context.Context, bucket, key string, value []byte) error {
	time.Sleep(time.Millisecond)
	return s.Store.Put(ctx, bucket, key, value)
}

func (s slowKV) Swap(ctx context.Context, bucket, key string, old, value []byte) ([]byte, error) {
	time.Sleep(time.Millisecond)
	return s.Store.Swap(ctx, bucket, key, old, value)
}

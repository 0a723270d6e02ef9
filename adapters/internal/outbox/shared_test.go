package outbox

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/storage/etcdstore"
	"github.com/kontermatt/kontermatt/storage/etcdstore/etcdtest"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// chatPlatform is one chat that several engines (copies of the bot) show messages in: it counts
// the posts of each Key and notes every edit that shows an older version than the message showed.
type chatPlatform struct {
	mu        sync.Mutex
	nextID    int
	posts     map[string]int    // Key → messages posted for it
	version   map[string]uint64 // message ID → the version it shows
	keyOf     map[string]string // message ID → its Key
	backwards []string
	shows     int
}

func newChatPlatform() *chatPlatform {
	return &chatPlatform{posts: map[string]int{}, version: map[string]uint64{}, keyOf: map[string]string{}}
}

func (p *chatPlatform) Wait(ctx context.Context, dest string) error { return ctx.Err() }

func (p *chatPlatform) Show(ctx context.Context, it *Item[string], rec *Record) (string, string, error) {
	// A request takes a moment, so that the copies' sends overlap.
	time.Sleep(time.Duration(rand.IntN(500)) * time.Microsecond)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.shows++
	if rec == nil || it.Repost {
		p.nextID++
		id := strconv.Itoa(p.nextID)
		p.posts[it.Key]++
		p.version[id], p.keyOf[id] = it.Version, it.Key
		return it.Dest, id, nil
	}
	if it.Version < p.version[rec.ID] {
		p.backwards = append(p.backwards, fmt.Sprintf("%s: v%d over v%d", it.Key, it.Version, p.version[rec.ID]))
	}
	p.version[rec.ID] = it.Version
	return rec.Chat, rec.ID, nil
}

func (p *chatPlatform) Classify(err error) *Error { return &Error{Class: Transient, Err: err} }

func (p *chatPlatform) Refused(string, []*Item[string], error) {}

// shownVersion gives the version the newest message of key shows.
func (p *chatPlatform) shownVersion(key string) uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	best, v := 0, uint64(0)
	for id, k := range p.keyOf {
		if n, _ := strconv.Atoi(id); k == key && n > best {
			best, v = n, p.version[id]
		}
	}
	return v
}

// sharedStores are the stores two copies of the bot share: the in-memory one, and a 3-member
// etcd cluster with a client per copy.
func sharedStores(t *testing.T) map[string]func(t *testing.T) (a, b table.KV) {
	ctx := t.Context()
	return map[string]func(t *testing.T) (table.KV, table.KV){
		"memory": func(t *testing.T) (table.KV, table.KV) {
			m := mem.New()
			return m, m
		},
		"etcd": func(t *testing.T) (table.KV, table.KV) {
			c := etcdtest.Start(t, etcdtest.Options{})
			open := func() table.KV {
				st, err := etcdstore.Open(ctx, etcdstore.Options{Endpoints: c.Endpoints(), Prefix: "outbox/"})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { st.Close() })
				return st
			}
			return open(), open()
		},
	}
}

// TestSharedRecordsPostOnceAndNeverGoBack: two copies of the bot deliver every version of the
// same table messages at once, in their order each, through one store. Each message is posted
// once, no edit shows an older version than the message showed, and each ends at its last.
func TestSharedRecordsPostOnceAndNeverGoBack(t *testing.T) {
	for name, stores := range sharedStores(t) {
		t.Run(name, func(t *testing.T) {
			kvA, kvB := stores(t)
			p := newChatPlatform()
			shared := func(c *Config[string]) { c.Shared = true }
			a := newEngine(t, nil, nil, func(c *Config[string]) { c.Platform, c.KV = p, kvA; shared(c) })
			b := newEngine(t, nil, nil, func(c *Config[string]) { c.Platform, c.KV = p, kvB; shared(c) })
			const keys, versions = 4, 40
			var wg sync.WaitGroup
			for _, e := range []*Engine[string]{a, b} {
				wg.Go(func() {
					for v := uint64(1); v <= versions; v++ {
						for k := range keys {
							e.Enqueue(msg("chat", fmt.Sprintf("t%d/live", k), v, fmt.Sprintf("v%d", v)))
						}
						time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond)
					}
				})
			}
			wg.Wait()
			flush(t, a)
			flush(t, b)
			for k := range keys {
				key := fmt.Sprintf("t%d/live", k)
				if n := p.posts[key]; n != 1 {
					t.Errorf("%s posted %d times", key, n)
				}
				if v := p.shownVersion(key); v != versions {
					t.Errorf("%s ends at v%d, want v%d", key, v, versions)
				}
			}
			if len(p.backwards) > 0 {
				t.Errorf("edits back to older versions: %v", p.backwards)
			}
			sa, sb := a.Stats(), b.Stats()
			t.Logf("%d requests for %d×%d versions delivered twice; skipped %d+%d", p.shows, keys, versions, sa.Skipped, sb.Skipped)
		})
	}
}

// TestSharedStaleVersionIsSkipped: a copy that is behind (its table's view older than the
// record another copy wrote) sends nothing for an older version, and edits with a newer one.
func TestSharedStaleVersionIsSkipped(t *testing.T) {
	kv := mem.New()
	p := newChatPlatform()
	shared := func(c *Config[string]) { c.Platform, c.KV, c.Shared = p, kv, true }
	a := newEngine(t, nil, nil, shared)
	b := newEngine(t, nil, nil, shared)
	a.Enqueue(msg("chat", "t/live", 10, "ten"))
	flush(t, a)
	b.Enqueue(msg("chat", "t/live", 5, "five"))
	flush(t, b)
	if p.shows != 1 || b.Stats().Skipped != 1 {
		t.Fatalf("an older version was sent: %d requests, %d skipped", p.shows, b.Stats().Skipped)
	}
	b.Enqueue(msg("chat", "t/live", 11, "eleven"))
	flush(t, b)
	if p.posts["t/live"] != 1 || p.shownVersion("t/live") != 11 {
		t.Fatalf("the newer version was not an edit of the message: posts %d, shows v%d", p.posts["t/live"], p.shownVersion("t/live"))
	}
	if rec, ok := a.Record("t/live"); !ok || rec.Version != 11 {
		t.Fatalf("copy a reads the record %+v, %v: want the version copy b showed", rec, ok)
	}
}

// TestSharedClaimOfADeadCopyLapses: a copy died while it sent (its claim stays in the store,
// nothing posted); another copy waits for the claim, then posts once it lapses.
func TestSharedClaimOfADeadCopyLapses(t *testing.T) {
	ctx := t.Context()
	kv := mem.New()
	const ttl = 300 * time.Millisecond
	dead := entry{claim: claim{By: "dead", Version: 3, Until: time.Now().Add(ttl).UnixMilli()}}
	if err := kv.Put(ctx, "test.msg", "t/live", dead.encode()); err != nil {
		t.Fatal(err)
	}
	p := newChatPlatform()
	b := newEngine(t, nil, nil, func(c *Config[string]) { c.Platform, c.KV, c.Shared, c.ClaimTTL = p, kv, true, ttl })
	start := time.Now()
	b.Enqueue(msg("chat", "t/live", 3, "three"))
	flush(t, b)
	if waited := time.Since(start); waited < ttl*2/3 {
		t.Errorf("posted %v after the start, within the dead copy's claim (%v)", waited, ttl)
	}
	if p.posts["t/live"] != 1 {
		t.Fatalf("posted %d times", p.posts["t/live"])
	}
	if rec, ok := b.Record("t/live"); !ok || rec.Version != 3 || rec.ID == "" {
		t.Fatalf("record %+v, %v after the take-over", rec, ok)
	}
}

// TestSharedClaimEndsWithItsOwnersLease: the owner of a place died while it sent (its claim,
// made under its lease of the place, stays in the store for ClaimTTL, nothing posted). The copy
// that holds the place's lease now finds a claim under another fence than its own: its maker
// lost the place, and this copy posts at once, once. A claim under the fence this copy holds, or
// with none, still holds until it lapses.
func TestSharedClaimEndsWithItsOwnersLease(t *testing.T) {
	ctx := t.Context()
	const ttl = time.Hour // a claim that lapses is no answer here
	for _, tc := range []struct {
		name, claimFence, fence string
		takesOver               bool
	}{
		{"a dead owner's lease", "places/07@41", "places/07@52", true},
		{"the lease this copy holds", "places/07@52", "places/07@52", false},
		{"a claim without a fence", "", "places/07@52", false},
		{"a copy without a fence", "places/07@41", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kv := mem.New()
			dead := entry{claim: claim{By: "dead", Version: 3, Until: time.Now().Add(ttl).UnixMilli(), Fence: tc.claimFence}}
			if err := kv.Put(ctx, "test.msg", "t/live", dead.encode()); err != nil {
				t.Fatal(err)
			}
			p := newChatPlatform()
			b := newEngine(t, nil, nil, func(c *Config[string]) {
				c.Platform, c.KV, c.Shared, c.ClaimTTL = p, kv, true, ttl
				c.Fence = func(api.Message) string { return tc.fence }
			})
			b.Enqueue(msg("chat", "t/live", 3, "three"))
			flushed, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			err := b.Flush(flushed)
			p.mu.Lock()
			posts := p.posts["t/live"]
			p.mu.Unlock()
			if tc.takesOver {
				if err != nil || posts != 1 {
					t.Fatalf("the claim of a copy that lost the place held its message up (%v), posted %d times", err, posts)
				}
				if rec, ok := b.Record("t/live"); !ok || rec.Version != 3 || rec.ID == "" {
					t.Fatalf("record %+v, %v after the take-over", rec, ok)
				}
				return
			}
			if err == nil || posts != 0 {
				t.Fatalf("posted %d times within a claim that holds (flush: %v)", posts, err)
			}
		})
	}
}

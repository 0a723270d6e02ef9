package league

import (
	"cmp"
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/kontermatt/kontermatt/core/rating"
)

// How the league is kept: KV buckets derived from the kept matches, each written in the same
// transaction as the match that changes it (so they never disagree with the records, whatever
// crashes when), and made anew from the records by Rebuild (`stats rebuild`).
const (
	BucketPlaces  = "league.place"  // place key → Place
	BucketRatings = "league.person" // player ID → rating.Rating across all places
	BucketMonths  = "league.month"  // "2026-11" → []place key: the places where a rated match was won that month
	BucketPosted  = "league.posted" // "2026-11" → when that month's tables were posted
)

// Buckets are the buckets made from the records alone: Rebuild's.
var Buckets = []string{BucketPlaces, BucketRatings, BucketMonths}

// Entry is one KV write; a nil Value deletes the key.
type Entry struct {
	Bucket, Key string
	Value       []byte
}

// KV is where the league is kept between matches.
type KV interface {
	Get(ctx context.Context, bucket, key string) ([]byte, bool, error)
	Put(ctx context.Context, bucket, key string, value []byte) error
}

// Clone is a deep copy of the place's league.
func (p *Place) Clone() *Place {
	data, err := json.Marshal(p)
	out := NewPlace(p.Key)
	if err == nil {
		err = json.Unmarshal(data, out)
	}
	if err != nil {
		panic("league: a place does not copy: " + err.Error()) // plain data
	}
	return out
}

// Cache keeps the league's entries in front of the KV. It holds only what the store holds: a
// match end's update is worked out on copies (Learn), written with the match by the caller, and
// taken in only once it is stored (Done). No lock of the cache is held while anything is read
// from or written to the KV or the store: a reader never waits for a match being stored, and a
// match end waits only for one in flight that writes the same entries (its place, one of its
// players, its month), whose outcome its own numbers follow from.
//
// The Places, ratings and month lists the cache gives are never changed afterwards (an update
// replaces them): read them freely, change only a Clone.
type Cache struct {
	kv  KV
	log *slog.Logger

	mu     sync.Mutex
	places map[string]*Place
	people map[string]rating.Rating
	months map[string][]string
	// writing are the entries a match end in flight writes ("p:"+place, "r:"+player, "m:"+month),
	// each with a channel closed when its update is stored or dropped.
	writing map[string]chan struct{}
	// held, when not nil, keeps every new match end from learning until it is closed (Hold).
	held chan struct{}
	// gen counts the times the cache was emptied: an entry read from the KV before is not kept.
	gen uint64
	// shared: other processes write the KV too (copies of the bot on one store), so nothing read
	// is kept: every reading, and every match end's update, starts from what the KV holds.
	shared bool
}

// Shared makes the cache keep nothing it reads: other processes write the same KV (copies of
// the bot on one store). A match end then learns from the entries as stored, not as this
// process last saw them. Call it before the cache is used.
func (c *Cache) Shared() { c.shared = true }

// NewCache makes an empty cache in front of kv; log hears what cannot be read.
func NewCache(kv KV, log *slog.Logger) *Cache {
	c := &Cache{kv: kv, log: log, writing: map[string]chan struct{}{}}
	c.empty()
	return c
}

// empty forgets every entry (c.mu held, or c not yet shared).
func (c *Cache) empty() {
	c.places, c.people, c.months = map[string]*Place{}, map[string]rating.Rating{}, map[string][]string{}
	c.gen++
}

// get reads a bucket's JSON entry into v; false when there is none, or it does not read.
func (c *Cache) get(ctx context.Context, bucket, key string, v any) bool {
	return c.getFrom(ctx, c.kv, bucket, key, v)
}

// getFrom is get from kv (c's, or a reading that notes what it read).
func (c *Cache) getFrom(ctx context.Context, kv KV, bucket, key string, v any) bool {
	data, ok, err := kv.Get(ctx, bucket, key)
	if err != nil {
		c.log.Error("reading the league", "bucket", bucket, "err", err)
		return false
	}
	if ok {
		if err := json.Unmarshal(data, v); err != nil {
			c.log.Error("a league entry does not decode; stats rebuild makes it anew", "bucket", bucket, "key", key, "err", err)
			return false
		}
	}
	return ok
}

// cached gives the entry of key in m, reading it from the KV (without the lock) when the cache
// has none yet; false when the KV has none either. An entry read while an update or an emptying
// took the key's place is not kept.
func cached[V any](c *Cache, m func() map[string]V, key string, read func() (V, bool)) (V, bool) {
	if c.shared {
		return read()
	}
	c.mu.Lock()
	v, ok := m()[key]
	gen := c.gen
	c.mu.Unlock()
	if ok {
		return v, true
	}
	if v, ok = read(); !ok {
		return v, false // not kept: a first match adds it
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if cur, ok := m()[key]; ok {
		return cur, true
	}
	if c.gen == gen {
		m()[key] = v
	}
	return v, true
}

// Place gives a place's league (an empty one for a place without matches).
func (c *Cache) Place(ctx context.Context, key string) *Place { return c.place(ctx, c.kv, key) }

// place is Place, read from kv when it is not cached.
func (c *Cache) place(ctx context.Context, kv KV, key string) *Place {
	p, _ := cached(c, func() map[string]*Place { return c.places }, key, func() (*Place, bool) {
		p := NewPlace(key)
		if c.getFrom(ctx, kv, BucketPlaces, key, p) && p.Players == nil {
			p = NewPlace(key)
		}
		return p, true
	})
	return p
}

// Person gives a person's rating across places; false when they have none.
func (c *Cache) Person(ctx context.Context, id string) (rating.Rating, bool) {
	return c.person(ctx, c.kv, id)
}

func (c *Cache) person(ctx context.Context, kv KV, id string) (rating.Rating, bool) {
	return cached(c, func() map[string]rating.Rating { return c.people }, id, func() (rating.Rating, bool) {
		var r rating.Rating
		return r, c.getFrom(ctx, kv, BucketRatings, id, &r)
	})
}

// Month gives the places where a rated match was won in the month ("2026-11").
func (c *Cache) Month(ctx context.Context, m string) []string { return c.month(ctx, c.kv, m) }

func (c *Cache) month(ctx context.Context, kv KV, m string) []string {
	ps, _ := cached(c, func() map[string][]string { return c.months }, m, func() ([]string, bool) {
		var ps []string
		c.getFrom(ctx, kv, BucketMonths, m, &ps)
		return ps, true
	})
	return ps
}

// Posted reports whether the month's tables were posted.
func (c *Cache) Posted(ctx context.Context, month string) bool {
	var at string
	return c.get(ctx, BucketPosted, month, &at)
}

// MarkPosted notes that the month's tables are posted, at the time given.
func (c *Cache) MarkPosted(ctx context.Context, month string, at time.Time) error {
	return c.kv.Put(ctx, BucketPosted, month, []byte(strconv.Quote(at.Format(time.RFC3339))))
}

// Update is what a match end changes in the league: Entries are written with the match, and
// Done says whether they were stored.
type Update struct {
	place  *Place
	people map[string]rating.Rating
	month  string
	months []string // the month's new list; nil: unchanged
	// Entries are the KV writes to make with the match.
	Entries []Entry
	// Expect are the entries Entries were worked out from, as read (a nil Value: there was
	// none), when other processes write the KV too (Shared): the store is to write Entries only
	// while each still holds that, so that of two copies of the bot learning a match of one
	// person at once, the second learns again from the first's update rather than overwrite it.
	// Empty for a cache of its own, which is what the store holds already.
	Expect []Entry
	claims []string
	done   chan struct{}
}

// claim waits until no update in flight writes any of keys, then marks them as written by u
// (c.mu held; it is let go while waiting). An update's first claim also waits while the cache is
// held; a later one does not, since Hold waits for the update.
func (c *Cache) claim(u *Update, keys ...string) {
	for {
		var wait chan struct{}
		if len(u.claims) == 0 {
			wait = c.held
		}
		for _, k := range keys {
			if ch, ok := c.writing[k]; ok && wait == nil {
				wait = ch
			}
		}
		if wait == nil {
			break
		}
		c.mu.Unlock()
		<-wait
		c.mu.Lock()
	}
	for _, k := range keys {
		c.writing[k] = u.done
	}
	u.claims = append(u.claims, keys...)
}

// Learn works out what a finished or stopped match changes, on copies: the place's league, its
// people's ratings and the month's places. It first waits for a match end in flight that
// writes the same entries to be stored or dropped. The caller writes u.Entries with the match
// and must then call Done, whatever the store said.
func (c *Cache) Learn(ctx context.Context, m Match) (*Update, error) {
	u := &Update{done: make(chan struct{}), people: map[string]rating.Rating{}, month: SeasonOf(m.End)}
	keys := []string{"p:" + m.Place}
	for _, s := range m.Seats {
		if s.ID != "" {
			keys = append(keys, "r:"+s.ID)
		}
	}
	c.mu.Lock()
	c.claim(u, keys...)
	c.mu.Unlock()
	// The entries are the update's own now: what the cache or the KV says of them is what the
	// store holds, unless another process writes it too (then what was read is noted, for
	// Expect).
	var kv KV = c.kv
	var read *reading
	if c.shared {
		read = &reading{KV: c.kv}
		kv = read
	}
	next := c.place(ctx, kv, m.Place).Clone()
	for _, s := range m.Seats {
		if s.ID != "" {
			if r, ok := c.person(ctx, kv, s.ID); ok {
				u.people[s.ID] = r
			}
		}
	}
	next.Add(m, u.people)
	u.place = next
	data, err := json.Marshal(next)
	if err != nil {
		c.Done(u, false)
		return nil, err
	}
	u.Entries = append(u.Entries, Entry{Bucket: BucketPlaces, Key: m.Place, Value: data})
	for _, id := range slices.Sorted(maps.Keys(u.people)) {
		b, _ := json.Marshal(u.people[id])
		u.Entries = append(u.Entries, Entry{Bucket: BucketRatings, Key: id, Value: b})
	}
	// A place, once in a month's list, stays there: the month is claimed only to add one, and
	// after the other claims so that no two match ends wait for each other.
	if m.Rated() && !slices.Contains(c.month(ctx, kv, u.month), m.Place) {
		c.mu.Lock()
		c.claim(u, "m:"+u.month)
		c.mu.Unlock()
		if months := c.month(ctx, kv, u.month); !slices.Contains(months, m.Place) {
			u.months = append(slices.Clone(months), m.Place)
			b, _ := json.Marshal(u.months)
			u.Entries = append(u.Entries, Entry{Bucket: BucketMonths, Key: u.month, Value: b})
		}
	}
	if read != nil {
		u.Expect = read.of(u.Entries)
	}
	return u, nil
}

// reading is a KV that notes the last value it read of each key (nil: none), for Expect.
type reading struct {
	KV
	seen map[[2]string][]byte
}

func (r *reading) Get(ctx context.Context, bucket, key string) ([]byte, bool, error) {
	v, ok, err := r.KV.Get(ctx, bucket, key)
	if err != nil {
		return v, ok, err
	}
	if r.seen == nil {
		r.seen = map[[2]string][]byte{}
	}
	switch {
	case !ok:
		r.seen[[2]string{bucket, key}] = nil
	case v == nil:
		r.seen[[2]string{bucket, key}] = []byte{} // found, and empty
	default:
		r.seen[[2]string{bucket, key}] = v
	}
	return v, ok, nil
}

// of gives what was read of the entries' keys: only the entries written need to be as read (a
// month's list that already names the place is left as it is, whatever another copy adds).
func (r *reading) of(entries []Entry) []Entry {
	var out []Entry
	for _, e := range entries {
		if v, ok := r.seen[[2]string{e.Bucket, e.Key}]; ok {
			out = append(out, Entry{Bucket: e.Bucket, Key: e.Key, Value: v})
		}
	}
	return out
}

// Done ends a match end's update: stored, the cache takes it in; either way the entries it wrote
// are free for the next one.
func (c *Cache) Done(u *Update, stored bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if stored {
		c.places[u.place.Key] = u.place
		for id, r := range u.people {
			c.people[id] = r
		}
		if u.months != nil {
			c.months[u.month] = u.months
		}
	}
	for _, k := range u.claims {
		if c.writing[k] == u.done {
			delete(c.writing, k)
		}
	}
	close(u.done)
}

// Hold waits until every match end in flight is stored or dropped and keeps new ones from
// learning until release is called: for a change that writes the whole league anew (forgetting
// a person). Release empties the cache, which is older than the store by then. Readers are not
// held.
func (c *Cache) Hold() (release func()) {
	c.mu.Lock()
	for c.held != nil {
		wait := c.held
		c.mu.Unlock()
		<-wait
		c.mu.Lock()
	}
	held := make(chan struct{})
	c.held = held
	for len(c.writing) > 0 {
		var wait chan struct{}
		for _, ch := range c.writing {
			wait = ch
			break
		}
		c.mu.Unlock()
		<-wait
		c.mu.Lock()
	}
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.empty()
		c.held = nil
		close(held)
	}
}

// Rebuild makes every league entry anew from the kept matches, in the order they ended: every
// place's league, every person's rating, the months. records gives each kept record; parse
// reads one into the match the league learns, and those it cannot read are skipped and counted.
// Stopped and finished matches alike.
func Rebuild(records func(fn func(key string, data []byte) error) error, parse func(key string, data []byte) (Match, error)) (entries []Entry, matches, skipped int, err error) {
	var all []Match
	err = records(func(key string, data []byte) error {
		m, err := parse(key, data)
		if err != nil {
			skipped++
			return nil
		}
		all = append(all, m)
		return nil
	})
	if err != nil {
		return nil, 0, skipped, err
	}
	slices.SortFunc(all, func(a, b Match) int { return cmp.Or(a.End.Compare(b.End), cmp.Compare(a.Key, b.Key)) })
	places := map[string]*Place{}
	people := map[string]rating.Rating{}
	months := map[string][]string{}
	for _, m := range all {
		p := places[m.Place]
		if p == nil {
			p = NewPlace(m.Place)
			places[m.Place] = p
		}
		p.Add(m, people)
		if mo := SeasonOf(m.End); m.Rated() && !slices.Contains(months[mo], m.Place) {
			months[mo] = append(months[mo], m.Place)
		}
	}
	for key, p := range places {
		data, _ := json.Marshal(p)
		entries = append(entries, Entry{Bucket: BucketPlaces, Key: key, Value: data})
	}
	for id, r := range people {
		data, _ := json.Marshal(r)
		entries = append(entries, Entry{Bucket: BucketRatings, Key: id, Value: data})
	}
	for mo, ps := range months {
		data, _ := json.Marshal(ps)
		entries = append(entries, Entry{Bucket: BucketMonths, Key: mo, Value: data})
	}
	return entries, len(all), skipped, nil
}

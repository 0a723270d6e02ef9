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
// match end's update is worked out on copies from the entries as the KV holds them (Learn),
// written with the match by the caller under compare-and-swap (Update.Expect), and the cache
// reads the entries again once it is stored (Done). No lock of the cache is held while anything
// is read from or written to the KV or the store, and no match end waits for another: of two
// that write the same entry (a person's rating, a place, a month) at once, the store takes the
// first and refuses the second (ErrConflict), which is then learned again from the first's
// entries, as every other change that loses a race is.
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
	// gen counts the times entries left the cache (emptied, or stored anew by a match end): an
	// entry read from the KV before is not kept, as it may be older than the store.
	gen uint64
	// The one wait left is between match ends and a change that writes the whole league anew
	// without a compare (forgetting a person, Hold), which would otherwise overwrite a match end
	// stored between its reading the records and its write. learning counts the match ends
	// between Learn and Done; idle, when not nil, is closed when that count drops to 0; held,
	// when not nil, keeps new match ends from learning until it is closed.
	learning   int
	idle, held chan struct{}
	// shared: other processes write the KV too (copies of the bot on one store), so nothing read
	// is kept: every reading, and every match end's update, starts from what the KV holds.
	shared bool
}

// Shared makes the cache keep nothing it reads: other processes write the same KV (copies of
// the bot on one store), so a reader sees the entries as stored, not as this process last saw
// them. Call it before the cache is used.
func (c *Cache) Shared() { c.shared = true }

// NewCache makes an empty cache in front of kv; log hears what cannot be read.
func NewCache(kv KV, log *slog.Logger) *Cache {
	c := &Cache{kv: kv, log: log}
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
		return c.readPlace(ctx, kv, key), true
	})
	return p
}

// readPlace reads a place's league from kv.
func (c *Cache) readPlace(ctx context.Context, kv KV, key string) *Place {
	p := NewPlace(key)
	if c.getFrom(ctx, kv, BucketPlaces, key, p) && p.Players == nil {
		p = NewPlace(key)
	}
	return p
}

// Person gives a person's rating across places; false when they have none.
func (c *Cache) Person(ctx context.Context, id string) (rating.Rating, bool) {
	return c.person(ctx, c.kv, id)
}

func (c *Cache) person(ctx context.Context, kv KV, id string) (rating.Rating, bool) {
	return cached(c, func() map[string]rating.Rating { return c.people }, id, func() (rating.Rating, bool) {
		return c.readPerson(ctx, kv, id)
	})
}

// readPerson reads a person's rating from kv.
func (c *Cache) readPerson(ctx context.Context, kv KV, id string) (rating.Rating, bool) {
	var r rating.Rating
	return r, c.getFrom(ctx, kv, BucketRatings, id, &r)
}

// Month gives the places where a rated match was won in the month ("2026-11").
func (c *Cache) Month(ctx context.Context, m string) []string { return c.month(ctx, c.kv, m) }

func (c *Cache) month(ctx context.Context, kv KV, m string) []string {
	ps, _ := cached(c, func() map[string][]string { return c.months }, m, func() ([]string, bool) {
		return c.readMonth(ctx, kv, m), true
	})
	return ps
}

// readMonth reads a month's places from kv.
func (c *Cache) readMonth(ctx context.Context, kv KV, m string) []string {
	var ps []string
	c.getFrom(ctx, kv, BucketMonths, m, &ps)
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
	place  string
	people []string
	month  string
	// Entries are the KV writes to make with the match.
	Entries []Entry
	// Expect are the entries Entries were worked out from, as read from the KV (a nil Value:
	// there was none): the store is to write Entries only while each still holds that
	// (compare-and-swap), so that of two match ends of one person at once, by this process or
	// another, the second learns again from the first's update rather than overwrite it.
	Expect []Entry
}

// Learn works out what a finished or stopped match changes, on copies of the entries as the KV
// holds them: the place's league, its people's ratings and the month's places. It waits for no
// other match end. The caller writes u.Entries with the match, guarded by u.Expect, and must then
// call Done, whatever the store said; when the store refused the change (ErrConflict), the
// caller learns the match again.
func (c *Cache) Learn(ctx context.Context, m Match) (*Update, error) {
	c.mu.Lock()
	for c.held != nil {
		wait := c.held
		c.mu.Unlock()
		<-wait
		c.mu.Lock()
	}
	c.learning++
	c.mu.Unlock()
	u := &Update{place: m.Place, month: SeasonOf(m.End)}
	// Read from the KV, not the cache, and noted: what the update is worked out from is what it
	// expects the store to hold when it is written.
	read := &reading{KV: c.kv}
	next := c.readPlace(ctx, read, m.Place).Clone()
	people := map[string]rating.Rating{}
	for _, s := range m.Seats {
		if s.ID != "" {
			if r, ok := c.readPerson(ctx, read, s.ID); ok {
				people[s.ID] = r
			}
		}
	}
	next.Add(m, people)
	data, err := json.Marshal(next)
	if err != nil {
		c.Done(u, false)
		return nil, err
	}
	u.Entries = append(u.Entries, Entry{Bucket: BucketPlaces, Key: m.Place, Value: data})
	for _, id := range slices.Sorted(maps.Keys(people)) {
		b, _ := json.Marshal(people[id])
		u.Entries = append(u.Entries, Entry{Bucket: BucketRatings, Key: id, Value: b})
		u.people = append(u.people, id)
	}
	// A place, once in a month's list, stays there: the list is written (and expected) only to
	// add one.
	if m.Rated() {
		if months := c.readMonth(ctx, read, u.month); !slices.Contains(months, m.Place) {
			b, _ := json.Marshal(append(slices.Clone(months), m.Place))
			u.Entries = append(u.Entries, Entry{Bucket: BucketMonths, Key: u.month, Value: b})
		}
	}
	u.Expect = read.of(u.Entries)
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

// Done ends a match end's update. Stored, the entries it wrote leave the cache, to be read again
// from the KV: of two updates of one entry stored one after the other, whichever Done comes last,
// the cache then holds the later. Refused or failed, the cache stays as it was.
func (c *Cache) Done(u *Update, stored bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.learning--; c.learning == 0 && c.idle != nil {
		close(c.idle)
		c.idle = nil
	}
	if !stored {
		return
	}
	delete(c.places, u.place)
	for _, id := range u.people {
		delete(c.people, id)
	}
	delete(c.months, u.month)
	c.gen++
}

// Hold waits until every match end in flight is stored or dropped and keeps new ones from
// learning until release is called: for a change that writes the whole league anew (forgetting
// a person), which compares nothing and so must not meet a match end. Release empties the cache,
// which is older than the store by then. Readers are not held, nor are match ends held by each
// other.
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
	for c.learning > 0 {
		if c.idle == nil {
			c.idle = make(chan struct{})
		}
		wait := c.idle
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

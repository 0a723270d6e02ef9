package privacy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/kontermatt/kontermatt/core/places"
	"github.com/kontermatt/kontermatt/core/store"
)

// Forgetting a person ("forget yes") reaches everything the bot keeps that names them:
//
//   - the tables they sit at: they leave (a computer takes their seat in a game; a table with no
//     other person closes), and no table remembers their presses or votes;
//   - the kept matches and the closed tables (until pruned) that name them, and every table's
//     command log: their seat gets a placeholder of its own (so the others' results, partners and
//     opponents stay right, and two forgotten people stay two), their commands its ID;
//   - their private chat, where a guided game was played: its key gives way to a placeholder;
//   - their settings and ratings, and every league, made anew from the rewritten records;
//   - their votes on a place's settings (core/places);
//   - what the adapters keep: the keys of the buckets each registered (People), the keys that
//     name them at a table still played, and every KV key of the closed tables they sat at
//     (those tables' messages are final);
//
// and the store then leaves no copy of what was replaced in its file (store.Store's Forget), so a
// backup taken afterwards holds none either.
//
// A Forgetter does it all but what only the table engine can do under a table's lock (Tables):
// make a table in memory, a closed table's state and a kept match forget the person.

// ForgottenPrefix begins the player ID a forgotten person has in the kept matches, and
// ForgottenChat the chat ID a private chat of theirs becomes.
const (
	ForgottenPrefix = "forgotten:"
	ForgottenChat   = "forgotten-"
)

// Lease is the lease a copy holds while it forgets someone (Forgetter.Leases): a Forget reads
// every kept record and writes back those that name the person, so two at once, on two copies,
// would each write back the other's person as they read them, not forgotten. One at a time, the
// second reads what the first wrote.
const Lease = "forget"

// errLeaseLost is a Forget given up because the lease was lost before it was written.
var errLeaseLost = errors.New("table: the lease to forget someone was lost; nothing was forgotten, try again")

// Person is one person being forgotten: who, what they become, where they were.
type Person struct {
	// ID is their player ID; As the placeholder ID their seats get (ForgottenPrefix, then a
	// random suffix of their own).
	ID, As string
	suffix string
	// private maps the keys of the person's private chats to the chats they become.
	private map[string]Chat
}

// Chat is a chat on a platform: a private chat's placeholder.
type Chat struct{ Platform, Chat string }

// Privately notes the place with key, on platform, as the person's private chat.
func (p *Person) Privately(key, platform string) {
	p.private[key] = Chat{Platform: platform, Chat: ForgottenChat + p.suffix}
}

// Private gives the placeholder a private chat of the person's (by its place key) becomes.
func (p *Person) Private(key string) (Chat, bool) {
	c, ok := p.private[key]
	return c, ok
}

// People is how a platform's adapter keeps people in the KV, so that forgetting a person deletes
// what it keeps about them (the engine's Config.People). Keys that name a person at a table
// follow the KV convention and need no entry here.
type People struct {
	Platform string   // the platform of its places ("telegram")
	Prefix   string   // its player IDs begin with it ("tg:"); what follows is the person's key
	Buckets  []string // KV buckets keyed by the person's key alone
}

// Key gives the person's key on this platform, and false for a player ID of another platform.
func (p People) Key(playerID string) (string, bool) {
	key, ok := strings.CutPrefix(playerID, p.Prefix)
	return key, ok && key != "" && p.Prefix != ""
}

// Tables is what forgetting asks of the table engine: the part done under each table's lock,
// and the reading of the forms only the engine knows (a table's state, a kept match).
type Tables interface {
	// Leave makes every table in memory forget the person: they leave their seat as /leave
	// would, and their presses and votes go. It gives the IDs of the tables that named them and
	// those tables' place keys, and notes a guided game's place as private (Person.Privately).
	Leave(p *Person) (tables, places []string, err error)
	// ScrubClosed makes a closed table's stored state forget the person: the state written
	// again, and whether it named them (false: data is left as it is).
	ScrubClosed(p *Person, data []byte) ([]byte, bool, error)
	// ScrubRecord makes a kept match forget the person: the record written again, and whether
	// it named them.
	ScrubRecord(p *Person, key string, data []byte) (store.Record, bool)
}

// Store is what forgetting reads and writes of the store.
type Store interface {
	ClosedTables(ctx context.Context, fn func(id string, state []byte) error) error
	Records(ctx context.Context, fn func(key string, record []byte) error) error
	Forget(ctx context.Context, f store.Forgetting) error
}

// League is the league made anew from the records as they are after the person is forgotten
// (core/league/keeper satisfies it, as the engine's League port).
type League interface {
	Hold() (release func())
	Rebuild(ctx context.Context, records func(ctx context.Context, fn func(key string, data []byte) error) error) (entries []store.KVEntry, buckets []string, err error)
}

// Forgetter forgets people (see above). Its fields are set once, before the first Forget.
type Forgetter struct {
	Tables Tables
	Store  Store
	Leases store.Leases // nil: the only copy on its store
	League League       // nil: none
	People []People
	Book   *Book
	Places *places.Book
	// Claims is the engine's KV bucket of which table each place has: a private chat's entry,
	// which names the chat, goes.
	Claims string
	// Random gives the suffix of a forgotten person's placeholders.
	Random func() uint64
	// Observe is told of the lease taken and given up (nil: nobody).
	Observe func(lease string, held bool)
	Log     *slog.Logger

	// mu lets one Forget of this copy run at a time: each writes back the records it read
	// (across copies, the lease Lease does).
	mu sync.Mutex
}

// Forget removes a person from what the bot keeps (see above). It gives how many kept matches
// named them; with a *store.ForgetPending error it is done but for the store's older versions.
// With other copies on the store it first waits for the lease Lease.
func (f *Forgetter) Forget(ctx context.Context, id string) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	held := ctx
	if f.Leases != nil {
		h, release, err := f.Leases.Hold(ctx, Lease)
		if err != nil {
			return 0, fmt.Errorf("table: waiting to forget someone: %w", err)
		}
		defer release()
		if f.Observe != nil {
			f.Observe(Lease, true)
			defer f.Observe(Lease, false)
		}
		held = h
	}
	return f.forget(id, held)
}

// forget is Forget under its lease, held while held lasts.
func (f *Forgetter) forget(id string, held context.Context) (int, error) {
	suffix := strconv.FormatUint(f.Random(), 36)
	p := &Person{ID: id, As: ForgottenPrefix + suffix, suffix: suffix, private: map[string]Chat{}}
	out := store.Forgetting{Actor: id, As: p.As, Names: []string{id}, Closed: map[string][]byte{}}
	out.KV = append(out.KV, store.KVEntry{Bucket: Bucket, Key: id})
	for _, pp := range f.People {
		key, ok := pp.Key(id)
		if !ok {
			continue
		}
		out.Names = append(out.Names, key)
		for _, b := range pp.Buckets {
			out.KV = append(out.KV, store.KVEntry{Bucket: b, Key: key})
		}
		// A chat whose ID is the person's own is their private chat (Telegram's are).
		p.Privately(pp.Platform+":"+key, pp.Platform)
	}

	// The tables in memory: the person leaves them, and they forget the person.
	tables, seatedAt, err := f.Tables.Leave(p)
	if err != nil {
		return 0, err
	}
	out.Tables = append(out.Tables, tables...)
	// The closed tables the store still keeps.
	err = f.Store.ClosedTables(held, func(tid string, data []byte) error {
		b, named, err := f.Tables.ScrubClosed(p, data)
		if !named {
			return nil
		}
		out.Closed[tid] = b
		out.Drop = append(out.Drop, tid)
		return err
	})
	if err != nil {
		return 0, err
	}
	// The kept matches.
	err = f.Store.Records(held, func(key string, data []byte) error {
		if rec, named := f.Tables.ScrubRecord(p, key, data); named {
			out.Records = append(out.Records, rec)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	// The settings of the person's private chats go with them.
	for _, key := range slices.Sorted(maps.Keys(p.private)) {
		out.KV = append(out.KV, store.KVEntry{Bucket: places.Bucket, Key: key})
	}

	if f.League != nil {
		// No match end learns from the league while it is made anew; release empties the cache,
		// which is older than the store by then.
		release := f.League.Hold()
		defer release()
		// The league is made from the records as they will be after the change.
		rewritten := map[string][]byte{}
		for _, r := range out.Records {
			rewritten[r.Key] = r.Data
		}
		entries, buckets, err := f.League.Rebuild(held, func(ctx context.Context, fn func(string, []byte) error) error {
			return f.Store.Records(ctx, func(key string, data []byte) error {
				if d, ok := rewritten[key]; ok {
					data = d
				}
				return fn(key, data)
			})
		})
		if err != nil {
			return 0, err
		}
		out.Emptied, out.KV = buckets, append(entries, out.KV...)
	}
	// Which table a private chat of theirs had names the chat, which is the person's.
	for key := range p.private {
		out.KV = append(out.KV, store.KVEntry{Bucket: f.Claims, Key: key})
	}
	if held.Err() != nil {
		return 0, errLeaseLost // another copy may be forgetting someone now, from the records as they were
	}
	var pending *store.ForgetPending
	if err := f.Store.Forget(held, out); err != nil && !errors.As(err, &pending) {
		return 0, err
	}
	f.Book.Forget(id)
	// A vote is given at a table one sits at: the person's are at the places of those tables.
	for _, key := range seatedAt {
		if err := f.Places.Unvote(held, key, id); err != nil {
			f.Log.Error("forgetting a vote on a place's settings", "err", err)
		}
	}
	if pending != nil {
		return len(out.Records), pending
	}
	return len(out.Records), nil
}

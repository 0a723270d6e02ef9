// Package privacy keeps what people chose for themselves (their language, whether they are
// ranked, the coach's reviews), whatever table they sit at: a Book in front of the KV, changed by
// compare-and-swap, which forgetting a person empties of them; and forgetting a person itself
// (Forgetter, forget.go), which asks the table engine only for its part under a table's lock.
package privacy

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/kontermatt/kontermatt/core/store"
)

// maxSwaps is how many times a change is tried when the entry keeps moving under it (another
// copy, or another command of the person's at once).
const maxSwaps = 20

// Bucket is the KV bucket of people's own choices: player ID → Choices. (Its name is the one the
// table service gave it, kept in every store.)
const Bucket = "table.user"

// Choices are what a person chose for themselves, whatever table they sit at.
type Choices struct {
	Lang   string `json:"lang,omitempty"`
	Hidden bool   `json:"hidden,omitempty"` // not ranked, and their statistics shown to them alone
	Coach  bool   `json:"coach,omitempty"`  // a private review after each game they play
}

// Book keeps people's choices, cached in front of the KV; without a KV it is all there is.
type Book struct {
	mu sync.Mutex
	kv store.KV
	// ctx is the service's lifetime: reads of a person's settings are made for whoever asks,
	// often a rendering without a command behind it; a write takes its command's ctx.
	ctx   context.Context
	log   *slog.Logger
	prefs map[string]Choices // loaded on first use; a missing entry reads as the zero value
	// With maxAge (copies of the bot on one KV, Shared), an entry is read again once it is
	// older: a choice made at another copy holds here within maxAge.
	maxAge time.Duration
	now    func() time.Time
	read   map[string]time.Time // when each entry of prefs was read
}

// SharedAge is how long a copy trusts what it read of a person's choices when other copies may
// change them (Shared): they are read at every command otherwise, and a person who just chose a
// language at one copy and presses a button at another within it is rare.
const SharedAge = time.Second

// NewBook makes a book in front of kv (nil: none). ctx is its owner's lifetime: reads are made
// on it for whoever asks, often a rendering without a command behind it.
func NewBook(ctx context.Context, kv store.KV, log *slog.Logger) *Book {
	return &Book{ctx: ctx, kv: kv, log: log, prefs: map[string]Choices{}, read: map[string]time.Time{}, now: time.Now}
}

// Shared makes the book read an entry again once it is older than SharedAge on now's clock:
// other copies of the bot change the same KV. Call it before the book is used.
func (u *Book) Shared(now func() time.Time) { u.maxAge, u.now = SharedAge, now }

// Get gives the person's choices: cached, or read from the KV. The read is made without the
// book's lock, which guards memory only: another person's command never waits for it.
func (u *Book) Get(id string) Choices {
	u.mu.Lock()
	p, fresh := u.prefs[id]
	if fresh && u.maxAge > 0 && u.now().Sub(u.read[id]) >= u.maxAge {
		fresh = false // another copy may have changed it
	}
	readBefore := u.read[id]
	u.mu.Unlock()
	if fresh || u.kv == nil || id == "" {
		return p
	}
	p, _, err := u.fetch(u.ctx, id)
	if err != nil {
		u.log.Error("reading a person's settings", "err", err)
		return Choices{} // not cached: read again next time
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.read[id].Equal(readBefore) { // else a change was kept meanwhile: it is newer
		u.prefs[id], u.read[id] = p, u.now()
	}
	return p
}

// fetch reads the person's settings from the KV, with the entry as stored (nil: none).
func (u *Book) fetch(ctx context.Context, id string) (Choices, []byte, error) {
	var p Choices
	data, ok, err := u.kv.Get(ctx, Bucket, id)
	switch {
	case err != nil:
		return p, nil, err
	case !ok:
		return p, nil, nil
	case data == nil:
		data = []byte{} // found, and empty
	}
	if err := json.Unmarshal(data, &p); err != nil {
		u.log.Error("a person's settings do not decode; using the defaults", "err", err)
	}
	return p, data, nil
}

// Change keeps a change of a person's settings: their language, whether they are ranked,
// whether their games are reviewed. It reads the entry and writes it back by compare-and-swap
// where the KV can (every store of the repository), trying again if it moved meanwhile (the same
// person at two copies, or two commands of theirs at once): no lock is held across the KV.
func (u *Book) Change(ctx context.Context, id string, f func(*Choices)) error {
	if u.kv == nil {
		u.mu.Lock()
		defer u.mu.Unlock()
		p := u.prefs[id]
		f(&p)
		u.prefs[id], u.read[id] = p, u.now()
		return nil
	}
	sw, swaps := u.kv.(store.Swapper)
	for attempt := 1; ; attempt++ {
		p, old, err := u.fetch(ctx, id)
		if err != nil {
			return err
		}
		f(&p)
		data, _ := json.Marshal(p)
		if swaps {
			_, err = sw.Swap(ctx, Bucket, id, old, data)
			if errors.Is(err, store.ErrConflict) && attempt < maxSwaps {
				continue
			}
		} else {
			err = u.kv.Put(ctx, Bucket, id, data)
		}
		if err != nil {
			return err
		}
		u.mu.Lock()
		u.prefs[id], u.read[id] = p, u.now()
		u.mu.Unlock()
		return nil
	}
}

// Lang is the person's own language, or "".
func (u *Book) Lang(id string) string { return u.Get(id).Lang }

// Forget drops what is cached of a person (the KV entry is deleted by the caller).
func (u *Book) Forget(id string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.prefs, id)
	delete(u.read, id)
}

// Adopt takes over a language choice an older table state kept, unless the person has chosen
// since.
func (u *Book) Adopt(id, lang string) {
	if u.Get(id).Lang != "" {
		return
	}
	err := u.Change(u.ctx, id, func(p *Choices) {
		if p.Lang == "" {
			p.Lang = lang
		}
	})
	if err != nil {
		u.log.Error("keeping a language choice", "err", err)
	}
}

package outbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"github.com/kontermatt/kontermatt/core/table"
)

// Shared records (Config.Shared): several copies of the bot, one store. A keyed message's record
// is an entry in the KV that only compare-and-swap changes. Before a copy shows the message it
// claims the entry (writes its claim into it, if the entry is as it read it); it shows the
// message under the claim and then settles the entry: the record of what it showed, the claim
// gone. So two copies never post one message twice: the second finds the claim, waits until it
// is settled, and then edits the message the first one posted, or skips it when that shows its
// version already. And never edit it backwards: a version older than the record's is skipped.
//
// A copy that dies holding a claim leaves it. A claim made under a fence (Config.Fence: the
// place's partition lease, as its owner held it when it claimed) ends with that lease: the copy
// that holds the place's lease next finds a claim under another fence than its own, and since
// one copy at a time holds a lease, the claimer holds it no longer and will settle nothing; it
// takes the message over at once, so that a take-over is as quick as the lease's (seconds), not
// the claim's time to live. A claim without a fence lapses after Config.ClaimTTL (by the clocks
// of the copies, which must agree within a fraction of it). Had the dead copy's post reached the
// platform before it died, that post has no record, and the message is posted once more: the one
// duplicate no store can prevent (an edit done twice shows the same). A send the dead copy
// settled has its record, which the next owner reads: it is not repeated.

// claimPoll is how often a copy looks again at a record another copy has claimed.
const claimPoll = 25 * time.Millisecond

// entry is a shared record as the KV holds it: the record of what is shown (ID "" before the
// first post) and the claim of a copy showing it now, if any.
type entry struct {
	rec   Record
	claim claim
}

// claim is a copy's claim of a record: which engine (By, random per engine), for which version,
// until when (unix ms), and under which fence (Config.Fence; "" none).
type claim struct {
	By      string
	Version uint64
	Until   int64
	Fence   string
}

// dead reports whether another engine's claim holds no longer at now for a copy that tells the
// message under fence: it lapsed, or it was made under a fence of the place other than the one
// this copy holds now, which only a copy that lost the place can have made.
func (c claim) dead(now time.Time, fence string) bool {
	return now.UnixMilli() >= c.Until || c.Fence != "" && fence != "" && c.Fence != fence
}

// claimed is a record this engine claimed: the entry's bytes as written, what it showed before.
type claimed struct {
	key   string
	raw   []byte
	shown *Record // nil: nothing shown yet
}

func (en entry) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Chat    string `json:"c,omitempty"`
		ID      string `json:"m,omitempty"`
		Version uint64 `json:"v"`
		Sum     uint64 `json:"s"`
		By      string `json:"o,omitempty"`
		Claimed uint64 `json:"cv,omitempty"`
		Until   int64  `json:"u,omitempty"`
		Fence   string `json:"f,omitempty"`
	}{en.rec.Chat, en.rec.ID, en.rec.Version, en.rec.Sum, en.claim.By, en.claim.Version, en.claim.Until, en.claim.Fence})
}

// decodeEntry reads an entry: a record as Record.UnmarshalJSON reads it, with its claim; a
// claim without a record yet; or nothing (nil). An unreadable entry is as none: it is
// overwritten by compare-and-swap like any other.
func decodeEntry(b []byte) entry {
	var en entry
	if b == nil {
		return en
	}
	var c struct {
		By      string `json:"o"`
		Claimed uint64 `json:"cv"`
		Until   int64  `json:"u"`
		Fence   string `json:"f"`
	}
	if json.Unmarshal(b, &c) == nil {
		en.claim = claim{By: c.By, Version: c.Claimed, Until: c.Until, Fence: c.Fence}
	}
	if json.Unmarshal(b, &en.rec) != nil {
		en.rec = Record{}
	}
	return en
}

func (en entry) encode() []byte {
	b, _ := json.Marshal(en)
	return b
}

// shows reports whether the entry names a platform message.
func (en entry) shows() bool { return en.rec.ID != "" }

// share makes the records shared ones (Config.Shared).
func (r *records) share(sw table.Swapper, ttl time.Duration, now func() time.Time) {
	var b [8]byte
	_, _ = rand.Read(b[:])
	r.sw, r.ttl, r.now, r.owner = sw, ttl, now, hex.EncodeToString(b[:])
}

func (r *records) shared() bool { return r.sw != nil }

// read gives a shared record's entry as the KV holds it now, and its bytes (nil: none).
func (r *records) read(key string) ([]byte, entry, error) {
	b, ok, err := r.kv.Get(r.ctx, r.bucket, key)
	if err != nil {
		return nil, entry{}, err
	}
	if !ok {
		return nil, entry{}, nil
	}
	if b == nil {
		b = []byte{}
	}
	en := decodeEntry(b)
	r.remember(key, en)
	return b, en, nil
}

// remember keeps what a shared entry showed, for skipShown (which only trusts it as a lower
// bound: versions only rise).
func (r *records) remember(key string, en entry) {
	if !en.shows() {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, ok := r.recs[key]; ok && old.Version > en.rec.Version {
		return
	}
	if len(r.recs) >= maxCached {
		clear(r.recs)
	}
	r.recs[key] = en.rec
}

// cached gives what this copy last saw of a shared record.
func (r *records) cached(key string) (Record, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec, ok := r.recs[key]
	return rec, ok
}

// fresh gives a shared record as the KV holds it now.
func (r *records) fresh(key string) (Record, bool) {
	_, en, err := r.read(key)
	if err != nil {
		r.log.Error("reading a message record", "key", key, "err", err)
		return Record{}, false
	}
	return en.rec, en.shows()
}

// stale reports whether the KV says this version of a message was shown already, or a newer one
// (a message shown once: any).
func (r *records) stale(key string, version, sum uint64, once bool) bool {
	rec, ok := r.fresh(key)
	return ok && (once || version < rec.Version || version == rec.Version && sum == rec.Sum)
}

// claim claims a shared record for showing version (with content sum) of its message under
// fence (Config.Fence; "" none), waiting while another copy's claim holds. skip says there is
// nothing to show: the record shows this content, or a newer version, already (a repost only
// skips an older version; a message shown once, any).
func (r *records) claim(ctx context.Context, key string, version, sum uint64, repost, once bool, fence string) (cl *claimed, skip bool, err error) {
	raw, en, err := r.read(key)
	if err != nil {
		return nil, false, err
	}
	for {
		now := r.now()
		if c := en.claim; c.By != "" && c.By != r.owner && !c.dead(now, fence) {
			// Another copy shows the message now: see what it showed once it is done.
			sleep(ctx, min(claimPoll, time.UnixMilli(c.Until).Sub(now)+time.Millisecond))
			if err := ctx.Err(); err != nil {
				return nil, false, err
			}
			if raw, en, err = r.read(key); err != nil {
				return nil, false, err
			}
			continue
		}
		if en.shows() && (once || version < en.rec.Version || !repost && sum == en.rec.Sum) {
			return nil, true, nil
		}
		next := entry{rec: en.rec, claim: claim{By: r.owner, Version: version, Until: now.Add(r.ttl).UnixMilli(), Fence: fence}}
		b := next.encode()
		cur, err := r.sw.Swap(ctx, r.bucket, key, raw, b)
		if errors.Is(err, table.ErrConflict) {
			raw, en = cur, decodeEntry(cur) // decide again on what is there now
			continue
		}
		if err != nil {
			return nil, false, err
		}
		cl := &claimed{key: key, raw: b}
		if en.shows() {
			shown := en.rec
			cl.shown = &shown
		}
		return cl, false, nil
	}
}

// settle writes what a claimed send showed and ends the claim. If the claim lapsed meanwhile and
// another copy took the record over, the newer of the two records stays.
func (r *records) settle(cl *claimed, rec Record) {
	next := entry{rec: rec}.encode()
	old := cl.raw
	for {
		cur, err := r.sw.Swap(r.ctx, r.bucket, cl.key, old, next)
		if err == nil {
			r.remember(cl.key, entry{rec: rec})
			return
		}
		if !errors.Is(err, table.ErrConflict) {
			r.log.Error("saving a message record", "key", cl.key, "err", err)
			return
		}
		en := decodeEntry(cur)
		if cur == nil || en.claim.By != "" && en.claim.By != r.owner && !en.claim.dead(r.now(), "") ||
			en.shows() && en.rec.Version > rec.Version {
			r.log.Warn("a message record was taken over by another copy while this one sent", "key", cl.key)
			return
		}
		old = cur
	}
}

// unclaim gives a claim up after a failed send, leaving the record as it was.
func (r *records) unclaim(cl *claimed) {
	var back []byte // nothing shown yet: no record
	if cl.shown != nil {
		back = entry{rec: *cl.shown}.encode()
	}
	if _, err := r.sw.Swap(r.ctx, r.bucket, cl.key, cl.raw, back); err != nil && !errors.Is(err, table.ErrConflict) {
		r.log.Warn("giving up a message record's claim failed; it lapses", "key", cl.key, "err", err)
	}
}

// shownShared records what an interaction showed, unless the record shows a newer version.
func (r *records) shownShared(key string, rec Record) {
	raw, en, err := r.read(key)
	for err == nil {
		if en.shows() && en.rec.Version > rec.Version {
			return
		}
		var cur []byte
		cur, err = r.sw.Swap(r.ctx, r.bucket, key, raw, entry{rec: rec, claim: en.claim}.encode())
		if err == nil {
			r.remember(key, entry{rec: rec})
			return
		}
		if errors.Is(err, table.ErrConflict) {
			raw, en, err = cur, decodeEntry(cur), nil
		}
	}
	r.log.Error("saving a message record", "key", key, "err", err)
}

package chat

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// Owner says whether this copy of the bot owns a place now: of several copies on one store, the
// place's owner alone tells its story (its table message, its games' results, the hands of its
// players), so that it is told once and in order; any copy still takes commands for it. The
// table service's Owns is one (per-place ownership); a copy that is the only one owns every
// place (Alone).
type Owner interface {
	Owns(p api.Place) bool
}

// Alone is the Owner of a copy that is the only one: it owns every place.
type Alone struct{}

// Owns is always true.
func (Alone) Owns(api.Place) bool { return true }

// OwnerFunc is a function as an Owner.
type OwnerFunc func(p api.Place) bool

// Owns calls f.
func (f OwnerFunc) Owns(p api.Place) bool { return f(p) }

// Timeline reports whether a message is part of a place's timeline, which its owner alone tells:
// a keyed message (the table message, a game's result, a lobby, a hand) that follows from the
// table's stored state, so that the owner renders it too and tells it again when it takes the
// place over. One-off messages (a reply to whoever acted, a notice) are told by the copy that
// made them: no other copy has them.
func Timeline(m api.Message) bool {
	return m.Key != "" && m.Table != "" && m.Target.Place.Platform != ""
}

// Teller decides which of a copy's messages it tells (Tells) and has a place it takes over told
// again from its stored state (Run): what the previous owner left untold, this copy tells.
type Teller struct {
	Owner Owner
	// Retell delivers every editable message of the place's table again, as it stands (the
	// table service's Retell).
	Retell func(ctx context.Context, p api.Place)
	// Every is how often Run looks for places this copy took over; default 250 ms.
	Every time.Duration
	// Now is the adapter's clock, by which places not heard of for an hour are forgotten;
	// default time.Now.
	Now func() time.Time
	// Fences, if set, gives the fence under which this copy owns a place now (the table
	// service's PlaceFence): see Fence.
	Fences func(p api.Place) (table.Fence, bool)

	mu    sync.Mutex
	known map[string]placeSeen // by place key: the places heard of, and whether owned then
}

type placeSeen struct {
	place api.Place
	owned bool
	// pending: owned since Run took it over, and not retold yet: the place's retold batch
	// (Hear) comes first, whole, before anything else this copy tells of it.
	pending bool
	at      time.Time
}

// maxKnown bounds the places a Teller remembers; beyond it those not heard of for an hour go.
const maxKnown = 4096

// Tells reports whether this copy tells m: a message of a place's timeline only if it owns the
// place now and has told it since it took it over. A place that came to this copy since Run last
// looked is not told piecemeal: Run has it retold whole, in order, before anything else of it is
// told (what the copy heard of it before was not its to tell, and it may lack pieces of it). A
// nil Teller, or one without an Owner, tells everything.
func (t *Teller) Tells(m api.Message) bool {
	if t == nil || t.Owner == nil || !Timeline(m) {
		return true
	}
	owned := t.Owner.Owns(m.Target.Place)
	key := m.Target.Place.Key()
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.known == nil {
		t.known = map[string]placeSeen{}
	}
	seen, ok := t.known[key]
	if !ok && len(t.known) >= maxKnown {
		for k, s := range t.known {
			if now.Sub(s.at) > time.Hour {
				delete(t.known, k)
			}
		}
	}
	switch {
	case ok && owned && (!seen.owned || seen.pending):
		seen.at = now // taken over: Run retells it, and its retold batch comes first
		t.known[key] = seen
		return false
	case ok || len(t.known) < maxKnown:
		t.known[key] = placeSeen{place: m.Target.Place, owned: owned, at: now}
	}
	return owned
}

// Fence gives the fence under which this copy tells m now, as the outbox marks a send's claim
// with it (outbox Config.Fence): for a message of a place's timeline, the lease of the place as
// this copy holds it; "" for any other message, or without one. A copy killed while it sent
// leaves a claim under its fence, which the next owner of the place, under a fence of its own,
// knows for dead at once.
func (t *Teller) Fence(m api.Message) string {
	if t == nil || t.Fences == nil || !Timeline(m) {
		return ""
	}
	f, ok := t.Fences(m.Target.Place)
	if !ok || f.Key == "" {
		return ""
	}
	return f.Key + "@" + strconv.FormatInt(f.Rev, 10)
}

// Fencer is a table service that fences its ownership of places (table.Service.PlaceFence).
type Fencer interface {
	PlaceFence(p api.Place) (table.Fence, bool)
}

// now reads the Teller's clock.
func (t *Teller) now() time.Time {
	if t.Now != nil {
		return t.Now()
	}
	return time.Now()
}

// NewTeller makes the Teller of an adapter whose service is in slot, written once for every
// chat adapter: owner says which places this copy tells; nil, of several copies (shared), the
// attached service's per-place ownership (Service.Owns) decides, and before a service is
// attached this copy tells nothing of a shared timeline; nil for the only copy tells every
// place. A place taken over is retold by the attached service (Service.Retell), and a service
// that fences its places (Fencer) gives the fences of the claims of what this copy tells. now is
// the adapter's clock (nil: time.Now).
func (s *Slot) NewTeller(owner Owner, shared bool, now func() time.Time) *Teller {
	if owner == nil && shared {
		owner = OwnerFunc(func(p api.Place) bool {
			svc := s.Service()
			return svc != nil && svc.Owns(p)
		})
	}
	return &Teller{Owner: owner, Now: now, Retell: func(ctx context.Context, p api.Place) {
		if svc := s.Service(); svc != nil {
			svc.Retell(ctx, p)
		}
	}, Fences: func(p api.Place) (table.Fence, bool) {
		if f, ok := s.Service().(Fencer); ok {
			return f.PlaceFence(p)
		}
		return table.Fence{}, false
	}}
}

// Run retells, until ctx ends, each place heard of whose ownership came to this copy since it
// was last looked at (a take-over: the previous owner died, stopped or gave it up).
func (t *Teller) Run(ctx context.Context) {
	if t == nil || t.Owner == nil || t.Retell == nil {
		return
	}
	every := t.Every
	if every <= 0 {
		every = 250 * time.Millisecond
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		t.retellTakenOver(ctx)
	}
}

// retellTakenOver has each place this copy took over since it last looked retold.
func (t *Teller) retellTakenOver(ctx context.Context) {
	for _, p := range t.takenOver() {
		t.Retell(context.WithValue(ctx, retelling{}, p.Key()), p)
		t.retold(p.Key()) // also when there was nothing to retell: told from now on
	}
}

// retelling is the key of the context value that marks a delivery of Run's Retell: the key of
// the place retold.
type retelling struct{}

// Hear is told by the adapter's Deliver of each batch of messages, before it queues them: a
// batch that Run's Retell delivers (its context says so) is the place's first since this copy
// took it over, told whole and in order. A delivery that comes before it (a move committed
// while the Retell waited for the table) is not told: the retold batch holds its state too, and
// it would otherwise be queued ahead of the older messages the batch brings (the previous game's
// result before the next game's table).
func (t *Teller) Hear(ctx context.Context) {
	if key, ok := ctx.Value(retelling{}).(string); ok && t != nil {
		t.retold(key)
	}
}

// retold ends a place's wait for its retold batch.
func (t *Teller) retold(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s, ok := t.known[key]; ok && s.pending {
		s.pending = false
		t.known[key] = s
	}
}

// takenOver gives the places heard of that this copy owns now and did not when last looked at,
// and notes which it owns: a place taken over waits for its retold batch (Hear), which is told
// whole, and everything after it.
func (t *Teller) takenOver() []api.Place {
	t.mu.Lock()
	places := make([]placeSeen, 0, len(t.known))
	for _, s := range t.known {
		places = append(places, s)
	}
	t.mu.Unlock()
	var out []api.Place
	for _, s := range places {
		owned := t.Owner.Owns(s.place) // outside the lock: an Owner may ask the store
		if owned == s.owned {
			continue
		}
		t.mu.Lock()
		if cur, ok := t.known[s.place.Key()]; ok && cur.owned != owned {
			cur.owned, cur.pending = owned, owned
			t.known[s.place.Key()] = cur
			if owned {
				out = append(out, s.place)
			}
		}
		t.mu.Unlock()
	}
	return out
}

// Viewer is the table service's ear for what a place's public table message shows: the state of
// sequence number seq (computer players and the next deal wait, bounded, until the public
// message shows the state they follow). A chat adapter tells it, when its attached service has
// it, each time a table message is out: sent, or found showing that version already; and says
// so once, before the service resumes (Reports), so that its places are paced from the start.
type Viewer interface {
	Shown(p api.Place, seq uint64)
	Reports(platform string)
}

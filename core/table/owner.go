package table

// One owner per place (issue 31): which copy fires a place's timers, runs its computer players
// and tells its story is core/table/placement's to decide; this is the engine's glue to it. The
// Owner knows places by key only: when it says this copy gained or lost a lease of places, the
// engine starts or stops the timers and computer players of its tables there (rearm), and what
// an owner commits as owner carries the place's fence.

import (
	"context"
	"errors"

	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/placement"
)

// Partitions is how many partitions the places are hashed into (placement.Partitions).
const Partitions = placement.Partitions

// PlaceLease names the lease whose holder owns the place (with Leases that spread): for tests and
// for a host reading /healthz.
func PlaceLease(p api.Place) string { return placement.Lease(p.Key()) }

// newOwner makes the service's placement.Owner: a lease of places gained or lost starts or stops
// the timers and computer players of the tables there; the janitor's partition prunes and posts.
func (s *Service) newOwner() *placement.Owner {
	return placement.New(placement.Config{Leases: s.cfg.Leases, Log: s.cfg.Log,
		Changed: func(lease string, held bool, in func(placeKey string) bool) {
			s.clustered.Lease(lease, held)
			if !held && s.ctx.Err() != nil {
				return // closing: Close stops the timers
			}
			s.rearm(func(t *tbl) bool { return in(t.st.Place.Key()) })
		},
		Janitor: func(held context.Context) {
			s.prune(held)
			s.postSeasons(held)
		}})
}

// Owns reports whether this copy owns the place now (placement.Owner.Owns): it fires the place's
// timers, runs its computer players and tells its story. Always true for the only copy (no
// Config.Leases).
func (s *Service) Owns(p api.Place) bool { return s.place.Owns(p.Key()) }

// rearm arms the timer and schedules the computer players of the tables which, as this copy's
// leases now say: started where it owns the place, stopped where it does not.
func (s *Service) rearm(which func(*tbl) bool) {
	for _, t := range s.index.all() {
		t.mu.Lock()
		if which(t) {
			s.timers.start(t)
		}
		t.mu.Unlock()
	}
}

// PlaceFence gives the fence under which this copy owns a place now: its partition's lease as
// this copy holds it (with Leases that spread); false without one (the only copy, or a place
// another copy owns). An adapter marks what it sends for the place with it (a message record's
// claim), so that the copy that holds the place next knows a mark of another fence for one of a
// copy that lost the place.
func (s *Service) PlaceFence(p api.Place) (Fence, bool) {
	f, err := s.place.Fence(p.Key())
	return f, err == nil && f != (Fence{})
}

// errFencedRefusal is commit's answer for a change the store refused under its fence.
var errFencedRefusal = &userError{key: "err.internal"}

// isFenced tells a commit's error is the store's refusal of a fence.
func isFenced(err error) bool { return errors.Is(err, ErrFenced) }

// Leases are the leases of places the service holds now (of Config.Leases; the adapters may hold
// others there), sorted; nil without any.
func (s *Service) Leases() []string { return s.place.Leases() }

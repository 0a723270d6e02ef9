package table_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/placement"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// leaseLog is a ClusterObserver that keeps which leases its copy holds, as it was told.
type leaseLog struct {
	mu   sync.Mutex
	held map[string]bool
}

func (l *leaseLog) Command(api.Verb, string, time.Duration) {}
func (l *leaseLog) Commit(time.Duration, error)             {}
func (l *leaseLog) Decision(string, time.Duration)          {}
func (l *leaseLog) Reloaded(string)                         {}
func (l *leaseLog) Lease(name string, held bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held == nil {
		l.held = map[string]bool{}
	}
	l.held[name] = held
}

func (l *leaseLog) holds(name string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.held[name]
}

// TestOneCopyOwnsEveryPlace: the only copy owns every place: without leases from its start, with
// leases that do not spread (bbolt's) once it holds the lease of every place, which it tells its
// observer. A second copy on the same leases owns none until the first stops.
func TestOneCopyOwnsEveryPlace(t *testing.T) {
	places := []api.Place{{Platform: "telegram", Chat: "-100"}, {Platform: "discord", Chat: "1", Thread: "2"}, {Platform: "test", Chat: "x"}}
	alone := table.New(table.Config{Store: mem.New()})
	defer alone.Close()
	for _, p := range places {
		if !alone.Owns(p) {
			t.Errorf("the only copy, without leases, does not own %v", p)
		}
	}

	var leases table.LocalLeases
	store := mem.New()
	var firstLog, secondLog leaseLog
	first := table.New(table.Config{Store: store, KV: store, Leases: &leases, Observe: &firstLog})
	if err := first.Resume(context.Background()); err != nil {
		t.Fatal(err)
	}
	tabletest.WaitUntil(t, 10*time.Second, "the first copy owns the places", func() bool { return first.Owns(places[0]) })
	second := table.New(table.Config{Store: store, KV: store, Leases: &leases, Observe: &secondLog, Shared: true})
	if err := second.Resume(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	for _, p := range places {
		if !first.Owns(p) || second.Owns(p) {
			t.Errorf("%v: the first copy owns it %v, the second %v", p, first.Owns(p), second.Owns(p))
		}
	}
	if !firstLog.holds("places") {
		t.Errorf("the first copy's observer was not told of its lease: %v", firstLog.held)
	}
	first.Close()
	tabletest.WaitUntil(t, 10*time.Second, "the second copy owns the places", func() bool { return second.Owns(places[1]) })
	if firstLog.holds("places") || !secondLog.holds("places") {
		t.Errorf("the observers were told: first %v, second %v", firstLog.held, secondLog.held)
	}
}

// TestPlaceLeases: a place's lease is its key's partition's (placement.Lease), so a place's title,
// which is not in its key, does not change it.
func TestPlaceLeases(t *testing.T) {
	p := api.Place{Platform: "test", Chat: "x"}
	if got := table.PlaceLease(p); got != placement.Lease(p.Key()) {
		t.Errorf("the place's lease is %s, its key's %s", got, placement.Lease(p.Key()))
	}
	if got := table.PlaceLease(p); got != table.PlaceLease(api.Place{Platform: "test", Chat: "x", Title: "X"}) {
		t.Errorf("a place's title changed its lease: %s", got)
	}
}

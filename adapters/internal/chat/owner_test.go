package chat

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/core/table/api"
)

// owners is an Owner a test sets place by place.
type owners struct {
	mu    sync.Mutex
	owned map[string]bool
}

func (o *owners) Owns(p api.Place) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.owned[p.Key()]
}

func (o *owners) set(p api.Place, owned bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.owned[p.Key()] = owned
}

func liveAt(p api.Place) api.Message {
	return api.Message{Target: api.Target{Kind: api.ToPlace, Place: p}, Kind: api.KindLive, Key: "live/" + p.Chat, Table: "t" + p.Chat}
}

// TestTellerForgetsByItsClock: a Teller that remembers as many places as it may forgets, by the
// adapter's clock (Teller.Now), those not heard of for an hour, so that a place heard of then is
// remembered and retold when this copy takes it over. By the machine's clock no hour has passed,
// and the place would be told by no copy after a take-over.
func TestTellerForgetsByItsClock(t *testing.T) {
	o := &owners{owned: map[string]bool{}}
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	tl := &Teller{Owner: o, Now: func() time.Time { return now }}
	for i := range maxKnown {
		tl.Tells(liveAt(api.Place{Platform: "discord", Chat: strconv.Itoa(i)}))
	}
	now = now.Add(2 * time.Hour)
	p := api.Place{Platform: "discord", Chat: "late"}
	if tl.Tells(liveAt(p)) {
		t.Fatal("a place another copy owns is told here")
	}
	o.set(p, true)
	var got []api.Place
	tl.Retell = func(_ context.Context, q api.Place) { got = append(got, q) }
	tl.retellTakenOver(t.Context())
	if len(got) != 1 || got[0] != p {
		t.Errorf("retold: %v, want [%v] (the places of two hours ago forgotten by the Teller's clock)", got, p)
	}
	if !tl.Tells(liveAt(p)) {
		t.Error("the place taken over is not told afterwards")
	}
}

// TestTellerRetellsFirst: a place this copy takes over is told first by its retold batch, whole:
// a delivery that comes before it (a move committed while the Retell waited for the table) is not
// told, or its newer table message would be queued ahead of the previous game's result that the
// retold batch brings. What comes after the batch is told.
func TestTellerRetellsFirst(t *testing.T) {
	o := &owners{owned: map[string]bool{}}
	p := api.Place{Platform: "discord", Chat: "1"}
	var order []string
	var tl *Teller
	tl = &Teller{Owner: o, Retell: func(ctx context.Context, _ api.Place) {
		// A move's delivery got the table first.
		if tl.Tells(liveAt(p)) {
			order = append(order, "move before the retold batch")
		}
		tl.Hear(ctx) // the adapter's Deliver, for the Retell's batch
		if tl.Tells(liveAt(p)) {
			order = append(order, "retold batch")
		}
	}}
	if tl.Tells(liveAt(p)) {
		t.Fatal("a place another copy owns is told here")
	}
	o.set(p, true)
	if tl.Tells(liveAt(p)) {
		t.Fatal("a place taken over is told piecemeal before Run retold it")
	}
	tl.retellTakenOver(t.Context())
	if tl.Tells(liveAt(p)) {
		order = append(order, "after")
	}
	if want := []string{"retold batch", "after"}; !slices.Equal(order, want) {
		t.Errorf("told %v, want %v", order, want)
	}
}

package table

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// dealAt opens a table of four at the harness's place, deals, and gives the table's ID and the
// first game's dealt hands as stored.
func dealAt(t *testing.T, h *harness) (string, string) {
	t.Helper()
	h.do(player(1), api.VerbNew, "timer=none")
	for i := 2; i <= 4; i++ {
		h.do(player(i), api.VerbJoin)
	}
	if e := errText(h.do(player(1), api.VerbDeal)); e != "" {
		t.Fatalf("deal: %s", e)
	}
	id := h.svc.TableAt(h.place)
	st := storedState(t, h.store, id)
	if len(st.Games) != 1 {
		t.Fatalf("table %s has %d games stored, want 1", id, len(st.Games))
	}
	return id, st.Games[0][:25] // the dealer and the 24 dealt cards
}

func storedState(t *testing.T, store *mem.Store, id string) *state {
	ctx := t.Context()
	t.Helper()
	var st *state
	_ = store.Tables(ctx, func(tid string, data []byte) error {
		if tid == id {
			st = new(state)
			if err := json.Unmarshal(data, st); err != nil {
				t.Fatal(err)
			}
		}
		return nil
	})
	if st == nil {
		t.Fatalf("table %s is not stored", id)
	}
	return st
}

// TestUnseededServicesDealApart: a service given no seed draws its tables' IDs and secrets from
// crypto/rand, so two of them deal differently. (Before, both started from PCG(0, a public
// constant): every bot without a seed dealt the same games in the same order.)
func TestUnseededServicesDealApart(t *testing.T) {
	unseeded := func(c *Config) { c.Seed = 0 }
	h1, h2 := newHarness(t, mem.New(), unseeded), newHarness(t, mem.New(), unseeded)
	defer h1.svc.Close()
	defer h2.svc.Close()
	id1, deal1 := dealAt(t, h1)
	id2, deal2 := dealAt(t, h2)
	if id1 == id2 || deal1 == deal2 {
		t.Errorf("two unseeded services: tables %s and %s dealt %s and %s", id1, id2, deal1, deal2)
	}
}

// TestSeededServiceReplays: a seeded service (tests, -seed) opens the same tables and deals the
// same games every time; and each table keeps a 256-bit secret of its own from which its deal
// replays exactly.
func TestSeededServiceReplays(t *testing.T) {
	h1, h2 := newHarness(t, mem.New()), newHarness(t, mem.New())
	defer h1.svc.Close()
	defer h2.svc.Close()
	id1, deal1 := dealAt(t, h1)
	id2, deal2 := dealAt(t, h2)
	if id1 != id2 || deal1 != deal2 {
		t.Errorf("the same seed: tables %s and %s dealt %s and %s", id1, id2, deal1, deal2)
	}
	st := storedState(t, h1.store, id1)
	if len(st.Secret) != secretSize {
		t.Fatalf("the table keeps a secret of %d bytes, want %d", len(st.Secret), secretSize)
	}
	if bytes.Contains([]byte(id1), st.Secret) {
		t.Fatal("the secret is in the ID")
	}
	// The stored secret alone gives the deal again.
	m, _ := core.NewMatch(core.DefaultRules(), core.Seat(st.First))
	g, err := m.Deal(core.DealHands(st.rng(useDeal, 0), m.NextDealer()))
	if err != nil {
		t.Fatal(err)
	}
	if again := encodeGame(g)[:25]; again != deal1 {
		t.Errorf("the stored secret deals %s, the table dealt %s", again, deal1)
	}
}

// TestOldTableGetsASecret: a table stored before tables had secrets (a 64-bit seed then) gets one
// when it is loaded, and deals its next game from it.
func TestOldTableGetsASecret(t *testing.T) {
	store := mem.New()
	h := newHarness(t, store)
	id, _ := dealAt(t, h)
	h.svc.Close()
	st := storedState(t, store, id)
	var raw map[string]any
	data, _ := json.Marshal(st)
	_ = json.Unmarshal(data, &raw)
	delete(raw, "secret")
	raw["seed"] = 12345
	old, _ := json.Marshal(raw)
	store.PutTable(id, old)

	h2 := newHarness(t, store)
	defer h2.svc.Close()
	if err := h2.svc.Resume(context.Background()); err != nil {
		t.Fatal(err)
	}
	tb, ok := h2.svc.index.get(id)
	if !ok {
		t.Fatal("the old table was not loaded")
	}
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if len(tb.st.Secret) != secretSize {
		t.Fatalf("the old table has a secret of %d bytes", len(tb.st.Secret))
	}
	if back, _, _, err := decodeState(tb.committed); err != nil || !bytes.Equal(back.Secret, tb.st.Secret) {
		t.Errorf("a rollback would lose the secret (%v)", err)
	}
}

package privacy_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"testing"

	"github.com/kontermatt/kontermatt/core/places"
	"github.com/kontermatt/kontermatt/core/privacy"
	"github.com/kontermatt/kontermatt/core/store"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// seatedTables is the engine's part of forgetting as a test sees it: the person sat at one
// table, at tg:group; no closed table or kept match names them.
type seatedTables struct{ left []string }

func (s *seatedTables) Leave(p *privacy.Person) ([]string, []string, error) {
	s.left = append(s.left, p.ID)
	return []string{"t1"}, []string{"telegram:group"}, nil
}
func (*seatedTables) ScrubClosed(*privacy.Person, []byte) ([]byte, bool, error) {
	return nil, false, nil
}
func (*seatedTables) ScrubRecord(*privacy.Person, string, []byte) (store.Record, bool) {
	return store.Record{}, false
}

// seenForgetting is a store that keeps what it was asked to forget.
type seenForgetting struct {
	*mem.Store
	got []store.Forgetting
}

func (s *seenForgetting) Forget(ctx context.Context, f store.Forgetting) error {
	s.got = append(s.got, f)
	return s.Store.Forget(ctx, f)
}

func newForgetter(st *seenForgetting, tables privacy.Tables) *privacy.Forgetter {
	log := slog.New(slog.DiscardHandler)
	return &privacy.Forgetter{Tables: tables, Store: st, Book: privacy.NewBook(context.Background(), st, log),
		Places: places.New(st, log), Claims: "table.claim", Random: func() uint64 { return 42 }, Log: log,
		People: []privacy.People{{Platform: "telegram", Prefix: "tg:", Buckets: []string{"telegram.chat"}}}}
}

// TestForgetReachesWhatTheEngineDoesNot: forgetting a Telegram person (Forgetter, with the
// engine's part faked) deletes their own choices, what the adapter keeps under their key, their
// private chat's settings and claim, names them at the table they sat at, and takes back their
// vote at that table's place; the book no longer has their choices.
func TestForgetReachesWhatTheEngineDoesNot(t *testing.T) {
	ctx := t.Context()
	st := &seenForgetting{Store: mem.New()}
	tables := &seatedTables{}
	f := newForgetter(st, tables)
	if err := f.Book.Change(ctx, "tg:7", func(c *privacy.Choices) { c.Lang = "lb" }); err != nil {
		t.Fatal(err)
	}
	seated := []string{"tg:7", "tg:8"}
	f.Places.Vote(ctx, "telegram:group", "tg:7", seated, "stripes=3")
	if _, err := f.Forget(ctx, "tg:7"); err != nil {
		t.Fatal(err)
	}
	if len(st.got) != 1 || !slices.Equal(tables.left, []string{"tg:7"}) {
		t.Fatalf("forgot %d times, the tables left by %v", len(st.got), tables.left)
	}
	got := st.got[0]
	if got.Actor != "tg:7" || got.As != privacy.ForgottenPrefix+"16" || !slices.Equal(got.Names, []string{"tg:7", "7"}) || !slices.Equal(got.Tables, []string{"t1"}) {
		t.Errorf("who and where: %+v", got)
	}
	want := []store.KVEntry{{Bucket: privacy.Bucket, Key: "tg:7"}, {Bucket: "telegram.chat", Key: "7"},
		{Bucket: places.Bucket, Key: "telegram:7"}, {Bucket: "table.claim", Key: "telegram:7"}}
	if !slices.EqualFunc(got.KV, want, func(a, b store.KVEntry) bool { return a.Bucket == b.Bucket && a.Key == b.Key && a.Value == nil }) {
		t.Errorf("KV entries: %+v, want %+v", got.KV, want)
	}
	if c := f.Book.Get("tg:7"); c.Lang != "" {
		t.Errorf("the book still has their choices: %+v", c)
	}
	// Their vote went: the other person's alone counts one.
	if votes, _, _ := f.Places.Vote(ctx, "telegram:group", "tg:8", seated, "stripes=3"); votes != 1 {
		t.Errorf("after they were forgotten, a vote counts %d, want 1", votes)
	}
}

// lostLease is a lease lost as soon as it is held (another copy took it over).
type lostLease struct{}

func (lostLease) Hold(ctx context.Context, _ string) (context.Context, func(), error) {
	held, cancel := context.WithCancel(ctx)
	cancel()
	return held, cancel, nil
}
func (lostLease) Held() []string { return nil }

// TestForgetWithTheLeaseLostWritesNothing: a copy that lost the lease to forget before writing
// writes nothing (another copy may be forgetting someone from the records as they were), and
// says so.
func TestForgetWithTheLeaseLostWritesNothing(t *testing.T) {
	st := &seenForgetting{Store: mem.New()}
	f := newForgetter(st, &seatedTables{})
	f.Leases = lostLease{}
	if _, err := f.Forget(t.Context(), "tg:7"); err == nil || errors.Is(err, context.Canceled) {
		t.Fatalf("forgetting with the lease lost: %v, want the lost lease's error", err)
	}
	if len(st.got) != 0 {
		t.Errorf("written with the lease lost: %+v", st.got)
	}
}

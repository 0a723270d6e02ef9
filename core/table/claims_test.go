package table

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/storage/mem"
)

// TestPlaceClaimsMoveByCompareAndSwap: a place's claim moves only from what was read (of two
// copies claiming a place at once, one does), and is given back only while it is still the
// table's that took it.
func TestPlaceClaimsMoveByCompareAndSwap(t *testing.T) {
	ctx := context.Background()
	now := time.UnixMilli(1_700_000_000_000)
	c := newPlaceClaims(Config{KV: mem.New(), Now: func() time.Time { return now }, Log: slog.New(slog.DiscardHandler)})
	const place = "test:g1"
	raw, pc, err := c.read(ctx, place)
	if err != nil || raw != nil || pc != (placeClaim{}) {
		t.Fatalf("an unclaimed place: %q %+v %v", raw, pc, err)
	}
	if err := c.swap(ctx, place, raw, "aaaa"); err != nil {
		t.Fatal(err)
	}
	if err := c.swap(ctx, place, raw, "bbbb"); !errors.Is(err, ErrConflict) {
		t.Fatalf("a second claim from the same read: %v, want ErrConflict", err)
	}
	first, pc, err := c.read(ctx, place)
	if err != nil || pc != (placeClaim{Table: "aaaa", At: now.UnixMilli()}) {
		t.Fatalf("the claim: %+v %v", pc, err)
	}
	c.giveBack(ctx, place, "bbbb", nil) // not bbbb's: stays
	if _, pc, _ := c.read(ctx, place); pc.Table != "aaaa" {
		t.Fatalf("another table gave the claim back: %+v", pc)
	}
	if err := c.swap(ctx, place, first, "cccc"); err != nil {
		t.Fatal(err)
	}
	c.giveBack(ctx, place, "cccc", first)
	if _, pc, _ := c.read(ctx, place); pc.Table != "aaaa" {
		t.Fatalf("the claim given back is %+v, want aaaa's again", pc)
	}

	none := newPlaceClaims(Config{KV: kvOnly{mem.New()}, Now: time.Now, Log: slog.New(slog.DiscardHandler)})
	if err := none.swap(ctx, place, nil, "aaaa"); err != nil {
		t.Fatal(err)
	}
	if raw, pc, err := none.read(ctx, place); raw != nil || pc.Table != "" || err != nil {
		t.Errorf("a KV without compare-and-swap keeps a claim: %q %+v %v", raw, pc, err)
	}
}

// kvOnly is a KV that cannot compare and swap.
type kvOnly struct{ KV }

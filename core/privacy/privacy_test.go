package privacy_test

import (
	"log/slog"
	"testing"

	"github.com/kontermatt/kontermatt/core/privacy"
	"github.com/kontermatt/kontermatt/storage/storagetest"
)

// TestAChangeMeanwhileIsKept: two changes of one person's choices at once each keep the other's:
// the later finds the entry moved (compare-and-swap), reads it again and changes that. Both
// books, and a third reading the KV afresh, then see both.
func TestAChangeMeanwhileIsKept(t *testing.T) {
	ctx := t.Context()
	kv := storagetest.NewRacingKV()
	log := slog.New(slog.DiscardHandler)
	mine, other := privacy.NewBook(ctx, kv, log), privacy.NewBook(ctx, kv, log)
	kv.Meanwhile = func() {
		if err := other.Change(ctx, "tg:1", func(c *privacy.Choices) { c.Lang = "lb" }); err != nil {
			t.Error(err)
		}
	}
	if err := mine.Change(ctx, "tg:1", func(c *privacy.Choices) { c.Hidden = true }); err != nil {
		t.Fatal(err)
	}
	want := privacy.Choices{Lang: "lb", Hidden: true}
	if got := mine.Get("tg:1"); got != want {
		t.Errorf("the book that changed last holds %+v, want %+v", got, want)
	}
	if got := privacy.NewBook(ctx, kv, log).Get("tg:1"); got != want {
		t.Errorf("the KV holds %+v, want %+v", got, want)
	}
	mine.Forget("tg:1")
	if got := mine.Get("tg:1"); got != want { // forgotten from the cache only: read again
		t.Errorf("after Forget the book reads %+v, want %+v from the KV", got, want)
	}
}

package privacy_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/kontermatt/kontermatt/core/privacy"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// racingKV is a KV whose first Swap finds the entry changed by someone else a moment before (as
// another copy of the bot, or another command of the same person's, may change it).
type racingKV struct {
	*mem.Store
	other func()
}

func (k *racingKV) Swap(ctx context.Context, bucket, key string, old, value []byte) ([]byte, error) {
	if f := k.other; f != nil {
		k.other = nil
		f()
	}
	return k.Store.Swap(ctx, bucket, key, old, value)
}

// TestAChangeMeanwhileIsKept: two changes of one person's choices at once each keep the other's:
// the later finds the entry moved (compare-and-swap), reads it again and changes that. Both
// books, and a third reading the KV afresh, then see both.
func TestAChangeMeanwhileIsKept(t *testing.T) {
	ctx := t.Context()
	kv := &racingKV{Store: mem.New()}
	log := slog.New(slog.DiscardHandler)
	mine, other := privacy.NewBook(ctx, kv, log), privacy.NewBook(ctx, kv, log)
	kv.other = func() {
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

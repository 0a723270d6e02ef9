package storagetest

import (
	"context"

	"github.com/kontermatt/kontermatt/storage/mem"
)

// RacingKV is a memory KV whose next write (a Swap or a Put) finds the entry changed by someone
// else a moment before: Meanwhile, when set, runs once just before it, as another copy of the bot
// (or another command at this one) may write the same entry at the same time. Tests of
// compare-and-swap with retry use it.
type RacingKV struct {
	*mem.Store
	Meanwhile func()
}

// NewRacingKV is a RacingKV over an empty memory store.
func NewRacingKV() *RacingKV { return &RacingKV{Store: mem.New()} }

// meanwhile runs Meanwhile once.
func (k *RacingKV) meanwhile() {
	if f := k.Meanwhile; f != nil {
		k.Meanwhile = nil
		f()
	}
}

// Swap runs Meanwhile first.
func (k *RacingKV) Swap(ctx context.Context, bucket, key string, old, value []byte) ([]byte, error) {
	k.meanwhile()
	return k.Store.Swap(ctx, bucket, key, old, value)
}

// Put runs Meanwhile first.
func (k *RacingKV) Put(ctx context.Context, bucket, key string, value []byte) error {
	k.meanwhile()
	return k.Store.Put(ctx, bucket, key, value)
}

package tabletest

import (
	"context"
	"errors"
	"sync"

	"github.com/kontermatt/kontermatt/core/store"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// Backing is the store a Failing wraps: the engine's Store and its KV with compare-and-swap. The
// tests give storage/mem's; this package takes it from them, since core/ depends on no storage.
type Backing interface {
	store.Store
	store.Swapper
}

// Failing is a store (a Backing, in the tests storage/mem's) failing or hanging where a test
// says: the method FailOn names gives its error, and the commits of the table its Hang names wait
// (Hang.At). It is the engine's Store and KV port, for tests of what a player is told when the
// store fails.
type Failing struct {
	Backing
	// Hang, when set before the service commits, holds the commits of the table it names.
	Hang *Hang

	mu   sync.Mutex
	errs map[string]error // by method
}

// NewFailing wraps b, failing nothing yet.
func NewFailing(b Backing) *Failing { return &Failing{Backing: b, errs: map[string]error{}} }

// FailOn makes the store's method named ("Swap", "Records" or "Forget") give err from now on;
// nil: work again. Forget given a *store.ForgetPending does its work and then gives it, as a
// store that keeps the older versions a while does.
func (f *Failing) FailOn(method string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs[method] = err
}

func (f *Failing) err(method string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.errs[method]
}

// Commit commits, once the table's Hang lets it.
func (f *Failing) Commit(ctx context.Context, c table.Change) error {
	if f.Hang != nil {
		f.Hang.Wait(c)
	}
	return f.Backing.Commit(ctx, c)
}

// Swap swaps, unless it is to fail.
func (f *Failing) Swap(ctx context.Context, bucket, key string, old, value []byte) ([]byte, error) {
	if err := f.err("Swap"); err != nil {
		return nil, err
	}
	return f.Backing.Swap(ctx, bucket, key, old, value)
}

// Records reads the kept matches, unless it is to fail.
func (f *Failing) Records(ctx context.Context, fn func(key string, record []byte) error) error {
	if err := f.err("Records"); err != nil {
		return err
	}
	return f.Backing.Records(ctx, fn)
}

// Forget forgets, unless it is to fail; see FailOn.
func (f *Failing) Forget(ctx context.Context, fg store.Forgetting) error {
	err := f.err("Forget")
	var pending *store.ForgetPending
	if err != nil && !errors.As(err, &pending) {
		return err
	}
	if ferr := f.Backing.Forget(ctx, fg); ferr != nil {
		return ferr
	}
	return err
}

// Take gives the messages delivered since the last Take, and forgets them.
func (o *Outbox) Take() []api.Message {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := o.msgs
	o.msgs = nil
	return out
}

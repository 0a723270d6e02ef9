package etcdstore_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage/etcdstore"
	"github.com/kontermatt/kontermatt/storage/etcdstore/etcdtest"
)

// TestCancelEndsABlockedCommit: without a quorum a commit waits for the cluster up to the store's
// timeout (a minute here); the caller's ctx ends it within 100 ms, with ctx's error. So does a
// command through the service, whose Handle then says the change was not stored (ErrNotStored,
// wrapping ctx's error): nothing waits on a cluster its caller gave up on.
func TestCancelEndsABlockedCommit(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{})
	s := open(t, c, etcdstore.Options{Timeout: time.Minute})
	svc := tabletest.New(table.Config{Store: s, KV: s, Seed: 7, Log: slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelError}))})
	defer svc.Close()
	tt, err := tabletest.Open(svc, 0)
	if err != nil {
		t.Fatal(err)
	}
	c.Stop(0)
	c.Stop(1) // no quorum: writes wait

	cancelled := func(what string, call func(ctx context.Context) error) {
		t.Helper()
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- call(ctx) }()
		select {
		case err := <-done:
			t.Fatalf("%s without a quorum ended by itself: %v", what, err)
		case <-time.After(300 * time.Millisecond): // blocked, as a cluster without quorum makes it
		}
		cancel()
		at := time.Now()
		select {
		case err := <-done:
			took := time.Since(at)
			if !errors.Is(err, context.Canceled) {
				t.Errorf("%s cancelled: %v, want an error wrapping context.Canceled", what, err)
			}
			if took > 100*time.Millisecond {
				t.Errorf("%s ended %v after its ctx was cancelled, want within 100ms", what, took)
			}
			t.Logf("%s ended %v after the cancel: %v", what, took.Round(time.Microsecond), err)
		case <-time.After(5 * time.Second):
			t.Fatalf("%s still waits 5s after its ctx was cancelled", what)
		}
	}
	cancelled("a commit", func(ctx context.Context) error {
		return s.Commit(ctx, table.Change{TableID: "probe", State: []byte("x"), Log: table.LogEntry{Seq: 1, Verb: api.VerbNew}})
	})
	cancelled("a command", func(ctx context.Context) error {
		replies, err := svc.Handle(ctx, tabletest.Next(svc, tt))
		if !errors.Is(err, table.ErrNotStored) {
			t.Errorf("Handle of a command whose commit was cancelled: %v, want ErrNotStored", err)
		}
		if len(replies) == 0 || replies[0].Kind != api.KindError {
			t.Errorf("the actor was not told the command failed: %+v", replies)
		}
		return err
	})
}

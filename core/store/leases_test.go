package store

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

func TestLocalLeasesHoldOneAtATime(t *testing.T) {
	var l LocalLeases
	ctx := t.Context()
	held, release, err := l.Hold(ctx, "timers/0")
	if err != nil {
		t.Fatal(err)
	}
	if got := l.Held(); !slices.Equal(got, []string{"timers/0"}) {
		t.Fatalf("held %v, want [timers/0]", got)
	}
	// Another lease is free at once; the same one waits.
	if _, r2, err := l.Hold(ctx, "poller"); err != nil {
		t.Fatal(err)
	} else {
		r2()
	}
	wait, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, _, err := l.Hold(wait, "timers/0"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a held lease was given twice: err %v", err)
	}
	second := make(chan context.Context)
	go func() {
		h, _, err := l.Hold(ctx, "timers/0")
		if err != nil {
			t.Error(err)
		}
		second <- h
	}()
	release()
	release() // twice is fine
	if held.Err() == nil {
		t.Fatal("the released holder's context goes on")
	}
	select {
	case h := <-second:
		if h.Err() != nil {
			t.Fatal("the new holder's context ended at once")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting holder did not get the released lease")
	}
}

func TestLocalLeaseEndsWithItsContext(t *testing.T) {
	var l LocalLeases
	ctx, cancel := context.WithCancel(t.Context())
	if _, _, err := l.Hold(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	cancel()
	h, release, err := l.Hold(t.Context(), "x")
	if err != nil || h.Err() != nil {
		t.Fatalf("the lease of an ended holder was not free: %v", err)
	}
	release()
	if got := l.Held(); len(got) != 0 {
		t.Fatalf("held %v after release", got)
	}
}

package etcdstore_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/storage/etcdstore"
	"github.com/kontermatt/kontermatt/storage/etcdstore/etcdtest"
)

// hold holds a lease or fails the test after a while.
func hold(t *testing.T, l *etcdstore.Leases, name string, within time.Duration) (context.Context, func(), time.Duration) {
	t.Helper()
	// Only the wait is bounded: the held context follows ctx, which must outlive the call.
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	timer := time.AfterFunc(within, cancel)
	start := time.Now()
	held, release, err := l.Hold(ctx, name)
	timer.Stop()
	if err != nil {
		t.Fatalf("lease %s not held within %v: %v", name, within, err)
	}
	return held, release, time.Since(start)
}

// TestLeasesMoveToTheCopyThatWaits: of two copies on one cluster, one holds a lease at a time; a
// copy that gives it up hands it on at once, one that dies (its connection gone, its etcd lease
// left to expire, as after kill -9) within the time to live; a lost etcd member changes nothing.
func TestLeasesMoveToTheCopyThatWaits(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{})
	const ttl = 2 * time.Second
	a := open(t, c, etcdstore.Options{Prefix: "leases/"})
	b := open(t, c, etcdstore.Options{Prefix: "leases/"})
	la, lb := a.Leases("a", ttl), b.Leases("b", ttl)

	heldA, releaseA, _ := hold(t, la, "timers", 5*time.Second)
	if got := la.Held(); !slices.Equal(got, []string{"timers"}) {
		t.Fatalf("copy a holds %v", got)
	}
	gotB := make(chan context.Context, 1)
	go func() {
		held, _, err := lb.Hold(t.Context(), "timers")
		if err == nil {
			gotB <- held
		}
	}()
	c.Stop(0) // a member lost: the holder keeps its lease past the time to live
	select {
	case <-gotB:
		t.Fatal("both copies hold the lease")
	case <-heldA.Done():
		t.Fatal("the holder lost its lease when one member of three stopped")
	case <-time.After(2 * ttl):
	}
	if got := lb.Held(); len(got) != 0 {
		t.Errorf("copy b, waiting for the lease, says it holds %v", got) // /healthz would name it
	}
	c.Restart(0)

	releaseA()
	var heldB context.Context
	select {
	case heldB = <-gotB:
	case <-time.After(5 * time.Second):
		t.Fatal("a released lease did not move to the copy waiting")
	}
	if heldA.Err() == nil || len(la.Held()) != 0 {
		t.Fatal("copy a still holds the lease it gave up")
	}

	// Copy b dies without a word; copy a takes over within the time to live.
	again := make(chan time.Duration, 1)
	go func() {
		start := time.Now()
		if _, _, err := la.Hold(t.Context(), "timers"); err == nil {
			again <- time.Since(start)
		}
	}()
	time.Sleep(200 * time.Millisecond) // a waits in line
	died := time.Now()
	b.Close()
	select {
	case <-again:
		took := time.Since(died)
		t.Logf("taken over %v after the holder died (time to live %v)", took.Round(time.Millisecond), ttl)
		if took > 2*ttl+time.Second {
			t.Fatalf("take-over took %v, time to live %v", took, ttl)
		}
	case <-time.After(4 * ttl):
		t.Fatal("the lease of a dead copy was not taken over")
	}
	select {
	case <-heldB.Done():
	case <-time.After(4 * ttl):
		t.Fatal("the dead copy's held context goes on")
	}
}

package etcdstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/storage/etcdstore"
	"github.com/kontermatt/kontermatt/storage/etcdstore/etcdtest"
)

// TestOutOfReachFailsFast (issue 32): with the cluster out of reach (two members of three stopped)
// the first call fails once no member has known a leader for a while, within two election
// timeouts rather than its whole timeout (Discord's 3 s for an answer), and the calls after it (a
// command makes several) fail within a tenth of the timeout, so a command's refusal comes in
// about one election timeout rather than one timeout per call. Once the quorum is back
// and a whole timeout has passed, calls succeed again, and one success clears the mark.
func TestOutOfReachFailsFast(t *testing.T) {
	ctx := context.Background()
	c := etcdtest.Start(t, etcdtest.Options{})
	const timeout = 5 * time.Second
	st := open(t, c, etcdstore.Options{Prefix: "outage/", Timeout: timeout})
	if err := st.Put(ctx, "b", "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	c.Stop(1)
	c.Stop(2)
	took := func(call func() error) time.Duration {
		start := time.Now()
		if err := call(); !errors.Is(err, table.ErrUnavailable) {
			t.Fatalf("without a quorum: %v, want ErrUnavailable", err)
		}
		return time.Since(start)
	}
	first := took(func() error { _, _, err := st.Get(ctx, "b", "k"); return err })
	var later []time.Duration
	for range 3 {
		later = append(later, took(func() error { return st.Put(ctx, "b", "k", []byte("w")) }))
	}
	t.Logf("without a quorum: the first call %v, the next three %v (timeout %v)", first.Round(time.Millisecond), later, timeout)
	// The members know no leader: the first call fails once none has known one for half an
	// election timeout (watchLeader), not after its whole timeout.
	if first > 2*etcdstore.DefaultElection {
		t.Errorf("the first call gave up after %v, want within two election timeouts (%v)", first, 2*etcdstore.DefaultElection)
	}
	for _, d := range later {
		if d > timeout/5 {
			t.Errorf("a call after the first took %v: the cluster known out of reach costs each call its whole timeout", d)
		}
	}
	c.RestartAll()
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, _, err := st.Get(ctx, "b", "k")
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the quorum is back, the calls still fail: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	start := time.Now()
	if err := st.Put(ctx, "b", "k", []byte("x")); err != nil || time.Since(start) > timeout/2 {
		t.Errorf("after the quorum came back: %v in %v", err, time.Since(start))
	}
}

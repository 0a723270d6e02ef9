package main

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/storage/etcdstore"
)

// historyLease is the lease of the copy that keeps etcd's history bounded (etcdstore.TrimHistory):
// one copy does it; another takes over when it goes.
const historyLease = "history"

// historyEvery is how often the copy holding historyLease trims: a tenth of the window (etcd's
// own periodic compaction notes revisions as often), at most every five minutes.
func historyEvery(window time.Duration) time.Duration {
	return min(max(window/10, 10*time.Millisecond), 5*time.Minute)
}

// keepHistory holds historyLease whenever it can until ctx ends and, while it does, trims the
// cluster's history to window, at once (the check at start) and then every historyEvery. What it
// finds is logged when it changes: a cluster that refuses the bot compaction is said once (etcd's
// own --auto-compaction must do it), and a history still readable past twice the window is a
// warning (nobody compacts: the cluster fills its quota, and old table states stay readable).
func keepHistory(ctx context.Context, st *etcdstore.Store, leases table.Leases, window time.Duration, log *slog.Logger) {
	var said historySaid
	for ctx.Err() == nil {
		held, release, err := leases.Hold(ctx, historyLease)
		if err != nil {
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
			continue
		}
		for held.Err() == nil {
			rep, err := st.TrimHistory(held, time.Now(), window)
			said.tell(log, window, rep, err)
			select {
			case <-held.Done():
			case <-time.After(historyEvery(window)):
			}
		}
		release()
	}
}

// startHistory runs keepHistory until the function it gives is called, which waits for it.
func startHistory(st *etcdstore.Store, leases table.Leases, window time.Duration, log *slog.Logger) func() {
	// The upkeep owns its lifetime: it runs from the start until the function returned here is
	// called at shutdown, after the platforms stopped (not with any one request).
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		keepHistory(ctx, st, leases, window, log)
	}()
	return func() { cancel(); <-done }
}

// historySaid is what keepHistory last logged, so each state is said once.
type historySaid struct {
	mu      sync.Mutex
	refused bool
	stale   bool
	failing bool
}

func (h *historySaid) tell(log *slog.Logger, window time.Duration, rep etcdstore.HistoryReport, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err != nil {
		if !h.failing && !errors.Is(err, table.ErrUnavailable) {
			log.Warn("the etcd history upkeep failed; it tries again", "err", err)
		}
		h.failing = true
		return
	}
	h.failing = false
	if refused := rep.Refused != nil; refused != h.refused {
		h.refused = refused
		if refused {
			log.Info("etcd refuses this bot's user compaction (no root role): the members' own --auto-compaction-mode=periodic --auto-compaction-retention must bound the history",
				"window", window, "err", rep.Refused)
		}
	}
	if stale := !rep.Stale.IsZero(); stale != h.stale {
		h.stale = stale
		if stale {
			log.Warn("etcd history is not compacted: revisions older than twice etcd.history are still readable, and the bot may not compact them (its user has no root role). "+
				"Set --auto-compaction-mode=periodic --auto-compaction-retention to etcd.history on every member (docs/cluster.md), "+
				"or the cluster fills its quota (NOSPACE: every move refused) and replaced table states stay readable",
				"window", window, "readable_since", rep.Stale.UTC().Format(time.RFC3339))
		} else {
			log.Info("etcd history is compacted again", "window", window)
		}
	}
}

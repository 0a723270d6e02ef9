package chat

import (
	"context"
	"log/slog"
	"time"

	"github.com/kontermatt/kontermatt/core/table"
)

// Lease is what one copy of several does only while it holds a lease in the store: the Telegram
// poller, a Discord gateway shard (table.Leases).
type Lease struct {
	Leases table.Leases
	Name   string
	// Retry is how long to wait before asking again when the lease cannot be had (the store
	// out of reach).
	Retry time.Duration
	Log   *slog.Logger
	// Waiting is the warning when the lease cannot be had now, and Lost the one when the copy
	// lost it while it held it, both in the host's words; the lease's name goes with them.
	Waiting, Lost string
}

// Run calls work each time this copy holds the lease, until ctx ends. work's context ends when
// the lease is lost or ctx ends, and holding says whether the lease is still held (not whether
// ctx goes on). The lease outlives ctx until work returns, so that a copy that stops finishes
// (confirms what it took, closes its session) before the next holder starts; only waiting for
// the lease ends with ctx at once.
func (l Lease) Run(ctx context.Context, work func(ctx context.Context, holding func() bool)) {
	for ctx.Err() == nil {
		holdCtx, drop := context.WithCancel(context.WithoutCancel(ctx))
		stopWaiting := context.AfterFunc(ctx, drop)
		held, release, err := l.Leases.Hold(holdCtx, l.Name)
		if !stopWaiting() || err != nil {
			drop()
			if release != nil {
				release()
			}
			if ctx.Err() != nil {
				return
			}
			l.Log.Warn(l.Waiting, "lease", l.Name, "in", l.Retry, "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(l.Retry):
			}
			continue
		}
		runCtx, stopRun := context.WithCancel(held)
		stop := context.AfterFunc(ctx, stopRun)
		work(runCtx, func() bool { return held.Err() == nil })
		stop()
		stopRun()
		lost := held.Err() != nil
		release()
		drop()
		if lost && ctx.Err() == nil {
			l.Log.Warn(l.Lost, "lease", l.Name)
		}
	}
}

package discord

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/kontermatt/kontermatt/adapters/internal/chat"
)

// Shards. Every shard of the bot is a discordgo session in this process, all feeding the one
// service: guild events come on the shard (guild_id >> 22) % shards, DMs only on shard 0
// (developer docs, Gateway: Sharding), and a DM button press is for a table in some guild.

// readyTimeout bounds the wait for a shard's READY after its IDENTIFY.
const readyTimeout = 15 * time.Second

// checkSessionStarts refuses a start that would leave too few of the day's session starts.
// Discord allows about 1,000 IDENTIFYs a day for all shards; whoever reaches the limit has every
// session closed and the bot token reset (developer docs, Gateway: Session Start Limit). A
// supervisor restarting a bot that fails after connecting would get there within hours, so a
// start must always leave enough for a person to start the bot once more by hand.
func checkSessionStarts(l discordgo.SessionInformation, shards int) error {
	if l.Total == 0 && l.Remaining == 0 && l.MaxConcurrency == 0 {
		return nil // no session_start_limit in the answer (a proxy that drops it): nothing to go by
	}
	reserve := max(shards, minSessionStartsLeft)
	if l.Remaining-shards >= reserve {
		return nil
	}
	renew := time.Duration(l.ResetAfter) * time.Millisecond
	return &chat.StartError{After: renew, Err: fmt.Errorf(
		"discord: only %d of the day's %d session starts are left (they renew in %v); starting %d shard(s) now would leave fewer than %d, and running out resets the bot token: not connecting",
		l.Remaining, l.Total, renew.Round(time.Second), shards, reserve)}
}

// minSessionStartsLeft is the least number of session starts a start leaves for the day.
const minSessionStartsLeft = 5

// openShards connects n shards, max_concurrency at a time: shards whose shard_id %
// max_concurrency agree share one IDENTIFY per 5 s, and are started bucket by bucket in order
// (developer docs, Gateway: Max Concurrency). An IDENTIFY over the limit is answered with an
// Invalid Session, and discordgo v0.29.0 answers that with another IDENTIFY at once. On failure
// the shards already open are closed.
func (a *Adapter) openShards(ctx context.Context, n, maxConcurrency int) ([]*discordgo.Session, error) {
	maxConcurrency = max(maxConcurrency, 1)
	var open []*discordgo.Session
	var lastBucket time.Time
	for lo := 0; lo < n; lo += maxConcurrency {
		if lo > 0 {
			// The previous bucket's IDENTIFYs were all sent before its Opens returned.
			t := time.NewTimer(time.Until(lastBucket.Add(a.identifyWindow)))
			select {
			case <-ctx.Done():
				t.Stop()
				closeShards(open, a.log, a.redact)
				return nil, nil
			case <-t.C:
			}
		}
		hi := min(lo+maxConcurrency, n)
		bucket := make([]*discordgo.Session, hi-lo)
		errs := make([]error, hi-lo)
		var wg sync.WaitGroup
		for i := lo; i < hi; i++ {
			wg.Go(func() { bucket[i-lo], errs[i-lo] = a.openShard(ctx, i, n) })
		}
		wg.Wait()
		lastBucket = time.Now()
		for _, s := range bucket {
			if s != nil {
				open = append(open, s)
			}
		}
		if err := errors.Join(errs...); err != nil {
			closeShards(open, a.log, a.redact)
			return nil, err
		}
		if ctx.Err() != nil {
			closeShards(open, a.log, a.redact)
			return nil, nil
		}
	}
	return open, nil
}

// openShard connects shard id of n and waits for its READY.
func (a *Adapter) openShard(ctx context.Context, id, n int) (*discordgo.Session, error) {
	s := a.session()
	if n > 1 {
		s.ShardID, s.ShardCount = id, n
	}
	// The adapter reconnects (keepShard), and every IDENTIFY waits for the gate (gate.go).
	s.ShouldReconnectOnError = false
	s.Dialer = a.dialer(ctx, id, func() { a.setRedo(id, true) })
	a.setRedo(id, false)
	ready := make(chan struct{}, 1)
	s.AddHandlerOnce(func(*discordgo.Session, *discordgo.Ready) { ready <- struct{}{} })
	s.AddHandler(a.onEvent)
	s.AddHandler(func(*discordgo.Session, *discordgo.Ready) { a.gate.ready(id); a.gateway.set(id, true) })
	s.AddHandler(func(*discordgo.Session, *discordgo.Resumed) { a.gateway.set(id, true) })
	s.AddHandler(func(s *discordgo.Session, _ *discordgo.Disconnect) {
		a.gateway.set(id, false)
		a.shardDown(id, s)
	})
	if err := s.Open(); err != nil {
		return nil, fmt.Errorf("shard %d: %w", id, err)
	}
	t := time.NewTimer(readyTimeout)
	defer t.Stop()
	select {
	case <-ready:
		return s, nil
	case <-ctx.Done():
		return s, nil
	case <-t.C:
		closeShards([]*discordgo.Session{s}, a.log, a.redact)
		return nil, fmt.Errorf("shard %d: no READY within %v", id, readyTimeout)
	}
}

// Reconnecting. A shard's session that drops is resumed on a new connection (discordgo's Open
// sends a RESUME for a session it knows), or, after an Invalid Session, replaced by a new one
// whose IDENTIFY waits for the gate; tries that fail wait longer each time.

// reconnectBackoffMax bounds the wait between tries to reconnect a shard.
const reconnectBackoffMax = time.Minute

func (a *Adapter) setRedo(id int, redo bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.redo[id] = redo
}

// shardDown tells the shard's keeper that its session s dropped.
func (a *Adapter) shardDown(id int, s *discordgo.Session) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed || id >= len(a.shards) || a.shards[id] != s {
		return // stopping, or a session that is no longer the shard's
	}
	if a.down == nil {
		a.down = map[int]chan struct{}{}
	}
	if a.down[id] == nil {
		a.down[id] = make(chan struct{}, 1)
	}
	select {
	case a.down[id] <- struct{}{}:
	default:
	}
}

func (a *Adapter) downChan(id int) chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.down == nil {
		a.down = map[int]chan struct{}{}
	}
	if a.down[id] == nil {
		a.down[id] = make(chan struct{}, 1)
	}
	return a.down[id]
}

// keepShard reconnects shard id of n whenever its session drops, until ctx ends.
func (a *Adapter) keepShard(ctx context.Context, id, n int) {
	down := a.downChan(id)
	for {
		select {
		case <-ctx.Done():
			return
		case <-down:
		}
		for try := 1; ; try++ {
			a.mu.Lock()
			closed, redo, s := a.closed, a.redo[id], a.shards[id]
			a.mu.Unlock()
			if closed || ctx.Err() != nil {
				return
			}
			var err error
			if redo {
				var ns *discordgo.Session
				if ns, err = a.openShard(ctx, id, n); err == nil {
					a.mu.Lock()
					if a.closed {
						a.mu.Unlock()
						closeShards([]*discordgo.Session{ns}, a.log, a.redact)
						return
					}
					a.shards[id] = ns
					a.mu.Unlock()
				}
			} else if err = s.Open(); errors.Is(err, discordgo.ErrWSAlreadyOpen) {
				err = nil
			}
			if err == nil {
				break
			}
			wait := min(a.identifyWindow/5<<min(try-1, 10), reconnectBackoffMax) // 1 s, 2 s, 4 s…
			a.log.Warn("reconnecting to the gateway", "shard", id, "try", try, "again_in", wait, "err", a.redact(err.Error()))
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
	}
}

// Several copies (Config.Cluster). Discord lets any number of sessions identify as one shard and
// routes the shard's events to each of them ("You can establish multiple sessions with the same
// [shard_id, num_shards]", developer docs, Gateway: Sharding), so two copies running one shard
// would both answer each interaction in it. Each shard is therefore held under a lease: a copy
// campaigns for every shard, opens the session of each it wins, and closes it when the lease is
// lost; a standby waiting in Hold takes a shard over when the holder dies (its lease's time to
// live, 5 s on etcd, and shardTakeoverGrace). Shards spread over the copies as the campaigns
// go; IDENTIFYs of all copies share each bucket's window (identifyGate.leases).

// ShardLease is the lease a copy holds while it runs shard id's gateway session.
func ShardLease(id int) string { return fmt.Sprintf("discord/shard/%d", id) }

// shardTakeoverGrace is how long a copy that won a shard's lease waits before it identifies: the
// copy that lost it (cut off from the store, still connected to Discord) learns so from its etcd
// client, which looks at its leases' deadlines once a second (go.etcd.io/etcd/client/v3,
// lessor.deadlineLoop) while the cluster revokes an expired lease within half a second; it then
// closes its session at once. Waiting this long keeps the two sessions from overlapping.
const shardTakeoverGrace = 2 * time.Second

// shardLeaseRetry is the wait before campaigning again after Hold failed.
const shardLeaseRetry = time.Second

// runShardsUnderLeases starts a keeper for each of the n shards that runs it while this copy
// holds its lease, until ctx ends.
func (a *Adapter) runShardsUnderLeases(ctx context.Context, n int) {
	a.mu.Lock()
	a.shards = make([]*discordgo.Session, n)
	a.mu.Unlock()
	a.gateway.clustered(n)
	for id := range n {
		a.keepers.Go(func() { a.holdShard(ctx, id, n) })
	}
}

// holdShard runs shard id of n whenever this copy holds its lease, until ctx ends. The lease is
// kept until the session is closed, so that the next holder starts after it.
func (a *Adapter) holdShard(ctx context.Context, id, n int) {
	chat.Lease{Leases: a.cfg.Cluster, Name: ShardLease(id), Retry: shardLeaseRetry, Log: a.log.With("shard", id),
		Waiting: "the shard's lease cannot be had now; trying again",
		Lost:    "this copy lost the shard's lease (the store was out of reach): its session is closed, another copy runs it; this one waits to take over",
	}.Run(ctx, func(run context.Context, _ func() bool) { a.runHeldShard(run, id, n) })
}

// runHeldShard opens shard id's session, keeps it and closes it when ctx (the lease) ends.
func (a *Adapter) runHeldShard(ctx context.Context, id, n int) {
	a.log.Info("this copy holds the shard's lease: opening its gateway session", "shard", id, "lease", ShardLease(id))
	a.gateway.hold(id, true)
	defer a.gateway.hold(id, false)
	if !sleep(ctx, shardTakeoverGrace) {
		return
	}
	// Discord counts the day's session starts per bot token, for every copy: what it says now
	// includes the other copies' starts, which this copy's own count since its start does not.
	if gw, err := a.rest.GatewayBot(); err == nil {
		a.gate.learn(gw.SessionStartLimit, n)
	}
	// The keeper opens the session (a new one), with its backoff, and keeps it.
	down := a.downChan(id)
	a.setRedo(id, true)
	select {
	case <-down: // a stale word from a session of an earlier hold
	default:
	}
	down <- struct{}{}
	a.keepShard(ctx, id, n)
	a.mu.Lock()
	var s *discordgo.Session
	if id < len(a.shards) {
		s, a.shards[id] = a.shards[id], nil
	}
	a.mu.Unlock()
	a.gateway.set(id, false)
	if s != nil {
		closeShards([]*discordgo.Session{s}, a.log, a.redact)
	}
}

// sleep waits d or until ctx ends; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// closeShards closes gateway sessions, all at once: discordgo's Close waits a second each.
func closeShards(shards []*discordgo.Session, log *slog.Logger, redact func(string) string) {
	var wg sync.WaitGroup
	for _, s := range shards {
		if s == nil {
			continue // a shard another copy runs (Config.Cluster)
		}
		wg.Go(func() {
			// Its reconnect loop, which could outlive the session, is off (openShard).
			if err := s.Close(); err != nil {
				log.Warn("closing the gateway", "shard", s.ShardID, "err", redact(err.Error()))
			}
		})
	}
	wg.Wait()
}

// interactionExtras are the fields of an INTERACTION_CREATE that discordgo v0.29.0 does not
// decode: the partial channel, which says whether it is a thread, a private one, and (in its
// thread_metadata: developer docs, Interactions, Resolved Data Structure) whether it is locked.
type interactionExtras struct {
	thread, private bool
	metadata        bool // the channel came with its thread_metadata
	locked          bool
}

// onEvent takes the interactions from the raw dispatch, whose JSON holds the fields discordgo
// leaves out. discordgo runs each event's handlers in their own goroutine.
func (a *Adapter) onEvent(_ *discordgo.Session, e *discordgo.Event) {
	if e.Type != "INTERACTION_CREATE" {
		return
	}
	ic, ok := e.Struct.(*discordgo.InteractionCreate)
	if !ok || ic.Interaction == nil {
		return
	}
	a.onInteraction(ic.Interaction, extrasOf(e.RawData), nil)
}

// gatewayState follows each shard's gateway connection for the health check: a shard is up from
// its READY or RESUMED until its connection drops (discordgo then reconnects by itself).
type gatewayState struct {
	mu    sync.Mutex
	up    map[int]bool
	n     int   // shards running; 0 before Run has them
	start error // why the last start failed
	// With several copies (Config.Cluster), this copy answers for the shards it holds only.
	cluster bool
	held    map[int]bool
}

// clustered records a start of n shards that run where their leases are held.
func (g *gatewayState) clustered(n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.n, g.start, g.cluster, g.held = n, nil, true, map[int]bool{}
}

// hold notes whether this copy holds the shard's lease.
func (g *gatewayState) hold(shard int, held bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if held {
		g.held[shard] = true
	} else {
		delete(g.held, shard)
	}
}

func (g *gatewayState) set(shard int, up bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.up == nil {
		g.up = map[int]bool{}
	}
	g.up[shard] = up
}

// running records the shards of a start that worked (n), or why a start failed.
func (g *gatewayState) running(n int, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.n, g.start = n, err
}

// Connected is nil while every shard is connected to Discord's gateway (with several copies:
// every shard this copy holds), else why not: the health check's view.
func (a *Adapter) Connected() error {
	g := &a.gateway
	g.mu.Lock()
	defer g.mu.Unlock()
	if a.cfg.Interactions.On() {
		// No gateway: the endpoint is connected once Discord has reached it.
		serving, err := a.endpointConnected()
		switch {
		case !serving && g.start != nil:
			return g.start
		case !serving:
			return chat.ErrNotYet
		}
		return err
	}
	switch {
	case g.n == 0 && g.start != nil:
		return g.start
	case g.n == 0:
		return chat.ErrNotYet
	}
	for id := range g.n {
		if g.cluster && !g.held[id] {
			continue // another copy runs it; /healthz names the leases this copy holds
		}
		if !g.up[id] {
			return fmt.Errorf("shard %d of %d is not connected to the gateway", id, g.n)
		}
	}
	return nil
}

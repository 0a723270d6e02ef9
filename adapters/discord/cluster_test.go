package discord

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/storage/etcdstore"
	"github.com/kontermatt/kontermatt/storage/etcdstore/etcdtest"
)

// Several copies of the bot on one etcd cluster (Config.Cluster): each shard's gateway session
// is open at one copy at a time, and a standby takes a shard over when its holder dies.

// clusterCopy is one copy of the bot on the cluster: its store client, leases and harness.
type clusterCopy struct {
	name   string
	wire   *etcdtest.Wire
	store  *etcdstore.Store
	leases *etcdstore.Leases
	h      *harness
	net    *cutTransport // its requests to Discord (startOwnedCopy)
}

// newClusterCopy connects a copy of the bot to the cluster, not started yet.
func newClusterCopy(t testing.TB, name string, c *etcdtest.Cluster) *clusterCopy {
	ctx := t.Context()
	t.Helper()
	w := c.Wire(t)
	st, err := etcdstore.Open(ctx, etcdstore.Options{Endpoints: w.Endpoints, Prefix: "bot/", Timeout: 5 * time.Second}) // a busy machine: etcd in process under -race
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() }) // after the harness stops
	return &clusterCopy{name: name, wire: w, store: st, leases: st.Leases(name, etcdstore.DefaultLeaseTTL)}
}

// start runs the copy; with wait it returns once every shard is connected (at whichever copy).
func (cp *clusterCopy) start(t testing.TB, f *fakeDiscord, wait bool) {
	t.Helper()
	cp.h = startHarness(t, f, cp.store, cp.store, harnessOpt{noWait: !wait, cfg: func(c *Config) {
		c.Cluster = cp.leases
		c.Log = c.Log.With("copy", cp.name)
	}})
}

// startClusterCopy starts a copy of the bot on the cluster; it returns once every shard is
// connected (at whichever copy).
func startClusterCopy(t *testing.T, name string, f *fakeDiscord, c *etcdtest.Cluster) *clusterCopy {
	t.Helper()
	cp := newClusterCopy(t, name, c)
	cp.start(t, f, true)
	return cp
}

func (c *clusterCopy) holds(shard int) bool {
	for _, l := range c.leases.Held() {
		if l == ShardLease(shard) {
			return true
		}
	}
	return false
}

// TestEachShardAtOneCopyAndAStandbyTakesOver: two copies of the bot on a 3-member etcd cluster,
// one bot token, two shards in one IDENTIFY bucket. Each shard has at most one session open at
// any moment (Discord would send its events to each), the copies' IDENTIFYs keep the bucket's
// window together, and when the copy holding the server's shard is cut off from the store, it
// closes its sessions and the other copy opens them within 15 s; a press after that is answered
// once, and the table's message is edited, not posted again.
func TestEachShardAtOneCopyAndAStandbyTakesOver(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{})
	f := newFakeDiscord(t)
	f.Shards, f.MaxConcurrency = 2, 1
	server := f.shardOf(guildChannel)
	a := startClusterCopy(t, "a", f, c)
	b := startClusterCopy(t, "b", f, c)
	holder, standby := a, b
	if b.holds(server) {
		holder, standby = b, a
	}
	if !holder.holds(server) {
		t.Fatalf("no copy holds shard %d: a %v, b %v", server, a.leases.Held(), b.leases.Held())
	}
	t.Logf("before: a holds %v, b holds %v", a.leases.Held(), b.leases.Held())
	// The health check speaks for the shards a copy holds: the standby, holding none, is fine.
	for _, cp := range []*clusterCopy{a, b} {
		err := cp.h.a.Connected()
		for deadline := time.Now().Add(5 * time.Second); err != nil && time.Now().Before(deadline); err = cp.h.a.Connected() {
			time.Sleep(20 * time.Millisecond) // the copy may still be asking for the gateway
		}
		if err != nil {
			t.Errorf("copy %s's health: %v", cp.name, err)
		}
	}

	if r := f.slash(alice, guildChannel, "new"); r.Type != 4 {
		t.Fatalf("/km new: %+v", r)
	}
	lobby, join := waitButton(f, "the lobby", api.VerbJoin)

	// What the holder posted is recorded before it goes (a copy that dies between a post and its
	// record leaves a claim the others wait out: the outbox's own tests).
	if err := holder.h.a.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	died := time.Now()
	holder.wire.Cut()
	holder.h.allowErrors = append(holder.h.allowErrors, "etcd", "store") // it is cut off: what it says of that is its own
	var took time.Time
	f.waitForOr("the standby to open the server's shard", func() bool {
		if s := f.shardSession[server]; s != nil && s.conn != nil && s.Began.After(died) {
			took = s.Began
			return true
		}
		return false
	}, func() string { return "" })
	tookOver := took.Sub(died)
	t.Logf("copy %s opened shard %d %v after copy %s was cut off (lease time to live %v)", standby.name, server,
		tookOver.Round(10*time.Millisecond), holder.name, etcdstore.DefaultLeaseTTL)
	if tookOver > 15*time.Second || tookOver < etcdstore.DefaultLeaseTTL/3 {
		t.Errorf("the shard was taken over %v after its holder died", tookOver)
	}
	if !standby.holds(server) {
		t.Errorf("copy %s runs shard %d without its lease: %v", standby.name, server, standby.leases.Held())
	}

	if r := f.press(bob, lobby, join.CustomID); r.Type != 6 {
		t.Fatalf("Bob joining after the take-over: %+v", r)
	}
	f.waitFor("the lobby showing Bob", func() bool {
		m, _, ok := lastWith(f.channelLocked(guildChannel), api.VerbJoin)
		return ok && strings.Contains(m.Content, "Bob")
	})
	time.Sleep(500 * time.Millisecond) // time for a second answer or post, if one were coming
	f.mu.Lock()
	defer f.mu.Unlock()
	if n := len(f.order[guildChannel]); n != 1 {
		t.Errorf("%d messages in the channel, want the one lobby", n)
	}
	for shard := range f.Shards {
		if n := f.mostOpen[shard]; n != 1 {
			t.Errorf("shard %d had %d sessions open at once at most, want 1", shard, n)
		}
	}
}

// TestShardsSpreadOverCopiesKeepTheWindow: two copies each win one of two shards of one IDENTIFY
// bucket at the same moment (the test held the leases, and gives them up together). Their
// IDENTIFYs are a window apart all the same (the fake refuses one within the window of the
// bucket's last, as Discord answers it with an Invalid Session), each shard has one session,
// and each copy answers the interactions of its own shard.
func TestShardsSpreadOverCopiesKeepTheWindow(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{})
	f := newFakeDiscord(t)
	f.Shards, f.MaxConcurrency = 2, 1
	a, b := newClusterCopy(t, "a", c), newClusterCopy(t, "b", c)
	// Each copy holds the shard the other is to run, so that each wins its own when they go.
	var releases []func()
	for _, h := range []struct {
		cp    *clusterCopy
		shard int
	}{{a, 1}, {b, 0}} {
		_, release, err := h.cp.leases.Hold(t.Context(), ShardLease(h.shard))
		if err != nil {
			t.Fatal(err)
		}
		releases = append(releases, release)
	}
	a.start(t, f, false)
	b.start(t, f, false)
	time.Sleep(500 * time.Millisecond) // both campaign for every shard
	for _, release := range releases {
		go release()
	}
	f.waitFor("both shards connected", f.connected)
	if !a.holds(0) || !b.holds(1) || a.holds(1) || b.holds(0) {
		t.Errorf("a holds %v, b holds %v; want shard 0 at a, shard 1 at b", a.leases.Held(), b.leases.Held())
	}
	f.mu.Lock()
	at := slices.Clone(f.identifiedAtList)
	f.mu.Unlock()
	if len(at) != 2 {
		t.Fatalf("%d IDENTIFYs for two shards", len(at))
	}
	t.Logf("the IDENTIFYs came %v apart (window %v)", at[1].Sub(at[0]).Round(time.Millisecond), f.IdentifyWindow)
	// The server's shard is b's: /km help there is answered once (the fake fails a second
	// answer), by b.
	if r := f.slash(alice, guildChannel, "help"); r.Type != 4 {
		t.Errorf("/km help: %+v", r)
	}
	waitLog := func(cp *clusterCopy) bool { return strings.Contains(cp.h.logs.String(), "msg=interaction ") }
	deadline := time.Now().Add(5 * time.Second)
	for !waitLog(b) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if waitLog(a) || !waitLog(b) {
		t.Errorf("the guild's interaction was handled at a %v, at b %v; want b only", waitLog(a), waitLog(b))
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for shard := range f.Shards {
		if n := f.mostOpen[shard]; n != 1 {
			t.Errorf("shard %d had %d sessions open at once at most, want 1", shard, n)
		}
	}
}

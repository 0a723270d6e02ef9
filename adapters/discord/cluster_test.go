package discord

import (
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/storage/etcdstore"
	"github.com/kontermatt/kontermatt/storage/etcdstore/etcdtest"
)

// Several copies of the bot on one etcd cluster (Config.Cluster): each shard's gateway session
// is open at one copy at a time, and a standby takes a shard over when its holder dies.

// storeWire is a copy's connection to the etcd members: a TCP proxy per member, which cut drops
// at once, as a network that fails between the copy and the cluster does (nothing said on the
// connections first: the copy's leases run out rather than being given up).
type storeWire struct {
	mu    sync.Mutex
	lns   []net.Listener
	conns []net.Conn
	cut   bool
}

// endpoints gives a proxy's address for each of the members'.
func (w *storeWire) endpoints(t *testing.T, members []string) []string {
	var out []string
	for _, m := range members {
		target := strings.TrimPrefix(m, "http://")
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		w.lns = append(w.lns, ln)
		out = append(out, "http://"+ln.Addr().String())
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				up, err := net.Dial("tcp", target)
				if err != nil {
					c.Close()
					continue
				}
				w.mu.Lock()
				if w.cut {
					w.mu.Unlock()
					c.Close()
					up.Close()
					return
				}
				w.conns = append(w.conns, c, up)
				w.mu.Unlock()
				go func() { _, _ = io.Copy(up, c); up.Close() }()
				go func() { _, _ = io.Copy(c, up); c.Close() }()
			}
		}()
	}
	t.Cleanup(w.drop)
	return out
}

// drop resets every connection and takes no new ones.
func (w *storeWire) drop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.cut = true
	for _, ln := range w.lns {
		ln.Close()
	}
	for _, c := range w.conns {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
		c.Close()
	}
}

// clusterCopy is one copy of the bot on the cluster: its store client, leases and harness.
type clusterCopy struct {
	name   string
	wire   *storeWire
	leases *etcdstore.Leases
	h      *harness
}

// startClusterCopy starts a copy of the bot on the cluster; it returns once every shard is
// connected (at whichever copy).
func startClusterCopy(t *testing.T, name string, f *fakeDiscord, c *etcdtest.Cluster) *clusterCopy {
	t.Helper()
	w := &storeWire{}
	st, err := etcdstore.Open(etcdstore.Options{Endpoints: w.endpoints(t, c.Endpoints()), Prefix: "bot/", Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() }) // after the harness stops
	leases := st.Leases(name, etcdstore.DefaultLeaseTTL)
	h := startHarness(t, f, st, st, harnessOpt{cfg: func(c *Config) {
		c.Cluster = leases
		c.Log = c.Log.With("copy", name)
	}})
	return &clusterCopy{name: name, wire: w, leases: leases, h: h}
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

	if r := f.slash(alice, guildChannel, "new"); r.Type != 4 {
		t.Fatalf("/km new: %+v", r)
	}
	lobby, join := waitButton(f, "the lobby", table.VerbJoin)

	died := time.Now()
	holder.wire.drop()
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
		m, _, ok := lastWith(f.channelLocked(guildChannel), table.VerbJoin)
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

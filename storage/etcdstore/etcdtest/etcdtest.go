// Package etcdtest starts etcd clusters inside the test process (go.etcd.io/etcd/server/v3/embed):
// members on loopback ports, quiet, that a test may stop and start again, for the tests of the
// etcd store and of the bot on it.
package etcdtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"google.golang.org/grpc/grpclog"
)

// Options tune Start. The zero value is three members that skip fsync (fast, for tests).
type Options struct {
	Members int // 0: 3
	// Durable makes the members fsync as a real cluster does: for benchmarks of durable writes.
	Durable bool
	// QuotaBytes is each member's --quota-backend-bytes (0: etcd's default, 2 GiB): a small one
	// shows what a full cluster does (the NOSPACE alarm) within seconds.
	QuotaBytes int64
}

// Cluster is a running in-process etcd cluster.
type Cluster struct {
	tb      testing.TB
	opts    Options
	initial string // the initial cluster: name=peer URL, ...
	// ready bounds the wait for a starting member to serve; 0: 30 s (a member under -race on a
	// busy machine may need many seconds). Only this package's tests shorten it.
	ready   time.Duration
	Members []*Member
}

// Member is one etcd member of a Cluster.
type Member struct {
	Name      string
	Dir       string // its data directory: member/snap/db is its bbolt file, member/wal its log
	ClientURL string
	peerURL   string
	mu        sync.Mutex
	e         *embed.Etcd // nil while stopped
}

var quietGRPC sync.Once

// QuietGRPC silences gRPC's own log for the test binary, once. It must come before the binary's
// first gRPC connection: the logger is a global that gRPC's goroutines read without a lock, so
// setting it later is a data race. Start calls it; a test that dials members without a Cluster
// calls it first.
func QuietGRPC() {
	quietGRPC.Do(func() { grpclog.SetLoggerV2(grpclog.NewLoggerV2(io.Discard, io.Discard, io.Discard)) })
}

// Start starts a cluster and waits until it has a leader; it is stopped when the test ends.
func Start(tb testing.TB, opts Options) *Cluster {
	tb.Helper()
	QuietGRPC()
	if opts.Members == 0 {
		opts.Members = 3
	}
	c := &Cluster{tb: tb, opts: opts}
	root := tb.TempDir()
	var initial []string
	for i := range opts.Members {
		m := &Member{Name: fmt.Sprintf("m%d", i), Dir: filepath.Join(root, fmt.Sprintf("m%d", i)),
			ClientURL: "http://" + freeAddr(tb), peerURL: "http://" + freeAddr(tb)}
		c.Members = append(c.Members, m)
		initial = append(initial, m.Name+"="+m.peerURL)
	}
	c.initial = strings.Join(initial, ",")
	tb.Cleanup(c.Close)
	if err := c.startAll(c.Members); err != nil {
		tb.Fatalf("etcdtest: %v", err)
	}
	return c
}

// startAll starts members at once (a restarted cluster needs them together for a quorum) and
// returns when every start has ended, failed ones included. Failing the test on the first error
// instead would end the test while the others still start: its cleanup then removes their
// directories under them, and a member that opens its database in a removed directory panics,
// which ends the whole test binary and hides the first error.
func (c *Cluster) startAll(members []*Member) error {
	errs := make(chan error, len(members))
	for _, m := range members {
		go func() { errs <- c.start(m) }()
	}
	var all []error
	for range members {
		all = append(all, <-errs)
	}
	return errors.Join(all...)
}

func (c *Cluster) readyWithin() time.Duration {
	if c.ready == 0 {
		return 30 * time.Second
	}
	return c.ready
}

// freeAddr finds a loopback port nobody listens on.
func freeAddr(tb testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("etcdtest: %v", err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func mustURL(s string) url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return *u
}

// start starts m (again) and waits until it serves.
// memberLogger is the members' logger: quiet but for what ends a member. A member that meets
// what it cannot go on from logs at Fatal level, and zap then exits the process, even from a
// logger that writes nothing (zap.NewNop): a test binary ended so says only "exit status 1".
// Here such a line is written to stderr and the member panics instead, so the test's output
// names it.
var memberLogger = zap.New(zapcore.NewCore(zapcore.NewConsoleEncoder(zap.NewDevelopmentEncoderConfig()),
	zapcore.Lock(os.Stderr), zapcore.DPanicLevel), zap.WithFatalHook(zapcore.WriteThenPanic))

func (c *Cluster) start(m *Member) error {
	cfg := embed.NewConfig()
	cfg.Name, cfg.Dir = m.Name, m.Dir
	cfg.ListenPeerUrls = []url.URL{mustURL(m.peerURL)}
	cfg.AdvertisePeerUrls = cfg.ListenPeerUrls
	cfg.ListenClientUrls = []url.URL{mustURL(m.ClientURL)}
	cfg.AdvertiseClientUrls = cfg.ListenClientUrls
	cfg.InitialCluster = c.initial
	cfg.InitialClusterToken = "kontermatt-test"
	if _, err := os.Stat(filepath.Join(m.Dir, "member")); err == nil {
		cfg.ClusterState = embed.ClusterStateFlagExisting
	}
	// Quick elections, so a test that stops members waits little for the survivors to decide.
	cfg.TickMs, cfg.ElectionMs = 50, 500
	cfg.UnsafeNoFsync = !c.opts.Durable
	cfg.QuotaBackendBytes = c.opts.QuotaBytes
	cfg.Logger = "zap"
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(memberLogger)
	cfg.Metrics = "basic"
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return fmt.Errorf("member %s: %w", m.Name, err)
	}
	// A member that is not ready is stopped hard before it is closed: embed's Close waits for the
	// client servers, which start only once the member is ready or stopping, so Close alone would
	// wait forever.
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Server.HardStop()
		e.Close()
		return fmt.Errorf("member %s: %w", m.Name, err)
	case <-time.After(c.readyWithin()):
		e.Server.HardStop()
		e.Close()
		return fmt.Errorf("member %s did not become ready in %v", m.Name, c.readyWithin())
	}
	m.mu.Lock()
	m.e = e
	m.mu.Unlock()
	return nil
}

// Endpoints are the members' client URLs, stopped ones included.
func (c *Cluster) Endpoints() []string {
	var out []string
	for _, m := range c.Members {
		out = append(out, m.ClientURL)
	}
	return out
}

// Stop stops member i at once, as a crash would from the others' view (its files stay).
func (c *Cluster) Stop(i int) {
	m := c.Members[i]
	m.mu.Lock()
	e := m.e
	m.e = nil
	m.mu.Unlock()
	if e != nil {
		e.Server.HardStop()
		e.Close()
	}
}

// Restart starts the stopped member i again on its files. With a quorum of members running it
// waits until it serves; starting the member that restores a quorum returns once it does.
func (c *Cluster) Restart(i int) {
	c.tb.Helper()
	if err := c.start(c.Members[i]); err != nil {
		c.tb.Fatalf("etcdtest: %v", err)
	}
}

// RestartAll starts every stopped member at once (they may need each other for a quorum).
func (c *Cluster) RestartAll() {
	c.tb.Helper()
	var stopped []*Member
	for _, m := range c.Members {
		m.mu.Lock()
		if m.e == nil {
			stopped = append(stopped, m)
		}
		m.mu.Unlock()
	}
	if err := c.startAll(stopped); err != nil {
		c.tb.Fatalf("etcdtest: %v", err)
	}
}

// Close stops every member.
func (c *Cluster) Close() {
	for i := range c.Members {
		c.Stop(i)
	}
}

// EnableAuth turns etcd's authentication on as docs/cluster.md tells a host to: a root user, and
// a user with a role that may read and write the keys under prefix alone (no root role: it may
// not compact, defragment or take snapshots). Clients then need a user.
func (c *Cluster) EnableAuth(user, password, prefix string) {
	c.tb.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		c.tb.Fatalf("etcdtest: %v", err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	steps := []func() error{
		func() error { _, err := cli.UserAdd(ctx, "root", "root-"+password); return err },
		func() error { _, err := cli.UserGrantRole(ctx, "root", "root"); return err },
		func() error { _, err := cli.RoleAdd(ctx, user); return err },
		func() error {
			_, err := cli.RoleGrantPermission(ctx, user, prefix, clientv3.GetPrefixRangeEnd(prefix), clientv3.PermissionType(clientv3.PermReadWrite))
			return err
		},
		func() error { _, err := cli.UserAdd(ctx, user, password); return err },
		func() error { _, err := cli.UserGrantRole(ctx, user, user); return err },
		func() error { _, err := cli.AuthEnable(ctx); return err },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			c.tb.Fatalf("etcdtest: enable auth: %v", err)
		}
	}
}

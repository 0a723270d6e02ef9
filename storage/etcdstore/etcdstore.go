// Package etcdstore keeps the table service's data in an etcd cluster (go.etcd.io/etcd/client/v3):
// the same data as the bbolt store, for a bot whose copies share one database. It implements
// store.Store, store.KV, store.Swapper and store.Watcher.
//
// Every Commit is one etcd transaction guarded by the table's Seq (store.ErrConflict): its If
// compares the table's sequence key with the Seq the change was made from, as Kubernetes' storage
// compares a resource version, so of two copies writing the same table from the same state exactly
// one wins and the other writes nothing. Every call has a timeout and asks for a member with a
// leader: a cluster without quorum answers store.ErrUnavailable within it, never a hang.
//
// Keys, under a prefix of the host's (several bots share a cluster), "\x00" separating a name from
// what follows it:
//
//	schema                      the layout version ("1")
//	tables/live/<id>            a live table's state
//	tables/closed/<id>          a closed table: big-endian uint64 unix ms it closed, then its state
//	tables/seq/<id>             the Seq of the table's last logged change (decimal): the guard
//	closed_at/<%016x ms>/<id>   the closed tables in time order (Prune)
//	logs/<id>\x00<%016x seq>    a log entry (JSON store.LogEntry)
//	records/<key>               a kept match
//	kv/<bucket>\x00<key>        a KV entry
//
// etcd bounds a transaction (--max-txn-ops, 128 operations by default; --max-request-bytes, 1.5
// MiB): a Commit must fit in one (it always has, by far: a state and a few records), or it fails
// with ErrTooLarge and writes nothing. Prune, Rewrite, Forget and Load are split into transactions
// that fit: each of those is atomic, and each of them leaves the data consistent (a table is
// pruned whole, in one transaction, after its KV entries; a KV entry changes from its old value
// to its new one, never through a moment of absence), so a call cut short is completed by calling
// it again. What forget leaves on etcd's disks is said at Forget.
package etcdstore

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/kontermatt/kontermatt/core/store"
	"github.com/kontermatt/kontermatt/storage"
)

// The Store satisfies the service's interfaces and moves data with the bbolt store.
var (
	_ store.Store    = (*Store)(nil)
	_ store.KV       = (*Store)(nil)
	_ store.Swapper  = (*Store)(nil)
	_ store.Watcher  = (*Store)(nil)
	_ storage.Dumper = (*Store)(nil)
	_ storage.Loader = (*Store)(nil)
)

// ErrTooLarge is a Commit larger than one etcd transaction may be (more operations than
// --max-txn-ops, or more bytes than --max-request-bytes): nothing of it is written.
var ErrTooLarge = errors.New("the change is larger than one etcd transaction may be")

// Defaults of the Options.
const (
	DefaultPrefix          = "kontermatt/"
	DefaultTimeout         = 5 * time.Second
	DefaultElection        = time.Second       // etcd's default --election-timeout
	DefaultMaxTxnOps       = 128               // etcd's --max-txn-ops
	DefaultMaxRequestBytes = 3 * (1 << 20) / 2 // etcd's --max-request-bytes, 1.5 MiB
	schemaVersion          = "1"
)

// Options tell Open where the cluster is and how to talk to it.
type Options struct {
	Endpoints []string // client URLs of the members
	// Prefix is put before every key, so several bots share one cluster; default DefaultPrefix.
	Prefix string
	TLS    *tls.Config // nil: plain connections
	// Username and Password, when set, authenticate with etcd's own users (etcdctl user add).
	Username, Password string
	// Timeout bounds every call to the cluster; default DefaultTimeout. Defragmenting after a
	// Forget gets ten times as long per member.
	Timeout time.Duration
	// Election is the cluster's --election-timeout; default DefaultElection (etcd's). A call that
	// runs longer than half of it asks the members whether one knows a leader, and fails with
	// store.ErrUnavailable once those that answer have known none for half of it (see call).
	Election time.Duration
	// MaxTxnOps and MaxRequestBytes are the cluster's limits (--max-txn-ops,
	// --max-request-bytes); defaults etcd's.
	MaxTxnOps, MaxRequestBytes int
	// Page is how many keys one read of a listing fetches; default 256.
	Page int64
	// History is the window of history the cluster keeps (TrimHistory, or etcd's own
	// --auto-compaction-retention); default DefaultHistory. Forget says by when older versions
	// are gone when it may not compact them itself.
	History time.Duration
	// Log says what the store skips: a malformed key under the prefix (hand-written, or from a
	// bug) is passed over with one line rather than failing every forget and pruning. Default:
	// slog.Default().
	Log *slog.Logger
}

// Store is the etcd-backed store. It is safe for concurrent use, by many processes at once.
type Store struct {
	cli      *clientv3.Client
	p        string
	timeout  time.Duration
	election time.Duration
	maxOps   int
	maxBytes int
	page     int64
	history  time.Duration
	log      *slog.Logger
	// conf is how cli was made: Compact dials each member alone with it.
	conf clientv3.Config
	// outUntil is when (Unix nanoseconds) the cluster, found out of reach by a call that waited
	// its whole timeout, is next given a whole timeout again; until then each call has a short
	// one (see call). 0: reachable.
	outUntil atomic.Int64
	// noLeaderAt is when (Unix nanoseconds) leaderless last found that no member knows a leader:
	// for outTimeout after it, calls fail at once without asking again (a command makes several).
	noLeaderAt atomic.Int64
	// probe is the members' last answer to "do you know a leader?" (at: when it was asked),
	// shared by every call that asks (probeLeader): many slow calls at once ask the members
	// once, not once each.
	probe struct {
		sync.Mutex
		at           time.Time
		leader, sure bool
		err          error
		running      chan struct{} // closed when the probe under way has answered
	}
}

// Open connects to the cluster and checks (or, on an empty prefix, writes) the layout version. A
// cluster that cannot be reached fails with store.ErrUnavailable after opts.Timeout; a layout
// newer than this binary's with storage.ErrNewerSchema; one whose ctx ends first, with ctx's error.
func Open(ctx context.Context, opts Options) (*Store, error) {
	if len(opts.Endpoints) == 0 {
		return nil, errors.New("etcdstore: no endpoints")
	}
	s := &Store{p: opts.Prefix, timeout: opts.Timeout, election: opts.Election, maxOps: opts.MaxTxnOps, maxBytes: opts.MaxRequestBytes, page: opts.Page, history: opts.History, log: opts.Log}
	if s.p == "" {
		s.p = DefaultPrefix
	}
	if s.timeout <= 0 {
		s.timeout = DefaultTimeout
	}
	if s.election <= 0 {
		s.election = DefaultElection
	}
	if s.maxOps <= 0 {
		s.maxOps = DefaultMaxTxnOps
	}
	if s.maxBytes <= 0 {
		s.maxBytes = DefaultMaxRequestBytes
	}
	if s.page <= 0 {
		s.page = 256
	}
	if s.history <= 0 {
		s.history = DefaultHistory
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	s.conf = clientv3.Config{
		Endpoints: opts.Endpoints, TLS: opts.TLS, Username: opts.Username, Password: opts.Password,
		DialTimeout: s.timeout, DialKeepAliveTime: 10 * time.Second, DialKeepAliveTimeout: s.timeout,
		// Room for a request as large as the cluster takes, and for a page of large states.
		MaxCallSendMsgSize: s.maxBytes + 64<<10, MaxCallRecvMsgSize: 256 << 20,
		Logger: zap.NewNop(),
	}
	cli, err := clientv3.New(s.conf)
	if err != nil {
		return nil, fmt.Errorf("etcdstore: connect to %s: %w", strings.Join(opts.Endpoints, ","), s.classify(err))
	}
	s.cli = cli
	if err := s.checkSchema(ctx); err != nil {
		cli.Close()
		return nil, fmt.Errorf("etcdstore: open %s (prefix %q): %w", strings.Join(opts.Endpoints, ","), s.p, err)
	}
	return s, nil
}

// checkSchema writes the layout version under an empty prefix, and refuses a newer one.
func (s *Store) checkSchema(ctx context.Context) error {
	key := s.p + "schema"
	resp, _, err := s.txn(ctx, []clientv3.Cmp{clientv3.Compare(clientv3.CreateRevision(key), "=", 0)},
		[]clientv3.Op{clientv3.OpPut(key, schemaVersion)}, []clientv3.Op{clientv3.OpGet(key)})
	if err != nil || resp.Succeeded {
		return err
	}
	kvs := resp.Responses[0].GetResponseRange().Kvs
	have, _ := strconv.Atoi(string(kvs[0].Value))
	if want, _ := strconv.Atoi(schemaVersion); have > want {
		return fmt.Errorf("%w: the cluster has layout %d, this binary knows up to %d", storage.ErrNewerSchema, have, want)
	}
	return nil
}

// Close closes the connection; watches end.
func (s *Store) Close() error { return s.cli.Close() }

// Prefix is the prefix of the Store's keys.
func (s *Store) Prefix() string { return s.p }

// Client is the connection, for what the bot builds on it (sessions, elections).
func (s *Store) Client() *clientv3.Client { return s.cli }

// The keys.
func (s *Store) liveKey(id string) string   { return s.p + "tables/live/" + id }
func (s *Store) closedKey(id string) string { return s.p + "tables/closed/" + id }
func (s *Store) seqKey(id string) string    { return s.p + "tables/seq/" + id }
func (s *Store) logPrefix(id string) string { return s.p + "logs/" + id + "\x00" }
func (s *Store) logKey(id string, seq uint64) string {
	return s.logPrefix(id) + fmt.Sprintf("%016x", seq)
}
func (s *Store) closedAtKey(at int64, id string) string {
	return s.p + "closed_at/" + fmt.Sprintf("%016x", uint64(at)) + "/" + id
}
func (s *Store) recordKey(key string) string       { return s.p + "records/" + key }
func (s *Store) bucketPrefix(bucket string) string { return s.p + "kv/" + bucket + "\x00" }
func (s *Store) kvKey(bucket, key string) string   { return s.bucketPrefix(bucket) + key }

// call runs fn until it succeeds, fails for a reason other than the cluster being out of reach
// (a member that died under the request, an election under way, no quorum), or the timeout has
// passed: then it fails with store.ErrUnavailable. Each attempt gets a third of the timeout, so a
// member that stopped answering costs one attempt, not the call. again tells fn that an earlier
// attempt's outcome is unknown: a write may have been applied. When ctx ends first, the call
// ends at once with an error that wraps ctx's (and a write under way may still be applied).
//
// A command makes several calls one after another (a person's settings, the commit, the answer's
// language): with the cluster out of reach each would wait the whole timeout, and their sum
// would pass the platforms' limits for an answer (Telegram's 15 s for a button; issue 32
// measured 20 s with 5 s each). So a call that waited its whole timeout in vain marks the cluster
// out for one more timeout; meanwhile each call first asks the members, within a short time
// (outTimeout), whether one has a leader, and fails at once when none does: a refusal then
// comes in about one timeout. A cluster that is slow but has a leader keeps the whole timeout.
// The first call that succeeds clears the mark.
//
// The first call after the quorum is lost need not wait its whole timeout either: a healthy
// cluster is without a leader only while it elects one, within about one election timeout, so a
// call that runs longer than half of one has its members asked (watchLeader) and fails once no
// member has known a leader for half an election timeout. Discord waits 3 s for an interaction's
// answer (issue 32): a whole timeout of 5 s for the first call after a quorum loss was past it.
func (s *Store) call(ctx context.Context, fn func(ctx context.Context, again bool) error) (err error) {
	caller := ctx
	if time.Now().UnixNano() < s.outUntil.Load() {
		if err := s.leaderless(ctx); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	ctx, lose := context.WithCancelCause(ctx)
	defer lose(nil)
	watch := time.AfterFunc(s.election/2, func() { s.watchLeader(ctx, lose) })
	defer watch.Stop()
	defer func() {
		switch {
		case err == nil:
			s.outUntil.Store(0)
			s.noLeaderAt.Store(0)
		case errors.Is(err, store.ErrUnavailable) && caller.Err() == nil:
			s.outUntil.Store(time.Now().Add(s.timeout).UnixNano())
		}
	}()
	// lost is watchLeader's verdict, once it ended the call.
	lost := func() error {
		if cause := context.Cause(ctx); ctx.Err() != nil && errors.Is(cause, store.ErrUnavailable) {
			return cause
		}
		return nil
	}
	wait := 25 * time.Millisecond
	for again := false; ; again = true {
		attempt, cancelAttempt := context.WithTimeout(ctx, max(s.timeout/3, 500*time.Millisecond))
		err := s.classify(fn(clientv3.WithRequireLeader(attempt), again))
		cancelAttempt()
		if err != nil && caller.Err() != nil {
			return fmt.Errorf("%w: %w", caller.Err(), err) // the caller gave up, not the cluster
		}
		if err != nil && lost() != nil {
			return lost()
		}
		if !errors.Is(err, store.ErrUnavailable) || ctx.Err() != nil {
			return err
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			if caller.Err() != nil {
				return fmt.Errorf("%w: %w", caller.Err(), err)
			}
			if lost() != nil {
				return lost()
			}
			return err
		}
		wait = min(2*wait, 400*time.Millisecond)
	}
}

// watchLeader runs beside a call that has not ended after half an election timeout: it asks the
// members for a leader every half election timeout, and ends the call (lose, with
// store.ErrUnavailable) once two answers in a row, at least half an election timeout apart, say
// that none knows one: the cluster is then not merely electing (which takes about one election
// timeout) but without a quorum. A request in flight when the members lost their leader is not
// answered "no leader": it waits its attempt's time (a read's ReadIndex, a proposal), so the call
// itself cannot tell. A member alive but too slow to answer (a loaded machine) makes the answer
// unsure (askLeader): then the call keeps its whole timeout.
func (s *Store) watchLeader(ctx context.Context, lose context.CancelCauseFunc) {
	none := 0
	for ctx.Err() == nil {
		next := time.Now().Add(s.election / 2)
		leader, sure, err := s.probeLeader(ctx, s.election/4)
		switch {
		case ctx.Err() != nil:
			return
		case leader || !sure:
			none = 0
		default:
			if none++; none >= 2 {
				s.noLeaderAt.Store(time.Now().UnixNano()) // the command's next calls need not ask again
				lose(fmt.Errorf("%w (no member has known a leader for %v, longer than an election takes): %w",
					store.ErrUnavailable, s.election/2, err))
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(next)):
		}
	}
}

// outTimeout is how long a call asks the members for a leader while the cluster is marked out
// of reach: long enough for a member to answer, short beside the whole timeout.
func (s *Store) outTimeout() time.Duration { return max(s.timeout/10, 250*time.Millisecond) }

// leaderless asks the members, within outTimeout, whether one knows a leader, for a call while the
// cluster is marked out of reach: nil as soon as one does, or when a member alive but slow leaves
// it unsure; else store.ErrUnavailable (or ctx's error when the caller gave up). Once the members
// were sure that none knows a leader, it says so again for outTimeout without asking (a command
// makes several calls).
func (s *Store) leaderless(ctx context.Context) error {
	if at := s.noLeaderAt.Load(); at != 0 && time.Since(time.Unix(0, at)) < s.outTimeout() {
		return fmt.Errorf("%w (no member knew a leader %v ago)", store.ErrUnavailable, time.Since(time.Unix(0, at)).Round(time.Millisecond))
	}
	leader, sure, err := s.probeLeader(ctx, s.outTimeout())
	if leader {
		s.noLeaderAt.Store(0)
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if !sure {
		// A member is alive but did not answer in time (a loaded machine): that says nothing of
		// a leader, so the call is made with its whole timeout rather than refused (issue 30: on
		// a busy machine healthy calls were refused as "unreachable" for a timeout after one
		// slow call).
		return nil
	}
	s.noLeaderAt.Store(time.Now().UnixNano())
	return fmt.Errorf("%w (no member knew a leader within %v): %w", store.ErrUnavailable, s.outTimeout(), err)
}

// probeLeader is askLeader shared: the answer of a probe begun less than within ago is given
// again, and a call that comes while a probe is under way waits for its answer (or its ctx).
func (s *Store) probeLeader(ctx context.Context, within time.Duration) (leader, sure bool, err error) {
	p := &s.probe
	p.Lock()
	if time.Since(p.at) < within {
		defer p.Unlock()
		return p.leader, p.sure, p.err
	}
	if ch := p.running; ch != nil {
		p.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return false, false, ctx.Err()
		}
		p.Lock()
		defer p.Unlock()
		return p.leader, p.sure, p.err
	}
	ch := make(chan struct{})
	p.running = ch
	p.Unlock()
	// The probe answers every call waiting for it: it does not end with the ctx of the one
	// that started it.
	asked := time.Now()
	leader, sure, err = s.askLeader(context.WithoutCancel(ctx), within)
	p.Lock()
	p.at, p.leader, p.sure, p.err, p.running = asked, leader, sure, err, nil
	p.Unlock()
	close(ch)
	return leader, sure, err
}

// askLeader asks the members at once, within within, whether one knows a leader: leader as soon
// as one does. Else sure says whether the members' silence means the cluster is out of reach:
// each member either answered that it knows no leader or cannot be reached (it refuses a
// connection, or none is made within the time: stopped, or on the far side of a partition). A
// member that takes a connection but does not answer in time is alive and slow (a loaded
// machine): that says nothing of a leader, and sure is false. A stopped member's Status does not
// fail at once (the client waits for it to come back until ctx ends), so reachability is asked
// of the network beside it. err is the last answer. The members are asked beside each other.
func (s *Store) askLeader(ctx context.Context, within time.Duration) (leader, sure bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	eps := s.cli.Endpoints()
	type answer struct {
		err       error
		reachable bool
	}
	answers := make(chan answer, len(eps))
	noLeader := errors.New("the member knows no leader")
	for _, ep := range eps {
		go func() {
			reached := make(chan bool, 1)
			go func() { reached <- accepts(ctx, ep) }()
			resp, err := s.cli.Status(ctx, ep)
			if err == nil && resp.Leader == 0 {
				err = noLeader
			}
			a := answer{err: err}
			if err != nil && !errors.Is(err, noLeader) {
				a.reachable = <-reached
			}
			answers <- a
		}()
	}
	sure = true
	for range eps {
		a := <-answers
		switch err = a.err; {
		case err == nil:
			return true, true, nil
		case errors.Is(err, noLeader):
		case a.reachable:
			sure = false // alive, too slow to say
		}
	}
	return false, sure, err
}

// accepts says whether the member at endpoint ep takes a TCP connection within ctx. An endpoint
// that does not name a host and port (a unix socket) counts as reachable: its silence is then
// never taken for the cluster's being out of reach.
func accepts(ctx context.Context, ep string) bool {
	host := ep
	if u, err := url.Parse(ep); err == nil && u.Host != "" {
		if u.Scheme == "unix" || u.Scheme == "unixs" {
			return true
		}
		host = u.Host
	}
	if _, _, err := net.SplitHostPort(host); err != nil {
		return true
	}
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", host)
	if err != nil {
		return false
	}
	conn.Close()
	return true
}

// txn runs one transaction (see call); again says an earlier attempt's outcome was unknown.
func (s *Store) txn(ctx context.Context, cmps []clientv3.Cmp, then, els []clientv3.Op) (resp *clientv3.TxnResponse, again bool, err error) {
	err = s.call(ctx, func(ctx context.Context, retry bool) error {
		var err error
		resp, err = s.cli.Txn(ctx).If(cmps...).Then(then...).Else(els...).Commit()
		again = retry
		return err
	})
	return resp, again, err
}

// get reads (see call).
func (s *Store) get(ctx context.Context, key string, opts ...clientv3.OpOption) (resp *clientv3.GetResponse, err error) {
	err = s.call(ctx, func(ctx context.Context, _ bool) error {
		var err error
		resp, err = s.cli.Get(ctx, key, opts...)
		return err
	})
	return resp, err
}

// classify gives the table's sentinel for what the cluster's answer means: no quorum, no member
// reached in time (store.ErrUnavailable), history compacted (store.ErrCompacted), or a transaction
// over the cluster's limits (ErrTooLarge). The cause stays wrapped.
func (s *Store) classify(err error) error {
	if err == nil {
		return nil
	}
	code := status.Code(err)
	var ee rpctypes.EtcdError
	if errors.As(err, &ee) {
		code = ee.Code()
	}
	switch {
	case errors.Is(err, store.ErrUnavailable):
		return err
	case errors.Is(err, context.DeadlineExceeded), code == codes.Unavailable, code == codes.DeadlineExceeded,
		// A member stopping under the request answers with raft's own error, which gRPC carries
		// as Unknown with its text alone.
		code == codes.Unknown && strings.Contains(status.Convert(err).Message(), "raft: stopped"):
		return fmt.Errorf("%w (no answer with a quorum within %v): %w", store.ErrUnavailable, s.timeout, err)
	case errors.Is(err, rpctypes.ErrCompacted), code == codes.OutOfRange:
		return fmt.Errorf("%w: %w", store.ErrCompacted, err)
	case errors.Is(err, rpctypes.ErrTooManyOps), errors.Is(err, rpctypes.ErrRequestTooLarge):
		return fmt.Errorf("%w: %w", ErrTooLarge, err)
	}
	return err
}

// scan calls fn for every key under prefix (or from key to end when end is not ""), a page at a
// time, every page read at the revision of the first: what fn sees is one moment's. fn runs
// between the reads, outside any call's timeout. It gives the revision read.
func (s *Store) scan(ctx context.Context, from, end string, keysOnly bool, fn func(kv *mvccpb.KeyValue) error) (int64, error) {
	var rev int64
	for {
		opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(s.page)}
		if keysOnly {
			opts = append(opts, clientv3.WithKeysOnly())
		}
		if rev > 0 {
			opts = append(opts, clientv3.WithRev(rev))
		}
		resp, err := s.get(ctx, from, opts...)
		if err != nil {
			return rev, err
		}
		if rev == 0 {
			rev = resp.Header.Revision
		}
		for _, kv := range resp.Kvs {
			if err := fn(kv); err != nil {
				return rev, err
			}
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return rev, nil
		}
		from = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}

// SetLog sets Options.Log after Open, before the store is used.
func (s *Store) SetLog(log *slog.Logger) { s.log = log }

// callIn is call with its arguments in the order history.go had them before ports took ctx.
func (s *Store) callIn(ctx context.Context, fn func(ctx context.Context, again bool) error) error {
	return s.call(ctx, fn)
}

// skipMalformed logs a key under the prefix that does not have the layout's form, which the
// caller then passes over: one such key must not stop every forget and pruning.
func (s *Store) skipMalformed(key []byte, what string) {
	s.log.Error("etcd store: skipping a malformed key", "key", strconv.Quote(string(key)), "expected", what)
}

// scanPrefix is scan of every key under prefix.
func (s *Store) scanPrefix(ctx context.Context, prefix string, keysOnly bool, fn func(kv *mvccpb.KeyValue) error) (int64, error) {
	return s.scan(ctx, prefix, clientv3.GetPrefixRangeEnd(prefix), keysOnly, fn)
}

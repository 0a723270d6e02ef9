package etcdstore_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage/etcdstore"
	"github.com/kontermatt/kontermatt/storage/etcdstore/etcdtest"
)

// countingStore counts the bytes of table state committed: every one of them stays in etcd's
// history until a compaction, so more of them than the quota cannot fit without one.
type countingStore struct {
	*etcdstore.Store
	bytes atomic.Int64
}

func (c *countingStore) Commit(ctx context.Context, ch table.Change) error {
	err := c.Store.Commit(ctx, ch)
	if err == nil {
		c.bytes.Add(int64(len(ch.State)))
	}
	return err
}

// historyQuota is the members' quota in TestHistoryStaysWithinQuota: small, so that what fits
// without compaction is played within seconds.
const historyQuota = 2 << 20

// TestHistoryStaysWithinQuota (issue 32): on a member with a small quota, the bot's history upkeep
// (TrimHistory, a short window) lets computer players go on through several times the matches
// whose states alone fill the quota without it, and no alarm is raised; a table's old state
// cannot be read at its old revision once the window has passed.
func TestHistoryStaysWithinQuota(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{Members: 1, QuotaBytes: historyQuota})
	st := open(t, c, etcdstore.Options{Timeout: 2 * time.Second})
	counted := &countingStore{Store: st}
	svc := tabletest.New(table.Config{Store: counted, KV: counted, Robots: tabletest.RandomRobots, Seed: 32})
	t.Cleanup(svc.Close)

	const window = 200 * time.Millisecond
	ctx, stop := context.WithCancel(context.Background())
	var upkeep sync.WaitGroup
	upkeep.Add(1)
	var trims atomic.Int64
	go func() {
		defer upkeep.Done()
		for ctx.Err() == nil {
			rep, err := st.TrimHistory(ctx, time.Now(), window)
			if ctx.Err() != nil {
				return
			}
			if err != nil || rep.Refused != nil {
				t.Errorf("history upkeep: %v %v", err, rep.Refused)
				return
			}
			if rep.Compacted > 0 {
				trims.Add(1)
			}
			select {
			case <-ctx.Done():
			case <-time.After(window / 4):
			}
		}
	}()
	defer func() { stop(); upkeep.Wait() }()

	// A table's state as it was early, and the revision it was at.
	first := tabletest.OpenRobots(t, svc, api.Place{Platform: "test", Chat: "0"}, "stripes=1")
	old, err := st.Client().Get(context.Background(), st.Prefix()+"tables/", clientv3.WithPrefix())
	if err != nil || len(old.Kvs) == 0 {
		t.Fatalf("the first table's state: %v (%d keys)", err, len(old.Kvs))
	}
	oldKey, oldRev := string(old.Kvs[0].Key), old.Kvs[0].ModRevision

	start := time.Now()
	matches := 0
	for round := 0; counted.bytes.Load() < 3*historyQuota; round++ {
		// Each round's matches are played within milliseconds, far faster than people play: the
		// next round waits for a compaction of what is a window old, as the upkeep does between
		// the moves of real tables, so that no one round writes more than the window may hold.
		before := trims.Load()
		time.Sleep(window)
		tabletest.WaitUntil(t, 10*time.Second, "a compaction", func() bool { return trims.Load() > before })
		ids := []string{first}
		if round > 0 {
			ids = nil
		}
		for len(ids) < 8 {
			place := api.Place{Platform: "test", Chat: fmt.Sprintf("%d-%d", round, len(ids))}
			ids = append(ids, tabletest.OpenRobots(t, svc, place, "stripes=1"))
		}
		for _, id := range ids {
			tabletest.WaitUntil(t, 30*time.Second, "the match ends", func() bool {
				s, _ := svc.Status(id)
				return s == api.StatusOver || s == api.StatusClosed
			})
			matches++
		}
		if alarms, err := st.Alarms(context.Background()); err != nil || len(alarms) > 0 {
			t.Fatalf("after %d matches (%d bytes of state committed): alarms %v %v", matches, counted.bytes.Load(), alarms, err)
		}
	}
	t.Logf("%d matches in %v: %d bytes of state committed (%.1f times the %d-byte quota), %d compactions",
		matches, time.Since(start).Round(time.Millisecond), counted.bytes.Load(),
		float64(counted.bytes.Load())/historyQuota, historyQuota, trims.Load())

	time.Sleep(2 * window) // every checkpoint of the first table's time is a window old now
	tabletest.WaitUntil(t, 10*time.Second, "the first table's old state is compacted", func() bool {
		_, err := st.Client().Get(context.Background(), oldKey, clientv3.WithRev(oldRev))
		return errors.Is(err, rpctypes.ErrCompacted)
	})
}

// TestWithoutRootRights (issue 32): with the user docs/cluster.md has a host give the bot (read
// and write under its prefix, no root role) etcd refuses compaction. Forget makes its changes and
// says by when the older versions go (a *table.ForgetPending, two windows on), each time it is
// called, not only when it changed something; the history upkeep says it may not compact, and,
// once a checkpoint is two windows old and still readable, that nobody compacts.
func TestWithoutRootRights(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{Members: 1})
	c.EnableAuth("kontermatt", "secret", "rights/")
	const window = 300 * time.Millisecond
	st := open(t, c, etcdstore.Options{Prefix: "rights/", Username: "kontermatt", Password: "secret", History: window})
	if err := st.Commit(context.Background(), table.Change{TableID: "t1", State: []byte(`{"seat":"Annabella"}`), Closed: true,
		Log:     table.LogEntry{Seq: 1, Time: 5, Actor: "tg:42", Verb: api.VerbClose},
		Records: []table.Record{{Key: "t1/m1", Data: []byte(`{"name":"Annabella"}`)}}}); err != nil {
		t.Fatal(err)
	}
	f := table.Forgetting{Records: []table.Record{{Key: "t1/m1", Data: []byte(`{"name":"—"}`)}}, Actor: "tg:42", As: "anon:1"}
	for try := 1; try <= 2; try++ {
		if try == 2 { // as the service asks again: the record names the person no more
			f = table.Forgetting{Actor: "tg:42", As: "anon:2"}
		}
		before := time.Now()
		err := st.Forget(context.Background(), f)
		var pending *table.ForgetPending
		if !errors.As(err, &pending) {
			t.Fatalf("forget %d: %v, want a *table.ForgetPending", try, err)
		}
		if lo, hi := before.Add(2*window), time.Now().Add(2*window); pending.By.Before(lo) || pending.By.After(hi) {
			t.Errorf("forget %d: older versions gone by %v, want two windows on (%v–%v)", try, pending.By, lo, hi)
		}
		if !errors.Is(err, etcdstore.ErrNoCompactRights) && !strings.Contains(err.Error(), "permission denied") {
			t.Errorf("forget %d: %v does not say the user may not compact", try, err)
		}
	}

	rep, err := st.TrimHistory(context.Background(), time.Now(), window)
	if err != nil || rep.Refused != nil || !rep.Stale.IsZero() {
		t.Fatalf("the first upkeep, with no checkpoint a window old: %+v %v", rep, err)
	}
	time.Sleep(window + 50*time.Millisecond)
	rep, err = st.TrimHistory(context.Background(), time.Now(), window)
	if err != nil || !errors.Is(rep.Refused, etcdstore.ErrNoCompactRights) {
		t.Fatalf("the upkeep a window later: %+v %v, want compaction refused", rep, err)
	}
	if !rep.Stale.IsZero() {
		t.Errorf("history said stale after one window: %+v", rep)
	}
	time.Sleep(window + 50*time.Millisecond)
	rep, err = st.TrimHistory(context.Background(), time.Now(), window)
	if err != nil || rep.Stale.IsZero() {
		t.Errorf("two windows on, with nobody compacting: %+v %v, want the history said stale", rep, err)
	}
}

// TestMalformedKeysSkipped (issue 32): a hand-written closed table too short to hold its closing
// time, a closed_at key without its table and a log entry that is not JSON do not stop
// pruning, forgetting or listing the closed tables: each is passed over with one log line, and
// the well-formed data around them is pruned and forgotten as ever.
func TestMalformedKeysSkipped(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{Members: 1})
	var log strings.Builder
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return log.Write(p)
	}), nil))
	st := open(t, c, etcdstore.Options{Prefix: "malformed/", Log: logger})
	if err := st.Commit(context.Background(), table.Change{TableID: "t1", State: []byte(`{"seat":"Annabella"}`), Closed: true,
		Log: table.LogEntry{Seq: 1, Time: 5, Actor: "tg:42", Verb: api.VerbClose}}); err != nil {
		t.Fatal(err)
	}
	cli := st.Client()
	for k, v := range map[string]string{
		"malformed/tables/closed/short":         "x",
		"malformed/closed_at/0000-short":        "",
		"malformed/logs/t9\x000000000000000001": `{"actor":"tg:42", not json`,
	} {
		if _, err := cli.Put(context.Background(), k, v); err != nil {
			t.Fatal(err)
		}
	}
	var closed []string
	if err := st.ClosedTables(context.Background(), func(id string, _ []byte) error { closed = append(closed, id); return nil }); err != nil {
		t.Fatalf("closed tables: %v", err)
	}
	if len(closed) != 1 || closed[0] != "t1" {
		t.Errorf("closed tables %v, want [t1]", closed)
	}
	if err := st.Forget(context.Background(), table.Forgetting{Actor: "tg:42", As: "anon:1"}); err != nil {
		t.Fatalf("forget: %v", err)
	}
	if n, err := st.Prune(context.Background(), time.Now().Add(time.Hour)); err != nil || n != 1 {
		t.Fatalf("prune: %d tables, %v; want t1 pruned", n, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if n := strings.Count(log.String(), "skipping a malformed key"); n != 3 { // once each
		t.Errorf("%d log lines, want 3:\n%s", n, log.String())
	}
	for _, key := range []string{"tables/closed/short", "closed_at/0000-short", "logs/t9"} {
		if !strings.Contains(log.String(), key) {
			t.Errorf("the log does not name %s:\n%s", key, log.String())
		}
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

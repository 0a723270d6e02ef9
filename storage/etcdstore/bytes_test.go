package etcdstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage/etcdstore"
	"github.com/kontermatt/kontermatt/storage/etcdstore/etcdtest"
)

// TestBytesPerMatch (issue 32, measured): whole computer matches (the default options) on a
// one-member cluster; what a match costs in etcd's database file before and after its history
// is compacted and the member defragmented, and in live keys and values. It logs a MEASURED
// line; the file's sizes are etcd's page allocation, so they move in steps.
func TestBytesPerMatch(t *testing.T) {
	ctx := context.Background()
	const matches = 8
	c := etcdtest.Start(t, etcdtest.Options{Members: 1})
	st := open(t, c, etcdstore.Options{Prefix: "bytes/", Timeout: 5 * time.Second})
	svc := tabletest.New(table.Config{Store: st, KV: st, Robots: tabletest.RandomRobots, Seed: 32})
	t.Cleanup(svc.Close)
	size := func() (db, inUse int64) {
		t.Helper()
		resp, err := st.Client().Status(ctx, c.Endpoints()[0])
		if err != nil {
			t.Fatal(err)
		}
		return resp.DbSize, resp.DbSizeInUse
	}
	live := func() int64 {
		t.Helper()
		resp, err := st.Client().Get(ctx, st.Prefix(), clientv3.WithPrefix())
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		for _, kv := range resp.Kvs {
			n += int64(len(kv.Key) + len(kv.Value))
		}
		return n
	}
	if err := st.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	db0, use0 := size()
	live0 := live()
	var ids []string
	for i := range matches {
		ids = append(ids, tabletest.OpenRobots(t, svc, api.Place{Platform: "test", Chat: fmt.Sprint(i)}))
	}
	for _, id := range ids {
		tabletest.WaitUntil(t, 2*time.Minute, "the match ends", func() bool {
			s, _ := svc.Status(id)
			return s == api.StatusOver || s == api.StatusClosed
		})
	}
	db1, use1 := size()
	if err := st.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	db2, use2 := size()
	liveBytes := live() - live0
	t.Logf("MEASURED %d matches (default options): per match %d bytes of the database file before compaction (%d in use), %d after compaction and defragmentation (%d in use), %d of live keys and values",
		matches, (db1-db0)/matches, (use1-use0)/matches, (db2-db0)/matches, (use2-use0)/matches, liveBytes/matches)
	if use2-use0 >= use1-use0 {
		t.Errorf("compaction freed nothing: %d bytes in use after, %d before", use2-use0, use1-use0)
	}
	if liveBytes <= 0 {
		t.Errorf("the matches left no live data (%d bytes)", liveBytes)
	}
}

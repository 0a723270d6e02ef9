package telegram

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// TestForgetReachesTheAdaptersBuckets: Evangeline never pressed Start, so the adapter keeps her
// as blocked, holds her hands back and notes the deep link it showed the group. She plays a
// match (a computer for her while she is away) and the rematch's first tricks, then types
// /forget yes in the group. Afterwards the database file holds neither her name nor her Telegram
// ID: not in the adapter's buckets (registered with People), not at the table, not in the
// record, not in freed pages.
func TestForgetReachesTheAdaptersBuckets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		eve := tgUser{ID: 7770001234, First: "Evangeline", Last: "Quist", Lang: "en"}
		path := filepath.Join(t.TempDir(), "kontermatt.db")
		st, err := storage.Open(path, storage.Options{})
		if err != nil {
			t.Fatal(err)
		}
		f, logs := newFake(testToken), &tabletest.Buffer{}
		f.setStarted(alice.ID)
		cfg := testConfig(f, nil, logs)
		cfg.KV = st
		a, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		svc := tabletest.New(table.Config{Store: st, KV: st, Outboxes: map[string]table.Outbox{Platform: a}, Robots: randomRobots,
			Seed: 7, Log: cfg.Log, Think: time.Second, People: []table.People{People}})
		a.Attach(svc)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- a.Run(ctx) }()
		synctest.Wait()

		f.command(alice, group, 0, "/new@"+botUsername+" timer=fast stripes=1")
		settle(2 * time.Second)
		f.command(eve, group, 0, "/join")
		settle(5 * time.Second)
		mustPress(t, f, alice, group, api.VerbDeal, "")
		settle(5 * time.Second)
		d := newDriver(t, f, 3)
		d.playUntil([]tgUser{alice}, 2*time.Hour, func() bool { return over(f) })
		mustPress(t, f, alice, group, api.VerbRematch, "")
		d.playUntil([]tgUser{alice}, time.Hour, func() bool { return d.moves >= 2 })
		key := strconv.FormatInt(eve.ID, 10)
		// Her blocked mark is hers (registered with People); her held-back hands are the table's
		// ("<table>/<user>", pruned with it), and forgetting reaches them by the KV convention.
		tableID := svc.TableAt(api.Place{Platform: Platform, Chat: strconv.FormatInt(group, 10)})
		for _, e := range []struct{ bucket, key string }{{bucketBlocked, key}, {bucketPending, userTable(eve.ID, tableID)}} {
			if _, ok, _ := st.Get(ctx, e.bucket, e.key); !ok {
				t.Fatalf("the adapter keeps nothing in %s about Evangeline: the test shows nothing", e.bucket)
			}
		}

		f.command(eve, group, 0, "/forget yes")
		settle(5 * time.Second)
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		svc.Close()
		a.Close()
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		if found := tabletest.Traces(t, path, key, eve.First, eve.Last); len(found) > 0 {
			t.Errorf("the database still holds %v", found)
		}
		if len(tabletest.Traces(t, path, "Alice")) == 0 {
			t.Error("Alice is gone too")
		}
	})
}

// TestForgottenIsNotWrittenAgain (issue 32): Evangeline never pressed Start; she types /forget yes
// in the group. Its "Done" cannot reach her privately (403), and goes to the group instead; the
// adapter does not note her as unreachable (telegram.blocked/<her ID>) after she was forgotten,
// and no info line of the log names her ID.
func TestForgottenIsNotWrittenAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		eve := tgUser{ID: 7770001234, First: "Evangeline", Last: "Quist", Lang: "en"}
		st := mem.New()
		f, logs := newFake(testToken), &tabletest.Buffer{}
		f.setStarted(alice.ID)
		cfg := testConfig(f, nil, logs)
		cfg.KV = st
		a, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		svc := tabletest.New(table.Config{Store: st, KV: st, Outboxes: map[string]table.Outbox{Platform: a}, Robots: randomRobots,
			Seed: 7, Log: cfg.Log, People: []table.People{People}})
		a.Attach(svc)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- a.Run(ctx) }()
		synctest.Wait()
		f.command(eve, eve.ID, 0, "/forget yes") // then she blocks the bot: its answer gets 403
		settle(5 * time.Second)
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		svc.Close()
		a.Close()
		key := strconv.FormatInt(eve.ID, 10)
		if _, ok, _ := st.Get(context.Background(), bucketBlocked, key); ok {
			t.Errorf("after forget the adapter wrote %s/%s", bucketBlocked, key)
		}
		for _, line := range strings.Split(logs.String(), "\n") {
			if strings.Contains(line, key) && !strings.Contains(line, "level=DEBUG") {
				t.Errorf("a log line names Evangeline's ID: %s", line)
			}
		}
	})
}

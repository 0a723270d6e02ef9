package storage

import (
	"encoding/json"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
)

func closing(id string, seq uint64, at time.Time) table.Change {
	e := entry(seq, api.VerbStop)
	e.Time = at.UnixMilli()
	return table.Change{TableID: id, State: []byte(`{"status":"closed"}`), Log: e, Closed: true}
}

// A closed table leaves the live ones at once, and Prune deletes it with its log and its
// table-scoped KV keys after the retention period; records and other keys stay.
func TestClosedTablesAndPrune(t *testing.T) {
	ctx := t.Context()
	s, _ := openTemp(t, Options{})
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	for _, id := range []string{"ab12", "ab123", "zz99"} {
		commit(t, s, table.Change{TableID: id, State: []byte("live " + id), Log: entry(1, api.VerbNew)})
		for _, k := range []string{id, id + "/lobby", id + "/hand/m1/1/tg:5"} {
			if err := s.Put(ctx, "telegram.msg", k, []byte(k)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := s.Put(ctx, "table.user", "tg:5", []byte(`{"lang":"lb"}`)); err != nil {
		t.Fatal(err)
	}
	commit(t, s, table.Change{TableID: "ab12", State: []byte("rec"), Log: entry(2, api.VerbPlay),
		Records: []table.Record{{Key: "ab12/m1", Data: []byte("kept")}}})
	commit(t, s, closing("ab12", 3, t0))
	commit(t, s, closing("zz99", 2, t0.Add(48*time.Hour)))
	equalJSON(t, "live tables", allTables(t, s), map[string]string{"ab123": "live ab123"})

	if n, err := s.Prune(ctx, t0); err != nil || n != 0 {
		t.Fatalf("Prune at the closing time: %d, %v", n, err)
	}
	s = reopen(t, s) // what Prune finds is on disk
	if n, err := s.Prune(ctx, t0.Add(time.Hour)); err != nil || n != 1 {
		t.Fatalf("Prune an hour later: %d, %v", n, err)
	}
	if got := allLog(t, s, "ab12"); len(got) != 0 {
		t.Errorf("the pruned table's log is still there: %v", got)
	}
	for _, tc := range []struct {
		bucket, key string
		want        bool
	}{
		{"telegram.msg", "ab12", false},
		{"telegram.msg", "ab12/lobby", false},
		{"telegram.msg", "ab12/hand/m1/1/tg:5", false},
		{"telegram.msg", "ab123", true}, // another table whose ID merely begins the same
		{"telegram.msg", "ab123/lobby", true},
		{"telegram.msg", "zz99/lobby", true}, // closed, but not long enough
		{"table.user", "tg:5", true},
	} {
		if _, ok, err := s.Get(ctx, tc.bucket, tc.key); err != nil || ok != tc.want {
			t.Errorf("%s/%s kept %v, want %v (%v)", tc.bucket, tc.key, ok, tc.want, err)
		}
	}
	equalJSON(t, "records", allRecords(t, s), map[string]string{"ab12/m1": "kept"})
	if n, err := s.Prune(ctx, t0.Add(72*time.Hour)); err != nil || n != 1 {
		t.Errorf("Prune three days later: %d, %v", n, err)
	}
}

// Prune works through many closed tables in several small transactions.
func TestPruneMany(t *testing.T) {
	ctx := t.Context()
	s, _ := openTemp(t, Options{})
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	const n = 3*pruneBatch + 7
	for i := range n {
		id := "t" + string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i/676))
		commit(t, s, closing(id, 1, t0.Add(time.Duration(i)*time.Second)))
	}
	if got, err := s.Prune(ctx, t0.Add(time.Hour)); err != nil || got != n {
		t.Fatalf("Prune: %d, %v; want %d", got, err, n)
	}
	if got, err := s.Prune(ctx, t0.Add(time.Hour)); err != nil || got != 0 {
		t.Errorf("Prune again: %d, %v", got, err)
	}
}

// A schema 1 file is brought to schema 2: its closed tables are filed apart, its matches kept
// compactly (game records dropped), and its adapter keys put the table first.
func TestSchema1To2(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "v1.db")
	db := rawOpen(t, path)
	if err := db.Update(migrations[0]); err != nil {
		t.Fatal(err)
	}
	setVersion(t, db, 1)
	// A match played by the engine, kept as schema 1 kept it: full records.
	rng := rand.New(rand.NewPCG(3, 4))
	m, _ := core.NewMatch(core.Rules{Direction: core.Clockwise, Stripes: 2, DrawPenalty: core.DrawStake, AllTricksBonus: true, Announcements: true}, 1)
	for !m.Over() {
		g, err := m.Deal(core.DealHands(rng, m.NextDealer()))
		if err != nil {
			t.Fatal(err)
		}
		g.NameTrump(g.Forehand(), g.FirstPacket(g.Forehand()).First().Suit())
		for g.Phase() != core.PhaseOver {
			g.Play(g.ToMove(), g.LegalCards(g.ToMove()).First())
		}
	}
	full, _ := json.Marshal(m.Record())
	game1, _ := json.Marshal(m.Games()[0].Record())
	state := `{"v":1,"id":"old1","place":{"Platform":"telegram","Chat":"-5"},"status":"closed","match_no":1,` +
		`"seats":[{"player":{"id":"tg:1","name":"Ann"}},{"robot":true},{"player":{"id":"tg:3","name":"Cy"}},{"robot":true}],` +
		`"options":{"level":"easy"}}`
	err := db.Update(func(tx *bolt.Tx) error {
		put := func(b *bolt.Bucket, k, v string) {
			if err := b.Put([]byte(k), []byte(v)); err != nil {
				t.Fatal(err)
			}
		}
		put(tx.Bucket(bucketTables), "old1", state)
		put(tx.Bucket(bucketTables), "live2", `{"v":1,"id":"live2","status":"playing"}`)
		put(tx.Bucket(bucketRecords), "old1/m1/match", string(full))
		put(tx.Bucket(bucketRecords), "old1/m1/g1", string(game1))
		put(tx.Bucket(bucketRecords), "live2/m1/g1", string(game1))
		put(tx.Bucket(bucketRecords), "bad3/m1/match", "not json")
		for _, k := range []string{"lobby/old1", "live/old1/m1/2", "hand/old1/m1/2/tg:1"} {
			b, _ := tx.Bucket(bucketKV).CreateBucketIfNotExists([]byte("discord.msg"))
			put(b, k, "rec "+k)
		}
		tg, _ := tx.Bucket(bucketKV).CreateBucketIfNotExists([]byte("telegram.slot"))
		put(tg, "live|old1", "x")
		put(tg, "hand|101|old1", "y")
		users, _ := tx.Bucket(bucketKV).CreateBucketIfNotExists([]byte("telegram.blocked"))
		put(users, "101", "1")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()

	migrateNow = func() time.Time { return time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC) }
	defer func() { migrateNow = time.Now }()
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := allTables(t, s); len(got) != 1 || got["live2"] == "" {
		t.Errorf("live tables after the migration: %v", got)
	}
	recs := allRecords(t, s)
	if len(recs) != 2 || recs["unreadable/bad3/m1/match"] != "not json" {
		t.Errorf("records after the migration: %v", keysOf(recs))
	}
	kept, match, err := table.ParseStoredMatch([]byte(recs["old1/m1"]))
	if err != nil {
		t.Fatalf("the compacted match: %v", err)
	}
	if kept.Seats[0].Name != "Ann" || kept.Seats[1].Robot != "easy" || kept.Place != "telegram:-5" || len(kept.Games) != m.NumGames() {
		t.Errorf("compacted: %+v", kept)
	}
	if a, b := jsonOf(t, match.Record()), string(full); a != b {
		t.Errorf("the compacted match does not give back the old record:\n%s\n%s", a, b)
	}
	if len(recs["old1/m1"]) > 320+90*m.NumGames() {
		t.Errorf("compacted to %d bytes from %d", len(recs["old1/m1"]), len(full))
	}
	for _, tc := range [][2]string{{"discord.msg", "old1/lobby"}, {"discord.msg", "old1/live/m1/2"},
		{"discord.msg", "old1/hand/m1/2/tg:1"}, {"telegram.slot", "old1/live"}, {"telegram.slot", "old1/hand/101"},
		{"telegram.blocked", "101"}} {
		if _, ok, _ := s.Get(ctx, tc[0], tc[1]); !ok {
			t.Errorf("no %s/%s after the migration", tc[0], tc[1])
		}
	}
	if _, ok, _ := s.Get(ctx, "discord.msg", "lobby/old1"); ok {
		t.Error("the old key is still there")
	}
	// The closed table's retention period starts at the upgrade.
	if n, _ := s.Prune(ctx, migrateNow().Add(-time.Minute)); n != 0 {
		t.Errorf("pruned %d before the upgrade time", n)
	}
	if n, _ := s.Prune(ctx, migrateNow().Add(time.Minute)); n != 1 {
		t.Errorf("pruned %d after", n)
	}
	if _, ok, _ := s.Get(ctx, "discord.msg", "old1/lobby"); ok {
		t.Error("the migrated key was not pruned with its table")
	}
}

func keysOf(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// A change's KV entries are written in its transaction: with it, or not at all.
func TestCommitWritesKVWithTheChange(t *testing.T) {
	ctx := t.Context()
	s, _ := openTemp(t, Options{})
	if err := s.Put(ctx, "league.place", "old", []byte("x")); err != nil {
		t.Fatal(err)
	}
	commit(t, s, table.Change{TableID: "t1", State: []byte("s"), Log: entry(1, api.VerbPlay),
		KV: []table.KVEntry{{Bucket: "league.place", Key: "p", Value: []byte("v1")}, {Bucket: "league.place", Key: "old"}}})
	if v, ok, _ := s.Get(ctx, "league.place", "p"); !ok || string(v) != "v1" {
		t.Errorf("p = %q, %v", v, ok)
	}
	if _, ok, _ := s.Get(ctx, "league.place", "old"); ok {
		t.Error("a nil value did not delete")
	}
	// The log only grows: this change fails, and its KV entry is not written either.
	err := s.Commit(ctx, table.Change{TableID: "t1", State: []byte("s"), Log: entry(1, api.VerbPlay),
		KV: []table.KVEntry{{Bucket: "league.place", Key: "p", Value: []byte("v2")}}})
	if err == nil {
		t.Fatal("a stale log entry was accepted")
	}
	if v, _, _ := s.Get(ctx, "league.place", "p"); string(v) != "v1" {
		t.Errorf("a failed change wrote its KV entry: %q", v)
	}
}

package storage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// migrateNow is the time migration 2 stamps on the tables it finds closed (their retention
// period starts at the upgrade); a variable so tests can fix it.
var migrateNow = time.Now

// Schema 1 kept closed tables among the live ones, a full record (docs/records.md) for every game and
// match (about 31 KB a match), and adapter KV keys that named the table in the middle
// ("live/<table>/m1/2") or last ("hand|<user>|<table>"). Schema 2 files closed tables apart,
// keeps a match as a table.StoredMatch (the compact games and the seats, about 2 KB; the docs/records.md
// records are derived from it on export), and puts the table ID first in every table-scoped key,
// so pruning a table can find its keys.
func migrateClosedAndCompact(tx *bolt.Tx) error {
	for _, name := range [][]byte{bucketClosed, bucketClosedAt} {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return fmt.Errorf("create bucket %s: %w", name, err)
		}
	}
	if err := moveClosedTables(tx); err != nil {
		return err
	}
	if err := compactRecords(tx); err != nil {
		return err
	}
	return rekeyKV(tx)
}

func moveClosedTables(tx *bolt.Tx) error {
	tables := tx.Bucket(bucketTables)
	type closed struct{ id, state []byte }
	var found []closed
	err := tables.ForEach(func(k, v []byte) error {
		var st struct {
			Status api.Status `json:"status"`
		}
		if json.Unmarshal(v, &st) == nil && st.Status == api.StatusClosed {
			found = append(found, closed{bytes.Clone(k), bytes.Clone(v)})
		}
		return nil
	})
	if err != nil {
		return err
	}
	now := migrateNow().UnixMilli()
	for _, c := range found {
		if err := tables.Delete(c.id); err != nil {
			return err
		}
		if err := closeTable(tx, c.id, c.state, now); err != nil {
			return err
		}
	}
	return nil
}

// oldGameRecord is a schema 1 game record key: "<table>/m<n>/g<k>".
var oldGameRecord = regexp.MustCompile(`^[^/]+/m[0-9]+/g[0-9]+$`)

func compactRecords(tx *bolt.Tx) error {
	records := tx.Bucket(bucketRecords)
	type rec struct{ k, v []byte }
	var old []rec
	if err := records.ForEach(func(k, v []byte) error {
		if bytes.HasSuffix(k, []byte("/match")) || oldGameRecord.Match(k) {
			old = append(old, rec{bytes.Clone(k), bytes.Clone(v)})
		}
		return nil
	}); err != nil {
		return err
	}
	for _, r := range old {
		if err := records.Delete(r.k); err != nil {
			return err
		}
		if !bytes.HasSuffix(r.k, []byte("/match")) {
			continue // a game's record: its match holds it too (or, unfinished, its table does)
		}
		tableID, _, _ := strings.Cut(string(r.k), "/")
		state := tx.Bucket(bucketTables).Get([]byte(tableID))
		if v := tx.Bucket(bucketClosed).Get([]byte(tableID)); state == nil && len(v) >= 8 {
			state = v[8:]
		}
		key, data, err := table.CompactRecord(string(r.k), r.v, state)
		if err != nil {
			// A record that does not replay cannot be compacted; keep it as it was, under a key
			// that says so, rather than lose it.
			if err := records.Put(append([]byte("unreadable/"), r.k...), r.v); err != nil {
				return err
			}
			continue
		}
		if err := records.Put([]byte(key), data); err != nil {
			return err
		}
	}
	return nil
}

// oldMessageKey is a schema 1 message Key: the kind first, then the table.
var oldMessageKey = regexp.MustCompile(`^(lobby|live|hand)/([^/]+)(/.*)?$`)

// newKey gives a schema 1 adapter key's schema 2 form, and false for a key that is not
// table-scoped (a user's, say).
func newKey(k string) (string, bool) {
	if m := oldMessageKey.FindStringSubmatch(k); m != nil {
		return m[2] + "/" + m[1] + m[3], true
	}
	// "live|<table>", "hand|<user>|<table>", "<user>|<table>": the table last.
	if parts := strings.Split(k, "|"); len(parts) > 1 {
		last := len(parts) - 1
		return parts[last] + "/" + strings.Join(parts[:last], "/"), true
	}
	return "", false
}

func rekeyKV(tx *bolt.Tx) error {
	kv := tx.Bucket(bucketKV)
	var buckets [][]byte
	if err := kv.ForEachBucket(func(name []byte) error { buckets = append(buckets, bytes.Clone(name)); return nil }); err != nil {
		return err
	}
	type move struct{ from, to, val []byte }
	for _, name := range buckets {
		b := kv.Bucket(name)
		var moves []move
		if err := b.ForEach(func(k, v []byte) error {
			if nk, ok := newKey(string(k)); ok && v != nil {
				moves = append(moves, move{bytes.Clone(k), []byte(nk), bytes.Clone(v)})
			}
			return nil
		}); err != nil {
			return err
		}
		for _, m := range moves {
			if err := b.Delete(m.from); err != nil {
				return err
			}
			if err := b.Put(m.to, m.val); err != nil {
				return err
			}
		}
	}
	return nil
}

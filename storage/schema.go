package storage

import (
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Top-level buckets and the meta key holding the schema version.
var (
	bucketMeta     = []byte("meta")
	bucketTables   = []byte("tables")
	bucketClosed   = []byte("closed")
	bucketClosedAt = []byte("closed_at")
	bucketLogs     = []byte("logs")
	bucketRecords  = []byte("records")
	bucketKV       = []byte("kv")

	keySchema = []byte("schema")
)

// topBuckets are the buckets every database of the current schema has.
var topBuckets = [][]byte{bucketMeta, bucketTables, bucketClosed, bucketClosedAt, bucketLogs, bucketRecords, bucketKV}

// migration brings the database from one schema version to the next inside the opening
// transaction. migrations[i] goes from version i to version i+1.
type migration func(tx *bolt.Tx) error

// migrations are the schema's history, oldest first; SchemaVersion is their count. Append a new
// one for every layout change and never edit an old one: a database file carries its version and
// is brought forward step by step when it is opened.
var migrations = []migration{
	// 0 → 1: the initial layout (a new or empty file).
	func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bucketMeta, bucketTables, bucketLogs, bucketRecords, bucketKV} {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return fmt.Errorf("create bucket %s: %w", name, err)
			}
		}
		return nil
	},
	// 1 → 2: closed tables apart from the live ones, matches kept compactly, table-scoped KV keys.
	migrateClosedAndCompact,
}

// SchemaVersion is the database layout version this binary writes and reads.
func SchemaVersion() uint64 {
	return uint64(len(migrations))
}

// schemaVersion reads the version stored in tx; a file without one is version 0.
func schemaVersion(tx *bolt.Tx) (uint64, error) {
	meta := tx.Bucket(bucketMeta)
	if meta == nil {
		return 0, nil
	}
	v := meta.Get(keySchema)
	if v == nil {
		return 0, nil
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("schema version of %d bytes: %w", len(v), ErrCorrupt)
	}
	return binary.BigEndian.Uint64(v), nil
}

// migrate brings db to len(migs) in one transaction: either every step and the new version are
// written, or nothing is. A database newer than len(migs) is refused with ErrNewerSchema and left
// untouched.
func migrate(db *bolt.DB, migs []migration) error {

	want := uint64(len(migs))
	var have uint64
	err := db.View(func(tx *bolt.Tx) error {
		var err error
		have, err = schemaVersion(tx)
		return err
	})
	if err != nil {
		return err
	}
	if have > want {
		return fmt.Errorf("%w: database has version %d, this binary knows up to %d", ErrNewerSchema, have, want)
	}
	if have < want {
		err = db.Update(func(tx *bolt.Tx) error {
			have, err := schemaVersion(tx) // again, inside the write lock
			if err != nil {
				return err
			}
			if have > want {
				return fmt.Errorf("%w: database has version %d, this binary knows up to %d", ErrNewerSchema, have, want)
			}
			for v := have; v < want; v++ {
				if err := migs[v](tx); err != nil {
					return fmt.Errorf("migrate schema %d → %d: %w", v, v+1, err)
				}
			}
			meta, err := tx.CreateBucketIfNotExists(bucketMeta)
			if err != nil {
				return err
			}
			return meta.Put(keySchema, binary.BigEndian.AppendUint64(nil, want))
		})
		if err != nil {
			return err
		}
	}
	return db.View(checkLayout)
}

// checkLayout makes sure the top-level buckets exist, so a damaged file fails at Open.
func checkLayout(tx *bolt.Tx) error {
	for _, name := range topBuckets {
		if tx.Bucket(name) == nil {
			return fmt.Errorf("bucket %s is missing: %w", name, ErrCorrupt)
		}
	}
	return nil
}

// seqKey is the log key of a sequence number: big-endian, so the keys sort in log order.
func seqKey(seq uint64) []byte {
	return binary.BigEndian.AppendUint64(make([]byte, 0, 8), seq)
}

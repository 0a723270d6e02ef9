package storage

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Moving a bot's data from one store to another (bot migrate, and the backup of an etcd store
// into a bbolt file): the source dumps everything it holds, as of one moment, as Items, and the
// destination, which must be empty, loads them.

// ItemKind says what an Item is.
type ItemKind uint8

// The kinds of Item.
const (
	ItemTable  ItemKind = iota + 1 // a live table: Key its ID, Value its state
	ItemClosed                     // a closed table: Key its ID, At when it closed, Value its last state
	ItemLog                        // a log entry: Key the table ID, Seq its sequence number, Value its JSON
	ItemRecord                     // a kept match: Key the record key, Value the record
	ItemKV                         // a KV entry: Bucket, Key, Value
)

// Item is one thing a store keeps.
type Item struct {
	Kind   ItemKind
	Bucket string
	Key    string
	At     int64 // unix ms
	Seq    uint64
	Value  []byte
}

// A Dumper gives everything it holds, as of one moment.
type Dumper interface {
	Dump(ctx context.Context, fn func(Item) error) error
}

// A Loader takes in what a Dumper gives, into an empty store.
type Loader interface {
	// Load writes the items a Dumper gives; a store that holds something already refuses with
	// ErrNotEmpty and writes nothing.
	Load(ctx context.Context, from Dumper) (int, error)
}

// ErrNotEmpty is a Load into a store that holds data already: a migration never mixes two bots'
// data.
var ErrNotEmpty = errors.New("the destination store is not empty")

// Dump gives everything the file holds from one read transaction.
func (s *Store) Dump(ctx context.Context, fn func(Item) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	tx, err := s.db.Begin(false)
	if err != nil {
		return fmt.Errorf("storage: dump: %w", err)
	}
	defer tx.Rollback()
	each := func(name []byte, f func(k, v []byte) error) error {
		return tx.Bucket(name).ForEach(func(k, v []byte) error {
			if v == nil {
				return nil
			}
			return f(k, v)
		})
	}
	err = each(bucketTables, func(k, v []byte) error { return fn(Item{Kind: ItemTable, Key: string(k), Value: clone(v)}) })
	if err == nil {
		err = each(bucketClosed, func(k, v []byte) error {
			if len(v) < 8 {
				return fmt.Errorf("closed table %q of %d bytes: %w", k, len(v), ErrCorrupt)
			}
			return fn(Item{Kind: ItemClosed, Key: string(k), At: int64(binary.BigEndian.Uint64(v)), Value: clone(v[8:])})
		})
	}
	if err == nil {
		err = tx.Bucket(bucketLogs).ForEachBucket(func(id []byte) error {
			return tx.Bucket(bucketLogs).Bucket(id).ForEach(func(k, v []byte) error {
				if len(k) != 8 {
					return fmt.Errorf("log of table %q: key of %d bytes: %w", id, len(k), ErrCorrupt)
				}
				return fn(Item{Kind: ItemLog, Key: string(id), Seq: binary.BigEndian.Uint64(k), Value: clone(v)})
			})
		})
	}
	if err == nil {
		err = each(bucketRecords, func(k, v []byte) error { return fn(Item{Kind: ItemRecord, Key: string(k), Value: clone(v)}) })
	}
	if err == nil {
		kv := tx.Bucket(bucketKV)
		err = kv.ForEachBucket(func(b []byte) error {
			return kv.Bucket(b).ForEach(func(k, v []byte) error {
				if v == nil {
					return nil
				}
				return fn(Item{Kind: ItemKV, Bucket: string(b), Key: string(k), Value: clone(v)})
			})
		})
	}
	if err != nil {
		return fmt.Errorf("storage: dump: %w", err)
	}
	return nil
}

// loadTxSize bounds one transaction of a Load, as compactTxSize does a compaction's.
const loadTxSize = 32 << 20

// Load writes what from dumps into this Store, which must hold nothing yet, in transactions of
// up to loadTxSize bytes, and gives how many items it wrote.
func (s *Store) Load(ctx context.Context, from Dumper) (int, error) {
	empty := true
	err := s.view(func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bucketTables, bucketClosed, bucketLogs, bucketRecords, bucketKV} {
			if k, _ := tx.Bucket(name).Cursor().First(); k != nil {
				empty = false
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("storage: load: %w", err)
	}
	if !empty {
		return 0, fmt.Errorf("storage: load into %s: %w", s.path, ErrNotEmpty)
	}
	var batch []Item
	size, n := 0, 0
	flush := func() error {
		err := s.update(func(tx *bolt.Tx) error {
			for _, it := range batch {
				if err := loadItem(tx, it); err != nil {
					return err
				}
			}
			return nil
		}, nil)
		n += len(batch)
		batch, size = batch[:0], 0
		return err
	}
	err = from.Dump(ctx, func(it Item) error {
		batch = append(batch, it)
		if size += len(it.Key) + len(it.Value); size >= loadTxSize {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return n, fmt.Errorf("storage: load: %w", err)
	}
	return n, nil
}

// loadItem writes one item as Commit, Put and the closing of a table would have.
func loadItem(tx *bolt.Tx, it Item) error {
	key := []byte(it.Key)
	switch it.Kind {
	case ItemTable:
		return tx.Bucket(bucketTables).Put(key, it.Value)
	case ItemClosed:
		return closeTable(tx, key, it.Value, it.At)
	case ItemLog:
		log, err := tx.Bucket(bucketLogs).CreateBucketIfNotExists(key)
		if err != nil {
			return err
		}
		return log.Put(seqKey(it.Seq), it.Value)
	case ItemRecord:
		return tx.Bucket(bucketRecords).Put(key, it.Value)
	case ItemKV:
		return kvWrite(tx, it.Bucket, it.Key, append([]byte{}, it.Value...))
	}
	return fmt.Errorf("item of kind %d: %w", it.Kind, ErrCorrupt)
}

package storage

import (
	"bytes"
	"context"
	"fmt"

	"github.com/kontermatt/kontermatt/core/store"

	bolt "go.etcd.io/bbolt"
)

// Get returns a copy of the value at key in the adapter's bucket, and whether it exists.
func (s *Store) Get(ctx context.Context, bucket, key string) ([]byte, bool, error) {
	if err := CheckKV(bucket, key); err != nil {
		return nil, false, err
	}
	var val []byte
	var ok bool
	err := s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketKV).Bucket([]byte(bucket))
		if b == nil {
			return nil
		}
		if v := b.Get([]byte(key)); v != nil {
			val, ok = clone(v), true
		}
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("storage: kv get %q/%q: %w", bucket, key, err)
	}
	return val, ok, nil
}

// Put stores value at key in the adapter's bucket, creating the bucket if needed. A nil value is
// stored as an empty one.
func (s *Store) Put(ctx context.Context, bucket, key string, value []byte) error {
	if err := CheckKV(bucket, key); err != nil {
		return err
	}
	if value == nil {
		value = []byte{}
	}
	err := s.do(ctx, &write{apply: func(tx *bolt.Tx) error { return kvWrite(tx, bucket, key, value) }})
	if err != nil {
		return fmt.Errorf("storage: kv put %q/%q: %w", bucket, key, err)
	}
	return nil
}

// Delete removes key from the adapter's bucket; a missing key or bucket is not an error.
func (s *Store) Delete(ctx context.Context, bucket, key string) error {
	if err := CheckKV(bucket, key); err != nil {
		return err
	}
	err := s.do(ctx, &write{apply: func(tx *bolt.Tx) error { return kvWrite(tx, bucket, key, nil) }})
	if err != nil {
		return fmt.Errorf("storage: kv delete %q/%q: %w", bucket, key, err)
	}
	return nil
}

// Swap writes value at bucket/key (nil deletes) if the key holds old now (nil: absent), else it
// fails with store.ErrConflict and gives what the key holds (see store.Swapper). It goes through
// the commit queue like every write: a refused swap fails alone.
func (s *Store) Swap(ctx context.Context, bucket, key string, old, value []byte) ([]byte, error) {
	if err := CheckKV(bucket, key); err != nil {
		return nil, err
	}
	var current []byte
	w := &write{
		check: func(tx *bolt.Tx) error {
			current = nil
			var cur []byte
			if b := tx.Bucket(bucketKV).Bucket([]byte(bucket)); b != nil {
				cur = b.Get([]byte(key))
			}
			if (cur == nil) != (old == nil) || !bytes.Equal(cur, old) {
				current = clone(cur)
				return store.ErrConflict
			}
			return nil
		},
		apply: func(tx *bolt.Tx) error { return kvWrite(tx, bucket, key, value) },
	}
	if err := s.do(ctx, w); err != nil {
		return current, fmt.Errorf("storage: kv swap %q/%q: %w", bucket, key, err)
	}
	return nil, nil
}

// kvWrite puts a value in an adapter bucket, making the bucket; a nil value deletes the key.
func kvWrite(tx *bolt.Tx, bucket, key string, value []byte) error {
	if value == nil {
		if b := tx.Bucket(bucketKV).Bucket([]byte(bucket)); b != nil {
			return b.Delete([]byte(key))
		}
		return nil
	}
	b, err := tx.Bucket(bucketKV).CreateBucketIfNotExists([]byte(bucket))
	if err != nil {
		return err
	}
	return b.Put([]byte(key), value)
}

// CheckKV is CheckKey of a KV entry's bucket and key.
func CheckKV(bucket, key string) error {
	if err := CheckKey("kv bucket", bucket); err != nil {
		return err
	}
	return CheckKey("kv key", key)
}

// KVEach calls fn for every entry of a KV bucket in key order, outside any transaction; a bucket
// never written has none. An error from fn stops the iteration and is returned.
func (s *Store) KVEach(ctx context.Context, bucket string, fn func(key string, value []byte) error) error {
	if err := CheckKey("kv bucket", bucket); err != nil {
		return err
	}
	return s.each(ctx, bucketKV, []byte(bucket), func(k, v []byte) error { return fn(string(k), v) })
}

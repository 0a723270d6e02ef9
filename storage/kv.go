package storage

import (
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Get returns a copy of the value at key in the adapter's bucket, and whether it exists.
func (s *Store) Get(bucket, key string) ([]byte, bool, error) {
	if err := checkKV(bucket, key); err != nil {
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
func (s *Store) Put(bucket, key string, value []byte) error {
	if err := checkKV(bucket, key); err != nil {
		return err
	}
	if value == nil {
		value = []byte{}
	}
	err := s.update(func(tx *bolt.Tx) error { return kvWrite(tx, bucket, key, value) })
	if err != nil {
		return fmt.Errorf("storage: kv put %q/%q: %w", bucket, key, err)
	}
	return nil
}

// Delete removes key from the adapter's bucket; a missing key or bucket is not an error.
func (s *Store) Delete(bucket, key string) error {
	if err := checkKV(bucket, key); err != nil {
		return err
	}
	err := s.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketKV).Bucket([]byte(bucket))
		if b == nil {
			return nil
		}
		return b.Delete([]byte(key))
	})
	if err != nil {
		return fmt.Errorf("storage: kv delete %q/%q: %w", bucket, key, err)
	}
	return nil
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

func checkKV(bucket, key string) error {
	if err := checkKey("kv bucket", bucket); err != nil {
		return err
	}
	return checkKey("kv key", key)
}

// KVEach calls fn for every entry of a KV bucket in key order, outside any transaction; a bucket
// never written has none. An error from fn stops the iteration and is returned.
func (s *Store) KVEach(bucket string, fn func(key string, value []byte) error) error {
	if err := checkKey("kv bucket", bucket); err != nil {
		return err
	}
	return s.each(bucketKV, []byte(bucket), func(k, v []byte) error { return fn(string(k), v) })
}

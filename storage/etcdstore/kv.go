package etcdstore

import (
	"bytes"
	"context"
	"fmt"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kontermatt/kontermatt/core/store"
	"github.com/kontermatt/kontermatt/storage"
)

// Get returns the value at key in the bucket, and whether it exists.
func (s *Store) Get(ctx context.Context, bucket, key string) ([]byte, bool, error) {
	if err := storage.CheckKV(bucket, key); err != nil {
		return nil, false, err
	}
	resp, err := s.get(ctx, s.kvKey(bucket, key))
	if err != nil {
		return nil, false, fmt.Errorf("etcdstore: kv get %q/%q: %w", bucket, key, err)
	}
	if len(resp.Kvs) == 0 {
		return nil, false, nil
	}
	return stored(resp.Kvs[0]), true, nil
}

// Put stores value at key in the bucket; a nil value is stored as an empty one.
func (s *Store) Put(ctx context.Context, bucket, key string, value []byte) error {
	if err := storage.CheckKV(bucket, key); err != nil {
		return err
	}
	err := s.call(ctx, func(ctx context.Context, _ bool) error {
		_, err := s.cli.Put(ctx, s.kvKey(bucket, key), string(value))
		return err
	})
	if err != nil {
		return fmt.Errorf("etcdstore: kv put %q/%q: %w", bucket, key, err)
	}
	return nil
}

// Delete removes key from the bucket; a missing key is not an error.
func (s *Store) Delete(ctx context.Context, bucket, key string) error {
	if err := storage.CheckKV(bucket, key); err != nil {
		return err
	}
	err := s.call(ctx, func(ctx context.Context, _ bool) error {
		_, err := s.cli.Delete(ctx, s.kvKey(bucket, key))
		return err
	})
	if err != nil {
		return fmt.Errorf("etcdstore: kv delete %q/%q: %w", bucket, key, err)
	}
	return nil
}

// Swap writes value at bucket/key (nil deletes) if the key holds old now (nil: absent), in one
// transaction whose If compares the value; else it fails with store.ErrConflict and gives what the
// key holds, read in the same transaction (see store.Swapper).
func (s *Store) Swap(ctx context.Context, bucket, key string, old, value []byte) ([]byte, error) {
	if err := storage.CheckKV(bucket, key); err != nil {
		return nil, err
	}
	k := s.kvKey(bucket, key)
	cmp := clientv3.Compare(clientv3.CreateRevision(k), "=", 0)
	if old != nil {
		// etcd compares a missing key's value as false, so an empty old wants an empty value.
		cmp = clientv3.Compare(clientv3.Value(k), "=", string(old))
	}
	op := clientv3.OpDelete(k)
	if value != nil {
		op = clientv3.OpPut(k, string(value))
	}
	resp, again, err := s.txn(ctx, []clientv3.Cmp{cmp}, []clientv3.Op{op}, []clientv3.Op{clientv3.OpGet(k)})
	if err != nil {
		return nil, fmt.Errorf("etcdstore: kv swap %q/%q: %w", bucket, key, err)
	}
	if resp.Succeeded {
		return nil, nil
	}
	var current []byte
	if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 {
		current = stored(kvs[0])
	}
	if again && (current == nil) == (value == nil) && bytes.Equal(current, value) {
		return nil, nil // an attempt whose answer was lost was applied: the key holds what it wrote
	}
	return current, fmt.Errorf("etcdstore: kv swap %q/%q: %w", bucket, key, store.ErrConflict)
}

// KVEach calls fn for every entry of a bucket in key order, as of one revision.
func (s *Store) KVEach(ctx context.Context, bucket string, fn func(key string, value []byte) error) error {
	if err := storage.CheckKey("kv bucket", bucket); err != nil {
		return err
	}
	prefix := s.bucketPrefix(bucket)
	_, err := s.scanPrefix(ctx, prefix, false, func(kv *mvccpb.KeyValue) error {
		return fn(string(kv.Key[len(prefix):]), stored(kv))
	})
	return err
}

// buckets lists the KV buckets that hold a key, one short reading per bucket: each asks for the
// first key after the last bucket found.
func (s *Store) buckets(ctx context.Context) ([]string, error) {
	root := s.p + "kv/"
	end := clientv3.GetPrefixRangeEnd(root)
	var out []string
	for from := root; ; {
		resp, err := s.get(ctx, from, clientv3.WithRange(end), clientv3.WithLimit(1), clientv3.WithKeysOnly())
		if err != nil {
			return nil, err
		}
		if len(resp.Kvs) == 0 {
			return out, nil
		}
		rest := string(resp.Kvs[0].Key[len(root):])
		for i := range len(rest) {
			if rest[i] == 0 {
				rest = rest[:i]
				break
			}
		}
		out = append(out, rest)
		from = root + rest + "\x01"
	}
}

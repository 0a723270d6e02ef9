package etcdstore

import (
	"context"
	"errors"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// A batch is operations that go in one transaction, with the compares that guard them, and what
// is needed to keep a transaction within the cluster's limits: its size in bytes, and the keys
// its operations touch (etcd refuses a transaction two of whose operations touch one key).
type batch struct {
	cmps  []clientv3.Cmp
	ops   []clientv3.Op
	spans []span
	sizes []int // each operation's
	size  int
}

// span is the keys from key up to end (exclusive).
type span struct{ key, end string }

// opOverhead is a generous bound on what the request spends on one operation besides its key and
// value (its protobuf framing).
const opOverhead = 32

func (b *batch) put(key string, value []byte) {
	b.ops = append(b.ops, clientv3.OpPut(key, string(value)))
	b.note(span{key, key + "\x00"}, len(key)+len(value)+opOverhead)
}

func (b *batch) del(key string) {
	b.ops = append(b.ops, clientv3.OpDelete(key))
	b.note(span{key, key + "\x00"}, len(key)+opOverhead)
}

// delRange deletes from key up to end (exclusive).
func (b *batch) delRange(key, end string) {
	b.ops = append(b.ops, clientv3.OpDelete(key, clientv3.WithRange(end)))
	b.note(span{key, end}, len(key)+len(end)+opOverhead)
}

// note keeps what the operation just added touches and weighs.
func (b *batch) note(sp span, size int) {
	b.spans = append(b.spans, sp)
	b.sizes = append(b.sizes, size)
	b.size += size
}

func (b *batch) delPrefix(prefix string) { b.delRange(prefix, clientv3.GetPrefixRangeEnd(prefix)) }

func (b *batch) guard(c clientv3.Cmp, size int) {
	b.cmps = append(b.cmps, c)
	b.size += size + opOverhead
}

// overlaps tells whether an operation of b touches a key one of o's touches.
func (b *batch) overlaps(o *batch) bool {
	for _, x := range b.spans {
		for _, y := range o.spans {
			if x.key < y.end && y.key < x.end {
				return true
			}
		}
	}
	return false
}

func (b *batch) add(o *batch) {
	b.cmps = append(b.cmps, o.cmps...)
	b.ops = append(b.ops, o.ops...)
	b.spans = append(b.spans, o.spans...)
	b.sizes = append(b.sizes, o.sizes...)
	b.size += o.size
}

// fits tells whether b, grown by o, stays within the limits.
func (s *Store) fits(b, o *batch) bool {
	return len(b.ops)+len(o.ops) <= s.maxOps && len(b.cmps)+len(o.cmps) <= s.maxOps &&
		b.size+o.size <= s.maxBytes-opOverhead*4
}

// errGuard is a transaction of run whose compares failed: what it was to change changed
// meanwhile, and the caller reads again.
var errGuard = errors.New("changed meanwhile")

// run commits the units in as few transactions as the limits allow, in order; a unit is never
// split unless it is larger than one transaction may be, and then its compares go with its last
// part. It stops at the first failure: errGuard when a transaction's compares failed.
func (s *Store) run(ctx context.Context, units []*batch) error {
	var cur batch
	flush := func() error {
		if len(cur.ops) == 0 {
			return nil
		}
		resp, _, err := s.txn(ctx, cur.cmps, cur.ops, nil)
		cur = batch{}
		if err != nil {
			return err
		}
		if !resp.Succeeded {
			return errGuard
		}
		return nil
	}
	for _, u := range units {
		for _, part := range s.split(u) {
			if !s.fits(&cur, part) || cur.overlaps(part) {
				if err := flush(); err != nil {
					return err
				}
			}
			cur.add(part)
		}
	}
	return flush()
}

// split cuts a unit too large for one transaction into parts that fit, operation by operation;
// the compares go with the last part.
func (s *Store) split(u *batch) []*batch {
	var empty batch
	if s.fits(&empty, u) {
		return []*batch{u}
	}
	var parts []*batch
	cur := &batch{}
	for i, op := range u.ops {
		one := &batch{ops: []clientv3.Op{op}, spans: []span{u.spans[i]}, sizes: []int{u.sizes[i]}, size: u.sizes[i]}
		if !s.fits(cur, one) || cur.overlaps(one) {
			parts = append(parts, cur)
			cur = &batch{}
		}
		cur.add(one)
	}
	cur.cmps = u.cmps
	return append(parts, cur)
}

package chat

import (
	"sync/atomic"
	"time"
)

// Traffic is what metrics read of an adapter's inbound side: when the platform last brought an
// update, and how many posts its webhook or interactions endpoint refused (no secret, a bad
// signature, not a POST, a body too large). The zero value is ready: no update yet, no refusal.
type Traffic struct {
	last    atomic.Int64 // Unix nanoseconds; 0: none
	refused atomic.Uint64
}

// Heard notes an update that came at at.
func (t *Traffic) Heard(at time.Time) { t.last.Store(at.UnixNano()) }

// Refused notes a refused post.
func (t *Traffic) Refused() { t.refused.Add(1) }

// LastUpdate is when the last update came; zero: none since start.
func (t *Traffic) LastUpdate() time.Time {
	if n := t.last.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

// Refusals counts the posts refused since start.
func (t *Traffic) Refusals() uint64 { return t.refused.Load() }

//go:build !linux

// Package cpuclock tells how long the calling thread has run on a CPU; outside Linux it is not
// measured.
package cpuclock

import "time"

// Thread is not measured outside Linux: false.
func Thread() (time.Duration, bool) { return 0, false }

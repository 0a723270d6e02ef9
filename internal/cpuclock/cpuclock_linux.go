//go:build linux

// Package cpuclock tells how long the calling thread has run on a CPU, for timing a computer
// player's decision on a busy machine, where the wall clock also runs while other work keeps the
// thread waiting: the cap test of core/robot and the duel's times (cmd/bot/internal/research).
package cpuclock

import (
	"time"

	"golang.org/x/sys/unix"
)

// Thread is how long the calling thread has run, by clock_gettime's CLOCK_THREAD_CPUTIME_ID
// (clock_gettime(2)), which brings the running thread's time up to date as getrusage and /proc's
// schedstat do not (they lag by up to a scheduler tick); false where it cannot be read. The
// caller pins its goroutine to its thread (runtime.LockOSThread) between two readings.
func Thread() (time.Duration, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}

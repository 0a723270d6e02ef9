package robot

import (
	"fmt"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// threadCPU is the CPU time the calling thread has used, for timing a decision on a busy machine,
// where the wall clock also runs while others work: clock_gettime's CLOCK_THREAD_CPUTIME_ID
// (clock_gettime(2)), which brings the running thread's time up to date as getrusage and /proc's
// schedstat do not (they lag by up to a scheduler tick).
func threadCPU() (time.Duration, bool) {
	const clockThreadCPUTime = 3 // CLOCK_THREAD_CPUTIME_ID, linux/time.h
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}

// threadWait is how long the calling thread has waited, runnable, for a CPU: the second field of
// /proc/thread-self/schedstat, in ns (the kernel's Documentation/scheduler/sched-stats.rst),
// brought up to date each time the thread gets a CPU, so current while it runs.
func threadWait() (time.Duration, bool) {
	b, err := os.ReadFile("/proc/thread-self/schedstat")
	if err != nil {
		return 0, false
	}
	var run, wait int64
	if _, err := fmt.Sscan(string(b), &run, &wait); err != nil {
		return 0, false
	}
	return time.Duration(wait), true
}

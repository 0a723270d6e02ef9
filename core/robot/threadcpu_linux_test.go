package robot

import (
	"fmt"
	"os"
	"syscall"
	"time"
)

// threadCPU is the CPU time the calling thread has used (Linux's RUSAGE_THREAD), for timing a
// decision on a busy machine, where the wall clock also runs while others work.
func threadCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}

// threadSched is how long the calling thread has run on a CPU and waited, runnable, for one (the
// first two fields of /proc/thread-self/schedstat, in ns: the kernel's
// Documentation/scheduler/sched-stats.rst), to tell a decision's own time apart from the time the
// machine's other work took from it.
func threadSched() (run, wait time.Duration, ok bool) {
	b, err := os.ReadFile("/proc/thread-self/schedstat")
	if err != nil {
		return 0, 0, false
	}
	var r, w int64
	if _, err := fmt.Sscan(string(b), &r, &w); err != nil {
		return 0, 0, false
	}
	return time.Duration(r), time.Duration(w), true
}

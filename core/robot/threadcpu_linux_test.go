package robot

import (
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

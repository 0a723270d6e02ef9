package research

import (
	"syscall"
	"time"
	"unsafe"
)

// threadRun is how long the calling thread has run on a CPU, by clock_gettime's
// CLOCK_THREAD_CPUTIME_ID (clock_gettime(2)), which brings the running thread's time up to date as
// /proc's schedstat and getrusage do not (they lag by up to a scheduler tick). The wall clock also
// runs while a busy machine's other work keeps the thread waiting. (The raw call, not
// golang.org/x/sys/unix, which the module uses only indirectly.)
func threadRun() (time.Duration, bool) {
	const clockThreadCPUTime = 3 // CLOCK_THREAD_CPUTIME_ID, linux/time.h
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}

package robot

import (
	"fmt"
	"os"
	"time"
)

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

package cpuclock

import (
	"runtime"
	"testing"
	"time"
)

// TestThreadRunsOnlyWhileWorking: a thread that works for a while has run about as long; one that
// sleeps has hardly run.
func TestThreadRunsOnlyWhileWorking(t *testing.T) {
	if runtime.GOOS != "linux" {
		if _, ok := Thread(); ok {
			t.Fatal("measured outside Linux")
		}
		return
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t0, ok := Thread()
	if !ok {
		t.Fatal("the thread's clock cannot be read on Linux")
	}
	start := time.Now()
	for time.Since(start) < 30*time.Millisecond {
	}
	t1, _ := Thread()
	time.Sleep(30 * time.Millisecond)
	t2, _ := Thread()
	if worked := t1 - t0; worked <= 0 || worked > time.Since(start) {
		t.Errorf("30 ms of work ran %v", worked)
	}
	if slept := t2 - t1; slept > 10*time.Millisecond {
		t.Errorf("30 ms of sleep ran %v", slept)
	}
}

//go:build unix

package main

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// untilStopped ends when the process is told to stop (SIGTERM here, Ctrl-C's SIGINT alike),
// and the process goes on: the command that holds it stops its work and reports.
func TestUntilStoppedEndsOnSIGTERM(t *testing.T) {
	ctx, stop := untilStopped()
	defer stop()
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("SIGTERM did not end the context")
	}
}

//go:build !linux

package robot

import "time"

func threadCPU() (time.Duration, bool) { return 0, false }

func threadSched() (run, wait time.Duration, ok bool) { return 0, 0, false }

//go:build !linux

package robot

import "time"

func threadCPU() (time.Duration, bool) { return 0, false }

func threadWait() (time.Duration, bool) { return 0, false }

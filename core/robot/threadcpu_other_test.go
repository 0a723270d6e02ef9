//go:build !linux

package robot

import "time"

func threadWait() (time.Duration, bool) { return 0, false }

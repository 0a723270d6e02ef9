//go:build !linux

package research

import "time"

// threadRun is not measured outside Linux.
func threadRun() (time.Duration, bool) { return 0, false }

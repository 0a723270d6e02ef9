//go:build unix

package httpserve

import "syscall"

// openFilesLimit is the soft RLIMIT_NOFILE (Go raises it to the hard limit at start on Linux).
func openFilesLimit() int {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil || l.Cur > 1<<30 {
		return 0
	}
	return int(l.Cur)
}

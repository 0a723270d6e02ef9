//go:build unix

package main

import (
	"net"
	"os"
	"syscall"
)

// maxSocketPath is the longest path a unix socket address holds (sun_path without its NUL): 107
// bytes on Linux, 103 on the BSDs and macOS.
const maxSocketPath = len(syscall.RawSockaddrUnix{}.Path) - 1

// listenPrivate listens on a unix socket that is mode 0600 from its first moment: the umask is
// tightened while the socket file is made (the process's other files made in that instant come
// out stricter, never looser), so no other user can connect in between.
func listenPrivate(path string) (net.Listener, error) {
	old := syscall.Umask(0o177)
	ln, err := net.Listen("unix", path)
	syscall.Umask(old)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}

//go:build unix

package ops

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"syscall"
)

// MaxSocketPath is the longest path a unix socket address holds (sun_path without its NUL): 107
// bytes on Linux, 103 on the BSDs and macOS.
const MaxSocketPath = len(syscall.RawSockaddrUnix{}.Path) - 1

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

// currentUID is the user the bot runs as (a variable for the test of another user's socket).
var currentUID = os.Getuid

// ownedByMe tells whether a file belongs to the user the bot runs as.
func ownedByMe(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == currentUID()
}

// nobodyListens tells whether dialing a unix socket failed because nothing listens on it.
func nobodyListens(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }

//go:build !unix

package ops

import (
	"io/fs"
	"net"
	"os"
)

// MaxSocketPath is the longest path a unix socket address holds (sun_path without its NUL).
const MaxSocketPath = 107

// listenPrivate listens on a unix socket and makes it mode 0600 (where the system has modes).
func listenPrivate(path string) (net.Listener, error) {
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}

// ownedByMe: the system has no owners to compare in its file modes; a socket beside the
// database is taken as this user's.
func ownedByMe(fs.FileInfo) bool { return true }

// nobodyListens tells whether dialing a unix socket failed because nothing listens on it: here
// any failure to connect is taken so (the systems' own codes for it differ).
func nobodyListens(err error) bool { return err != nil }

// currentUID is the user the bot runs as (unused where files have no owners to compare).
var currentUID = os.Getuid

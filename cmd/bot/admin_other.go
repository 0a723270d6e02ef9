//go:build !unix

package main

import (
	"net"
	"os"
)

// maxSocketPath is the longest path a unix socket address holds (sun_path without its NUL).
const maxSocketPath = 107

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

//go:build !unix

package httpserve

// openFilesLimit is unknown here: the servers keep their configured bounds.
func openFilesLimit() int { return 0 }

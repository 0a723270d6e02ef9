package chat

import "time"

// StartError is how an adapter's Run says why it could not start, so that whoever runs the
// platforms can tell a failure worth retrying from one that needs a person. The wiring reads it
// through the methods alone (Permanent, RetryAfter), so it needs no import of this package.
type StartError struct {
	Err error
	// Fatal: trying again changes nothing (the token was refused); a person must fix it.
	Fatal bool
	// After is the least time to wait before trying again (a limit that renews then), or 0.
	After time.Duration
}

func (e *StartError) Error() string { return e.Err.Error() }
func (e *StartError) Unwrap() error { return e.Err }

// Permanent reports whether trying again is pointless.
func (e *StartError) Permanent() bool { return e.Fatal }

// RetryAfter is the least wait before another try.
func (e *StartError) RetryAfter() time.Duration { return e.After }

package chat

import (
	"errors"
	"sync"
)

// ErrNotYet is a link's state before its first exchange with the platform.
var ErrNotYet = errors.New("not connected yet")

// Link is the state of an adapter's connection to its platform, as the health check reports it:
// up after an exchange that worked, down with the last error while they fail. Errors must come
// redacted: they are shown to whoever reads /healthz.
type Link struct {
	mu  sync.Mutex
	err error
}

// NewLink is a link that has not yet reached its platform.
func NewLink() *Link { return &Link{err: ErrNotYet} }

// Up records an exchange that worked.
func (l *Link) Up() { l.set(nil) }

// Down records a failure to reach the platform.
func (l *Link) Down(err error) {
	if err == nil {
		err = ErrNotYet
	}
	l.set(err)
}

func (l *Link) set(err error) {
	l.mu.Lock()
	l.err = err
	l.mu.Unlock()
}

// Connected is nil while the platform answers, else why not.
func (l *Link) Connected() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

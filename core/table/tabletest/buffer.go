package tabletest

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// Buffer is output written from several goroutines — a logger, a child process, a terminal and
// the service's goroutines — and read by a test, which may wait for a text to show up in it. The
// zero value is empty and ready.
type Buffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{} // closed at the next write
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.changed != nil {
		close(b.changed)
		b.changed = nil
	}
	return b.b.Write(p)
}

// String is everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// next gives the text so far and a channel closed at the next write.
func (b *Buffer) next() (string, <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.changed == nil {
		b.changed = make(chan struct{})
	}
	return b.b.String(), b.changed
}

// Seen gives a channel closed once text is in the output; never, if it is not within d.
func (b *Buffer) Seen(text string, d time.Duration) <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		if b.await(text, d) {
			close(ch)
		}
	}()
	return ch
}

// WaitFor fails the test unless text is in the output within d.
func (b *Buffer) WaitFor(t testing.TB, text string, d time.Duration) {
	t.Helper()
	if !b.await(text, d) {
		t.Fatalf("no %q within %v:\n%s", text, d, b.String())
	}
}

// await reports whether text is in the output within d, waking at each write.
func (b *Buffer) await(text string, d time.Duration) bool {
	timeout := time.NewTimer(d)
	defer timeout.Stop()
	for {
		s, changed := b.next()
		if strings.Contains(s, text) {
			return true
		}
		select {
		case <-changed:
		case <-timeout.C:
			return false
		}
	}
}

// WaitUntil polls cond every few milliseconds until it holds, and fails the test, saying what it
// waited for, when within passes first.
func WaitUntil(tb testing.TB, within time.Duration, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("not within %v: %s", within, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

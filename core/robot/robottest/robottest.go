// Package robottest helps test what the computer players and the coach's judgements must not
// depend on: how fast the machine is.
package robottest

import "sync"

// Busy keeps n goroutines spinning, each a core's worth of someone else's work, until the
// function it gives is called: a machine whose every core is busy.
func Busy(n int) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for x := 0; ; x++ {
				select {
				case <-done:
					return
				default:
				}
				for range 1000 {
					x = x*31 + 7
				}
			}
		})
	}
	return func() { close(done); wg.Wait() }
}

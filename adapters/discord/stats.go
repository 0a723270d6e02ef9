package discord

// OutboxStats tells what the adapter's outbox did and how many messages wait in it, for metrics.
func (a *Adapter) OutboxStats() (sent, dropped, failed, rateLimited uint64, queued int) {
	s := a.out.Stats()
	queued, _ = a.out.Queued()
	return s.Sent, s.Dropped, s.Failed, s.RateLimited, queued
}

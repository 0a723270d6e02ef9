package discord

import "time"

// OutboxStats tells what the adapter's outbox did and how many messages wait in it, for metrics.
func (a *Adapter) OutboxStats() (sent, dropped, failed, rateLimited uint64, queued int) {
	s := a.out.Stats()
	queued, _ = a.out.Queued()
	return s.Sent, s.Dropped, s.Failed, s.RateLimited, queued
}

// LastUpdate is when Discord last brought an interaction (gateway or endpoint); zero: none since
// start.
func (a *Adapter) LastUpdate() time.Time { return a.traffic.LastUpdate() }

// WebhookRefusals counts the posts the interactions endpoint refused since start (a bad
// signature, not a POST, a body too large).
func (a *Adapter) WebhookRefusals() uint64 { return a.traffic.Refusals() }

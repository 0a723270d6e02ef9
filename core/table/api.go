// Package table is the platform-neutral table service: lobbies, seats, turns, timers, computer
// players, messages and durable storage of every accepted command. Chat adapters translate their
// events into Commands and deliver the Messages the service emits; no rule lives in an adapter.
package table

import (
	"github.com/kontermatt/kontermatt/core/privacy"
)

// People is how a platform's adapter keeps people in the KV, so that forgetting a person deletes
// what it keeps about them (Config.People): core/privacy's.
type People = privacy.People

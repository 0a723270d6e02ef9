// Package chat holds what both chat adapters share beyond the outbox: the part of the table
// service they call.
package chat

import (
	"context"
	"sync"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// Service is what a chat adapter asks of the table service; *table.Service satisfies it.
type Service interface {
	// Handle applies a command and gives the replies for its actor; its error says the command
	// could not be done at all (table.ErrNotStored, table.ErrStopped: see table.Service.Handle).
	Handle(ctx context.Context, cmd api.Command) ([]api.Message, error)
	// Picture renders the picture a message names (PNG) with its alt text.
	Picture(ctx context.Context, m api.Message, dark bool) (png []byte, alt string, err error)
	// AdminMatters reports whether a chat admin may do more with a verb than others: the
	// platform asks about the actor's rights for these alone (see table.Service.AdminMatters).
	AdminMatters(v api.Verb) bool
	// TableAt gives the ID of a place's current table, or "".
	TableAt(p api.Place) string
	// PlaceOf gives the place of a live table.
	PlaceOf(tableID string) (api.Place, bool)
	// Turn tells who must act at a table and which cards they may play.
	Turn(tableID string) (playerID string, legal []core.Card, trumpPhase bool)

	// What the platform did to a place (see core/table/move.go).

	// MovePlace moves a place's table to the place's new ID (a Telegram group that became a
	// supergroup).
	MovePlace(ctx context.Context, from, to api.Place) error
	// CloseChat closes the tables of a chat the bot was removed from.
	CloseChat(ctx context.Context, platform, chat string) (int, error)
	// ClosePlace closes the table of a place that is gone for good (a deleted forum topic).
	ClosePlace(ctx context.Context, p api.Place) (int, error)
	// Pause stops (or restarts) the computer players and timers of a place's table while the
	// place cannot be written to.
	Pause(ctx context.Context, p api.Place, paused bool) error
	// Paused reports whether a table is paused.
	Paused(tableID string) bool
	// Shown says that a place's public table message now shows the table at seq (the Version of
	// the message the platform took): the table's computer players wait for it (core/table/pace.go).
	Shown(p api.Place, seq uint64)
	// Owns reports whether this copy owns a place now (of several copies, its owner alone tells
	// the place's timeline: Owner).
	Owns(p api.Place) bool
	// Retell delivers the editable messages of a place's table again, as they stand (a copy
	// that took the place over tells what the previous owner left untold: Teller).
	Retell(ctx context.Context, p api.Place)
}

var (
	_ Service = (*table.Service)(nil)
	_ Fencer  = (*table.Service)(nil)
)

// Slot holds the service a chat adapter hands its commands to. An adapter embeds it: Attach sets
// the service before Run, and Service reads it from any goroutine.
type Slot struct {
	mu  sync.RWMutex
	svc Service
}

// Attach gives the adapter the service its commands go to. Call it before Run.
func (s *Slot) Attach(svc Service) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.svc = svc
}

// Service is the attached service, or nil before Attach.
func (s *Slot) Service() Service {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.svc
}

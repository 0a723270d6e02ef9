package table

import (
	"context"
	"errors"
	"time"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/picture"
	"github.com/kontermatt/kontermatt/core/store"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// The ports: everything the engine needs from outside it, in one place. The storage packages
// satisfy Store, KV, Swapper and Watcher, and give Leases, which decide which copy of the bot
// fires the timers (these are core/store's words, which the stores speak without the engine);
// the chat adapters Outbox; core/robot Decider; core/coach Coach. The clock is Config.Now,
// randomness Config.Random.
//
// Every method that may wait on a disk, a network or another process takes the caller's ctx
// first and returns an error: a cancelled ctx ends the wait (the call then fails with an error
// that wraps ctx's), so no command can hang on a store that does not answer.

// Errors of the service, the same for every command (test them with errors.Is).
var (
	// ErrNotStored is Handle's error when the command's change could not be stored, or what it
	// needed could not be read: the service rolled the table back, and the replies say so to
	// the actor. It wraps the store's error
	// (ErrUnavailable, ErrConflict, a cancelled ctx's). The platform may deliver the same command
	// again: its event ID makes it count once. A commit that failed with ErrUnavailable or a
	// cancelled ctx may still be applied by the store later (see ErrUnavailable); the command
	// sent again is then answered as a duplicate.
	ErrNotStored = errors.New("the command's change could not be stored")
	// ErrStopped is Handle's error once Close has been called: the command was not applied.
	ErrStopped = errors.New("the table service is stopping")
)

// The storage vocabulary is core/store's, which every store speaks without importing the engine;
// the engine names it as its own.
type (
	Store       = store.Store
	KV          = store.KV
	Swapper     = store.Swapper
	Watcher     = store.Watcher
	Change      = store.Change
	LogEntry    = store.LogEntry
	Record      = store.Record
	KVEntry     = store.KVEntry
	TableChange = store.TableChange
	Forgetting  = store.Forgetting
	Fence       = store.Fence
	Leases      = store.Leases      // which copy does what only one may (owner.go)
	LocalLeases = store.LocalLeases // the only copy's
	Spread      = store.Spread
	// ForgetPending is Store.Forget's error when the older versions of what it replaced stay
	// readable a while.
	ForgetPending = store.ForgetPending
)

// The store's errors (see core/store).
var (
	ErrConflict    = store.ErrConflict
	ErrUnavailable = store.ErrUnavailable
	ErrCompacted   = store.ErrCompacted
	ErrFenced      = store.ErrFenced
)

// Outbox delivers messages for one platform. The service calls Deliver after the change behind the
// messages is stored, with the table's lock held: Deliver must only queue (adapters rate-limit and
// send from their own goroutines, and do what they write to their KV there: a write is an fsync
// the table would wait for) and must not call back into the Service. So it neither waits nor
// fails, and gives no error: what cannot be sent is the adapter's to retry or log. After a restart
// (Resume) the service delivers every editable message once more, as it stands: an adapter that
// remembers what it last showed under a Key can skip an edit whose text and buttons are unchanged
// (button sequence numbers aside).
type Outbox interface {
	Deliver(ctx context.Context, msgs []api.Message)
}

// Decider is a computer player: it sees one seat's View and returns a move for it. The robot
// package's players satisfy it; the service never shows a Decider anything but a View. It thinks
// within ctx, which the service bounds by Config.Think, and always gives a move.
type Decider interface {
	Decide(ctx context.Context, v core.View) core.Move
}

// Coach judges players' decisions for them (issue 16, coach.go): a hint for one's own turn at a
// table with hints on, a private review of each game for the players who ask for it, and the lessons of a guided game
// (learn). core/coach's Coach is the one the bot gives the service; without one there are no
// hints, reviews or lessons. It is shown what its player could see and nothing more: their View,
// or a game that has ended (every card in it has been played face up). The service closes it
// when it closes. Its methods compute within a budget of their own and do no I/O; Review only
// queues.
type Coach interface {
	// Hint is the strong choice for the view with a one-line reason, in lang. It is judged on
	// ctx, the asker's command's, within the coach's budget; seed makes it repeat.
	Hint(ctx context.Context, v core.View, seed uint64, lang string) string
	// Review asks for the review of seat's decisions in game g, the n-th of its match, begun with
	// the stripes open; done gets its text in lang from one of the coach's workers. The review
	// is kept under key (see Reviewed); asked for again while it is judged, it is judged once.
	// False when the coach has no room for it.
	Review(key string, g core.Game, seat core.Seat, open [2]int, n int, lang string, done func(text string)) bool
	// Reviewed gives a review made under key, while the coach keeps it.
	Reviewed(key string) (string, bool)
	// Lesson explains a guided game's turn to its learner, who sees v.
	Lesson(lang string, v core.View) string
	// Stripes explains to a guided game's learner how game g, just finished, moved the stripes,
	// open now as board says.
	Stripes(lang string, g *core.Game, board core.Board) string
	// Close stops the coach's workers and waits for them.
	Close()
}

// League keeps every place's league from the matches the engine keeps (core/league/keeper is the
// bot's; Config.League). The engine hands it each kept match as the change that keeps it is
// written, and writes the league's entries in that same change, so the league never disagrees
// with the records whatever crashes when; what the league shows (its verbs, its posts) is its own.
type League interface {
	// Learn works out what a kept match changes in the league: rec as the change keeps it, m
	// the match it ended. The update's KV entries are written in the same Change, guarded by
	// its Expect (compare-and-swap: ErrConflict when another match end changed one meanwhile,
	// and the command is then applied again); Done is called after the commit with whether it
	// was stored. An error: the match is kept without the league learning it (stats rebuild
	// repairs that).
	Learn(ctx context.Context, rec Record, m *core.Match) (LeagueUpdate, error)
	// Hold waits for the match ends in flight and keeps new ones from learning until release:
	// for a change that writes the whole league anew without a compare (Forget).
	Hold() (release func())
	// Rebuild makes every league entry anew from records (a Store's Records, or one like it),
	// and names the buckets they fill, which the change writing them empties first.
	Rebuild(ctx context.Context, records func(ctx context.Context, fn func(key string, data []byte) error) error) (entries []KVEntry, buckets []string, err error)
	// PostSeasons posts last month's final tables at the places that had one, once across the
	// copies of the bot; the engine calls it while this copy holds the lease to do so.
	PostSeasons(ctx context.Context, at Posting)
	// StandingsPicture draws a place's table of a season ("2026-11", or "all"; another season:
	// ErrNoPicture) in lang, without the people hidden says are never shown, and its alt text.
	StandingsPicture(ctx context.Context, p api.Place, season, lang string, th picture.Theme, hidden func(id string) bool) (png []byte, alt string, err error)
}

// LeagueUpdate is what a match end changes in the league (League.Learn).
type LeagueUpdate struct {
	KV, Expect []KVEntry
	Done       func(stored bool)
}

// Posting is what the engine lends the league to post at places (League.PostSeasons).
type Posting struct {
	Now     time.Time
	Lang    func(ctx context.Context, placeKey string) string // a place's own language ("": none chosen)
	Hidden  func(id string) bool                              // a person never shown in a league
	Deliver func(ctx context.Context, platform string, msgs []api.Message)
}

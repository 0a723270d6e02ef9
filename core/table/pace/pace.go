// Package pace keeps a table's game at a human pace: the game never runs ahead of what its place
// can show. Where an adapter reports what the place's public table message shows, a computer
// player's move waits until the place shows the table as it was before it (within Pace.Wait), and
// then as long as the moment asks: a finished trick stays in view with its winner (Pace.Trick), a
// game's result before the next game's first move (Pace.Game), and any card a moment
// (Pace.Card). A person's own move never waits; but a person who plays at once is not let run
// ahead of the place either: the prompt that lets them (their hand, with "your turn") waits,
// within Pace.Wait, until the place shows a finished trick or a game's result, so that the place
// is never a trick or a game behind. A place whose adapter never reports (the terminal) is not
// held back.
//
// The seam exists so that the arithmetic of waiting can be read and tested without a table: it
// needs the clock, the presets' times, the adapters' reports (Pacer.Report, Place.Note), the
// versions the engine published at the place (Pacer.Published) and the moment of its game
// (At). It does no I/O and arms no timer: the engine (package table) holds a computer's move or
// the players' hands for as long as Pacer.Wait says, and lets them go on a report.
package pace

import (
	"sync"
	"time"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/options"
)

// Pace is what a preset means in time.
type Pace struct {
	// Card is how long a card (or a call) is in view before a computer plays the next one.
	Card time.Duration
	// Trick is how long a finished trick is in view, with its winner, before a computer plays on.
	Trick time.Duration
	// Game is how long a game's result is in view before a computer makes the next game's first
	// move.
	Game time.Duration
	// TrickShown is how long a finished trick stays in view before anything replaces it, even a
	// person's card: adapters hold the next edit of the table message that long
	// (table.Message.HoldFor).
	TrickShown time.Duration
	// Wait bounds how long a computer waits for the place to show what came before: a surface
	// that is slow or stuck does not stop the table.
	Wait time.Duration
}

// Defaults are the presets' times.
var Defaults = map[options.PacePreset]Pace{
	options.PaceFast:    {Card: 0, Trick: time.Second, Game: 2 * time.Second, TrickShown: time.Second, Wait: 6 * time.Second},
	options.PaceNormal:  {Card: 600 * time.Millisecond, Trick: 2 * time.Second, Game: 4 * time.Second, TrickShown: time.Second, Wait: 8 * time.Second},
	options.PaceRelaxed: {Card: 1500 * time.Millisecond, Trick: 3 * time.Second, Game: 6 * time.Second, TrickShown: 1500 * time.Millisecond, Wait: 10 * time.Second},
}

// Moment is where a table's game is, as far as its pace cares: what its place shows now and
// how long that should stay in view.
type Moment uint8

// The moments.
const (
	None  Moment = iota // no game under way: nothing to wait for
	Card                // a card or a call was just made
	Trick               // a trick just finished, and who won it is shown
	Deal                // the last game's result is shown, and the next is dealt
)

// At is the moment of a match whose game g is under way (nil: none is).
func At(m *core.Match, g *core.Game) Moment {
	switch {
	case g == nil:
		return None
	case m.NumGames() > 1 && len(g.Moves()) == 0:
		return Deal
	case g.Phase() == core.PhasePlay && g.TricksDone() > 0 && g.CurrentTrick().N == 0:
		return Trick
	}
	return Card
}

// InView is how long the table at the moment should be in view before a computer moves.
func (mo Moment) InView(p Pace) time.Duration {
	switch mo {
	case None:
		return 0
	case Deal:
		return p.Game
	case Trick:
		return p.Trick
	}
	return p.Card
}

// HoldFor is how long the place's table message should keep the moment in view before the
// next edit replaces it (table.Message.HoldFor): a finished trick, Pace.TrickShown.
func (mo Moment) HoldFor(p Pace) time.Duration {
	if mo == Trick {
		return p.TrickShown
	}
	return 0
}

// Boundary reports whether the moment is one the place must show before anyone plays on: a
// finished trick or a new deal.
func (mo Moment) Boundary() bool { return mo == Trick || mo == Deal }

// Pacer works out the pace of every table of one engine: the presets' times, the clock, and
// which platforms' adapters report what their places show. Its zero value gives the presets'
// default times; Wait and Published need its clock.
type Pacer struct {
	// Paces are the presets' times; nil, or a preset not in it: Defaults.
	Paces map[options.PacePreset]Pace
	// Now is the clock.
	Now       func() time.Time
	reporting sync.Map // platform → true (Report)
}

// Of is a preset's times.
func (pc *Pacer) Of(preset options.PacePreset) Pace {
	if p, ok := pc.Paces[preset]; ok {
		return p
	}
	if p, ok := Defaults[preset]; ok {
		return p
	}
	return Defaults[options.PaceNormal]
}

// Report says that the adapter of platform reports what its places' table messages show, from
// its start: their tables are paced before the first report too.
func (pc *Pacer) Report(platform string) { pc.reporting.Store(platform, true) }

// Gated reports whether the place, of platform, reports what it shows: only then does its game
// wait for it.
func (pc *Pacer) Gated(pl *Place, platform string) bool {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if !pl.reports {
		_, pl.reports = pc.reporting.Load(platform)
	}
	return pl.reports
}

// Published notes that the public table message of version was handed to the place's adapter
// (or, if version is the last one noted, one more message published with it).
func (pc *Pacer) Published(pl *Place, version uint64) {
	switch {
	case version < pl.published:
	case version > pl.published:
		pl.many = 1
		pl.published, pl.publishedAt = version, pc.Now()
	default:
		pl.many++
	}
}

// Wait is how long a computer's move must still wait for the place, of platform, at the moment
// mo of a table of pace p: until the place shows the last version published (at most WaitLimit
// after it was published), then as long as the moment asks to stay in view.
func (pc *Pacer) Wait(pl *Place, platform string, p Pace, mo Moment) time.Duration {
	if !pc.Gated(pl, platform) || pl.published == 0 {
		return 0
	}
	now := pc.Now()
	shown, shownAt := pl.Last()
	var from time.Time // since when the place shows the table as it is
	switch giveUp := pl.publishedAt.Add(pl.WaitLimit(p)); {
	case shown >= pl.published:
		from = shownAt
	case now.Before(giveUp):
		return giveUp.Sub(now) // a report plays it sooner
	default:
		from = giveUp // not shown in time: the table goes on
	}
	return max(from.Add(mo.InView(p)).Sub(now), 0)
}

// Place is what one place's public table message shows, as its adapter reports (Note), and what
// the engine last published there (Pacer.Published). It lives in memory: after a restart the
// place is not gated until its adapter reports again. Its reports have a lock of their own, which
// guards memory only: a report never waits for the table's lock, which a command holds through
// the table's commit. What was published is the table's lock's. The zero value is a place that
// was shown nothing.
type Place struct {
	mu sync.Mutex
	// reports says an adapter reported this place's shown-ness (or its platform's adapter said
	// it will, Pacer.Report).
	reports bool
	// shown is the highest version an adapter reported shown, at shownAt (the report's time).
	shown   uint64
	shownAt time.Time
	// waking says someone waits for the table's lock to act on the reports (Wake).
	waking bool

	// published is the version of the last public table message handed to the adapter, at
	// publishedAt; many is how many public messages were published with it (a new deal's: the
	// last game's table, its result, the new table), which the place shows one after another.
	published   uint64
	publishedAt time.Time
	many        int
}

// Note takes a report of version seq shown at now; false when an equal or newer one came before.
func (pl *Place) Note(seq uint64, now time.Time) bool {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	pl.reports = true
	if seq <= pl.shown {
		return false
	}
	pl.shown, pl.shownAt = seq, now
	return true
}

// Last gives the highest version reported shown, and when.
func (pl *Place) Last() (uint64, time.Time) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	return pl.shown, pl.shownAt
}

// Reported reports whether an adapter reported what the place shows (or, once Pacer.Gated looked,
// its platform's adapter said it would), and the last version published there (the table's lock
// held).
func (pl *Place) Reported() (reports bool, published uint64) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	return pl.reports, pl.published
}

// Wake reports whether the caller is the one to wait for the table's lock to act on the reports:
// false while another waits already, who acts on this report too (then Woken).
func (pl *Place) Wake() bool {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if pl.waking {
		return false
	}
	pl.waking = true
	return true
}

// Woken says the one who waited (Wake) holds the table's lock: a report after this wakes anew.
func (pl *Place) Woken() {
	pl.mu.Lock()
	pl.waking = false
	pl.mu.Unlock()
}

// WaitLimit bounds how long the table waits for its place to show the last version published:
// Pace.Wait for each public message published with it.
func (pl *Place) WaitLimit(p Pace) time.Duration {
	return p.Wait * time.Duration(max(pl.many, 1))
}

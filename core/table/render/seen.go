package render

import (
	"time"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/options"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/pace"
)

// Seen is a table as one reader may see it, copied under the table's lock for a surface that
// draws the table itself (the web table, adapters/web): the public view of its games and the
// reader's own view of the game in play, never another seat's hand. Names are in the reader's
// language ("Ordinateur 2" for a French reader at a Luxembourgish table).
type Seen struct {
	ID     string
	Seq    uint64 // the table's sequence number: a move made from this sight carries it
	Status api.Status
	Title  string // the place's name, when the platform told it
	Lang   string // the reader's language
	// Reader is the reader's seat, core.NoSeat when they do not sit at the table.
	Reader  core.Seat
	Seats   [4]SeenSeat
	Options string    // the table's options, as the lobby lists them
	Stripes int       // the stripes a team starts with
	Pace    pace.Pace // the table's pace: how long the chats hold a card, a trick, a result
	// Games is how many games the match has dealt (0 before the first deal); Last the public view
	// of the last of them and Before of the one before it (nil when there is none).
	Games        int
	Last, Before *core.View
	// Own is the reader's view of the game in play: their hand, legal cards and calls. nil when
	// they do not sit at the table or no game is in play.
	Own     *core.View
	History []core.GameScore // a line per finished game of the match
	Board   core.Board
	// Clock is the turn's time while it runs; nil without a timer, while a computer (or one
	// playing for an absent person) is to move, or while the table is paused.
	Clock *TurnClock
}

// SeenSeat is a seat as everyone sees it.
type SeenSeat struct {
	Name                      string // the reader's words for an empty seat or a computer player
	Human, Robot, Away, Empty bool
}

// TurnClock is the turn's time: whose it is, and how long until a computer plays for them.
type TurnClock struct {
	Seat        core.Seat
	Left, Total time.Duration
	Reminded    bool // they were reminded: the time is nearly up
}

// Seen is what the person p may see of a table: reader is their seat (NoSeat when they sit at
// none), own their view of the game in play (nil when there is none, or they do not play it),
// clock the turn's time (nil when none runs) and pc the table's pace.
func (r Renderer) Seen(sh *Sight, p api.Player, reader core.Seat, own *core.View, clock *TurnClock, pc pace.Pace) Seen {
	lang := r.PersonLang(p, sh.Lang)
	v := Seen{ID: sh.ID, Seq: sh.Seq, Status: sh.Status, Title: sh.Place.Title, Lang: lang, Reader: reader,
		Options: options.Line(lang, sh.Options), Stripes: sh.Options.Rules.Stripes, Pace: pc}
	for i, ss := range sh.Seats {
		v.Seats[i] = SeenSeat{Name: sh.SeatNameIn(lang, core.Seat(i)), Human: ss.Human(), Robot: ss.Robot, Away: ss.Away,
			Empty: ss.Empty()}
		if ss.Empty() {
			v.Seats[i].Name = i18n.T(lang, "seat.empty")
		}
	}
	if !sh.Match {
		return v
	}
	v.Games, v.History, v.Board = sh.Games, sh.History(), sh.Board
	if n := sh.Games; n > 0 {
		last := sh.Public(n)
		v.Last = &last
		if n > 1 {
			before := sh.Public(n - 1)
			v.Before = &before
		}
	}
	v.Own, v.Clock = own, clock
	return v
}

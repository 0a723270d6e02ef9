package web

import (
	"context"
	"slices"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/render"
)

// The web table shows a table as one page per person: the public table, and the reader's own hand
// when they sit there. seatView builds it from what the service lets that reader see
// (render.Seen: the public views and that one seat's core.View), so no other seat's cards can be
// in it.
//
// A view is the table as it stands, and the page may get only the newest of several (the hub
// takes changes together). So each view also carries what a player must still see of what just
// happened: the trick taken last (Game.Last) and, until the next game's first trick is taken,
// the game that ended (Ended) with its last trick and result. Names are in the reader's language
// ("Ordinateur 2" for a French reader at a Luxembourgish table).

// SeatView is what one person may see of a table, in their language.
type SeatView struct {
	Table  string     `json:"table"`
	Seq    uint64     `json:"seq"` // the table's sequence number: a move made from this view carries it
	Status api.Status `json:"status"`
	Title  string     `json:"title,omitempty"` // the place's name, when the platform told it
	Lang   string     `json:"lang"`
	// You is the reader's seat (0-3), or -1 when they do not sit at the table.
	You     int          `json:"you"`
	Seats   [4]ViewSeat  `json:"seats"`
	Options string       `json:"options"` // the table's options, as the lobby lists them
	Game    *ViewGame    `json:"game,omitempty"`
	Hand    []ViewCard   `json:"hand,omitempty"`   // the reader's own cards (during the trump phase the first packet)
	Trumps  []ViewChoice `json:"trumps,omitempty"` // the suits the reader may name now
	Calls   []ViewChoice `json:"calls,omitempty"`  // the calls the reader may make now
	Board   ViewBoard    `json:"board"`
	Say     string       `json:"say"` // one line for the reader: what happens now, or what to do
	// Ended is the game that ended last, while the next one has no trick taken yet (or the match
	// is over): its last trick and its result, which the page holds until the players saw them.
	Ended *ViewEnded `json:"ended,omitempty"`
	// Clock is the turn's time while it runs: whose it is and how long until a computer plays
	// for them; nil without a timer, while a computer is to move, or while the table is paused.
	Clock *ViewClock `json:"clock,omitempty"`
	// Pace is the table's pace, as the chats follow it: how long a computer's card and a
	// finished trick stay in view before what comes next.
	Pace ViewPace `json:"pace"`
	// What the reader may do now besides the game's moves.
	CanDeal    bool `json:"can_deal,omitempty"`
	CanJoin    bool `json:"can_join,omitempty"`
	CanRematch bool `json:"can_rematch,omitempty"`
}

// ViewPace is the table's pace in milliseconds (table.Pace).
type ViewPace struct {
	Card  int64 `json:"card_ms"`
	Trick int64 `json:"trick_ms"`
}

// ViewSeat is a seat as everyone sees it.
type ViewSeat struct {
	Name   string `json:"name"`
	Team   string `json:"team"`
	Human  bool   `json:"human,omitempty"`
	Robot  bool   `json:"robot,omitempty"`
	Away   bool   `json:"away,omitempty"`
	Cards  int    `json:"cards"` // how many cards the seat holds (public)
	Dealer bool   `json:"dealer,omitempty"`
	ToMove bool   `json:"to_move,omitempty"`
}

// ViewCard is a card with how it is drawn: Card is its code ("QS"), Label its chat form ("Q♠").
// The page names it in words and draws its rank's letter in the reader's language from the
// catalog (pageStrings).
type ViewCard struct {
	Card  string `json:"card"`
	Label string `json:"label"`
	Rank  string `json:"rank"`
	Suit  string `json:"suit"` // S, H, D, C
	Red   bool   `json:"red,omitempty"`
	Legal bool   `json:"legal,omitempty"` // the reader may play it now
	// Trump marks a trump in the reader's hand: the trump suit's cards and the three permanent
	// queens (those also while trump is being named). The hand lists its trumps first.
	Trump bool `json:"trump,omitempty"`
}

// ViewClock is the turn's time.
type ViewClock struct {
	Seat     int   `json:"seat"`               // whose time runs
	Left     int64 `json:"left_ms"`            // until a computer plays for them, in ms (0 when due)
	Total    int64 `json:"total_ms"`           // the turn's whole time, in ms
	Reminded bool  `json:"reminded,omitempty"` // they were reminded: the time is nearly up
}

// ViewEnded is a game that ended: its last trick and its result, as the chat's summary says it.
type ViewEnded struct {
	No      int       `json:"no"`
	Last    ViewTrick `json:"last"`
	Winner  string    `json:"winner,omitempty"` // "A" or "B"; "" for a draw
	Points  [2]int    `json:"points"`
	Stripes [2]int    `json:"stripes"` // the change each team's open stripes took
	Stake   int       `json:"stake"`   // what the game was played for: 1, plus Konter, plus Matt
	Text    string    `json:"text"`    // "🏁 Game 3: team A (…) wins 25 to 15."
}

// ViewChoice is a move the reader may make: its argument and its label.
type ViewChoice struct {
	Arg   string `json:"arg"`
	Label string `json:"label"`
}

// ViewPlay is one card of a trick and the seat that played it.
type ViewPlay struct {
	Seat int      `json:"seat"`
	Card ViewCard `json:"card"`
}

// ViewTrick is a trick in play order; Winner is -1 until it is complete.
type ViewTrick struct {
	No     int        `json:"no"` // the trick's number in its game, from 1
	Plays  []ViewPlay `json:"plays"`
	Winner int        `json:"winner"`
	Points int        `json:"points"`
	Won    string     `json:"won,omitempty"` // who took it, as the chat says it: "Anna wins 14 points"
}

// ViewCall is an announcement.
type ViewCall struct {
	Seat  int    `json:"seat"`
	Title string `json:"title"`
}

// ViewGame is the game in progress, or the last one played.
type ViewGame struct {
	No         int        `json:"no"`
	Phase      string     `json:"phase"` // trump, play, over
	Dealer     int        `json:"dealer"`
	Forehand   int        `json:"forehand"`
	ToMove     int        `json:"to_move"` // -1 when the game is over
	Trump      string     `json:"trump,omitempty"`
	TrumpLabel string     `json:"trump_label,omitempty"`
	TrumpTeam  string     `json:"trump_team"`
	Trick      ViewTrick  `json:"trick"`
	Last       *ViewTrick `json:"last,omitempty"`
	Calls      []ViewCall `json:"calls,omitempty"`
	Stake      int        `json:"stake"`
	Points     [2]int     `json:"points"`
	Tricks     [2]int     `json:"tricks"`
	Score      string     `json:"score"` // the live message's score line
}

// ViewBoard is the stripe board: open stripes per team and a line per finished game.
type ViewBoard struct {
	Start  int         `json:"start"`
	Open   [2]int      `json:"open"`
	Teams  [2]string   `json:"teams"`
	Games  []ViewScore `json:"games,omitempty"`
	Winner string      `json:"winner,omitempty"` // "A" or "B" once the match is won
}

// ViewScore is one finished game on the board.
type ViewScore struct {
	No        int    `json:"no"`
	Trump     string `json:"trump"` // its symbol
	TrumpTeam string `json:"trump_team"`
	Points    [2]int `json:"points"`
	Stripes   [2]int `json:"stripes"` // the change each team's open stripes took
}

// SeatView gives what the person p sees of a table now: the public table, and their own hand if
// they sit there. false when the table is unknown or closed.
func (s *Server) SeatView(ctx context.Context, tableID string, p api.Player) (SeatView, bool) {
	seen, ok := s.service().Seen(ctx, tableID, p)
	if !ok {
		return SeatView{}, false
	}
	return seatView(seen), true
}

func seatView(sn render.Seen) SeatView {
	lang, seat := sn.Lang, sn.Reader
	v := SeatView{Table: sn.ID, Seq: sn.Seq, Status: sn.Status, Title: sn.Title, Lang: lang, You: int(seat),
		Options: sn.Options, Pace: ViewPace{Card: sn.Pace.Card.Milliseconds(), Trick: sn.Pace.Trick.Milliseconds()}}
	pub := sn.Last
	for i, ss := range sn.Seats {
		vs := ViewSeat{Name: ss.Name, Team: core.Seat(i).Team().String(), Human: ss.Human, Robot: ss.Robot, Away: ss.Away}
		if pub != nil {
			vs.Cards = pub.HandSizes[i]
			vs.Dealer = pub.Dealer == core.Seat(i)
			vs.ToMove = sn.Status == api.StatusPlaying && pub.ToMove == core.Seat(i)
		}
		v.Seats[i] = vs
	}
	v.Board = viewBoard(sn)
	switch sn.Status {
	case api.StatusLobby:
		v.Say = i18n.T(lang, "lobby.title")
		v.CanDeal = seat != core.NoSeat
		v.CanJoin = seat == core.NoSeat
		return v
	case api.StatusClosed:
		v.Say = i18n.T(lang, "live.closed")
	case api.StatusOver:
		v.CanRematch = seat != core.NoSeat
		if w, ok := sn.Board.Winner(); ok {
			v.Say = i18n.N(lang, "summary.match", sn.Games, w.String(), teamNames(sn, w))
		}
	}
	if pub == nil {
		return v
	}
	v.Game = viewGame(sn, *pub)
	v.Ended = viewEnded(sn, len(pub.Tricks))
	if sn.Status != api.StatusPlaying || pub.Phase == core.PhaseOver {
		return v
	}
	if c := sn.Clock; c != nil {
		v.Clock = &ViewClock{Seat: int(c.Seat), Left: c.Left.Milliseconds(), Total: c.Total.Milliseconds(), Reminded: c.Reminded}
	}
	mine := sn.Own
	if mine == nil {
		v.Say = publicSay(sn, *pub)
		return v
	}
	for _, c := range handOrder(mine.Hand, mine.Trump) {
		vc := viewCard(lang, c)
		vc.Legal = mine.Legal.Has(c)
		vc.Trump = isTrump(c, mine.Trump)
		v.Hand = append(v.Hand, vc)
	}
	switch {
	case mine.Phase == core.PhaseTrump && mine.ToMove == seat:
		v.Say = i18n.T(lang, "hand.choose_trump")
		for _, x := range core.Suits {
			v.Trumps = append(v.Trumps, ViewChoice{Arg: x.String(), Label: i18n.SuitLabel(lang, x)})
		}
	case mine.ToMove == seat:
		v.Say = i18n.T(lang, "hand.your_turn")
	default:
		v.Say = publicSay(sn, *pub)
	}
	if mine.Phase == core.PhasePlay {
		for _, c := range mine.Calls {
			v.Calls = append(v.Calls, ViewChoice{Arg: c.String(), Label: c.Title()})
		}
	}
	return v
}

// publicSay is the line everyone reads: who chooses trump, or whose turn it is.
func publicSay(sn render.Seen, pub core.View) string {
	if pub.Phase == core.PhaseTrump {
		return i18n.T(sn.Lang, "live.choosing", seatName(sn, pub.ToMove))
	}
	return i18n.T(sn.Lang, "live.turn", seatName(sn, pub.ToMove))
}

// seatName is a seat's name for the reader.
func seatName(sn render.Seen, seat core.Seat) string {
	if !seat.Valid() {
		return "?"
	}
	return sn.Seats[seat].Name
}

func teamNames(sn render.Seen, team core.Team) string {
	seats := team.Seats()
	return seatName(sn, seats[0]) + " & " + seatName(sn, seats[1])
}

// isTrump: the trump suit's cards and the permanent queens, these also before trump is named.
func isTrump(c core.Card, trump core.Suit) bool {
	if !trump.Valid() {
		return c == core.QueenSpades || c == core.QueenHearts || c == core.QueenDiamonds
	}
	return core.IsTrump(c, trump)
}

// handOrder lists a hand as a player holds it: the trumps first, highest first, then each other
// suit from the ace down.
func handOrder(hand core.CardSet, trump core.Suit) []core.Card {
	order := core.TrumpOrder(trump)
	if !trump.Valid() {
		order = []core.Card{core.QueenSpades, core.QueenHearts, core.QueenDiamonds}
	}
	var out []core.Card
	for _, c := range order {
		if hand.Has(c) {
			out = append(out, c)
		}
	}
	var rest []core.Card
	for _, c := range hand.Cards() {
		if !slices.Contains(out, c) {
			rest = append(rest, c)
		}
	}
	slices.SortStableFunc(rest, func(a, b core.Card) int {
		if a.Suit() != b.Suit() {
			return int(a.Suit()) - int(b.Suit())
		}
		return int(b.Rank()) - int(a.Rank())
	})
	return append(out, rest...)
}

// viewCard is a card for the page; its label has the reader's language's rank letter (D♠ in de),
// as the chat writes it.
func viewCard(lang string, c core.Card) ViewCard {
	return ViewCard{Card: c.String(), Label: i18n.Card(lang, c), Rank: c.Rank().String(), Suit: c.Suit().String(), Red: c.Suit().Red()}
}

// viewTrick is trick number no of a game; who took it is said to the reader as "You win …".
func viewTrick(sn render.Seen, no int, tr core.Trick) ViewTrick {
	lang := sn.Lang
	vt := ViewTrick{No: no, Winner: -1, Points: tr.Points()}
	for i := 0; i < tr.N; i++ {
		vt.Plays = append(vt.Plays, ViewPlay{Seat: int(tr.SeatOf(i)), Card: viewCard(lang, tr.Cards[i])})
	}
	if tr.Winner.Valid() {
		vt.Winner = int(tr.Winner)
		if tr.Winner == sn.Reader {
			vt.Won = i18n.N(lang, "trick.won.you", tr.Points())
		} else {
			vt.Won = i18n.N(lang, "trick.won", tr.Points(), seatName(sn, tr.Winner))
		}
	}
	return vt
}

func viewGame(sn render.Seen, pub core.View) *ViewGame {
	lang := sn.Lang
	vg := &ViewGame{No: sn.Games, Phase: pub.Phase.String(), Dealer: int(pub.Dealer), Forehand: int(pub.Forehand),
		ToMove: int(pub.ToMove), TrumpTeam: pub.TrumpTeam.String(), Stake: pub.Stake, Points: pub.Points, Tricks: pub.TricksWon,
		Trick: viewTrick(sn, len(pub.Tricks)+1, pub.Trick),
		Score: i18n.T(lang, "live.score", pub.TricksWon[0], pub.TricksWon[1], pub.Points[0], pub.Points[1])}
	if !pub.ToMove.Valid() {
		vg.ToMove = -1
	}
	if pub.Trump.Valid() {
		vg.Trump, vg.TrumpLabel = pub.Trump.String(), i18n.SuitLabel(lang, pub.Trump)
	}
	if n := len(pub.Tricks); n > 0 {
		last := viewTrick(sn, n, pub.Tricks[n-1])
		vg.Last = &last
	}
	for _, a := range pub.Announcements {
		vg.Calls = append(vg.Calls, ViewCall{Seat: int(a.Seat), Title: a.Call.Title()})
	}
	return vg
}

// viewEnded is the game that ended last while the players are still to see it: the match's last
// game once it is over, or the game before the current one while the current has no trick
// taken (taken is how many it has).
func viewEnded(sn render.Seen, taken int) *ViewEnded {
	n, g := sn.Games, sn.Last
	if n > 1 && g.Phase != core.PhaseOver && taken == 0 {
		n, g = n-1, sn.Before
	}
	if g == nil || g.Phase != core.PhaseOver || len(g.Tricks) == 0 || n > len(sn.History) {
		return nil
	}
	r := g.Result
	ve := &ViewEnded{No: n, Last: viewTrick(sn, len(g.Tricks), g.Tricks[len(g.Tricks)-1]), Points: r.Points,
		Stripes: sn.History[n-1].Applied, Stake: r.Stake, Text: i18n.T(sn.Lang, "summary.draw", n)}
	if w, ok := r.Outcome.Winner(); ok {
		ve.Winner = w.String()
		ve.Text = i18n.T(sn.Lang, "summary.won", n, w.String(), teamNames(sn, w), r.Points[w], r.Points[w.Other()])
	}
	return ve
}

func viewBoard(sn render.Seen) ViewBoard {
	vb := ViewBoard{Start: sn.Stripes, Teams: [2]string{teamNames(sn, core.TeamA), teamNames(sn, core.TeamB)}}
	b := core.Board{Start: sn.Stripes}
	if sn.Games > 0 {
		b = sn.Board
		for i, h := range sn.History {
			vb.Games = append(vb.Games, ViewScore{No: i + 1, Trump: h.Trump.Symbol(), TrumpTeam: h.TrumpTeam.String(),
				Points: h.Points, Stripes: h.Applied})
		}
		if w, ok := b.Winner(); ok {
			vb.Winner = w.String()
		}
	}
	vb.Open = b.OpenBoth()
	return vb
}

// FirstMove is a move the reader of v may make now, as the page sends it: the first trump
// offered, else their first legal card ("play" with no card when they hold none that is
// legal). Tests and tools that play through the page's protocol pick moves with it.
func (v SeatView) FirstMove() (verb, arg string) {
	if len(v.Trumps) > 0 {
		return "trump", v.Trumps[0].Arg
	}
	for _, c := range v.Hand {
		if c.Legal {
			return "play", c.Card
		}
	}
	return "play", ""
}

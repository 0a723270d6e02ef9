package table

import (
	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/i18n"
)

// The web table (adapters/web) shows a table as one page per person: the public table, and the
// reader's own hand when they sit there. SeatView builds it from the public view and that one
// seat's core.View, as handMessage does, so no other seat's cards can be in it.

// SeatView is what one person may see of a table, in their language.
type SeatView struct {
	Table  string `json:"table"`
	Seq    uint64 `json:"seq"` // the table's sequence number: a move made from this view carries it
	Status Status `json:"status"`
	Title  string `json:"title,omitempty"` // the place's name, when the platform told it
	Lang   string `json:"lang"`
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
	// What the reader may do now besides the game's moves.
	CanDeal    bool `json:"can_deal,omitempty"`
	CanJoin    bool `json:"can_join,omitempty"`
	CanRematch bool `json:"can_rematch,omitempty"`
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
type ViewCard struct {
	Card  string `json:"card"`
	Label string `json:"label"`
	Rank  string `json:"rank"`
	Suit  string `json:"suit"` // S, H, D, C
	Red   bool   `json:"red,omitempty"`
	Legal bool   `json:"legal,omitempty"` // the reader may play it now
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
	Plays  []ViewPlay `json:"plays"`
	Winner int        `json:"winner"`
	Points int        `json:"points"`
	Text   string     `json:"text,omitempty"` // as the chat says it
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
// they sit there. false when the table is not in memory (unknown, or closed and gone).
func (s *Service) SeatView(tableID string, p Player) (SeatView, bool) {
	t, ok := s.table(tableID)
	if !ok {
		return SeatView{}, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return s.seatView(t, p), true
}

func (s *Service) seatView(t *tbl, p Player) SeatView {
	st := t.st
	seat := seatOf(st, p.ID)
	lang := i18n.Pick(p.Locale, st.Lang)
	if l := s.users.lang(p.ID); l != "" {
		lang = l
	}
	v := SeatView{Table: st.ID, Seq: st.Seq, Status: st.Status, Title: st.Place.Title, Lang: lang, You: int(seat),
		Options: optionsLine(lang, t.opts)}
	g := t.lastGame()
	var pub core.View
	if g != nil {
		pub = g.View(core.NoSeat)
	}
	for i, ss := range st.Seats {
		vs := ViewSeat{Name: seatName(t, core.Seat(i)), Team: core.Seat(i).Team().String(), Human: ss.Human(),
			Robot: ss.Robot, Away: ss.Away}
		if ss.Empty() {
			vs.Name = i18n.T(lang, "seat.empty")
		}
		if g != nil {
			vs.Cards = pub.HandSizes[i]
			vs.Dealer = pub.Dealer == core.Seat(i)
			vs.ToMove = st.Status == StatusPlaying && pub.ToMove == core.Seat(i)
		}
		v.Seats[i] = vs
	}
	v.Board = s.viewBoard(t)
	switch st.Status {
	case StatusLobby:
		v.Say = i18n.T(lang, "lobby.title")
		v.CanDeal = seat != core.NoSeat
		v.CanJoin = seat == core.NoSeat
		return v
	case StatusClosed:
		v.Say = i18n.T(lang, "live.closed")
	case StatusOver:
		v.CanRematch = seat != core.NoSeat
		if w, ok := t.match.Winner(); ok {
			v.Say = i18n.N(lang, "summary.match", t.match.NumGames(), w.String(), s.teamNames(t, w))
		}
	}
	if g == nil {
		return v
	}
	v.Game = s.viewGame(t, lang, pub)
	if st.Status != StatusPlaying || g.Phase() == core.PhaseOver {
		return v
	}
	if !seat.Valid() {
		v.Say = s.publicSay(t, lang, pub)
		return v
	}
	mine := g.View(seat)
	for _, c := range mine.Hand.Cards() {
		vc := viewCard(c)
		vc.Legal = mine.Legal.Has(c)
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
		v.Say = s.publicSay(t, lang, pub)
	}
	if mine.Phase == core.PhasePlay {
		for _, c := range mine.Calls {
			v.Calls = append(v.Calls, ViewChoice{Arg: c.String(), Label: c.Title()})
		}
	}
	return v
}

// publicSay is the line everyone reads: who chooses trump, or whose turn it is.
func (s *Service) publicSay(t *tbl, lang string, pub core.View) string {
	if pub.Phase == core.PhaseTrump {
		return i18n.T(lang, "live.choosing", seatName(t, pub.ToMove))
	}
	return i18n.T(lang, "live.turn", seatName(t, pub.ToMove))
}

func viewCard(c core.Card) ViewCard {
	return ViewCard{Card: c.String(), Label: c.Chat(), Rank: c.Rank().String(), Suit: c.Suit().String(), Red: c.Suit().Red()}
}

func (s *Service) viewTrick(t *tbl, lang string, tr core.Trick, titleKey string) ViewTrick {
	vt := ViewTrick{Winner: -1, Points: tr.Points()}
	for i := 0; i < tr.N; i++ {
		vt.Plays = append(vt.Plays, ViewPlay{Seat: int(tr.SeatOf(i)), Card: viewCard(tr.Cards[i])})
	}
	if tr.Winner.Valid() {
		vt.Winner = int(tr.Winner)
	}
	if tr.N > 0 {
		vt.Text = s.trickText(t, lang, tr, titleKey)
	}
	return vt
}

func (s *Service) viewGame(t *tbl, lang string, pub core.View) *ViewGame {
	vg := &ViewGame{No: t.match.NumGames(), Phase: pub.Phase.String(), Dealer: int(pub.Dealer), Forehand: int(pub.Forehand),
		ToMove: int(pub.ToMove), TrumpTeam: pub.TrumpTeam.String(), Stake: pub.Stake, Points: pub.Points, Tricks: pub.TricksWon,
		Trick: s.viewTrick(t, lang, pub.Trick, "live.trick"),
		Score: i18n.T(lang, "live.score", pub.TricksWon[0], pub.TricksWon[1], pub.Points[0], pub.Points[1])}
	if !pub.ToMove.Valid() {
		vg.ToMove = -1
	}
	if pub.Trump.Valid() {
		vg.Trump, vg.TrumpLabel = pub.Trump.String(), i18n.SuitLabel(lang, pub.Trump)
	}
	if n := len(pub.Tricks); n > 0 {
		last := s.viewTrick(t, lang, pub.Tricks[n-1], "last.title")
		vg.Last = &last
	}
	for _, a := range pub.Announcements {
		vg.Calls = append(vg.Calls, ViewCall{Seat: int(a.Seat), Title: a.Call.Title()})
	}
	return vg
}

func (s *Service) viewBoard(t *tbl) ViewBoard {
	b := core.Board{Start: t.opts.Rules.Stripes}
	vb := ViewBoard{Start: b.Start, Teams: [2]string{s.teamNames(t, core.TeamA), s.teamNames(t, core.TeamB)}}
	if t.match != nil {
		b = t.match.Board()
		for i, h := range t.match.History() {
			vb.Games = append(vb.Games, ViewScore{No: i + 1, Trump: h.Trump.Symbol(), TrumpTeam: h.TrumpTeam.String(),
				Points: h.Points, Stripes: h.Applied})
		}
		if w, ok := t.match.Winner(); ok {
			vb.Winner = w.String()
		}
	}
	vb.Open = b.OpenBoth()
	return vb
}

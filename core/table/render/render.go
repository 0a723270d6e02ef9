// Package render makes every message a table shows from a Sight of it: the lobby, the table
// message, each player's hand, the board, the summaries, the texts that name seats, and the
// picture labels. It is the engine's seam between how a table changes (core/table, which takes a
// Sight under the table's lock and delivers what render gives) and what players read: it takes no
// lock, reads no store and changes nothing, and imports nothing of the engine, only the
// vocabulary (core/table/api) and the texts (core/i18n).
package render

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/options"
	"github.com/kontermatt/kontermatt/core/picture"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// Every text here is built from the public view, except a hand's message, which is built from
// that one seat's view and sent only to that seat's player.

// Renderer makes every message a table shows (its lobby, its table message, the hands, the board,
// the summaries) from a Sight of it. It is the seam between how a table changes and what its
// players read: it takes no lock, reads no store and changes nothing, and needs only how each
// platform shows its places and the language each person chose.
type Renderer struct {
	Surfaces map[string]api.Surface       // how each platform shows its places (table.Config.Surfaces)
	Chosen   func(playerID string) string // the language a person chose for themselves, or ""
}

// Sight is a table as its messages show it, taken under the table's lock (core/table's
// publisher.sight) and used while it is held: the public parts of its stored state, its options
// and its match. It holds no hand: a hand's message is made from that seat's own view, given
// apart.
type Sight struct {
	ID      string
	Seq     uint64 // the table's sequence number, which the buttons carry
	Place   api.Place
	Lang    string // the table's
	Status  api.Status
	MatchNo int
	Learn   bool // a guided game (learn), its learner's own
	Seats   [4]Seat
	Options options.Options
	// Match says a match was dealt; Games is how many games it dealt, Finished how many of them
	// are over, Board the board after them.
	Match           bool
	Games, Finished int
	Board           core.Board
	// History gives the match's score sheet (a line per finished game) and Public the public view
	// of its game n (1 to Games): only the texts that show them ask.
	History func() []core.GameScore
	Public  func(n int) core.View
	// HoldFor is how long the table message keeps a finished trick in view (core/table's pace.go).
	HoldFor time.Duration
}

// Seat is who sits in a seat as everyone may see it: a person (Player set), a computer player,
// or nobody.
type Seat struct {
	Player *api.Player
	Robot  bool
	Away   bool // a computer player acts for the absent person
	No     int  // a computer player's number, its name ("Computer 3")
}

// Empty reports whether nobody sits here.
func (s Seat) Empty() bool { return s.Player == nil && !s.Robot }

// Human reports whether a person sits here.
func (s Seat) Human() bool { return s.Player != nil }

// langOf is the language a person at the table is spoken to in: their own choice, else their
// platform's locale if the catalog has it, else the table's.
func (r Renderer) langOf(sh *Sight, p api.Player) string { return r.PersonLang(p, sh.Lang) }

// PersonLang is langOf at a table that speaks tableLang.
func (r Renderer) PersonLang(p api.Player, tableLang string) string {
	if l := r.Chosen(p.ID); l != "" {
		return l
	}
	return i18n.Pick(p.Locale, tableLang)
}

func (sh *Sight) seatName(seat core.Seat) string { return NameOfSeat(&sh.Seats, sh.Lang, seat) }

// NameOfSeat is how a seat is called at a table that speaks lang: the player's name, or
// "Computer 2".
func NameOfSeat(seats *[4]Seat, lang string, seat core.Seat) string {
	if !seat.Valid() {
		return "?"
	}
	st := seats[seat]
	if st.Player != nil {
		return st.Player.Name
	}
	return i18n.T(lang, "seat.robot", st.No)
}

// SeatRef stands for a seat among a text's arguments (see say).
type SeatRef core.Seat

// Say gives the text for key with args, where a seatRef argument is the seat's name; but when
// that seat's player is the one reading the place (see Reader), the text's second-person variant
// (key.you) is said instead, with the other arguments: "You win 12 points", not "Jang wins 12
// points", on the terminal of the one person playing.
func (r Renderer) Say(sh *Sight, lang, key string, args ...any) string {
	key, args = r.voice(sh, key, args)
	return i18n.T(lang, key, args...)
}

// sayN is say for a text with a count (see i18n.N).
func (r Renderer) sayN(sh *Sight, lang, key string, n int, args ...any) string {
	key, args = r.voice(sh, key, args)
	return i18n.N(lang, key, n, args...)
}

func (r Renderer) voice(sh *Sight, key string, args []any) (string, []any) {
	out := make([]any, 0, len(args))
	for _, a := range args {
		ref, ok := a.(SeatRef)
		switch {
		case !ok:
			out = append(out, a)
		case core.Seat(ref).Valid() && core.Seat(ref) == r.Reader(sh):
			key += ".you"
		default:
			out = append(out, sh.seatName(core.Seat(ref)))
		}
	}
	return key, out
}

// Reader is the seat of the one person who reads the table's public texts, or NoSeat: at a
// place that is one person's screen (Surface.Personal), the seat of the only person at the table.
func (r Renderer) Reader(sh *Sight) core.Seat {
	if sh.Learn {
		return 0 // a guided game is its learner's own
	}
	if !r.Surface(sh.Place).Personal {
		return core.NoSeat
	}
	found := core.NoSeat
	for i, seat := range sh.Seats {
		if !seat.Human() {
			continue
		}
		if found != core.NoSeat {
			return core.NoSeat // a hot seat: several people share the screen
		}
		found = core.Seat(i)
	}
	return found
}

func (r Renderer) Surface(p api.Place) api.Surface { return r.Surfaces[p.Platform] }

func (sh *Sight) seatLabel(lang string, seat core.Seat) string {
	st := sh.Seats[seat]
	name := i18n.T(lang, "seat.empty")
	switch {
	case st.Player != nil:
		name = st.Player.Name
		if st.Away {
			name += " " + i18n.T(lang, "seat.away")
		}
	case st.Robot:
		name = "🤖 " + i18n.T(lang, "seat.robot", st.No)
	}
	return fmt.Sprintf("%d. %s (%s)", int(seat)+1, name, seat.Team())
}

// key names an editable message: table, kind, match, then the game and player it shows. It begins
// with the table ID, so what adapters keep under it is pruned with the table (see KV).
func (sh *Sight) key(kind api.Kind, game int, playerID string) string {
	k := sh.ID + "/" + string(kind) + "/m" + strconv.Itoa(sh.MatchNo) + "/" + strconv.Itoa(game)
	if playerID != "" {
		k += "/" + playerID
	}
	return k
}

func (sh *Sight) action(v api.Verb, arg string) api.Action {
	return api.Action{Verb: v, Table: sh.ID, Seq: sh.Seq, Arg: arg}
}

func (r Renderer) LobbyMessage(sh *Sight) api.Message {
	lang := sh.Lang
	var b strings.Builder
	switch sh.Status {
	case api.StatusClosed:
		b.WriteString(i18n.T(lang, "lobby.closed"))
	case api.StatusLobby:
		b.WriteString(i18n.T(lang, "lobby.title"))
	default:
		b.WriteString(i18n.T(lang, "lobby.started"))
	}
	b.WriteString("\n")
	b.WriteString(options.Line(lang, sh.Options))
	for i := range sh.Seats {
		b.WriteString("\n" + sh.seatLabel(lang, core.Seat(i)))
	}
	m := api.Message{Target: api.Target{Kind: api.ToPlace, Place: sh.Place}, Kind: api.KindLobby, Key: sh.ID + "/lobby",
		Text: b.String(), Lang: lang}
	if sh.Status == api.StatusLobby {
		hint := "lobby.hint"
		if r.Surface(sh.Place).Typed {
			hint = "lobby.hint.typed"
		}
		b.WriteString("\n" + i18n.T(lang, hint))
		m.Text = b.String()
		m.Buttons = [][]api.Button{{
			{Label: i18n.T(lang, "btn.join"), Action: sh.action(api.VerbJoin, ""), Style: api.StylePrimary},
			{Label: i18n.T(lang, "btn.leave"), Action: sh.action(api.VerbLeave, ""), Style: api.StyleSecondary},
			{Label: i18n.T(lang, "btn.bot"), Action: sh.action(api.VerbBot, ""), Style: api.StyleSecondary},
			{Label: i18n.T(lang, "btn.deal"), Action: sh.action(api.VerbDeal, ""), Style: api.StyleSuccess},
		}}
	}
	return m
}

// stripes draws a team's open stripes as tally groups of five: "|||| |||| 9".
func stripes(b core.Board, team core.Team) string {
	open := b.Open(team)
	var sb strings.Builder
	for i := 0; i < open; i++ {
		if i > 0 && i%5 == 0 {
			sb.WriteByte(' ')
		}
		sb.WriteByte('|')
	}
	if open == 0 {
		sb.WriteString("—")
	}
	return fmt.Sprintf("%s (%d)", sb.String(), open)
}

func (sh *Sight) teamNames(team core.Team) string {
	seats := team.Seats()
	return sh.seatName(seats[0]) + " & " + sh.seatName(seats[1])
}

func (r Renderer) boardLines(sh *Sight, lang string) string {
	return r.boardLinesOf(sh, lang, sh.Board)
}

// boardLinesOf is boardLines with the board b: as it stood after a finished game, so that the
// game's summary reads the same whenever it is rendered.
func (r Renderer) boardLinesOf(sh *Sight, lang string, b core.Board) string {
	return i18n.T(lang, "board.line", "A", sh.teamNames(core.TeamA), stripes(b, core.TeamA)) + "\n" +
		i18n.T(lang, "board.line", "B", sh.teamNames(core.TeamB), stripes(b, core.TeamB))
}

// maxBoardLines is how many games the board's text lists.
const maxBoardLines = 6

func (r Renderer) BoardMessage(sh *Sight, lang string) api.Message {
	var sb strings.Builder
	sb.WriteString(i18n.T(lang, "board.title") + "\n" + r.boardLines(sh, lang))
	if sh.Match {
		// The text stays short enough for alerts and captions; the picture shows the whole sheet.
		hist := sh.History()
		from := max(len(hist)-maxBoardLines, 0)
		if r.Surface(sh.Place).NoPictures {
			from = 0
		}
		if from > 0 {
			sb.WriteString("\n" + i18n.N(lang, "board.earlier", from))
		}
		for i := from; i < len(hist); i++ {
			sb.WriteString("\n" + historyLine(lang, i+1, hist[i]))
		}
	}
	return api.Message{Kind: api.KindReply, Text: sb.String(), Picture: api.PictureBoard, Lang: lang}
}

func historyLine(lang string, n int, h core.GameScore) string {
	calls := ""
	for _, a := range h.Calls {
		calls += " " + a.Call.Title()
	}
	return i18n.T(lang, "board.game", n, h.Trump.Symbol(), h.TrumpTeam.String(), h.Points[0], h.Points[1],
		signed(h.Applied[0]), signed(h.Applied[1])) + calls
}

func signed(n int) string {
	if n > 0 {
		return fmt.Sprintf("+%d", n)
	}
	return fmt.Sprint(n)
}

func (r Renderer) TrickText(sh *Sight, lang string, tr core.Trick, titleKey string) string {
	parts := make([]string, 0, tr.N)
	for i := 0; i < tr.N; i++ {
		parts = append(parts, sh.seatName(tr.SeatOf(i))+" "+i18n.Card(lang, tr.Cards[i]))
	}
	text := i18n.Label(lang, i18n.T(lang, titleKey), strings.Join(parts, " · "))
	if tr.Winner.Valid() {
		text += " → " + r.sayN(sh, lang, "trick.won", tr.Points(), SeatRef(tr.Winner))
	}
	return text
}

// liveText describes the game from the public view: trump, calls, the trick, whose turn, score.
func (r Renderer) liveText(sh *Sight, lang string, v core.View, gameNo int) string {
	var b strings.Builder
	b.WriteString(r.Say(sh, lang, "live.title", gameNo, SeatRef(v.Dealer)))
	b.WriteString("\n")
	if v.Trump.Valid() {
		b.WriteString(r.Say(sh, lang, "live.trump", i18n.SuitLabel(lang, v.Trump), SeatRef(v.Forehand), v.TrumpTeam.String()))
	} else {
		b.WriteString(r.Say(sh, lang, "live.choosing", SeatRef(v.Forehand)))
	}
	if len(v.Announcements) > 0 {
		var calls []string
		for _, a := range v.Announcements {
			calls = append(calls, a.Call.Title()+" ("+sh.seatName(a.Seat)+")")
		}
		b.WriteString("\n" + i18n.T(lang, "live.calls", strings.Join(calls, ", "), v.Stake))
	}
	if n := len(v.Tricks); n > 0 && v.Trick.N == 0 {
		b.WriteString("\n" + r.TrickText(sh, lang, v.Tricks[n-1], "last.title"))
	}
	if v.Trick.N > 0 {
		b.WriteString("\n" + r.TrickText(sh, lang, v.Trick, "live.trick"))
	}
	switch {
	case sh.Status == api.StatusClosed:
		b.WriteString("\n" + i18n.T(lang, "live.closed"))
	case v.Phase == core.PhasePlay:
		b.WriteString("\n" + r.Say(sh, lang, "live.turn", SeatRef(v.ToMove)))
	}
	b.WriteString("\n" + i18n.T(lang, "live.score", v.TricksWon[0], v.TricksWon[1], v.Points[0], v.Points[1]))
	b.WriteString("\n" + r.boardLines(sh, lang))
	return b.String()
}

// liveMessage is the table message of the match's game n (the last dealt one keeps its buttons
// while it is played or the match is over).
func (r Renderer) liveMessage(sh *Sight, n int) api.Message {
	lang := sh.Lang
	m := api.Message{Target: api.Target{Kind: api.ToPlace, Place: sh.Place}, Kind: api.KindLive, Key: sh.key(api.KindLive, n, ""),
		Lang: lang, Text: r.liveText(sh, lang, sh.Public(n), n)}
	if n == sh.Games { // a finished trick of the game being played holds its message a moment
		m.HoldFor = sh.HoldFor
	}
	switch {
	case n != sh.Games: // a finished game's, while the next one is played: no buttons
	case sh.Status == api.StatusPlaying:
		m.Watch = i18n.T(lang, "btn.watch")
		m.Buttons = [][]api.Button{{
			{Label: i18n.T(lang, "btn.hand"), Action: sh.action(api.VerbHand, ""), Style: api.StylePrimary},
			{Label: i18n.T(lang, "btn.board"), Action: sh.action(api.VerbBoard, ""), Style: api.StyleSecondary},
			{Label: i18n.T(lang, "btn.last"), Action: sh.action(api.VerbLast, ""), Style: api.StyleSecondary},
		}}
	case sh.Status == api.StatusOver:
		m.Buttons = [][]api.Button{{
			{Label: i18n.T(lang, "btn.rematch"), Action: sh.action(api.VerbRematch, "same"), Style: api.StyleSuccess},
			{Label: i18n.T(lang, "btn.rotate"), Action: sh.action(api.VerbRematch, "rotate"), Style: api.StylePrimary},
			{Label: i18n.T(lang, "btn.board"), Action: sh.action(api.VerbBoard, ""), Style: api.StyleSecondary},
		}}
	}
	return m
}

// HandMessage is one player's private hand with its buttons in the game being played, made from
// v, that seat's view, alone.
func (r Renderer) HandMessage(sh *Sight, seat core.Seat, v core.View, lang string) api.Message {
	n := sh.Games
	p := *sh.Seats[seat].Player
	var b strings.Builder
	b.WriteString(i18n.T(lang, "hand.title", n))
	if v.Trump.Valid() {
		b.WriteString("\n" + i18n.T(lang, "hand.trump", i18n.SuitLabel(lang, v.Trump)))
	}
	var cards []string
	for _, c := range v.Hand.Cards() {
		cards = append(cards, i18n.Card(lang, c))
	}
	b.WriteString("\n" + strings.Join(cards, "  "))
	if sh.Seats[seat].Away {
		b.WriteString("\n" + i18n.T(lang, "hand.away"))
	}
	var rows [][]api.Button
	// The cards are buttons all game, so the hand looks the same from the deal to the last trick:
	// while trump is being named none is legal, and the service answers a press with the reason.
	var cardRow []api.Button
	for _, c := range v.Hand.Cards() {
		style, legal := api.StyleSecondary, v.Legal.Has(c)
		if legal {
			style = api.StylePrimary
		}
		cardRow = append(cardRow, api.Button{Label: i18n.Card(lang, c), Action: sh.action(api.VerbPlay, c.String()), Style: style, Legal: legal})
	}
	if len(cardRow) > 0 {
		rows = append(rows, cardRow)
	}
	switch {
	case v.Phase == core.PhaseTrump && v.ToMove == seat:
		b.WriteString("\n" + i18n.T(lang, "hand.choose_trump"))
		var row []api.Button
		for _, x := range core.Suits {
			row = append(row, api.Button{Label: i18n.SuitLabel(lang, x), Action: sh.action(api.VerbTrump, x.String()), Style: api.StylePrimary, Legal: true})
		}
		rows = append(rows, row)
	case v.Phase == core.PhaseTrump:
		b.WriteString("\n" + i18n.T(lang, "hand.wait_trump", sh.seatName(v.ToMove)))
	case v.ToMove == seat:
		b.WriteString("\n" + i18n.T(lang, "hand.your_turn"))
		if v.Trick.N > 0 {
			b.WriteString("\n" + r.TrickText(sh, lang, v.Trick, "live.trick"))
		}
	default:
		// Not naming whose turn it is keeps this message unchanged while others play; the
		// table message shows the turn.
		b.WriteString("\n" + i18n.T(lang, "hand.wait"))
	}
	if v.Phase == core.PhasePlay {
		var calls []api.Button
		for _, c := range v.Calls {
			calls = append(calls, api.Button{Label: "📣 " + c.Title(), Action: sh.action(api.VerbAnnounce, c.String()), Style: api.StyleDanger, Legal: true})
		}
		if len(calls) > 0 {
			rows = append(rows, calls)
		}
	}
	return api.Message{Target: api.Target{Kind: api.ToPlayer, Place: sh.Place, Player: p}, Kind: api.KindHand,
		Key: sh.key(api.KindHand, n, p.ID), Title: PrivateTitle(sh.Place, lang), Text: b.String(), Buttons: rows, Lang: lang}
}

// PrivateTitle names the table at place a private message belongs to, when the platform told us
// its name.
func PrivateTitle(place api.Place, lang string) string {
	if place.Title == "" {
		return ""
	}
	return i18n.T(lang, "hand.where", place.Title)
}

// FinalMessages are the last versions of the hand messages of game n, just finished: the cards
// each played in its tricks and no buttons, so nobody is left looking at "your turn" on a game
// that is over. (The table message's last version and the summary follow from the state: told.)
func (r Renderer) FinalMessages(sh *Sight, tricks []core.Trick, n int) []api.Message {
	var out []api.Message
	for i, seat := range sh.Seats {
		if !seat.Human() {
			continue
		}
		lang := r.langOf(sh, *seat.Player)
		var cards []string
		for _, tr := range tricks {
			cards = append(cards, i18n.Card(lang, tr.CardOf(core.Seat(i))))
		}
		out = append(out, api.Message{Target: api.Target{Kind: api.ToPlayer, Place: sh.Place, Player: *seat.Player}, Kind: api.KindHand,
			Key: sh.key(api.KindHand, n, seat.Player.ID), Title: PrivateTitle(sh.Place, lang), Lang: lang,
			Text: i18n.T(lang, "hand.title", n) + "\n" + strings.Join(cards, "  ") + "\n" + i18n.T(lang, "hand.over")})
	}
	return out
}

// ClosedMessages are the last versions of a closed table's messages: the table message of its
// last game, and the hands of a game stopped halfway, all without buttons. hands are the cards
// each seated person still held when it stopped (none if the game was over), each shown only to
// the seat's own person.
func (r Renderer) ClosedMessages(sh *Sight, hands [4]core.CardSet) []api.Message {
	out := []api.Message{r.liveMessage(sh, sh.Games)}
	if sh.Finished == sh.Games {
		return out
	}
	n := sh.Games
	for i, seat := range sh.Seats {
		if !seat.Human() {
			continue
		}
		lang := r.langOf(sh, *seat.Player)
		var cards []string
		for _, c := range hands[i].Cards() {
			cards = append(cards, i18n.Card(lang, c))
		}
		out = append(out, api.Message{Target: api.Target{Kind: api.ToPlayer, Place: sh.Place, Player: *seat.Player}, Kind: api.KindHand,
			Key: sh.key(api.KindHand, n, seat.Player.ID), Title: PrivateTitle(sh.Place, lang), Lang: lang,
			Text: i18n.T(lang, "hand.title", n) + "\n" + strings.Join(cards, "  ") + "\n" + i18n.T(lang, "live.closed")})
	}
	return out
}

// GameSummary is the summary of the match's game n, finished; h is its line of the score sheet.
func (r Renderer) GameSummary(sh *Sight, h core.GameScore, n int) api.Message {
	lang := sh.Lang
	res := h.Result
	var head string
	if w, ok := res.Outcome.Winner(); ok {
		head = i18n.T(lang, "summary.won", n, w.String(), sh.teamNames(w), res.Points[w], res.Points[w.Other()])
	} else {
		head = i18n.T(lang, "summary.draw", n)
	}
	// The stripes the board took, as the board shows them: a team cannot cross out more stripes
	// than it has open, and the summary says so where that cut the game's change short.
	change := func(team core.Team) string {
		if h.Applied[team] == res.Stripes[team] {
			return signed(h.Applied[team])
		}
		return i18n.T(lang, "summary.stops_at_zero", signed(h.Applied[team]))
	}
	text := head + "\n" + r.Say(sh, lang, "summary.detail", i18n.SuitLabel(lang, h.Trump), SeatRef(h.Dealer.Next()),
		res.Stake, res.TricksWon[0], res.TricksWon[1], change(core.TeamA), change(core.TeamB)) + "\n" +
		r.boardLinesOf(sh, lang, h.Board)
	return api.Message{Target: api.Target{Kind: api.ToPlace, Place: sh.Place}, Kind: api.KindSummary, Key: sh.key(api.KindSummary, n, ""),
		Text: text, Picture: api.PictureBoard, Lang: lang}
}

func (r Renderer) matchSummary(sh *Sight) api.Message {
	lang := sh.Lang
	w, _ := sh.Board.Winner()
	rematch := i18n.T(lang, "summary.rematch.typed")
	if !r.Surface(sh.Place).Typed {
		rematch = i18n.T(lang, "summary.rematch", i18n.T(lang, "btn.rematch"), i18n.T(lang, "btn.rotate"))
	}
	text := i18n.N(lang, "summary.match", sh.Games, w.String(), sh.teamNames(w)) + "\n" + r.boardLines(sh, lang) +
		"\n" + rematch
	return api.Message{Target: api.Target{Kind: api.ToPlace, Place: sh.Place}, Kind: api.KindSummary, Key: sh.key(api.KindSummary, sh.Games, "") + "/match",
		Text: text, Picture: api.PictureBoard, Lang: lang}
}

// Told are the messages of the match so far that follow from its state, in the order the place
// is told them, with the table message as it is now: the last version of the previous game's
// table message (its result, no buttons) while the next game is played, each finished game's
// summary, the table message, and at the match's end the match's summary. A game's last table
// message goes right before its result, the last game's too: a place whose sends are rationed
// (Telegram's 20 a minute) shows the last card before the summaries, not after them. A summary
// whose key was delivered is left out: it never changes.
func (r Renderer) Told(sh *Sight, delivered func(key string) bool) []api.Message {
	if !sh.Match {
		return []api.Message{r.liveMessage(sh, sh.Games)}
	}
	_, over := sh.Board.Winner()
	n := sh.Games
	// The previous game's table message, while the next game is played: its last version goes
	// right before its result.
	prev := n >= 2 && sh.Finished == n-1
	var out []api.Message
	var hist []core.GameScore
	for i := range sh.Finished {
		if prev && i == n-2 {
			out = append(out, r.liveMessage(sh, i+1))
		}
		if over && i == n-1 {
			out = append(out, r.liveMessage(sh, n))
		}
		if delivered(sh.key(api.KindSummary, i+1, "")) {
			continue // a summary never changes: once delivered, it is not made again for every move
		}
		if hist == nil {
			hist = sh.History()
		}
		out = append(out, r.GameSummary(sh, hist[i], i+1))
	}
	if over {
		return append(out, r.matchSummary(sh))
	}
	return append(out, r.liveMessage(sh, n))
}

// SeatNameIn is a seat's name for a reader of lang: a person's own name, a computer player's
// "Computer 2" in the reader's language.
func (sh *Sight) SeatNameIn(lang string, seat core.Seat) string {
	return NameOfSeat(&sh.Seats, lang, seat)
}

// Labels gives the picture labels in lang from the catalog, with the counts the language's
// plural rules make singular.
func Labels(lang string) picture.Labels {
	t := func(k string) string { return i18n.T(lang, "pic."+k) }
	l := picture.Labels{Title: t("Title"), TeamA: t("TeamA"), TeamB: t("TeamB"), Seat: t("Seat"),
		Open: t("Open"), Crossed: t("Crossed"), Added: t("Added"), Game: t("Game"), Trump: t("Trump"),
		Calls: t("Calls"), Points: t("Points"), Stripes: t("Stripes"), Winner: t("Winner"), Draw: t("Draw"),
		Earlier: t("Earlier"), NoGames: t("NoGames"), Trick: t("Trick"), LastTrick: t("LastTrick"),
		Turn: t("Turn"), Cards: t("Cards"),
		Standings: t("Standings"), Player: t("Player"), Rating: t("Rating"), Won: t("Won"), Played: t("Played"),
		Provisional: t("Provisional"), NoMatches: t("NoMatches"),
		OpenOne: t("OpenOne"), CrossedOne: t("CrossedOne"), AddedOne: t("AddedOne"), EarlierOne: t("EarlierOne"),
		Colon: i18n.T(lang, "label.colon")}
	for r := core.Nine; r <= core.Ace; r++ {
		l.Ranks[r] = strings.TrimSuffix(i18n.Card(lang, core.NewCard(core.Spades, r)), core.Spades.Symbol())
	}
	for n := range 32 {
		if i18n.PluralForm(lang, n) == "one" {
			l.One |= 1 << n
		}
	}
	return l
}

// PictureInput is what the table's picture p shows, in lang: the stripe board, or the table as it
// stands (between tricks, the last trick; for PictureLastTrick only a finished trick), or neither
// when the table has none to show. It is made while the table's lock is held (as the Sight is
// used); drawing it, which takes milliseconds, is not.
func (sh *Sight) PictureInput(p api.Picture, lang string) (*picture.BoardInput, *picture.TableInput) {
	var names [4]string
	for i := range names {
		names[i] = sh.seatName(core.Seat(i))
	}
	switch {
	case p == api.PictureBoard:
		in := picture.BoardInput{Rules: sh.Options.Rules, Board: core.Board{Start: sh.Options.Rules.Stripes}, Names: names, Labels: Labels(lang)}
		if sh.Match {
			in.Board, in.History = sh.Board, sh.History()
		}
		return &in, nil
	case p == api.PictureTable && sh.Games > 0:
		// Between tricks the table shows the last one, as players would look at it.
		v := sh.Public(sh.Games)
		return nil, &picture.TableInput{View: v, Names: names, Labels: Labels(lang), ShowLastTrick: v.Trick.N == 0}
	case p == api.PictureLastTrick && sh.Games > 0:
		// The trick in progress is not the one asked for: only a finished trick is shown.
		if v := sh.Public(sh.Games); len(v.Tricks) > 0 {
			return nil, &picture.TableInput{View: v, Names: names, Labels: Labels(lang), ShowLastTrick: true}
		}
	}
	return nil, nil
}

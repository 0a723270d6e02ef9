package table

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/options"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// Every text here is built from the public view, except a hand's message, which is built from
// that one seat's view and sent only to that seat's player.

// renderer makes every message a table shows (its lobby, its table message, the hands, the board,
// the summaries) from a sight of it. It is the seam between how a table changes and what its
// players read: it takes no lock, reads no store and changes nothing, and needs only how each
// platform shows its places and the language each person chose. (It is not a package of its own
// because the messages' vocabulary, api.go, is the engine's.)
type renderer struct {
	surfaces map[string]api.Surface       // Config.Surfaces
	chosen   func(playerID string) string // the language a person chose for themselves, or ""
}

// sight is a table as its messages show it, taken and used under the table's lock
// (Service.sight): the public parts of its stored state, its options and its match. It holds no
// hand: a hand's message is made from that seat's own view, given apart.
type sight struct {
	id      string
	seq     uint64
	place   api.Place
	lang    string // the table's
	status  api.Status
	matchNo int
	learn   bool
	seats   [4]SeatState
	opts    options.Options
	// match says a match was dealt; games is how many games it dealt, finished how many of them
	// are over, board the board after them.
	match           bool
	games, finished int
	board           core.Board
	// history gives the match's score sheet (a line per finished game) and public the public view
	// of its game n (1 to games): only the texts that show them ask.
	history func() []core.GameScore
	public  func(n int) core.View
	// holdFor is how long the table message keeps a finished trick in view (pace.go).
	holdFor time.Duration
}

// sight takes the table as its messages show it (table lock held).
func (s *Service) sight(t *tbl) *sight {
	st := t.st
	sh := &sight{id: st.ID, seq: st.Seq, place: st.Place, lang: st.Lang, status: st.Status, matchNo: st.MatchNo,
		learn: st.Learn, seats: st.Seats, opts: t.opts, board: core.Board{Start: t.opts.Rules.Stripes}}
	if m := t.match; m != nil {
		games := m.Games()
		sh.match, sh.games, sh.board = true, len(games), m.Board()
		for _, g := range games {
			if g.Phase() != core.PhaseOver {
				break
			}
			sh.finished++
		}
		sh.history = m.History
		sh.public = func(n int) core.View { return games[n-1].View(core.NoSeat) }
		sh.holdFor = t.holdFor(&s.pacer)
	}
	return sh
}

// render gives the table's editable messages as they should look now (table lock held).
func (s *Service) render(t *tbl) []api.Message {
	sh := s.sight(t)
	switch {
	case sh.status == api.StatusLobby:
		return []api.Message{s.view.lobbyMessage(sh)}
	case sh.status == api.StatusClosed && !sh.match:
		return []api.Message{s.view.lobbyMessage(sh)} // the lobby shows it closed, with no buttons
	case sh.status == api.StatusClosed:
		var hands [4]core.CardSet
		if g := t.lastGame(); g.Phase() != core.PhaseOver {
			for i, seat := range t.st.Seats {
				if seat.Human() {
					hands[i] = g.Hand(core.Seat(i))
				}
			}
		}
		return s.view.closedMessages(sh, hands)
	}
	// The table message among them, in its place; a summary already delivered is not made again.
	out := s.view.told(sh, func(key string) bool { _, done := t.sent[key]; return done })
	if g := t.game(); g != nil {
		for i, seat := range t.st.Seats {
			if !seat.Human() {
				continue
			}
			// Most moves change two hands at most: skip building the others' messages.
			lang := s.langOf(t, *seat.Player)
			sig := handSignature(t, g, core.Seat(i), lang)
			if t.handSig[i] == sig {
				continue
			}
			t.handSig[i] = sig
			out = append(out, s.view.handMessage(sh, core.Seat(i), g.View(core.Seat(i)), lang))
		}
	}
	return out
}

// handSig is everything a hand message is made from; equal signatures give equal messages.
type handSig struct {
	player, lang string
	game, trickN int
	hand, legal  core.CardSet
	phase        core.Phase
	trump        core.Suit
	myTurn       bool
	canCall      bool
	away         bool
	title        string
}

// handSignature leaves out whose turn it is when it is not this seat's: the hand message does not
// name them, so it need not be rebuilt while the others play.
func handSignature(t *tbl, g *core.Game, seat core.Seat, lang string) handSig {
	sig := handSig{player: t.st.Seats[seat].Player.ID, lang: lang, game: t.match.NumGames(),
		hand: g.Hand(seat), legal: g.LegalCards(seat), phase: g.Phase(), trump: g.Trump(),
		myTurn: g.ToMove() == seat, away: t.st.Seats[seat].Away, title: t.st.Place.Title}
	if sig.myTurn {
		sig.trickN, sig.canCall = g.CurrentTrick().N, len(g.PossibleCalls(seat)) > 0
	}
	return sig
}

// langOf is the language a person at the table is spoken to in: their own choice, else their
// platform's locale if the catalog has it, else the table's.
func (r renderer) langOf(sh *sight, p api.Player) string { return r.personLang(p, sh.lang) }

// personLang is langOf at a table that speaks tableLang.
func (r renderer) personLang(p api.Player, tableLang string) string {
	if l := r.chosen(p.ID); l != "" {
		return l
	}
	return i18n.Pick(p.Locale, tableLang)
}

// seatName is how a seat is called at the table: the player's name, or "Computer 2".
func seatName(t *tbl, seat core.Seat) string { return nameOfSeat(&t.st.Seats, t.st.Lang, seat) }

func (sh *sight) seatName(seat core.Seat) string { return nameOfSeat(&sh.seats, sh.lang, seat) }

func nameOfSeat(seats *[4]SeatState, lang string, seat core.Seat) string {
	if !seat.Valid() {
		return "?"
	}
	st := seats[seat]
	if st.Player != nil {
		return st.Player.Name
	}
	return i18n.T(lang, "seat.robot", st.robotNo(seat))
}

// seatRef stands for a seat among a text's arguments (see say).
type seatRef core.Seat

// say gives the text for key with args, where a seatRef argument is the seat's name; but when
// that seat's player is the one reading the place (see reader), the text's second-person variant
// (key.you) is said instead, with the other arguments: "You win 12 points", not "Jang wins 12
// points", on the terminal of the one person playing.
func (r renderer) say(sh *sight, lang, key string, args ...any) string {
	key, args = r.voice(sh, key, args)
	return i18n.T(lang, key, args...)
}

// sayN is say for a text with a count (see i18n.N).
func (r renderer) sayN(sh *sight, lang, key string, n int, args ...any) string {
	key, args = r.voice(sh, key, args)
	return i18n.N(lang, key, n, args...)
}

func (r renderer) voice(sh *sight, key string, args []any) (string, []any) {
	out := make([]any, 0, len(args))
	for _, a := range args {
		ref, ok := a.(seatRef)
		switch {
		case !ok:
			out = append(out, a)
		case core.Seat(ref).Valid() && core.Seat(ref) == r.reader(sh):
			key += ".you"
		default:
			out = append(out, sh.seatName(core.Seat(ref)))
		}
	}
	return key, out
}

// reader is the seat of the one person who reads the table's public texts, or NoSeat: at a
// place that is one person's screen (Surface.Personal), the seat of the only person at the table.
func (r renderer) reader(sh *sight) core.Seat {
	if sh.learn {
		return 0 // a guided game is its learner's own
	}
	if !r.surface(sh.place).Personal {
		return core.NoSeat
	}
	found := core.NoSeat
	for i, seat := range sh.seats {
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

// surface is how the place's platform shows it.
func (s *Service) surface(p api.Place) api.Surface { return s.view.surface(p) }

func (r renderer) surface(p api.Place) api.Surface { return r.surfaces[p.Platform] }

func (sh *sight) seatLabel(lang string, seat core.Seat) string {
	st := sh.seats[seat]
	name := i18n.T(lang, "seat.empty")
	switch {
	case st.Player != nil:
		name = st.Player.Name
		if st.Away {
			name += " " + i18n.T(lang, "seat.away")
		}
	case st.Robot:
		name = "🤖 " + i18n.T(lang, "seat.robot", st.robotNo(seat))
	}
	return fmt.Sprintf("%d. %s (%s)", int(seat)+1, name, seat.Team())
}

// key names an editable message: table, kind, match, then the game and player it shows. It begins
// with the table ID, so what adapters keep under it is pruned with the table (see KV).
func (sh *sight) key(kind api.Kind, game int, playerID string) string {
	k := sh.id + "/" + string(kind) + "/m" + strconv.Itoa(sh.matchNo) + "/" + strconv.Itoa(game)
	if playerID != "" {
		k += "/" + playerID
	}
	return k
}

func (sh *sight) action(v api.Verb, arg string) api.Action {
	return api.Action{Verb: v, Table: sh.id, Seq: sh.seq, Arg: arg}
}

func (r renderer) lobbyMessage(sh *sight) api.Message {
	lang := sh.lang
	var b strings.Builder
	switch sh.status {
	case api.StatusClosed:
		b.WriteString(i18n.T(lang, "lobby.closed"))
	case api.StatusLobby:
		b.WriteString(i18n.T(lang, "lobby.title"))
	default:
		b.WriteString(i18n.T(lang, "lobby.started"))
	}
	b.WriteString("\n")
	b.WriteString(options.Line(lang, sh.opts))
	for i := range sh.seats {
		b.WriteString("\n" + sh.seatLabel(lang, core.Seat(i)))
	}
	m := api.Message{Target: api.Target{Kind: api.ToPlace, Place: sh.place}, Kind: api.KindLobby, Key: sh.id + "/lobby",
		Text: b.String(), Lang: lang}
	if sh.status == api.StatusLobby {
		hint := "lobby.hint"
		if r.surface(sh.place).Typed {
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

func (sh *sight) teamNames(team core.Team) string {
	seats := team.Seats()
	return sh.seatName(seats[0]) + " & " + sh.seatName(seats[1])
}

func (r renderer) boardLines(sh *sight, lang string) string {
	return r.boardLinesOf(sh, lang, sh.board)
}

// boardLinesOf is boardLines with the board b: as it stood after a finished game, so that the
// game's summary reads the same whenever it is rendered.
func (r renderer) boardLinesOf(sh *sight, lang string, b core.Board) string {
	return i18n.T(lang, "board.line", "A", sh.teamNames(core.TeamA), stripes(b, core.TeamA)) + "\n" +
		i18n.T(lang, "board.line", "B", sh.teamNames(core.TeamB), stripes(b, core.TeamB))
}

// maxBoardLines is how many games the board's text lists.
const maxBoardLines = 6

func (r renderer) boardMessage(sh *sight, lang string) api.Message {
	var sb strings.Builder
	sb.WriteString(i18n.T(lang, "board.title") + "\n" + r.boardLines(sh, lang))
	if sh.match {
		// The text stays short enough for alerts and captions; the picture shows the whole sheet.
		hist := sh.history()
		from := max(len(hist)-maxBoardLines, 0)
		if r.surface(sh.place).NoPictures {
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

func (r renderer) trickText(sh *sight, lang string, tr core.Trick, titleKey string) string {
	parts := make([]string, 0, tr.N)
	for i := 0; i < tr.N; i++ {
		parts = append(parts, sh.seatName(tr.SeatOf(i))+" "+i18n.Card(lang, tr.Cards[i]))
	}
	text := i18n.Label(lang, i18n.T(lang, titleKey), strings.Join(parts, " · "))
	if tr.Winner.Valid() {
		text += " → " + r.sayN(sh, lang, "trick.won", tr.Points(), seatRef(tr.Winner))
	}
	return text
}

// liveText describes the game from the public view: trump, calls, the trick, whose turn, score.
func (r renderer) liveText(sh *sight, lang string, v core.View, gameNo int) string {
	var b strings.Builder
	b.WriteString(r.say(sh, lang, "live.title", gameNo, seatRef(v.Dealer)))
	b.WriteString("\n")
	if v.Trump.Valid() {
		b.WriteString(r.say(sh, lang, "live.trump", i18n.SuitLabel(lang, v.Trump), seatRef(v.Forehand), v.TrumpTeam.String()))
	} else {
		b.WriteString(r.say(sh, lang, "live.choosing", seatRef(v.Forehand)))
	}
	if len(v.Announcements) > 0 {
		var calls []string
		for _, a := range v.Announcements {
			calls = append(calls, a.Call.Title()+" ("+sh.seatName(a.Seat)+")")
		}
		b.WriteString("\n" + i18n.T(lang, "live.calls", strings.Join(calls, ", "), v.Stake))
	}
	if n := len(v.Tricks); n > 0 && v.Trick.N == 0 {
		b.WriteString("\n" + r.trickText(sh, lang, v.Tricks[n-1], "last.title"))
	}
	if v.Trick.N > 0 {
		b.WriteString("\n" + r.trickText(sh, lang, v.Trick, "live.trick"))
	}
	switch {
	case sh.status == api.StatusClosed:
		b.WriteString("\n" + i18n.T(lang, "live.closed"))
	case v.Phase == core.PhasePlay:
		b.WriteString("\n" + r.say(sh, lang, "live.turn", seatRef(v.ToMove)))
	}
	b.WriteString("\n" + i18n.T(lang, "live.score", v.TricksWon[0], v.TricksWon[1], v.Points[0], v.Points[1]))
	b.WriteString("\n" + r.boardLines(sh, lang))
	return b.String()
}

// liveMessage is the table message of the match's game n (the last dealt one keeps its buttons
// while it is played or the match is over).
func (r renderer) liveMessage(sh *sight, n int) api.Message {
	lang := sh.lang
	m := api.Message{Target: api.Target{Kind: api.ToPlace, Place: sh.place}, Kind: api.KindLive, Key: sh.key(api.KindLive, n, ""),
		Lang: lang, Text: r.liveText(sh, lang, sh.public(n), n)}
	if n == sh.games { // a finished trick of the game being played holds its message a moment
		m.HoldFor = sh.holdFor
	}
	switch {
	case n != sh.games: // a finished game's, while the next one is played: no buttons
	case sh.status == api.StatusPlaying:
		m.Watch = i18n.T(lang, "btn.watch")
		m.Buttons = [][]api.Button{{
			{Label: i18n.T(lang, "btn.hand"), Action: sh.action(api.VerbHand, ""), Style: api.StylePrimary},
			{Label: i18n.T(lang, "btn.board"), Action: sh.action(api.VerbBoard, ""), Style: api.StyleSecondary},
			{Label: i18n.T(lang, "btn.last"), Action: sh.action(api.VerbLast, ""), Style: api.StyleSecondary},
		}}
	case sh.status == api.StatusOver:
		m.Buttons = [][]api.Button{{
			{Label: i18n.T(lang, "btn.rematch"), Action: sh.action(api.VerbRematch, "same"), Style: api.StyleSuccess},
			{Label: i18n.T(lang, "btn.rotate"), Action: sh.action(api.VerbRematch, "rotate"), Style: api.StylePrimary},
			{Label: i18n.T(lang, "btn.board"), Action: sh.action(api.VerbBoard, ""), Style: api.StyleSecondary},
		}}
	}
	return m
}

// handMessage is one player's private hand with its buttons in the game being played, made from
// v, that seat's view, alone.
func (r renderer) handMessage(sh *sight, seat core.Seat, v core.View, lang string) api.Message {
	n := sh.games
	p := *sh.seats[seat].Player
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
	if sh.seats[seat].Away {
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
			b.WriteString("\n" + r.trickText(sh, lang, v.Trick, "live.trick"))
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
	return api.Message{Target: api.Target{Kind: api.ToPlayer, Place: sh.place, Player: p}, Kind: api.KindHand,
		Key: sh.key(api.KindHand, n, p.ID), Title: privateTitle(sh.place, lang), Text: b.String(), Buttons: rows, Lang: lang}
}

// privateTitle names the table at place a private message belongs to, when the platform told us
// its name.
func privateTitle(place api.Place, lang string) string {
	if place.Title == "" {
		return ""
	}
	return i18n.T(lang, "hand.where", place.Title)
}

// finalMessages are the last versions of the hand messages of game n, just finished: the cards
// each played in its tricks and no buttons, so nobody is left looking at "your turn" on a game
// that is over. (The table message's last version and the summary follow from the state: told.)
func (r renderer) finalMessages(sh *sight, tricks []core.Trick, n int) []api.Message {
	var out []api.Message
	for i, seat := range sh.seats {
		if !seat.Human() {
			continue
		}
		lang := r.langOf(sh, *seat.Player)
		var cards []string
		for _, tr := range tricks {
			cards = append(cards, i18n.Card(lang, tr.CardOf(core.Seat(i))))
		}
		out = append(out, api.Message{Target: api.Target{Kind: api.ToPlayer, Place: sh.place, Player: *seat.Player}, Kind: api.KindHand,
			Key: sh.key(api.KindHand, n, seat.Player.ID), Title: privateTitle(sh.place, lang), Lang: lang,
			Text: i18n.T(lang, "hand.title", n) + "\n" + strings.Join(cards, "  ") + "\n" + i18n.T(lang, "hand.over")})
	}
	return out
}

// closedMessages are the last versions of a closed table's messages: the table message of its
// last game, and the hands of a game stopped halfway, all without buttons. hands are the cards
// each seated person still held when it stopped (none if the game was over), each shown only to
// the seat's own person.
func (r renderer) closedMessages(sh *sight, hands [4]core.CardSet) []api.Message {
	out := []api.Message{r.liveMessage(sh, sh.games)}
	if sh.finished == sh.games {
		return out
	}
	n := sh.games
	for i, seat := range sh.seats {
		if !seat.Human() {
			continue
		}
		lang := r.langOf(sh, *seat.Player)
		var cards []string
		for _, c := range hands[i].Cards() {
			cards = append(cards, i18n.Card(lang, c))
		}
		out = append(out, api.Message{Target: api.Target{Kind: api.ToPlayer, Place: sh.place, Player: *seat.Player}, Kind: api.KindHand,
			Key: sh.key(api.KindHand, n, seat.Player.ID), Title: privateTitle(sh.place, lang), Lang: lang,
			Text: i18n.T(lang, "hand.title", n) + "\n" + strings.Join(cards, "  ") + "\n" + i18n.T(lang, "live.closed")})
	}
	return out
}

// gameSummary is the summary of the match's game n, finished; h is its line of the score sheet.
func (r renderer) gameSummary(sh *sight, h core.GameScore, n int) api.Message {
	lang := sh.lang
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
	text := head + "\n" + r.say(sh, lang, "summary.detail", i18n.SuitLabel(lang, h.Trump), seatRef(h.Dealer.Next()),
		res.Stake, res.TricksWon[0], res.TricksWon[1], change(core.TeamA), change(core.TeamB)) + "\n" +
		r.boardLinesOf(sh, lang, h.Board)
	return api.Message{Target: api.Target{Kind: api.ToPlace, Place: sh.place}, Kind: api.KindSummary, Key: sh.key(api.KindSummary, n, ""),
		Text: text, Picture: api.PictureBoard, Lang: lang}
}

func (r renderer) matchSummary(sh *sight) api.Message {
	lang := sh.lang
	w, _ := sh.board.Winner()
	rematch := i18n.T(lang, "summary.rematch.typed")
	if !r.surface(sh.place).Typed {
		rematch = i18n.T(lang, "summary.rematch", i18n.T(lang, "btn.rematch"), i18n.T(lang, "btn.rotate"))
	}
	text := i18n.N(lang, "summary.match", sh.games, w.String(), sh.teamNames(w)) + "\n" + r.boardLines(sh, lang) +
		"\n" + rematch
	return api.Message{Target: api.Target{Kind: api.ToPlace, Place: sh.place}, Kind: api.KindSummary, Key: sh.key(api.KindSummary, sh.games, "") + "/match",
		Text: text, Picture: api.PictureBoard, Lang: lang}
}

// helpGroups are help's groups of verbs, by what people want to do, in the order help shows them
// after its three first steps; the steps tell join, bot and deal (helpSteps). A verb in neither is
// shown in the last group (TestHelpGroupsEveryVerb).
var helpGroups = []struct {
	title string // catalog key
	verbs []api.Verb
}{
	{"help.group.table", []api.Verb{api.VerbNew, api.VerbLeave, api.VerbSeat, api.VerbShuffle, api.VerbStop, api.VerbRematch}},
	{"help.group.play", []api.Verb{api.VerbTrump, api.VerbAnnounce, api.VerbPlay, api.VerbHand, api.VerbBoard, api.VerbLast}},
	{"help.group.learn", []api.Verb{api.VerbRules, api.VerbLearn, api.VerbHint, api.VerbReview, api.VerbCoach}},
	{"help.group.settings", []api.Verb{api.VerbLang, api.VerbSettings, api.VerbStats, api.VerbTop, api.VerbHistory, api.VerbMyData, api.VerbForget, api.VerbHelp}},
}

// helpSteps are the verbs help's three steps tell: its groups do not list them again (but new,
// for its options).
var helpSteps = []api.Verb{api.VerbJoin, api.VerbBot, api.VerbDeal}

// helpText starts a newcomer: three steps (open a table, sit or add computers, deal), then the
// verbs grouped by what people want to do. On one person's own screen (the terminal) learn is
// played right there, not in a private chat.
func helpText(lang string, sf api.Surface) string {
	lines := []string{i18n.T(lang, "help.title"), i18n.T(lang, "help.step.open"), i18n.T(lang, "help.step.seat"),
		i18n.T(lang, "help.step.deal")}
	shown := map[api.Verb]bool{}
	for _, v := range helpSteps {
		shown[v] = true
	}
	for i, g := range helpGroups {
		verbs := g.verbs
		if i == len(helpGroups)-1 {
			for _, v := range api.Verbs {
				if !shown[v] && !slices.Contains(verbs, v) {
					verbs = append(slices.Clone(verbs), v)
				}
			}
		}
		lines = append(lines, "", i18n.T(lang, g.title))
		for _, v := range verbs {
			shown[v] = true
			text := i18n.T(lang, "help."+string(v))
			switch {
			case v == api.VerbNew:
				text = i18n.T(lang, "help.new", options.Syntax(lang))
			case v == api.VerbLearn && sf.Personal:
				text = i18n.T(lang, "help.learn.here")
			}
			lines = append(lines, "/"+string(v)+" — "+text)
		}
	}
	return strings.Join(lines, "\n")
}

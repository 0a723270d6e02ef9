package table

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/i18n"
)

// Every text here is built from the public view, except handMessage, which is built from that
// one seat's view and sent only to that seat's player.

// seatName is how a seat is called at the table: the player's name, or "Computer 2".
func seatName(t *tbl, seat core.Seat) string {
	if !seat.Valid() {
		return "?"
	}
	st := t.st.Seats[seat]
	if st.Player != nil {
		return st.Player.Name
	}
	return i18n.T(t.st.Lang, "seat.robot", st.robotNo(seat))
}

// seatRef stands for a seat among a text's arguments (see say).
type seatRef core.Seat

// say gives the text for key with args, where a seatRef argument is the seat's name; but when
// that seat's player is the one reading the place (see reader), the text's second-person variant
// (key.you) is said instead, with the other arguments: "You win 12 points", not "Jang wins 12
// points", on the terminal of the one person playing.
func (s *Service) say(t *tbl, lang, key string, args ...any) string {
	key, args = s.voice(t, key, args)
	return i18n.T(lang, key, args...)
}

// sayN is say for a text with a count (see i18n.N).
func (s *Service) sayN(t *tbl, lang, key string, n int, args ...any) string {
	key, args = s.voice(t, key, args)
	return i18n.N(lang, key, n, args...)
}

func (s *Service) voice(t *tbl, key string, args []any) (string, []any) {
	out := make([]any, 0, len(args))
	for _, a := range args {
		ref, ok := a.(seatRef)
		switch {
		case !ok:
			out = append(out, a)
		case core.Seat(ref).Valid() && core.Seat(ref) == s.reader(t):
			key += ".you"
		default:
			out = append(out, seatName(t, core.Seat(ref)))
		}
	}
	return key, out
}

// reader is the seat of the one person who reads the table's public texts, or NoSeat: at a
// place that is one person's screen (Surface.Personal), the seat of the only person at the table.
func (s *Service) reader(t *tbl) core.Seat {
	if t.st.Learn {
		return 0 // a guided game is its learner's own
	}
	if !s.surface(t.st.Place).Personal {
		return core.NoSeat
	}
	found := core.NoSeat
	for i, seat := range t.st.Seats {
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
func (s *Service) surface(p Place) Surface { return s.cfg.Surfaces[p.Platform] }

func seatLabel(t *tbl, lang string, seat core.Seat) string {
	st := t.st.Seats[seat]
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
func (t *tbl) key(kind Kind, game int, playerID string) string {
	k := t.st.ID + "/" + string(kind) + "/m" + strconv.Itoa(t.st.MatchNo) + "/" + strconv.Itoa(game)
	if playerID != "" {
		k += "/" + playerID
	}
	return k
}

func (t *tbl) action(v Verb, arg string) Action {
	return Action{Verb: v, Table: t.st.ID, Seq: t.st.Seq, Arg: arg}
}

// render gives the table's editable messages as they should look now.
func (s *Service) render(t *tbl) []Message {
	switch {
	case t.st.Status == StatusLobby:
		return []Message{s.lobbyMessage(t)}
	case t.st.Status == StatusClosed && t.match == nil:
		return []Message{s.lobbyMessage(t)} // the lobby shows it closed, with no buttons
	case t.st.Status == StatusClosed:
		return s.closedMessages(t)
	}
	out := s.told(t) // the table message among them, in its place
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
			out = append(out, s.handMessage(t, core.Seat(i), lang))
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

func (s *Service) lobbyMessage(t *tbl) Message {
	lang := t.st.Lang
	var b strings.Builder
	switch t.st.Status {
	case StatusClosed:
		b.WriteString(i18n.T(lang, "lobby.closed"))
	case StatusLobby:
		b.WriteString(i18n.T(lang, "lobby.title"))
	default:
		b.WriteString(i18n.T(lang, "lobby.started"))
	}
	b.WriteString("\n")
	b.WriteString(optionsLine(lang, t.opts))
	for i := range t.st.Seats {
		b.WriteString("\n" + seatLabel(t, lang, core.Seat(i)))
	}
	m := Message{Target: Target{Kind: ToPlace, Place: t.st.Place}, Kind: KindLobby, Key: t.st.ID + "/lobby",
		Text: b.String(), Lang: lang}
	if t.st.Status == StatusLobby {
		hint := "lobby.hint"
		if s.surface(t.st.Place).Typed {
			hint = "lobby.hint.typed"
		}
		b.WriteString("\n" + i18n.T(lang, hint))
		m.Text = b.String()
		m.Buttons = [][]Button{{
			{Label: i18n.T(lang, "btn.join"), Action: t.action(VerbJoin, ""), Style: StylePrimary},
			{Label: i18n.T(lang, "btn.leave"), Action: t.action(VerbLeave, ""), Style: StyleSecondary},
			{Label: i18n.T(lang, "btn.bot"), Action: t.action(VerbBot, ""), Style: StyleSecondary},
			{Label: i18n.T(lang, "btn.deal"), Action: t.action(VerbDeal, ""), Style: StyleSuccess},
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

func (s *Service) teamNames(t *tbl, team core.Team) string {
	seats := team.Seats()
	return seatName(t, seats[0]) + " & " + seatName(t, seats[1])
}

func (s *Service) boardLines(t *tbl, lang string) string {
	b := core.Board{Start: t.opts.Rules.Stripes}
	if t.match != nil {
		b = t.match.Board()
	}
	return s.boardLinesOf(t, lang, b)
}

// boardLinesOf is boardLines with the board b: as it stood after a finished game, so that the
// game's summary reads the same whenever it is rendered.
func (s *Service) boardLinesOf(t *tbl, lang string, b core.Board) string {
	return i18n.T(lang, "board.line", "A", s.teamNames(t, core.TeamA), stripes(b, core.TeamA)) + "\n" +
		i18n.T(lang, "board.line", "B", s.teamNames(t, core.TeamB), stripes(b, core.TeamB))
}

// maxBoardLines is how many games the board's text lists.
const maxBoardLines = 6

func (s *Service) boardMessage(t *tbl, lang string) Message {
	var sb strings.Builder
	sb.WriteString(i18n.T(lang, "board.title") + "\n" + s.boardLines(t, lang))
	if t.match != nil {
		// The text stays short enough for alerts and captions; the picture shows the whole sheet.
		hist := t.match.History()
		from := max(len(hist)-maxBoardLines, 0)
		if s.surface(t.st.Place).NoPictures {
			from = 0
		}
		if from > 0 {
			sb.WriteString("\n" + i18n.N(lang, "board.earlier", from))
		}
		for i := from; i < len(hist); i++ {
			sb.WriteString("\n" + s.historyLine(t, lang, i+1, hist[i]))
		}
	}
	return Message{Kind: KindReply, Text: sb.String(), Picture: PictureBoard, Lang: lang}
}

func (s *Service) historyLine(t *tbl, lang string, n int, h core.GameScore) string {
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

func (s *Service) trickText(t *tbl, lang string, tr core.Trick, titleKey string) string {
	parts := make([]string, 0, tr.N)
	for i := 0; i < tr.N; i++ {
		parts = append(parts, seatName(t, tr.SeatOf(i))+" "+i18n.Card(lang, tr.Cards[i]))
	}
	text := i18n.Label(lang, i18n.T(lang, titleKey), strings.Join(parts, " · "))
	if tr.Winner.Valid() {
		text += " → " + s.sayN(t, lang, "trick.won", tr.Points(), seatRef(tr.Winner))
	}
	return text
}

// liveText describes the game from the public view: trump, calls, the trick, whose turn, score.
func (s *Service) liveText(t *tbl, lang string, v core.View, gameNo int) string {
	var b strings.Builder
	b.WriteString(s.say(t, lang, "live.title", gameNo, seatRef(v.Dealer)))
	b.WriteString("\n")
	if v.Trump.Valid() {
		b.WriteString(s.say(t, lang, "live.trump", i18n.SuitLabel(lang, v.Trump), seatRef(v.Forehand), v.TrumpTeam.String()))
	} else {
		b.WriteString(s.say(t, lang, "live.choosing", seatRef(v.Forehand)))
	}
	if len(v.Announcements) > 0 {
		var calls []string
		for _, a := range v.Announcements {
			calls = append(calls, a.Call.Title()+" ("+seatName(t, a.Seat)+")")
		}
		b.WriteString("\n" + i18n.T(lang, "live.calls", strings.Join(calls, ", "), v.Stake))
	}
	if n := len(v.Tricks); n > 0 && v.Trick.N == 0 {
		b.WriteString("\n" + s.trickText(t, lang, v.Tricks[n-1], "last.title"))
	}
	if v.Trick.N > 0 {
		b.WriteString("\n" + s.trickText(t, lang, v.Trick, "live.trick"))
	}
	switch {
	case t.st.Status == StatusClosed:
		b.WriteString("\n" + i18n.T(lang, "live.closed"))
	case v.Phase == core.PhasePlay:
		b.WriteString("\n" + s.say(t, lang, "live.turn", seatRef(v.ToMove)))
	}
	b.WriteString("\n" + i18n.T(lang, "live.score", v.TricksWon[0], v.TricksWon[1], v.Points[0], v.Points[1]))
	b.WriteString("\n" + s.boardLines(t, lang))
	return b.String()
}

func (s *Service) liveMessage(t *tbl) Message {
	return s.liveMessageOf(t, t.lastGame(), t.match.NumGames())
}

// liveMessageOf is the live message of the match's game n, g.
func (s *Service) liveMessageOf(t *tbl, g *core.Game, n int) Message {
	lang := t.st.Lang
	m := Message{Target: Target{Kind: ToPlace, Place: t.st.Place}, Kind: KindLive, Key: t.key(KindLive, n, ""),
		Lang: lang, Text: s.liveText(t, lang, g.View(core.NoSeat), n)}
	if g == t.lastGame() { // a finished trick of the game being played holds its message a moment
		m.HoldFor = s.holdFor(t)
	}
	switch {
	case g != t.lastGame(): // a finished game's, while the next one is played: no buttons
	case t.st.Status == StatusPlaying:
		m.Watch = i18n.T(lang, "btn.watch")
		m.Buttons = [][]Button{{
			{Label: i18n.T(lang, "btn.hand"), Action: t.action(VerbHand, ""), Style: StylePrimary},
			{Label: i18n.T(lang, "btn.board"), Action: t.action(VerbBoard, ""), Style: StyleSecondary},
			{Label: i18n.T(lang, "btn.last"), Action: t.action(VerbLast, ""), Style: StyleSecondary},
		}}
	case t.st.Status == StatusOver:
		m.Buttons = [][]Button{{
			{Label: i18n.T(lang, "btn.rematch"), Action: t.action(VerbRematch, "same"), Style: StyleSuccess},
			{Label: i18n.T(lang, "btn.rotate"), Action: t.action(VerbRematch, "rotate"), Style: StylePrimary},
			{Label: i18n.T(lang, "btn.board"), Action: t.action(VerbBoard, ""), Style: StyleSecondary},
		}}
	}
	return m
}

// handMessage is one player's private hand with its buttons, from that seat's view only.
func (s *Service) handMessage(t *tbl, seat core.Seat, lang string) Message {
	g := t.game()
	n := t.match.NumGames()
	p := *t.st.Seats[seat].Player
	v := g.View(seat)
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
	if t.st.Seats[seat].Away {
		b.WriteString("\n" + i18n.T(lang, "hand.away"))
	}
	var rows [][]Button
	// The cards are buttons all game, so the hand looks the same from the deal to the last trick:
	// while trump is being named none is legal, and the service answers a press with the reason.
	var cardRow []Button
	for _, c := range v.Hand.Cards() {
		style, legal := StyleSecondary, v.Legal.Has(c)
		if legal {
			style = StylePrimary
		}
		cardRow = append(cardRow, Button{Label: i18n.Card(lang, c), Action: t.action(VerbPlay, c.String()), Style: style, Legal: legal})
	}
	if len(cardRow) > 0 {
		rows = append(rows, cardRow)
	}
	switch {
	case v.Phase == core.PhaseTrump && v.ToMove == seat:
		b.WriteString("\n" + i18n.T(lang, "hand.choose_trump"))
		var row []Button
		for _, x := range core.Suits {
			row = append(row, Button{Label: i18n.SuitLabel(lang, x), Action: t.action(VerbTrump, x.String()), Style: StylePrimary, Legal: true})
		}
		rows = append(rows, row)
	case v.Phase == core.PhaseTrump:
		b.WriteString("\n" + i18n.T(lang, "hand.wait_trump", seatName(t, v.ToMove)))
	case v.ToMove == seat:
		b.WriteString("\n" + i18n.T(lang, "hand.your_turn"))
		if v.Trick.N > 0 {
			b.WriteString("\n" + s.trickText(t, lang, v.Trick, "live.trick"))
		}
	default:
		// Not naming whose turn it is keeps this message unchanged while others play; the
		// table message shows the turn.
		b.WriteString("\n" + i18n.T(lang, "hand.wait"))
	}
	if v.Phase == core.PhasePlay {
		var calls []Button
		for _, c := range v.Calls {
			calls = append(calls, Button{Label: "📣 " + c.Title(), Action: t.action(VerbAnnounce, c.String()), Style: StyleDanger, Legal: true})
		}
		if len(calls) > 0 {
			rows = append(rows, calls)
		}
	}
	return Message{Target: Target{Kind: ToPlayer, Place: t.st.Place, Player: p}, Kind: KindHand,
		Key: t.key(KindHand, n, p.ID), Title: s.privateTitle(t, lang), Text: b.String(), Buttons: rows, Lang: lang}
}

// privateTitle names the table a private message belongs to, when the platform told us its name.
func (s *Service) privateTitle(t *tbl, lang string) string {
	if t.st.Place.Title == "" {
		return ""
	}
	return i18n.T(lang, "hand.where", t.st.Place.Title)
}

// finalMessages are the last versions of a finished game's hand messages: the cards played and
// no buttons, so nobody is left looking at "your turn" on a game that is over. (The live
// message's last version and the summary follow from the state: told.)
func (s *Service) finalMessages(t *tbl, g *core.Game, n int) []Message {
	var out []Message
	for i, seat := range t.st.Seats {
		if !seat.Human() {
			continue
		}
		lang := s.langOf(t, *seat.Player)
		var cards []string
		for _, tr := range g.Tricks() {
			cards = append(cards, i18n.Card(lang, tr.CardOf(core.Seat(i))))
		}
		out = append(out, Message{Target: Target{Kind: ToPlayer, Place: t.st.Place, Player: *seat.Player}, Kind: KindHand,
			Key: t.key(KindHand, n, seat.Player.ID), Title: s.privateTitle(t, lang), Lang: lang,
			Text: i18n.T(lang, "hand.title", n) + "\n" + strings.Join(cards, "  ") + "\n" + i18n.T(lang, "hand.over")})
	}
	return out
}

// closedMessages are the last versions of a closed table's messages: the live message of its last
// game, and the hands of a game stopped halfway, all without buttons.
func (s *Service) closedMessages(t *tbl) []Message {
	out := []Message{s.liveMessage(t)}
	g := t.lastGame()
	if g.Phase() == core.PhaseOver {
		return out
	}
	n := t.match.NumGames()
	for i, seat := range t.st.Seats {
		if !seat.Human() {
			continue
		}
		lang := s.langOf(t, *seat.Player)
		var cards []string
		for _, c := range g.Hand(core.Seat(i)).Cards() {
			cards = append(cards, i18n.Card(lang, c))
		}
		out = append(out, Message{Target: Target{Kind: ToPlayer, Place: t.st.Place, Player: *seat.Player}, Kind: KindHand,
			Key: t.key(KindHand, n, seat.Player.ID), Title: s.privateTitle(t, lang), Lang: lang,
			Text: i18n.T(lang, "hand.title", n) + "\n" + strings.Join(cards, "  ") + "\n" + i18n.T(lang, "live.closed")})
	}
	return out
}

func (s *Service) gameSummary(t *tbl, g *core.Game, n int) Message {
	lang := t.st.Lang
	r := g.Result()
	var head string
	if w, ok := r.Outcome.Winner(); ok {
		head = i18n.T(lang, "summary.won", n, w.String(), s.teamNames(t, w), r.Points[w], r.Points[w.Other()])
	} else {
		head = i18n.T(lang, "summary.draw", n)
	}
	// The stripes the board took, as the board shows them: a team cannot cross out more stripes
	// than it has open, and the summary says so where that cut the game's change short.
	applied := t.match.History()[n-1].Applied
	change := func(team core.Team) string {
		if applied[team] == r.Stripes[team] {
			return signed(applied[team])
		}
		return i18n.T(lang, "summary.stops_at_zero", signed(applied[team]))
	}
	text := head + "\n" + s.say(t, lang, "summary.detail", i18n.SuitLabel(lang, g.Trump()), seatRef(g.Forehand()),
		r.Stake, r.TricksWon[0], r.TricksWon[1], change(core.TeamA), change(core.TeamB)) + "\n" +
		s.boardLinesOf(t, lang, t.match.History()[n-1].Board)
	return Message{Target: Target{Kind: ToPlace, Place: t.st.Place}, Kind: KindSummary, Key: t.key(KindSummary, n, ""),
		Text: text, Picture: PictureBoard, Lang: lang}
}

func (s *Service) matchSummary(t *tbl) Message {
	lang := t.st.Lang
	w, _ := t.match.Winner()
	rematch := i18n.T(lang, "summary.rematch.typed")
	if !s.surface(t.st.Place).Typed {
		rematch = i18n.T(lang, "summary.rematch", i18n.T(lang, "btn.rematch"), i18n.T(lang, "btn.rotate"))
	}
	text := i18n.N(lang, "summary.match", t.match.NumGames(), w.String(), s.teamNames(t, w)) + "\n" + s.boardLines(t, lang) +
		"\n" + rematch
	return Message{Target: Target{Kind: ToPlace, Place: t.st.Place}, Kind: KindSummary, Key: t.key(KindSummary, t.match.NumGames(), "") + "/match",
		Text: text, Picture: PictureBoard, Lang: lang}
}

// helpGroups are help's groups of verbs, by what people want to do, in the order help shows them
// after its three first steps; the steps tell join, bot and deal (helpSteps). A verb in neither is
// shown in the last group (TestHelpGroupsEveryVerb).
var helpGroups = []struct {
	title string // catalog key
	verbs []Verb
}{
	{"help.group.table", []Verb{VerbNew, VerbLeave, VerbSeat, VerbShuffle, VerbStop, VerbRematch}},
	{"help.group.play", []Verb{VerbTrump, VerbAnnounce, VerbPlay, VerbHand, VerbBoard, VerbLast}},
	{"help.group.learn", []Verb{VerbRules, VerbLearn, VerbHint, VerbReview, VerbCoach}},
	{"help.group.settings", []Verb{VerbLang, VerbSettings, VerbStats, VerbTop, VerbHistory, VerbMyData, VerbForget, VerbHelp}},
}

// helpSteps are the verbs help's three steps tell: its groups do not list them again (but new,
// for its options).
var helpSteps = []Verb{VerbJoin, VerbBot, VerbDeal}

// helpText starts a newcomer: three steps (open a table, sit or add computers, deal), then the
// verbs grouped by what people want to do. On one person's own screen (the terminal) learn is
// played right there, not in a private chat.
func helpText(lang string, sf Surface) string {
	lines := []string{i18n.T(lang, "help.title"), i18n.T(lang, "help.step.open"), i18n.T(lang, "help.step.seat"),
		i18n.T(lang, "help.step.deal")}
	shown := map[Verb]bool{}
	for _, v := range helpSteps {
		shown[v] = true
	}
	for i, g := range helpGroups {
		verbs := g.verbs
		if i == len(helpGroups)-1 {
			for _, v := range Verbs {
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
			case v == VerbNew:
				text = i18n.T(lang, "help.new", optionsSyntax(lang))
			case v == VerbLearn && sf.Personal:
				text = i18n.T(lang, "help.learn.here")
			}
			lines = append(lines, "/"+string(v)+" — "+text)
		}
	}
	return strings.Join(lines, "\n")
}

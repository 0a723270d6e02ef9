package table

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/i18n"
)

// actedKind groups the commands whose buttons go stale together: a button made before its
// presser's last accepted command of the same kind is a double click or an old message. Buttons
// stay valid through others' moves and the presser's commands of other kinds, so a hand message
// need not be sent again every time someone else plays or the presser votes to stop.
type actedKind uint8

const (
	actedNone  actedKind = iota // never stale: asking again does no harm (hand, board, last)
	actedTable                  // lobby and table commands
	actedGame                   // naming trump and playing cards
	// actedCall is an announcement's own kind: a card button made just before the player called
	// Matt is still the card they meant to play.
	actedCall
)

func (k actedKind) key(playerID string) string {
	switch k {
	case actedGame:
		return playerID + "/game"
	case actedCall:
		return playerID + "/call"
	}
	return playerID + "/table"
}

// statuses is a set of table statuses a verb is allowed in.
type statuses uint8

func in(list ...Status) statuses {
	var s statuses
	for _, st := range list {
		s |= st.bit()
	}
	return s
}

func (st Status) bit() statuses {
	switch st {
	case StatusLobby:
		return 1
	case StatusPlaying:
		return 2
	case StatusOver:
		return 4
	}
	return 8
}

// scope is what a verb acts on, and so how a command of it is dispatched (see handle).
type scope uint8

const (
	// scopeInternal: said only by the table's own timer, or by the platform through the
	// service's methods (MovePlace, ClosePlace, Pause); a command with it is ignored.
	scopeInternal scope = iota
	scopeNone           // answered for the actor alone: no place or table needed
	scopePlace          // about the place the command was sent in, with a table there or not
	scopeTable          // applied to a table, under its lock (see exec)
)

// verbSpec is what the service knows about a verb: what it acts on, how to run it and what it
// needs. Commands are checked against it before the verb runs, so each handler holds only the
// verb's own logic.
type verbSpec struct {
	scope scope
	// run does the verb on the command's context: it returns a refusal, or leaves its answers
	// and changes in c.out. t is the table, locked, for scope table; nil for the others.
	run func(s *Service, ctx context.Context, t *tbl, c *call) *userError
	// personal, when set, says a command of a table verb is the actor's own instead (lang xx,
	// against lang table xx): it is then answered with scope none, and needs a person.
	personal func(args []string) bool
	// person: refused to someone who speaks for the chat (Command.Anonymous).
	person bool

	// What a table verb needs.
	acted actedKind
	// move: a game move, valid only in the game its button was made in.
	move bool
	// seated: refused to someone without a seat (unless admin is set and they administer the
	// place). admin also marks a verb an admin may do more with (AdminMatters).
	seated, admin bool
	// allowed: the statuses it works in (0: any); elsewhere it is refused with notAllowed.
	allowed    statuses
	notAllowed string
	// turns: it changes the table for everyone, so the turn (or the lobby's) timer starts again.
	// Any other stored command restarts it only when it comes from the seat to move.
	turns bool
}

// call is one command being applied: the command, the actor's seat (NoSeat away from a table)
// and language, and what the verb did.
type call struct {
	Command
	seat core.Seat
	arg  string // the arguments joined
	lang string
	out  *outcome
}

// verbs are the engine's own verbs; those answered outside it (league, privacy, coach) come in
// Config.Verbs (registry.go). Verbs lists every verb players type, in help order
// (TestVerbsAreTheRegistry).
var verbs = map[Verb]verbSpec{
	VerbHelp:  {scope: scopeNone, run: (*Service).help},
	VerbRules: {scope: scopeNone, run: (*Service).rules},

	VerbNew:   {scope: scopePlace, run: (*Service).open, person: true},
	VerbLearn: {scope: scopePlace, run: (*Service).learn, person: true},

	VerbJoin: {scope: scopeTable, run: (*Service).join, person: true, acted: actedTable, allowed: in(StatusLobby),
		notAllowed: "err.not_in_lobby", turns: true},
	VerbBot:      lobbyVerb((*Service).bot, true),
	VerbSeat:     lobbyVerb((*Service).moveSeat, false),
	VerbShuffle:  lobbyVerb((*Service).shuffle, true),
	VerbDeal:     lobbyVerb((*Service).deal, true),
	VerbLeave:    {scope: scopeTable, run: (*Service).leave, acted: actedTable, seated: true, turns: true},
	VerbTrump:    moveVerb(actedGame),
	VerbPlay:     moveVerb(actedGame),
	VerbAnnounce: moveVerb(actedCall),
	VerbHand:     {scope: scopeTable, run: (*Service).hand, seated: true, allowed: in(StatusPlaying), notAllowed: "err.no_game"},
	VerbBoard:    {scope: scopeTable, run: (*Service).board},
	VerbLast:     {scope: scopeTable, run: (*Service).last},
	VerbStop:     {scope: scopeTable, run: (*Service).stop, acted: actedTable, seated: true, admin: true},
	VerbRematch: {scope: scopeTable, run: (*Service).rematch, acted: actedTable, seated: true, allowed: in(StatusOver),
		notAllowed: "err.not_over", turns: true},
	VerbLang: {scope: scopeTable, run: (*Service).lang, personal: notForTable, acted: actedTable, seated: true, admin: true},
	VerbHint: {scope: scopeTable, run: (*Service).hint, seated: true, allowed: in(StatusPlaying), notAllowed: "err.no_game"},
	VerbReview: {scope: scopeTable, run: (*Service).reviewVerb, seated: true, allowed: in(StatusPlaying, StatusOver),
		notAllowed: "err.no_game"},

	VerbTimeout: {scope: scopeInternal},
	VerbMove:    {scope: scopeInternal},
	VerbClose:   {scope: scopeInternal},
	VerbPause:   {scope: scopeInternal},
}

// answer gives the actor the messages, and reports nothing refused.
func (c *call) answer(msgs ...Message) *userError {
	c.out.replies = append(c.out.replies, msgs...)
	return nil
}

func (s *Service) help(_ context.Context, _ *tbl, c *call) *userError {
	return c.answer(reply(c.Command, c.lang, KindReply, helpText(c.lang, s.surface(c.Place))))
}

// lobbyVerb is a verb of the lobby for the people seated there: it changes who sits where.
func lobbyVerb(run func(*Service, context.Context, *tbl, *call) *userError, admin bool) verbSpec {
	return verbSpec{scope: scopeTable, run: run, acted: actedTable, seated: true, admin: admin, allowed: in(StatusLobby),
		notAllowed: "err.not_in_lobby", turns: true}
}

// moveVerb is a game move of a kind.
func moveVerb(kind actedKind) verbSpec {
	return verbSpec{scope: scopeTable, run: (*Service).move, acted: kind, move: true, seated: true, allowed: in(StatusPlaying),
		notAllowed: "err.no_game", turns: true}
}

// AdminMatters reports whether a chat admin may do more with the verb than others (act without a
// seat, stop at once, set the house rules): a platform where asking costs a request (Telegram's
// getChatMember) asks only for these, before the command reaches the service. A verb
// registered from outside the engine (OutsideVerb.Admin) counts as the engine's own do.
func (s *Service) AdminMatters(v Verb) bool {
	spec, _ := s.spec(v)
	return spec.admin
}

// stale reports whether a button press comes too late: made before its presser's last accepted
// command of its kind, or (for a game move) in an earlier game.
func (v verbSpec) stale(st *state, cmd Command) bool {
	if cmd.Seq == 0 || v.acted == actedNone {
		return false
	}
	return cmd.Seq < st.Acted[v.acted.key(cmd.Actor.ID)] || v.move && cmd.Seq < st.GameFrom
}

// check refuses a command its verb cannot take here and now; nothing has changed yet.
func (v verbSpec) check(st *state, c *call) *userError {
	if v.allowed != 0 && v.allowed&st.Status.bit() == 0 {
		return refuse(v.notAllowed)
	}
	if v.seated && c.seat == core.NoSeat && !(v.admin && c.Admin) {
		return refuse("err.not_seated")
	}
	return nil
}

func parseSeatArg(arg string) (core.Seat, bool) {
	n, err := strconv.Atoi(strings.TrimPrefix(arg, "#"))
	if err != nil || n < 1 || n > 4 {
		return core.NoSeat, false
	}
	return core.Seat(n - 1), true // people count seats from 1
}

func (s *Service) join(_ context.Context, t *tbl, c *call) *userError {
	st := t.st
	if c.seat != core.NoSeat {
		return refuse("err.already_seated")
	}
	want := core.NoSeat
	if c.arg != "" {
		n, ok := parseSeatArg(c.arg)
		if !ok {
			return refuse("err.bad_seat", lit(c.arg))
		}
		if st.Seats[n].Human() {
			return refuse("err.seat_taken", lit(strconv.Itoa(int(n)+1)))
		}
		want = n
	}
	if want == core.NoSeat { // the first empty seat, else the first computer player's
		for i := range st.Seats {
			if st.Seats[i].Empty() {
				want = core.Seat(i)
				break
			}
		}
	}
	if want == core.NoSeat {
		for i := range st.Seats {
			if st.Seats[i].Robot {
				want = core.Seat(i)
				break
			}
		}
	}
	if want == core.NoSeat {
		return refuse("err.table_full")
	}
	p := c.Actor
	st.Seats[want] = SeatState{Player: &p}
	c.out.changed = true
	return nil
}

func (s *Service) leave(_ context.Context, t *tbl, c *call) *userError {
	st := t.st
	if st.Status == StatusPlaying {
		// Said while the player still sits there, so that the reader of a personal screen is told
		// "you left". Then a computer player takes over the seat so the others can finish.
		c.out.public = append(c.out.public, s.notice(t, "note.left_robot", seatRef(c.seat)))
		st.Seats[c.seat] = leftSeat(c.seat, st.Seats[c.seat])
	} else {
		st.Seats[c.seat] = SeatState{}
	}
	// An empty lobby stays open until it expires: someone may still join, or an admin may deal a
	// table of four computer players to watch.
	c.out.changed = true
	return nil
}

func (s *Service) bot(_ context.Context, t *tbl, c *call) *userError {
	st := t.st
	fields := strings.Fields(strings.ToLower(c.arg))
	if len(fields) > 0 && (fields[0] == "remove" || fields[0] == "rm" || fields[0] == "-") {
		for i := len(st.Seats) - 1; i >= 0; i-- {
			if len(fields) > 1 {
				n, ok := parseSeatArg(fields[1])
				if !ok {
					return refuse("err.bad_seat", lit(fields[1]))
				}
				i = int(n)
			}
			if st.Seats[i].Robot {
				st.Seats[i] = SeatState{}
				c.out.changed = true
				return nil
			}
			if len(fields) > 1 {
				break
			}
		}
		return refuse("err.no_robot")
	}
	want := core.NoSeat
	if len(fields) > 0 {
		n, ok := parseSeatArg(fields[0])
		if !ok {
			return refuse("err.bad_seat", lit(fields[0]))
		}
		if !st.Seats[n].Empty() {
			return refuse("err.seat_taken", lit(strconv.Itoa(int(n)+1)))
		}
		want = n
	}
	for i := range st.Seats {
		if want == core.NoSeat && st.Seats[i].Empty() {
			want = core.Seat(i)
		}
	}
	if want == core.NoSeat {
		return refuse("err.table_full")
	}
	st.Seats[want] = robotSeat(want)
	c.out.changed = true
	return nil
}

func (s *Service) moveSeat(_ context.Context, t *tbl, c *call) *userError {
	st := t.st
	n, ok := parseSeatArg(c.arg)
	if !ok {
		return refuse("err.bad_seat", lit(c.arg))
	}
	if n == c.seat {
		return refuse("err.same_seat")
	}
	st.Seats[c.seat], st.Seats[n] = st.Seats[n], st.Seats[c.seat]
	c.out.changed = true
	return nil
}

func (s *Service) shuffle(_ context.Context, t *tbl, c *call) *userError {
	st := t.st
	rng := st.rng(useShuffle, st.Seq)
	rng.Shuffle(4, func(i, j int) { st.Seats[i], st.Seats[j] = st.Seats[j], st.Seats[i] })
	c.out.changed = true
	return nil
}

func (s *Service) deal(_ context.Context, t *tbl, c *call) *userError {
	st := t.st
	for i := range st.Seats {
		if st.Seats[i].Empty() {
			st.Seats[i] = robotSeat(core.Seat(i)) // computer players fill the empty seats
		}
	}
	s.startMatch(t)
	c.out.changed = true
	// The lobby's last version: who sits where, no buttons.
	c.out.public = append(c.out.public, s.view.lobbyMessage(s.sight(t)))
	return nil
}

func (s *Service) hand(_ context.Context, t *tbl, c *call) *userError {
	m := s.view.handMessage(s.sight(t), c.seat, t.game().View(c.seat), c.lang)
	m.Target, m.Kind, m.Key = Target{Kind: ToActor, Place: c.Place, Player: c.Actor}, KindReply, ""
	m.Version, m.Table = t.st.Seq, t.st.ID
	m.Secret, m.Public = true, s.pressHand(c.Place, c.lang, "hand.private")
	c.out.replies = append(c.out.replies, m)
	return nil
}

func (s *Service) board(_ context.Context, t *tbl, c *call) *userError {
	m := s.view.boardMessage(s.sight(t), c.lang)
	m.Target = Target{Kind: ToActor, Place: c.Place, Player: c.Actor}
	m.Table, m.Version = t.st.ID, t.st.Seq
	c.out.replies = append(c.out.replies, m)
	return nil
}

func (s *Service) last(_ context.Context, t *tbl, c *call) *userError {
	g := t.lastGame()
	if g == nil {
		return refuse("err.no_trick")
	}
	tr, ok := g.LastTrick()
	if !ok {
		return refuse("err.no_trick")
	}
	m := reply(c.Command, c.lang, KindReply, s.view.trickText(s.sight(t), c.lang, tr, "last.title"))
	m.Picture, m.Table, m.Version = PictureLastTrick, t.st.ID, t.st.Seq
	c.out.replies = append(c.out.replies, m)
	return nil
}

// move applies trump, announce or play for the actor's seat.
func (s *Service) move(_ context.Context, t *tbl, c *call) *userError {
	g := t.game()
	if c.arg == "" {
		return refuse(map[Verb]string{VerbTrump: "err.no_suit", VerbAnnounce: "err.no_call", VerbPlay: "err.no_card"}[c.Verb])
	}
	var m core.Move
	switch c.Verb {
	case VerbTrump:
		x, ok := i18n.ParseSuit(c.arg)
		if !ok {
			return refuse("err.bad_suit", lit(c.arg))
		}
		m = core.NameTrump(c.seat, x)
	case VerbAnnounce:
		call, err := core.ParseCall(c.arg)
		if err != nil {
			return refuse("err.bad_call", lit(c.arg))
		}
		m = core.Announce(c.seat, call)
	case VerbPlay:
		card, err := i18n.ParseCard(c.arg)
		if err != nil {
			return refuse("err.bad_card", lit(c.arg))
		}
		m = core.Play(c.seat, card)
	}
	if g.Check(m) == nil {
		t.st.Seats[c.seat].Moved = true // the person plays this game themselves
	}
	return s.applyMove(t, g, m, c.out)
}

// applyMove applies a checked engine move and what follows it: scoring, the next deal, the end of
// the match. Humans and computer players both come through here.
func (s *Service) applyMove(t *tbl, g *core.Game, m core.Move, out *outcome) *userError {
	if err := g.Apply(m); err != nil {
		return fromRule(err, func(seat core.Seat) string { return seatName(t, seat) })
	}
	out.changed = true
	if m.Kind == core.MoveAnnounce {
		out.public = append(out.public, s.notice(t, "note.announced", seatRef(m.Seat), m.Call.Title()))
	}
	if g.Phase() != core.PhaseOver {
		return nil
	}
	n := t.match.NumGames()
	out.public = append(out.public, s.view.finalMessages(s.sight(t), g.Tricks(), n)...) // the summaries follow from the state (told)
	s.tutor.gameOver(t, g, n, out)
	t.noteAbsent(n)
	if t.match.Over() {
		t.st.Status = StatusOver
		s.keepMatch(t, out)
		return nil
	}
	s.dealNext(t)
	return nil
}

func recordOf(key string, rec any) Record {
	data, err := json.Marshal(rec)
	if err != nil {
		panic(err) // records are plain data; marshalling cannot fail
	}
	return Record{Key: key, Data: data}
}

// lastGame is the game being played or the last one played.
func (t *tbl) lastGame() *core.Game {
	if t.match == nil {
		return nil
	}
	return t.match.Current()
}

func (s *Service) stop(_ context.Context, t *tbl, c *call) *userError {
	st := t.st
	if !c.Admin {
		for _, v := range st.Votes {
			if v == c.Actor.ID {
				return refuse("err.already_voted")
			}
		}
		st.Votes = append(st.Votes, c.Actor.ID)
		need := 0
		for _, seat := range st.Seats {
			if seat.Human() && !seat.Away {
				need++
			}
		}
		// With one person at a personal screen their vote alone stops the match, so this notice
		// never needs a second-person variant.
		if len(st.Votes) < need {
			c.out.changed = true
			c.out.public = append(c.out.public, s.notice(t, "note.stop_vote", c.Actor.Name, len(st.Votes), need))
			return nil
		}
	}
	s.close(t, c.out)
	if c.seat != core.NoSeat {
		c.out.public = append(c.out.public, s.notice(t, "note.stopped", seatRef(c.seat)))
	} else { // an admin from outside the table
		c.out.public = append(c.out.public, s.notice(t, "note.stopped", c.Actor.Name))
	}
	return nil
}

// close ends the table for good: the match so far is kept as a record, and the table's messages
// get their last versions (see render).
func (s *Service) close(t *tbl, out *outcome) {
	st := t.st
	if st.Status == StatusPlaying && t.match != nil && t.match.NumGames() > 0 {
		s.keepMatch(t, out)
	}
	st.Status = StatusClosed
	st.Votes = nil
	out.changed = true
}

func (s *Service) rematch(_ context.Context, t *tbl, c *call) *userError {
	st := t.st
	switch strings.ToLower(c.arg) {
	case "", "same":
	case "rotate", "swap":
		// Partners change: the player in seat 0 now sits with the one who was in seat 3.
		old := st.Seats
		st.Seats = [4]SeatState{old[0], old[2], old[3], old[1]}
	default:
		return refuse("err.bad_rematch", lit(c.arg))
	}
	for i := range st.Seats {
		st.Seats[i].Away = false
	}
	st.MatchNo++
	s.startMatch(t)
	c.out.changed = true
	return nil
}

// lang sets the language the table speaks in public ("lang table xx"). The actor's own ("lang
// xx") is theirs, not the table's: core/privacy/verbs answers it (OutsideVerb.Personal), and
// without it registered it is an unknown verb.
func (s *Service) lang(ctx context.Context, t *tbl, c *call) *userError {
	if t == nil {
		return unknownVerb(c.Verb)
	}
	l, uerr := parseLangArgs(c.Args)
	if uerr != nil {
		return uerr
	}
	t.st.Lang = l
	c.out.changed = true
	c.out.replies = append(c.out.replies, reply(c.Command, l, KindNotice, i18n.T(l, "note.lang_table")))
	return nil
}

// parseLangArgs reads the language of "lang [table] xx".
func parseLangArgs(args []string) (string, *userError) {
	fields := strings.Fields(strings.ToLower(strings.Join(args, " ")))
	if len(fields) == 0 {
		return "", refuse("lang.usage")
	}
	l := i18n.Match(fields[len(fields)-1])
	if l == "" {
		return "", refuse("err.bad_lang", lit(fields[len(fields)-1]))
	}
	return l, nil
}

// notForTable reports whether "lang" arguments are the actor's own language, not the table's
// ("lang de", against "lang table de").
func notForTable(args []string) bool {
	if len(args) == 0 {
		return true
	}
	switch strings.ToLower(args[0]) {
	case "table", "channel", "chat", "group":
		return false
	}
	return true
}

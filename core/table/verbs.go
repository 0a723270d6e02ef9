package table

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table/api"
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

func in(list ...api.Status) statuses {
	var s statuses
	for _, st := range list {
		s |= statusBit(st)
	}
	return s
}

// statusBit is st's member of a statuses set: a function, not a method, so that Status can be the
// vocabulary's (core/table/api) rather than the engine's.
func statusBit(st api.Status) statuses {
	switch st {
	case api.StatusLobby:
		return 1
	case api.StatusPlaying:
		return 2
	case api.StatusOver:
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
	api.Command
	seat core.Seat
	arg  string // the arguments joined
	lang string
	out  *outcome
}

// verbs are the engine's own verbs; those answered outside it (league, privacy, coach) come in
// Config.Verbs (registry.go). Verbs lists every verb players type, in help order
// (TestVerbsAreTheRegistry). A table verb's handler is play's (play.go, through onTable): the
// spec here says what it needs, the handler what it does.
var verbs = map[api.Verb]verbSpec{
	api.VerbHelp:  {scope: scopeNone, run: (*Service).help},
	api.VerbRules: {scope: scopeNone, run: (*Service).rules},

	api.VerbNew:   {scope: scopePlace, run: (*Service).open, person: true},
	api.VerbLearn: {scope: scopePlace, run: (*Service).learn, person: true},

	api.VerbJoin: {scope: scopeTable, run: onTable(play.join), person: true, acted: actedTable, allowed: in(api.StatusLobby),
		notAllowed: "err.not_in_lobby", turns: true},
	api.VerbBot:      lobbyVerb(play.bot, true),
	api.VerbSeat:     lobbyVerb(play.moveSeat, false),
	api.VerbShuffle:  lobbyVerb(play.shuffle, true),
	api.VerbDeal:     lobbyVerb(play.deal, true),
	api.VerbLeave:    {scope: scopeTable, run: onTable(play.leave), acted: actedTable, seated: true, turns: true},
	api.VerbTrump:    moveVerb(actedGame),
	api.VerbPlay:     moveVerb(actedGame),
	api.VerbAnnounce: moveVerb(actedCall),
	api.VerbHand:     {scope: scopeTable, run: onTable(play.hand), seated: true, allowed: in(api.StatusPlaying), notAllowed: "err.no_game"},
	api.VerbBoard:    {scope: scopeTable, run: onTable(play.board)},
	api.VerbLast:     {scope: scopeTable, run: onTable(play.last)},
	api.VerbStop:     {scope: scopeTable, run: onTable(play.stop), acted: actedTable, seated: true, admin: true},
	api.VerbRematch: {scope: scopeTable, run: onTable(play.rematch), acted: actedTable, seated: true, allowed: in(api.StatusOver),
		notAllowed: "err.not_over", turns: true},
	api.VerbLang: {scope: scopeTable, run: onTable(play.lang), personal: notForTable, acted: actedTable, seated: true, admin: true},
	api.VerbHint: {scope: scopeTable, run: (*Service).hint, seated: true, allowed: in(api.StatusPlaying), notAllowed: "err.no_game"},
	api.VerbReview: {scope: scopeTable, run: (*Service).reviewVerb, seated: true, allowed: in(api.StatusPlaying, api.StatusOver),
		notAllowed: "err.no_game"},

	api.VerbTimeout: {scope: scopeInternal},
	api.VerbMove:    {scope: scopeInternal},
	api.VerbClose:   {scope: scopeInternal},
	api.VerbPause:   {scope: scopeInternal},
}

// answer gives the actor the messages, and reports nothing refused.
func (c *call) answer(msgs ...api.Message) *userError {
	c.out.replies = append(c.out.replies, msgs...)
	return nil
}

func (s *Service) help(_ context.Context, _ *tbl, c *call) *userError {
	return c.answer(reply(c.Command, c.lang, api.KindReply, helpText(c.lang, s.view.Surface(c.Place))))
}

// lobbyVerb is a verb of the lobby for the people seated there: it changes who sits where.
func lobbyVerb(run func(play, *tbl, *call) *userError, admin bool) verbSpec {
	return verbSpec{scope: scopeTable, run: onTable(run), acted: actedTable, seated: true, admin: admin, allowed: in(api.StatusLobby),
		notAllowed: "err.not_in_lobby", turns: true}
}

// moveVerb is a game move of a kind.
func moveVerb(kind actedKind) verbSpec {
	return verbSpec{scope: scopeTable, run: onTable(play.move), acted: kind, move: true, seated: true, allowed: in(api.StatusPlaying),
		notAllowed: "err.no_game", turns: true}
}

// AdminMatters reports whether a chat admin may do more with the verb than others (act without a
// seat, stop at once, set the house rules): a platform where asking costs a request (Telegram's
// getChatMember) asks only for these, before the command reaches the service. A verb
// registered from outside the engine (OutsideVerb.Admin) counts as the engine's own do.
func (s *Service) AdminMatters(v api.Verb) bool {
	spec, _ := s.spec(v)
	return spec.admin
}

// stale reports whether a button press comes too late: made before its presser's last accepted
// command of its kind, or (for a game move) in an earlier game.
func (v verbSpec) stale(st *state, cmd api.Command) bool {
	if cmd.Seq == 0 || v.acted == actedNone {
		return false
	}
	return cmd.Seq < st.Acted[v.acted.key(cmd.Actor.ID)] || v.move && cmd.Seq < st.GameFrom
}

// check refuses a command its verb cannot take here and now; nothing has changed yet.
func (v verbSpec) check(st *state, c *call) *userError {
	if v.allowed != 0 && v.allowed&statusBit(st.Status) == 0 {
		return refuse(v.notAllowed)
	}
	if v.seated && c.seat == core.NoSeat && !(v.admin && c.Admin) {
		return refuse("err.not_seated")
	}
	return nil
}

func recordOf(key string, rec any) Record {
	data, err := json.Marshal(rec)
	if err != nil {
		panic(err) // records are plain data; marshalling cannot fail
	}
	return Record{Key: key, Data: data}
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

package table

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/render"
)

// play is how one table changes by the rules of its lobby and its game: each table verb's own
// "check, then apply" (join, leave, bot, seat, shuffle, deal, the moves, stop, rematch, lang
// table), the views a seated player asks for (hand, board, last), and what a computer player's
// move or a timer shares with them (applyMove, close, notice). It exists so that the rules of a
// table live apart from how a command reaches the table and how its change is stored: a handler
// reads and changes only the table it is given (its lock held by the caller), stores nothing and
// sends nothing; what it says and keeps goes into the call's outcome, which the Service commits.
// The Service keeps the dispatch (verbs.go: find the table, lock it, check the verb's spec, run
// it, commit). What a change needs besides the table is all play holds: the clock (a match's
// start, a kept match's end), how a table is shown (notices, the lobby's last message, a game's
// summaries) and the coach's part of a game's end.
type play struct {
	now   func() time.Time
	view  renderer
	sight func(t *tbl) *render.Sight // the table as its messages show it (publisher.sight: with its pace)
	tutor tutor
}

// onTable makes a handler of play a table verb's run: the table is given, locked, by exec.
func onTable(run func(play, *tbl, *call) *userError) func(*Service, context.Context, *tbl, *call) *userError {
	return func(s *Service, _ context.Context, t *tbl, c *call) *userError { return run(s.play, t, c) }
}

func parseSeatArg(arg string) (core.Seat, bool) {
	n, err := strconv.Atoi(strings.TrimPrefix(arg, "#"))
	if err != nil || n < 1 || n > 4 {
		return core.NoSeat, false
	}
	return core.Seat(n - 1), true // people count seats from 1
}

func (p play) join(t *tbl, c *call) *userError {
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
	actor := c.Actor
	st.Seats[want] = SeatState{Player: &actor}
	c.out.changed = true
	return nil
}

func (p play) leave(t *tbl, c *call) *userError {
	st := t.st
	if st.Status == api.StatusPlaying {
		// Said while the player still sits there, so that the reader of a personal screen is told
		// "you left". Then a computer player takes over the seat so the others can finish.
		c.out.public = append(c.out.public, p.notice(t, "note.left_robot", render.SeatRef(c.seat)))
		st.Seats[c.seat] = leftSeat(c.seat, st.Seats[c.seat])
	} else {
		st.Seats[c.seat] = SeatState{}
	}
	// An empty lobby stays open until it expires: someone may still join, or an admin may deal a
	// table of four computer players to watch.
	c.out.changed = true
	return nil
}

func (p play) bot(t *tbl, c *call) *userError {
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

func (p play) moveSeat(t *tbl, c *call) *userError {
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

func (p play) shuffle(t *tbl, c *call) *userError {
	st := t.st
	rng := st.rng(useShuffle, st.Seq)
	rng.Shuffle(4, func(i, j int) { st.Seats[i], st.Seats[j] = st.Seats[j], st.Seats[i] })
	c.out.changed = true
	return nil
}

func (p play) deal(t *tbl, c *call) *userError {
	st := t.st
	for i := range st.Seats {
		if st.Seats[i].Empty() {
			st.Seats[i] = robotSeat(core.Seat(i)) // computer players fill the empty seats
		}
	}
	t.startMatch(p.now())
	c.out.changed = true
	// The lobby's last version: who sits where, no buttons.
	c.out.public = append(c.out.public, p.view.LobbyMessage(p.sight(t)))
	return nil
}

func (p play) hand(t *tbl, c *call) *userError {
	m := p.view.HandMessage(p.sight(t), c.seat, t.game().View(c.seat), c.lang)
	m.Target, m.Kind, m.Key = api.Target{Kind: api.ToActor, Place: c.Place, Player: c.Actor}, api.KindReply, ""
	m.Version, m.Table = t.st.Seq, t.st.ID
	m.Secret, m.Public = true, p.view.pressHand(c.Place, c.lang, "hand.private")
	c.out.replies = append(c.out.replies, m)
	return nil
}

func (p play) board(t *tbl, c *call) *userError {
	m := p.view.BoardMessage(p.sight(t), c.lang)
	m.Target = api.Target{Kind: api.ToActor, Place: c.Place, Player: c.Actor}
	m.Table, m.Version = t.st.ID, t.st.Seq
	c.out.replies = append(c.out.replies, m)
	return nil
}

func (p play) last(t *tbl, c *call) *userError {
	g := t.lastGame()
	if g == nil {
		return refuse("err.no_trick")
	}
	tr, ok := g.LastTrick()
	if !ok {
		return refuse("err.no_trick")
	}
	m := reply(c.Command, c.lang, api.KindReply, p.view.TrickText(p.sight(t), c.lang, tr, "last.title"))
	m.Picture, m.Table, m.Version = api.PictureLastTrick, t.st.ID, t.st.Seq
	c.out.replies = append(c.out.replies, m)
	return nil
}

// move applies trump, announce or play for the actor's seat.
func (p play) move(t *tbl, c *call) *userError {
	g := t.game()
	if c.arg == "" {
		return refuse(map[api.Verb]string{api.VerbTrump: "err.no_suit", api.VerbAnnounce: "err.no_call", api.VerbPlay: "err.no_card"}[c.Verb])
	}
	var m core.Move
	switch c.Verb {
	case api.VerbTrump:
		x, ok := i18n.ParseSuit(c.arg)
		if !ok {
			return refuse("err.bad_suit", lit(c.arg))
		}
		m = core.NameTrump(c.seat, x)
	case api.VerbAnnounce:
		call, err := core.ParseCall(c.arg)
		if err != nil {
			return refuse("err.bad_call", lit(c.arg))
		}
		m = core.Announce(c.seat, call)
	case api.VerbPlay:
		card, err := i18n.ParseCard(c.arg)
		if err != nil {
			return refuse("err.bad_card", lit(c.arg))
		}
		m = core.Play(c.seat, card)
	}
	if g.Check(m) == nil {
		t.st.Seats[c.seat].Moved = true // the person plays this game themselves
	}
	return p.applyMove(t, g, m, c.out)
}

// applyMove applies a checked engine move and what follows it: scoring, the next deal, the end of
// the match. Humans and computer players both come through here.
func (p play) applyMove(t *tbl, g *core.Game, m core.Move, out *outcome) *userError {
	if err := g.Apply(m); err != nil {
		return fromRule(err, func(seat core.Seat) string { return seatName(t, seat) })
	}
	out.changed = true
	if m.Kind == core.MoveAnnounce {
		out.public = append(out.public, p.notice(t, "note.announced", render.SeatRef(m.Seat), m.Call.Title()))
	}
	if g.Phase() != core.PhaseOver {
		return nil
	}
	n := t.match.NumGames()
	out.public = append(out.public, p.view.FinalMessages(p.sight(t), g.Tricks(), n)...) // the summaries follow from the state (told)
	p.tutor.gameOver(t, g, n, out)
	t.noteAbsent(n)
	if t.match.Over() {
		t.st.Status = api.StatusOver
		t.keepMatch(p.now(), out)
		return nil
	}
	t.dealNext()
	return nil
}

// lastGame is the game being played or the last one played.
func (t *tbl) lastGame() *core.Game {
	if t.match == nil {
		return nil
	}
	return t.match.Current()
}

func (p play) stop(t *tbl, c *call) *userError {
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
			c.out.public = append(c.out.public, p.notice(t, "note.stop_vote", c.Actor.Name, len(st.Votes), need))
			return nil
		}
	}
	p.close(t, c.out)
	if c.seat != core.NoSeat {
		c.out.public = append(c.out.public, p.notice(t, "note.stopped", render.SeatRef(c.seat)))
	} else { // an admin from outside the table
		c.out.public = append(c.out.public, p.notice(t, "note.stopped", c.Actor.Name))
	}
	return nil
}

// close ends the table for good: the match so far is kept as a record, and the table's messages
// get their last versions (see render).
func (p play) close(t *tbl, out *outcome) {
	st := t.st
	if st.Status == api.StatusPlaying && t.match != nil && t.match.NumGames() > 0 {
		t.keepMatch(p.now(), out)
	}
	st.Status = api.StatusClosed
	st.Votes = nil
	out.changed = true
}

func (p play) rematch(t *tbl, c *call) *userError {
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
	t.startMatch(p.now())
	c.out.changed = true
	return nil
}

// lang sets the language the table speaks in public ("lang table xx"). The actor's own ("lang
// xx") is theirs, not the table's: core/privacy/verbs answers it (OutsideVerb.Personal), and
// without it registered it is an unknown verb.
func (p play) lang(t *tbl, c *call) *userError {
	if t == nil {
		return unknownVerb(c.Verb)
	}
	l, uerr := parseLangArgs(c.Args)
	if uerr != nil {
		return uerr
	}
	t.st.Lang = l
	c.out.changed = true
	c.out.replies = append(c.out.replies, reply(c.Command, l, api.KindNotice, i18n.T(l, "note.lang_table")))
	return nil
}

// timeout is what a table's deadline does to it (tbl.deadline): the lobby expires, a finished
// match's table closes, the player to move is reminded, and then a computer player acts for
// them. It gives the arguments the change is stored with, and false when nothing is due.
func (p play) timeout(t *tbl, out *outcome) (args []string, due bool) {
	st := t.st
	switch st.Status {
	case api.StatusLobby:
		p.close(t, out)
		out.public = append(out.public, p.notice(t, "note.lobby_expired"))
	case api.StatusOver:
		p.close(t, out)
		args = []string{"closed"}
	case api.StatusPlaying:
		g := t.game()
		if g == nil {
			return nil, false
		}
		seat := g.ToMove()
		if !st.Reminded {
			st.Reminded = true
			args = []string{"reminder"}
			pl := *st.Seats[seat].Player
			lang := p.view.PersonLang(pl, t.st.Lang)
			m := api.Message{Target: api.Target{Kind: api.ToPlayer, Player: pl}, Kind: api.KindNotice, Lang: lang,
				Title: render.PrivateTitle(t.st.Place, lang), Text: i18n.T(lang, "note.reminder")}
			out.public = append(out.public, m)
		} else {
			st.Seats[seat].Away = true
			args = []string{"away"}
			out.public = append(out.public, p.notice(t, "note.away", render.SeatRef(seat)))
		}
	default:
		return nil, false
	}
	out.changed = true
	return args, true
}

// pause pauses or resumes the table (Service.Pause): each seated person is told privately. It
// gives the argument the change is stored with.
func (p play) pause(t *tbl, paused bool, out *outcome) string {
	st := t.st
	st.Paused = paused
	key, arg := "note.paused", "on"
	if !paused {
		key, arg = "note.unpaused", "off"
	}
	out.changed = true
	for _, seat := range st.Seats {
		if !seat.Human() {
			continue
		}
		lang := p.view.PersonLang(*seat.Player, t.st.Lang)
		out.public = append(out.public, api.Message{Target: api.Target{Kind: api.ToPlayer, Place: st.Place, Player: *seat.Player},
			Kind: api.KindNotice, Lang: lang, Title: render.PrivateTitle(t.st.Place, lang), Text: i18n.T(lang, key)})
	}
	return arg
}

// notice is a one-off public message in the table's language; its arguments may name a seat
// with seatRef (see say). Its Reason is its catalog key, so that a surface may fold it into the
// table message instead (a call, which the table message lists).
func (p play) notice(t *tbl, key string, args ...any) api.Message {
	return api.Message{Target: api.Target{Kind: api.ToPlace, Place: t.st.Place}, Kind: api.KindNotice,
		Text: p.view.Say(p.sight(t), t.st.Lang, key, args...), Lang: t.st.Lang, Reason: key}
}

// pressHand is a public text that sends the player to their cards (key takes the "My hand"
// button's label), or where there are no buttons, its typed variant (key.typed).
func (r renderer) pressHand(p api.Place, lang, key string) string {
	if r.Surface(p).Typed {
		return i18n.T(lang, key+".typed")
	}
	return i18n.T(lang, key, i18n.T(lang, "btn.hand"))
}

// keepMatch keeps the table's match as it ends (finished or stopped): its record, which the
// league learns from with the change (store).
func (t *tbl) keepMatch(end time.Time, out *outcome) {
	rec := t.matchRecord(end)
	out.records = append(out.records, rec)
	out.league = &learnedMatch{rec: rec, match: t.match}
}

// dealNext deals the match's next game from the table's secret. Game buttons made before the
// command that deals it (its sequence number is the next one) belong to an earlier game.
func (t *tbl) dealNext() {
	rng := t.st.rng(useDeal, t.st.Deals)
	t.st.Deals++
	t.st.GameFrom = t.st.Seq + 1
	for i := range t.st.Seats {
		t.st.Seats[i].Moved = false
	}
	hands := core.DealHands(rng, t.match.NextDealer())
	if _, err := t.match.Deal(hands); err != nil {
		panic(fmt.Sprintf("table %s: dealing: %v", t.st.ID, err)) // the service checked the match can go on
	}
}

// startMatch begins a match: the first dealer is drawn from the table's secret.
func (t *tbl) startMatch(now time.Time) {
	rng := t.st.rng(useFirst, uint64(t.st.MatchNo))
	t.st.First = rng.IntN(4)
	t.st.Games = nil
	t.st.MatchAt = now.UnixMilli()
	for i := range t.st.Seats { // who left or was absent in the last match
		t.st.Seats[i].Left, t.st.Seats[i].Absent = nil, nil
	}
	t.match, _ = core.NewMatch(t.opts.Rules, core.Seat(t.st.First))
	t.st.Status = api.StatusPlaying
	t.st.Votes = nil
	t.dealNext()
}

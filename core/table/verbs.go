package table

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/i18n"
)

// do applies one verb to the table (its lock held). It validates first and changes nothing when
// it returns an error.
func (s *Service) do(ctx context.Context, t *tbl, cmd Command, lang string, out *outcome) *userError {
	st := t.st
	seat := seatOf(st, cmd.Actor.ID)
	arg := strings.TrimSpace(strings.Join(cmd.Args, " "))
	switch cmd.Verb {
	case VerbJoin:
		return s.join(t, cmd, seat, arg, out)
	case VerbLeave:
		return s.leave(t, seat, out)
	case VerbBot:
		return s.bot(t, cmd, seat, arg, out)
	case VerbSeat:
		return s.moveSeat(t, seat, arg, out)
	case VerbShuffle:
		if st.Status != StatusLobby {
			return refuse("err.not_in_lobby")
		}
		if seat == core.NoSeat && !cmd.Admin {
			return refuse("err.not_seated")
		}
		rng := rand.New(rand.NewPCG(st.Seed, st.Seq))
		rng.Shuffle(4, func(i, j int) { st.Seats[i], st.Seats[j] = st.Seats[j], st.Seats[i] })
		out.changed = true
		return nil
	case VerbDeal:
		if st.Status != StatusLobby {
			return refuse("err.not_in_lobby")
		}
		if seat == core.NoSeat && !cmd.Admin {
			return refuse("err.not_seated")
		}
		for i := range st.Seats {
			if st.Seats[i].Empty() {
				st.Seats[i].Robot = true // computer players fill the empty seats
			}
		}
		s.startMatch(t)
		out.changed = true
		// The lobby's last version: who sits where, no buttons.
		lobby := s.lobbyMessage(t)
		out.public = append(out.public, lobby)
		return nil
	case VerbTrump, VerbAnnounce, VerbPlay:
		return s.move(t, cmd, seat, arg, out)
	case VerbHand:
		if seat == core.NoSeat {
			return refuse("err.not_seated")
		}
		if t.game() == nil {
			return refuse("err.no_game")
		}
		m := s.handMessage(t, seat, lang)
		m.Target, m.Kind, m.Key = Target{Kind: ToActor, Place: cmd.Place, Player: cmd.Actor}, KindReply, ""
		m.Version, m.Table = st.Seq, st.ID
		out.replies = append(out.replies, m)
		return nil
	case VerbBoard:
		m := s.boardMessage(t, lang)
		m.Target = Target{Kind: ToActor, Place: cmd.Place, Player: cmd.Actor}
		m.Table, m.Version = st.ID, st.Seq
		out.replies = append(out.replies, m)
		return nil
	case VerbLast:
		g := t.lastGame()
		if g == nil {
			return refuse("err.no_trick")
		}
		tr, ok := g.LastTrick()
		if !ok {
			return refuse("err.no_trick")
		}
		m := reply(cmd, lang, KindReply, trickText(t, lang, tr, "last.title"))
		m.Picture, m.Table, m.Version = PictureTable, st.ID, st.Seq
		out.replies = append(out.replies, m)
		return nil
	case VerbStop:
		return s.stop(t, cmd, seat, out)
	case VerbRematch:
		return s.rematch(t, seat, arg, out)
	case VerbLang:
		return s.lang(t, cmd, seat, out)
	}
	return refuse("err.unknown_verb", lit(string(cmd.Verb)))
}

func parseSeatArg(arg string) (core.Seat, bool) {
	n, err := strconv.Atoi(strings.TrimPrefix(arg, "#"))
	if err != nil || n < 1 || n > 4 {
		return core.NoSeat, false
	}
	return core.Seat(n - 1), true // people count seats from 1
}

func (s *Service) join(t *tbl, cmd Command, seat core.Seat, arg string, out *outcome) *userError {
	st := t.st
	if st.Status != StatusLobby {
		return refuse("err.not_in_lobby")
	}
	if seat != core.NoSeat {
		return refuse("err.already_seated")
	}
	want := core.NoSeat
	if arg != "" {
		n, ok := parseSeatArg(arg)
		if !ok {
			return refuse("err.bad_seat", lit(arg))
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
	p := cmd.Actor
	st.Seats[want] = SeatState{Player: &p}
	out.changed = true
	return nil
}

func (s *Service) leave(t *tbl, seat core.Seat, out *outcome) *userError {
	st := t.st
	if seat == core.NoSeat {
		return refuse("err.not_seated")
	}
	name := seatName(t, seat)
	switch st.Status {
	case StatusLobby:
		st.Seats[seat] = SeatState{}
	case StatusPlaying:
		// A computer player takes over the seat so the others can finish the match.
		st.Seats[seat] = SeatState{Robot: true}
		out.public = append(out.public, s.notice(t, "note.left_robot", name))
	default:
		st.Seats[seat] = SeatState{}
	}
	// An empty lobby stays open until it expires: someone may still join, or an admin may deal a
	// table of four computer players to watch.
	out.changed = true
	return nil
}

func (s *Service) bot(t *tbl, cmd Command, seat core.Seat, arg string, out *outcome) *userError {
	st := t.st
	if st.Status != StatusLobby {
		return refuse("err.not_in_lobby")
	}
	if seat == core.NoSeat && !cmd.Admin {
		return refuse("err.not_seated")
	}
	fields := strings.Fields(strings.ToLower(arg))
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
				out.changed = true
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
	st.Seats[want] = SeatState{Robot: true}
	out.changed = true
	return nil
}

func (s *Service) moveSeat(t *tbl, seat core.Seat, arg string, out *outcome) *userError {
	st := t.st
	if st.Status != StatusLobby {
		return refuse("err.not_in_lobby")
	}
	if seat == core.NoSeat {
		return refuse("err.not_seated")
	}
	n, ok := parseSeatArg(arg)
	if !ok {
		return refuse("err.bad_seat", lit(arg))
	}
	if n == seat {
		return refuse("err.same_seat")
	}
	st.Seats[seat], st.Seats[n] = st.Seats[n], st.Seats[seat]
	out.changed = true
	return nil
}

// move applies trump, announce or play for the actor's seat.
func (s *Service) move(t *tbl, cmd Command, seat core.Seat, arg string, out *outcome) *userError {
	if seat == core.NoSeat {
		return refuse("err.not_seated")
	}
	g := t.game()
	if g == nil {
		return refuse("err.no_game")
	}
	var m core.Move
	switch cmd.Verb {
	case VerbTrump:
		x, ok := i18n.ParseSuit(arg)
		if !ok {
			return refuse("err.bad_suit", lit(arg))
		}
		m = core.NameTrump(seat, x)
	case VerbAnnounce:
		c, err := core.ParseCall(arg)
		if err != nil {
			return refuse("err.bad_call", lit(arg))
		}
		m = core.Announce(seat, c)
	case VerbPlay:
		c, err := i18n.ParseCard(arg)
		if err != nil {
			return refuse("err.bad_card", lit(arg))
		}
		m = core.Play(seat, c)
	}
	return s.applyMove(t, g, m, out)
}

// applyMove applies a checked engine move and what follows it: scoring, the next deal, the end of
// the match. Humans and computer players both come through here.
func (s *Service) applyMove(t *tbl, g *core.Game, m core.Move, out *outcome) *userError {
	if err := g.Apply(m); err != nil {
		return fromRule(err, func(seat core.Seat) string { return seatName(t, seat) })
	}
	out.changed = true
	if m.Kind == core.MoveAnnounce {
		out.public = append(out.public, s.notice(t, "note.announced", seatName(t, m.Seat), m.Call.Title()))
	}
	if g.Phase() != core.PhaseOver {
		return nil
	}
	st := t.st
	n := t.match.NumGames()
	out.records = append(out.records, recordOf(fmt.Sprintf("%s/m%d/g%d", st.ID, st.MatchNo, n), g.Record()))
	out.public = append(out.public, s.finalMessages(t, g, n)...)
	out.public = append(out.public, s.gameSummary(t, g, n))
	if t.match.Over() {
		st.Status = StatusOver
		out.records = append(out.records, recordOf(fmt.Sprintf("%s/m%d/match", st.ID, st.MatchNo), t.match.Record()))
		out.public = append(out.public, s.matchSummary(t))
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

func (s *Service) stop(t *tbl, cmd Command, seat core.Seat, out *outcome) *userError {
	st := t.st
	if st.Status == StatusClosed {
		return refuse("err.no_table")
	}
	if seat == core.NoSeat && !cmd.Admin {
		return refuse("err.not_seated")
	}
	if !cmd.Admin {
		for _, v := range st.Votes {
			if v == cmd.Actor.ID {
				return refuse("err.already_voted")
			}
		}
		st.Votes = append(st.Votes, cmd.Actor.ID)
		need := 0
		for _, seat := range st.Seats {
			if seat.Human() && !seat.Away {
				need++
			}
		}
		if len(st.Votes) < need {
			out.changed = true
			out.public = append(out.public, s.notice(t, "note.stop_vote", cmd.Actor.Name, len(st.Votes), need))
			return nil
		}
	}
	st.Status = StatusClosed
	st.Votes = nil
	out.changed = true
	if t.match != nil && t.match.NumGames() > 0 {
		out.records = append(out.records, recordOf(fmt.Sprintf("%s/m%d/match", st.ID, st.MatchNo), t.match.Record()))
	}
	out.public = append(out.public, s.notice(t, "note.stopped", cmd.Actor.Name))
	return nil
}

func (s *Service) rematch(t *tbl, seat core.Seat, arg string, out *outcome) *userError {
	st := t.st
	if st.Status != StatusOver {
		return refuse("err.not_over")
	}
	if seat == core.NoSeat {
		return refuse("err.not_seated")
	}
	switch strings.ToLower(arg) {
	case "", "same":
	case "rotate", "swap":
		// Partners change: the player in seat 0 now sits with the one who was in seat 3.
		old := st.Seats
		st.Seats = [4]SeatState{old[0], old[2], old[3], old[1]}
	default:
		return refuse("err.bad_rematch", lit(arg))
	}
	for i := range st.Seats {
		st.Seats[i].Away = false
	}
	st.MatchNo++
	s.startMatch(t)
	out.changed = true
	return nil
}

func (s *Service) lang(t *tbl, cmd Command, seat core.Seat, out *outcome) *userError {
	fields := strings.Fields(strings.ToLower(strings.Join(cmd.Args, " ")))
	if len(fields) == 0 {
		return refuse("lang.usage")
	}
	l := i18n.Match(fields[len(fields)-1])
	if l == "" {
		return refuse("err.bad_lang", lit(fields[len(fields)-1]))
	}
	if fields[0] == "table" || fields[0] == "channel" || fields[0] == "chat" {
		if seat == core.NoSeat && !cmd.Admin {
			return refuse("err.not_seated")
		}
		t.st.Lang = l
		out.changed = true
		out.replies = append(out.replies, reply(cmd, l, KindNotice, i18n.T(l, "note.lang_table")))
		return nil
	}
	if t.st.Langs == nil {
		t.st.Langs = map[string]string{}
	}
	t.st.Langs[cmd.Actor.ID] = l
	out.changed = true
	out.replies = append(out.replies, reply(cmd, l, KindNotice, i18n.T(l, "note.lang_player")))
	return nil
}

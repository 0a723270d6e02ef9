package table

import (
	"context"
	"errors"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/i18n"
)

// learnDefaults are a guided game's options, before what learn was given: gentle computer
// players, no turn timer, hints on.
var learnDefaults = []string{"level=easy", "timer=none", "hints=on"}

// learn opens a guided solo game in the actor's private chat (or on a screen of their own):
// the actor against three computer players, dealt at once. At each of their turns they are told
// privately which cards they may play and why, what an announcement needs, and after each game
// how the stripes moved. It counts for no rating.
func (s *Service) learn(ctx context.Context, cmd Command, lang string) []Message {
	if cmd.Anonymous {
		return []Message{s.errorReply(cmd, lang, refuse("err.anonymous"))}
	}
	if !cmd.Private && !s.surface(cmd.Place).Personal {
		return []Message{s.errorReply(cmd, lang, refuse("learn.where"))}
	}
	opts, err := ParseOptions(append(slices.Clone(learnDefaults), cmd.Args...))
	if oe := (*OptionError)(nil); errors.As(err, &oe) {
		return []Message{s.errorReply(cmd, lang, optionRefusal(oe))}
	}
	t, uerr, dup := s.claimPlace(ctx, cmd, func(id string, secret []byte) *tbl {
		st := &state{V: stateVersion, ID: id, Place: cmd.Place, Lang: lang, Options: opts.state(), Status: StatusLobby,
			Secret: secret, MatchNo: 1, Created: s.cfg.Now().UnixMilli(), Learn: true}
		st.Seats[0] = SeatState{Player: &Player{ID: cmd.Actor.ID, Name: cmd.Actor.Name, Locale: cmd.Actor.Locale}}
		for i := 1; i < 4; i++ {
			st.Seats[i] = robotSeat(core.Seat(i))
		}
		return &tbl{st: st, opts: opts, sent: map[string]uint64{}}
	})
	switch {
	case dup:
		return []Message{reply(cmd, lang, KindNotice, i18n.T(lang, "note.duplicate"))}
	case uerr != nil:
		return []Message{s.errorReply(cmd, lang, uerr)}
	}
	defer t.mu.Unlock()
	s.startMatch(t)
	welcome := reply(cmd, lang, KindNotice, i18n.N(lang, "learn.welcome", opts.Rules.Stripes))
	out := outcome{changed: true, replies: []Message{welcome}}
	if uerr := s.commit(ctx, t, cmd, &out, actedTable, true); uerr != nil {
		s.unclaim(t)
		return []Message{s.errorReply(cmd, lang, uerr)}
	}
	id := t.st.ID
	for i := range out.replies {
		out.replies[i].Table = id
	}
	return out.replies
}

// learnMessages is the lesson for the learner's turn, once per turn (table lock held).
func (s *Service) learnMessages(t *tbl) []Message {
	g := t.game()
	if !t.st.Learn || g == nil || t.st.Paused {
		return nil
	}
	seat := g.ToMove()
	p := t.st.Seats[seat].Player
	if p == nil || t.st.Seats[seat].Away {
		return nil
	}
	turn := strconv.Itoa(t.match.NumGames()) + "/" + strconv.Itoa(len(g.Moves()))
	if t.learnSaid == turn {
		return nil
	}
	t.learnSaid = turn
	lang := s.langOf(t, *p)
	return []Message{s.lesson(t, *p, lang, learnText(lang, g.View(seat)))}
}

// lesson is a private text of the guided game.
func (s *Service) lesson(t *tbl, p Player, lang, text string) Message {
	return Message{Target: Target{Kind: ToPlayer, Place: t.st.Place, Player: p}, Kind: KindNotice, Lang: lang,
		Title: s.privateTitle(t, lang), Text: text, Secret: true, Public: i18n.T(lang, "learn.private")}
}

// chatCards writes cards for chat, in the hand's order.
func chatCards(set core.CardSet) string { return cardList(set)("") }

// learnText explains the learner's turn: naming trump, or which cards they may play and why,
// with the trump order, and the calls they could make.
func learnText(lang string, v core.View) string {
	queens := chatCards(core.SetOf(core.QueenSpades, core.QueenHearts, core.QueenDiamonds))
	if v.Phase == core.PhaseTrump {
		return i18n.T(lang, "learn.trump", chatCards(v.Hand), queens) + "\n" + i18n.T(lang, "learn.tip")
	}
	var lines []string
	if len(v.Calls) > 0 {
		c := v.Calls[len(v.Calls)-1]
		for _, k := range v.Calls {
			if k.Queens().Len() > c.Queens().Len() {
				c = k
			}
		}
		// Each of Konter and Matt raises the stake by one stripe: Konter a Matt, both, by two.
		lines = append(lines, i18n.N(lang, "learn.call", bits.OnesCount8(uint8(c)), chatCards(c.Queens()), c.Title(), c.String()))
	}
	x := v.Trump
	trumps := core.Trumps(x)
	legal := chatCards(v.Legal)
	switch {
	case v.Trick.N == 0:
		lines = append(lines, i18n.T(lang, "learn.lead", legal))
	case trumps.Has(v.Trick.Led()) && !(v.Hand & trumps).Empty():
		lines = append(lines, i18n.T(lang, "learn.trump_led", v.Trick.Led().Chat(), legal))
	case trumps.Has(v.Trick.Led()):
		lines = append(lines, i18n.T(lang, "learn.trump_led_none", v.Trick.Led().Chat()))
	case !(v.Hand & core.PlainOf(v.Trick.Led().Suit(), x)).Empty():
		lines = append(lines, i18n.T(lang, "learn.suit_led", i18n.SuitLabel(lang, v.Trick.Led().Suit()), legal))
	default:
		lines = append(lines, i18n.T(lang, "learn.suit_none", i18n.SuitLabel(lang, v.Trick.Led().Suit()), queens))
	}
	lines = append(lines, i18n.T(lang, "learn.order", i18n.SuitLabel(lang, x), orderText(x)))
	return strings.Join(lines, "\n")
}

// orderText is the trumps of x, highest first.
func orderText(x core.Suit) string {
	var out []string
	for _, c := range core.TrumpOrder(x) {
		out = append(out, c.Chat())
	}
	return strings.Join(out, " > ")
}

// learnStripes explains how a game of the guided match moved the stripes.
func (s *Service) learnStripes(t *tbl, g *core.Game, n int) []Message {
	p := t.st.Seats[0].Player
	if p == nil {
		return nil
	}
	lang := s.langOf(t, *p)
	r := g.Result()
	trumpTeam := g.TrumpTeam()
	var lines []string
	if w, ok := r.Outcome.Winner(); ok {
		crossed := -r.Stripes[w]
		lines = append(lines, i18n.N(lang, "learn.won", crossed, w.String(), r.Points[w], r.Stake))
		if crossed > r.Stake {
			lines = append(lines, i18n.T(lang, "learn.bonus"))
		}
		if w != trumpTeam {
			lines = append(lines, i18n.N(lang, "learn.trump_lost", r.Stripes[trumpTeam], trumpTeam.String()))
		}
	} else {
		lines = append(lines, i18n.N(lang, "learn.draw", r.Stripes[trumpTeam], trumpTeam.String()))
	}
	b := t.match.History()[n-1].Board
	lines = append(lines, i18n.T(lang, "learn.board", b.Open(core.TeamA), b.Open(core.TeamB)))
	return []Message{s.lesson(t, *p, lang, strings.Join(lines, "\n"))}
}

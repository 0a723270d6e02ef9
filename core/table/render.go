package table

import (
	"slices"
	"strings"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/options"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/render"
)

// The engine's side of what tables show: core/table/render makes every message from a Sight,
// which the service takes here under the table's lock; a hand's message is made from that seat's
// view alone, and only when what it shows changed (handSig). Help's text is here too.

// renderer is core/table/render's Renderer with what the engine adds to it: a refusal's message
// (errorReply, refusal, pressHand), which needs the engine's userError.
type renderer struct{ render.Renderer }

// sight takes the table as its messages show it (table lock held).
func (p *publisher) sight(t *tbl) *render.Sight {
	st := t.st
	sh := &render.Sight{ID: st.ID, Seq: st.Seq, Place: st.Place, Lang: st.Lang, Status: st.Status, MatchNo: st.MatchNo,
		Learn: st.Learn, Seats: publicSeats(&st.Seats), Options: t.opts, Board: core.Board{Start: t.opts.Rules.Stripes}}
	if m := t.match; m != nil {
		games := m.Games()
		sh.Match, sh.Games, sh.Board = true, len(games), m.Board()
		for _, g := range games {
			if g.Phase() != core.PhaseOver {
				break
			}
			sh.Finished++
		}
		sh.History = m.History
		sh.Public = func(n int) core.View { return games[n-1].View(core.NoSeat) }
		sh.HoldFor = t.holdFor(p.pacer)
	}
	return sh
}

// publicSeats are the seats as everyone may see them.
func publicSeats(seats *[4]SeatState) [4]render.Seat {
	var out [4]render.Seat
	for i, st := range seats {
		out[i] = render.Seat{Player: st.Player, Robot: st.Robot, Away: st.Away, No: st.robotNo(core.Seat(i))}
	}
	return out
}

// render gives the table's editable messages as they should look now (table lock held).
func (p *publisher) render(t *tbl) []api.Message {
	sh := p.sight(t)
	switch {
	case sh.Status == api.StatusLobby:
		return []api.Message{p.view.LobbyMessage(sh)}
	case sh.Status == api.StatusClosed && !sh.Match:
		return []api.Message{p.view.LobbyMessage(sh)} // the lobby shows it closed, with no buttons
	case sh.Status == api.StatusClosed:
		var hands [4]core.CardSet
		if g := t.lastGame(); g.Phase() != core.PhaseOver {
			for i, seat := range t.st.Seats {
				if seat.Human() {
					hands[i] = g.Hand(core.Seat(i))
				}
			}
		}
		return p.view.ClosedMessages(sh, hands)
	}
	// The table message among them, in its place; a summary already delivered is not made again.
	out := p.view.Told(sh, func(key string) bool { _, done := t.sent[key]; return done })
	if g := t.game(); g != nil {
		for i, seat := range t.st.Seats {
			if !seat.Human() {
				continue
			}
			// Most moves change two hands at most: skip building the others' messages.
			lang := p.view.PersonLang(*seat.Player, t.st.Lang)
			sig := handSignature(t, g, core.Seat(i), lang)
			if t.handSig[i] == sig {
				continue
			}
			t.handSig[i] = sig
			out = append(out, p.view.HandMessage(sh, core.Seat(i), g.View(core.Seat(i)), lang))
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

// seatName is how a seat is called at the table: the player's name, or "Computer 2".
func seatName(t *tbl, seat core.Seat) string {
	seats := publicSeats(&t.st.Seats)
	return render.NameOfSeat(&seats, t.st.Lang, seat)
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

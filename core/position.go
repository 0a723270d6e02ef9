package core

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrInvalidPosition is wrapped by every error of ParsePosition.
var ErrInvalidPosition = errors.New("not a position")

func posErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidPosition}, args...)...)
}

// ParsePosition reads a position into a game ready to go on from there. Errors wrap
// ErrInvalidPosition (and ErrInvalidCard or ErrInvalidSuit for a bad card or suit).
//
// A position is a game on one line, the way FEN writes a chess position, so that a rules test is
// one line: position, move, expected position or error. For example
//
//	H AS.KH.9C/QH.9S/10D/JC 1:KS #0
//
// is: hearts are trump; seat 0 holds AS KH 9C, seat 1 QH 9S, seat 2 10D, seat 3 JC; seat 1 led
// the trick in progress with KS, so seat 2 is to play; no trick is complete yet, so the
// announcement window is open. Three fields, separated by spaces, are required:
//
//  1. The trump suit (S H D C, or a suit symbol), or "-" while forehand has still to name it.
//  2. The four hands, seat 0 first, separated by "/"; cards separated by "."; "-" for an empty
//     hand. Once trump is named the order within a hand does not matter and hands are printed
//     sorted; before, each hand is the six cards as dealt (the first three are the first packet).
//  3. The trick in progress: the seat that led it, ":", then its cards in the order played, "-"
//     for none. The seat to move is the one after the cards played.
//
// Then come, optionally and in any order:
//
//	#n               completed tricks, 0..6 (default: what won= adds up to, else 0).
//	                 Announcements are only possible at #0. #6 is a finished game: hands and
//	                 trick are empty, and the trick's leader is the seat that won the last trick.
//	won=A,B          tricks won by team A and team B, adding up to n (default: all n to the team
//	                 of the trick's leader, who won the last one).
//	points=A,B       card points taken by team A and team B (default 0,0).
//	dealer=N         the seat that dealt (default: the seat before the trick's leader; at #0 the
//	                 leader is forehand, so the dealer can be no other seat).
//	calls=S:CALL,... announcements made, in order, e.g. calls=3:konter,0:matt.
//	ann=off draw=flat1 bonus=off dir=anticlockwise stripes=N
//	                 table options that differ from DefaultRules.
//
// Hands may be partial: a rules problem lists only the cards it is about, and the cards it leaves
// out take no part. Such a game stops early when the seat to move holds no card; play it to the
// end and score it only when every card is somewhere (hands, trick, or the points of completed
// tricks). ParsePosition refuses what a position can get wrong: a card in two places, a hand
// larger than the tricks left allow, a seat to move without a card, tricks won that do not add
// up, impossible calls (the announcer must be able to hold its queens and have had its turn),
// more than 40 points.
//
// A game made from a position has no history: its completed tricks are placeholders with no
// cards and no leader or winner (NoSeat), Moves starts empty, and Dealt holds the hands as the
// position shows them, so its Record does not replay (unless trump is still to be named: that
// position is a whole deal). Position prints any game; for a game made from a position, parsing
// what it prints gives an equal game.
func ParsePosition(s string) (*Game, error) {
	fields := strings.Fields(s)
	if len(fields) < 3 {
		return nil, posErr("want trump, hands and trick, got %d fields", len(fields))
	}
	p := position{rules: DefaultRules(), dealer: NoSeat}
	if err := p.parseTrump(fields[0]); err != nil {
		return nil, err
	}
	if err := p.parseHands(fields[1]); err != nil {
		return nil, err
	}
	if err := p.parseTrick(fields[2]); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, f := range fields[3:] {
		key, val, ok := strings.Cut(f, "=")
		if strings.HasPrefix(f, "#") {
			key, val, ok = "#", f[1:], true
		}
		if !ok {
			return nil, posErr("%q is neither #n nor key=value", f)
		}
		if seen[key] {
			return nil, posErr("%q given twice", key)
		}
		seen[key] = true
		if err := p.parseOption(key, val); err != nil {
			return nil, err
		}
	}
	switch {
	case seen["won"] && !seen["#"]:
		p.done = p.won[0] + p.won[1]
	case !seen["won"] && p.done > 0:
		p.won[p.leader.Team()] = p.done
	}
	return p.game()
}

// position is a parsed position before it becomes a game.
type position struct {
	named  bool // trump is named
	trump  Suit
	hands  [4][]Card
	leader Seat
	trick  []Card
	done   int
	won    [2]int
	points [2]int
	dealer Seat
	anns   []Announcement
	rules  Rules
}

func (p *position) parseTrump(f string) error {
	if f == "-" {
		return nil
	}
	x, err := ParseSuit(f)
	if err != nil {
		return fmt.Errorf("%w: trump: %w", ErrInvalidPosition, err)
	}
	p.named, p.trump = true, x
	return nil
}

// parseCards reads cards separated by "."; "-" and "" are no cards.
func parseCards(f string) ([]Card, error) {
	if f == "-" || f == "" {
		return nil, nil
	}
	var out []Card
	for _, t := range strings.Split(f, ".") {
		c, err := ParseCard(t)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

func (p *position) parseHands(f string) error {
	parts := strings.Split(f, "/")
	if len(parts) != 4 {
		return posErr("want 4 hands separated by /, got %d", len(parts))
	}
	for s, part := range parts {
		cards, err := parseCards(part)
		if err != nil {
			return fmt.Errorf("%w: hand %d: %w", ErrInvalidPosition, s, err)
		}
		p.hands[s] = cards
	}
	return nil
}

func parseSeat(f string) (Seat, error) {
	if len(f) != 1 || f[0] < '0' || f[0] > '3' {
		return NoSeat, posErr("seat %q is not 0..3", f)
	}
	return Seat(f[0] - '0'), nil
}

func (p *position) parseTrick(f string) error {
	lead, cards, ok := strings.Cut(f, ":")
	if !ok {
		return posErr("trick %q: want SEAT:CARDS", f)
	}
	var err error
	if p.leader, err = parseSeat(lead); err != nil {
		return err
	}
	if p.trick, err = parseCards(cards); err != nil {
		return fmt.Errorf("%w: trick: %w", ErrInvalidPosition, err)
	}
	return nil
}

// parsePair reads "A,B" as two numbers 0..40.
func parsePair(key, val string) ([2]int, error) {
	a, b, ok := strings.Cut(val, ",")
	x, err1 := strconv.Atoi(a)
	y, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || x < 0 || y < 0 || x > 40 || y > 40 {
		return [2]int{}, posErr("%s=%q: want two numbers A,B", key, val)
	}
	return [2]int{x, y}, nil
}

func (p *position) parseOption(key, val string) error {
	var err error
	switch key {
	case "#":
		n, err := strconv.Atoi(val)
		if err != nil || n < 0 || n > 6 || len(val) != 1 {
			return posErr("#%s: completed tricks are 0..6", val)
		}
		p.done = n
	case "won":
		p.won, err = parsePair(key, val)
	case "points":
		p.points, err = parsePair(key, val)
	case "dealer":
		p.dealer, err = parseSeat(val)
	case "calls":
		for _, item := range strings.Split(val, ",") {
			seat, call, ok := strings.Cut(item, ":")
			if !ok {
				return posErr("call %q: want SEAT:CALL", item)
			}
			s, err := parseSeat(seat)
			if err != nil {
				return err
			}
			c, err := ParseCall(call)
			if err != nil {
				return posErr("call %q: unknown call", item)
			}
			p.anns = append(p.anns, Announcement{Seat: s, Call: c})
		}
	case "ann":
		p.rules.Announcements, err = onOff(key, val)
	case "bonus":
		p.rules.AllTricksBonus, err = onOff(key, val)
	case "draw":
		switch val {
		case "stake":
			p.rules.DrawPenalty = DrawStake
		case "flat1":
			p.rules.DrawPenalty = DrawFlat1
		default:
			return posErr("draw=%q: want stake or flat1", val)
		}
	case "dir":
		switch val {
		case "clockwise":
			p.rules.Direction = Clockwise
		case "anticlockwise":
			p.rules.Direction = Anticlockwise
		default:
			return posErr("dir=%q: want clockwise or anticlockwise", val)
		}
	case "stripes":
		n, err := strconv.Atoi(val)
		if err != nil || n < MinStripes || n > MaxStripes {
			return posErr("stripes=%q: want %d..%d", val, MinStripes, MaxStripes)
		}
		p.rules.Stripes = n
	default:
		return posErr("unknown key %q", key)
	}
	return err
}

func onOff(key, val string) (bool, error) {
	switch val {
	case "on":
		return true, nil
	case "off":
		return false, nil
	}
	return false, posErr("%s=%q: want on or off", key, val)
}

// game checks the position as a whole and builds the game.
func (p *position) game() (*Game, error) {
	var all CardSet
	var handSets [4]CardSet
	for s, h := range p.hands {
		for _, c := range h {
			if all.Has(c) {
				return nil, posErr("%v is in two places", c)
			}
			all, handSets[s] = all.Add(c), handSets[s].Add(c)
		}
	}
	for _, c := range p.trick {
		if all.Has(c) {
			return nil, posErr("%v is in two places", c)
		}
		all = all.Add(c)
	}
	forehand := p.leader
	if p.dealer == NoSeat {
		p.dealer = p.leader.Plus(3)
	}
	if p.done == 0 && p.dealer.Next() != forehand {
		return nil, posErr("forehand, the seat after dealer %v, leads the first trick, not %v", p.dealer, p.leader)
	}
	if !p.named {
		return p.dealGame()
	}
	if p.done > 6 {
		return nil, posErr("won=%d,%d: a game has six tricks", p.won[0], p.won[1])
	}
	if p.won[0]+p.won[1] != p.done {
		return nil, posErr("won=%d,%d does not add up to #%d", p.won[0], p.won[1], p.done)
	}
	if p.done > 0 && p.won[p.leader.Team()] == 0 {
		return nil, posErr("seat %v leads, so its team won the last trick, but won=%d,%d", p.leader, p.won[0], p.won[1])
	}
	for t := range p.points {
		if p.won[t] == 0 && p.points[t] != 0 {
			return nil, posErr("team %v took no trick but has %d points", Team(t), p.points[t])
		}
	}
	visible := 0
	for _, c := range all.Cards() {
		visible += c.Points()
	}
	if p.points[0]+p.points[1]+visible > 40 {
		return nil, posErr("points=%d,%d and %d points of cards shown make more than 40", p.points[0], p.points[1], visible)
	}
	if p.done == 6 {
		if !all.Empty() {
			return nil, posErr("#6: the game is over, hands and trick must be empty")
		}
	} else {
		if len(p.trick) > 3 {
			return nil, posErr("a trick of %d cards: a fourth card completes it", len(p.trick))
		}
		for s, h := range p.hands {
			played := 0
			if i := int(Seat(s)-p.leader) & 3; i < len(p.trick) {
				played = 1
			}
			if left := 6 - p.done - played; len(h) > left {
				return nil, posErr("seat %d holds %d cards, at most %d are left", s, len(h), left)
			}
		}
		if turn := p.leader.Plus(len(p.trick)); len(p.hands[turn]) == 0 {
			return nil, posErr("seat %v is to play but holds no card", turn)
		}
	}
	if err := p.checkCalls(all, handSets); err != nil {
		return nil, err
	}
	return p.playGame(handSets), nil
}

// checkCalls checks that each call could have been made.
func (p *position) checkCalls(all CardSet, hands [4]CardSet) error {
	if len(p.anns) > 0 && !p.rules.Announcements {
		return posErr("calls at a table with ann=off")
	}
	var calls Call
	last := -1
	for _, a := range p.anns {
		if calls&a.Call != 0 {
			return posErr("%v announced twice", a.Call)
		}
		calls |= a.Call
		// The call's queens are the announcer's: not in another hand nor played by another seat
		// in the trick shown (earlier tricks are not shown).
		own := hands[a.Seat]
		if i := int(a.Seat-p.leader) & 3; i < len(p.trick) {
			own = own.Add(p.trick[i])
		}
		if other := a.Call.Queens() & all &^ own; !other.Empty() {
			return posErr("seat %v announced %v but %v is elsewhere", a.Seat, a.Call, other)
		}
		if p.done == 0 {
			// At #0 an announcer has had its turn: it played to the trick or is to play now, and
			// calls come in the order of play.
			i := int(a.Seat-p.leader) & 3
			if i > len(p.trick) {
				return posErr("seat %v announced before its turn in the first trick", a.Seat)
			}
			if i < last {
				return posErr("calls are not in the order of play")
			}
			last = i
		}
	}
	return nil
}

// dealGame is a position before trump is named: a whole deal, forehand to choose.
func (p *position) dealGame() (*Game, error) {
	if p.done != 0 || len(p.trick) != 0 || len(p.anns) != 0 || p.won != [2]int{} || p.points != [2]int{} {
		return nil, posErr("before trump is named nothing has been played or announced")
	}
	var hands [4][6]Card
	for s, h := range p.hands {
		if len(h) != 6 {
			return nil, posErr("before trump is named every seat holds six cards; seat %d holds %d", s, len(h))
		}
		copy(hands[s][:], h)
	}
	if err := p.rules.Validate(); err != nil {
		return nil, err
	}
	g := new(Game)
	g.reset(p.rules, p.dealer, hands)
	return g, nil
}

// playGame builds the game of a checked position after trump is named.
func (p *position) playGame(hands [4]CardSet) *Game {
	g := &Game{
		rules: p.rules, dealer: p.dealer, hands: hands, phase: PhasePlay, trump: p.trump,
		trumps: Trumps(p.trump), turn: p.leader, done: p.done, points: p.points, tricksWon: p.won,
	}
	for s, h := range hands {
		copy(g.dealt[s][:], h.Cards())
	}
	for _, a := range p.anns {
		g.anns[g.nAnns] = a
		g.nAnns++
		g.calls |= a.Call
	}
	for i := range g.tricks[:p.done] {
		g.tricks[i] = Trick{Leader: NoSeat, Winner: NoSeat}
	}
	if p.done == 6 {
		g.phase = PhaseOver
		return g
	}
	g.tricks[p.done] = Trick{Leader: p.leader, Winner: NoSeat}
	for _, c := range p.trick {
		g.addToTrick(c)
	}
	g.turn = p.leader.Plus(len(p.trick))
	return g
}

// Position writes the game in the notation ParsePosition reads. Completed tricks are written only
// as their count, tricks won and points: a position is where the game stands, not how it got
// there.
func (g *Game) Position() string {
	var b strings.Builder
	b.Grow(96)
	if g.phase == PhaseTrump {
		b.WriteString("-")
	} else {
		b.WriteString(g.trump.String())
	}
	b.WriteByte(' ')
	for s := range g.hands {
		if s > 0 {
			b.WriteByte('/')
		}
		var cards []Card
		if g.phase == PhaseTrump {
			cards = g.dealt[s][:]
		} else {
			cards = g.hands[s].Cards()
		}
		writeCards(&b, cards)
	}
	leader := g.turn
	var trick []Card
	if g.phase == PhasePlay {
		t := g.tricks[g.done]
		leader, trick = t.Leader, t.Cards[:t.N]
	}
	b.WriteString(" " + leader.String() + ":")
	writeCards(&b, trick)
	b.WriteString(" #" + strconv.Itoa(g.done))
	if g.done > 0 {
		b.WriteString(" won=" + strconv.Itoa(g.tricksWon[0]) + "," + strconv.Itoa(g.tricksWon[1]))
	}
	if g.points != [2]int{} {
		b.WriteString(" points=" + strconv.Itoa(g.points[0]) + "," + strconv.Itoa(g.points[1]))
	}
	if g.dealer != leader.Plus(3) {
		b.WriteString(" dealer=" + g.dealer.String())
	}
	for i, a := range g.anns[:g.nAnns] {
		if i == 0 {
			b.WriteString(" calls=")
		} else {
			b.WriteByte(',')
		}
		b.WriteString(a.Seat.String() + ":" + a.Call.String())
	}
	r, def := g.rules, DefaultRules()
	if !r.Announcements {
		b.WriteString(" ann=off")
	}
	if r.DrawPenalty != def.DrawPenalty {
		b.WriteString(" draw=" + r.DrawPenalty.String())
	}
	if !r.AllTricksBonus {
		b.WriteString(" bonus=off")
	}
	if r.Direction != def.Direction {
		b.WriteString(" dir=" + r.Direction.String())
	}
	if r.Stripes != def.Stripes {
		b.WriteString(" stripes=" + strconv.Itoa(r.Stripes))
	}
	return b.String()
}

func writeCards(b *strings.Builder, cards []Card) {
	if len(cards) == 0 {
		b.WriteByte('-')
		return
	}
	for i, c := range cards {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(c.String())
	}
}

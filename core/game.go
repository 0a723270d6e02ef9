package core

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Call is an announcement: Konter (QH and QD), Matt (QS), or both at once.
type Call uint8

// The calls; CallKonterAMatt is CallKonter|CallMatt.
const (
	CallKonter      Call = 1
	CallMatt        Call = 2
	CallKonterAMatt Call = CallKonter | CallMatt
)

// Queens gives the queens the call needs in the announcer's own hand.
func (c Call) Queens() CardSet {
	var s CardSet
	if c&CallKonter != 0 {
		s = s.Add(QueenHearts).Add(QueenDiamonds)
	}
	if c&CallMatt != 0 {
		s = s.Add(QueenSpades)
	}
	return s
}

// Valid reports whether c is one of the three calls.
func (c Call) Valid() bool { return c >= CallKonter && c <= CallKonterAMatt }

// String gives the record form: konter, matt or konter-a-matt.
func (c Call) String() string {
	switch c {
	case CallKonter:
		return "konter"
	case CallMatt:
		return "matt"
	case CallKonterAMatt:
		return "konter-a-matt"
	}
	return "?"
}

// Title gives the name players say, the same in every language.
func (c Call) Title() string {
	switch c {
	case CallKonter:
		return "Konter"
	case CallMatt:
		return "Matt"
	case CallKonterAMatt:
		return "Konter a Matt"
	}
	return "?"
}

// ParseCall reads a call as records write it, also with spaces or without the "a".
func ParseCall(s string) (Call, error) {
	t := strings.NewReplacer("-", "", "_", "", " ", "").Replace(strings.ToLower(strings.TrimSpace(s)))
	switch t {
	case "konter":
		return CallKonter, nil
	case "matt", "mat":
		return CallMatt, nil
	case "konteramatt", "kontermatt":
		return CallKonterAMatt, nil
	}
	return 0, fmt.Errorf("%w: unknown call %q", ErrBadRecord, s)
}

// MarshalText writes the record form.
func (c Call) MarshalText() ([]byte, error) {
	if !c.Valid() {
		return nil, fmt.Errorf("%w: no call", ErrBadRecord)
	}
	return []byte(c.String()), nil
}

// UnmarshalText reads what ParseCall reads.
func (c *Call) UnmarshalText(b []byte) error {
	v, err := ParseCall(string(b))
	*c = v
	return err
}

// Phase is where a game stands.
type Phase uint8

// The phases of a game. Announcements happen during PhasePlay, in the first trick.
const (
	PhaseTrump Phase = iota // forehand must name trump, having seen the first packet only
	PhasePlay               // six tricks
	PhaseOver               // scored
)

func (p Phase) String() string {
	switch p {
	case PhaseTrump:
		return "trump"
	case PhasePlay:
		return "play"
	}
	return "over"
}

// Trick is one round of four cards; Cards[i] was played by Leader.Plus(i).
type Trick struct {
	Leader Seat
	Cards  [4]Card
	N      int  // cards played so far
	Winner Seat // NoSeat until the trick is complete
}

// Played gives the cards played so far, in order.
func (t Trick) Played() []Card { return append([]Card(nil), t.Cards[:t.N]...) }

// Led is the first card, or NoCard.
func (t Trick) Led() Card { return t.Cards[0] }

// SeatOf is the seat that played the i-th card.
func (t Trick) SeatOf(i int) Seat { return t.Leader.Plus(i) }

// CardOf is the card seat s played in this trick, or NoCard.
func (t Trick) CardOf(s Seat) Card {
	i := int(s-t.Leader) & 3
	if i >= t.N {
		return NoCard
	}
	return t.Cards[i]
}

// Points are the card points in the trick.
func (t Trick) Points() int {
	p := 0
	for _, c := range t.Cards[:t.N] {
		p += c.Points()
	}
	return p
}

// Announcement is a call made by a seat.
type Announcement struct {
	Seat Seat
	Call Call
}

// MoveKind says what a move does.
type MoveKind uint8

// The kinds of move.
const (
	MoveTrump MoveKind = iota + 1
	MoveAnnounce
	MovePlay
)

// Move is one action by one seat: name trump, announce, or play a card.
type Move struct {
	Kind MoveKind
	Seat Seat
	Suit Suit // MoveTrump
	Call Call // MoveAnnounce
	Card Card // MovePlay
}

// NameTrump is forehand's choice of trump suit.
func NameTrump(seat Seat, s Suit) Move { return Move{Kind: MoveTrump, Seat: seat, Suit: s} }

// Announce is a call.
func Announce(seat Seat, c Call) Move { return Move{Kind: MoveAnnounce, Seat: seat, Call: c} }

// Play is a card played to the trick.
func Play(seat Seat, c Card) Move { return Move{Kind: MovePlay, Seat: seat, Card: c} }

func (m Move) String() string {
	switch m.Kind {
	case MoveTrump:
		return fmt.Sprintf("%v:trump %v", m.Seat, m.Suit)
	case MoveAnnounce:
		return fmt.Sprintf("%v:announce %v", m.Seat, m.Call)
	case MovePlay:
		return fmt.Sprintf("%v:play %v", m.Seat, m.Card)
	}
	return "?"
}

// maxMoves bounds a game's moves: one trump, at most two announcements, 24 cards.
const maxMoves = 1 + 2 + 24

// Game is one deal: six tricks. It is a value with no pointers, so copying it copies the whole
// position (the search players rely on that). Change it only through Apply (or NameTrump, Announce
// and Play), which checks a move completely before it changes anything.
type Game struct {
	rules     Rules
	dealer    Seat
	dealt     [4][6]Card
	hands     [4]CardSet
	phase     Phase
	trump     Suit
	trumps    CardSet // every trump, once trump is named
	follow    CardSet // what the trick in progress asks for (see followSet); empty before its lead
	best      uint8   // index in the trick in progress of the card winning it so far
	bestScore uint8   // that card's strength
	turn      Seat
	tricks    [6]Trick // tricks[done] is the trick in progress while playing
	done      int      // completed tricks
	calls     Call     // union of all calls made
	anns      [2]Announcement
	nAnns     int
	points    [2]int
	tricksWon [2]int
	moves     [maxMoves]Move
	nMoves    int
}

// Shuffler shuffles; *math/rand/v2.Rand satisfies it.
type Shuffler interface {
	Shuffle(n int, swap func(i, j int))
}

// Deck is the 24 cards in canonical order.
func Deck() [24]Card {
	var d [24]Card
	for i := range d {
		d[i] = Card(i + 1)
	}
	return d
}

// DealHands shuffles a fresh deck with sh and deals it as the dealer does: three cards to each
// seat starting with forehand (the seat after the dealer), then three more each. hands[s][:3] is
// seat s's first packet.
//
// A *math/rand/v2.Rand is used directly, without Shuffle's swap closure (which would make the deck
// escape to the heap): the loop below is the Fisher-Yates shuffle Rand.Shuffle runs, drawing the
// same numbers, so a seed gives the same deal either way.
func DealHands(sh Shuffler, dealer Seat) [4][6]Card {
	d := Deck()
	if r, ok := sh.(*rand.Rand); ok {
		for i := len(d) - 1; i > 0; i-- {
			j := r.Uint64N(uint64(i + 1))
			d[i], d[j] = d[j], d[i]
		}
	} else {
		d = shuffled(sh, d)
	}
	var hands [4][6]Card
	for i := 0; i < 4; i++ {
		s := dealer.Plus(1 + i)
		copy(hands[s][:3], d[3*i:3*i+3])
		copy(hands[s][3:], d[12+3*i:12+3*i+3])
	}
	return hands
}

// shuffled is d shuffled by any Shuffler; the closure makes its copy of d escape, so it is kept
// out of DealHands.
func shuffled(sh Shuffler, d [24]Card) [24]Card {
	sh.Shuffle(len(d), func(i, j int) { d[i], d[j] = d[j], d[i] })
	return d
}

// CheckDeal reports, wrapping ErrBadDeal, hands that are not four times six distinct cards
// covering the deck.
func CheckDeal(hands [4][6]Card) error {
	var seen CardSet
	for s, h := range hands {
		for _, c := range h {
			if !c.Valid() {
				return fmt.Errorf("%w: seat %d holds no card in a slot", ErrBadDeal, s)
			}
			if seen.Has(c) {
				return fmt.Errorf("%w: %v dealt twice", ErrBadDeal, c)
			}
			seen = seen.Add(c)
		}
	}
	return nil
}

// NewGame starts a game with the given deal: forehand is to name trump.
func NewGame(rules Rules, dealer Seat, hands [4][6]Card) (*Game, error) {
	g := new(Game)
	if err := g.Reset(rules, dealer, hands); err != nil {
		return nil, err
	}
	return g, nil
}

// Reset starts g afresh with the given deal, reusing its memory.
func (g *Game) Reset(rules Rules, dealer Seat, hands [4][6]Card) error {
	if err := rules.Validate(); err != nil {
		return err
	}
	if !dealer.Valid() {
		return fmt.Errorf("%w: dealer %d is no seat", ErrBadRecord, dealer)
	}
	if !dealOK(hands) {
		if err := CheckDeal(hands); err != nil {
			return err
		}
	}
	g.reset(rules, dealer, hands)
	return nil
}

// dealOK is CheckDeal's answer without the error message, in a few bit operations: 24 cards,
// each a real one, make the full deck only if none is repeated.
func dealOK(hands [4][6]Card) bool {
	var all CardSet
	n := 0
	for s := range hands {
		for _, c := range hands[s] {
			all |= 1 << (c & 31)
			n++
		}
	}
	return all == FullDeck && n == 24
}

// reset is Reset without checks, for deals this package made itself.
func (g *Game) reset(rules Rules, dealer Seat, hands [4][6]Card) {
	*g = Game{rules: rules, dealer: dealer, dealt: hands, phase: PhaseTrump, turn: dealer.Next()}
	for s := range hands {
		for _, c := range hands[s] {
			g.hands[s] |= 1 << c
		}
	}
	g.tricks[0] = Trick{Leader: g.turn, Winner: NoSeat}
}

// Rules are the table options the game is played with.
func (g *Game) Rules() Rules { return g.rules }

// Dealer is the seat that dealt.
func (g *Game) Dealer() Seat { return g.dealer }

// Forehand is the seat after the dealer: it names trump and leads the first trick.
func (g *Game) Forehand() Seat { return g.dealer.Next() }

// Phase is where the game stands.
func (g *Game) Phase() Phase { return g.phase }

// Trump is the trump suit, or NoSuit before forehand names it.
func (g *Game) Trump() Suit { return g.trump }

// TrumpTeam is the team of forehand, who names trump.
func (g *Game) TrumpTeam() Team { return g.Forehand().Team() }

// ToMove is the seat to act, or NoSeat when the game is over.
func (g *Game) ToMove() Seat {
	if g.phase == PhaseOver {
		return NoSeat
	}
	return g.turn
}

// Hand is what seat s holds now (all six cards during the trump phase: the engine knows the whole
// deal; use View for what a player may see).
func (g *Game) Hand(s Seat) CardSet { return g.hands[s&3] }

// Dealt is seat s's six cards in the order dealt; the first three are the first packet.
func (g *Game) Dealt(s Seat) [6]Card { return g.dealt[s&3] }

// FirstPacket is seat s's first three cards, all forehand may see before naming trump.
func (g *Game) FirstPacket(s Seat) CardSet { return SetOf(g.dealt[s&3][:3]...) }

// TricksDone is the number of completed tricks.
func (g *Game) TricksDone() int { return g.done }

// Tricks are the completed tricks.
func (g *Game) Tricks() []Trick { return append([]Trick(nil), g.tricks[:g.done]...) }

// CurrentTrick is the trick in progress (empty before the first card of a trick and after the
// sixth trick).
func (g *Game) CurrentTrick() Trick {
	if g.phase != PhasePlay {
		return Trick{Leader: g.turn, Winner: NoSeat}
	}
	return g.tricks[g.done]
}

// LastTrick is the most recently completed trick, and false before the first is complete.
func (g *Game) LastTrick() (Trick, bool) {
	if g.done == 0 {
		return Trick{}, false
	}
	return g.tricks[g.done-1], true
}

// Announcements are the calls made, in order.
func (g *Game) Announcements() []Announcement {
	return append([]Announcement(nil), g.anns[:g.nAnns]...)
}

// Calls is the union of the calls made.
func (g *Game) Calls() Call { return g.calls }

// Stake is 1, plus 1 for Konter, plus 1 for Matt.
func (g *Game) Stake() int {
	s := 1
	if g.calls&CallKonter != 0 {
		s++
	}
	if g.calls&CallMatt != 0 {
		s++
	}
	return s
}

// Points are the card points each team has taken so far.
func (g *Game) Points() [2]int { return g.points }

// TricksWon are the tricks each team has taken so far.
func (g *Game) TricksWon() [2]int { return g.tricksWon }

// Moves are the accepted moves in order.
func (g *Game) Moves() []Move { return append([]Move(nil), g.moves[:g.nMoves]...) }

// LegalCards gives the cards seat s may play now; empty when s is not to play.
func (g *Game) LegalCards(s Seat) CardSet {
	if g.phase != PhasePlay || s != g.turn {
		return 0
	}
	return legalFor(g.hands[s&3], g.follow, g.trumps)
}

// AnnounceWindow reports whether seat s may announce now: announcements are on, it is the first
// trick, s is to play and has not played yet.
func (g *Game) AnnounceWindow(s Seat) bool {
	return g.rules.Announcements && g.phase == PhasePlay && g.done == 0 && s == g.turn
}

// PossibleCalls lists the calls seat s could make now (empty outside its window).
func (g *Game) PossibleCalls(s Seat) []Call {
	var out []Call
	if !g.AnnounceWindow(s) {
		return nil
	}
	for _, c := range []Call{CallKonter, CallMatt, CallKonterAMatt} {
		if g.checkAnnounce(s, c) == nil {
			out = append(out, c)
		}
	}
	return out
}

// Check reports, without changing anything, why m would be refused, or nil if it is legal.
// Errors are *MoveError values that unwrap to the package's sentinels.
func (g *Game) Check(m Move) error {
	switch m.Kind {
	case MoveTrump:
		return g.checkTrump(m.Seat, m.Suit)
	case MoveAnnounce:
		return g.checkAnnounce(m.Seat, m.Call)
	case MovePlay:
		return g.checkPlay(m.Seat, m.Card)
	}
	return &MoveError{Err: ErrBadRecord, Seat: m.Seat}
}

// Apply checks m and, only if it is legal, applies it.
func (g *Game) Apply(m Move) error {
	// The common case first: a legal card by the seat to play. LegalCards is empty for anyone
	// else and outside the play phase, so this is exactly the case where Check finds nothing.
	if m.Kind == MovePlay && g.LegalCards(m.Seat).Has(m.Card) {
		g.moves[g.nMoves] = m
		g.nMoves++
		g.playCard(m.Seat, m.Card)
		return nil
	}
	if err := g.Check(m); err != nil {
		return err
	}
	g.apply(m)
	return nil
}

// NameTrump applies forehand's trump choice.
func (g *Game) NameTrump(s Seat, x Suit) error { return g.Apply(NameTrump(s, x)) }

// Announce applies a call.
func (g *Game) Announce(s Seat, c Call) error { return g.Apply(Announce(s, c)) }

// Play applies a card.
func (g *Game) Play(s Seat, c Card) error {
	if g.LegalCards(s).Has(c) { // Apply's fast path, without building a Move first
		g.moves[g.nMoves] = Move{Kind: MovePlay, Seat: s, Card: c}
		g.nMoves++
		g.playCard(s, c)
		return nil
	}
	return g.Apply(Play(s, c))
}

func (g *Game) checkCommon(s Seat) *MoveError {
	if !s.Valid() {
		return &MoveError{Err: ErrBadRecord, Seat: s}
	}
	if g.phase == PhaseOver {
		return &MoveError{Err: ErrGameOver, Seat: s}
	}
	return nil
}

func (g *Game) checkTrump(s Seat, x Suit) error {
	if err := g.checkCommon(s); err != nil {
		return err
	}
	if g.phase != PhaseTrump {
		return &MoveError{Err: ErrTrumpAlreadyNamed, Seat: s}
	}
	if s != g.turn {
		return &MoveError{Err: ErrNotYourTurn, Seat: s, Turn: g.turn}
	}
	if !x.Valid() {
		return &MoveError{Err: ErrBadRecord, Seat: s}
	}
	return nil
}

func (g *Game) checkAnnounce(s Seat, c Call) error {
	if err := g.checkCommon(s); err != nil {
		return err
	}
	if g.phase == PhaseTrump {
		return &MoveError{Err: ErrTrumpNotNamed, Seat: s, Call: c}
	}
	if !c.Valid() {
		return &MoveError{Err: ErrBadRecord, Seat: s}
	}
	if !g.rules.Announcements {
		return &MoveError{Err: ErrAnnouncementsOff, Seat: s, Call: c}
	}
	if g.done > 0 || g.tricks[0].CardOf(s) != NoCard {
		return &MoveError{Err: ErrAnnounceWindowClosed, Seat: s, Call: c}
	}
	if s != g.turn {
		return &MoveError{Err: ErrNotYourTurn, Seat: s, Turn: g.turn, Call: c}
	}
	if need := c.Queens() &^ g.hands[s]; need != 0 {
		return &MoveError{Err: ErrAnnounceMissingCards, Seat: s, Need: need, Call: c}
	}
	if g.calls&c != 0 {
		return &MoveError{Err: ErrAnnounceDuplicate, Seat: s, Call: c}
	}
	return nil
}

func (g *Game) checkPlay(s Seat, c Card) error {
	if err := g.checkCommon(s); err != nil {
		return err
	}
	if g.phase == PhaseTrump {
		return &MoveError{Err: ErrTrumpNotNamed, Seat: s, Card: c}
	}
	if s != g.turn {
		return &MoveError{Err: ErrNotYourTurn, Seat: s, Turn: g.turn, Card: c}
	}
	if !c.Valid() || !g.hands[s].Has(c) {
		return &MoveError{Err: ErrCardNotInHand, Seat: s, Card: c}
	}
	legal := g.LegalCards(s)
	if legal.Has(c) {
		return nil
	}
	led := g.tricks[g.done].Cards[0]
	if IsTrump(led, g.trump) {
		return &MoveError{Err: ErrMustPlayTrump, Seat: s, Card: c, Led: led, Legal: legal}
	}
	return &MoveError{Err: ErrMustFollowSuit, Seat: s, Card: c, Led: led, Legal: legal}
}

// apply changes the game by a move already checked.
func (g *Game) apply(m Move) {
	g.moves[g.nMoves] = m
	g.nMoves++
	switch m.Kind {
	case MoveTrump:
		g.trump = m.Suit
		g.trumps = Trumps(m.Suit)
		g.phase = PhasePlay
	case MoveAnnounce:
		g.anns[g.nAnns] = Announcement{Seat: m.Seat, Call: m.Call}
		g.nAnns++
		g.calls |= m.Call
	case MovePlay:
		g.playCard(m.Seat, m.Card)
	}
}

func (g *Game) playCard(s Seat, c Card) {
	g.hands[s&3] &^= 1 << c
	if g.addToTrick(c) < 4 {
		g.turn = s.Next()
		return
	}
	t := &g.tricks[g.done]
	w := t.Leader.Plus(int(g.best))
	t.Winner = w
	g.points[w.Team()] += int(cardPoints[t.Cards[0]&31] + cardPoints[t.Cards[1]&31] +
		cardPoints[t.Cards[2]&31] + cardPoints[t.Cards[3]&31])
	g.tricksWon[w.Team()]++
	g.done++
	g.turn = w
	if g.done == 6 {
		g.phase = PhaseOver
		return
	}
	g.tricks[g.done] = Trick{Leader: w, Winner: NoSeat}
	g.follow = 0
}

// addToTrick puts c on the trick in progress, keeping track of the card winning it so far, and
// gives the number of cards on the trick. The winner found this way is TrickWinner's.
func (g *Game) addToTrick(c Card) int {
	t := &g.tricks[g.done]
	n := t.N & 3
	t.Cards[n] = c
	t.N = n + 1
	score := trumpTables[g.trump&7].strength[c&31]
	if n == 0 {
		g.follow = followSet(c, g.trump)
		g.best, g.bestScore = 0, score
	} else if (g.follow | g.trumps).Has(c) && score > g.bestScore {
		g.best, g.bestScore = uint8(n), score
	}
	return t.N
}

// Outcome is how a game ended.
type Outcome uint8

// The outcomes of a game.
const (
	InProgress Outcome = iota
	WonByA
	WonByB
	Draw
)

func (o Outcome) String() string {
	switch o {
	case WonByA:
		return "A"
	case WonByB:
		return "B"
	case Draw:
		return "draw"
	}
	return "in_progress"
}

// Winner is the winning team, and false for a draw or a game in progress.
func (o Outcome) Winner() (Team, bool) {
	switch o {
	case WonByA:
		return TeamA, true
	case WonByB:
		return TeamB, true
	}
	return TeamA, false
}

// Result is a finished game's score.
type Result struct {
	Outcome   Outcome
	Points    [2]int
	TricksWon [2]int
	Stake     int
	// Stripes is the change to each team's open stripes: negative for crossed out, positive for
	// added, before the board clamps at zero.
	Stripes [2]int
}

// Result scores the game; Outcome is InProgress until the sixth trick is complete.
func (g *Game) Result() Result {
	r := Result{Points: g.points, TricksWon: g.tricksWon, Stake: g.Stake()}
	if g.phase != PhaseOver {
		return r
	}
	trumpTeam := g.TrumpTeam()
	switch {
	case g.points[TeamA] > 20 || g.points[TeamB] > 20:
		win := TeamA
		r.Outcome = WonByA
		if g.points[TeamB] > 20 {
			win, r.Outcome = TeamB, WonByB
		}
		n := r.Stake
		if g.rules.AllTricksBonus && g.tricksWon[win.Other()] == 0 {
			n++
		}
		r.Stripes[win] = -n
		if win.Other() == trumpTeam {
			r.Stripes[trumpTeam] = n
		}
	default:
		r.Outcome = Draw
		n := r.Stake
		if g.rules.DrawPenalty == DrawFlat1 {
			n = 1
		}
		r.Stripes[trumpTeam] = n
	}
	return r
}

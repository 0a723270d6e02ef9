package core

import "fmt"

// Board is the stripe board ("Lee"): each team starts with the same number of open stripes,
// crosses them out when it wins and gets stripes added when it loses (or draws) a game it named
// trump in. Open stripes never go below zero.
type Board struct {
	Start   int
	Crossed [2]int
	Added   [2]int
}

// Open is the number of open stripes team t has left.
func (b Board) Open(t Team) int { return b.Start + b.Added[t] - b.Crossed[t] }

// OpenBoth gives [team A, team B] open stripes.
func (b Board) OpenBoth() [2]int { return [2]int{b.Open(TeamA), b.Open(TeamB)} }

// Apply adds one game's stripe changes, crossing out no more than the team has open. It returns
// the changes actually made.
func (b *Board) Apply(change [2]int) [2]int {
	var done [2]int
	for t := TeamA; t <= TeamB; t++ {
		switch d := change[t]; {
		case d > 0:
			b.Added[t] += d
			done[t] = d
		case d < 0:
			n := min(-d, b.Open(t))
			b.Crossed[t] += n
			done[t] = -n
		}
	}
	return done
}

// Winner is the team with no open stripe, and false while both have some.
func (b Board) Winner() (Team, bool) {
	switch {
	case b.Open(TeamA) == 0:
		return TeamA, true
	case b.Open(TeamB) == 0:
		return TeamB, true
	}
	return TeamA, false
}

// Match is a series of games until a team has crossed out all its stripes. The board is derived
// from the finished games, so it can never disagree with them.
type Match struct {
	rules       Rules
	firstDealer Seat
	games       []*Game
}

// NewMatch starts a match whose first game firstDealer deals (drawn at random by the caller).
func NewMatch(rules Rules, firstDealer Seat) (*Match, error) {
	if err := rules.Validate(); err != nil {
		return nil, err
	}
	if !firstDealer.Valid() {
		return nil, fmt.Errorf("%w: dealer %d is no seat", ErrBadRecord, firstDealer)
	}
	return &Match{rules: rules, firstDealer: firstDealer}, nil
}

// Rules are the match's table options.
func (m *Match) Rules() Rules { return m.rules }

// Games are the games so far, the last possibly in progress.
func (m *Match) Games() []*Game { return append([]*Game(nil), m.games...) }

// NumGames is how many games have been dealt, the current one included.
func (m *Match) NumGames() int { return len(m.games) }

// Current is the game being played or last played, or nil before the first deal.
func (m *Match) Current() *Game {
	if len(m.games) == 0 {
		return nil
	}
	return m.games[len(m.games)-1]
}

// NextDealer is the seat that deals the next game.
func (m *Match) NextDealer() Seat {
	if g := m.Current(); g != nil {
		return g.Dealer().Next()
	}
	return m.firstDealer
}

// Deal starts the next game with the given hands, dealt by NextDealer. It refuses while a game is
// in progress (ErrGameOver wrapped: the current game must be over first) and, with ErrMatchOver,
// once the match is over.
func (m *Match) Deal(hands [4][6]Card) (*Game, error) {
	return m.DealBy(m.NextDealer(), hands)
}

// DealBy is Deal with the dealer stated, as records state it; a wrong one is ErrWrongDealer.
func (m *Match) DealBy(dealer Seat, hands [4][6]Card) (*Game, error) {
	if _, over := m.Winner(); over {
		return nil, ErrMatchOver
	}
	if g := m.Current(); g != nil && g.Phase() != PhaseOver {
		return nil, fmt.Errorf("%w: the current game is not finished", ErrGameOver)
	}
	if dealer != m.NextDealer() {
		return nil, fmt.Errorf("%w: seat %v must deal, not %v", ErrWrongDealer, m.NextDealer(), dealer)
	}
	g, err := NewGame(m.rules, dealer, hands)
	if err != nil {
		return nil, err
	}
	m.games = append(m.games, g)
	return g, nil
}

// GameScore is one finished game's line on the score sheet.
type GameScore struct {
	Result
	Dealer    Seat
	Trump     Suit
	TrumpTeam Team
	Calls     []Announcement
	Applied   [2]int // the stripe changes the board took, after clamping at zero
	Board     Board  // the board after this game
}

// History is the score sheet: a line per finished game.
func (m *Match) History() []GameScore {
	b := Board{Start: m.rules.Stripes}
	var out []GameScore
	for _, g := range m.games {
		if g.Phase() != PhaseOver {
			break
		}
		r := g.Result()
		applied := b.Apply(r.Stripes)
		out = append(out, GameScore{Result: r, Dealer: g.Dealer(), Trump: g.Trump(), TrumpTeam: g.TrumpTeam(),
			Calls: g.Announcements(), Applied: applied, Board: b})
	}
	return out
}

// Board is the stripe board after the finished games.
func (m *Match) Board() Board {
	b := Board{Start: m.rules.Stripes}
	for _, g := range m.games {
		if g.Phase() != PhaseOver {
			break
		}
		b.Apply(g.Result().Stripes)
	}
	return b
}

// Winner is the team that crossed out its last stripe, and false while the match goes on.
func (m *Match) Winner() (Team, bool) { return m.Board().Winner() }

// Over reports whether the match has a winner.
func (m *Match) Over() bool {
	_, over := m.Winner()
	return over
}

// View is the current game's View for seat s (see Game.View) with the board before the game.
// It panics before the first deal.
func (m *Match) View(s Seat) View {
	v := m.Current().View(s)
	b := Board{Start: m.rules.Stripes}
	for _, g := range m.games[:len(m.games)-1] {
		b.Apply(g.Result().Stripes)
	}
	v.Open = b.OpenBoth()
	return v
}

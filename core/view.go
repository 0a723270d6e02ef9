package core

// View is exactly what one seat may know of a game: its own hand, the table, and the public
// history. Every renderer and every computer player works from a View, never from a Game, so no
// hidden card can leak by accident. The public view (Seat == NoSeat) holds no hand at all.
type View struct {
	Seat          Seat // NoSeat for the public view
	Rules         Rules
	Phase         Phase
	Dealer        Seat
	Forehand      Seat
	Trump         Suit // NoSuit until named
	TrumpTeam     Team
	ToMove        Seat    // NoSeat when the game is over
	Hand          CardSet // the seat's own cards: only the first packet during the trump phase
	Legal         CardSet // the seat's legal cards when it is to play
	Calls         []Call  // the calls the seat could make now
	HandSizes     [4]int  // how many cards each seat holds (public)
	Trick         Trick   // the trick in progress
	Tricks        []Trick // completed tricks
	Announcements []Announcement
	Stake         int
	Points        [2]int // card points taken so far (public: every trick is shown)
	TricksWon     [2]int
	Result        Result // set when Phase is PhaseOver
	// Open is each team's open stripes before this game, when the game is part of a match
	// (Match.View); zero for both when it is not known. Computer players play for the match with
	// it: a team one stripe from winning plays differently.
	Open [2]int
}

// View gives what seat s may see; pass NoSeat for the public view shown in the channel.
func (g *Game) View(s Seat) View {
	v := View{
		Seat: NoSeat, Rules: g.rules, Phase: g.phase, Dealer: g.dealer, Forehand: g.Forehand(),
		Trump: g.trump, TrumpTeam: g.TrumpTeam(), ToMove: g.ToMove(), Trick: g.CurrentTrick(),
		Tricks: g.Tricks(), Announcements: g.Announcements(), Stake: g.Stake(), Points: g.points,
		TricksWon: g.tricksWon, Result: g.Result(),
	}
	for i := range v.HandSizes {
		v.HandSizes[i] = g.hands[i].Len()
		if g.phase == PhaseTrump {
			v.HandSizes[i] = 3 // the second packet is not dealt until trump is named
		}
	}
	if !s.Valid() {
		return v
	}
	v.Seat = s
	v.Hand = g.hands[s]
	if g.phase == PhaseTrump {
		v.Hand = g.FirstPacket(s)
	}
	v.Legal = g.LegalCards(s)
	v.Calls = g.PossibleCalls(s)
	return v
}

// Played is every card already played, the trick in progress included.
func (v View) Played() CardSet {
	var s CardSet
	for _, t := range v.Tricks {
		s |= SetOf(t.Cards[:t.N]...)
	}
	return s | SetOf(v.Trick.Cards[:v.Trick.N]...)
}

// Unseen is every card the seat has not seen: neither in its hand nor played.
func (v View) Unseen() CardSet { return FullDeck &^ v.Hand &^ v.Played() }

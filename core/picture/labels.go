package picture

import "github.com/kontermatt/kontermatt/core"

// Labels are the words a picture shows, already in the table's language; this package holds no
// message catalog. An empty field takes its English default. Numbers are written after a label
// ("Trick 3/6") or before it ("5 open"), which reads right in English, Luxembourgish, German and
// French; a word after a count has a singular too ("1 ouvert", "2 ouverts"), used for the counts
// the language's plural rules call singular (One). The calls are always "Konter", "Matt" and
// "Konter a Matt".
type Labels struct {
	Title     string // heading of the board: "Score sheet"
	TeamA     string // "Team A" (seats 0 and 2)
	TeamB     string // "Team B" (seats 1 and 3)
	Seat      string // fallback name of an unnamed seat, followed by its number 1..4: "Seat"
	Open      string // after the number of open stripes: "open"
	Crossed   string // after the number of crossed-out stripes: "crossed out"
	Added     string // after the number of added stripes: "added"
	Game      string // column of game numbers: "Game"
	Trump     string // "Trump"
	Calls     string // "Calls"
	Points    string // card points: "Points"
	Stripes   string // stripe changes: "Stripes"
	Winner    string // badge of the match winner: "Winner"
	Draw      string // a 20-20 game: "Draw"
	Earlier   string // after a number of games left out of a long board: "earlier games"
	NoGames   string // the board before the first game ends: "No games yet"
	Trick     string // followed by "3/6": "Trick"
	LastTrick string // "Last trick"
	Turn      string // whose turn: "Turn"
	Cards     string // after a number of cards in hand (alt text): "cards"
	// The league table's words.
	Standings   string // its title when none is given: "League table"
	Player      string // column of names: "Player"
	Rating      string // column of ratings: "Rating"
	Won, Played string // matches won / played: "Won", "Played"
	Provisional string // after a provisional person's name: "provisional"
	NoMatches   string // an empty table: "No finished match yet"
	// The singulars of Open, Crossed, Added and Earlier: "earlier game".
	OpenOne, CrossedOne, AddedOne, EarlierOne string
	// Ranks are the letters a card's rank is written with, indexed by core.Rank: "D" for a queen
	// in German, as the chat writes it. A rank without one is core's (J Q K A, 10, 9).
	Ranks [8]string
	// Colon joins a label and its value in the alt texts, as the language writes it: ": ", or
	// "\u00a0: " in French. The picture writes no punctuation of its own.
	Colon string
	// One has bit n set when the count n takes the singular: 1 in English, 0 and 1 in French.
	// Counts from 32 up take the plural; 0 stands for English's rule.
	One uint32
}

// counted is the word after the count n: the singular or the plural.
func (l Labels) counted(n int, plural, singular string) string {
	if n >= 0 && n < 32 && l.One&(1<<n) != 0 {
		return singular
	}
	return plural
}

// EnglishLabels are the defaults.
func EnglishLabels() Labels {
	return Labels{
		Ranks: englishRanks(),
		Title: "Score sheet", TeamA: "Team A", TeamB: "Team B", Seat: "Seat",
		Open: "open", Crossed: "crossed out", Added: "added",
		Game: "Game", Trump: "Trump", Calls: "Calls", Points: "Points", Stripes: "Stripes",
		Winner: "Winner", Draw: "Draw", Earlier: "earlier games", NoGames: "No games yet",
		Trick: "Trick", LastTrick: "Last trick", Turn: "Turn", Cards: "cards",
		Standings: "League table", Player: "Player", Rating: "Rating", Won: "Won", Played: "Played",
		Provisional: "provisional", NoMatches: "No finished match yet",
		OpenOne: "open", CrossedOne: "crossed out", AddedOne: "added", EarlierOne: "earlier game", Colon: ": ", One: 1 << 1,
	}
}

// withDefaults fills the empty fields with English.
func (l Labels) withDefaults() Labels {
	d := EnglishLabels()
	for _, f := range []struct {
		v *string
		d string
	}{
		{&l.Title, d.Title}, {&l.TeamA, d.TeamA}, {&l.TeamB, d.TeamB}, {&l.Seat, d.Seat},
		{&l.Open, d.Open}, {&l.Crossed, d.Crossed}, {&l.Added, d.Added}, {&l.Game, d.Game},
		{&l.Trump, d.Trump}, {&l.Calls, d.Calls}, {&l.Points, d.Points}, {&l.Stripes, d.Stripes},
		{&l.Winner, d.Winner}, {&l.Draw, d.Draw}, {&l.Earlier, d.Earlier}, {&l.NoGames, d.NoGames},
		{&l.Trick, d.Trick}, {&l.LastTrick, d.LastTrick}, {&l.Turn, d.Turn}, {&l.Cards, d.Cards},
		{&l.Standings, d.Standings}, {&l.Player, d.Player}, {&l.Rating, d.Rating}, {&l.Won, d.Won},
		{&l.Played, d.Played}, {&l.Provisional, d.Provisional}, {&l.NoMatches, d.NoMatches},
		{&l.OpenOne, d.OpenOne}, {&l.CrossedOne, d.CrossedOne}, {&l.AddedOne, d.AddedOne}, {&l.EarlierOne, d.EarlierOne},
		{&l.Colon, d.Colon},
	} {
		if *f.v == "" {
			*f.v = f.d
		}
	}
	if l.One == 0 {
		l.One = d.One
	}
	if l.Ranks == ([8]string{}) {
		l.Ranks = d.Ranks
	}
	return l
}

// englishRanks are core's letters: J Q K A, 10 and 9.
func englishRanks() [8]string {
	var out [8]string
	for r := core.Nine; r <= core.Ace; r++ {
		out[r] = r.String()
	}
	return out
}

// rank is how the card's rank is written.
func (l Labels) rank(c core.Card) string {
	if r := c.Rank(); int(r) < len(l.Ranks) && l.Ranks[r] != "" {
		return l.Ranks[r]
	}
	return c.Rank().String()
}

// cardText is a card as the alt text writes it: "D♠".
func (l Labels) cardText(c core.Card) string {
	if !c.Valid() {
		return c.Chat()
	}
	return l.rank(c) + c.Suit().Symbol()
}

// team is the label of team t.
func (l Labels) team(t int) string {
	if t == 1 {
		return l.TeamB
	}
	return l.TeamA
}

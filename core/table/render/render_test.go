package render

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/options"
	"github.com/kontermatt/kontermatt/core/picture"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// seated is a sight of a table with the named players in seats 0 and 1 and computers in 2 and
// 3, enough to render texts that name seats.
func seated(lang string, names ...string) *Sight {
	opts := options.Default()
	sh := &Sight{ID: "t1", Lang: lang, Place: api.Place{Platform: "test", Chat: "g1"}, Options: opts,
		Board: core.Board{Start: opts.Rules.Stripes}}
	for i := range sh.Seats {
		if i < len(names) {
			sh.Seats[i] = Seat{Player: &api.Player{ID: "p" + names[i], Name: names[i]}}
		} else {
			sh.Seats[i] = Seat{Robot: true, No: i + 1}
		}
	}
	return sh
}

// trickOf is a finished trick led by seat 0, won by winner.
func trickOf(winner core.Seat, cards string) core.Trick {
	tr := core.Trick{Leader: 0, N: 4, Winner: winner}
	copy(tr.Cards[:], core.MustCards(cards))
	return tr
}

var (
	personal = map[string]api.Surface{"test": {Typed: true, Personal: true}}
	typed    = map[string]api.Surface{"test": {Typed: true}}
)

func TestTrickTextCountsPoints(t *testing.T) {
	for _, tc := range []struct {
		name, lang, cards, want string
	}{
		{"one point", "en", "JH 9H 10H 9S", "Trick: Jang J♥ · Mia 9♥ · Computer 3 10♥ · Computer 4 9♠ → Jang wins 1 point"},
		{"points", "en", "AH 9H 10H 9S", "Trick: Jang A♥ · Mia 9♥ · Computer 3 10♥ · Computer 4 9♠ → Jang wins 4 points"},
		{"no points", "en", "10H 9H 10S 9S", "Trick: Jang 10♥ · Mia 9♥ · Computer 3 10♠ · Computer 4 9♠ → Jang wins 0 points"},
		{"french zero is singular", "fr", "10H 9H 10S 9S", "Pli\u00a0: Jang 10♥ · Mia 9♥ · Ordinateur 3 10♠ · Ordinateur 4 9♠ → Jang remporte 0 point"},
		{"luxembourgish one", "lb", "JH 9H 10H 9S", "Streech: Jang B♥ · Mia 9♥ · Computer 3 10♥ · Computer 4 9♠ → Jang kritt 1 Punkt"},
		{"german", "de", "KH 9H 10H 9S", "Stich: Jang K♥ · Mia 9♥ · Computer 3 10♥ · Computer 4 9♠ → Jang bekommt 3 Punkte"},
		// One rank letter per language, as the web table writes it (issue 35).
		{"german queen", "de", "QH 9H 10H 9S", "Stich: Jang D♥ · Mia 9♥ · Computer 3 10♥ · Computer 4 9♠ → Jang bekommt 2 Punkte"},
		{"french king", "fr", "KH 9H 10H 9S", "Pli\u00a0: Jang R♥ · Mia 9♥ · Ordinateur 3 10♥ · Ordinateur 4 9♠ → Jang remporte 3 points"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sh := seated(tc.lang, "Jang", "Mia")
			if got := (Renderer{}).TrickText(sh, tc.lang, trickOf(0, tc.cards), "live.trick"); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestSayAboutTheReader checks when a text about a seat speaks to its player: on a personal
// screen, when they are the only person at the table.
func TestSayAboutTheReader(t *testing.T) {
	for _, tc := range []struct {
		name     string
		surfaces map[string]api.Surface
		humans   []string
		lang     string
		seat     core.Seat
		want     string
	}{
		{"the one reader", personal, []string{"You"}, "en", 0, "Trick: You J♥ · Computer 2 9♥ · Computer 3 10♥ · Computer 4 9♠ → You win 1 point"},
		{"the one reader in lb", personal, []string{"Dir"}, "lb", 0, "Streech: Dir B♥ · Computer 2 9♥ · Computer 3 10♥ · Computer 4 9♠ → Dir kritt 1 Punkt"},
		{"a computer at a personal screen", personal, []string{"You"}, "en", 2, "Trick: You J♥ · Computer 2 9♥ · Computer 3 10♥ · Computer 4 9♠ → Computer 3 wins 1 point"},
		{"a hot seat", personal, []string{"Jang", "Mia"}, "en", 0, "Trick: Jang J♥ · Mia 9♥ · Computer 3 10♥ · Computer 4 9♠ → Jang wins 1 point"},
		{"a group", nil, []string{"Jang"}, "en", 0, "Trick: Jang J♥ · Computer 2 9♥ · Computer 3 10♥ · Computer 4 9♠ → Jang wins 1 point"},
		{"typed, not personal", typed, []string{"Jang"}, "fr", 0, "Pli\u00a0: Jang V♥ · Ordinateur 2 9♥ · Ordinateur 3 10♥ · Ordinateur 4 9♠ → Jang remporte 1 point"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Renderer{Surfaces: tc.surfaces}
			sh := seated(tc.lang, tc.humans...)
			if got := r.TrickText(sh, tc.lang, trickOf(tc.seat, "JH 9H 10H 9S"), "live.trick"); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
	// Every text about a seat has its second-person form.
	r := Renderer{Surfaces: personal}
	sh := seated("en", "You")
	for _, tc := range []struct {
		key  string
		args []any
		want string
	}{
		{"live.title", []any{3, SeatRef(0)}, "🃏 Game 3 · you deal"},
		{"live.trump", []any{"♥ hearts", SeatRef(0), "A"}, "Trump: ♥ hearts (named by you, team A)"},
		{"live.choosing", []any{SeatRef(0)}, "You are choosing trump…"},
		{"live.turn", []any{SeatRef(0)}, "▶ Your turn"},
		{"note.announced", []any{SeatRef(0), "Matt"}, "📣 You announce Matt!"},
		{"note.back", []any{SeatRef(0)}, "You are back."},
		{"note.away", []any{SeatRef(0)}, "You did not play in time: a computer plays for you until you are back."},
		{"note.left_robot", []any{SeatRef(0)}, "You left; a computer player takes your seat."},
		{"note.stopped", []any{SeatRef(0)}, "You stopped the match."},
		{"summary.detail", []any{"♥ hearts", SeatRef(0), 2, 4, 2, "-2", "+0"}, "Trump ♥ hearts named by you · stake 2 · tricks 4–2 · stripes A -2, B +0"},
		{"live.turn", []any{SeatRef(1)}, "▶ Computer 2 to play"},
	} {
		t.Run(tc.key, func(t *testing.T) {
			if got := r.Say(sh, "en", tc.key, tc.args...); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestPictureLabelsCount reads the alt text of a board drawn with the catalog's labels: the words
// after a count follow the language's plural rules.
func TestPictureLabelsCount(t *testing.T) {
	board := core.Board{Start: 2, Crossed: [2]int{1, 2}, Added: [2]int{0, 1}}
	for _, tc := range []struct{ lang, want string }{
		{"en", "Team A (Jang & Mia): 1 open, 1 crossed out. Team B (Luc & Zoé): 1 open, 2 crossed out, 1 added."},
		{"fr", "Équipe A (Jang & Mia)\u00a0: 1 restant, 1 barré. Équipe B (Luc & Zoé)\u00a0: 1 restant, 2 barrés, 1 ajouté."},
		{"de", "Team A (Jang & Mia): 1 offen, 1 gestrichen. Team B (Luc & Zoé): 1 offen, 2 gestrichen, 1 dazugekommen."},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			in := picture.BoardInput{Rules: core.DefaultRules(), Board: board, Names: [4]string{"Jang", "Luc", "Mia", "Zoé"}, Labels: Labels(tc.lang)}
			if got := in.AltText(); !strings.Contains(got, tc.want) {
				t.Errorf("alt text %q\nwant it to say %q", got, tc.want)
			}
		})
	}
}

// A game's summary gives the stripes the board took: a team with fewer open stripes than the
// stake crosses out what it has, and the summary says the row stopped at zero, as the board does.
func TestSummaryStripesAgreeWithTheBoard(t *testing.T) {
	rec := `{"format": "kontermatt-match/1", "rules": {"stripes": 1},
	 "games": [{"dealer": 3,
	 "hands": [["AH","KH","AS","9C","10D","9H"], ["KS","10S","AD","KC","10C","JH"],
	           ["QS","KD","AC","9D","9S","10H"], ["QH","QD","JS","QC","JC","JD"]],
	 "moves": [{"seat": 0, "trump": "H"}, {"seat": 0, "play": "AH"}, {"seat": 1, "play": "JH"},
	   {"seat": 2, "play": "10H"}, {"seat": 3, "announce": "konter"}, {"seat": 3, "play": "QD"},
	   {"seat": 0, "play": "AS"}, {"seat": 1, "play": "10S"}, {"seat": 2, "play": "9S"}, {"seat": 3, "play": "JS"},
	   {"seat": 0, "play": "9C"}, {"seat": 1, "play": "KC"}, {"seat": 2, "play": "AC"}, {"seat": 3, "play": "JC"},
	   {"seat": 2, "play": "KD"}, {"seat": 3, "play": "QH"}, {"seat": 0, "play": "10D"}, {"seat": 1, "play": "AD"},
	   {"seat": 3, "play": "QC"}, {"seat": 0, "play": "9H"}, {"seat": 1, "play": "10C"}, {"seat": 2, "play": "9D"},
	   {"seat": 0, "play": "KH"}, {"seat": 1, "play": "KS"}, {"seat": 2, "play": "QS"}, {"seat": 3, "play": "JD"}]}]}`
	var mr core.MatchRecord
	if err := json.Unmarshal([]byte(rec), &mr); err != nil {
		t.Fatal(err)
	}
	m, err := core.ReplayMatch(mr)
	if err != nil {
		t.Fatal(err)
	}
	sh := seated("en", "Jang", "Mia")
	sh.Options.Rules = m.Rules()
	games := m.Games()
	sh.Match, sh.Games, sh.Finished, sh.Board = true, len(games), len(games), m.Board()
	sh.History = m.History
	sh.Public = func(n int) core.View { return games[n-1].View(core.NoSeat) }
	g := m.Games()[0]
	if r := g.Result(); r.Stripes[core.TeamA] != -2 {
		t.Fatalf("the game's change is %v; the test needs a stake of 2 against one open stripe", r.Stripes)
	}
	r := Renderer{}
	sum := r.GameSummary(sh, sh.History()[0], 1).Text
	if !strings.Contains(sum, "stripes A -1 (down to 0), B 0") {
		t.Errorf("the summary:\n%s", sum)
	}
	board := r.BoardMessage(sh, "en").Text
	if !strings.Contains(board, "stripes A -1, B 0") || !strings.Contains(sum, "Team A (Jang & Computer 3): — (0)") {
		t.Errorf("the board:\n%s\nthe summary:\n%s", board, sum)
	}
}

// A picture shows what the table has: the board always (the stripes the options give before a
// match), the table once a game is dealt, the last trick once one is finished; names from the
// table's seats.
func TestPictureInput(t *testing.T) {
	sh := seated("en", "Jang", "Mia")
	board, tab := sh.PictureInput(api.PictureBoard, "en")
	if board == nil || tab != nil || board.Names != [4]string{"Jang", "Mia", "Computer 3", "Computer 4"} ||
		board.Board.Start != sh.Options.Rules.Stripes || board.History != nil {
		t.Fatalf("board before a match: %+v, table %v", board, tab)
	}
	for _, p := range []api.Picture{api.PictureTable, api.PictureLastTrick, api.PictureNone} {
		if b, tb := sh.PictureInput(p, "en"); b != nil || tb != nil {
			t.Errorf("%q before a deal: %v %v, want none", p, b, tb)
		}
	}
	hands := core.MustHands("AH KH AS 9C 10D 9H KS 10S AD KC 10C JH QS KD AC 9D 9S 10H QH QD JS QC JC JD")
	g, err := core.NewGame(core.DefaultRules(), 3, hands)
	if err != nil {
		t.Fatal(err)
	}
	sh.Match, sh.Games = true, 1
	sh.History = func() []core.GameScore { return nil }
	sh.Public = func(int) core.View { return g.View(core.NoSeat) }
	if _, tb := sh.PictureInput(api.PictureTable, "en"); tb == nil || tb.Names[1] != "Mia" {
		t.Errorf("the table of a dealt game: %+v", tb)
	}
	if b, tb := sh.PictureInput(api.PictureLastTrick, "en"); b != nil || tb != nil {
		t.Errorf("the last trick before one is finished: %v %v, want none", b, tb)
	}
}

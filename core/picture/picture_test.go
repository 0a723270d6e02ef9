package picture

import (
	"bytes"
	"errors"
	"image/png"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/kontermatt/kontermatt/core"
)

// allLabels are the label sets of the four languages players use.
var allLabels = map[string]Labels{"en": EnglishLabels(), "lb": luxembourgish, "de": german, "fr": french}

// labelTexts lists every string field of l.
func labelTexts(l Labels) []string {
	v := reflect.ValueOf(l)
	out := make([]string, 0, v.NumField())
	for i := range v.NumField() {
		if v.Field(i).Kind() == reflect.String {
			out = append(out, v.Field(i).String())
		}
	}
	return out
}

// TestGlyphs checks that both fonts hold every character the pictures draw: digits, the labels
// of the four languages, the letters with diacritics players' names and labels use, the suit
// symbols, ranks, calls and the punctuation the layout adds. (The stripes themselves are vector
// strokes, not glyphs.)
func TestGlyphs(t *testing.T) {
	fs, err := loadFonts()
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{
		"0123456789", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz",
		"äëéèçüößÄËÉÈÇÜÖàâêîôûœŒ", // Luxembourgish, German and French letters
		"–−+·…&,:/?!()",           // punctuation the layout adds: dashes, signs, ellipsis, "A & B"
		core.CallKonterAMatt.Title(),
	}
	for _, s := range core.Suits {
		texts = append(texts, s.Symbol())
	}
	for r := core.Nine; r <= core.Ace; r++ {
		texts = append(texts, r.String())
	}
	for _, l := range allLabels {
		texts = append(texts, labelTexts(l)...)
	}
	for _, f := range fs {
		for _, s := range texts {
			for _, r := range s {
				if _, ok := f.glyph(r); !ok {
					t.Errorf("the font lacks %q (U+%04X) of %q", r, r, s)
				}
			}
		}
	}
}

// TestMissingGlyphs checks that characters the fonts lack become one box each, that zero-width
// characters vanish, and that such names still render.
func TestMissingGlyphs(t *testing.T) {
	fs, err := loadFonts()
	if err != nil {
		t.Fatal(err)
	}
	fc := face{fs[regular], 20}
	for _, tc := range []struct {
		in           string
		items, boxes int
	}{
		{"Zoë", 3, 0},
		{"Zoë 🎴", 5, 1},
		{"王小明", 3, 3},
		{"❤\ufe0f\u200d", 1, 1}, // the variation selector and the joiner take no space
		{"Jose\u0301", 4, 0},    // a combining accent the font lacks is dropped, not boxed
		{"a\u200eb\tc\n", 3, 0}, // direction marks and controls
		{"👩🏽‍💻", 2, 2},          // skin tone modifier dropped; two pictographs remain
	} {
		items := fc.shape(tc.in)
		boxes := 0
		for _, it := range items {
			if it.missing {
				boxes++
			}
		}
		if len(items) != tc.items || boxes != tc.boxes {
			t.Errorf("%q: %d items with %d boxes, want %d with %d", tc.in, len(items), boxes, tc.items, tc.boxes)
		}
	}
	in := TableInput{View: tableGame(t, -1).View(core.NoSeat), Names: [4]string{"🎴🎴", "王小明", "\u200d", "👩🏽‍💻 Ana"}}
	if _, err := Table(in, Dark); err != nil {
		t.Fatal(err)
	}
}

func TestEllipsize(t *testing.T) {
	fs, err := loadFonts()
	if err != nil {
		t.Fatal(err)
	}
	fc := face{fs[regular], 22}
	long := "Marie-Thérèse Schmit-Wagner"
	if got := fc.ellipsize("Anna", 200); got != "Anna" {
		t.Errorf("short name changed to %q", got)
	}
	if got := fc.ellipsize(long, 5); got != "…" {
		t.Errorf("no room: %q", got)
	}
	huge := strings.Repeat("Ë", 100000)
	if got := fc.ellipsize(huge, 300); fc.width(got) > 300 || !strings.HasSuffix(got, "…") {
		t.Errorf("huge name: %d bytes, %.1f px", len(got), fc.width(got))
	}
	if got := name([4]string{huge}, EnglishLabels(), 0); utf8.RuneCountInString(got) != maxNameRunes+1 {
		t.Errorf("a huge name is kept at %d runes", utf8.RuneCountInString(got))
	}
	got := fc.ellipsize(long, 120)
	if !strings.HasSuffix(got, "…") || fc.width(got) > 120 || !strings.HasPrefix(long, strings.TrimSuffix(got, "…")) {
		t.Errorf("ellipsize(%q, 120) = %q, %.1f px wide", long, got, fc.width(got))
	}
}

func TestLabelsDefaults(t *testing.T) {
	v := reflect.ValueOf(EnglishLabels())
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Errorf("English label %s is empty", v.Type().Field(i).Name)
		}
	}
	if got := (Labels{}).withDefaults(); got != EnglishLabels() {
		t.Errorf("empty labels gave %+v", got)
	}
	got := Labels{Title: "Lee", Trick: "Streech"}.withDefaults()
	if got.Title != "Lee" || got.Trick != "Streech" || got.Trump != "Trump" {
		t.Errorf("partial labels gave %+v", got)
	}
	for lang, l := range allLabels {
		for i, s := range labelTexts(l) {
			if s == "" {
				t.Errorf("%s label %s is empty", lang, reflect.TypeFor[Labels]().Field(i).Name)
			}
		}
	}
}

func TestParseTheme(t *testing.T) {
	for _, th := range []Theme{Light, Dark} {
		if got, err := ParseTheme(th.String()); err != nil || got != th {
			t.Errorf("ParseTheme(%q) = %v, %v", th.String(), got, err)
		}
	}
	if _, err := ParseTheme("sepia"); err == nil {
		t.Error("ParseTheme accepted sepia")
	}
}

func TestPlaces(t *testing.T) {
	for _, tc := range []struct {
		d    core.Direction
		want [4]place
	}{
		{core.Clockwise, [4]place{bottom, leftSide, top, rightSide}},
		{core.Anticlockwise, [4]place{bottom, rightSide, top, leftSide}},
	} {
		for s := core.Seat(0); s < 4; s++ {
			if got := placeOf(s, tc.d); got != tc.want[s] {
				t.Errorf("%v: seat %v at %v, want %v", tc.d, s, got, tc.want[s])
			}
		}
	}
}

// TestTableRefusesHands checks that a seat's private view (with its hand) is never drawn.
func TestTableRefusesHands(t *testing.T) {
	g := tableGame(t, 3)
	for s := core.Seat(0); s < 4; s++ {
		in := TableInput{View: g.View(s), Names: names}
		if _, err := Table(in, Light); !errors.Is(err, ErrBadInput) {
			t.Errorf("seat %v's view: err = %v, want ErrBadInput", s, err)
		}
		if alt := in.AltText(); alt != "" {
			t.Errorf("seat %v's view: alt text %q", s, alt)
		}
	}
	// A public view with a hand slipped in is refused too.
	v := g.View(core.NoSeat)
	v.Hand = core.SetOf(core.QueenSpades)
	if _, err := Table(TableInput{View: v}, Light); !errors.Is(err, ErrBadInput) {
		t.Errorf("public view with a hand: err = %v", err)
	}
}

func TestBoardRefusesImpossible(t *testing.T) {
	for _, b := range []core.Board{
		{Start: 9, Crossed: [2]int{10, 0}},
		{Start: 9, Added: [2]int{-1, 0}},
		{Start: -3},
		{Start: 9, Added: [2]int{500, 0}},
	} {
		in := BoardInput{Rules: core.DefaultRules(), Board: b}
		if _, err := Board(in, Light); !errors.Is(err, ErrBadInput) {
			t.Errorf("%+v: err = %v, want ErrBadInput", b, err)
		}
	}
	// A zero board takes its start from the rules.
	if _, err := Board(BoardInput{Rules: core.DefaultRules()}, Light); err != nil {
		t.Errorf("empty board: %v", err)
	}
}

func TestBoardAltText(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   BoardInput
		want string
	}{
		{"mid", midMatch(), "Score sheet. Team A (Anna & Mëlle): 7 open, 5 crossed out, 3 added. " +
			"Team B (Jos & Léon): 12 open, 2 crossed out, 5 added. " +
			"Game 5: Trump ♠ Jos, Points 40–0, Stripes Team A −2, Team B +2."},
		{"french singulars", BoardInput{Rules: core.DefaultRules(), Board: core.Board{Start: 2, Crossed: [2]int{2, 2}, Added: [2]int{0, 1}}, Labels: french},
			"Feuille de marque. Équipe A (Place 1 & Place 3)\u00a0: 0 ouvert, 2 barrés. Équipe B (Place 2 & Place 4)\u00a0: 1 ouvert, 2 barrés, 1 ajouté. Pas encore de partie. Gagnant\u00a0: Équipe A."},
		{"english plural of zero", BoardInput{Rules: core.DefaultRules(), Board: core.Board{Start: 2, Crossed: [2]int{2, 1}}},
			"Score sheet. Team A (Seat 1 & Seat 3): 0 open, 2 crossed out. Team B (Seat 2 & Seat 4): 1 open, 1 crossed out. No games yet. Winner: Team A."},
		{"empty", BoardInput{Rules: core.DefaultRules(), Labels: luxembourgish},
			"Lee. Ekipp A (Plaz 1 & Plaz 3): 9 op. Ekipp B (Plaz 2 & Plaz 4): 9 op. Nach keng Spiller."},
		{"draw", func() BoardInput {
			s := newSheet(9).game(0, core.Clubs, 20, 3, ann(2, core.CallKonterAMatt))
			return BoardInput{Rules: s.rules, Board: s.board, History: s.history, Names: names, Labels: german}
		}(), "Strichliste. Team A (Anna & Mëlle): 9 offen. Team B (Jos & Léon): 12 offen, 3 dazugekommen. " +
			"Spiel 1: Trumpf ♣ Jos, Konter a Matt, Punkte 20–20 (Gleichstand), Striche Team A 0, Team B +3."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.in.AltText(); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
	long := longMatch()
	if got := long.AltText(); !strings.HasSuffix(got, "Winner: Team A.") {
		t.Errorf("long match: %q does not name the winner", got)
	}
	// A winner given by the caller is shown even if the board does not say so.
	in := midMatch()
	b := core.TeamB
	in.Winner = &b
	if got := in.AltText(); !strings.HasSuffix(got, "Winner: Team B.") {
		t.Errorf("given winner: %q", got)
	}
}

func TestTableAltText(t *testing.T) {
	full := tableGame(t, -1).View(core.NoSeat)
	for _, tc := range []struct {
		name string
		in   TableInput
		want string
	}{
		{"trick", TableInput{View: full, Names: names},
			"Trump ♥ (Anna). Calls: Konter (Anna), Matt (Jos). Trick 2/6: Jos K♠, Mëlle A♣, Léon 10♠. " +
				"Turn: Anna. Points: Team A 0, Team B 5."},
		{"last", TableInput{View: full, Names: names, ShowLastTrick: true, Labels: french},
			"Atout ♥ (Anna). Annonces\u00a0: Konter (Anna), Matt (Jos). " +
				"Dernier pli\u00a0: Anna 10♥, Jos Q♠, Mëlle 9♥, Léon K♥ → Jos. Points\u00a0: Équipe A 0, Équipe B 5."},
		{"trump", TableInput{View: tableGame(t, 0).View(core.NoSeat)},
			"Trump ? (Seat 1). Turn: Seat 1."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.in.AltText(); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// decode checks that p holds a PNG of the given size (any height when h is 0).
func decode(t *testing.T, p []byte, w, h int) {
	t.Helper()
	cfg, err := png.DecodeConfig(bytes.NewReader(p))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Width != w || (h > 0 && cfg.Height != h) {
		t.Fatalf("picture is %dx%d, want %dx%d", cfg.Width, cfg.Height, w, h)
	}
}

// TestPlayedMatch draws the board after every game of a whole match the engine played, and the
// table after every move of its last game, from the public view only.
func TestPlayedMatch(t *testing.T) {
	const seed = 20240607
	m := playedMatch(t, seed)
	hist := m.History()
	for i := range hist {
		in := BoardInput{Rules: m.Rules(), Board: hist[i].Board, History: hist[:i+1], Names: names}
		p, err := Board(in, Theme(i%2))
		if err != nil {
			t.Fatalf("seed %d, game %d: %v", seed, i+1, err)
		}
		decode(t, p, boardW, 0)
	}
	win, _ := m.Winner()
	alt := BoardInput{Rules: m.Rules(), Board: m.Board(), History: hist, Names: names}.AltText()
	if want := "Winner: " + EnglishLabels().team(int(win)) + "."; !strings.HasSuffix(alt, want) {
		t.Errorf("seed %d: alt text %q does not end with %q", seed, alt, want)
	}

	rng := rand.New(rand.NewPCG(seed, 1))
	g, err := core.NewGame(m.Rules(), 2, core.DealHands(rng, 2))
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; ; n++ {
		in := TableInput{View: g.View(core.NoSeat), Names: names, ShowLastTrick: n%3 == 0}
		p, err := Table(in, Theme(n%2))
		if err != nil {
			t.Fatalf("seed %d, move %d: %v", seed, n, err)
		}
		decode(t, p, tableW, tableH)
		if in.AltText() == "" {
			t.Fatalf("seed %d, move %d: no alt text", seed, n)
		}
		if g.Phase() == core.PhaseOver {
			break
		}
		playGame(t, rng, g, 1)
	}
}

// TestConcurrentRenders draws the same pictures from several goroutines (the glyph cache and the
// buffer pools are shared) and checks that every copy is identical.
func TestConcurrentRenders(t *testing.T) {
	board := midMatch()
	table := TableInput{View: tableGame(t, -1).View(core.NoSeat), Names: names}
	wantB, err := Board(board, Dark)
	if err != nil {
		t.Fatal(err)
	}
	wantT, err := Table(table, Light)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 2 {
				b, err1 := Board(board, Dark)
				p, err2 := Table(table, Light)
				if err1 != nil || err2 != nil || !bytes.Equal(b, wantB) || !bytes.Equal(p, wantT) {
					t.Errorf("concurrent render differs (%v, %v)", err1, err2)
					return
				}
			}
		})
	}
	wg.Wait()
}

// Two plates never look alike: the side seats' "Computer 2" and "Computer 4" used to both read
// "Compute…". Every name fits its plate, whole when it can be.
func TestPlateNamesAreDistinct(t *testing.T) {
	fs, err := loadFonts()
	if err != nil {
		t.Fatal(err)
	}
	view := tableGame(t, -1).View(core.NoSeat)
	for _, tc := range []struct {
		name  string
		names [4]string
		whole []int // seats whose names must show whole
	}{
		{"computers", [4]string{"Anna", "Computer 2", "Jos", "Computer 4"}, []int{0, 1, 2, 3}},
		{"long, same start", [4]string{"Alexandrina Vanderbilt", "Alexandrina Vandermeer", "Alexandrina Vanderbilt-Smythe", "Alexandrina V."}, nil},
		{"same start and end", [4]string{"Marie-Thérèse Schmit", "Marie-Josée Schmit", "Anna", "Marie-Louise Schmit"}, []int{2}},
		{"same names", [4]string{"Alex", "Alexandrina Vanderbilt", "Alex", "Alexandrina Vanderbilt"}, nil},
		{"long computers", [4]string{"Computador 1", "Computador 2", "Computador 3", "Computador 4"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, dir := range []core.Direction{core.Clockwise, core.Anticlockwise} {
				v := view
				v.Rules.Direction = dir
				in := TableInput{View: v, Names: tc.names}
				shown := plateNames(in, fs[bold])
				for s, n := range shown {
					if w, room := n.face.width(n.text), plateRoom(placeOf(core.Seat(s), dir)); w > room {
						t.Errorf("seat %d: %q is %.0f px wide, the plate has %.0f", s+1, n.text, w, room)
					}
					if slices.Contains(tc.whole, s) && n.text != tc.names[s] {
						t.Errorf("seat %d: %q shows as %q though it fits", s+1, tc.names[s], n.text)
					}
					for o := range s {
						if shown[o].text == n.text {
							t.Errorf("seats %d and %d both read %q (%q, %q)", o+1, s+1, n.text, tc.names[o], tc.names[s])
						}
					}
				}
				if _, err := Table(in, Light); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestReadableNames: a name the fonts cannot draw whole degrades to what reads: emoji go,
// letters the fonts lack become "…", and a name with no letter left takes the seat's label.
func TestReadableNames(t *testing.T) {
	fs, err := loadFonts()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range [][2]string{
		{"Björn 🍺", "Björn"},
		{"Zoë 🎴", "Zoë"},
		{"Anna 李", "Anna …"},
		{"李 Anna 王", "… Anna …"},
		{"王小明", ""},
		{"🎴🎴", ""},
		{"👩🏽‍💻 Ana", "Ana"},
		{"R2-D2 ♠", "R2-D2 ♠"}, // the fonts have the suits
		{"  Jean   Paul ", "Jean Paul"},
		{"7", "7"},
	} {
		if got := readable(fs[regular], tc[0]); got != tc[1] {
			t.Errorf("readable(%q) = %q, want %q", tc[0], got, tc[1])
		}
	}
	// The board of a match whose players' names are all unreadable shows the seats instead, and
	// its alt text keeps the names.
	in := midMatch()
	in.Names = [4]string{"王小明", "🎴", "李", "Anna 🍺"}
	if _, err := Board(in, Light); err != nil {
		t.Fatal(err)
	}
	if alt := in.AltText(); !strings.Contains(alt, "王小明 & 李") || !strings.Contains(alt, "🎴 & Anna 🍺") {
		t.Errorf("the alt text lost the names: %q", alt)
	}
}

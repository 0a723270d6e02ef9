package terminal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/coach"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// firstLegal is a computer player for tests: the first legal card, the first packet's first suit.
type firstLegal struct{}

func (firstLegal) Decide(_ context.Context, v core.View) core.Move {
	if v.Phase == core.PhaseTrump {
		return core.NameTrump(v.Seat, v.Hand.First().Suit())
	}
	return core.Play(v.Seat, v.Legal.First())
}

func robots(string, uint64) table.Decider { return firstLegal{} }

// player types, line by line, one of the moves the terminal offers the player to move, as a
// person reading the screen would; it stops after max lines.
type player struct {
	term *Terminal
	rng  *rand.Rand
	max  int
	buf  []byte
}

func (p *player) Read(b []byte) (int, error) {
	if len(p.buf) == 0 {
		if p.max == 0 {
			return 0, io.EOF
		}
		p.max--
		line := "board"
		if _, m, ok := p.term.toMove(); ok {
			moves := legalMoves(m)
			line = moves[p.rng.IntN(len(moves))]
		}
		p.buf = []byte(line + "\n")
	}
	n := copy(b, p.buf)
	p.buf = p.buf[n:]
	return n, nil
}

// newService is the service a terminal plays on, as cmd/bot makes it: the computer players wait
// for the terminal's go-ahead, and people's settings are kept in the store.
func newService(store *mem.Store, term *Terminal) *table.Service {
	return tabletest.New(table.Config{Store: store, KV: store, Outboxes: map[string]table.Outbox{Platform: term},
		Surfaces: map[string]api.Surface{Platform: Surface}, Robots: term.Robots(robots), Seed: 3, Coach: coach.New(coach.Config{})})
}

func TestOneHumanPlaysAWholeMatchAndResumes(t *testing.T) {
	store := mem.New()
	out := &tabletest.Buffer{}
	term := New(Config{Out: out, Humans: 1, Options: []string{"timer=none", "stripes=3"}})
	term.cfg.In = &player{term: term, rng: rand.New(rand.NewPCG(1, 1)), max: 5}
	svc := newService(store, term)
	if err := term.Run(context.Background(), svc); err != nil {
		t.Fatal(err)
	}
	svc.Close()
	if !strings.Contains(out.String(), "Your hand") || !strings.Contains(out.String(), "Type one of:") {
		t.Fatalf("no hand shown:\n%s", out.String())
	}

	// Start again on the same database: the match goes on where it was, to its end.
	out2 := &tabletest.Buffer{}
	term2 := New(Config{Out: out2, Humans: 1})
	term2.cfg.In = &player{term: term2, rng: rand.New(rand.NewPCG(1, 2)), max: 1000}
	svc2 := newService(store, term2)
	defer svc2.Close()
	if err := svc2.Resume(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := term2.Run(context.Background(), svc2); err != nil {
		t.Fatal(err)
	}
	got := out2.String()
	if !strings.Contains(got, "Resuming") {
		t.Errorf("second run did not resume:\n%s", got)
	}
	if !strings.Contains(got, "wins the match") {
		t.Errorf("match did not finish:\n%s", got[max(0, len(got)-2000):])
	}
	all := out.String() + got
	for _, bad := range []string{"You wins", "You is", "You announces", "▶ You to play", "dealer You", "named by You",
		"press", "button", "/join", "/rematch", "/new"} {
		if strings.Contains(all, bad) {
			t.Errorf("the screen says %q:\n%s", bad, all[max(0, strings.Index(all, bad)-300):strings.Index(all, bad)+len(bad)])
		}
	}
	for _, want := range []string{"You win", "▶ Your turn", "Type rematch to play again"} {
		if !strings.Contains(all, want) {
			t.Errorf("the screen never says %q", want)
		}
	}
}

func TestHotSeatFourHumans(t *testing.T) {
	out := &tabletest.Buffer{}
	term := New(Config{Out: out, Humans: 4, Options: []string{"timer=none", "stripes=2"}})
	term.cfg.In = &player{term: term, rng: rand.New(rand.NewPCG(2, 2)), max: 2000}
	svc := newService(mem.New(), term)
	defer svc.Close()
	if err := term.Run(context.Background(), svc); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, name := range []string{"Player 2 —", "Player 3 —", "Player 4 —"} {
		if !strings.Contains(got, name) {
			t.Errorf("%s never got the keyboard", name)
		}
	}
	// Four people share the screen: the table names them all, nobody is "you" there.
	for _, bad := range []string{"  ▶ Your turn", "You win", "you deal"} {
		if i := strings.Index(got, bad); i >= 0 {
			t.Errorf("the hot seat's table speaks to one player (%q):\n%s", bad, got[max(0, i-600):i+len(bad)])
		}
	}
	if !strings.Contains(got, "▶ Player 2 to play") {
		t.Errorf("the hot seat's table never names Player 2's turn")
	}
	// Whenever a hand is shown to another player than the last one, the screen was cleared and
	// that player asked to take the keyboard since: nobody sees another's hand.
	last, cleared, asked := "", false, ""
	for _, line := range strings.Split(got, "\n") {
		if strings.Contains(line, clearScreen) {
			cleared, asked = true, ""
		}
		if rest, ok := strings.CutPrefix(line, "Pass the keyboard to "); ok {
			asked, _, _ = strings.Cut(rest, ",")
		}
		name, _, isHand := strings.Cut(line, " — 🂠")
		if !isHand {
			continue
		}
		if name != last && (!cleared || asked != name) {
			t.Fatalf("%s's hand was shown right after %s's without a handover:\n%s", name, last, got[max(0, strings.Index(got, line)-600):strings.Index(got, line)+len(line)])
		}
		last, cleared = name, false
	}
	if !strings.Contains(got, "wins the match") || strings.Contains(got, "Computer") {
		t.Errorf("four humans should finish a match without computers:\n%s", got[max(0, len(got)-1500):])
	}
}

func TestWatchFourComputers(t *testing.T) {
	out := &tabletest.Buffer{}
	term := New(Config{In: strings.NewReader(""), Out: out, Humans: 0, Options: []string{"timer=none"}})
	svc := newService(mem.New(), term)
	defer svc.Close()
	if err := term.Run(context.Background(), svc); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "wins the match") {
		t.Errorf("watching did not show a whole match:\n%s", out.String())
	}
}

func TestBadLinesAreAnsweredAndChangeNothing(t *testing.T) {
	out := &tabletest.Buffer{}
	in := strings.NewReader("frobnicate\nplay ZZ\ntrump purple\njoin 9\n\n")
	term := New(Config{In: in, Out: out, Humans: 1, Options: []string{"timer=none"}})
	svc := newService(mem.New(), term)
	defer svc.Close()
	if err := term.Run(context.Background(), svc); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`Unknown command “frobnicate”`, `“ZZ” is not a card`, `“purple” is not a suit`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("missing %q in:\n%s", want, out.String())
		}
	}
}

// TestHelpAndRulesAreTyped reads the help and the rules as the terminal prints them: commands
// without the chats' slash, the rules link intact.
func TestHelpAndRulesAreTyped(t *testing.T) {
	out := &tabletest.Buffer{}
	term := New(Config{In: strings.NewReader("help\nrules\n"), Out: out, Humans: 1, Options: []string{"timer=none"}})
	svc := newService(mem.New(), term)
	defer svc.Close()
	if err := term.Run(context.Background(), svc); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"\n1. new opens a table here", "\nnew — open a table; options: stripes=9", "\nrematch — play again; add rotate",
		i18n.T("en", "rules.title"), "Follow suit or trump", "learn is a guided game"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	// No link to a page elsewhere in English only, and no house rules: the terminal has its flags.
	if strings.Contains(got, "http") || strings.Contains(got, "House rules") {
		t.Errorf("the rules link a page or tell house rules:\n%s", got)
	}
	if strings.Contains(got, "/km") || strings.Contains(got, " /") {
		t.Errorf("a chat's command form on the screen:\n%s", got)
	}
}

// typist types the lines its next function gives, one per Read, until it says ok false.
type typist struct {
	next func() (line string, ok bool)
	buf  []byte
}

func (p *typist) Read(b []byte) (int, error) {
	if len(p.buf) == 0 {
		line, ok := p.next()
		if !ok {
			return 0, io.EOF
		}
		p.buf = []byte(line + "\n")
	}
	n := copy(b, p.buf)
	p.buf = p.buf[n:]
	return n, nil
}

// overMatch reports whether the terminal shows a finished match.
func overMatch(screen string) bool { return strings.Contains(screen, "wins the match") }

// After a match, new typed here opens a table with the terminal's settings (no timer); stop asks
// once more before it ends a match; unknown commands get the one meant; play alone says what to
// type.
func TestTypedCommands(t *testing.T) {
	out := &tabletest.Buffer{}
	term := New(Config{Out: out, Humans: 1, Options: []string{"timer=none", "stripes=1"}})
	rng := rand.New(rand.NewPCG(7, 7))
	script := []string{"plya", "play", "new", "stop", "hand", "stop", "stop"}
	step := 0
	term.cfg.In = &typist{next: func() (string, bool) {
		if !overMatch(out.String()) {
			if step < 2 { // the typo and the bare play, while the match is on
				step++
				return script[step-1], true
			}
			if _, m, ok := term.toMove(); ok {
				moves := legalMoves(m)
				return moves[rng.IntN(len(moves))], true
			}
			return "board", true
		}
		if step < len(script) {
			step++
			return script[step-1], true
		}
		return "", false
	}}
	svc := newService(mem.New(), term)
	defer svc.Close()
	if err := term.Run(context.Background(), svc); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	after := got[strings.LastIndex(got, "wins the match"):]
	for _, want := range []string{
		`Unknown command “plya”: did you mean play?`,
		"Which card? Type play and the card",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the screen never says %q", want)
		}
	}
	for i, want := range []string{
		"timer " + i18n.T("en", "opt.timer.none"), // the new lobby, told what to type rather than what to press
		"Type join to take a seat and deal to start",
		i18n.T("en", "term.stop_confirm"),
		i18n.T("en", "term.stop_kept"),
		i18n.T("en", "term.stop_confirm"),
		"stopped",
	} {
		j := strings.Index(after, want)
		if j < 0 {
			t.Fatalf("step %d: no %q after the match:\n%s", i, want, after)
		}
		after = after[j+len(want):]
	}
}

// Watching four computers, the program ends when the match does, though nobody closes its input.
func TestWatchingEndsWithTheMatch(t *testing.T) {
	out := &tabletest.Buffer{}
	in, w := io.Pipe()
	defer w.Close()
	term := New(Config{In: in, Out: out, Humans: 0, Options: []string{"timer=none", "stripes=2"}})
	svc := newService(mem.New(), term)
	defer svc.Close()
	if err := term.Run(context.Background(), svc); err != nil {
		t.Fatal(err)
	}
	if !overMatch(out.String()) {
		t.Errorf("Run returned before the match ended:\n%s", out)
	}
}

// The end of a game reads: the last trick, the result, the board — each line once.
func TestTheEndOfAGameInOrder(t *testing.T) {
	out := &tabletest.Buffer{}
	// Five stripes: more than one game can take, so there is a second game whatever the deals.
	term := New(Config{In: strings.NewReader(""), Out: out, Humans: 0, Options: []string{"timer=none", "stripes=5"}})
	svc := newService(mem.New(), term)
	defer svc.Close()
	if err := term.Run(context.Background(), svc); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	end := strings.Index(got, "🏁 ")
	next := strings.Index(got, "Game 2 ·")
	if end < 0 || next < end {
		t.Fatalf("no end of game 1:\n%s", got)
	}
	before := strings.Split(strings.TrimSpace(got[:end]), "\n")
	lastTrick := -1
	for i, l := range before {
		if strings.Contains(l, i18n.T("en", "last.title")) {
			lastTrick = i
		}
	}
	if lastTrick < len(before)-2 { // the last trick, then at most the score line, then the result
		t.Errorf("the result does not follow the last trick:\n%s", strings.Join(before[max(0, len(before)-5):], "\n"))
	}
	if n := strings.Count(got[end:next], "Team A ("); n != 1 {
		t.Errorf("the board after game 1 shows team A %d times:\n%s", n, got[end:next])
	}
	if strings.Count(got[end-300:end], "Team A (") != 0 {
		t.Errorf("a board line before the result:\n%s", got[end-300:end])
	}
}

// -lang is the whole screen's: a table opened in English speaks German on the next run with
// -lang de, table texts and the player's own alike.
func TestLangAppliesToTheWholeScreen(t *testing.T) {
	store := mem.New()
	out := &tabletest.Buffer{}
	term := New(Config{In: strings.NewReader(""), Out: out, Humans: 1, Options: []string{"timer=none"}})
	svc := newService(store, term)
	if err := term.Run(context.Background(), svc); err != nil {
		t.Fatal(err)
	}
	svc.Close()
	out2 := &tabletest.Buffer{}
	term2 := New(Config{In: strings.NewReader("board\n"), Out: out2, Humans: 1, Lang: "de"})
	svc2 := newService(store, term2)
	defer svc2.Close()
	svc2.Resume(context.Background())
	if err := term2.Run(context.Background(), svc2); err != nil {
		t.Fatal(err)
	}
	got := out2.String()
	for _, want := range []string{i18n.T("de", "term.resumed"), i18n.T("de", "board.title")} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in German:\n%s", want, got)
		}
	}
	// The table's own texts too: its score line as the resumed screen shows it.
	score, _, _ := strings.Cut(i18n.T("de", "live.score", 0, 0, 0, 0), " 0")
	enScore, _, _ := strings.Cut(i18n.T("en", "live.score", 0, 0, 0, 0), " 0")
	if !strings.Contains(got, score) || strings.Contains(got, enScore) || strings.Contains(got, i18n.T("en", "board.title")) {
		t.Errorf("English on a German screen:\n%s", got)
	}
}

// The league at the terminal: after two matches, stats, top and history say what the screen
// showed, and a match's record is saved as a file that replays.
func TestLeagueAtTheTerminal(t *testing.T) {
	out := &tabletest.Buffer{}
	dir := t.TempDir()
	term := New(Config{Out: out, Humans: 1, Options: []string{"timer=none", "stripes=1"}, Dir: dir})
	rng := rand.New(rand.NewPCG(15, 15))
	script := []string{"stats", "top all", "history", "history record 1", "history board 7"}
	step := 0
	term.cfg.In = &typist{next: func() (string, bool) {
		switch n := strings.Count(out.String(), "wins the match"); {
		case n < 2:
			if _, m, ok := term.toMove(); ok {
				moves := legalMoves(m)
				return moves[rng.IntN(len(moves))], true
			}
			if n == 1 && !strings.Contains(out.String(), "Rematch!") && step == 0 {
				step = -1
				return "rematch", true
			}
			return "board", true
		case step < 0:
			step = 0
			fallthrough
		default:
			if step < len(script) {
				step++
				return script[step-1], true
			}
			return "", false
		}
	}}
	store := mem.New()
	svc := tabletest.New(table.Config{Store: store, KV: store, Outboxes: map[string]table.Outbox{Platform: term},
		Surfaces: map[string]api.Surface{Platform: Surface}, Robots: robots, Seed: 3})
	defer svc.Close()
	if err := term.Run(context.Background(), svc); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if strings.Count(got, "wins the match") != 2 {
		t.Fatalf("not two matches:\n%s", got)
	}
	// The player is seat 1, in team A.
	won := strings.Count(got, "🏆 Team A (")
	league := got[strings.LastIndex(got, "wins the match"):]
	for _, want := range []string{
		"📊 Your statistics in Terminal", // about the one player, to them
		fmt.Sprintf("2 matches · won: %d (", won),
		"🏆 All-time table in Terminal\n1. You — ",
		fmt.Sprintf(" · won %d of 2 (provisional)", won),
		"📜 The last matches in Terminal\n1. ",
		"\n2. ",
		"Type /history board 1 for the first match's board, /history record 1 for its record.",
		"📄 The record of that match",
		"Which match? /history board 1 or /history record 1",
	} {
		want = strings.ReplaceAll(want, "/history", "history") // typed here without the slash
		if !strings.Contains(league, want) {
			t.Errorf("after the matches the screen never says %q:\n%s", want, league)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != 1 || !strings.Contains(league, "Saved as "+files[0]+".") {
		t.Fatalf("saved %v:\n%s", files, league)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := core.Replay(data); err != nil {
		t.Errorf("the saved record does not replay: %v", err)
	}
}

// -learn opens a guided game: the welcome, then at each turn what may be played and why, and a
// hint when asked for one.
func TestLearnAtTheTerminal(t *testing.T) {
	out := &tabletest.Buffer{}
	term := New(Config{Out: out, Humans: 1, Learn: true})
	term.cfg.In = &player{term: term, rng: rand.New(rand.NewPCG(2, 2)), max: 40, buf: []byte("help\nhint\n")}
	svc := newService(mem.New(), term)
	defer svc.Close()
	if err := term.Run(context.Background(), svc); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"A guided game", "You may play", "Trumps with", "🎓", "learn — a guided game against three computers, right here"} {
		if !strings.Contains(got, want) {
			t.Errorf("the screen never says %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "/learn") || strings.Contains(got, "/hint") || strings.Contains(got, "private chat") {
		t.Errorf("the screen shows the chats' slashes:\n%s", got)
	}
}

// At a hot seat the handover clears the scrollback too (ESC [3J, as xterm and its kin take it),
// not only the visible screen: scrolling up would otherwise show the last player's hand.
func TestHotSeatClearsTheScrollback(t *testing.T) {
	out := &tabletest.Buffer{}
	term := New(Config{Out: out, Humans: 4, Options: []string{"timer=none", "stripes=1"}})
	term.cfg.In = &player{term: term, rng: rand.New(rand.NewPCG(4, 4)), max: 40}
	svc := newService(mem.New(), term)
	defer svc.Close()
	if err := term.Run(context.Background(), svc); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	handovers := strings.Count(got, "Pass the keyboard to ")
	if handovers < 2 {
		t.Fatalf("only %d handovers:\n%s", handovers, got)
	}
	if n := strings.Count(got, "\033[3J"); n != handovers {
		t.Errorf("%d handovers, %d of them clear the scrollback (ESC [3J)", handovers, n)
	}
}

// The end of a match reads like the end of a game: the last trick and the score line, then the
// game's result, the board once, and the match's winner with what to type next; nothing of the
// game after that.
func TestTheEndOfTheMatchInOrder(t *testing.T) {
	got, err := session(t, mem.New(), Config{In: strings.NewReader(""), Humans: 0, Options: []string{"timer=none", "stripes=1"}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	end := strings.LastIndex(got, "🏁 ")
	won := strings.Index(got, "wins the match")
	if end < 0 || won < end {
		t.Fatalf("no end of the match:\n%s", got)
	}
	before := got[:end]
	if last := strings.LastIndex(before, i18n.T("en", "last.title")); last < 0 || strings.Count(before[last:], "\n") > 3 {
		t.Errorf("the last trick is not just before the result:\n%s", got[max(0, end-400):])
	}
	after := got[won:]
	for _, bad := range []string{i18n.T("en", "last.title"), "Tricks A"} {
		if strings.Contains(after, bad) {
			t.Errorf("%q after the match's winner:\n%s", bad, got[end:])
		}
	}
	boards := 0
	for _, l := range strings.Split(got[end:], "\n") {
		if strings.HasPrefix(l, "Team A (") && strings.Contains(l, "): ") {
			boards++
		}
	}
	if boards != 1 {
		t.Errorf("the board shows team A %d times at the end:\n%s", boards, got[end:])
	}
}

// The opening screen says what happens: the terminal deals at once, so it shows the match that
// has started, not a lobby that asks to type join and deal; its options line says each setting
// once ("timer unlimited", not "timer no timer").
func TestTheOpeningScreen(t *testing.T) {
	out := &tabletest.Buffer{}
	term := New(Config{In: strings.NewReader(""), Out: out, Humans: 1, Options: []string{"timer=none"}})
	svc := newService(mem.New(), term)
	defer svc.Close()
	if err := term.Run(context.Background(), svc); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	opening, _, _ := strings.Cut(got, " — 🂠")
	if !strings.Contains(opening, i18n.T("en", "lobby.started")) {
		t.Errorf("the opening screen does not say the match has started:\n%s", opening)
	}
	for _, bad := range []string{i18n.T("en", "lobby.title"), i18n.T("en", "lobby.hint.typed"), "timer no timer"} {
		if strings.Contains(got, bad) {
			t.Errorf("the opening screen says %q:\n%s", bad, opening)
		}
	}
}

// playThenType plays a match with options to its end as one player typing random legal moves
// (seeded), then types line, and gives the screen.
func playThenType(t *testing.T, seed uint64, options []string, line string) string {
	t.Helper()
	out := &tabletest.Buffer{}
	term := New(Config{Out: out, Humans: 1, Options: options})
	rng := rand.New(rand.NewPCG(seed, seed))
	typed := false
	term.cfg.In = &typist{next: func() (string, bool) {
		if _, m, ok := term.toMove(); ok {
			moves := legalMoves(m)
			return moves[rng.IntN(len(moves))], true
		}
		if overMatch(out.String()) && !typed {
			typed = true
			return line, true
		}
		return "", !typed
	}}
	svc := newService(mem.New(), term)
	defer svc.Close()
	if err := term.Run(context.Background(), svc); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// The terminal shows no pictures: board lists every game of a long match as text and never says
// "(see the picture)".
func TestBoardWithoutPictures(t *testing.T) {
	got := playThenType(t, 9, []string{"timer=none", "stripes=6"}, "board")
	board := got[strings.LastIndex(got, i18n.T("en", "board.title")):]
	games := strings.Count(got, "🏁 ")
	if games <= 6 {
		t.Fatalf("a match of %d games shows nothing of the board's limit", games)
	}
	var missing []int
	for n := 1; n <= games; n++ {
		if !strings.Contains(board, fmt.Sprintf("\nGame %d: trump", n)) {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		t.Errorf("board lacks games %v of %d:\n%s", missing, games, board)
	}
	if strings.Contains(got, "picture") {
		t.Errorf("the screen points at a picture:\n%s", board)
	}
}

// rematch rotate gives new partners, and the screen shows it: the computers keep their names
// when they change seats, so the one who was Computer 4 is now the partner.
func TestRematchRotateShowsNewPartners(t *testing.T) {
	got := playThenType(t, 5, []string{"timer=none", "stripes=1"}, "rematch rotate")
	end := strings.Index(got, "wins the match")
	if end < 0 {
		t.Fatalf("no match:\n%s", got)
	}
	before, after := got[:end], got[end:]
	if !strings.Contains(before, "Team A (You & Computer 3)") {
		t.Errorf("the first match's partner is not Computer 3:\n%s", before)
	}
	if !strings.Contains(after, "Team A (You & Computer 4)") || strings.Contains(after, "Team A (You & Computer 3)") {
		t.Errorf("after rematch rotate the partner is not Computer 4:\n%s", after)
	}
}

// session is one run of the program on store, as cmd/bot makes it: the service resumes the stored
// tables, then the terminal runs; in gives the lines typed (nil: a random player's moves, at most
// max lines). It gives the screen and Run's error.
func session(t *testing.T, store *mem.Store, cfg Config, max int) (string, error) {
	t.Helper()
	return sessionUntil(t, context.Background(), store, cfg, max)
}

// sessionUntil is a session that ends with ctx, as when the program is interrupted.
func sessionUntil(t *testing.T, ctx context.Context, store *mem.Store, cfg Config, max int) (string, error) {
	t.Helper()
	out := &tabletest.Buffer{}
	cfg.Out = out
	term := New(cfg)
	if cfg.In == nil {
		term.cfg.In = &player{term: term, rng: rand.New(rand.NewPCG(uint64(max), 8)), max: max}
	}
	svc := newService(store, term)
	defer svc.Close()
	if err := svc.Resume(ctx); err != nil {
		t.Fatal(err)
	}
	err := term.Run(ctx, svc)
	return out.String(), err
}

// setupAt is the stored table at the terminal's place.
func setupAt(t *testing.T, store *mem.Store) table.Setup {
	t.Helper()
	term := New(Config{})
	svc := newService(store, term)
	defer svc.Close()
	if err := svc.Resume(context.Background()); err != nil {
		t.Fatal(err)
	}
	su, ok := svc.SetupOf(svc.TableAt(term.place))
	if !ok {
		t.Fatal("no table stored at the terminal")
	}
	return su
}

// -lang chosen in an earlier run stays the whole screen's: the next run without -lang speaks it
// everywhere, the terminal's own lines and the player's name included.
func TestLangChosenBeforeStaysTheScreens(t *testing.T) {
	store := mem.New()
	if _, err := session(t, store, Config{Humans: 1, Lang: "lb", Options: []string{"timer=none"}}, 3); err != nil {
		t.Fatal(err)
	}
	got, err := session(t, store, Config{Humans: 1, In: strings.NewReader("board\n")}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{i18n.T("lb", "term.resumed"), i18n.T("lb", "board.title"), "Dir — "} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q on the screen:\n%s", want, got)
		}
	}
	moves, _, _ := strings.Cut(i18n.T("lb", "term.moves", ""), ":")
	if !strings.Contains(got, moves) {
		t.Errorf("the moves are not offered in Luxembourgish:\n%s", got)
	}
	for _, bad := range []string{i18n.T("en", "term.resumed"), "Type one of", "You —", "You &", i18n.T("en", "board.title")} {
		if strings.Contains(got, bad) {
			t.Errorf("English on a Luxembourgish screen (%q):\n%s", bad, got)
		}
	}
}

// tables is every stored table's state, by ID.
func tables(t *testing.T, store *mem.Store) map[string]string {
	ctx := t.Context()
	t.Helper()
	out := map[string]string{}
	if err := store.Tables(ctx, func(id string, state []byte) error { out[id] = string(state); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

func records(t *testing.T, store *mem.Store) int {
	ctx := t.Context()
	t.Helper()
	n := 0
	if err := store.Records(ctx, func(string, []byte) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// A table stored by an earlier run is resumed only when it is what the command line asks for.
// An unfinished match that differs is left exactly as it was and Run says what differs and how to
// start afresh; Fresh (-new) stops it, keeping it in the history; what was not given is taken from
// the stored table. A finished match offers a rematch, or makes room for a new table when
// something else was asked for or nobody at the keyboard could type rematch.
func TestAStoredTableAndTheFlags(t *testing.T) {
	unfinished := func(t *testing.T, humans int) *mem.Store {
		store := mem.New()
		if _, err := session(t, store, Config{Humans: humans, Options: []string{"timer=none"}}, 3); err != nil {
			t.Fatal(err)
		}
		if su := setupAt(t, store); su.Status != api.StatusPlaying {
			t.Fatalf("the first run left a table %s", su.Status)
		}
		return store
	}
	finished := func(t *testing.T, humans int) *mem.Store {
		store := mem.New()
		if _, err := session(t, store, Config{Humans: humans, Options: []string{"timer=none", "stripes=1"}}, 500); err != nil {
			t.Fatal(err)
		}
		if su := setupAt(t, store); su.Status != api.StatusOver {
			t.Fatalf("the first run left a table %s", su.Status)
		}
		return store
	}
	for _, tc := range []struct {
		name  string
		cfg   Config
		wants []string // in the conflict's text
	}{
		{"other options", Config{Humans: 1, Options: []string{"timer=none", "stripes=5"}, Insist: Insist{Options: []string{"stripes=5"}}},
			[]string{"stripes=5 (the match has stripes=9)"}},
		{"another level", Config{Humans: 1, Options: []string{"timer=none", "level=strong"}, Insist: Insist{Options: []string{"level=strong"}}},
			[]string{"level=strong (the match has level=normal)"}},
		{"a guided game", Config{Humans: 1, Learn: true}, []string{"-learn (the match is not a guided game)"}},
		{"watching", Config{Humans: 0, Insist: Insist{Humans: true}}, []string{"-humans 0 (the match was started with -humans 1)"}},
	} {
		t.Run("unfinished, "+tc.name, func(t *testing.T) {
			store := unfinished(t, 1)
			before := tables(t, store)
			screen, err := session(t, store, tc.cfg, 50)
			var conflict *ConflictError
			if !errors.As(err, &conflict) {
				t.Fatalf("Run gave %v, want a ConflictError; the screen:\n%s", err, screen)
			}
			for _, want := range append(tc.wants, "An unfinished match is stored here", "add -new to stop it") {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the conflict does not say %q: %s", want, err)
				}
			}
			if after := tables(t, store); !maps.Equal(before, after) {
				t.Errorf("a refused start changed the stored table:\n%v\n%v", before, after)
			}
			if screen != "" {
				t.Errorf("a refused start printed:\n%s", screen)
			}
		})
	}
	t.Run("unfinished watch, to play", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			// Watching was interrupted while the computers played: on the next start they would go
			// on at once, but a refused start must find the match as it was.
			store := mem.New()
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			if _, err := sessionUntil(t, ctx, store, Config{Humans: 0, Pace: 5 * time.Millisecond, Options: []string{"timer=none"}}, 0); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("the watch was not interrupted: %v", err)
			}
			before := tables(t, store)
			_, err := session(t, store, Config{Humans: 1, Insist: Insist{Humans: true}}, 0)
			if !strings.Contains(fmt.Sprint(err), "-humans 1 (the match was started with -humans 0)") {
				t.Errorf("got %v", err)
			}
			if after := tables(t, store); !maps.Equal(before, after) {
				t.Errorf("the computers played on at a refused start")
			}
		})
	})
	t.Run("unfinished, fresh", func(t *testing.T) {
		store := unfinished(t, 1)
		screen, err := session(t, store, Config{Humans: 1, Fresh: true, Options: []string{"timer=none", "stripes=5"},
			Insist: Insist{Options: []string{"stripes=5"}}}, 2)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(screen, i18n.T("en", "term.fresh")+"\n") || !strings.Contains(screen, "5 stripes") {
			t.Errorf("the screen does not say the match was stopped and a new one opened:\n%s", screen)
		}
		if su := setupAt(t, store); su.Options.Rules.Stripes != 5 || su.Status != api.StatusPlaying {
			t.Errorf("the new table: %+v", su)
		}
		if n := records(t, store); n != 1 {
			t.Errorf("the stopped match is not kept: %d records", n)
		}
	})
	t.Run("unfinished hot seat, its players", func(t *testing.T) {
		store := unfinished(t, 4)
		screen, err := session(t, store, Config{Humans: 1}, 3000) // -humans not given: as stored
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(screen, "Resuming") || !strings.Contains(screen, "Pass the keyboard to Player 2") || !overMatch(screen) {
			t.Errorf("the hot seat did not play on to the match's end:\n%s", screen[max(0, len(screen)-1500):])
		}
	})
	t.Run("finished, watching again", func(t *testing.T) {
		store := finished(t, 0)
		screen, err := session(t, store, Config{Humans: 0, Insist: Insist{Humans: true}, Options: []string{"timer=none", "stripes=1"}}, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(screen, i18n.T("en", "term.over_new")+"\n") || !strings.Contains(screen, "wins the match") || strings.Contains(screen, "Resuming") {
			t.Errorf("a second watch does not show a new match:\n%s", screen)
		}
	})
	t.Run("finished, playing after watching", func(t *testing.T) {
		store := finished(t, 0)
		screen, err := session(t, store, Config{Humans: 1, Options: []string{"timer=none"}}, 2)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(screen, "Your hand") {
			t.Errorf("no new match to play:\n%s", screen)
		}
	})
	t.Run("a lobby", func(t *testing.T) {
		store := mem.New()
		if _, err := session(t, store, Config{Humans: 1, In: strings.NewReader("stop\nstop\nnew\n"), Options: []string{"timer=none"}}, 0); err != nil {
			t.Fatal(err)
		}
		screen, err := session(t, store, Config{Humans: 1, In: strings.NewReader("")}, 0)
		if err != nil || !strings.Contains(screen, "Resuming") || !strings.Contains(screen, "Type join to take a seat and deal to start") {
			t.Errorf("a stored lobby is not shown (%v):\n%s", err, screen)
		}
	})
	t.Run("finished, the same player", func(t *testing.T) {
		store := finished(t, 1)
		screen, err := session(t, store, Config{Humans: 1, In: strings.NewReader("rematch\n")}, 0)
		if err != nil {
			t.Fatal(err)
		}
		prompt := "This match is over. Type rematch to play again, rematch rotate for new partners, or new for a new table."
		i := strings.Index(screen, prompt)
		if i < 0 || !strings.Contains(screen[i:], "Game 1 ·") {
			t.Errorf("a finished match does not offer the rematch:\n%s", screen)
		}
	})
}

// At a hot seat the screen is everyone's: an answer that shows what its actor holds shows only
// to the one at the keyboard. Player 2 sits there when Player 1's "hand" is answered (nobody to
// move types as Player 1): the screen gets the answer's public text, never the hand.
func TestHotSeatSecretAnswerShowsOnlyAtTheKeyboard(t *testing.T) {
	out := &tabletest.Buffer{}
	term := New(Config{In: strings.NewReader(""), Out: out, Humans: 2, Options: []string{"timer=none"}})
	svc := newService(mem.New(), term)
	defer svc.Close()
	if err := term.Run(context.Background(), svc); err != nil {
		t.Fatal(err)
	}
	hand := func(seen string) string {
		before := len(out.String())
		term.seen = seen
		term.send(context.Background(), api.Command{Actor: term.player(1), Verb: api.VerbHand})
		return out.String()[before:]
	}
	title := strings.Fields(i18n.T("en", "hand.title", 1))[0] // "🂠"
	if got := hand("local:2"); strings.Contains(got, title) || strings.TrimSpace(got) == "" {
		t.Errorf("Player 1's hand answered with Player 2 at the keyboard: %q", got)
	}
	if got := hand("local:1"); !strings.Contains(got, title) {
		t.Errorf("Player 1's hand answered with Player 1 at the keyboard: %q", got)
	}
}

package terminal

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/table"
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

// syncBuffer is an output both the terminal and the service's goroutines write to.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

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

func newService(store *table.MemStore, term *Terminal) *table.Service {
	return table.New(table.Config{Store: store, Outboxes: map[string]table.Outbox{Platform: term},
		Surfaces: map[string]table.Surface{Platform: Surface}, Robots: robots, Seed: 3})
}

func TestOneHumanPlaysAWholeMatchAndResumes(t *testing.T) {
	store := table.NewMemStore()
	out := &syncBuffer{}
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
	// The one player is spoken to, and told what to type rather than what to press.
	if want := "Type join to take a seat and deal to start"; !strings.Contains(out.String(), want) {
		t.Errorf("the screen never says %q:\n%s", want, out.String())
	}

	// Start again on the same database: the match goes on where it was, to its end.
	out2 := &syncBuffer{}
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
	out := &syncBuffer{}
	term := New(Config{Out: out, Humans: 4, Options: []string{"timer=none", "stripes=2"}})
	term.cfg.In = &player{term: term, rng: rand.New(rand.NewPCG(2, 2)), max: 2000}
	svc := newService(table.NewMemStore(), term)
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
	out := &syncBuffer{}
	term := New(Config{In: strings.NewReader(""), Out: out, Humans: 0, Options: []string{"timer=none"}})
	svc := newService(table.NewMemStore(), term)
	defer svc.Close()
	if err := term.Run(context.Background(), svc); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "wins the match") {
		t.Errorf("watching did not show a whole match:\n%s", out.String())
	}
}

func TestBadLinesAreAnsweredAndChangeNothing(t *testing.T) {
	out := &syncBuffer{}
	in := strings.NewReader("frobnicate\nplay ZZ\ntrump purple\njoin 9\n\n")
	term := New(Config{In: in, Out: out, Humans: 1, Options: []string{"timer=none"}})
	svc := newService(table.NewMemStore(), term)
	defer svc.Close()
	if err := term.Run(context.Background(), svc); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`Unknown command "frobnicate"`, `"ZZ" is not a card`, `"purple" is not a suit`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("missing %q in:\n%s", want, out.String())
		}
	}
}

// TestHelpAndRulesAreTyped reads the help and the rules as the terminal prints them: commands
// without the chats' slash, the rules link intact.
func TestHelpAndRulesAreTyped(t *testing.T) {
	out := &syncBuffer{}
	term := New(Config{In: strings.NewReader("help\nrules\n"), Out: out, Humans: 1, Options: []string{"timer=none"}})
	svc := newService(table.NewMemStore(), term)
	defer svc.Close()
	if err := term.Run(context.Background(), svc); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"\nnew — open a table here", "\nrematch — play again: rematch or rematch rotate",
		"https://github.com/kontermatt/kontermatt/blob/main/docs/rules.md"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	if strings.Contains(got, "/km") || strings.Contains(got, " /") {
		t.Errorf("a chat's command form on the screen:\n%s", got)
	}
}

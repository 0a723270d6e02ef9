package robot

import (
	"context"
	"go/parser"
	"go/token"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/core"
)

// quick are small search settings for tests: few deals, no time limit, so decisions repeat.
var quick = Options{Threads: 1, Budget: time.Minute, Worlds: 6}

func TestParseLevel(t *testing.T) {
	for in, want := range map[string]Level{"easy": Easy, " Normal": Normal, "STRONG": Strong} {
		if got, err := ParseLevel(in); err != nil || got != want {
			t.Errorf("ParseLevel(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseLevel("grandmaster"); err == nil {
		t.Error("ParseLevel accepted an unknown level")
	}
}

// playGame plays a game between the players and fails the test on any refused move.
func playGame(t *testing.T, g *core.Game, players [4]Player) {
	t.Helper()
	for g.Phase() != core.PhaseOver {
		s := g.ToMove()
		v := g.View(s)
		m := players[s].Decide(context.Background(), v)
		if m.Seat != s {
			t.Fatalf("seat %v answered for seat %v", s, m.Seat)
		}
		if err := g.Apply(m); err != nil {
			t.Fatalf("seat %v: %v refused: %v (view %+v)", s, m, err, v)
		}
	}
}

func TestEveryLevelPlaysLegally(t *testing.T) {
	seed := uint64(1)
	r := rand.New(rand.NewPCG(seed, 0))
	for i := range 12 {
		dealer := core.Seat(r.IntN(4))
		g, err := core.NewGame(core.DefaultRules(), dealer, core.DealHands(r, dealer))
		if err != nil {
			t.Fatal(err)
		}
		var ps [4]Player
		for s := range ps {
			ps[s] = NewWith(Levels[(i+s)%3], uint64(s), Options{Threads: 1 + s%2, Budget: 20 * time.Millisecond, Worlds: 8})
		}
		playGame(t, g, ps)
	}
}

func TestDecideIsFastWhenContextIsDone(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 0))
	g, _ := core.NewGame(core.DefaultRules(), 0, core.DealHands(r, 0))
	p := NewWith(Strong, 1, Options{Threads: 1, Budget: time.Hour, Worlds: 1 << 20})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	for g.Phase() != core.PhaseOver {
		s := g.ToMove()
		if err := g.Apply(p.Decide(ctx, g.View(s))); err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("a game with a cancelled context took %v", d)
	}
	// A deadline in the context bounds a decision even with an hour's budget.
	g, _ = core.NewGame(core.DefaultRules(), 0, core.DealHands(r, 0))
	ctx, cancel = context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start = time.Now()
	m := p.Decide(ctx, g.View(g.ToMove()))
	if d := time.Since(start); d > time.Second {
		t.Fatalf("trump decision took %v with a 50ms deadline", d)
	}
	if err := g.Check(m); err != nil {
		t.Fatal(err)
	}
}

// swapHidden returns the deal with two cards of seats a and b exchanged, chosen among the cards
// not in keep (so the view of the seat that owns keep does not change).
func swapHidden(hands [4][6]core.Card, a, b core.Seat, keep core.CardSet, r *rand.Rand) [4][6]core.Card {
	for range 100 {
		i, j := r.IntN(6), r.IntN(6)
		if !keep.Has(hands[a][i]) && !keep.Has(hands[b][j]) {
			hands[a][i], hands[b][j] = hands[b][j], hands[a][i]
			return hands
		}
	}
	return hands // nothing hidden left to swap
}

// TestSeesOnlyItsView plays a game, and at each decision builds another game that differs only
// in cards the deciding seat cannot see; a player with the same seed must decide the same.
func TestSeesOnlyItsView(t *testing.T) {
	// Normal and Strong share their code; Strong stands for both.
	for _, lvl := range []Level{Easy, Strong} {
		t.Run(string(lvl), func(t *testing.T) {
			seed := uint64(3)
			r := rand.New(rand.NewPCG(seed, 9))
			checked := 0
			// Two players with the same seed: one has played the whole game, the other only
			// sees the altered deals, so neither history nor hidden cards may matter.
			p1, p2 := NewWith(lvl, 42, quick), NewWith(lvl, 42, quick)
			for range 2 {
				dealer := core.Seat(r.IntN(4))
				hands := core.DealHands(r, dealer)
				g, _ := core.NewGame(core.DefaultRules(), dealer, hands)
				var moves []core.Move
				for g.Phase() != core.PhaseOver {
					s := g.ToMove()
					v := g.View(s)
					// The other deal: swap hidden cards of the two opponents, and of partner and
					// an opponent, among the cards not yet played.
					keep := v.Hand | v.Played()
					if g.Phase() == core.PhaseTrump {
						keep = v.Hand
					}
					other := swapHidden(hands, s.Next(), s.Plus(3), keep, r)
					other = swapHidden(other, s.Partner(), s.Next(), keep, r)
					if g.Phase() == core.PhaseTrump {
						other = swapHidden(other, s, s.Partner(), keep, r) // the unseen second packet
					}
					h, err := core.NewGame(core.DefaultRules(), dealer, other)
					if err != nil {
						t.Fatal(err)
					}
					replayed := true
					for _, m := range moves {
						if h.Apply(m) != nil {
							replayed = false // the swap made an earlier move illegal: not the same view
							break
						}
					}
					if replayed {
						w := h.View(s)
						if !reflect.DeepEqual(v, w) {
							t.Fatalf("the views differ: %+v\n%+v", v, w)
						}
						m2 := p2.Decide(context.Background(), w)
						m1 := p1.Decide(context.Background(), v)
						if m1 != m2 {
							t.Fatalf("seed %d: the same view gave %v and %v", seed, m1, m2)
						}
						checked++
					}
					m := p1.Decide(context.Background(), v)
					if err := g.Apply(m); err != nil {
						t.Fatal(err)
					}
					moves = append(moves, m)
				}
			}
			if checked < 15 {
				t.Fatalf("only %d decisions compared", checked)
			}
		})
	}
}

// TestOnlyViews checks the package's source: no computer player touches core.Game or the other
// whole-game types, and nothing is imported but the standard library and core.
func TestOnlyViews(t *testing.T) {
	banned := []string{"core.Game", "core.NewGame", "core.Match", "core.NewMatch", "core.Replay", "core.GameRecord"}
	for _, dir := range []string{".", "dd"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		n := 0
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			n++
			fset := token.NewFileSet()
			af, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, im := range af.Imports {
				p, _ := strconv.Unquote(im.Path.Value)
				first := strings.Split(p, "/")[0]
				if strings.Contains(first, ".") && p != "github.com/kontermatt/kontermatt/core" && p != "github.com/kontermatt/kontermatt/core/robot/dd" {
					t.Errorf("%s imports %s", f, p)
				}
			}
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			src := string(data)
			for _, b := range banned {
				for _, line := range strings.Split(src, "\n") {
					if strings.Contains(line, b) && !strings.HasPrefix(strings.TrimSpace(line), "//") {
						t.Errorf("%s uses %s: %s", f, b, strings.TrimSpace(line))
					}
				}
			}
		}
		if n == 0 {
			t.Fatalf("no source files in %s", dir)
		}
	}
}

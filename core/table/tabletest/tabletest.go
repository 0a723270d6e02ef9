// Package tabletest drives table services in benchmarks and tests: tables of four humans who
// always make a legal move, through the service's public API only; and it checks what surfaces
// show in public against the cards still held.
package tabletest

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// Table is one driven table.
type Table struct {
	ID      string
	Place   api.Place
	Players []api.Player
}

// Open opens a table of four humans at place number i and deals.
func Open(svc *table.Service, i int) (Table, error) {
	t := Table{Place: api.Place{Platform: "bench", Chat: fmt.Sprint(i)}}
	for s := 0; s < 4; s++ {
		t.Players = append(t.Players, api.Player{ID: fmt.Sprintf("b%d-%d", i, s), Name: fmt.Sprintf("P%d", s+1)})
	}
	cmds := []api.Command{{Verb: api.VerbNew, Actor: t.Players[0], Args: []string{"timer=none"}}}
	for _, p := range t.Players[1:] {
		cmds = append(cmds, api.Command{Verb: api.VerbJoin, Actor: p})
	}
	cmds = append(cmds, api.Command{Verb: api.VerbDeal, Actor: t.Players[0]})
	for _, c := range cmds {
		c.Place = t.Place
		// Background: these helpers take no test, and each command runs to its end (benchmarks share them).
		if r, _ := svc.Handle(context.Background(), c); len(r) > 0 && r[0].Kind == api.KindError {
			return t, fmt.Errorf("%s: %s", c.Verb, r[0].Text)
		}
	}
	t.ID = svc.TableAt(t.Place)
	return t, nil
}

// Step makes the player to move act (Next) and says how long the durable command took.
func Step(svc *table.Service, t Table) (time.Duration, error) {
	cmd := Next(svc, t)
	start := time.Now()
	// Background: these helpers take no test, and each command runs to its end (benchmarks share them).
	r, _ := svc.Handle(context.Background(), cmd)
	d := time.Since(start)
	if len(r) > 0 && r[0].Kind == api.KindError {
		return d, fmt.Errorf("%s %v: %s", cmd.Verb, cmd.Args, r[0].Text)
	}
	return d, nil
}

// Next is the command of the player to move: name hearts trump, or play the first legal card; a
// rematch when the match is over.
func Next(svc *table.Service, t Table) api.Command {
	who, legal, trump := svc.Turn(t.ID)
	cmd := api.Command{Place: t.Place, Verb: api.VerbPlay}
	for _, p := range t.Players {
		if p.ID == who {
			cmd.Actor = p
		}
	}
	if who == "" {
		cmd.Actor, cmd.Verb = t.Players[0], api.VerbRematch
	} else {
		cmd.Verb, cmd.Args = Move(legal, trump)
	}
	return cmd
}

// Move is the move a player to act makes in tests, from what the service's Turn says: hearts
// as trump, or the first legal card.
func Move(legal []core.Card, trump bool) (api.Verb, []string) {
	if trump {
		return api.VerbTrump, []string{"H"}
	}
	return api.VerbPlay, []string{legal[0].String()}
}

// RunTables drives n tables from n goroutines for b.N commands in all, and reports commands per
// second and the p50/p99 latency of one command.
func RunTables(b *testing.B, store table.Store, n int) {
	svc := New(table.Config{Store: store, Seed: 1}) // with the league, which a match end writes as the bot's does
	defer svc.Close()
	tables := make([]Table, n)
	for i := range n {
		var err error
		if tables[i], err = Open(svc, i); err != nil {
			b.Fatal(err)
		}
	}
	per := make([][]time.Duration, n)
	b.ResetTimer()
	var wg sync.WaitGroup
	for i := range n {
		count := b.N / n
		if i < b.N%n {
			count++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range count {
				d, err := Step(svc, tables[i])
				if err != nil {
					b.Error(err)
					return
				}
				per[i] = append(per[i], d)
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	all := slices.Concat(per...)
	slices.Sort(all)
	if len(all) > 0 {
		b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cmds/s")
}

// Leaks gives the cards of held (the cards still held in game number game, as
// table.Service.HeldCards tells) that a text meant for a group or channel shows. A text about an
// earlier game — its title names that game — shows cards that were all played by then, some of
// them dealt again since, so it is not checked here (the service checks every public message
// against its own game when it is made).
func Leaks(text string, game int, held core.CardSet) []core.Card {
	for n := 1; n < game; n++ {
		for _, lang := range i18n.Languages {
			title, _, _ := strings.Cut(i18n.T(lang, "live.title", n, "\x00"), "\x00")
			if strings.Contains(text, title) {
				return nil
			}
		}
	}
	var out []core.Card
	for _, c := range held.Cards() {
		if strings.Contains(text, c.Chat()) {
			out = append(out, c)
		}
	}
	return out
}

// randomPlayer is a computer player that makes a random legal move, seeded: cheap, and it
// reaches every kind of position a test may need.
type randomPlayer struct {
	mu  sync.Mutex
	rng *rand.Rand
}

func (p *randomPlayer) Decide(_ context.Context, v core.View) core.Move {
	p.mu.Lock()
	defer p.mu.Unlock()
	if v.Phase == core.PhaseTrump {
		return core.NameTrump(v.Seat, core.Suits[p.rng.IntN(4)])
	}
	cards := v.Legal.Cards()
	return core.Play(v.Seat, cards[p.rng.IntN(len(cards))])
}

// RandomRobots makes random players for every level (a table.Config's Robots), each seeded.
func RandomRobots(_ string, seed uint64) table.Decider {
	return &randomPlayer{rng: rand.New(rand.NewPCG(seed, 99))}
}

// Clock is a clock a test moves by hand (a table.Config's Now is its Now), safe to read from
// the service's goroutines.
type Clock struct {
	mu   sync.Mutex
	now  time.Time
	tick time.Duration // how far each reading moves it on
}

// NewClock is a Clock showing t.
func NewClock(t time.Time) *Clock { return &Clock{now: t} }

// NewTicking is a Clock from t that moves on by a millisecond each time it is read, shared by
// copies of the bot: no two matches end at the same millisecond, so the order the league learns
// them in is the order of their ends, as Rebuild takes them.
func NewTicking(t time.Time) *Clock { return &Clock{now: t, tick: time.Millisecond} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(c.tick)
	return c.now
}

// Add moves the clock on by d.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// Traces counts how often each of words appears anywhere in the file at path — a database whose
// freed pages, too, must not show a forgotten person — and gives the words it found.
func Traces(tb testing.TB, path string, words ...string) map[string]int {
	tb.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	found := map[string]int{}
	for _, w := range words {
		if n := bytes.Count(raw, []byte(w)); n > 0 {
			found[w] = n
		}
	}
	return found
}

package pace_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/options"
	"github.com/kontermatt/kontermatt/core/table/pace"
)

var (
	t0     = time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	normal = pace.Defaults[options.PaceNormal] // Card 600 ms, Trick 2 s, Game 4 s, Wait 8 s
)

// clock is a clock the test sets.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

func TestWait(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	cases := []struct {
		name     string
		reports  bool          // the platform's adapter said it reports (Pacer.Report)
		noted    []uint64      // versions an adapter reported shown, at t0+shownAt
		shownAt  time.Duration //
		version  uint64        // the version published at t0 (0: none)
		many     int           // how many public messages were published with it
		at       time.Duration // when the computer asks, after t0
		moment   pace.Moment
		want     time.Duration
		platform string
	}{
		{name: "a place that never reports", version: 5, many: 1, at: ms(10), moment: pace.Trick, want: 0},
		{name: "nothing published yet", reports: true, at: ms(10), moment: pace.Card, want: 0},
		{name: "not shown yet: until the wait's end", reports: true, version: 5, many: 1, at: ms(1000), moment: pace.Card, want: ms(7000)},
		{name: "not shown yet, three messages: three waits", reports: true, version: 5, many: 3, at: ms(1000), moment: pace.Card, want: ms(23000)},
		{name: "never shown: the table goes on after the wait, the moment in view", reports: true, version: 5, many: 1, at: ms(8100), moment: pace.Trick, want: ms(1900)},
		{name: "long after", reports: true, version: 5, many: 1, at: ms(60000), moment: pace.Deal, want: 0},
		{name: "shown: a card a moment after", reports: true, version: 5, many: 1, noted: []uint64{5}, shownAt: ms(300), at: ms(500), moment: pace.Card, want: ms(400)},
		{name: "shown: a finished trick with its winner", reports: true, version: 5, many: 1, noted: []uint64{5}, shownAt: ms(300), at: ms(500), moment: pace.Trick, want: ms(1800)},
		{name: "shown: a game's result and the deal", reports: true, version: 5, many: 1, noted: []uint64{5}, shownAt: ms(300), at: ms(500), moment: pace.Deal, want: ms(3800)},
		{name: "shown a newer one", reports: true, version: 5, many: 1, noted: []uint64{6}, at: ms(500), moment: pace.Card, want: ms(100)},
		{name: "shown an older one only", reports: true, version: 5, many: 1, noted: []uint64{4}, at: ms(500), moment: pace.Card, want: ms(7500)},
		{name: "a report makes the place reported, whatever the platform said", version: 5, many: 1, noted: []uint64{4}, at: ms(500), moment: pace.Card, want: ms(7500)},
		{name: "no game", reports: true, version: 5, many: 1, noted: []uint64{5}, at: ms(500), moment: pace.None, want: 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clk := &clock{now: t0}
			pc := &pace.Pacer{Now: clk.Now}
			if tc.reports {
				pc.Report("telegram")
			}
			var pl pace.Place
			for range tc.many {
				pc.Published(&pl, tc.version)
			}
			for _, v := range tc.noted {
				pl.Note(v, t0.Add(tc.shownAt))
			}
			clk.now = t0.Add(tc.at)
			if got := pc.Wait(&pl, "telegram", normal, tc.moment); got != tc.want {
				t.Errorf("waits %v, want %v", got, tc.want)
			}
		})
	}
}

func TestPublished(t *testing.T) {
	clk := &clock{now: t0}
	pc := &pace.Pacer{Now: clk.Now}
	var pl pace.Place
	for _, v := range []uint64{3, 3, 2, 3} { // an older version counts for nothing
		pc.Published(&pl, v)
	}
	if _, published := pl.Reported(); published != 3 || pl.WaitLimit(normal) != 3*normal.Wait {
		t.Fatalf("published %d, limit %v", published, pl.WaitLimit(normal))
	}
	clk.now = t0.Add(time.Second)
	pc.Published(&pl, 4) // a newer one: one message, published now
	if got := pc.Wait(&pl, "web", normal, pace.Card); pl.WaitLimit(normal) != normal.Wait || got != 0 {
		// not gated: neither the place nor its platform's adapter reported
		t.Fatalf("limit %v, wait %v", pl.WaitLimit(normal), got)
	}
	pl.Note(3, t0) // now it has
	clk.now = t0.Add(2 * time.Second)
	if got := pc.Wait(&pl, "web", normal, pace.Card); got != 7*time.Second {
		t.Errorf("version 4 not shown: waits %v, want 7s", got)
	}
}

func TestNote(t *testing.T) {
	var pl pace.Place
	if reports, _ := pl.Reported(); reports {
		t.Fatal("a place nobody reported about reports")
	}
	for _, c := range []struct {
		seq  uint64
		want bool
	}{{3, true}, {3, false}, {2, false}, {5, true}} {
		if got := pl.Note(c.seq, t0.Add(time.Duration(c.seq)*time.Second)); got != c.want {
			t.Errorf("note %d: %v, want %v", c.seq, got, c.want)
		}
	}
	if seq, at := pl.Last(); seq != 5 || !at.Equal(t0.Add(5*time.Second)) {
		t.Errorf("last %d at %v", seq, at)
	}
	if !pl.Wake() || pl.Wake() {
		t.Fatal("two woke to act on the reports")
	}
	pl.Woken()
	if !pl.Wake() {
		t.Error("nobody woke after the one who did")
	}
}

func TestOf(t *testing.T) {
	mine := pace.Pace{Card: time.Millisecond, Wait: time.Second}
	pc := &pace.Pacer{Paces: map[options.PacePreset]pace.Pace{options.PaceFast: mine}}
	for preset, want := range map[options.PacePreset]pace.Pace{options.PaceFast: mine,
		options.PaceRelaxed: pace.Defaults[options.PaceRelaxed], "": normal, "sloth": normal} {
		if got := pc.Of(preset); got != want {
			t.Errorf("%q: %+v, want %+v", preset, got, want)
		}
	}
}

// TestAt: a game's moments as it is played, and what each keeps in view.
func TestAt(t *testing.T) {
	m, err := core.NewMatch(core.DefaultRules(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := pace.At(m, nil); got != pace.None || got.InView(normal) != 0 || got.Boundary() {
		t.Fatalf("no game: %v", got)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var seen []pace.Moment
	for game := 1; game <= 2; game++ {
		g, err := m.Deal(core.DealHands(rng, m.NextDealer()))
		if err != nil {
			t.Fatal(err)
		}
		want := pace.Card // the first deal follows no result
		if game > 1 {
			want = pace.Deal
		}
		if got := pace.At(m, g); got != want {
			t.Fatalf("game %d dealt: %v, want %v", game, got, want)
		}
		for g.Phase() != core.PhaseOver {
			s := g.ToMove()
			mv := core.NameTrump(s, core.Hearts)
			if g.Phase() != core.PhaseTrump {
				mv = core.Play(s, g.LegalCards(s).Cards()[0])
			}
			if err := g.Apply(mv); err != nil {
				t.Fatal(err)
			}
			if g.Phase() == core.PhaseOver {
				break
			}
			mo := pace.At(m, g)
			seen = append(seen, mo)
			finished := g.Phase() == core.PhasePlay && g.TricksDone() > 0 && g.CurrentTrick().N == 0
			if finished != (mo == pace.Trick) {
				t.Fatalf("after %v: %v", mv, mo)
			}
		}
	}
	tricks := 0
	for _, mo := range seen {
		if mo == pace.Trick {
			tricks++
		}
	}
	if tricks != 10 { // five of each game's six tricks are followed by another
		t.Errorf("%d finished tricks seen, want 10", tricks)
	}
	for mo, want := range map[pace.Moment][3]time.Duration{
		pace.Card:  {normal.Card, 0, 0},
		pace.Trick: {normal.Trick, normal.TrickShown, 1},
		pace.Deal:  {normal.Game, 0, 1},
	} {
		if mo.InView(normal) != want[0] || mo.HoldFor(normal) != want[1] || mo.Boundary() != (want[2] == 1) {
			t.Errorf("%v: in view %v, held %v, boundary %v", mo, mo.InView(normal), mo.HoldFor(normal), mo.Boundary())
		}
	}
}

package discord

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/core/options"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// A whole match by HTTP against a fake Discord that takes each HTTP answer a moment after the
// response ends and answers Unknown Webhook to the interaction's webhook calls meanwhile
// (takeLater): three players play from their DMs, whose hands a move's answer updates in place,
// and one, whose DMs are closed, from the ephemeral hand the adapter edits through the
// interaction's webhook. No answer may be lost for it (no webhook call given up, no hand
// forgotten), no update taken after a newer edit of its hand (a stale hand), and the match must
// end: a hand left stale would stall it. With two computers at the table, a hand is edited again
// the moment a computer plays after the move its answer shows.
func TestHTTPAnswersTakenLate(t *testing.T) {
	t.Run("four people", func(t *testing.T) {
		testHTTPAnswersTakenLate(t, []seatPlayer{{u: alice}, {u: bob}, {u: carla}, {u: dan, noDM: true}})
	})
	t.Run("two people, two computers", func(t *testing.T) {
		testHTTPAnswersTakenLate(t, []seatPlayer{{u: alice}, {u: dan, noDM: true}})
	})
	// Discord slow to take answers, computers with no pace of their own: a hand a move's answer
	// updated is edited again (a computer played) well before the answer is taken.
	t.Run("answers taken after 150 ms", func(t *testing.T) {
		testHTTPAnswersTakenLate(t, []seatPlayer{{u: alice}, {u: dan, noDM: true}}, harnessOpt{
			table: func(c *table.Config) {
				c.Paces = map[options.PacePreset]table.Pace{options.PaceNormal: {Wait: time.Second}}
			},
			fake: func(f *fakeDiscord) { f.takeDelay = 150 * time.Millisecond }})
	})
}

func testHTTPAnswersTakenLate(t *testing.T, players []seatPlayer, opts ...harnessOpt) {
	f := newFakeDiscordVia(t, viaHTTP)
	f.blocked[dan.ID] = true
	for _, o := range opts {
		if o.fake != nil {
			o.fake(f)
		}
	}
	store := mem.New()
	h := startHarness(t, f, store, store, opts...)
	var others []fakeUser
	for _, p := range players[1:] {
		others = append(others, p.u)
	}
	openTable(t, f, alice, others, opt("stripes", 4, 2), opt("timer", 3, "none"))
	n := playMatch(t, f, players, rand.New(rand.NewPCG(31, 1)))
	if err := h.a.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	early, stale, updates := f.early404, f.staleUpdates, f.updates
	f.mu.Unlock()
	lost := 0
	for _, line := range strings.Split(h.logs.String(), "\n") {
		// A webhook call that still met Unknown Webhook after its retries, logged where it is
		// given up: an answer, a notice or a hand edit lost.
		if strings.Contains(line, "10015") {
			lost++
			t.Errorf("given up: %s", line)
		}
	}
	eph := f.ephemerals(dan.ID)
	edited := 0
	for _, m := range eph {
		edited += m.Edits
	}
	t.Logf("%d moves, %d answered by updating the hand; %d webhook calls met Unknown Webhook before their answer was taken; "+
		"%d lost, %d stale updates; Dan's ephemeral hands edited %d times", n, updates, early, lost, stale, edited)
	if stale > 0 {
		t.Errorf("%d updates were taken after a newer edit of their hand", stale)
	}
	if updates == 0 || edited == 0 {
		t.Errorf("the match did not exercise both paths: %d updates in place, %d ephemeral edits", updates, edited)
	}
}

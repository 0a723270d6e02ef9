package discord

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/core/options"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/storage/etcdstore/etcdtest"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// The human pace on Discord (core/table/pace.go): the adapter says when the channel shows a
// table version (Service.Shown), so that computer players wait for it, and keeps a finished
// trick in view as the table message asks (Message.HoldFor).

// scaledPaces are the presets' times multiplied by scale, so a test can play a whole match at a
// human pace in a fraction of the time.
func scaledPaces(scale float64) map[options.PacePreset]table.Pace {
	out := map[options.PacePreset]table.Pace{}
	for k, p := range table.DefaultPaces {
		s := func(d time.Duration) time.Duration { return time.Duration(float64(d) * scale) }
		out[k] = table.Pace{Card: s(p.Card), Trick: s(p.Trick), Game: s(p.Game), TrickShown: s(p.TrickShown), Wait: s(p.Wait)}
	}
	return out
}

// pacedResult is what a paced match showed.
type pacedResult struct {
	cards int             // cards people played
	lags  []time.Duration // from each person's card to the channel showing it
	// tricks seen complete, and the shortest time one was in view before something replaced
	// it: any trick, and one a computer played on from.
	tricks, tricksRobotNext int
	minInView, minRobotNext time.Duration
}

// playPaced plays a match of Alice and Bob, who think thinkMin to thinkMax a card, and two
// computers, at the normal pace times scale, and reads from the channel's history how long each
// finished trick was in view and how long each person's card took to show.
func playPaced(t testing.TB, f *fakeDiscord, scale float64, thinkMin, thinkMax time.Duration, stripes int) pacedResult {
	store := mem.New()
	h := startHarness(t, f, store, store, harnessOpt{table: func(c *table.Config) { c.Paces = scaledPaces(scale) }})
	return playPacedOn(t, f, []*harness{h}, thinkMin, thinkMax, stripes)
}

// playPacedOn is playPaced on copies of the bot already running (hs, sharing one store).
func playPacedOn(t testing.TB, f *fakeDiscord, hs []*harness, thinkMin, thinkMax time.Duration, stripes int) pacedResult {
	openTable(t, f, alice, []fakeUser{bob}, opt("stripes", 4, stripes), opt("timer", 3, "none"))
	rng := rand.New(rand.NewPCG(17, 4))
	players := []seatPlayer{{u: alice}, {u: bob}}
	var res pacedResult
	var pressed []time.Time
	var lastSeq uint64
	for {
		var who seatPlayer
		var view fakeMessage
		over := false
		f.waitForOr("a person's turn or the end of the match", func() bool {
			if matchOver(f.channelLocked(guildChannel)) {
				over = true
				return true
			}
			for _, p := range players {
				if m, ok := f.handViewLocked(p); ok {
					if mv := moves(m); len(mv) > 0 && actionOf(mv[0]).Seq > lastSeq {
						who, view = p, m
						return true
					}
				}
			}
			return false
		}, func() string {
			var b strings.Builder
			fmt.Fprintf(&b, "\nlast seq %d", lastSeq)
			for _, p := range players {
				m, ok := f.handViewLocked(p)
				fmt.Fprintf(&b, "\n%s (view %v, %d edits): %q", p.u.Name, ok, m.Edits, m.Content)
			}
			msgs := f.channelLocked(guildChannel)
			for _, m := range msgs[max(len(msgs)-3, 0):] {
				fmt.Fprintf(&b, "\nchannel: %q", m.Content)
			}
			return b.String()
		})
		if over {
			break
		}
		time.Sleep(thinkMin + rand.N(thinkMax-thinkMin+1))
		mv := moves(view)
		b := mv[rng.IntN(len(mv))]
		at := time.Now()
		if r := f.press(who.u, view, b.CustomID); !applied(r) {
			t.Fatalf("%s pressing %s: %+v", who.u.Name, b.Label, r)
		}
		lastSeq = actionOf(b).Seq
		if actionOf(b).Verb == api.VerbPlay {
			pressed = append(pressed, at)
		}
	}
	for _, h := range hs {
		if err := h.a.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	res.cards = len(pressed)
	// Every change the channel showed, in the order Discord took them.
	var changes []time.Time
	for _, m := range f.channel(guildChannel) {
		for _, v := range m.History {
			changes = append(changes, v.At)
		}
		res.readTricks(m)
	}
	for _, at := range pressed {
		// The first change after a card is that card: the computers wait for the channel, so
		// nothing else is on its way then.
		first := time.Duration(-1)
		for _, c := range changes {
			if c.After(at) && (first < 0 || c.Sub(at) < first) {
				first = c.Sub(at)
			}
		}
		if first < 0 {
			t.Errorf("a card played at %v never showed", at)
			continue
		}
		res.lags = append(res.lags, first)
	}
	return res
}

// readTricks reads how long each finished trick was in view in a table message's history: from
// the version that first showed it complete, with its winner ("Last trick: … → Bob wins 12
// points"), to the first that did not.
func (res *pacedResult) readTricks(m fakeMessage) {
	lastTrick := func(content string) string {
		for _, line := range strings.Split(content, "\n") {
			if strings.Contains(line, "Last trick") && strings.Contains(line, "→") {
				return line
			}
		}
		return ""
	}
	for i := 0; i < len(m.History); i++ {
		tr := lastTrick(m.History[i].Content)
		if tr == "" {
			continue
		}
		j := i + 1
		for j < len(m.History) && lastTrick(m.History[j].Content) == tr {
			j++ // a call made meanwhile: the trick is still in view
		}
		if j == len(m.History) {
			return // the game's last trick stays
		}
		inView := m.History[j].At.Sub(m.History[i].At)
		res.tricks++
		if res.tricks == 1 || inView < res.minInView {
			res.minInView = inView
		}
		// Who played the card that replaced it: the current trick's first card.
		if strings.Contains(m.History[j].Content, "Trick: Computer") {
			res.tricksRobotNext++
			if res.tricksRobotNext == 1 || inView < res.minRobotNext {
				res.minRobotNext = inView
			}
		}
		i = j - 1
	}
}

// TestFinishedTricksStayInView plays a match at a tenth of the normal pace, with people who
// think 0.1–0.3 s a card (a tenth of 1–3 s): each finished trick stays in the channel, with its
// winner, at least TrickShown (a tenth of 1 s), and Trick (a tenth of 2 s) when a computer plays
// next; a card reaches the channel within 1 s at the 95th percentile. BenchmarkPacedMatch
// measures the same at the real pace.
func TestFinishedTricksStayInView(t *testing.T) {
	const scale = 0.1
	eachMode(t, func(t *testing.T, f *fakeDiscord) {
		res := playPaced(t, f, scale, 100*time.Millisecond, 300*time.Millisecond, 2)
		p := scaledPaces(scale)[options.PaceNormal]
		t.Logf("%d cards by people: lag p50 %v, p95 %v, max %v; %d finished tricks replaced, the shortest in view %v; "+
			"%d replaced by a computer's card, the shortest %v", res.cards, percentile(res.lags, .5), percentile(res.lags, .95),
			percentile(res.lags, 1), res.tricks, res.minInView, res.tricksRobotNext, res.minRobotNext)
		if res.tricks == 0 || res.tricksRobotNext == 0 || res.cards == 0 {
			t.Fatalf("the match did not show what is checked: %+v", res)
		}
		if res.minInView < p.TrickShown {
			t.Errorf("a finished trick was in view %v, want ≥ %v", res.minInView, p.TrickShown)
		}
		if res.minRobotNext < p.Trick {
			t.Errorf("a finished trick was replaced by a computer's card after %v, want ≥ %v", res.minRobotNext, p.Trick)
		}
		if p95 := percentile(res.lags, .95); p95 > time.Second {
			t.Errorf("a card reached the channel in %v at the 95th percentile, want ≤ 1 s", p95)
		}
	})
}

// BenchmarkPacedMatchTwoCopies is BenchmarkPacedMatch on two copies of the bot on a 3-member etcd
// cluster, the posts going to either copy in turn, one copy owning the channel's place (it alone
// tells it). Run: go test -run '^$' -bench PacedMatchTwoCopies -benchtime 1x ./adapters/discord/
func BenchmarkPacedMatchTwoCopies(b *testing.B) {
	for range b.N {
		f := newFakeDiscordVia(b, viaHTTP)
		c := etcdtest.Start(b, etcdtest.Options{})
		cps := []*clusterCopy{startOwnedCopy(b, "a", f, c, 1), startOwnedCopy(b, "b", f, c, 1)}
		spread(b, cps...)
		res := playPacedOn(b, f, []*harness{cps[0].h, cps[1].h}, time.Second, 3*time.Second, 2)
		reportPaced(b, res)
	}
}

// reportPaced reports a paced match's numbers as the benchmark's metrics.
func reportPaced(b *testing.B, res pacedResult) {
	b.ReportMetric(float64(percentile(res.lags, .5).Milliseconds()), "lag-p50-ms")
	b.ReportMetric(float64(percentile(res.lags, .95).Milliseconds()), "lag-p95-ms")
	b.ReportMetric(float64(percentile(res.lags, 1).Milliseconds()), "lag-max-ms")
	b.ReportMetric(float64(res.minInView.Milliseconds()), "trick-min-ms")
	b.ReportMetric(float64(res.minRobotNext.Milliseconds()), "trick-robot-next-min-ms")
	b.ReportMetric(float64(res.tricks), "tricks")
	b.ReportMetric(float64(res.cards), "cards")
}

// BenchmarkPacedMatch plays one match (two people thinking 1–3 s a card, two computers) at the
// real normal pace per iteration, by HTTP, and reports the lag from a person's card to the channel
// (p50, p95, max) and the shortest time a finished trick was in view (any; when a computer played
// next). Run: go test -run '^$' -bench PacedMatch -benchtime 1x ./adapters/discord/
func BenchmarkPacedMatch(b *testing.B) {
	for range b.N {
		reportPaced(b, playPaced(b, newFakeDiscordVia(b, viaHTTP), 1, time.Second, 3*time.Second, 2))
	}
}

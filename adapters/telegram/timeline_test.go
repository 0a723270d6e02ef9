package telegram

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table"
)

// The public timeline of a place survives the process that tells it: what a group must be shown
// follows from the stored state, what it was shown from the message records, so that a process
// killed right after a game's last card, or stopped with messages still waiting for the group's
// budget, leaves nothing untold and nothing told twice.

var (
	liveTitle   = regexp.MustCompile(`^🃏 Game (\d+) ·`)
	gameResult  = regexp.MustCompile(`^🏁 Game (\d+):`)
	handTitle   = regexp.MustCompile(`Your hand · game (\d+)`)
	matchWinner = "🏆"
	toPlay      = strings.SplitN(i18n.T("en", "live.turn", "%s"), "%s", 2)[0] // "▶ "
)

// checkTimeline checks what a group and the humans' private chats show after a match (or part of
// one) of games games: each game's table message posted once and, once its game is over, left
// with its result and without buttons; each game's result posted once, after its table message
// and before the next game's; the match's winner once, after the last result (when over); one
// hand message per game and human.
func checkTimeline(t *testing.T, f *fakeAPI, chat int64, games int, matchOver bool, humans []tgUser) {
	t.Helper()
	lives, results := map[int][]fmsg{}, map[int][]fmsg{}
	var winners []fmsg
	for _, m := range f.messages(chat) {
		if g := liveTitle.FindStringSubmatch(m.Text); g != nil {
			n, _ := strconv.Atoi(g[1])
			lives[n] = append(lives[n], m)
		}
		if g := gameResult.FindStringSubmatch(m.Text); g != nil {
			n, _ := strconv.Atoi(g[1])
			results[n] = append(results[n], m)
		}
		if strings.HasPrefix(m.Text, matchWinner) {
			winners = append(winners, m)
		}
	}
	for n := 1; n <= games; n++ {
		if len(lives[n]) != 1 {
			t.Errorf("game %d's table message was posted %d times", n, len(lives[n]))
			continue
		}
		live := lives[n][0]
		over := n < games || matchOver
		if !over {
			continue
		}
		if len(results[n]) != 1 {
			t.Errorf("game %d's result was posted %d times", n, len(results[n]))
			continue
		}
		if res := results[n][0]; res.ID < live.ID {
			t.Errorf("game %d's result (message %d) came before its table message (%d)", n, res.ID, live.ID)
		}
		if strings.Contains(live.Text, toPlay) {
			t.Errorf("game %d is over but its table message still says who is to play:\n%s", n, live.Text)
		}
		if n < games {
			if len(live.buttons()) > 0 {
				t.Errorf("game %d is over but its table message keeps its buttons %v", n, live.buttons())
			}
			if next := lives[n+1]; len(next) > 0 && next[0].ID < results[n][0].ID {
				t.Errorf("game %d's table message (%d) came before game %d's result (%d)", n+1, next[0].ID, n, results[n][0].ID)
			}
		}
	}
	if matchOver {
		if len(winners) != 1 {
			t.Errorf("the match's winner was posted %d times", len(winners))
		} else if last := results[games]; len(last) > 0 && winners[0].ID < last[0].ID {
			t.Errorf("the match's winner came before the last game's result")
		}
	}
	for _, u := range humans {
		hands := map[int]int{}
		f.mu.Lock()
		if c := f.chats[u.ID]; c != nil {
			for _, m := range c.msgs { // deleted ones too: a hand posted twice and deleted counts
				if g := handTitle.FindStringSubmatch(m.Text); g != nil && m.From == 0 {
					n, _ := strconv.Atoi(g[1])
					hands[n]++
				}
			}
		}
		f.mu.Unlock()
		for n := 1; n <= games; n++ {
			if hands[n] > 1 {
				t.Errorf("%s got game %d's hand %d times", u.First, n, hands[n])
			}
		}
	}
}

// gamesIn counts the games the group's table messages name.
func gamesIn(f *fakeAPI, chat int64) int {
	n := 0
	for _, m := range f.messages(chat) {
		if g := liveTitle.FindStringSubmatch(m.Text); g != nil {
			k, _ := strconv.Atoi(g[1])
			n = max(n, k)
		}
	}
	return n
}

// playSingly is playUntil with one move at a time, done checked after each: so that a test can
// stop the play at an exact card.
func (d *driver) playSingly(humans []tgUser, limit time.Duration, done func() bool) {
	d.t.Helper()
	deadline := time.Now().Add(limit)
	for synctest.Wait(); !done(); synctest.Wait() {
		if time.Now().After(deadline) {
			d.t.Fatalf("not done after %v of play (%d moves)", limit, d.moves)
		}
		acted := false
		for _, h := range humans {
			if d.step([]tgUser{h}) {
				acted = true
				break
			}
		}
		if !acted {
			time.Sleep(250 * time.Millisecond)
		}
	}
}

// TestKilledAfterAGamesLastCard kills the bot (as kill -9 does) right after each game's last card
// is stored, before any message of it reaches Telegram, and starts it again on the same store:
// every game's result, its table message's last version and the match's winner reach the group
// exactly once, in order, and no hand is posted twice.
func TestKilledAfterAGamesLastCard(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		humans := []tgUser{alice, bob, carla, dan}
		f, store, logs, e := startedEnv(t, humans...)
		seatAll(t, f, "timer=none stripes=3", humans...)
		tableID := tableOf(t, f)
		d := newDriver(t, f, 11)
		kills := 0
		for !over(f) {
			// Play until one card is left in the game, with everything shown.
			d.playSingly(humans, time.Hour, func() bool {
				_, held := e.svc.HeldCards(tableID)
				st, _ := e.svc.Status(tableID)
				return held.Len() == 1 || st == table.StatusOver
			})
			if st, _ := e.svc.Status(tableID); st == table.StatusOver {
				break
			}
			settle(time.Minute)
			game, _ := e.svc.HeldCards(tableID)
			e.net.mute.Store(true)
			d.playSingly(humans, time.Hour, func() bool {
				g, _ := e.svc.HeldCards(tableID)
				st, _ := e.svc.Status(tableID)
				return g > game || st == table.StatusOver
			})
			e.crash()
			kills++
			e = startEnv(t, f, store, logs)
			settle(2 * time.Minute)
		}
		settle(2 * time.Minute)
		games := gamesIn(f, group)
		t.Logf("%d games, the bot killed after the last card of %d of them", games, kills)
		if kills < 2 {
			t.Fatalf("only %d kills: the test needs a match of several games", kills)
		}
		checkTimeline(t, f, group, games, true, humans)
		e.close()
		checkClean(t, f, logs)
	})
}

// TestStoppedMidMatchLosesNothing stops the bot as SIGTERM does (the documented order: no more
// updates, the service closed, the outbox given its few seconds) again and again while four quick
// players keep the group's budget spent, so that group messages still wait when it stops; the
// next start tells them: every result and the match's winner once, in order.
func TestStoppedMidMatchLosesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		humans := []tgUser{alice, bob, carla, dan}
		f, store, logs, e := startedEnv(t, humans...)
		seatAll(t, f, "timer=fast stripes=4", humans...)
		d := newDriver(t, f, 12)
		stops, waiting := 0, 0
		for !over(f) {
			start := time.Now()
			d.playUntil(humans, time.Hour, func() bool { return time.Since(start) > 25*time.Second || over(f) })
			items, _ := e.a.out.Queued()
			waiting += items
			e.close()
			stops++
			e = startEnv(t, f, store, logs)
		}
		settle(2 * time.Minute)
		games := gamesIn(f, group)
		t.Logf("%d games, %d stops with %d messages waiting at them", games, stops, waiting)
		if waiting == 0 {
			t.Fatal("no message waited at any stop: the test needs a busy group")
		}
		checkTimeline(t, f, group, games, true, humans)
		e.close()
		checkClean(t, f, logs)
	})
}

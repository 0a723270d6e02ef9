package telegram

import (
	"context"
	"math/rand/v2"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kontermatt/kontermatt/adapters/internal/chat"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage/mem"
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
func checkTimeline(t testing.TB, f *fakeAPI, chat int64, games int, matchOver bool, humans []tgUser) {
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

// playThinking is playUntil with players who think: each human move comes 1 to 3 s (seeded)
// after the hand showed its player's turn, as people play.
func (d *driver) playThinking(humans []tgUser, limit time.Duration, seed uint64, done func() bool) {
	d.t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	deadline := time.Now().Add(limit)
	for idle(); !done(); idle() {
		if time.Now().After(deadline) {
			d.t.Fatalf("not done after %v of play (%d moves)", limit, d.moves)
		}
		var turn []tgUser
		for _, h := range humans {
			if m, ok := handMessage(d.f, h.ID); ok && d.last[h.ID] != [2]int{m.ID, m.Rev} &&
				(strings.Contains(m.Text, yourTurn) || strings.Contains(m.Text, chooseTrump)) {
				turn = append(turn, h)
			}
		}
		if len(turn) == 0 {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		time.Sleep(time.Second + time.Duration(rng.Int64N(int64(2*time.Second))))
		d.step(turn[:1])
	}
}

// TestKilledAfterAGamesLastCard kills the bot (as kill -9 does) right after each game's last card
// is stored, before any message of it reaches Telegram, and starts it again on the same store:
// every game's result, its table message's last version and the match's winner reach the group
// exactly once, in order, and no hand is posted twice. Polling, and behind a webhook: there the
// killed process's webhook no longer answers, Telegram posts the updates again until the new
// process behind the same URL answers them (Bot API, setWebhook: "In case of an unsuccessful
// request, we will give up after a reasonable amount of attempts").
func TestKilledAfterAGamesLastCard(t *testing.T) {
	for _, mode := range []string{"polling", "webhook"} {
		t.Run(mode, func(t *testing.T) { synctest.Test(t, func(t *testing.T) { killedAfterEachGame(t, mode) }) })
	}
}

// restartable gives a bot's fake Telegram (with humans able to get private messages) and logs,
// and start, which starts the bot (again) on them and one store: polling, or behind a webhook whose
// reverse proxy passes Telegram's posts to the process listening now (hookProxy).
func restartable(t *testing.T, mode string, humans ...tgUser) (*fakeAPI, *tabletest.Buffer, func() *env) {
	f, store, logs := newFake(testToken), mem.New(), &tabletest.Buffer{}
	for _, u := range humans {
		f.setStarted(u.ID)
	}
	if mode == "polling" {
		return f, logs, func() *env { return startEnv(t, f, store, logs) }
	}
	hook := &hookProxy{restarts: true}
	f.hookClient = hook.client()
	t.Cleanup(f.stopWebhook) // after the bot stopped
	return f, logs, func() *env {
		ln := newMemListener()
		hook.to.Store(ln)
		return startEnv(t, f, store, logs, withWebhook(ln))
	}
}

// checkMode checks that a test's bot received its updates as mode says: behind a webhook it
// never polls.
func checkMode(t *testing.T, f *fakeAPI, mode string) {
	if polls, _ := countCalls(f.Calls(), "getUpdates", 0); (mode == "webhook") != (polls == 0) {
		t.Errorf("%s: %d polls", mode, polls)
	}
}

func killedAfterEachGame(t *testing.T, mode string) {
	humans := []tgUser{alice, bob, carla, dan}
	f, logs, start := restartable(t, mode, humans...)
	e := start()
	seatAll(t, f, "timer=none stripes=3", humans...)
	tableID := tableOf(t, f)
	d := newDriver(t, f, 11)
	kills := 0
	for !over(f) {
		// Play until one card is left in the game, with everything shown.
		d.playSingly(humans, time.Hour, func() bool {
			_, held := e.svc.HeldCards(tableID)
			st, _ := e.svc.Status(tableID)
			return held.Len() == 1 || st == api.StatusOver
		})
		if st, _ := e.svc.Status(tableID); st == api.StatusOver {
			break
		}
		settle(time.Minute)
		game, _ := e.svc.HeldCards(tableID)
		e.net.mute.Store(true)
		d.playSingly(humans, time.Hour, func() bool {
			g, _ := e.svc.HeldCards(tableID)
			st, _ := e.svc.Status(tableID)
			return g > game || st == api.StatusOver
		})
		e.crash()
		kills++
		e = start()
		settle(2 * time.Minute)
	}
	settle(2 * time.Minute)
	games := gamesIn(f, group)
	t.Logf("%d games, the bot killed after the last card of %d of them", games, kills)
	if kills < 2 {
		t.Fatalf("only %d kills: the test needs a match of several games", kills)
	}
	checkTimeline(t, f, group, games, true, humans)
	checkMode(t, f, mode)
	e.close()
	checkClean(t, f, logs)
}

// TestStoppedMidMatchLosesNothing stops the bot as SIGTERM does (the documented order: no more
// updates, the service closed, the outbox given its few seconds) again and again while four quick
// players keep the group's budget spent, so that group messages still wait when it stops; the
// next start tells them: every result and the match's winner once, in order. Polling, and behind
// a webhook (restartable).
func TestStoppedMidMatchLosesNothing(t *testing.T) {
	for _, mode := range []string{"polling", "webhook"} {
		t.Run(mode, func(t *testing.T) { synctest.Test(t, func(t *testing.T) { stoppedAgainAndAgain(t, mode) }) })
	}
}

func stoppedAgainAndAgain(t *testing.T, mode string) {
	humans := []tgUser{alice, bob, carla, dan}
	f, logs, startBot := restartable(t, mode, humans...)
	e := startBot()
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
		e = startBot()
	}
	settle(2 * time.Minute)
	games := gamesIn(f, group)
	t.Logf("%d games, %d stops with %d messages waiting at them", games, stops, waiting)
	if waiting == 0 {
		t.Fatal("no message waited at any stop: the test needs a busy group")
	}
	checkTimeline(t, f, group, games, true, humans)
	checkMode(t, f, mode)
	e.close()
	checkClean(t, f, logs)
}

// ownedCopies starts two copies of the bot on one store and one KV, as on etcd. Copy 0 takes the
// poller lease, so the players' presses are its to apply; copy 1 starts first and takes the
// leases of the places' partitions, so the computer players move there and it owns the place
// (Service.Owns as the adapter's chat.Owner: the copy that fires a place's timers tells its story). Both copies commit moves
// of one table and hear the other's through the store's watch.
func ownedCopies(t testing.TB, f *fakeAPI, store *mem.Store, logs *tabletest.Buffer, sent *[2]atomic.Int64) []*env {
	t.Helper()
	pollers, timers := &table.LocalLeases{}, &table.LocalLeases{}
	copies, runs := make([]*env, 2), make([]context.Context, 2)
	for _, i := range []int{1, 0} { // copy 1 first: it takes the timers' lease
		cfg := testConfig(f, store, logs)
		net := f.Transport()
		cfg.Client, cfg.Cluster = &http.Client{Transport: countSends{net, &sent[i]}}, pollers
		cfg.Log = cfg.Log.With("copy", i)
		var svc *table.Service
		cfg.Owner = chat.OwnerFunc(func(p api.Place) bool { return svc.Owns(p) })
		a, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		svc = tabletest.New(table.Config{Store: store, KV: store, Shared: true, Leases: timers,
			Outboxes: map[string]table.Outbox{Platform: a}, Robots: randomRobots, Seed: uint64(7 + i), Log: cfg.Log, Think: time.Second})
		a.Attach(svc)
		ctx, cancel := context.WithCancel(context.Background())
		if err := svc.Resume(ctx); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		e := &env{t: t, f: f, store: store, logs: logs, a: a, svc: svc, net: net, stop: cancel, done: make(chan error, 1)}
		copies[i] = e
		runs[i] = ctx
		t.Cleanup(e.close)
	}
	watchGroups(t, f, copies[1].svc)
	for i, e := range copies { // copy 0 first: it takes the poller lease
		go func() { e.done <- e.a.Run(runs[i]) }()
		synctest.Wait()
	}
	return copies
}

// countSends counts a copy's requests that change what a chat shows (sends).
type countSends struct {
	net *memTransport
	n   *atomic.Int64
}

func (c countSends) RoundTrip(req *http.Request) (*http.Response, error) {
	if slices.Contains(sends, req.URL.Path[strings.LastIndex(req.URL.Path, "/")+1:]) {
		c.n.Add(1)
	}
	return c.net.RoundTrip(req)
}

// TestTwoCopiesTellOnce plays a whole match of two people and two computer players on two copies
// of the bot (ownedCopies: the presses applied at one, the computer players' moves at the other),
// and stops the owner halfway: the other copy takes the place over and tells the rest. Every
// table message, result and hand is posted once, in order, no call to Telegram is refused, and no
// call gets a post of its own.
func TestTwoCopiesTellOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		humans := []tgUser{alice, bob}
		f, store, logs := newFake(testToken), mem.New(), &tabletest.Buffer{}
		for _, u := range humans {
			f.setStarted(u.ID)
		}
		var sent [2]atomic.Int64
		copies := ownedCopies(t, f, store, logs, &sent)
		seatAll(t, f, "timer=fast stripes=5", humans...)
		d := newDriver(t, f, 21)
		d.playThinking(humans, time.Hour, 21, func() bool { return gamesIn(f, group) >= 3 || over(f) })
		// The presses were applied at copy 0, which told none of what followed: the owner did.
		if n := sent[0].Load(); n > 0 || sent[1].Load() == 0 {
			t.Errorf("before the take-over copy 0 sent %d messages and edits, the owner %d", n, sent[1].Load())
		}
		// The owner stops (SIGTERM's order); the poller's copy takes the timers and the place.
		owner := copies[1]
		owner.stop()
		owner.svc.Close()
		owner.a.Close()
		owner.closed = true
		watchGroups(t, f, copies[0].svc)
		d.playThinking(humans, 2*time.Hour, 22, func() bool { return over(f) })
		settle(2 * time.Minute)
		games := gamesIn(f, group)
		checkTimeline(t, f, group, games, true, humans)
		var refused []string
		for _, c := range f.Calls() {
			if c.Err != "" {
				refused = append(refused, c.Method+": "+c.Err)
			}
		}
		if len(refused) > 0 {
			t.Errorf("%d calls refused: %v", len(refused), refused)
		}
		for _, m := range f.messages(group) {
			if strings.HasPrefix(m.Text, "📣") {
				t.Errorf("a call got a post of its own: %q", m.Text)
			}
		}
		t.Logf("%d games on two copies, the owner stopped after game 2 (it sent %d messages and edits, copy 0 then %d); %d group messages, at most %d in a minute",
			games, sent[1].Load(), sent[0].Load(), len(f.messages(group)), f.maxPerMinute(group))
		if n := f.maxPerMinute(group); n > 20 {
			t.Errorf("%d group messages in a minute, limit 20", n)
		}
		copies[0].close()
		checkClean(t, f, logs)
	})
}

// viewer is the table service with an ear for what the group's table message shows (chat.Viewer).
type viewer struct {
	*table.Service
	mu    sync.Mutex
	shown map[string]uint64 // by place key: the highest state reported
	calls int
}

func (v *viewer) Shown(p api.Place, seq uint64) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.calls++
	v.shown[p.Key()] = max(v.shown[p.Key()], seq)
}

// TestTableMessageOutIsReported: each time the group's table message is out, the service hears
// which state it shows (chat.Viewer), up to the last one.
func TestTableMessageOutIsReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		humans := []tgUser{alice, bob}
		f, _, logs, e := startedEnv(t, humans...)
		v := &viewer{Service: e.svc, shown: map[string]uint64{}}
		e.a.Attach(v)
		seatAll(t, f, "timer=none stripes=3", humans...)
		d := newDriver(t, f, 31)
		d.playThinking(humans, time.Hour, 31, func() bool { return d.moves >= 8 })
		settle(time.Minute)
		_, data, ok := lastWith(f, group, api.VerbHand, "") // the table message's "My hand"
		act, err := api.ParseAction(data)
		if !ok || err != nil {
			t.Fatalf("no table message with its buttons: %v", err)
		}
		seq := act.Seq
		v.mu.Lock()
		got, calls := v.shown[placeOf(group, 0).Key()], v.calls
		v.mu.Unlock()
		if calls == 0 || got != seq {
			t.Errorf("the service heard %d times, last of state %d; the group's table message shows %d", calls, got, seq)
		}
		e.close()
		checkClean(t, f, logs)
	})
}

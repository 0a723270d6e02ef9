package telegram

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/coach"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// A distinctive token: no log line and no error may ever hold it or its secret half.
const (
	testToken  = "4242424242:AAE-kmSECRET-do-not-print-Zq81xY"
	testSecret = "AAE-kmSECRET-do-not-print-Zq81xY"
)

const group int64 = -1001234567

var (
	alice  = tgUser{ID: 101, First: "Alice", Lang: "en"}
	bob    = tgUser{ID: 102, First: "Bob", Lang: "en"}
	carla  = tgUser{ID: 103, First: "Carla", Lang: "en"}
	dan    = tgUser{ID: 104, First: "Dan", Lang: "en"}
	olga   = tgUser{ID: 105, First: "Olga", Lang: "en"} // never sits down
	ursula = tgUser{ID: 106, First: "Ursula", Lang: "en"}
)

// randomRobot is a computer player that plays a random legal move, seeded.
type randomRobot struct{ rng *rand.Rand }

func (r *randomRobot) Decide(_ context.Context, v core.View) core.Move {
	if v.Phase == core.PhaseTrump {
		cards := v.Hand.Cards()
		return core.NameTrump(v.Seat, cards[r.rng.IntN(len(cards))].Suit())
	}
	legal := v.Legal.Cards()
	return core.Play(v.Seat, legal[r.rng.IntN(len(legal))])
}

func randomRobots(_ string, seed uint64) table.Decider {
	return &randomRobot{rng: rand.New(rand.NewPCG(seed, 99))}
}

// env is one running bot: adapter and service over a store, talking to the fake.
type env struct {
	t      testing.TB
	f      *fakeAPI
	store  *mem.Store
	logs   *tabletest.Buffer
	a      *Adapter
	svc    *table.Service
	net    *memTransport // this process's network
	stop   context.CancelFunc
	done   chan error
	closed bool
}

func testConfig(f *fakeAPI, store *mem.Store, logs *tabletest.Buffer) Config {
	return Config{Token: testToken, APIURL: "http://api.fake", Client: &http.Client{Transport: f.Transport()}, KV: store,
		Log: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
}

// startEnv starts a bot inside the calling synctest bubble and waits until it polls.
// startedEnv starts a fake Bot API, a store and the bot, with the given users having pressed
// Start (so they can get private messages).
func startedEnv(t testing.TB, humans ...tgUser) (*fakeAPI, *mem.Store, *tabletest.Buffer, *env) {
	t.Helper()
	f, store, logs := newFake(testToken), mem.New(), &tabletest.Buffer{}
	for _, u := range humans {
		f.setStarted(u.ID)
	}
	return f, store, logs, startEnv(t, f, store, logs)
}

func startEnv(t testing.TB, f *fakeAPI, store *mem.Store, logs *tabletest.Buffer, tweak ...func(*Config)) *env {
	t.Helper()
	return startEnvVia(t, f, store, logs, nil, tweak...)
}

// startEnvVia is startEnv with the service's deliveries to the adapter passed through via (when
// set), for a test that notes what the service hands over.
func startEnvVia(t testing.TB, f *fakeAPI, store *mem.Store, logs *tabletest.Buffer, via func(*Adapter) table.Outbox, tweak ...func(*Config)) *env {
	t.Helper()
	cfg := testConfig(f, store, logs)
	for _, fn := range tweak {
		fn(&cfg)
	}
	a, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	var ob table.Outbox = a
	if via != nil {
		ob = via(a)
	}
	svc := tabletest.New(table.Config{Store: store, Outboxes: map[string]table.Outbox{Platform: ob}, Robots: randomRobots,
		Seed: 7, Log: cfg.Log, Think: time.Second, Coach: coach.New(coach.Config{Worlds: 6})})
	a.Attach(svc)
	ctx, cancel := context.WithCancel(context.Background())
	if err := svc.Resume(ctx); err != nil {
		t.Fatalf("Resume: %v", err)
	}
	e := &env{t: t, f: f, store: store, logs: logs, a: a, svc: svc, stop: cancel, done: make(chan error, 1)}
	e.net, _ = cfg.Client.Transport.(*memTransport)
	watchGroups(t, f, svc)
	go func() { e.done <- a.Run(ctx) }()
	t.Cleanup(e.close) // also after a failed test, so the bubble ends cleanly
	synctest.Wait()
	return e
}

// watchGroups checks every text the bot shows in a group, as it arrives, against the cards still
// held at the group's table: no hand, no refusal built from a hand, may reach a group.
func watchGroups(t testing.TB, f *fakeAPI, svc *table.Service) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.onGroup = func(chat int64, thread int, text string) {
		game, held := svc.HeldCards(svc.TableAt(placeOf(chat, thread)))
		if leaks := tabletest.Leaks(text, game, held); len(leaks) > 0 {
			t.Errorf("group %d was shown %v, still held in game %d:\n%s", chat, leaks, game, text)
		}
	}
}

// close shuts the bot down in the documented order (once).
func (e *env) close() {
	e.t.Helper()
	if e.closed {
		return
	}
	e.closed = true
	e.stop()
	if err := <-e.done; err != nil {
		e.t.Errorf("Run: %v", err)
	}
	e.svc.Close()
	e.a.Close()
}

// settle waits until every goroutine of the bubble is idle, then lets d of fake time pass.
func settle(d time.Duration) {
	idle()
	if d > 0 {
		time.Sleep(d)
		idle()
	}
}

// realTime is set by a test that runs outside synctest's bubble (on a real etcd cluster, whose
// members' goroutines cannot join it): the helpers then let a moment of real time pass where
// they would wait for the bubble to be idle. No test of this package runs in parallel.
var realTime bool

// idle waits until every goroutine of the bubble is idle, or in real time a moment.
func idle() {
	if realTime {
		time.Sleep(200 * time.Millisecond)
		return
	}
	synctest.Wait()
}

// checkClean asserts what must hold after any test: no token in the logs, every press answered,
// no hand ever shown in a group, and the group flood limit never hit.
func checkClean(t testing.TB, f *fakeAPI, logs *tabletest.Buffer) {
	t.Helper()
	if s := logs.String(); strings.Contains(s, testToken) || strings.Contains(s, testSecret) {
		t.Errorf("the token appears in the logs")
	}
	if u := f.unanswered(); len(u) > 0 {
		t.Errorf("button presses never answered: %v", u)
	}
	handTitle := strings.SplitN(i18n.T("en", "hand.title", 1), " ", 2)[0] // "🂠"
	for _, c := range f.Calls() {
		if c.Chat < 0 && strings.Contains(c.Params["text"]+c.Params["caption"], handTitle) {
			t.Errorf("a hand was shown in a group: %s %q", c.Method, c.Params["text"])
		}
	}
	if n := f.floodCount(); n > 0 {
		t.Errorf("the adapter hit the group flood limit %d times", n)
	}
	for _, c := range f.Calls() {
		for _, old := range []string{"reply_to_message_id", "disable_web_page_preview", "allow_sending_without_reply"} {
			if _, ok := c.Params[old]; ok {
				t.Errorf("%s with the deprecated %s (Bot API 7.0: reply_parameters, link_preview_options)", c.Method, old)
				break
			}
		}
	}
}

// lastWith gives the newest bot message in a chat with a button of verb, and that button's data.
func lastWith(f *fakeAPI, chat int64, verb api.Verb, arg string) (fmsg, string, bool) {
	ms := f.messages(chat)
	for i := len(ms) - 1; i >= 0; i-- {
		for _, b := range ms[i].buttons() {
			act, err := api.ParseAction(b[1])
			if err == nil && act.Verb == verb && (arg == "" || act.Arg == arg) {
				return ms[i], b[1], true
			}
		}
	}
	return fmsg{}, "", false
}

func mustPress(t testing.TB, f *fakeAPI, u tgUser, chat int64, verb api.Verb, arg string) string {
	t.Helper()
	m, data, ok := lastWith(f, chat, verb, arg)
	if !ok {
		t.Fatalf("no %s button in chat %d", verb, chat)
	}
	return f.press(u, &m, data)
}

// answerOf waits for and gives a press's answer.
func answerOf(t testing.TB, f *fakeAPI, id string) (string, bool) {
	t.Helper()
	idle()
	a, ok := f.answer(id)
	for deadline := time.Now().Add(10 * time.Second); realTime && !ok && time.Now().Before(deadline); {
		idle()
		a, ok = f.answer(id)
	}
	if !ok {
		t.Fatalf("press %s not answered", id)
	}
	return a.Text, a.ShowAlert
}

func tableOf(t testing.TB, f *fakeAPI) string {
	t.Helper()
	return tableIn(t, f, group)
}

func tableIn(t testing.TB, f *fakeAPI, group int64) string {
	t.Helper()
	for _, v := range []api.Verb{api.VerbJoin, api.VerbHand, api.VerbRematch} {
		if _, data, ok := lastWith(f, group, v, ""); ok {
			act, _ := api.ParseAction(data)
			return act.Table
		}
	}
	t.Fatal("no table message in the group")
	return ""
}

func countCalls(calls []call, method string, chat int64) (ok, failed int) {
	for _, c := range calls {
		if c.Method == method && (chat == 0 || c.Chat == chat) {
			if c.Err == "" {
				ok++
			} else {
				failed++
			}
		}
	}
	return
}

// driver plays for human players: it reads each one's hand message, and when it is their turn
// presses a legal card (or a trump), as a person who knows the rules would.
type driver struct {
	t     testing.TB
	f     *fakeAPI
	rng   *rand.Rand
	last  map[int64][2]int // user → the hand message (ID, revision) last acted on
	typed map[int64]bool   // the user types the next move in the group instead of pressing
	// illegal: before their next play the user types a card they may not play in the group; the
	// refusal names their cards, so it must reach them privately, and the group nothing.
	illegal map[int64]bool
	refused int
	moves   int
	// illegalDone counts the illegal cards typed.
	illegalDone int
}

func newDriver(t testing.TB, f *fakeAPI, seed uint64) *driver {
	return &driver{t: t, f: f, rng: rand.New(rand.NewPCG(seed, 5)), last: map[int64][2]int{}, typed: map[int64]bool{},
		illegal: map[int64]bool{}}
}

var (
	yourTurn    = i18n.T("en", "hand.your_turn")
	chooseTrump = i18n.T("en", "hand.choose_trump")
	trumpPrefix = i18n.T("en", "hand.trump", "")
	trickPrefix = i18n.T("en", "live.trick") + ": "
)

// handMessage is the newest message in the user's private chat with card or trump buttons.
func handMessage(f *fakeAPI, user int64) (fmsg, bool) {
	for _, v := range []api.Verb{api.VerbPlay, api.VerbTrump} {
		if m, _, ok := lastWith(f, user, v, ""); ok {
			// the newest of either kind
			if m2, _, ok2 := lastWith(f, user, otherVerb(v), ""); ok2 && m2.ID > m.ID {
				return m2, true
			}
			return m, true
		}
	}
	return fmsg{}, false
}

func otherVerb(v api.Verb) api.Verb {
	if v == api.VerbPlay {
		return api.VerbTrump
	}
	return api.VerbPlay
}

// choose picks a move from a hand's text and buttons: a random trump, or a random legal card.
func (d *driver) choose(text string, buttons [][2]string) (api.Action, bool) {
	var trumps, plays []api.Action
	for _, b := range buttons {
		act, err := api.ParseAction(b[1])
		if err != nil {
			continue
		}
		switch act.Verb {
		case api.VerbTrump:
			trumps = append(trumps, act)
		case api.VerbPlay:
			plays = append(plays, act)
		}
	}
	if len(trumps) > 0 {
		return trumps[d.rng.IntN(len(trumps))], true
	}
	if len(plays) == 0 {
		return api.Action{}, false
	}
	var hand core.CardSet
	for _, p := range plays {
		c, err := core.ParseCard(p.Arg)
		if err != nil {
			d.t.Fatalf("card button %q: %v", p.Arg, err)
		}
		hand = hand.Add(c)
	}
	trump, led := parseTable(text)
	legal := core.Legal(hand, led, trump)
	var ok []api.Action
	for _, p := range plays {
		c, _ := core.ParseCard(p.Arg)
		if legal.Has(c) {
			ok = append(ok, p)
		}
	}
	if len(ok) == 0 {
		ok = plays
	}
	return ok[d.rng.IntN(len(ok))], true
}

// parseTable reads the trump and the card led from a hand's text.
func parseTable(text string) (trump core.Suit, led core.Card) {
	for _, line := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(line, trumpPrefix); ok {
			for _, f := range strings.Fields(rest) {
				if s, ok := i18n.ParseSuit(f); ok {
					trump = s
					break
				}
			}
		}
		if rest, ok := strings.CutPrefix(line, trickPrefix); ok {
			first, _, _ := strings.Cut(rest, " · ")
			fields := strings.Fields(first)
			if len(fields) > 0 {
				led, _ = i18n.ParseCard(fields[len(fields)-1])
			}
		}
	}
	return trump, led
}

// step lets every human whose turn it is act once; it reports whether anyone did.
func (d *driver) step(humans []tgUser) bool {
	acted := false
	for _, h := range humans {
		m, ok := handMessage(d.f, h.ID)
		if !ok || d.last[h.ID] == [2]int{m.ID, m.Rev} {
			continue
		}
		if !strings.Contains(m.Text, yourTurn) && !strings.Contains(m.Text, chooseTrump) {
			continue
		}
		act, ok := d.choose(m.Text, m.buttons())
		if !ok {
			continue
		}
		d.last[h.ID] = [2]int{m.ID, m.Rev} // a refused press is not repeated on the same message
		if d.illegal[h.ID] && act.Verb == api.VerbPlay {
			if bad, ok := d.illegalCard(m); ok {
				delete(d.illegal, h.ID)
				d.typeIllegal(h, bad)
			}
		}
		if d.typed[h.ID] {
			delete(d.typed, h.ID)
			cmd := "/play " + act.Arg
			if act.Verb == api.VerbTrump {
				cmd = "/trump " + act.Arg
			}
			before := len(d.f.messages(group))
			d.f.command(h, group, 0, cmd)
			settle(4 * time.Second)
			for _, gm := range d.f.messages(group)[before:] {
				if gm.ReplyTo != 0 {
					d.t.Errorf("typed %q in the group got a reply: %q", cmd, gm.Text)
				}
			}
			d.moves++
			acted = true
			continue
		}
		id := d.f.press(h, &m, act.Encode())
		if text, alert := answerOf(d.t, d.f, id); alert {
			d.refused++
			d.t.Logf("%s's press refused: %s", h.First, text)
			continue
		}
		d.moves++
		acted = true
	}
	return acted
}

// illegalCard is a card of the hand message the player may not play now.
func (d *driver) illegalCard(m fmsg) (core.Card, bool) {
	var hand core.CardSet
	for _, b := range m.buttons() {
		if act, err := api.ParseAction(b[1]); err == nil && act.Verb == api.VerbPlay {
			c, _ := core.ParseCard(act.Arg)
			hand = hand.Add(c)
		}
	}
	trump, led := parseTable(m.Text)
	bad := hand &^ core.Legal(hand, led, trump)
	return bad.First(), bad != 0
}

// typeIllegal types a card the player may not play in the group and checks where the refusal,
// which names the cards they may play, went: to their private chat, and nothing to the group.
func (d *driver) typeIllegal(h tgUser, bad core.Card) {
	before, privBefore := len(d.f.messages(group)), len(d.f.messages(h.ID))
	cmd := d.f.command(h, group, 0, "/play "+bad.String())
	settle(4 * time.Second)
	for _, gm := range d.f.messages(group)[before:] {
		if gm.ReplyTo == cmd.ID {
			d.t.Errorf("an illegal card typed in the group got a reply there: %q", gm.Text)
		}
	}
	got := false
	for _, pm := range d.f.messages(h.ID)[privBefore:] {
		got = got || strings.Contains(pm.Text, "You may play")
	}
	if !got {
		d.t.Errorf("%s got no private reason for typing %s", h.First, bad)
	}
	d.illegalDone++
}

// over reports whether the match ended: the table message offers a rematch.
func over(f *fakeAPI) bool { return overIn(f, group) }

func overIn(f *fakeAPI, chat int64) bool {
	_, _, ok := lastWith(f, chat, api.VerbRematch, "")
	return ok
}

// playUntil lets the humans play until done reports true (fake time limit: limit).
func (d *driver) playUntil(humans []tgUser, limit time.Duration, done func() bool) {
	d.t.Helper()
	deadline := time.Now().Add(limit)
	for synctest.Wait(); !done(); synctest.Wait() {
		if time.Now().After(deadline) {
			d.t.Fatalf("not done after %v of play (%d moves)", limit, d.moves)
		}
		if !d.step(humans) {
			time.Sleep(250 * time.Millisecond)
		}
	}
}

// seatAll opens a table (options as typed) with the first user, seats the others with the Join
// button, waits until the lobby shows them all and deals.
func seatAll(t testing.TB, f *fakeAPI, options string, users ...tgUser) {
	t.Helper()
	seatAllIn(t, f, group, options, users...)
}

func seatAllIn(t testing.TB, f *fakeAPI, group int64, options string, users ...tgUser) {
	t.Helper()
	seatAllThen(t, f, group, options, nil, users...)
}

// seatAllThen is seatAllIn with beforeDeal called (if not nil) once the lobby shows everyone,
// right before the deal.
func seatAllThen(t testing.TB, f *fakeAPI, group int64, options string, beforeDeal func(), users ...tgUser) {
	t.Helper()
	// The first command in a fresh group names the bot: with privacy mode a plain /new would not
	// reach it.
	f.command(users[0], group, 0, strings.TrimSpace("/new@"+botUsername+" "+options))
	settle(2 * time.Second)
	for deadline := time.Now().Add(20 * time.Second); realTime && time.Now().Before(deadline); idle() {
		if _, _, ok := lastWith(f, group, api.VerbJoin, ""); ok {
			break
		}
	}
	for _, u := range users[1:] {
		if id := mustPress(t, f, u, group, api.VerbJoin, ""); true {
			if text, alert := answerOf(t, f, id); alert {
				t.Fatalf("%s could not join: %s", u.First, text)
			}
		}
	}
	deadline := time.Now().Add(time.Minute)
	for {
		m, _, ok := lastWith(f, group, api.VerbDeal, "")
		all := ok
		for _, u := range users {
			all = all && strings.Contains(m.Text, u.First)
		}
		if all {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the lobby never showed everyone: %q", m.Text)
		}
		settle(time.Second)
	}
	if beforeDeal != nil {
		beforeDeal()
	}
	id := mustPress(t, f, users[0], group, api.VerbDeal, "")
	if text, alert := answerOf(t, f, id); alert {
		t.Fatalf("deal refused: %s", text)
	}
}

// matchReport logs what a match cost.
func matchReport(t testing.TB, f *fakeAPI, calls []call, d *driver) {
	t.Helper()
	byMethod := map[string]int{}
	for _, c := range calls {
		byMethod[c.Method]++
	}
	var keys []string
	for k := range byMethod {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, byMethod[k]))
	}
	games := 0
	for _, m := range f.messages(group) {
		if strings.HasPrefix(m.Text, "🏁") {
			games++
		}
	}
	sendEdit := byMethod["sendMessage"] + byMethod["editMessageText"] + byMethod["sendPhoto"]
	t.Logf("match: %d games in %v of fake time, %d human moves (%d refused presses); %d Bot API calls (%d per game), %d sends/edits: %s",
		games, calls[len(calls)-1].At.Sub(calls[0].At).Round(time.Second), d.moves, d.refused, len(calls),
		len(calls)/max(games, 1), sendEdit, strings.Join(parts, " "))
	t.Logf("most group messages in any 60 s: %d (limit 20)", f.maxPerMinute(group))
	if got := f.maxPerMinute(group); got > 20 {
		t.Errorf("%d messages to the group in 60 seconds, limit 20", got)
	}
}

func TestFourHumansWholeMatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		humans := []tgUser{alice, bob, carla, dan}
		f, _, logs, e := startedEnv(t, humans...)
		before := len(f.Calls())
		seatAll(t, f, "timer=fast", humans...)
		tableID := tableOf(t, f)
		d := newDriver(t, f, 1)
		var ended time.Time // when the service finished the match
		d.playUntil(humans, 2*time.Hour, func() bool {
			if st, _ := e.svc.Status(tableID); st == api.StatusOver && ended.IsZero() {
				ended = time.Now()
			}
			return over(f)
		})
		// Coalescing keeps the group current: the final table shows soon after the last card.
		if lag := time.Since(ended); lag > 15*time.Second {
			t.Errorf("the group showed the end of the match %v after it ended", lag)
		}
		settle(10 * time.Second)
		calls := f.Calls()[before:]
		matchReport(t, f, calls, d)

		var summary bool
		for _, m := range f.messages(group) {
			summary = summary || strings.HasPrefix(m.Text, "🏆")
		}
		if !summary {
			t.Error("no match summary in the group")
		}
		// Every human's hands came privately and were edited in place: one hand message per game.
		for _, u := range humans {
			if n, _ := countCalls(calls, "sendMessage", u.ID); n == 0 {
				t.Errorf("%s never got a private message", u.First)
			}
		}
		e.close()
		checkClean(t, f, logs)
	})
}

func TestTwoHumansTwoComputers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		humans := []tgUser{alice, bob}
		f, _, logs, e := startedEnv(t, humans...)
		before := len(f.Calls())
		seatAll(t, f, "timer=fast stripes=5", humans...)
		d := newDriver(t, f, 2)
		d.typed[bob.ID] = true // Bob types his first move in the group
		d.playUntil(humans, 2*time.Hour, func() bool { return over(f) })
		settle(10 * time.Second)
		matchReport(t, f, f.Calls()[before:], d)
		if d.typed[bob.ID] {
			t.Error("Bob never typed a move")
		}
		e.close()
		checkClean(t, f, logs)
	})
}

func TestPressesRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, store, logs := newFake(testToken), mem.New(), &tabletest.Buffer{}
		f.setStarted(alice.ID)
		f.setStarted(bob.ID)
		e := startEnv(t, f, store, logs)
		f.command(alice, group, 0, "/new@"+botUsername+" timer=none")
		settle(2 * time.Second)
		lobby, _, _ := lastWith(f, group, api.VerbLeave, "")

		// Someone who does not sit at the table.
		id := mustPress(t, f, olga, group, api.VerbLeave, "")
		if text, alert := answerOf(t, f, id); !alert || text != i18n.T("en", "err.not_seated") {
			t.Errorf("outsider's Leave: answer %q alert=%v", text, alert)
		}
		_, oldLeave, _ := lastWith(f, group, api.VerbLeave, "")
		if text, alert := answerOf(t, f, mustPress(t, f, bob, group, api.VerbJoin, "")); alert {
			t.Fatalf("Bob's join refused: %s", text)
		}
		// A button from before its presser's last command is stale: Bob's Leave on the lobby as it
		// was before he joined.
		id = f.press(bob, &lobby, oldLeave)
		if text, alert := answerOf(t, f, id); !alert || text != i18n.T("en", "err.stale") {
			t.Errorf("stale Leave: answer %q alert=%v", text, alert)
		}
		settle(5 * time.Second)
		mustPress(t, f, alice, group, api.VerbDeal, "")
		settle(5 * time.Second)
		id = mustPress(t, f, olga, group, api.VerbHand, "")
		if text, alert := answerOf(t, f, id); !alert || text != i18n.T("en", "err.not_seated") {
			t.Errorf("outsider's My hand: answer %q alert=%v", text, alert)
		}

		// A double press: the same card button twice, quickly. One card is played.
		d := newDriver(t, f, 3)
		var who tgUser
		var m fmsg
		d.playUntil([]tgUser{alice, bob}, 10*time.Minute, func() bool {
			for _, u := range []tgUser{alice, bob} {
				hm, ok := handMessage(f, u.ID)
				if ok && strings.Contains(hm.Text, yourTurn) {
					who, m = u, hm
					return true
				}
			}
			return false
		})
		act, _ := d.choose(m.Text, m.buttons())
		first, second := f.press(who, &m, act.Encode()), f.press(who, &m, act.Encode())
		if text, alert := answerOf(t, f, first); alert {
			t.Fatalf("first press refused: %s", text)
		}
		if text, alert := answerOf(t, f, second); !alert || text != i18n.T("en", "err.stale") {
			t.Errorf("second press: answer %q alert=%v, want the stale-button alert", text, alert)
		}
		tableID := act.Table
		plays := 0
		for _, l := range store.Log(tableID) {
			if l.Verb == api.VerbPlay && l.Actor == "tg:"+fmt.Sprint(who.ID) {
				plays++
			}
		}
		if plays != 1 {
			t.Errorf("%d cards played by %s, want 1", plays, who.First)
		}

		// The same update delivered twice (Telegram redelivers after a restart): applied once.
		settle(3 * time.Second)
		d.playUntil([]tgUser{alice, bob}, 10*time.Minute, func() bool {
			for _, u := range []tgUser{alice, bob} {
				hm, ok := handMessage(f, u.ID)
				if ok && strings.Contains(hm.Text, yourTurn) {
					who, m = u, hm
					return true
				}
			}
			return false
		})
		act, _ = d.choose(m.Text, m.buttons())
		f.mu.Lock()
		msg := f.messageJSON(&m)
		f.mu.Unlock()
		dup := func(cb string) {
			f.mu.Lock()
			f.pressed = append(f.pressed, cb)
			f.mu.Unlock()
			u := updateFromJSON(t, map[string]any{"update_id": 5000, "callback_query": map[string]any{"id": cb,
				"from": who.json(), "message": msg, "chat_instance": "ci", "data": act.Encode()}})
			done := make(chan struct{})
			e.a.dispatch(context.Background(), update{Update: u}, func(error) { close(done) })
			<-done
		}
		dup("dupA")
		dup("dupB")
		if text, alert := answerOf(t, f, "dupA"); alert {
			t.Errorf("first delivery refused: %s", text)
		}
		if text, alert := answerOf(t, f, "dupB"); alert || text != i18n.T("en", "note.duplicate") {
			t.Errorf("second delivery: answer %q alert=%v, want the duplicate note", text, alert)
		}

		// Data that is not ours.
		id = f.press(alice, &m, "something-else")
		if text, _ := answerOf(t, f, id); text != tr("en", "btn.alien") {
			t.Errorf("foreign button: answer %q", text)
		}
		e.close()
		checkClean(t, f, logs)
	})
}

func TestNeverPressedStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, store, logs := newFake(testToken), mem.New(), &tabletest.Buffer{}
		f.setStarted(alice.ID) // Ursula never pressed Start
		e := startEnv(t, f, store, logs)
		f.command(alice, group, 0, "/new@"+botUsername+" timer=fast stripes=3")
		settle(2 * time.Second)
		f.command(ursula, group, 0, "/join")
		settle(5 * time.Second)
		mustPress(t, f, alice, group, api.VerbDeal, "")
		settle(10 * time.Second) // the group's messages go one every 3 s (groupBurst)
		tableID := tableOf(t, f)

		notices := func() (n int, link string) {
			for _, m := range f.messages(group) {
				for _, u := range m.urls() {
					if strings.Contains(m.Text, "Ursula") {
						n++
						link = u
					}
				}
			}
			return n, link
		}
		n, link := notices()
		if n != 1 || link != "https://t.me/"+botUsername+"?start="+tableID {
			t.Fatalf("deep-link notices: %d, link %q", n, link)
		}
		_, failed := countCalls(f.Calls(), "sendMessage", ursula.ID)
		if failed != 1 {
			t.Fatalf("%d failed private messages to Ursula, want 1", failed)
		}

		// "My hand" in the group: the hand in an alert, only for her.
		id := mustPress(t, f, ursula, group, api.VerbHand, "")
		text, alert := answerOf(t, f, id)
		if !alert || len16(text) > alertMax || !strings.ContainsAny(text, "♠♥♦♣") {
			t.Errorf("My hand alert: %q (alert=%v, %d chars)", text, alert, len16(text))
		}
		// /hand typed in the group: never the hand there; a hint with the link instead.
		cmd := f.command(ursula, group, 0, "/hand")
		settle(10 * time.Second) // behind the table's edits, one every 3 s
		var hint bool
		for _, m := range f.messages(group) {
			if m.ReplyTo == cmd.ID {
				hint = strings.Contains(m.Text, "private") && slices.Contains(m.urls(), link)
			}
		}
		if !hint {
			t.Error("/hand in the group got no hint with the deep link")
		}

		// She plays by typing in the group, from what the alert showed her. Once she types a card
		// she may not play: the reason names her cards, and she cannot be reached privately, so
		// the group gets a neutral answer. Alice, who can be, types one too.
		d := newDriver(t, f, 4)
		d.illegal[alice.ID] = true
		ursulaTriedIllegal := false
		ursulaMoves := func() bool {
			live, _, _ := lastWith(f, group, api.VerbHand, "")
			if !strings.Contains(live.Text, i18n.T("en", "live.turn", "Ursula")) && !strings.Contains(live.Text, i18n.T("en", "live.choosing", "Ursula")) {
				return false
			}
			id := mustPress(t, f, ursula, group, api.VerbHand, "")
			text, _ := answerOf(t, f, id)
			if !strings.Contains(text, yourTurn) && !strings.Contains(text, chooseTrump) {
				return false
			}
			hand := alertCards(text)
			var cmd string
			if strings.Contains(text, chooseTrump) {
				cmd = "/trump " + hand.First().Suit().String()
			} else {
				trump, led := parseTable(text)
				legal := core.Legal(hand, led, trump)
				cmd = "/play " + legal.First().String()
				if bad := hand &^ legal; bad != 0 && !ursulaTriedIllegal {
					ursulaTriedIllegal = true
					typed := f.command(ursula, group, 0, "/play "+bad.First().String())
					settle(4 * time.Second)
					var answer *fmsg
					for _, m := range f.messages(group) {
						if m.ReplyTo == typed.ID {
							answer = &m
						}
					}
					if want := i18n.T("en", "err.public.play", i18n.T("en", "btn.hand")); answer == nil || answer.Text != want ||
						!slices.Contains(answer.urls(), link) {
						t.Errorf("an illegal card typed in the group by someone unreachable got %+v, want %q with the link", answer, want)
					}
				}
			}
			before := len(f.messages(group))
			f.command(ursula, group, 0, cmd)
			settle(4 * time.Second)
			for _, m := range f.messages(group)[before:] {
				if m.ReplyTo != 0 {
					t.Errorf("typed %q got %q", cmd, m.Text)
				}
			}
			return true
		}
		d.playUntil([]tgUser{alice}, time.Hour, ursulaMoves)
		if _, failed := countCalls(f.Calls(), "sendMessage", ursula.ID); failed != 1 {
			t.Errorf("%d failed private messages to Ursula: the API was hammered", failed)
		}
		if n, _ := notices(); n != 1 {
			t.Errorf("%d deep-link notices, want 1", n)
		}

		// She goes on playing into the next game, then follows the link: /start <table> delivers
		// her hand at once, once, and only the game being played.
		d.playUntil([]tgUser{alice}, time.Hour, func() bool {
			ursulaMoves()
			game, _ := e.svc.HeldCards(tableID)
			return game >= 2
		})
		f.start(ursula, tableID)
		settle(3 * time.Second)
		var hands int
		for _, m := range f.messages(ursula.ID) {
			if len(m.buttons()) > 0 {
				hands++
			}
		}
		for _, c := range f.Calls() {
			if c.Chat == ursula.ID && c.Err == "" && strings.Contains(c.Params["text"], i18n.T("en", "hand.title", 1)) {
				t.Errorf("after /start Ursula was sent game 1's hand: %s %q", c.Method, c.Params["text"])
			}
		}
		if hands != 1 {
			t.Errorf("%d hand messages for Ursula after /start, want 1", hands)
		}
		d.playUntil([]tgUser{alice, ursula}, 2*time.Hour, func() bool { return over(f) })
		if !ursulaTriedIllegal || d.illegalDone != 1 {
			t.Errorf("illegal cards typed: Ursula %v, Alice %d", ursulaTriedIllegal, d.illegalDone)
		}

		// A long board for someone who never started the bot: the alert, one failed attempt to send
		// the whole board privately, and no deep link (it is not about cards).
		id = mustPress(t, f, olga, group, api.VerbBoard, "")
		if text, alert := answerOf(t, f, id); !alert || !strings.Contains(text, "Ursula & Computer 4") {
			t.Errorf("Board alert: %q", text)
		}
		settle(3 * time.Second)
		_, failedText := countCalls(f.Calls(), "sendMessage", olga.ID)
		if _, failedPhoto := countCalls(f.Calls(), "sendPhoto", olga.ID); failedText+failedPhoto != 1 {
			t.Errorf("%d failed private messages to Olga, want 1", failedText+failedPhoto)
		}
		for _, m := range f.messages(group) {
			if strings.Contains(m.Text, "Olga") {
				t.Errorf("a notice for Olga: %q", m.Text)
			}
		}
		e.close()
		checkClean(t, f, logs)
	})
}

// alertCards reads the cards line of a hand shown in an alert.
func alertCards(text string) core.CardSet {
	for _, line := range strings.Split(text, "\n") {
		var set core.CardSet
		fields := strings.Fields(line)
		for _, f := range fields {
			c, err := core.ParseCard(f)
			if err != nil {
				set = 0
				break
			}
			set = set.Add(c)
		}
		if set != 0 {
			return set
		}
	}
	return 0
}

func TestRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, store, logs := newFake(testToken), mem.New(), &tabletest.Buffer{}
		e := startEnv(t, f, store, logs)
		f.failNext("sendMessage", group, 1, 429, "Too Many Requests: retry after 5", 5)
		f.command(alice, group, 0, "/new@"+botUsername)
		settle(20 * time.Second)
		var sends []call
		for _, c := range f.Calls() {
			if c.Method == "sendMessage" && c.Chat == group {
				sends = append(sends, c)
			}
		}
		// The lobby, refused and sent again; no "Table opened" reply besides it.
		if len(sends) != 2 || sends[0].Err == "" || sends[1].Err != "" {
			t.Fatalf("group sends: %+v", sends)
		}
		if gap := sends[1].At.Sub(sends[0].At); gap < 5*time.Second {
			t.Errorf("retried after %v, retry_after was 5 s", gap)
		}

		// Edits: two joins while the edit waits out a 429 become one edit with both.
		f.failNext("editMessageText", group, 1, 429, "Too Many Requests: retry after 4", 4)
		mustPress(t, f, bob, group, api.VerbJoin, "")
		mustPress(t, f, carla, group, api.VerbJoin, "")
		settle(20 * time.Second)
		var edits []call
		for _, c := range f.Calls() {
			if c.Method == "editMessageText" && c.Chat == group {
				edits = append(edits, c)
			}
		}
		if len(edits) != 2 || edits[0].Err == "" || edits[1].Err != "" {
			t.Fatalf("group edits: %+v", edits)
		}
		if gap := edits[1].At.Sub(edits[0].At); gap < 4*time.Second {
			t.Errorf("edit retried after %v, retry_after was 4 s", gap)
		}
		if txt := edits[1].Params["text"]; !strings.Contains(txt, "Bob") || !strings.Contains(txt, "Carla") {
			t.Errorf("the edit does not show both joins: %q", txt)
		}
		e.close()
		checkClean(t, f, logs)
	})
}

func TestRestartMidGame(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		humans := []tgUser{alice, bob}
		f, store, logs, e := startedEnv(t, humans...)
		seatAll(t, f, "timer=none stripes=3", humans...)
		d := newDriver(t, f, 6)
		d.playUntil(humans, time.Hour, func() bool { return d.moves >= 4 })
		settle(10 * time.Second)
		handBefore, _ := handMessage(f, alice.ID)
		e.close()

		// A new adapter and a new service over the same store carry on.
		n := len(f.Calls())
		e = startEnv(t, f, store, logs)
		settle(10 * time.Second)
		for _, c := range f.Calls()[n:] {
			switch c.Method {
			case "sendMessage", "editMessageText", "sendPhoto":
				t.Errorf("restart re-sent a message that was shown already: %s to %d: %q", c.Method, c.Chat, c.Params["text"])
			}
		}
		moves := d.moves
		d.playUntil(humans, time.Hour, func() bool { return d.moves >= moves+2 })
		settle(5 * time.Second)
		handAfter, _ := handMessage(f, alice.ID)
		if handAfter.ID != handBefore.ID || handAfter.Rev <= handBefore.Rev {
			t.Errorf("Alice's hand is not edited in place after the restart: message %d rev %d, was %d rev %d",
				handAfter.ID, handAfter.Rev, handBefore.ID, handBefore.Rev)
		}
		d.playUntil(humans, 2*time.Hour, func() bool { return over(f) })
		e.close()
		checkClean(t, f, logs)
	})
}

func TestStopNeedsSeatOrAdmin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, store, logs := newFake(testToken), mem.New(), &tabletest.Buffer{}
		e := startEnv(t, f, store, logs)
		f.command(alice, group, 0, "/new@"+botUsername)
		f.command(bob, group, 0, "/join")
		settle(5 * time.Second)
		if n, _ := countCalls(f.Calls(), "getChatMember", 0); n != 0 {
			t.Errorf("getChatMember asked %d times for commands that do not need it", n)
		}
		cmd := f.command(olga, group, 0, "/stop@"+botUsername)
		settle(5 * time.Second)
		var refused bool
		for _, m := range f.messages(group) {
			refused = refused || (m.ReplyTo == cmd.ID && m.Text == i18n.T("en", "err.not_seated"))
		}
		if !refused {
			t.Error("a plain member's /stop was not refused")
		}
		f.command(olga, group, 0, "/stop@someotherbot") // not for us: ignored
		settle(5 * time.Second)
		f.setMember(group, olga.ID, "administrator")
		f.command(olga, group, 0, "/stop")
		settle(10 * time.Second)
		if n, _ := countCalls(f.Calls(), "getChatMember", 0); n != 2 {
			t.Errorf("getChatMember asked %d times, want 2", n)
		}
		lobby := f.messages(group)[0]
		if !strings.Contains(lobby.Text, i18n.T("en", "lobby.closed")) || lobby.Markup != nil {
			t.Errorf("the lobby is not closed after an admin's /stop: %q", lobby.Text)
		}
		e.close()
		checkClean(t, f, logs)
	})
}

func TestForumTopicAndPicture(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, store, logs := newFake(testToken), mem.New(), &tabletest.Buffer{}
		e := startEnv(t, f, store, logs)
		f.command(alice, group, 77, "/new@"+botUsername)
		settle(3 * time.Second)
		lobby, _, ok := lastWith(f, group, api.VerbJoin, "")
		if !ok || lobby.Thread != 77 {
			t.Fatalf("the lobby is not in topic 77: %+v", lobby)
		}
		mustPress(t, f, bob, group, api.VerbJoin, "")
		settle(5 * time.Second)
		if m, _, _ := lastWith(f, group, api.VerbJoin, ""); !strings.Contains(m.Text, "Bob") {
			t.Errorf("Bob's press in the topic did not reach its table: %q", m.Text)
		}
		// A press on a message the bot can no longer access names no topic: it still counts at
		// the topic's table, whose place is stored.
		id := f.pressInaccessible(carla, &lobby, mustData(t, lobby, api.VerbJoin))
		if text, alert := answerOf(t, f, id); alert {
			t.Errorf("a press in the topic on an inaccessible message: %q", text)
		}
		settle(5 * time.Second)
		if m, _, _ := lastWith(f, group, api.VerbJoin, ""); !strings.Contains(m.Text, "Carla") {
			t.Errorf("Carla's press on an inaccessible message did not reach the topic's table: %q", m.Text)
		}
		// The general chat is another place: it may have its own table.
		f.command(dan, group, 0, "/new")
		settle(3 * time.Second)
		if m, _, ok := lastWith(f, group, api.VerbJoin, ""); !ok || m.Thread != 0 {
			t.Errorf("no second table outside the topic: %d messages", len(f.messages(group)))
		}
		b := f.command(bob, group, 77, "/board")
		settle(3 * time.Second)
		var photo bool
		for _, c := range f.Calls() {
			if c.Method == "sendPhoto" {
				photo = c.Params["message_thread_id"] == "77" && strings.Contains(c.Params["reply_parameters"], fmt.Sprintf(`"message_id":%d`, b.ID)) &&
					strings.HasPrefix(c.Params["photo"], "<file board.png") && strings.Contains(c.Params["caption"], "Alice")
			}
		}
		if !photo {
			t.Errorf("the board was not sent as a photo in the topic")
		}
		e.close()
		checkClean(t, f, logs)
	})
}

func TestHandTypedInGroupGoesPrivate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, store, logs := newFake(testToken), mem.New(), &tabletest.Buffer{}
		f.setStarted(alice.ID)
		e := startEnv(t, f, store, logs)
		seatAll(t, f, "timer=none", alice)
		settle(5 * time.Second)
		old, ok := handMessage(f, alice.ID)
		if !ok {
			t.Fatal("no hand for Alice")
		}
		f.command(alice, group, 0, "/hand")
		settle(5 * time.Second)
		now, _ := handMessage(f, alice.ID)
		if now.ID == old.ID {
			t.Error("/hand did not bring the hand to the bottom of the private chat")
		}
		if n := len(f.messages(alice.ID)); n != 1 {
			t.Errorf("%d messages in Alice's private chat, want the one hand", n)
		}
		// The new message is the keyed one: the next change edits it.
		d := newDriver(t, f, 8)
		d.playUntil([]tgUser{alice}, 10*time.Minute, func() bool { return d.moves >= 1 })
		settle(5 * time.Second)
		if after, _ := handMessage(f, alice.ID); after.ID != now.ID || after.Rev == 0 {
			t.Errorf("the hand moved again or was not edited: %d rev %d (was %d)", after.ID, after.Rev, now.ID)
		}
		e.close()
		checkClean(t, f, logs)
	})
}

// updateFromJSON reads an update as the library would.
func updateFromJSON(t testing.TB, v map[string]any) tgbotapi.Update {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var u tgbotapi.Update
	if err := json.Unmarshal(b, &u); err != nil {
		t.Fatal(err)
	}
	return u
}

// TestBoardPicture: /board goes out as a PNG photo the service renders.
func TestBoardPicture(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, store, logs := newFake(testToken), mem.New(), &tabletest.Buffer{}
		e := startEnv(t, f, store, logs)
		f.command(alice, group, 0, "/new@"+botUsername)
		settle(3 * time.Second)
		f.command(alice, group, 0, "/board")
		settle(3 * time.Second)
		var photo string
		for _, c := range f.Calls() {
			if c.Method == "sendPhoto" {
				photo = c.Params["photo"]
			}
		}
		if !strings.HasPrefix(photo, "<file board.png") || !strings.HasSuffix(photo, " PNG>") {
			t.Errorf("no PNG board sent: %q", photo)
		}
		e.close()
		checkClean(t, f, logs)
	})
}

// crash stops the bot as kill -9 would: no request goes out any more, nothing queued is sent,
// nothing is flushed, nothing confirmed, and what was being handled is not applied.
func (e *env) crash() {
	e.t.Helper()
	e.closed = true
	e.net.cut.Store(true)
	e.svc.Close()    // commands still being handled are refused, not applied
	e.a.out.Close(0) // the outbox's workers give up what they hold
	e.stop()
	if err := <-e.done; err != nil {
		e.t.Errorf("Run: %v", err)
	}
	e.svc.Close()
	e.a.Close()
}

// Crashes and restarts in the middle of a fast game never push a group past Telegram's 20
// messages a minute: a new process starts every chat's budget empty, so what the old one sent
// just before it died still counts.
func TestRestartDoesNotFlood(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		humans := []tgUser{alice, bob, carla, dan}
		f, store, logs, e := startedEnv(t, humans...)
		seatAll(t, f, "timer=fast", humans...)
		d := newDriver(t, f, 3)
		start := time.Now()
		d.playUntil(humans, time.Hour, func() bool { return time.Since(start) > 90*time.Second })
		if n := f.maxPerMinute(group); n < 18 {
			t.Fatalf("the game before the crash sent only %d group messages a minute; the test needs a busy group", n)
		}
		// A crash loop: a restart every ten seconds.
		for range 5 {
			e.crash()
			e = startEnv(t, f, store, logs)
			start = time.Now()
			d.playUntil(humans, time.Hour, func() bool { return time.Since(start) > 10*time.Second || over(f) })
		}
		e.close()
		if n := f.maxPerMinute(group); n > 20 {
			t.Errorf("%d messages to the group within a minute across the restart (limit 20)", n)
		}
		checkClean(t, f, logs)
	})
}

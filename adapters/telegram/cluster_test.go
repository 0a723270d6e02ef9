package telegram

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kontermatt/kontermatt/adapters/internal/chat"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage/etcdstore"
	"github.com/kontermatt/kontermatt/storage/etcdstore/etcdtest"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// Several copies of the bot on one store (Config.Cluster): what they say is said once, a
// group's budget is theirs together, and one of them polls at a time.

// copyTransport is one copy's network to the fake: it notes each getUpdates the copy makes (when
// it began and ended, and whether Telegram answered 409) and can be cut, as the copy's death.
type copyTransport struct {
	name string
	net  *memTransport
	log  *pollLog
}

// pollLog is every copy's getUpdates, in the order they began.
type pollLog struct {
	mu    sync.Mutex
	polls []poll
}

type poll struct {
	copy       string
	begin, end time.Time
	status     int // 0: no answer (cut, cancelled)
}

func (c copyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !strings.HasSuffix(req.URL.Path, "/getUpdates") {
		return c.net.RoundTrip(req)
	}
	c.log.mu.Lock()
	i := len(c.log.polls)
	c.log.polls = append(c.log.polls, poll{copy: c.name, begin: time.Now()})
	c.log.mu.Unlock()
	resp, err := c.net.RoundTrip(req)
	c.log.mu.Lock()
	c.log.polls[i].end = time.Now()
	if err == nil {
		c.log.polls[i].status = resp.StatusCode
	}
	c.log.mu.Unlock()
	return resp, err
}

// firstBy is when the copy's first getUpdates after t began (zero: none).
func (l *pollLog) firstBy(copy string, after time.Time) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, p := range l.polls {
		if p.copy == copy && p.begin.After(after) {
			return p.begin
		}
	}
	return time.Time{}
}

// check fails the test for two copies' polls at once, or a poll Telegram ended with 409.
func (l *pollLog) check(t testing.TB) (byCopy map[string]int) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	byCopy = map[string]int{}
	for i, p := range l.polls {
		byCopy[p.copy]++
		if p.status == http.StatusConflict {
			t.Errorf("copy %s's getUpdates at %v was answered 409: two copies polled at once", p.copy, p.begin.Format("15:04:05.000"))
		}
		for _, q := range l.polls[:i] {
			if q.copy != p.copy && (q.end.IsZero() || q.end.After(p.begin)) {
				t.Errorf("copy %s polled from %v while copy %s's poll of %v was open", p.copy, p.begin.Format("15:04:05.000"), q.copy, q.begin.Format("15:04:05.000"))
			}
		}
	}
	return byCopy
}

// botCopy is one copy of the bot: its store client, its leases, its service and its adapter.
type botCopy struct {
	name  string
	net   *memTransport
	wire  *etcdtest.Wire
	store *etcdstore.Store
	a     *Adapter
	svc   *table.Service
	stop  context.CancelFunc
	done  chan error
}

// startCopy starts a copy of the bot on the cluster, polling (or waiting to) at once.
func startCopy(t testing.TB, name string, f *fakeAPI, c *etcdtest.Cluster, log *pollLog, logs *tabletest.Buffer) *botCopy {
	ctx := t.Context()
	t.Helper()
	w := c.Wire(t)
	st, err := etcdstore.Open(ctx, etcdstore.Options{Endpoints: w.Endpoints, Prefix: "bot/", Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	net := f.Transport()
	lg := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})).With("copy", name)
	a, err := New(Config{Token: testToken, APIURL: "http://api.fake", KV: st, Log: lg,
		Client:  &http.Client{Transport: copyTransport{name: name, net: net, log: log}},
		Cluster: st.Leases(name, etcdstore.DefaultLeaseTTL), PollTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	svc := tabletest.New(table.Config{Store: st, Outboxes: map[string]table.Outbox{Platform: a}, Robots: randomRobots, Log: lg})
	return runCopy(t, &botCopy{name: name, net: net, wire: w, store: st, a: a, svc: svc})
}

// runCopy resumes a copy's service and runs its adapter until the test ends.
func runCopy(t testing.TB, b *botCopy) *botCopy {
	t.Helper()
	b.a.Attach(b.svc)
	ctx, cancel := context.WithCancel(context.Background())
	if err := b.svc.Resume(ctx); err != nil {
		t.Fatal(err)
	}
	b.stop, b.done = cancel, make(chan error, 1)
	go func() { b.done <- b.a.Run(ctx) }()
	t.Cleanup(func() {
		b.stop()
		<-b.done
		b.svc.Close()
		b.a.Close()
		b.store.Close()
	})
	return b
}

// kill ends the copy as kill -9 would: its network to Telegram and its connections to etcd go at
// once, and it gives up no lease (the cluster lets its lease run out).
func (b *botCopy) kill() {
	b.net.cut.Store(true)
	b.wire.Cut()
}

// TestOneCopyPollsAndAStandbyTakesOver: two copies of the bot on a 3-member etcd cluster, one
// bot token. Only the copy holding the poller lease calls getUpdates (Telegram would end the
// other's poll with 409), the other waits. The holder is killed: the standby polls within 15 s,
// and every command sent meanwhile is answered once.
func TestOneCopyPollsAndAStandbyTakesOver(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{})
	f := newFake(testToken)
	log, logs := &pollLog{}, &tabletest.Buffer{}
	a := startCopy(t, "a", f, c, log, logs)
	tabletest.WaitUntil(t, 10*time.Second, "copy a polls", func() bool { return !log.firstBy("a", time.Time{}).IsZero() })
	b := startCopy(t, "b", f, c, log, logs)
	users := make([]tgUser, 8)
	for i := range users {
		users[i] = tgUser{ID: int64(201 + i), First: "User" + strconv.Itoa(i), Lang: "en"}
		f.setStarted(users[i].ID)
	}
	answered := func(u tgUser) int { return len(f.messages(u.ID)) }
	// While a polls, b waits: a answers everything.
	for _, u := range users[:4] {
		f.command(u, u.ID, 0, "/help@"+botUsername)
	}
	tabletest.WaitUntil(t, 10*time.Second, "the first commands answered", func() bool {
		for _, u := range users[:4] {
			if answered(u) == 0 {
				return false
			}
		}
		return true
	})
	// a confirms what it handled with its next poll: wait for it, so that b does not get those
	// updates again (that they would be applied once even then is the service's EventID).
	tabletest.WaitUntil(t, 5*time.Second, "a confirmed the updates", func() bool { return len(f.pending()) == 0 })
	time.Sleep(300 * time.Millisecond)
	if n := log.firstBy("b", time.Time{}); !n.IsZero() {
		t.Fatalf("copy b polled at %v while a held the lease", n)
	}

	died := time.Now()
	a.kill()
	for _, u := range users[4:] {
		f.command(u, u.ID, 0, "/help@"+botUsername) // while nobody polls: Telegram keeps them
	}
	tabletest.WaitUntil(t, 15*time.Second, "copy b polls after a died", func() bool { return !log.firstBy("b", died).IsZero() })
	tookOver := log.firstBy("b", died).Sub(died)
	t.Logf("copy b polled %v after copy a died (lease time to live %v)", tookOver.Round(10*time.Millisecond), etcdstore.DefaultLeaseTTL)
	if tookOver < etcdstore.DefaultLeaseTTL/3 {
		t.Errorf("copy b polled %v after a died: before a's lease could run out", tookOver)
	}
	tabletest.WaitUntil(t, 10*time.Second, "the commands sent meanwhile answered", func() bool {
		for _, u := range users[4:] {
			if answered(u) == 0 {
				return false
			}
		}
		return true
	})
	time.Sleep(500 * time.Millisecond) // time for a second answer, if one were coming
	for _, u := range users {
		if n := answered(u); n != 1 {
			t.Errorf("user %d's /help answered %d times", u.ID, n)
		}
	}
	byCopy := log.check(t)
	if byCopy["a"] == 0 || byCopy["b"] == 0 {
		t.Errorf("polls by copy: %v", byCopy)
	}
	if !strings.Contains(logs.String(), "copy=b") || strings.Contains(logs.String(), testSecret) {
		t.Error("the copies' logs are missing, or hold the token")
	}
	_ = b
}

// TestCopiesShareAGroupsBudget: two copies of the bot send to one group at once, 15 messages
// each. Together they keep Telegram's 20 messages a minute: no flood 429, and all 30 go out.
func TestCopiesShareAGroupsBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, store, logs := newFake(testToken), mem.New(), &tabletest.Buffer{}
		copies := twoCopies(t, f, store, logs)
		for i := range 15 {
			for n, e := range copies {
				e.a.Deliver(context.Background(), []api.Message{{Target: api.Target{Kind: api.ToPlace, Place: placeOf(group, 0)},
					Kind: api.KindNotice, Text: fmt.Sprintf("notice %d from copy %d", i, n)}})
			}
		}
		settle(3 * time.Minute)
		got := len(f.messages(group))
		t.Logf("%d messages, at most %d in a minute, %d floods", got, f.maxPerMinute(group), f.floodCount())
		if got != 30 {
			t.Errorf("%d of 30 messages reached the group", got)
		}
		if n := f.maxPerMinute(group); n > 20 || f.floodCount() > 0 {
			t.Errorf("%d messages in a minute, %d refused by the flood limit", n, f.floodCount())
		}
	})
}

// TestCopiesPostATableMessageOnce: two copies deliver the same table messages (each delivers
// every editable message at its start, and either may commit a table's moves): the group gets
// one message for each, edited to its last version.
func TestCopiesPostATableMessageOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, store, logs := newFake(testToken), mem.New(), &tabletest.Buffer{}
		copies := twoCopies(t, f, store, logs)
		live := func(v uint64) []api.Message {
			return []api.Message{{Target: api.Target{Kind: api.ToPlace, Place: placeOf(group, 0)}, Kind: api.KindLive,
				Key: "t1/live/1", Version: v, Table: "t1", Text: fmt.Sprintf("the table, version %d", v)}}
		}
		// The first post is slow: both copies want to send while it is on its way.
		release := f.stallCalls("sendMessage")
		for _, e := range copies {
			e.a.Deliver(context.Background(), live(1))
		}
		settle(5 * time.Second)
		release()
		for v := uint64(2); v <= 5; v++ {
			for _, e := range copies {
				e.a.Deliver(context.Background(), live(v))
			}
		}
		settle(time.Minute)
		msgs := f.messages(group)
		if len(msgs) != 1 {
			t.Fatalf("%d messages for one table message: %+v", len(msgs), msgs)
		}
		if !strings.HasSuffix(msgs[0].Text, "version 5") {
			t.Errorf("the message shows %q, not the last version", msgs[0].Text)
		}
		var shown []string
		last := 0
		for _, c := range f.Calls() {
			if c.Method == "sendMessage" || c.Method == "editMessageText" {
				v, _ := strconv.Atoi(c.Params["text"][strings.LastIndex(c.Params["text"], " ")+1:])
				shown = append(shown, c.Method+" v"+strconv.Itoa(v))
				if v < last {
					t.Errorf("edited back to version %d after %d", v, last)
				}
				last = max(last, v)
			}
		}
		t.Logf("requests: %v", shown)
	})
}

// twoCopies starts two copies of the bot on one store, as on etcd: their leases are one
// process's here (LocalLeases), so one of them polls.
func twoCopies(t testing.TB, f *fakeAPI, store *mem.Store, logs *tabletest.Buffer) []*env {
	leases := &table.LocalLeases{}
	var copies []*env
	for range 2 {
		copies = append(copies, startEnv(t, f, store, logs, func(c *Config) {
			c.Client = &http.Client{Transport: f.Transport()}
			c.Cluster = leases
		}))
	}
	return copies
}

// startOwnedCopy starts a copy of the bot on the cluster as cmd/bot wires one on etcd: its
// leases (the poller's, the places' partitions) in the cluster, its records and budgets shared,
// and the place told by its owner alone. Its deliveries are noted in v.
// twoSpreadCopies starts two copies of the bot on a 3-member etcd cluster, with four people who
// have started the bot in private, and waits until the places' partitions are spread over both
// copies: that happens a few seconds after the second copy starts, and a place handed over then is
// a take-over (its moves wait for the new owner's retelling), which the tests of a match leave out.
func twoSpreadCopies(t testing.TB) (*fakeAPI, *shownVersions, []*botCopy) {
	t.Helper()
	c := etcdtest.Start(t, etcdtest.Options{})
	f := newFake(testToken)
	for _, u := range []tgUser{alice, bob, carla, dan} {
		f.setStarted(u.ID)
	}
	logs := &tabletest.Buffer{}
	v := &shownVersions{of: map[string]uint64{}, key: map[string]string{}}
	copies := []*botCopy{startOwnedCopy(t, "a", f, c, v, logs), startOwnedCopy(t, "b", f, c, v, logs)}
	tabletest.WaitUntil(t, 30*time.Second, "the places spread over both copies", func() bool {
		return len(copies[0].svc.Leases()) == table.Partitions/2 && len(copies[1].svc.Leases()) == table.Partitions/2
	})
	return f, v, copies
}

func startOwnedCopy(t testing.TB, name string, f *fakeAPI, c *etcdtest.Cluster, v *shownVersions, logs *tabletest.Buffer) *botCopy {
	t.Helper()
	w := c.Wire(t)
	st, err := etcdstore.Open(t.Context(), etcdstore.Options{Endpoints: w.Endpoints, Prefix: "bot/", Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	net := f.Transport()
	lg := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo})).With("copy", name)
	leases := st.Leases(name, etcdstore.DefaultLeaseTTL)
	var svc *table.Service
	a, err := New(Config{Token: testToken, APIURL: "http://api.fake", KV: st, Log: lg,
		Client:  &http.Client{Transport: copyTransport{name: name, net: net, log: &pollLog{}}},
		Cluster: leases, PollTimeout: 2 * time.Second, Owner: chat.OwnerFunc(func(p api.Place) bool { return svc.Owns(p) })})
	if err != nil {
		t.Fatal(err)
	}
	svc = tabletest.New(table.Config{Store: st, KV: st, Shared: true, Leases: leases, Outboxes: map[string]table.Outbox{Platform: noting{v, a}},
		Robots: randomRobots, Log: lg})
	return runCopy(t, &botCopy{name: name, net: net, wire: w, store: st, a: a, svc: svc})
}

// BenchmarkGroupLagOnTwoCopies: two copies of the bot on a 3-member etcd cluster, in real time,
// and four people who think 1 to 3 s a card play two games. One copy polls and commits their
// presses, the place's owner tells the group. It reports the lag from a move to the group showing
// it (issue 31: Telegram p95 ≤ 3 s, max ≤ 6 s) and fails on a broken budget, a refused call or a
// move that waited more than 10 s (real time on a shared machine is noisy). A benchmark, not a
// test: it takes about 2.5 minutes of real time; TestCopiesShareAGroupsBudget and
// TestTwoCopiesTellOnce check two copies in every run. The group's sends are paced as one copy's
// (chat.Window, TestWindowPacesAsOneCopy): one every 3.025 s, not 60/19 s.
//
//	go test -run '^$' -bench GroupLagOnTwoCopies -benchtime 1x ./adapters/telegram/
func BenchmarkGroupLagOnTwoCopies(b *testing.B) {
	for range b.N {
		p95, worst, silence := groupLagOnTwoCopies(b)
		b.ReportMetric(float64(p95.Milliseconds()), "lag-p95-ms")
		b.ReportMetric(float64(worst.Milliseconds()), "lag-max-ms")
		b.ReportMetric(float64(silence.Milliseconds()), "silence-ms")
	}
}

func groupLagOnTwoCopies(t testing.TB) (p95, worst, silence time.Duration) {
	realTime = true
	defer func() { realTime = false }()
	f, v, copies := twoSpreadCopies(t)
	humans := []tgUser{alice, bob, carla, dan}
	// The owners seen while the match is played are logged.
	owners := watchOwners(copies, placeOf(group, 0))
	committed, stop := watchCommits(copies[0].store)
	seatAll(t, f, "timer=fast stripes=5", humans...)
	d := newDriver(t, f, 61)
	d.playThinking(humans, 10*time.Minute, 61, func() bool { return gamesIn(f, group) >= 3 || over(f) })
	time.Sleep(10 * time.Second)
	stop()
	t.Logf("the group's owners while the match was played: %v", owners())
	p95, worst, silence = lagReport(t, "two copies on a 3-member etcd", f, v, committed, 40)
	if worst > 10*time.Second || silence > 10*time.Second {
		t.Errorf("a move waited %v for the group, a silence of %v (at most 10 s)", worst, silence)
	}
	if n := f.maxPerMinute(group); n > 20 || f.floodCount() > 0 {
		t.Errorf("%d group messages in a minute, %d refused by the flood limit", n, f.floodCount())
	}
	for _, call := range f.Calls() {
		if call.Err != "" && call.Method != "getUpdates" {
			t.Errorf("%s refused: %s", call.Method, call.Err)
		}
	}
	return p95, worst, silence
}

// TestKilledOwnerMidSendTellsTheRestOnce: two copies of the bot on a 3-member etcd cluster, in
// real time. The place's owner is killed (kill -9: its network and its store connections gone,
// its leases left to run out) while its post of the first game's table message and its players'
// hands are on their way, not yet at Telegram. Its claims of those messages' records were made
// under its lease of the place, so they end with that lease: the other copy takes the place over
// and posts them within 15 s of the kill (issue 31), not after the claims' time to live; then
// four people play on, and every move reaches the group. Nothing is posted twice and no call is
// refused.
func TestKilledOwnerMidSendTellsTheRestOnce(t *testing.T) {
	realTime = true
	defer func() { realTime = false }()
	f, v, copies := twoSpreadCopies(t)
	humans := []tgUser{alice, bob, carla, dan}
	place := placeOf(group, 0)
	owner, other := copies[0], copies[1]
	if !owner.svc.Owns(place) {
		owner, other = other, owner
	}
	var killed time.Time
	seatAllThen(t, f, group, "timer=none stripes=5", func() {
		// The owner's posts of the deal wait on their way to Telegram: the table message, the
		// hands.
		release := owner.net.holdCalls("sendMessage")
		t.Cleanup(release)
	}, humans...)
	tabletest.WaitUntil(t, 15*time.Second, "the owner's posts of the table message and the hands on their way", func() bool {
		held := owner.net.holding()
		return slices.Contains(held, group) && len(held) == 1+len(humans)
	})
	if _, _, ok := lastWith(f, group, api.VerbHand, ""); ok {
		t.Fatal("the table message reached the group before the owner was killed")
	}
	held := len(owner.net.holding())
	committed, stop := watchCommits(other.store)
	killed = time.Now()
	owner.kill()
	// A killed process's calls to the store end with it: closed before its Run is waited for
	// (a campaign for the poller's lease would give its place in line up on the cut wire).
	t.Cleanup(func() { owner.store.Close() })
	// Every post that was on its way when the owner died: the group's table message, and each
	// player's hand (a player cannot play without it).
	told := func() bool {
		if _, _, ok := lastWith(f, group, api.VerbHand, ""); !ok {
			return false
		}
		for _, u := range humans {
			if !hasHand(f, u.ID) {
				return false
			}
		}
		return true
	}
	tabletest.WaitUntil(t, 60*time.Second, "the group's table message and the hands posted", told)
	tookOver := time.Since(killed)
	t.Logf("the owner (copy %s) was killed with %d posts on their way; copy %s posted them %v later",
		owner.name, held, other.name, tookOver.Round(10*time.Millisecond))
	if tookOver > 15*time.Second {
		t.Errorf("the group and the players waited %v for what was on its way when the place's owner died (at most 15 s)", tookOver)
	}
	if !other.svc.Owns(place) {
		t.Errorf("copy %s does not own the place after the take-over", other.name)
	}
	d := newDriver(t, f, 71)
	d.playThinking(humans, 3*time.Minute, 71, func() bool { return d.moves >= 8 })
	time.Sleep(8 * time.Second)
	stop()
	lags, _ := groupLags(f, v, committed)
	if len(committed) < 8 || len(lags) != len(committed) {
		t.Errorf("%d moves committed after the kill, %d of them shown in the group", len(committed), len(lags))
	}
	checkTimeline(t, f, group, 1, false, humans)
	for _, call := range f.Calls() {
		if call.Err != "" && call.Method != "getUpdates" {
			t.Errorf("%s refused: %s", call.Method, call.Err)
		}
	}
	if n := f.maxPerMinute(group); n > 20 || f.floodCount() > 0 {
		t.Errorf("%d group messages in a minute, %d refused by the flood limit", n, f.floodCount())
	}
}

// hasHand reports whether a user's private chat shows a hand message.
func hasHand(f *fakeAPI, user int64) bool {
	for _, m := range f.messages(user) {
		if handTitle.MatchString(m.Text) {
			return true
		}
	}
	return false
}

// watchOwners notes which copy owns a place, every 100 ms, until the owners are asked for: the
// copies' names, each once for every time the place came to it.
func watchOwners(copies []*botCopy, place api.Place) (owners func() []string) {
	var mu sync.Mutex
	var seen []string
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			for _, b := range copies {
				mu.Lock()
				if b.svc.Owns(place) && (len(seen) == 0 || seen[len(seen)-1] != b.name) {
					seen = append(seen, b.name)
				}
				mu.Unlock()
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	var once sync.Once
	return func() []string {
		once.Do(func() { close(done) })
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}

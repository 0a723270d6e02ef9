package discord

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage/etcdstore/etcdtest"
)

// The public timeline of a channel on several copies of the bot (issue 31): a place's owner alone
// tells it (chat.Teller), from the stored state, so that every table message, result and hand is
// shown once and in order, also when the owner is killed or stopped and another copy takes the
// place over.

var (
	liveTitle   = regexp.MustCompile(`🃏 Game (\d+) ·`)
	gameResult  = regexp.MustCompile(`🏁 Game (\d+):`)
	handTitle   = regexp.MustCompile(`Your hand · game (\d+)`)
	matchWinner = "🏆"
	toPlay      = escape(strings.SplitN(i18n.T("en", "live.turn", "%s"), "%s", 2)[0]) // "▶ "
)

// timeline is what a channel and the people's DMs showed of a match.
type timeline struct {
	games   int // the games the channel's table messages name
	results int
	posts   int // channel messages
	edits   int // channel edits
}

// checkTimeline checks what the channel and the humans' DMs show after a match (or part of one):
// each game's table message posted once and, once its game is over, left with its result and
// without buttons; each game's result posted once, after its table message and before the next
// game's; the match's winner once, after the last result (when over); one hand message per game
// and human; no channel edit that repeats the content before it or goes back to an older state.
func checkTimeline(t *testing.T, f *fakeDiscord, matchOver bool, humans []fakeUser) timeline {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	lives, results := map[int][]int{}, map[int][]int{} // game → positions in the channel
	var winners []int
	msgs := f.channelLocked(guildChannel)
	var tl timeline
	for i, m := range msgs {
		tl.posts++
		tl.edits += len(m.History) - 1
		if g := liveTitle.FindStringSubmatch(m.Content); g != nil {
			n, _ := strconv.Atoi(g[1])
			lives[n] = append(lives[n], i)
			tl.games = max(tl.games, n)
		}
		if g := gameResult.FindStringSubmatch(m.Content); g != nil {
			n, _ := strconv.Atoi(g[1])
			results[n] = append(results[n], i)
			tl.results++
		}
		if strings.Contains(m.Content, matchWinner) {
			winners = append(winners, i)
		}
		var seq uint64
		for j, v := range m.History {
			if j > 0 && v.Content == m.History[j-1].Content && slices.EqualFunc(v.Rows, m.History[j-1].Rows,
				func(a, b fakeRow) bool { return slices.Equal(a.Components, b.Components) }) {
				t.Errorf("channel message %d was edited to what it showed already:\n%s", i, v.Content)
			}
			for _, r := range v.Rows {
				for _, b := range r.Components {
					if a, err := api.ParseAction(b.CustomID); err == nil {
						if a.Seq < seq {
							t.Errorf("channel message %d went back from state %d to %d:\n%s", i, seq, a.Seq, v.Content)
						}
						seq = max(seq, a.Seq)
					}
				}
			}
		}
	}
	for n := 1; n <= tl.games; n++ {
		if len(lives[n]) != 1 {
			t.Errorf("game %d's table message was posted %d times", n, len(lives[n]))
			continue
		}
		live := msgs[lives[n][0]]
		if over := n < tl.games || matchOver; !over {
			continue
		}
		if len(results[n]) != 1 {
			t.Errorf("game %d's result was posted %d times", n, len(results[n]))
			continue
		}
		if results[n][0] < lives[n][0] {
			t.Errorf("game %d's result came before its table message", n)
		}
		if strings.Contains(live.Content, toPlay) || len(live.buttons()) > 0 && n < tl.games {
			t.Errorf("game %d is over but its table message still says who is to play, or keeps its buttons:\n%s", n, live.Content)
		}
		if next := lives[n+1]; len(next) > 0 && next[0] < results[n][0] {
			t.Errorf("game %d's table message came before game %d's result", n+1, n)
		}
	}
	if matchOver {
		if len(winners) != 1 {
			t.Errorf("the match's winner was posted %d times", len(winners))
		} else if last := results[tl.games]; len(last) > 0 && winners[0] < last[0] {
			t.Errorf("the match's winner came before the last game's result")
		}
	}
	if t.Failed() {
		for i, m := range msgs {
			first, _, _ := strings.Cut(m.Content, "\n")
			t.Logf("channel message %d %s (%d versions, first at %s): %s", i, m.ID, len(m.History), m.History[0].At.Format("15:04:05.000"), first)
		}
		trail.Lock()
		for _, l := range trail.lines {
			t.Log(l)
		}
		trail.Unlock()
	}
	for _, u := range humans {
		hands := map[int]int{}
		for _, m := range f.channelLocked(f.dms[u.ID]) {
			if g := handTitle.FindStringSubmatch(m.Content); g != nil {
				n, _ := strconv.Atoi(g[1])
				hands[n]++
			}
		}
		for n, k := range hands {
			if k > 1 {
				t.Errorf("%s got game %d's hand %d times", u.Name, n, k)
			}
		}
	}
	return tl
}

// checkNoRefusals fails the test for every request the fake answered with an error, but for
// webhook calls made before Discord took their interaction's HTTP answer, which are tried again.
func checkNoRefusals(t *testing.T, f *fakeDiscord) (early int) {
	t.Helper()
	refused, early := f.refusedCalls()
	if len(refused) > 0 {
		t.Errorf("%d calls refused: %v", len(refused), refused)
	}
	return early
}

// cutTransport fails, once cut, a copy's requests to Discord (as a process that died makes none),
// or with only muted those that change its channel: the copy's own messages of the place stop
// reaching Discord, the people's hands still do.
type cutTransport struct {
	next      http.RoundTripper
	cut, mute atomic.Bool
	// told counts the posts and edits of messages the copy made in channels and DMs (the
	// answers to interactions aside: whichever copy took one answers it).
	told atomic.Int64
	name string
}

// trail notes the channel's requests of every copy, for a failing test to show who did what.
var trail struct {
	sync.Mutex
	lines []string
}

var errCut = errors.New("the copy is dead (test)")

func (c *cutTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if c.cut.Load() || c.mute.Load() && strings.Contains(req.URL.Path, "/channels/"+guildChannel+"/") {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, errCut
	}
	if (req.Method == http.MethodPost || req.Method == http.MethodPatch) && strings.Contains(req.URL.Path, "/channels/") &&
		strings.Contains(req.URL.Path, "/messages") {
		c.told.Add(1)
		if strings.Contains(req.URL.Path, guildChannel) {
			trail.Lock()
			trail.lines = append(trail.lines, time.Now().Format("15:04:05.000")+" "+c.name+" "+req.Method+" "+req.URL.Path[strings.LastIndex(req.URL.Path, "/messages"):])
			trail.Unlock()
		}
	}
	return c.next.RoundTrip(req)
}

// ownedCopy is a copy of the bot on the cluster as cmd/bot runs it with store etcd: the adapter
// and the table service with the copy's leases (the service's per-place ownership decides what
// the adapter tells), in HTTP mode one of the fake's Pool, its requests to Discord through a
// cutTransport.
func startOwnedCopy(t testing.TB, name string, f *fakeDiscord, c *etcdtest.Cluster, paceScale ...float64) *clusterCopy {
	t.Helper()
	cp := newClusterCopy(t, name, c)
	cp.net = &cutTransport{name: name}
	f.mu.Lock()
	if len(f.copies) == 0 { // a test's first copy: the trail starts anew
		trail.Lock()
		trail.lines = nil
		trail.Unlock()
	}
	f.mu.Unlock()
	cp.h = startHarness(t, f, cp.store, cp.store, harnessOpt{pool: true, noWait: true,
		cfg: func(c *Config) {
			c.Cluster = cp.leases
			c.Log = c.Log.With("copy", cp.name)
		},
		adapter: func(a *Adapter) {
			cp.net.next = a.client.Transport
			a.client.Transport = cp.net
		},
		table: func(c *table.Config) {
			c.Leases, c.Shared, c.KV = cp.leases, true, cp.store
			c.Seed = uint64(len(f.Pool)) + 7 // each copy its own randomness, as processes have
			if len(paceScale) > 0 {
				c.Paces = scaledPaces(paceScale[0])
			}
		}})
	cp.h.standby = true
	f.mu.Lock()
	f.copies = append(f.copies, cp)
	copies := slices.Clone(f.copies)
	// A text shown to the channel leaks a card only if every copy still counts it held:
	// a copy that hears of the moves through the store's watch may be a move behind the owner.
	f.onPublic = func(channel, content string) {
		leaks := ""
		for _, cp := range copies { // one that went down knows less: it cannot hide a leak
			svc := cp.h.svc
			game, held := svc.HeldCards(svc.TableAt(api.Place{Platform: Platform, Chat: channel}))
			l := tabletest.Leaks(content, game, held)
			if len(l) == 0 {
				return
			}
			leaks = fmt.Sprint(l, " in game ", game)
		}
		if leaks != "" {
			t.Errorf("channel %s was shown %s, still held at every copy:\n%s", channel, leaks, content)
		}
	}
	f.mu.Unlock()
	if !f.viaHTTP {
		f.waitFor("every shard connected", f.connected)
	}
	return cp
}

// spread waits until a copy owns the channel's place and each holds some partitions of the
// places: commands are slow while the copies still ask for the partitions.
func spread(t testing.TB, copies ...*clusterCopy) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		total, each := 0, true
		for _, cp := range copies {
			n := 0
			for _, l := range cp.leases.Held() {
				if strings.HasPrefix(l, "places/") {
					n++
				}
			}
			total += n
			each = each && n > 0
		}
		if ownerOf(copies...) != nil && each {
			return
		}
		if time.Now().After(deadline) {
			waitOwner(t, copies...)
			t.Logf("the copies hold %d partitions of %d after 30 s (a busy machine): playing on", total, table.Partitions)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kill stops the copy as kill -9 does: no more requests to Discord, no more posts from the
// load balancer, its connection to the cluster gone (its leases run out); nothing is flushed or
// released. Its service is closed afterwards only to end its goroutines.
func (cp *clusterCopy) kill() {
	h := cp.h
	cp.net.cut.Store(true)
	h.leavePool()
	cp.wire.Cut()
	h.stopped = true
	h.a.out.Close(0) // the outbox's workers give up what they hold
	h.cancel()
	<-h.done
	h.svc.Close()
	h.a.Close()
}

// term stops the copy as SIGTERM does, in cmd/bot's order: the load balancer stops posting to
// it, Run ends (the interactions in flight finished, the queues drained for DrainTimeout), the
// service closes (its places' leases given up), the adapter closes.
func (cp *clusterCopy) term() {
	cp.h.stop()
	cp.h.a.Close()
	cp.leases.Close()
}

// ownerOf gives the copy that owns the channel's place now, or nil.
func ownerOf(copies ...*clusterCopy) *clusterCopy {
	place := api.Place{Platform: Platform, Chat: guildChannel}
	for _, cp := range copies {
		if cp != nil && !cp.h.stopped && cp.h.svc.Owns(place) {
			return cp
		}
	}
	return nil
}

// waitOwner waits until a copy owns the channel's place (a partition whose holder went down is
// taken over within its lease's time to live, and spread again when a copy joins).
func waitOwner(t testing.TB, copies ...*clusterCopy) *clusterCopy {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if cp := ownerOf(copies...); cp != nil {
			return cp
		}
		if time.Now().After(deadline) {
			t.Fatal("no copy owns the channel's place after 30 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestTwoCopiesTellOnce plays a whole match of two people and two computer players on two copies
// of the bot on a 3-member etcd cluster, with one fake Discord: by HTTP the posts go to either copy
// in turn, over the gateway to the copy that holds the shard, while one copy owns the channel's
// place. Every channel message and edit is made once and in order (results before the next deal,
// the match's winner last), every hand once, and Discord refuses no call.
func TestTwoCopiesTellOnce(t *testing.T) {
	eachMode(t, func(t *testing.T, f *fakeDiscord) {
		c := etcdtest.Start(t, etcdtest.Options{})
		a := startOwnedCopy(t, "a", f, c)
		b := startOwnedCopy(t, "b", f, c)
		spread(t, a, b)
		humans := []fakeUser{alice, dan}
		openTable(t, f, alice, []fakeUser{dan}, opt("stripes", 4, 3), opt("timer", 3, "none"))
		owner := ownerOf(a, b)
		if owner == nil {
			t.Fatal("no copy owns the channel's place")
		}
		rng := rand.New(rand.NewPCG(31, 1))
		t.Logf("seed 31; copy %s owns the channel's place", owner.name)
		moves := playMatch(t, f, []seatPlayer{{u: alice}, {u: dan}}, rng)
		for _, cp := range []*clusterCopy{a, b} {
			if err := cp.h.a.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(500 * time.Millisecond) // time for a second post or edit, if one were coming
		tl := checkTimeline(t, f, true, humans)
		early := checkNoRefusals(t, f)
		t.Logf("%d moves by people, %d games: %d channel messages, %d edits; %d webhook calls tried again before Discord took their answer",
			moves, tl.games, tl.posts, tl.edits, early)
		other := a
		if owner == a {
			other = b
		}
		t.Logf("the owner %s posted and edited %d times, copy %s %d times", owner.name, owner.net.told.Load(), other.name, other.net.told.Load())
		if n := other.net.told.Load(); n > 0 {
			t.Errorf("copy %s, which does not own the place, posted or edited %d messages: the owner alone tells it", other.name, n)
		}
	})
}

// matchUnder plays a match of two people and two computers on copies of the bot that go down
// (down: killed or stopped) right after each game's last card, before the channel shows it,
// and come back as a new copy: the copy that takes the place over tells what the one that went
// down left untold. mode is how Discord sends the interactions: by HTTP to either copy in turn
// (a load balancer's pool), or over the gateway to the copy that holds the shard.
func matchUnder(t *testing.T, mode receiveMode, killed bool, down func(*clusterCopy)) {
	f := newFakeDiscordVia(t, mode)
	if killed {
		// A copy killed while it sent leaves its claim on the message's record, which the next
		// owner waits out (outbox.Config.ClaimTTL: the request timeout and 15 s): a hand may
		// come that much later.
		f.patience = time.Minute
	}
	c := etcdtest.Start(t, etcdtest.Options{})
	copies := []*clusterCopy{startOwnedCopy(t, "c0", f, c), startOwnedCopy(t, "c1", f, c)}
	spread(t, copies...)
	humans := []fakeUser{alice, dan}
	tableID := openTable(t, f, alice, []fakeUser{dan}, opt("stripes", 4, 3), opt("timer", 3, "none"))
	rng := rand.New(rand.NewPCG(41, 1))
	mp := newMatchPlayer(t, f, []seatPlayer{{u: alice}, {u: dan}}, rng)
	t.Log("seed 41")
	downs := 0
	for over := false; !over; {
		owner := waitOwner(t, copies...)
		svc := owner.h.svc
		game, _ := svc.HeldCards(tableID)
		// Play into the game's last trick; then the owner's channel messages stop reaching
		// Discord, and the game's last cards are played.
		over = mp.step(func() bool { g, held := svc.HeldCards(tableID); return g > game || held.Len() <= 4 })
		if over {
			break
		}
		owner.net.mute.Store(true)
		over = mp.step(func() bool {
			g, _ := svc.HeldCards(tableID)
			st, _ := svc.Status(tableID)
			return g > game || st == api.StatusOver
		})
		for !over {
			over = mp.step(func() bool {
				g, _ := svc.HeldCards(tableID)
				st, _ := svc.Status(tableID)
				return g > game || st == api.StatusOver
			})
		}
		st, _ := svc.Status(tableID)
		over = st == api.StatusOver
		went := time.Now()
		down(owner)
		downs++
		// A new process in its place; the place's new owner (the other copy, or the new one once
		// the partitions are spread again) tells game's result.
		copies = slices.DeleteFunc(copies, func(cp *clusterCopy) bool { return cp == owner })
		copies = append(copies, startOwnedCopy(t, "c"+strconv.Itoa(downs+1), f, c))
		for shown := false; !shown; {
			for _, m := range f.channel(guildChannel) {
				if g := gameResult.FindStringSubmatch(m.Content); g != nil && g[1] == strconv.Itoa(game) {
					shown = true
				}
			}
			if time.Since(went) > time.Minute {
				t.Fatalf("game %d's result not in the channel a minute after copy %s went down", game, owner.name)
			}
			time.Sleep(20 * time.Millisecond)
		}
		name := waitOwner(t, copies...).name
		t.Logf("game %d: copy %s went down after its last card; game %d's result was shown %v later, copy %s owns the place now",
			game, owner.name, game, time.Since(went).Round(10*time.Millisecond), name)
	}
	for _, cp := range copies {
		if err := cp.h.a.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(500 * time.Millisecond)
	tl := checkTimeline(t, f, true, humans)
	t.Logf("%d games, a copy went down after the last card of %d of them; %d channel messages, %d edits; the longest wait for a person's turn %v",
		tl.games, downs, tl.posts, tl.edits, mp.longest.Round(10*time.Millisecond))
	if downs < 2 {
		t.Fatalf("only %d copies went down: the test needs a match of several games", downs)
	}
	checkNoRefusals(t, f)
}

// TestKilledAfterAGamesLastCard, over HTTP and over the gateway, kills the copy that owns the
// channel's place (as kill -9 does) right after each game's last card is stored, before the
// channel shows it: the other copy takes the place over and every game's result, its table
// message's last version and the match's winner reach the channel exactly once, in order; no
// table stays with live buttons.
func TestKilledAfterAGamesLastCard(t *testing.T) {
	for _, mode := range receiveModes {
		t.Run(string(mode), func(t *testing.T) {
			matchUnder(t, mode, true, func(cp *clusterCopy) {
				cp.h.allowErrors = append(cp.h.allowErrors, "etcd", "store")
				cp.kill()
			})
		})
	}
}

// TestStoppedMidMatchLosesNothing, over HTTP and over the gateway, stops the copy that owns the
// channel's place as SIGTERM does, right after each game's last card, before the channel shows
// it: what it could not tell, the copy that takes the place over tells, once and in order.
func TestStoppedMidMatchLosesNothing(t *testing.T) {
	for _, mode := range receiveModes {
		t.Run(string(mode), func(t *testing.T) {
			matchUnder(t, mode, false, func(cp *clusterCopy) {
				cp.net.mute.Store(false) // it tells what it still can within its DrainTimeout
				cp.term()
			})
		})
	}
}

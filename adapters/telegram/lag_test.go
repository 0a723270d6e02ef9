package telegram

import (
	"context"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// The lag from a move to the group showing it: each committed change of the table (heard from
// the store's watch, as it is committed) against the first table message the group gets that
// shows that change or a later one. Which version a group message shows is known from what the
// service handed the adapter (shownVersions): the text of each version of the table message. A
// table message without buttons (a game's last version, with its last trick) shows a version as
// much as one with them.

var handSeq = regexp.MustCompile(`km\|hand\|[^|]+\|([0-9a-z]+)\|`)

// shownVersions notes, for each text of a public table message the service handed the adapter,
// the newest Version with that text.
type shownVersions struct {
	mu  sync.Mutex
	of  map[string]uint64
	key map[string]string // text → its message's Key
	// marks are the versions the place must show before anyone plays on: a finished trick (its
	// table message asks to stay in view, HoldFor) and a new deal (a new table message), with
	// their message's Key.
	marks []mark
}

type mark struct {
	seq uint64
	key string
}

// noting passes the service's deliveries to the adapter, noting them in v.
type noting struct {
	v *shownVersions
	a *Adapter
}

func (n noting) Deliver(ctx context.Context, msgs []api.Message) {
	n.v.note(n.a, msgs)
	n.a.Deliver(ctx, msgs)
}

func (v *shownVersions) note(a *Adapter, msgs []api.Message) {
	v.mu.Lock()
	for _, m := range msgs {
		if (m.Kind == api.KindLive || m.Kind == api.KindLobby) && m.Target.Kind == api.ToPlace {
			text := a.rewriteCommands(messageText(m))
			v.of[text] = max(v.of[text], m.Version)
			v.key[text] = m.Key
			n := len(v.marks)
			newDeal := m.Kind == api.KindLive && (n == 0 || v.marks[n-1].key != m.Key) && strings.Contains(m.Key, "/")
			if (m.HoldFor > 0 || newDeal) && (n == 0 || v.marks[n-1].seq < m.Version) {
				v.marks = append(v.marks, mark{m.Version, m.Key})
			}
		}
	}
	v.mu.Unlock()
}

// version gives the table version a group's message shows.
func (v *shownVersions) version(c call) (uint64, bool) {
	v.mu.Lock()
	seq, ok := v.of[c.Params["text"]]
	v.mu.Unlock()
	if ok {
		return seq, true
	}
	if m := handSeq.FindStringSubmatch(c.Params["reply_markup"]); m != nil {
		seq, _ := strconv.ParseUint(m[1], 36, 64)
		return seq, true
	}
	return 0, false
}

// startLagEnv starts the bot with the service's deliveries noted (shownVersions).
func startLagEnv(t testing.TB, humans ...tgUser) (*fakeAPI, *mem.Store, *tabletest.Buffer, *env, *shownVersions) {
	t.Helper()
	f, store, logs := newFake(testToken), mem.New(), &tabletest.Buffer{}
	for _, u := range humans {
		f.setStarted(u.ID)
	}
	v := &shownVersions{of: map[string]uint64{}, key: map[string]string{}}
	e := startEnvVia(t, f, store, logs, func(a *Adapter) table.Outbox { return noting{v, a} })
	return f, store, logs, e, v
}

// groupLags gives, for each change committed at the table while watched, how long until the group
// showed it, and the longest silence in the group (no message sent or edited) while a change
// waited to be shown.
func groupLags(f *fakeAPI, v *shownVersions, committed map[uint64]time.Time) (lags []time.Duration, silence time.Duration) {
	type shown struct {
		at  time.Time
		seq uint64
	}
	var shows []shown
	var sent []time.Time // every message and edit the group got
	for _, c := range f.Calls() {
		if c.Chat != group || c.Err != "" || !slices.Contains(sends, c.Method) {
			continue
		}
		sent = append(sent, c.At)
		if c.Method != "sendMessage" && c.Method != "editMessageText" {
			continue
		}
		if seq, ok := v.version(c); ok {
			shows = append(shows, shown{c.At, seq})
		}
	}
	for seq, at := range committed {
		for _, s := range shows {
			if s.seq >= seq && !s.at.Before(at) {
				lags = append(lags, s.at.Sub(at))
				last := at
				for _, x := range sent {
					if x.After(at) && !x.After(s.at) {
						silence = max(silence, x.Sub(last))
						last = x
					}
				}
				break
			}
		}
	}
	slices.Sort(lags)
	return lags, silence
}

// watchCommits notes when each change of the store's tables was committed, until stop.
func watchCommits(store table.Watcher) (committed map[uint64]time.Time, stop func()) {
	committed = map[uint64]time.Time{}
	ctx, cancel := context.WithCancel(context.Background())
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for c := range store.Watch(ctx, 0) {
			if _, ok := committed[c.Seq]; c.Seq != 0 && !ok {
				committed[c.Seq] = time.Now()
			}
		}
	}()
	return committed, func() { cancel(); <-watched }
}

// lagReport logs the lags from the moves committed to the group showing them (groupLags) and
// gives their p95, their max and the longest silence while a move waited; it fails the test if
// fewer than least moves were measured.
func lagReport(t testing.TB, what string, f *fakeAPI, v *shownVersions, committed map[uint64]time.Time, least int) (p95, worst, silence time.Duration) {
	t.Helper()
	lags, silence := groupLags(f, v, committed)
	p50, p95, worst := quantile(lags, 0.5), quantile(lags, 0.95), quantile(lags, 1)
	t.Logf("%s: %d moves: move→group lag p50 %v, p95 %v, max %v; the longest silence while a move waited %v; at most %d group messages in a minute",
		what, len(lags), p50.Round(time.Millisecond), p95.Round(time.Millisecond), worst.Round(time.Millisecond), silence.Round(time.Millisecond), f.maxPerMinute(group))
	if len(lags) < least {
		t.Fatalf("only %d moves measured", len(lags))
	}
	return p95, worst, silence
}

func quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	return d[min(len(d)-1, int(q*float64(len(d))))]
}

// TestGroupLagAtAHumanPace: four people who think 1 to 3 s a card play a whole match. The group's
// 20 messages a minute go out evenly: never a silence of more than 10 s while a move waits to be
// shown, 95% of the moves shown within 3 s and every one within 6 s (issue 31's aims).
func TestGroupLagAtAHumanPace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		humans := []tgUser{alice, bob, carla, dan}
		f, store, logs, e, v := startLagEnv(t, humans...)
		committed, stop := watchCommits(store)
		seatAll(t, f, "timer=fast stripes=5", humans...)
		d := newDriver(t, f, 41)
		d.playThinking(humans, 2*time.Hour, 41, func() bool { return over(f) })
		settle(time.Minute)
		stop()
		p95, worst, silence := lagReport(t, "one copy", f, v, committed, 50)
		if p95 > 3*time.Second || worst > 6*time.Second || silence > 10*time.Second {
			t.Errorf("move→group lag p95 %v, max %v, a silence of %v while a move waited (at most 3 s, 6 s and 10 s)", p95, worst, silence)
		}
		if n := f.maxPerMinute(group); n > 20 {
			t.Errorf("%d group messages in a minute, limit 20", n)
		}
		e.close()
		checkClean(t, f, logs)
	})
}

// TestQuickPlayersNeverATrickBehind: four people who play the moment their hand says it is their
// turn play a whole match. The group may trail them, but never by a trick or a game: no move is
// committed before the group shows the trick finished before it, with its winner, and no move of
// a game before the group shows that game's table message, which comes after the last game's
// result (issue 31).
func TestQuickPlayersNeverATrickBehind(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		humans := []tgUser{alice, bob, carla, dan}
		f, store, logs, e, v := startLagEnv(t, humans...)
		committed, stop := watchCommits(store)
		seatAll(t, f, "timer=fast stripes=5", humans...)
		d := newDriver(t, f, 43)
		d.playSingly(humans, 2*time.Hour, func() bool { return over(f) })
		settle(time.Minute)
		stop()
		type show struct {
			at  time.Time
			seq uint64
			key string
		}
		var shows []show
		for _, c := range f.Calls() {
			if c.Chat == group && c.Err == "" && (c.Method == "sendMessage" || c.Method == "editMessageText") {
				v.mu.Lock()
				seq, ok := v.of[c.Params["text"]]
				key := v.key[c.Params["text"]]
				v.mu.Unlock()
				if ok {
					shows = append(shows, show{c.At, seq, key})
				}
			}
		}
		checked, tricks, deals := 0, 0, 0
		for _, m := range v.marks {
			if strings.HasSuffix(m.key, "/1") && m.seq == v.marks[0].seq {
				continue // the first deal follows the lobby
			}
			// Every later move waits for the group to show this mark.
			var shownAt time.Time
			for _, s := range shows {
				if s.key == m.key && s.seq >= m.seq {
					shownAt = s.at
					break
				}
			}
			for seq, at := range committed {
				if seq <= m.seq || seq > m.seq+1 {
					continue
				}
				checked++
				if shownAt.IsZero() || at.Before(shownAt) {
					t.Errorf("move %d committed at %v, before the group showed version %d of %s (at %v)", seq, at.Format("15:04:05.000"), m.seq, m.key, shownAt.Format("15:04:05.000"))
				}
			}
			if strings.Contains(m.key, "/live/") && m.seq == firstOf(v.marks, m.key) {
				deals++
			} else {
				tricks++
			}
		}
		t.Logf("%d moves after %d finished tricks and %d deals checked; %d moves in all", checked, tricks, deals, d.moves)
		if checked < 20 || deals < 2 {
			t.Errorf("only %d moves after %d deals checked", checked, deals)
		}
		if n := f.maxPerMinute(group); n > 20 {
			t.Errorf("%d group messages in a minute, limit 20", n)
		}
		e.close()
		checkClean(t, f, logs)
	})
}

// firstOf gives the first mark's version of a Key.
func firstOf(marks []mark, key string) uint64 {
	for _, m := range marks {
		if m.key == key {
			return m.seq
		}
	}
	return 0
}

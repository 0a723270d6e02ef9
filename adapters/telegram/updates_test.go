package telegram

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kontermatt/kontermatt/adapters/internal/chat"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// An update fetched but not yet handled when the bot dies is not lost: it was not confirmed, so
// Telegram sends it again and the restarted bot applies it. Here Bob's Join waits behind Olga's
// /stop in the same chat, whose admin check hangs when the process is killed.
func TestCrashBetweenFetchAndHandling(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, store, logs, e := startedEnv(t, alice, bob)
		f.command(alice, group, 0, "/new@"+botUsername+" timer=none")
		settle(3 * time.Second)
		tableID := tableOf(t, f)
		release := f.stallCalls("getChatMember")
		f.command(olga, group, 0, "/stop")
		press := mustPress(t, f, bob, group, api.VerbJoin, "")
		settle(time.Second) // both fetched; the /stop is being handled
		if _, answered := f.answer(press); answered {
			t.Fatal("the press was handled before the crash: the test needs it waiting")
		}
		// kill -9: no more requests, nothing applied.
		e.net.cut.Store(true)
		e.svc.Close()
		release()
		e.crash()
		if joined(store, tableID, bob) {
			t.Fatal("the dying process applied the press")
		}

		e = startEnv(t, f, store, logs)
		settle(5 * time.Second)
		if !joined(store, tableID, bob) {
			t.Errorf("Bob's press was lost in the crash; Telegram still holds updates %v", f.pending())
		}
		if text, alert := answerOf(t, f, press); alert {
			t.Errorf("the press delivered again was refused: %s", text)
		}
		e.close()
		// A clean stop confirms what it handled: the next start gets nothing twice.
		if p := f.pending(); len(p) > 0 {
			t.Errorf("updates %v not confirmed after a clean stop", p)
		}
		checkClean(t, f, logs)
	})
}

// joined reports whether the table's log has the user's join.
func joined(store *mem.Store, tableID string, u tgUser) bool {
	return slices.ContainsFunc(store.Log(tableID), func(l table.LogEntry) bool {
		return l.Verb == api.VerbJoin && l.Actor == fmt.Sprintf("tg:%d", u.ID)
	})
}

// The bot asks for the next batch, which confirms the last, only after handling it: while an
// update is being handled no getUpdates confirms it.
func TestNextPollWaitsForTheBatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, _, logs, e := startedEnv(t, alice)
		f.command(alice, group, 0, "/new@"+botUsername)
		settle(3 * time.Second)
		release := f.stallCalls("getChatMember")
		f.command(olga, group, 0, "/stop")
		f.mu.Lock()
		stop := f.nextUpd
		f.mu.Unlock()
		confirmed := func() bool {
			for _, c := range f.Calls() {
				if c.Method == "getUpdates" && atoi(c.Params["offset"]) > stop {
					return true
				}
			}
			return false
		}
		settle(20 * time.Second) // within the request timeout of the hanging check
		if confirmed() {
			t.Error("the update was confirmed while it was being handled")
		}
		release()
		settle(5 * time.Second)
		if !confirmed() {
			t.Error("the update was not confirmed after it was handled")
		}
		e.close()
		checkClean(t, f, logs)
	})
}

// TestConnectedFollowsThePolls: the health check's view is "not yet" before the first poll,
// fine while Telegram answers, the (redacted) error while it does not, and fine again after.
func TestConnectedFollowsThePolls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, store, logs := newFake(testToken), mem.New(), &tabletest.Buffer{}
		a, err := New(testConfig(f, store, logs))
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Connected(); !errors.Is(err, chat.ErrNotYet) {
			t.Errorf("before Run: %v", err)
		}
		a.Close()
		e := startEnv(t, f, store, logs)
		if err := e.a.Connected(); err != nil {
			t.Errorf("polling: %v", err)
		}
		f.failNet("getUpdates", 3)
		f.command(alice, group, 0, "/help@"+botUsername) // ends the long poll in progress
		settle(2 * time.Second)
		err = e.a.Connected()
		if err == nil || !strings.Contains(err.Error(), "connection reset") || strings.Contains(err.Error(), testToken) {
			t.Errorf("while getUpdates fails: %v", err)
		}
		settle(20 * time.Second)
		if err := e.a.Connected(); err != nil {
			t.Errorf("after the network came back: %v", err)
		}
		e.close()
	})
}

// A slow chat holds only itself: while an admin check in one group hangs (getChatMember waits
// out its 30 s), a press in another group is answered at once, and the slow group's later press
// waits its turn behind the command being handled, in order.
func TestSlowChatDoesNotHoldOthers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const other int64 = -1007654321
		f, _, logs, e := startedEnv(t, alice, bob)
		f.command(alice, group, 0, "/new@"+botUsername)
		f.command(bob, other, 0, "/new@"+botUsername)
		settle(3 * time.Second)
		release := f.stallCalls("getChatMember")
		f.command(olga, group, 0, "/stop") // needs the admin check, which hangs
		settle(time.Second)
		slow := mustPress(t, f, dan, group, api.VerbJoin, "")
		fast := mustPress(t, f, carla, other, api.VerbJoin, "")
		settle(2 * time.Second)
		if _, ok := f.answer(fast); !ok {
			t.Error("a press in another group waited for the slow group's admin check")
		}
		if _, ok := f.answer(slow); ok {
			t.Error("a press in the slow group overtook the command sent before it")
		}
		release()
		settle(5 * time.Second)
		if _, ok := f.answer(slow); !ok {
			t.Error("the slow group's press was not handled after its admin check")
		}
		e.close()
		checkClean(t, f, logs)
	})
}

// Two processes polling with one token take each other's updates (Telegram ends one's long poll
// with 409 "terminated by other getUpdates request"). Each says so clearly: an ERROR line that
// names the cause, not a warning at every retry, and the health check reports it all along, not
// only between two polls. Once the other process is gone, the health check is fine again.
func TestTwoProcessesOneToken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, _, logs, e := startedEnv(t)
		logs2 := &tabletest.Buffer{}
		e2 := startEnv(t, f, mem.New(), logs2)
		for range 10 {
			settle(30 * time.Second)
			for i, env := range []*env{e, e2} {
				if err := env.a.Connected(); err == nil || !strings.Contains(err.Error(), "only one") {
					t.Errorf("process %d's health check while another polls: %v", i+1, err)
				}
			}
		}
		for i, l := range []*tabletest.Buffer{logs, logs2} {
			lines := 0
			for line := range strings.SplitSeq(l.String(), "\n") {
				if strings.Contains(line, "Conflict") || strings.Contains(line, "another process") {
					lines++
					if !strings.Contains(line, "level=ERROR") {
						t.Errorf("process %d: %s", i+1, line)
					}
				}
			}
			if lines == 0 || lines > 2 {
				t.Errorf("process %d logged the conflict in %d lines over 5 minutes, want 1 or 2", i+1, lines)
			}
		}
		e2.close()
		settle(15 * time.Minute)
		if err := e.a.Connected(); err != nil {
			t.Errorf("health check with the other process gone: %v", err)
		}
		e.close()
		checkClean(t, f, logs)
	})
}

package discord

import (
	"strings"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/storage/etcdstore"
	"github.com/kontermatt/kontermatt/storage/etcdstore/etcdtest"
)

// TestQuorumLossRefusedInTime (issue 32, measured): the bot on a three-member etcd cluster (the
// store's default timeout and election timeout) loses its quorum, two members stopped. A press
// made at once and a slash command after it then get their refusal, err.unavailable, for the
// user alone, within Discord's 3 s ("You must send an initial response within 3 seconds of
// receiving the event", docs: Interactions, Receiving and Responding), over the gateway and over
// HTTP; the refusal is the answer itself, or (a command the service holds past AckAfter is
// acknowledged meanwhile) a follow-up within the 3 s. Nothing is applied: the lobby stays as it
// was. The times are logged as MEASURED lines; on a loaded machine they are noisy.
func TestQuorumLossRefusedInTime(t *testing.T) {
	eachMode(t, func(t *testing.T, f *fakeDiscord) {
		c := etcdtest.Start(t, etcdtest.Options{})
		st, err := etcdstore.Open(t.Context(), etcdstore.Options{Endpoints: c.Endpoints(), Prefix: "quorum/"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		h := startHarness(t, f, st, st)
		h.allowErrors = append(h.allowErrors, "etcd", "store", "database")
		if r := f.slash(alice, guildChannel, "new"); r.Type != 4 {
			t.Fatalf("/km new: %+v", r)
		}
		lobby, join := waitButton(f, "the lobby", api.VerbJoin)
		if err := h.a.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
		f.mu.Lock()
		posted := len(f.order[guildChannel])
		f.mu.Unlock()

		c.Stop(1)
		c.Stop(2)
		// refused waits for the interaction's refusal, in its answer or a later one, and gives the
		// time from the interaction to it.
		// refused waits for the interaction's refusal, in its answer or, after a deferred
		// answer, in a follow-up, and gives the time from the interaction to it.
		refused := func(what string, in *fakeInteraction, lang string) {
			t.Helper()
			want := ephemeralText(lang, "err.unavailable")
			var seen time.Time
			var got string
			private := false
			f.waitForOr(what+"'s refusal", func() bool {
				if in.Resp == nil {
					return false
				}
				got = in.Resp.Content
				if in.Resp.Type == 4 && strings.Contains(got, want) {
					seen, private = in.Responded, in.Resp.Flags&64 != 0
					return true
				}
				for _, id := range append([]string{in.Original}, in.Followups...) {
					if m, ok := f.msgs[id]; ok && strings.Contains(m.Content, want) {
						got, seen, private = m.Content, time.Now(), m.ForUser == in.User.ID
						return true
					}
				}
				return false
			}, func() string { return "\nanswered " + got })
			took := seen.Sub(in.Made)
			f.mu.Lock()
			typ := in.Resp.Type
			f.mu.Unlock()
			t.Logf("MEASURED quorum lost, %s: the refusal reached the user %v after the interaction (first answer of type %d; limit %v)",
				what, took.Round(time.Millisecond), typ, answerWindow)
			if took > answerWindow || !private {
				t.Errorf("%s: the refusal came %v after the interaction (first answer of type %d), for the user alone %v; want it within %v, for the user alone",
					what, took, typ, private, answerWindow)
			}
		}
		refused("a press (Bob joins)", f.pressAsync(bob, lobby, join.CustomID), "de")
		refused("/km join (Carla)", f.dispatch(carla, 2, guildChannel, slashData("join", nil), nil), "fr")

		time.Sleep(time.Second) // time for a change, if one were coming
		f.mu.Lock()
		defer f.mu.Unlock()
		if m := f.msgs[lobby.ID]; strings.Contains(m.Content, bob.Name) || strings.Contains(m.Content, carla.Name) {
			t.Errorf("the lobby shows a refused join:\n%s", m.Content)
		}
		if n := len(f.order[guildChannel]); n != posted {
			t.Errorf("%d messages in the channel after the refusals, %d before", n, posted)
		}
	})
}

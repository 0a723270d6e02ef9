package verbs_test

import (
	"errors"
	"testing"

	"github.com/kontermatt/kontermatt/core/coach/verbs"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// coach on|off through its seam: registered in a service's Config.Verbs, answering the commands
// Handle is given. The fakes are of the engine's ports: the Coach (the verb asks only whether
// there is one) and a memory store whose compare-and-swap a test may fail.

var (
	dm  = api.Place{Platform: "telegram", Chat: "1"}
	ann = api.Player{ID: "tg:1", Name: "Ann"}
)

// coach is a Coach that panics if asked anything but to close: the verb only asks whether the
// service has one.
type coach struct{ table.Coach }

func (coach) Close() {} // the service closes its coach

func newService(t *testing.T, st *tabletest.Failing, c table.Coach) *table.Service {
	t.Helper()
	svc := table.New(table.Config{Store: st, Coach: c, Verbs: verbs.Verbs(c, nil)})
	t.Cleanup(svc.Close)
	return svc
}

func coachCmd(p api.Player, args ...string) api.Command {
	return api.Command{Place: dm, Actor: p, Verb: api.VerbCoach, Args: args, Private: true}
}

func in(lang string) api.Player { p := ann; p.Locale = lang; return p }

func TestCoachVerb(t *testing.T) {
	cases := []struct {
		name string
		// before are commands answered first; cmd is the one whose reply is checked.
		before  []api.Command
		cmd     api.Command
		noCoach bool
		swap    error // the store's writes fail with it
		kind    api.Kind
		reason  string // a refusal's catalog key
		text    string
		err     error
	}{
		{name: "off until switched on", cmd: coachCmd(ann), kind: api.KindNotice, text: i18n.T("en", "coach.off")},
		{name: "on", cmd: coachCmd(ann, "ON"), kind: api.KindNotice, text: i18n.T("en", "coach.on")},
		{name: "kept on", before: []api.Command{coachCmd(ann, "on")}, cmd: coachCmd(in("fr")),
			kind: api.KindNotice, text: i18n.T("fr", "coach.on")},
		{name: "off again in German", before: []api.Command{coachCmd(ann, "on")}, cmd: coachCmd(in("de"), "aus"),
			kind: api.KindNotice, text: i18n.T("de", "coach.off")},
		{name: "kept off", before: []api.Command{coachCmd(ann, "on"), coachCmd(ann, "nein")}, cmd: coachCmd(ann),
			kind: api.KindNotice, text: i18n.T("en", "coach.off")},
		{name: "on in Luxembourgish", cmd: coachCmd(in("lb"), "jo"), kind: api.KindNotice, text: i18n.T("lb", "coach.on")},
		{name: "neither on nor off", cmd: coachCmd(in("lb"), "maybe"),
			kind: api.KindError, reason: "coach.usage", text: i18n.T("lb", "coach.usage")},
		{name: "a bot without a coach says so", noCoach: true, cmd: coachCmd(in("de"), "on"),
			kind: api.KindError, reason: "coach.none", text: i18n.T("de", "coach.none")},
		{name: "the group's anonymous admin is no person",
			cmd:  api.Command{Place: api.Place{Platform: "telegram", Chat: "-100"}, Actor: ann, Verb: api.VerbCoach, Args: []string{"on"}, Anonymous: true, Admin: true},
			kind: api.KindError, reason: "err.anonymous", text: i18n.T("en", "err.anonymous")},
		{name: "a choice not stored", swap: table.ErrUnavailable, cmd: coachCmd(ann, "on"),
			kind: api.KindError, reason: "err.unavailable", text: i18n.T("en", "err.unavailable"), err: table.ErrNotStored},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := tabletest.NewFailing(mem.New())
			var c table.Coach = coach{}
			if tc.noCoach {
				c = nil
			}
			svc := newService(t, st, c)
			for _, b := range tc.before {
				if _, err := svc.Handle(t.Context(), b); err != nil {
					t.Fatal(err)
				}
			}
			st.FailOn("Swap", tc.swap)
			msgs, err := svc.Handle(t.Context(), tc.cmd)
			if !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
				t.Fatalf("Handle's error %v, want %v", err, tc.err)
			}
			if len(msgs) != 1 {
				t.Fatalf("%d messages: %+v", len(msgs), msgs)
			}
			m := msgs[0]
			if m.Kind != tc.kind || m.Reason != tc.reason || m.Text != tc.text {
				t.Errorf("kind %q reason %q text %q, want %q %q %q", m.Kind, m.Reason, m.Text, tc.kind, tc.reason, tc.text)
			}
			if m.Target.Kind != api.ToActor || m.Target.Player.ID != ann.ID {
				t.Errorf("to %+v, want the actor", m.Target)
			}
		})
	}
}

// TestTheChoiceOutlivesTheService: coach on is kept in the store, so a bot started again on it
// still reviews the person's games.
func TestTheChoiceOutlivesTheService(t *testing.T) {
	st := tabletest.NewFailing(mem.New())
	first := table.New(table.Config{Store: st, Coach: coach{}, Verbs: verbs.Verbs(coach{}, nil)})
	if _, err := first.Handle(t.Context(), coachCmd(ann, "on")); err != nil {
		t.Fatal(err)
	}
	first.Close()
	msgs, err := newService(t, st, coach{}).Handle(t.Context(), coachCmd(ann))
	if err != nil || len(msgs) != 1 || msgs[0].Text != i18n.T("en", "coach.on") {
		t.Fatalf("after a restart: %v %+v", err, msgs)
	}
}

package verbs_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/options"
	"github.com/kontermatt/kontermatt/core/places"
	"github.com/kontermatt/kontermatt/core/places/verbs"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// settings through its seam: registered in a service's Config.Verbs, answering the commands
// Handle is given. The only fake is of the engine's port: a memory store, whose compare-and-swap
// a test may make fail.

var (
	cafe = api.Place{Platform: "telegram", Chat: "-100", Title: "Café"}
	ann  = api.Player{ID: "tg:1", Name: "Ann"}
	ben  = api.Player{ID: "tg:2", Name: "Ben"}
	cleo = api.Player{ID: "tg:3", Name: "Cleo"}
)

type fixture struct {
	svc   *table.Service
	store *tabletest.Failing
	out   *tabletest.Outbox
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{store: tabletest.NewFailing(mem.New()), out: &tabletest.Outbox{}}
	s := &verbs.Settings{Places: places.New(f.store, nil)}
	f.svc = table.New(table.Config{Store: f.store, Verbs: s.Verbs(), Outboxes: map[string]table.Outbox{"telegram": f.out}})
	t.Cleanup(f.svc.Close)
	return f
}

func (f *fixture) handle(t *testing.T, c api.Command) ([]api.Message, error) {
	t.Helper()
	if c.Place == (api.Place{}) {
		c.Place = cafe
	}
	return f.svc.Handle(t.Context(), c)
}

func (f *fixture) ask(t *testing.T, c api.Command) api.Message {
	t.Helper()
	if c.Place == (api.Place{}) {
		c.Place = cafe
	}
	return tabletest.Reply(t, f.svc, c)
}

// seated opens a table at the café with Ann and Ben at it (its lobby).
func seated(t *testing.T, f *fixture) {
	t.Helper()
	for _, c := range []api.Command{{Actor: ann, Verb: api.VerbNew}, {Actor: ben, Verb: api.VerbJoin}} {
		if msgs, err := f.handle(t, c); err != nil || len(msgs) > 0 && msgs[0].Kind == api.KindError {
			t.Fatalf("%s: %v %+v", c.Verb, err, msgs)
		}
	}
}

func settings(p api.Player, args ...string) api.Command {
	return api.Command{Actor: p, Verb: api.VerbSettings, Args: args}
}

func admin(p api.Player, args ...string) api.Command {
	c := settings(p, args...)
	c.Admin = true
	return c
}

func de(p api.Player) api.Player { p.Locale = "de"; return p }

// line is how the reply lists options typed as args.
func line(lang string, args ...string) string {
	o, err := options.Parse(args)
	if err != nil {
		panic(err)
	}
	return options.Line(lang, o)
}

func TestSettings(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, f *fixture)
		cmd   api.Command
		// The one reply: its kind, Reason, texts it must and must not hold; Handle's error.
		kind        api.Kind
		reason      string
		has, hasNot []string
		err         error
	}{
		{name: "shown to anyone", cmd: settings(cleo),
			kind: api.KindReply, has: []string{i18n.T("en", "settings.title", "Café"), line("en"), i18n.T("en", "settings.how")},
			hasNot: []string{i18n.T("en", "settings.lang", "")}},
		{name: "shown in the reader's language, as changed", setup: func(t *testing.T, f *fixture) {
			f.ask(t, admin(ann, "stripes=3", "lang=lb"))
		}, cmd: settings(de(cleo)),
			kind: api.KindReply, has: []string{i18n.T("de", "settings.title", "Café"), line("de", "stripes=3"),
				i18n.T("de", "settings.lang", i18n.T("lb", "lang.name"))}},
		{name: "an admin changes them at once", cmd: admin(ann, "stripes=3"),
			kind: api.KindNotice, has: []string{i18n.T("en", "settings.saved"), line("en", "stripes=3")}},
		{name: "changes are kept beside earlier ones", setup: func(t *testing.T, f *fixture) {
			f.ask(t, admin(ann, "stripes=3"))
		}, cmd: admin(ann, "timer=relaxed"),
			kind: api.KindNotice, has: []string{line("en", "stripes=3", "timer=relaxed")}},
		{name: "not in a private chat", cmd: api.Command{Place: api.Place{Platform: "telegram", Chat: "1"}, Actor: de(ann),
			Verb: api.VerbSettings, Admin: true, Private: true},
			kind: api.KindError, reason: "settings.private", has: []string{i18n.T("de", "settings.private")}},
		{name: "an option out of range", cmd: admin(de(ann), "stripes=99"),
			kind: api.KindError, reason: "err.option.range", has: []string{"stripes", "20"}},
		{name: "an unknown option", cmd: admin(ann, "colour=red"),
			kind: api.KindError, reason: "err.option.unknown", has: []string{"colour"}},
		{name: "an unknown language", cmd: admin(de(ann), "lang=xx"),
			kind: api.KindError, reason: "err.bad_lang", has: []string{i18n.T("de", "err.bad_lang", "xx")}},
		{name: "nobody seated, no admin", cmd: settings(de(ann), "stripes=3"),
			kind: api.KindError, reason: "settings.who", has: []string{i18n.T("de", "settings.who")}},
		{name: "not at the table", setup: seated, cmd: settings(cleo, "stripes=3"),
			kind: api.KindError, reason: "settings.who"},
		{name: "the first at the table asks", setup: seated, cmd: settings(ann, "stripes=3"),
			kind: api.KindNotice, has: []string{i18n.T("en", "settings.vote", "Ann", 1, 2)}},
		{name: "everyone at the table asked the same", setup: func(t *testing.T, f *fixture) {
			seated(t, f)
			f.ask(t, settings(ann, "stripes=3"))
		}, cmd: settings(ben, "stripes=3"),
			kind: api.KindNotice, has: []string{i18n.T("en", "settings.saved"), line("en", "stripes=3")}},
		{name: "asked for something else", setup: func(t *testing.T, f *fixture) {
			seated(t, f)
			f.ask(t, settings(ann, "stripes=3"))
		}, cmd: settings(ben, "stripes=5"),
			kind: api.KindNotice, has: []string{i18n.T("en", "settings.vote", "Ben", 1, 2)}},
		{name: "a vote not stored", setup: func(t *testing.T, f *fixture) {
			seated(t, f)
			f.store.FailOn("Swap", table.ErrUnavailable)
		}, cmd: settings(ann, "stripes=3"),
			kind: api.KindError, reason: "err.unavailable", err: table.ErrNotStored},
		{name: "a change not stored", setup: func(t *testing.T, f *fixture) { f.store.FailOn("Swap", table.ErrUnavailable) },
			cmd: admin(ann, "stripes=3"), kind: api.KindError, reason: "err.unavailable", err: table.ErrNotStored},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			if tc.setup != nil {
				tc.setup(t, f)
			}
			msgs, err := f.handle(t, tc.cmd)
			if !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
				t.Fatalf("Handle's error %v, want %v", err, tc.err)
			}
			if len(msgs) != 1 {
				t.Fatalf("%d messages: %+v", len(msgs), msgs)
			}
			m := msgs[0]
			want := i18n.Match(tc.cmd.Actor.Locale)
			if want == "" {
				want = "en"
			}
			if m.Kind != tc.kind || m.Reason != tc.reason || m.Lang != want {
				t.Fatalf("kind %q reason %q lang %q, want %q %q %q: %q", m.Kind, m.Reason, m.Lang, tc.kind, tc.reason, want, m.Text)
			}
			if m.Target.Kind != api.ToActor || m.Target.Player.ID != tc.cmd.Actor.ID {
				t.Errorf("to %+v, want the actor", m.Target)
			}
			tabletest.Says(t, m.Text, tc.has, tc.hasNot)
		})
	}
}

// TestNewTablesStartFromThem: what settings saved is what the place's next table starts with,
// as its lobby shows it to the group.
func TestNewTablesStartFromThem(t *testing.T) {
	f := newFixture(t)
	f.ask(t, admin(ann, "stripes=3", "lang=de"))
	if msgs, err := f.handle(t, api.Command{Actor: ben, Verb: api.VerbNew}); err != nil || len(msgs) > 0 && msgs[0].Kind == api.KindError {
		t.Fatalf("new: %v %+v", err, msgs)
	}
	delivered := f.out.Take()
	for _, m := range delivered {
		if m.Kind == api.KindLobby && m.Target.Kind == api.ToPlace {
			if m.Lang != "de" || !strings.Contains(m.Text, line("de", "stripes=3")) {
				t.Errorf("the lobby in %q:\n%s", m.Lang, m.Text)
			}
			return
		}
	}
	t.Fatalf("no lobby delivered: %+v", delivered)
}

// TestAVoteWaitsForNoCommit: who sits at the place's table is read as last stored, so a vote is
// counted while a command of that table hangs in its commit, which holds the table's lock.
func TestAVoteWaitsForNoCommit(t *testing.T) {
	f := newFixture(t)
	seated(t, f)
	hang := tabletest.NewHang()
	hang.At(f.svc.TableAt(cafe))
	f.store.Hang = hang
	joined := make(chan struct{})
	go func() {
		defer close(joined)
		f.svc.Handle(context.Background(), api.Command{Place: cafe, Actor: cleo, Verb: api.VerbJoin}) // hangs until released
	}()
	<-hang.Stuck
	answered := make(chan api.Message, 1)
	go func() {
		vote := settings(ann, "stripes=3")
		vote.Place = cafe
		msgs, _ := f.svc.Handle(context.Background(), vote)
		answered <- msgs[0]
	}()
	var m api.Message
	select {
	case m = <-answered:
	case <-time.After(5 * time.Second):
		t.Error("the vote waited for the table's commit")
		close(hang.Release)
		m = <-answered
	}
	// Cleo's join is not stored yet: Ann and Ben decide.
	if want := i18n.T("en", "settings.vote", "Ann", 1, 2); m.Text != want {
		t.Errorf("the vote: %q, want %q", m.Text, want)
	}
	select {
	case <-hang.Release:
	default:
		close(hang.Release)
	}
	<-joined
}

// TestWhoIsAwayDoesNotVote: a person a computer plays for, after their turn timed out twice, is
// not there to decide the place's settings; the others decide without them.
func TestWhoIsAwayDoesNotVote(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t)
		dan := api.Player{ID: "tg:4", Name: "Dan"}
		cmds := []api.Command{{Actor: ann, Verb: api.VerbNew, Args: []string{"timer=fast"}},
			{Actor: ben, Verb: api.VerbJoin}, {Actor: cleo, Verb: api.VerbJoin}, {Actor: dan, Verb: api.VerbJoin},
			{Actor: ann, Verb: api.VerbDeal}}
		for _, c := range cmds {
			if msgs, err := f.handle(t, c); err != nil || len(msgs) > 0 && msgs[0].Kind == api.KindError {
				t.Fatalf("%s: %v %+v", c.Verb, err, msgs)
			}
		}
		if m := f.ask(t, settings(ann, "stripes=3")); m.Text != i18n.T("en", "settings.vote", "Ann", 1, 4) {
			t.Fatalf("before anyone is away: %q", m.Text)
		}
		time.Sleep(time.Hour) // the first to move is reminded, then marked away
		synctest.Wait()
		// Each asks for another change: the one away is refused, the three others decide.
		var away, votes []string
		for _, p := range []api.Player{ann, ben, cleo, dan} {
			m := f.ask(t, settings(p, "stripes=5"))
			switch {
			case m.Reason == "settings.who":
				away = append(away, p.Name)
			case len(votes) < 2:
				votes = append(votes, p.Name)
				if want := i18n.T("en", "settings.vote", p.Name, len(votes), 3); m.Text != want {
					t.Errorf("%s's vote: %q, want %q", p.Name, m.Text, want)
				}
			default:
				votes = append(votes, p.Name)
				if !strings.Contains(m.Text, i18n.T("en", "settings.saved")) {
					t.Errorf("the third vote: %q", m.Text)
				}
			}
		}
		if len(away) != 1 || len(votes) != 3 {
			t.Errorf("away %v, voted %v: want one away", away, votes)
		}
	})
}

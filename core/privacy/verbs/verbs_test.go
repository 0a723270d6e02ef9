package verbs_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/league"
	"github.com/kontermatt/kontermatt/core/league/keeper"
	"github.com/kontermatt/kontermatt/core/privacy/verbs"
	"github.com/kontermatt/kontermatt/core/store"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// mydata, forget and lang through their seam: registered in a service's Config.Verbs, answering
// the commands Handle is given. The only fakes are of the engine's ports (core/table/tabletest's):
// a memory store, which a test may make fail where the verbs read or write it, and an outbox.

var (
	now  = time.Date(2026, 11, 15, 12, 0, 0, 0, time.UTC)
	cafe = api.Place{Platform: "telegram", Chat: "-100", Title: "Café"}
	ann  = api.Player{ID: "tg:1", Name: "Ann"}
	ben  = api.Player{ID: "tg:2", Name: "Ben"}
	cleo = api.Player{ID: "tg:3", Name: "Cleo"}
	dan  = api.Player{ID: "tg:4", Name: "Dan"}
)

type fixture struct {
	svc   *table.Service
	store *tabletest.Failing
	keep  *keeper.Keeper
	out   *tabletest.Outbox
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{store: tabletest.NewFailing(mem.New()), out: &tabletest.Outbox{}}
	f.keep = keeper.New(f.store, false, nil)
	p := &verbs.People{League: f.keep.Cache}
	f.svc = table.New(table.Config{Store: f.store, League: f.keep, Verbs: p.Verbs(), Now: func() time.Time { return now },
		Outboxes: map[string]table.Outbox{"telegram": f.out}})
	t.Cleanup(f.svc.Close)
	return f
}

// keepMatch keeps a match Ann and Cleo won against Ben and Dan at the café, as a match end does:
// its record, and the league learned from it (rated, so each has a rating).
func keepMatch(t *testing.T, f *fixture) {
	t.Helper()
	ctx := t.Context()
	var seats [4]league.Seat
	var stored [4]table.StoredSeat
	for i, p := range []api.Player{ann, ben, cleo, dan} {
		seats[i] = league.Seat{ID: p.ID, Name: p.Name}
		stored[i] = table.StoredSeat{ID: p.ID, Name: p.Name}
	}
	u, err := f.keep.Cache.Learn(ctx, league.Match{Key: "t1/m1", Place: cafe.Key(), End: now.Add(-time.Hour), Seats: seats, Winner: 0,
		Games: []league.Game{{No: 1, Forehand: 1, TrumpTeam: 1, Outcome: core.WonByA, Points: [2]int{70, 50}, TricksWon: [2]int{4, 2}}}})
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(table.StoredMatch{Format: table.StoredMatchFormat, Table: "t1", Match: 1, Place: cafe.Key(),
		Seats: stored, Rules: core.DefaultRules().Record(), Stopped: true})
	if err != nil {
		t.Fatal(err)
	}
	var kv []table.KVEntry
	for _, e := range u.Entries {
		kv = append(kv, table.KVEntry{Bucket: e.Bucket, Key: e.Key, Value: e.Value})
	}
	err = f.store.Commit(ctx, table.Change{Records: []table.Record{{Key: "t1/m1", Data: data}}, KV: kv})
	f.keep.Cache.Done(u, err == nil)
	if err != nil {
		t.Fatal(err)
	}
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

func anonymous(p api.Player) api.Command {
	return api.Command{Actor: p, Verb: api.VerbLang, Args: []string{"de"}, Anonymous: true, Admin: true}
}

func TestPeopleVerbs(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, f *fixture)
		cmd   api.Command
		// The one reply: its kind, Reason, language, texts it must and must not hold; whether
		// it goes to the actor alone (Secret, with a Public text that says so).
		kind        api.Kind
		reason      string
		lang        string
		has, hasNot []string
		secret      bool
		err         error // Handle's
	}{
		{name: "mydata of someone new", cmd: api.Command{Actor: ann, Verb: api.VerbMyData},
			kind: api.KindReply, lang: "en", secret: true,
			has:    []string{i18n.T("en", "mydata.title", "Ann", "tg:1"), i18n.T("en", "mydata.shown"), i18n.N("en", "mydata.kept", 30)},
			hasNot: []string{i18n.T("en", "mydata.global", ""), "Café"}},
		{name: "mydata after a match", setup: keepMatch, cmd: api.Command{Actor: ann, Verb: api.VerbMyData},
			kind: api.KindReply, lang: "en", secret: true,
			has: []string{i18n.T("en", "mydata.here", "Café", 1, ""), i18n.T("en", "mydata.global", "")}},
		{name: "mydata after choices", setup: func(t *testing.T, f *fixture) {
			f.ask(t, api.Command{Actor: ann, Verb: api.VerbLang, Args: []string{"fr"}})
		}, cmd: api.Command{Actor: ann, Verb: api.VerbMyData},
			kind: api.KindReply, lang: "fr", secret: true,
			has: []string{i18n.T("fr", "mydata.lang", i18n.T("fr", "lang.name")), i18n.T("fr", "mydata.shown")}},
		{name: "forget asks first", setup: keepMatch, cmd: api.Command{Actor: ann, Verb: api.VerbForget},
			kind: api.KindReply, lang: "en", secret: true, has: []string{i18n.T("en", "forget.ask")}},
		{name: "forget yes", setup: keepMatch, cmd: api.Command{Actor: ann, Verb: api.VerbForget, Args: []string{"YES"}},
			kind: api.KindNotice, reason: api.ReasonForgotten, lang: "en", secret: true,
			has: []string{i18n.N("en", "forget.done", 1)}, hasNot: []string{i18n.T("en", "forget.later", "")}},
		{name: "forget yes, the store keeps older versions a while", setup: func(t *testing.T, f *fixture) {
			f.store.FailOn("Forget", &store.ForgetPending{By: now.Add(2 * time.Hour), Cause: errors.New("not compacted yet")})
		}, cmd: api.Command{Actor: ann, Verb: api.VerbForget, Args: []string{"yes"}},
			kind: api.KindNotice, reason: api.ReasonForgotten, lang: "en", secret: true,
			has: []string{i18n.N("en", "forget.done", 0) + " " + i18n.T("en", "forget.later", "2026-11-15 14:00 UTC")}},
		{name: "forget yes when the store does not answer", setup: func(t *testing.T, f *fixture) {
			f.store.FailOn("Records", store.ErrUnavailable)
		}, cmd: api.Command{Actor: api.Player{ID: ann.ID, Name: ann.Name, Locale: "lb"}, Verb: api.VerbForget, Args: []string{"yes"}},
			kind: api.KindError, reason: "forget.unfinished", lang: "lb", has: []string{i18n.T("lb", "forget.unfinished")}},
		{name: "lang", cmd: api.Command{Actor: ann, Verb: api.VerbLang, Args: []string{"de"}},
			kind: api.KindNotice, lang: "de", has: []string{i18n.T("de", "note.lang_player")}},
		{name: "lang as a locale", cmd: api.Command{Actor: ann, Verb: api.VerbLang, Args: []string{"lb-LU"}},
			kind: api.KindNotice, lang: "lb", has: []string{i18n.T("lb", "note.lang_player")}},
		{name: "lang unknown, refused in the actor's language", cmd: api.Command{Actor: api.Player{ID: "tg:1", Name: "Ann", Locale: "fr"}, Verb: api.VerbLang, Args: []string{"xx"}},
			kind: api.KindError, reason: "err.bad_lang", lang: "fr", has: []string{i18n.T("fr", "err.bad_lang", "xx")}},
		{name: "lang of the group's anonymous admin", cmd: anonymous(ann),
			kind: api.KindError, reason: "err.anonymous", lang: "en"},
		{name: "lang not stored", setup: func(t *testing.T, f *fixture) { f.store.FailOn("Swap", store.ErrUnavailable) },
			cmd:  api.Command{Actor: ann, Verb: api.VerbLang, Args: []string{"de"}},
			kind: api.KindError, reason: "err.unavailable", lang: "en", err: table.ErrNotStored},
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
			if m.Kind != tc.kind || m.Reason != tc.reason || m.Lang != tc.lang {
				t.Fatalf("kind %q reason %q lang %q, want %q %q %q: %q", m.Kind, m.Reason, m.Lang, tc.kind, tc.reason, tc.lang, m.Text)
			}
			if m.Target.Kind != api.ToActor || m.Target.Player.ID != tc.cmd.Actor.ID {
				t.Errorf("to %+v, want the actor", m.Target)
			}
			tabletest.Says(t, m.Text, tc.has, tc.hasNot)
			if m.Secret != tc.secret || tc.secret && m.Public != i18n.T(m.Lang, "league.private") {
				t.Errorf("secret %v public %q, want %v", m.Secret, m.Public, tc.secret)
			}
		})
	}
}

// TestForgetLeavesNoTrace: after forget yes, the kept match names neither the person's account
// nor their name, their own choices are gone, and mydata finds nothing of theirs in the league.
func TestForgetLeavesNoTrace(t *testing.T) {
	f := newFixture(t)
	keepMatch(t, f)
	f.ask(t, api.Command{Actor: ann, Verb: api.VerbLang, Args: []string{"de"}})
	if m := f.ask(t, api.Command{Actor: ann, Verb: api.VerbForget, Args: []string{"yes"}}); m.Reason != api.ReasonForgotten {
		t.Fatalf("forget yes: %q %q", m.Reason, m.Text)
	}
	data, ok, err := f.store.Record(t.Context(), "t1/m1")
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	for _, trace := range []string{ann.ID, ann.Name} {
		if strings.Contains(string(data), trace) {
			t.Errorf("the kept match still holds %q: %s", trace, data)
		}
	}
	if !strings.Contains(string(data), ben.Name) {
		t.Errorf("the others' names went too: %s", data)
	}
	m := f.ask(t, api.Command{Actor: ann, Verb: api.VerbMyData})
	if m.Lang != "en" || strings.Contains(m.Text, "Café") || strings.Contains(m.Text, i18n.T("en", "mydata.global", "")) {
		t.Errorf("mydata after forget yes, in %q:\n%s", m.Lang, m.Text)
	}
	if m := f.ask(t, api.Command{Actor: ben, Verb: api.VerbMyData}); !strings.Contains(m.Text, i18n.T("en", "mydata.here", "Café", 1, "")[:20]) {
		t.Errorf("Ben's data went with Ann's:\n%s", m.Text)
	}
}

// TestLangRetellsTheTables: a person's new language reaches their private messages at the
// tables they sit at at once (Request.Retell), and nobody else's.
func TestLangRetellsTheTables(t *testing.T) {
	f := newFixture(t)
	people := []api.Player{ann, ben, cleo, dan}
	cmds := []api.Command{{Actor: ann, Verb: api.VerbNew, Args: []string{"timer=none"}}}
	for _, p := range people[1:] {
		cmds = append(cmds, api.Command{Actor: p, Verb: api.VerbJoin})
	}
	cmds = append(cmds, api.Command{Actor: ann, Verb: api.VerbDeal})
	for _, c := range cmds {
		if msgs, err := f.handle(t, c); err != nil || len(msgs) > 0 && msgs[0].Kind == api.KindError {
			t.Fatalf("%s: %v %+v", c.Verb, err, msgs)
		}
	}
	f.out.Take()
	dm := cafe
	dm.Chat = "1" // Ann's private chat
	m := f.ask(t, api.Command{Place: dm, Actor: ann, Verb: api.VerbLang, Args: []string{"de"}, Private: true})
	if m.Lang != "de" {
		t.Fatalf("lang de answered in %q", m.Lang)
	}
	var hand bool
	for _, d := range f.out.Take() {
		if d.Target.Kind == api.ToPlayer && d.Target.Player.ID != ann.ID {
			t.Errorf("%s's private message was told again: %+v", d.Target.Player.Name, d)
		}
		if d.Target.Kind == api.ToPlayer && d.Kind == api.KindHand {
			hand = true
			if d.Lang != "de" {
				t.Errorf("Ann's hand in %q, want de", d.Lang)
			}
		}
	}
	if !hand {
		t.Error("Ann's hand was not told again in her new language")
	}
}

package verbs_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/league"
	"github.com/kontermatt/kontermatt/core/league/verbs"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// The league's verbs through their seam: registered in a service's Config.Verbs, answering the
// commands Handle is given. The only fakes are of the engine's ports (a memory store, the kept
// matches' Records); the league is written as a match end writes it (league.Cache.Learn).

var (
	now   = time.Date(2026, 11, 15, 12, 0, 0, 0, time.UTC)
	cafe  = api.Place{Platform: "telegram", Chat: "-100", Title: "Café"}
	other = api.Place{Platform: "telegram", Chat: "-200", Title: "Elsewhere"}
	ann   = api.Player{ID: "tg:1", Name: "Ann"}
	ben   = api.Player{ID: "tg:2", Name: "Ben"}
	cleo  = api.Player{ID: "tg:3", Name: "Cleo"}
	dan   = api.Player{ID: "tg:4", Name: "Dan"}
)

// records is the kept matches, as a Store's Record gives them.
type records map[string][]byte

func (r records) Record(_ context.Context, key string) ([]byte, bool, error) {
	data, ok := r[key]
	return data, ok, nil
}

type fixture struct {
	svc   *table.Service
	store *mem.Store
	cache *league.Cache
	recs  records
}

func newFixture(t *testing.T, surfaces map[string]api.Surface) *fixture {
	t.Helper()
	f := &fixture{store: mem.New(), recs: records{}}
	f.cache = league.NewCache(f.store, nil)
	l := &verbs.League{Cache: f.cache, Records: f.recs, Now: func() time.Time { return now }}
	f.svc = table.New(table.Config{Store: f.store, Verbs: l.Verbs(), Surfaces: surfaces, Now: func() time.Time { return now }})
	t.Cleanup(f.svc.Close)
	return f
}

// keep keeps a match of Ann and Cleo (team A) against Ben and Dan at place, won by winner (-1:
// stopped), as the engine keeps it: its record, and the league learned from it.
func (f *fixture) keep(t *testing.T, key string, place api.Place, winner int) {
	t.Helper()
	ctx := t.Context()
	people := []api.Player{ann, ben, cleo, dan}
	var seats [4]league.Seat
	var stored [4]table.StoredSeat
	for i, p := range people {
		seats[i] = league.Seat{ID: p.ID, Name: p.Name}
		stored[i] = table.StoredSeat{ID: p.ID, Name: p.Name}
	}
	m := league.Match{Key: key, Place: place.Key(), End: now.Add(-time.Hour), Seats: seats, Winner: winner,
		Games: []league.Game{{No: 1, Forehand: 1, TrumpTeam: 1, Outcome: core.WonByA, Points: [2]int{70, 50}, TricksWon: [2]int{4, 2}}}}
	u, err := f.cache.Learn(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range u.Entries {
		if err := f.store.Put(ctx, e.Bucket, e.Key, e.Value); err != nil {
			t.Fatal(err)
		}
	}
	f.cache.Done(u, true)
	data, err := json.Marshal(table.StoredMatch{Format: table.StoredMatchFormat, Table: strings.Split(key, "/")[0], Match: 1,
		Place: place.Key(), Seats: stored, Rules: core.DefaultRules().Record(), Stopped: true})
	if err != nil {
		t.Fatal(err)
	}
	f.recs[key] = data
}

func (f *fixture) ask(t *testing.T, c api.Command) api.Message {
	t.Helper()
	if c.Place == (api.Place{}) {
		c.Place = cafe
	}
	return tabletest.Reply(t, f.svc, c)
}

func de(p api.Player) api.Player { p.Locale = "de"; return p }

func TestLeagueVerbs(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, f *fixture)
		cmd   api.Command
		// want: the one reply's kind, its Reason (a refusal's catalog key), texts it must and
		// must not hold, and whether it goes to the actor alone.
		kind         api.Kind
		reason       string
		has, hasNot  []string
		secret, file bool
	}{
		{name: "stats before any game", cmd: api.Command{Actor: ann, Verb: api.VerbStats},
			kind: api.KindReply, has: []string{i18n.T("en", "stats.none", "Ann", "Café")}},
		{name: "stats of one's own", setup: keepWon, cmd: api.Command{Actor: ann, Verb: api.VerbStats},
			kind: api.KindReply, has: []string{i18n.T("en", "stats.title", "Ann", "Café"), i18n.N("en", "stats.games", 1, 1, 0)}},
		{name: "stats name the best partner after three matches", setup: keepThree, cmd: api.Command{Actor: ann, Verb: api.VerbStats},
			kind: api.KindReply, has: []string{i18n.T("en", "stats.partner", "Cleo", 3, 3), i18n.T("en", "stats.opponent", "Ben", 3, 3)}},
		{name: "stats never name a partner who is not ranked", setup: func(t *testing.T, f *fixture) {
			keepThree(t, f)
			f.ask(t, api.Command{Actor: cleo, Verb: api.VerbStats, Args: []string{"off"}})
		}, cmd: api.Command{Actor: ann, Verb: api.VerbStats},
			kind: api.KindReply, has: []string{i18n.T("en", "stats.opponent", "Ben", 3, 3)}, hasNot: []string{"Cleo"}},
		{name: "stats of another by name", setup: keepWon, cmd: api.Command{Actor: ann, Verb: api.VerbStats, Args: []string{"ben"}},
			kind: api.KindReply, has: []string{i18n.T("en", "stats.title", "Ben", "Café"), i18n.N("en", "stats.games", 1, 0, 0)}},
		{name: "stats of nobody here, refused in the actor's language", setup: keepWon,
			cmd:  api.Command{Actor: de(ann), Verb: api.VerbStats, Args: []string{"Zoe"}},
			kind: api.KindError, reason: "stats.nobody", has: []string{i18n.T("de", "stats.nobody", "Zoe")}},
		{name: "stats of someone not ranked", setup: func(t *testing.T, f *fixture) {
			keepWon(t, f)
			f.ask(t, api.Command{Actor: ben, Verb: api.VerbStats, Args: []string{"off"}})
		}, cmd: api.Command{Actor: ann, Verb: api.VerbStats, Args: []string{"Ben"}},
			kind: api.KindReply, has: []string{i18n.T("en", "stats.hidden", "Ben")}, hasNot: []string{"Café"}},
		{name: "one's own stats when not ranked are private", setup: func(t *testing.T, f *fixture) {
			keepWon(t, f)
			f.ask(t, api.Command{Actor: ben, Verb: api.VerbStats, Args: []string{"off"}})
		}, cmd: api.Command{Actor: ben, Verb: api.VerbStats},
			kind: api.KindReply, has: []string{i18n.T("en", "stats.title", "Ben", "Café")}, secret: true},
		{name: "stats off", cmd: api.Command{Actor: de(ann), Verb: api.VerbStats, Args: []string{"off"}},
			kind: api.KindNotice, has: []string{i18n.T("de", "stats.off")}},
		{name: "top of the month", setup: keepWon, cmd: api.Command{Actor: ann, Verb: api.VerbTop},
			kind: api.KindReply, has: []string{i18n.T("en", "top.month", "Café", league.MonthName("en", "2026-11")), "Ann", "Ben", "Cleo", "Dan"}},
		{name: "top leaves out who is not ranked", setup: func(t *testing.T, f *fixture) {
			keepWon(t, f)
			f.ask(t, api.Command{Actor: ben, Verb: api.VerbStats, Args: []string{"off"}})
		}, cmd: api.Command{Actor: ann, Verb: api.VerbTop, Args: []string{"all"}},
			kind: api.KindReply, has: []string{i18n.T("en", "top.all", "Café"), "Ann", "Dan"}, hasNot: []string{"Ben"}},
		{name: "top of another place's matches is empty here", setup: keepElsewhere, cmd: api.Command{Actor: ann, Verb: api.VerbTop, Args: []string{"all"}},
			kind: api.KindReply, hasNot: []string{"Ann", "Ben"}},
		{name: "top of an unknown season", cmd: api.Command{Actor: de(ann), Verb: api.VerbTop, Args: []string{"soon"}},
			kind: api.KindError, reason: "top.usage", has: []string{i18n.T("de", "top.usage")}},
		{name: "history empty", cmd: api.Command{Actor: ann, Verb: api.VerbHistory},
			kind: api.KindReply, has: []string{i18n.T("en", "history.empty", "Café")}},
		{name: "history lists the place's matches", setup: keepWon, cmd: api.Command{Actor: ann, Verb: api.VerbHistory},
			kind: api.KindReply, has: []string{i18n.T("en", "history.title", "Café"), "Ann & Cleo", i18n.T("en", "history.buttons")}},
		{name: "history of a number not listed", setup: keepWon, cmd: api.Command{Actor: de(ann), Verb: api.VerbHistory, Args: []string{"board", "2"}},
			kind: api.KindError, reason: "history.bad", has: []string{i18n.T("de", "history.bad")}},
		{name: "history's board of another place's match is refused", setup: keepElsewhere,
			cmd:  api.Command{Actor: ann, Verb: api.VerbHistory, Args: []string{"b:t2/m1"}},
			kind: api.KindError, reason: "history.gone"},
		{name: "history's record of another place's match is refused", setup: keepElsewhere,
			cmd:  api.Command{Actor: ann, Verb: api.VerbHistory, Args: []string{"r:t2/m1"}},
			kind: api.KindError, reason: "history.gone", hasNot: []string{"tg:1"}},
		{name: "history's record names nobody's account", setup: keepWon,
			cmd:  api.Command{Actor: ann, Verb: api.VerbHistory, Args: []string{"record", "1"}},
			kind: api.KindReply, has: []string{i18n.T("en", "history.record")}, file: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, nil)
			if tc.setup != nil {
				tc.setup(t, f)
			}
			m := f.ask(t, tc.cmd)
			if m.Kind != tc.kind || m.Reason != tc.reason {
				t.Fatalf("kind %q reason %q, want %q %q: %q", m.Kind, m.Reason, tc.kind, tc.reason, m.Text)
			}
			if m.Target.Kind != api.ToActor || m.Target.Player.ID != tc.cmd.Actor.ID {
				t.Errorf("to %+v, want the actor", m.Target)
			}
			tabletest.Says(t, m.Text, tc.has, tc.hasNot)
			if m.Secret != tc.secret {
				t.Errorf("secret %v, want %v", m.Secret, tc.secret)
			}
			if tc.secret && m.Public != i18n.T("en", "league.private") {
				t.Errorf("public text %q", m.Public)
			}
			if (m.File != nil) != tc.file {
				t.Fatalf("file %v, want %v", m.File != nil, tc.file)
			}
			if m.File != nil {
				// The file a group sees names the people as the chat showed them, never their
				// platform accounts or the place's key.
				for _, secret := range []string{ann.ID, ben.ID, cleo.ID, dan.ID, cafe.Key()} {
					if strings.Contains(string(m.File.Data), secret) {
						t.Errorf("the record shows %q:\n%s", secret, m.File.Data)
					}
				}
				if !strings.Contains(string(m.File.Data), "Cleo") || m.File.Name != "t1-m1.json" {
					t.Errorf("the record %q:\n%s", m.File.Name, m.File.Data)
				}
			}
		})
	}
}

func keepWon(t *testing.T, f *fixture) { f.keep(t, "t1/m1", cafe, 0) }
func keepThree(t *testing.T, f *fixture) {
	for _, key := range []string{"t1/m1", "t1/m2", "t1/m3"} {
		f.keep(t, key, cafe, 0)
	}
}
func keepElsewhere(t *testing.T, f *fixture) { f.keep(t, "t2/m1", other, 0) }

// TestHistoryButtons: history names each match's board and record by buttons where the place
// has them, and says how to type them where it has none.
func TestHistoryButtons(t *testing.T) {
	for _, typed := range []bool{false, true} {
		f := newFixture(t, map[string]api.Surface{"local": {Typed: true}})
		place := cafe
		if typed {
			place = api.Place{Platform: "local", Chat: "me", Title: "Café"}
		}
		f.keep(t, "t1/m1", place, 0)
		m := f.ask(t, api.Command{Place: place, Actor: ann, Verb: api.VerbHistory})
		if typed {
			if len(m.Buttons) != 0 || !strings.Contains(m.Text, i18n.T("en", "history.buttons.typed")) {
				t.Errorf("typed: %d rows of buttons, text %q", len(m.Buttons), m.Text)
			}
			continue
		}
		if len(m.Buttons) != 1 || len(m.Buttons[0]) != 2 {
			t.Fatalf("buttons %+v, want one row of two", m.Buttons)
		}
		board, record := m.Buttons[0][0].Action, m.Buttons[0][1].Action
		if board != (api.Action{Verb: api.VerbHistory, Arg: "b:t1/m1"}) || record != (api.Action{Verb: api.VerbHistory, Arg: "r:t1/m1"}) {
			t.Errorf("buttons' actions %+v %+v", board, record)
		}
		// Pressed, the board button is answered with the match's board picture.
		got := f.ask(t, api.Command{Place: place, Actor: ben, Verb: api.VerbHistory, Args: []string{board.Arg}})
		if got.Picture != api.PictureBoard || got.Record != "t1/m1" {
			t.Errorf("board button: picture %q record %q", got.Picture, got.Record)
		}
	}
}

// TestTopPicture: top's reply asks for the standings picture of the season it shows.
func TestTopPicture(t *testing.T) {
	f := newFixture(t, nil)
	for arg, season := range map[string]string{"": "2026-11", "last": "2026-10", "all": "all", "2025-03": "2025-03"} {
		c := api.Command{Actor: ann, Verb: api.VerbTop}
		if arg != "" {
			c.Args = []string{arg}
		}
		m := f.ask(t, c)
		if m.Picture != api.PictureStandings || m.Season != season {
			t.Errorf("top %q: picture %q season %q, want %q", arg, m.Picture, m.Season, season)
		}
	}
}

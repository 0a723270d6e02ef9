package discord

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/adapters/internal/chattest"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// activityAdapter is an adapter with the Activity on, its application known (as after Run),
// logging into logs.
func activityAdapter(t *testing.T, f *fakeDiscord, secret string, logs *tabletest.Buffer) *Adapter {
	t.Helper()
	a := mustNew(t, Config{Token: f.Token, APIURL: f.srv.URL, KV: mem.New(), ClientSecret: secret,
		Log: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	a.mu.Lock()
	a.appID = f.AppID
	a.mu.Unlock()
	return a
}

// The code exchange against the fake: a code good once, with the client secret, for a user who
// takes part in the activity instance, gives that user and the instance's channel; anything else
// is refused, and no secret or token reaches the log.
func TestActivityUser(t *testing.T) {
	f := newFakeDiscord(t)
	f.Activities = true
	logs := &tabletest.Buffer{}
	a := activityAdapter(t, f, f.ClientSecret, logs)
	f.mu.Lock()
	f.codes["code-alice"], f.codes["code-bob"], f.codes["code-carla"] = alice, bob, carla
	f.instances["i-1-gc-800-500"] = fakeInstance{Channel: guildChannel, Guild: f.GuildID, Users: []string{alice.ID, carla.ID}}
	f.mu.Unlock()
	ctx := context.Background()
	p, place, err := a.ActivityUser(ctx, "code-alice", "i-1-gc-800-500")
	if err != nil || p.ID != "dc:"+alice.ID || p.Name != alice.Name || p.Locale != alice.Locale || place.Key() != "discord:"+guildChannel {
		t.Fatalf("Alice's code: %+v %v %v", p, place, err)
	}
	for _, c := range []struct{ name, code, instance string }{
		{"the same code again", "code-alice", "i-1-gc-800-500"},
		{"a code nobody was given", "code-zed", "i-1-gc-800-500"},
		{"a user not in the instance", "code-bob", "i-1-gc-800-500"},
		{"an instance that does not run", "code-carla", "i-9"},
		{"an instance ID that is no ID", "code-carla", "../users/@me"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, _, err := a.ActivityUser(ctx, c.code, c.instance); !errors.Is(err, ErrActivityUser) {
				t.Fatalf("got %v", err)
			}
		})
	}
	wrong := activityAdapter(t, f, "not-the-secret-XXXXXXXX", logs)
	f.mu.Lock()
	f.codes["code-dan"] = dan
	f.mu.Unlock()
	if _, _, err := wrong.ActivityUser(ctx, "code-dan", "i-1-gc-800-500"); !errors.Is(err, ErrActivityUser) {
		t.Fatalf("a wrong client secret: %v", err)
	}
	f.mu.Lock()
	tokens := make([]string, 0, len(f.tokens))
	for tok := range f.tokens {
		tokens = append(tokens, tok)
	}
	f.mu.Unlock()
	for _, secret := range append(tokens, f.ClientSecret, f.Token, "not-the-secret") {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("the log holds a secret: %s", secret)
		}
	}
	// Alice's, Bob's and Carla's codes were exchanged (the instance is checked after); Dan's, with
	// the wrong secret, was not.
	if len(tokens) != 3 {
		t.Fatalf("%d access tokens handed out, want 3", len(tokens))
	}
}

// A 429 on the code exchange says how long to wait (the web table then asks no more until
// then); ActivityPlayers gives who takes part in an instance now, none once it has ended.
func TestActivityRateLimitAndPlayers(t *testing.T) {
	f := newFakeDiscord(t)
	f.Activities = true
	a := activityAdapter(t, f, f.ClientSecret, &tabletest.Buffer{})
	f.mu.Lock()
	f.codes["code-alice"] = alice
	f.instances["i-1"] = fakeInstance{Channel: guildChannel, Guild: f.GuildID, Users: []string{alice.ID, carla.ID}}
	f.tokenLimited = 2.5
	f.mu.Unlock()
	ctx := context.Background()
	_, _, err := a.ActivityUser(ctx, "code-alice", "i-1")
	var rl interface{ RetryAfter() time.Duration }
	if !errors.Is(err, ErrActivityUser) || !errors.As(err, &rl) || rl.RetryAfter() != 2500*time.Millisecond {
		t.Fatalf("a 429 on the code exchange: %v", err)
	}
	if p, _, err := a.ActivityUser(ctx, "code-alice", "i-1"); err != nil || p.ID != "dc:"+alice.ID {
		t.Fatalf("after the wait: %v %v", p, err)
	}
	if ps, err := a.ActivityPlayers(ctx, "i-1"); err != nil || !slices.Equal(ps, []string{"dc:" + alice.ID, "dc:" + carla.ID}) {
		t.Fatalf("the players of i-1: %v %v", ps, err)
	}
	if ps, err := a.ActivityPlayers(ctx, "i-9"); err != nil || len(ps) != 0 {
		t.Fatalf("an instance that ended: %v %v", ps, err)
	}
}

// With Activities switched on, a global overwrite of the commands keeps the app's Entry Point
// command, which the fake (as Discord) refuses to lose.
func TestCommandsKeepTheEntryPoint(t *testing.T) {
	f := newFakeDiscord(t)
	f.Activities = true
	a := activityAdapter(t, f, f.ClientSecret, &tabletest.Buffer{})
	if err := a.registerCommands(f.AppID); err != nil {
		t.Fatalf("registering: %v", err)
	}
	var cmds []map[string]any
	f.mu.Lock()
	json.Unmarshal(f.commands, &cmds)
	f.mu.Unlock()
	var names []string
	for _, c := range cmds {
		names = append(names, c["name"].(string))
	}
	if len(cmds) != 2 || cmds[1]["type"] != float64(4) || cmds[1]["handler"] != float64(2) {
		t.Fatalf("registered %v", names)
	}
	// Without the Activity the adapter overwrites as before, which the fake refuses when the app
	// has an Entry Point: what would happen to a host who switched Activities on without the secret.
	plain := mustNew(t, Config{Token: f.Token, APIURL: f.srv.URL, KV: mem.New()})
	f.mu.Lock()
	f.commands = nil
	f.mu.Unlock()
	if err := plain.registerCommands(f.AppID); err == nil || restCode(err) != 50240 {
		t.Fatalf("an overwrite without the Entry Point: %v", err)
	}
}

// The table's messages carry "Play in app", answered with LAUNCH_ACTIVITY, and the web table's
// watch link while a game is played; the answer to "My hand" carries a one-time link to the web table, for the presser alone.
func TestPlayInApp(t *testing.T) { eachMode(t, testPlayInApp) }

func testPlayInApp(t *testing.T, f *fakeDiscord) {
	f.Activities = true
	w := chattest.Web{}
	h := startHarness(t, f, mem.New(), mem.New(), harnessOpt{cfg: func(c *Config) {
		c.ClientSecret, c.Web = f.ClientSecret, w
	}})
	id := openTable(t, f, alice, nil)
	var live fakeMessage
	f.waitFor("the table message", func() bool {
		var ok bool
		live, _, ok = lastWith(f.channelLocked(guildChannel), api.VerbHand)
		return ok
	})
	extras := live.extras()
	if len(extras) != 2 || extras[0].CustomID != appButton+id || extras[0].Label != i18n.T("en", "web.play_in_app") {
		t.Fatalf("the table message's other buttons: %+v", extras)
	}
	if watch := extras[1]; watch.URL != w.WatchLink(id) || watch.Style != 5 || // a link button (Discord docs, Message Components: Button Styles)
		watch.Label != i18n.T("en", "btn.watch") {
		t.Fatalf("the table message's watch link: %+v", watch)
	}
	if r := f.press(alice, live, extras[0].CustomID); r.Type != 12 {
		t.Fatalf("Play in app answered %+v", r)
	}
	f.mu.Lock()
	launched := f.launched
	f.mu.Unlock()
	if launched != 1 {
		t.Fatalf("%d activities launched", launched)
	}
	hand, _ := findButton(live, api.VerbHand)
	r := f.press(alice, live, hand.CustomID)
	var link string
	for _, row := range r.Rows {
		for _, b := range row.Components {
			if b.Style == 5 {
				link = b.URL
			}
		}
	}
	if r.Flags&64 == 0 || link != "https://table.example/#link="+id+"-dc:"+alice.ID {
		t.Fatalf("the answer to My hand (flags %d) links %q", r.Flags, link)
	}
	// Where Discord has no Activity for the app, the press says so.
	f.mu.Lock()
	f.Activities = false
	f.mu.Unlock()
	in := f.pressAsync(bob, live, extras[0].CustomID)
	if f.viaHTTP {
		// Discord refuses the launch, and an answer in the HTTP response gets no answer of its
		// own: the press fails ("This interaction failed"), and the bot cannot say why.
		f.waitFor("Discord to refuse the launch", func() bool { return !in.posting && in.Failed != 0 })
		if in.Failed != 50035 || in.Resp != nil {
			t.Fatalf("Play in app without Activities by HTTP: failed %d, answer %+v", in.Failed, in.Resp)
		}
		return
	}
	if r := f.response(in); r.Type != 4 || r.Flags&64 == 0 || !strings.Contains(r.Content, escape(i18n.T("de", "web.no_activity"))) {
		t.Fatalf("Play in app without Activities answered %+v", r)
	}
	h.allowErrors = append(h.allowErrors, "launching the Activity")
}

// An Entry Point command whose handler is the app (APP_HANDLER) sends its interaction to the
// bot, which launches the Activity; without the Activity configured it says so, in words.
func TestEntryPointWithAppHandler(t *testing.T) { eachMode(t, testEntryPointWithAppHandler) }

func testEntryPointWithAppHandler(t *testing.T, f *fakeDiscord) {
	f.Activities, f.EntryHandler = true, 1
	h := startHarness(t, f, mem.New(), mem.New(), harnessOpt{cfg: func(c *Config) {
		c.ClientSecret = f.ClientSecret
	}})
	if r := f.response(f.launchFromEntryPoint(alice, guildChannel)); r.Type != 12 {
		t.Fatalf("the Entry Point command answered %+v", r)
	}
	h.stop()
	f2 := newFakeDiscord(t)
	f2.Activities, f2.EntryHandler = true, 1
	startHarness(t, f2, mem.New(), mem.New())
	r := f2.response(f2.launchFromEntryPoint(bob, guildChannel))
	if r.Type != 4 || r.Flags&64 == 0 || !strings.Contains(r.Content, escape(i18n.T("de", "web.no_activity"))) {
		t.Fatalf("the Entry Point command without the Activity answered %+v", r)
	}
}

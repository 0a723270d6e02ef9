package discord

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode"

	"github.com/bwmarrin/discordgo"

	"github.com/kontermatt/kontermatt/adapters/internal/chat"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/storage/mem"
)

func TestComponentsLayout(t *testing.T) {
	row := func(n int, verb api.Verb) []api.Button {
		var r []api.Button
		for i := range n {
			r = append(r, api.Button{Label: strings.Repeat("x", 90), Style: api.ButtonStyle(i % 4),
				Action: api.Action{Verb: verb, Table: "t1", Seq: 7, Arg: string(rune('a' + i))}})
		}
		return r
	}
	for _, tc := range []struct {
		name string
		rows [][]api.Button
		want []int // buttons per action row
	}{
		{"none", nil, nil},
		{"four", [][]api.Button{row(4, api.VerbJoin)}, []int{4}},
		{"six cards", [][]api.Button{row(6, api.VerbPlay)}, []int{3, 3}},
		{"seven", [][]api.Button{row(7, api.VerbPlay)}, []int{3, 4}},
		{"cards and calls", [][]api.Button{row(6, api.VerbPlay), row(3, api.VerbAnnounce)}, []int{3, 3, 3}},
		{"too many rows", [][]api.Button{row(10, api.VerbPlay), row(10, api.VerbTrump), row(6, api.VerbJoin)}, []int{5, 5, 5, 5, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			comps := components(tc.rows)
			var got []int
			for _, c := range comps {
				ar := c.(discordgo.ActionsRow)
				got = append(got, len(ar.Components))
				for _, b := range ar.Components {
					btn := b.(discordgo.Button)
					if len([]rune(btn.Label)) > 80 {
						t.Errorf("label of %d characters", len([]rune(btn.Label)))
					}
					if _, err := api.ParseAction(btn.CustomID); err != nil {
						t.Errorf("custom_id %q: %v", btn.CustomID, err)
					}
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("rows %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("rows %v, want %v", got, tc.want)
				}
			}
		})
	}
	styles := map[api.ButtonStyle]discordgo.ButtonStyle{api.StylePrimary: discordgo.PrimaryButton,
		api.StyleSecondary: discordgo.SecondaryButton, api.StyleDanger: discordgo.DangerButton, api.StyleSuccess: discordgo.SuccessButton}
	for in, want := range styles {
		if got := buttonStyle(in); got != want {
			t.Errorf("style %d → %d, want %d", in, got, want)
		}
	}
}

func TestRender(t *testing.T) {
	m := api.Message{Title: "Table *1*", Text: "Team A: |||| |||| (9)\nname_with `ticks` ~x~ \\"}
	got := render(m, "42")
	want := "<@42> **Table \\*1\\***\nTeam A: \\|\\|\\|\\| \\|\\|\\|\\| (9)\nname\\_with \\`ticks\\` \\~x\\~ \\\\"
	if got != want {
		t.Errorf("render = %q\nwant     %q", got, want)
	}
	long := render(api.Message{Text: strings.Repeat("é", 3000)}, "")
	if n := len([]rune(long)); n != maxContent || !strings.HasSuffix(long, "…") {
		t.Errorf("a long text became %d characters", n)
	}
}

func TestActorAndPlace(t *testing.T) {
	member := func(perms int64, nick string) *discordgo.Interaction {
		return &discordgo.Interaction{GuildID: "g", ChannelID: "c", Locale: discordgo.German,
			Member: &discordgo.Member{Nick: nick, Permissions: perms, User: &discordgo.User{ID: "1", Username: "ann", GlobalName: "Ann"}}}
	}
	for _, tc := range []struct {
		name    string
		i       *discordgo.Interaction
		player  api.Player
		admin   bool
		private bool
	}{
		{"member", member(discordgo.PermissionSendMessages, ""), api.Player{ID: "dc:1", Name: "Ann", Locale: "de"}, false, false},
		{"nick", member(0, "Annie"), api.Player{ID: "dc:1", Name: "Annie", Locale: "de"}, false, false},
		{"administrator", member(discordgo.PermissionAdministrator, ""), api.Player{ID: "dc:1", Name: "Ann", Locale: "de"}, true, false},
		{"manage guild", member(discordgo.PermissionManageGuild, ""), api.Player{ID: "dc:1", Name: "Ann", Locale: "de"}, true, false},
		{"manage channels", member(discordgo.PermissionManageChannels, ""), api.Player{ID: "dc:1", Name: "Ann", Locale: "de"}, true, false},
		{"dm", &discordgo.Interaction{ChannelID: "d", Context: discordgo.InteractionContextBotDM, Locale: "fr",
			User: &discordgo.User{ID: "2", Username: "bo"}}, api.Player{ID: "dc:2", Name: "bo", Locale: "fr"}, false, true},
		{"group dm", &discordgo.Interaction{ChannelID: "g", Context: discordgo.InteractionContextPrivateChannel,
			User: &discordgo.User{ID: "3", Username: "cy"}}, api.Player{ID: "dc:3", Name: "cy"}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, admin, ok := actorOf(tc.i)
			if !ok || p != tc.player || admin != tc.admin || isPrivate(tc.i) != tc.private {
				t.Errorf("got %+v admin=%v private=%v", p, admin, isPrivate(tc.i))
			}
			want := api.Place{Platform: Platform, Chat: tc.i.ChannelID}
			if tc.i.GuildID != "" {
				want.Title = "<#" + tc.i.ChannelID + ">" // shown on the table's private messages
			}
			if pl := placeOf(tc.i); pl != want {
				t.Errorf("place %+v, want %+v", pl, want)
			}
		})
	}
	if _, _, ok := actorOf(&discordgo.Interaction{}); ok {
		t.Errorf("an interaction without a user has an actor")
	}
}

func TestArgs(t *testing.T) {
	o := func(name string, v any) *discordgo.ApplicationCommandInteractionDataOption {
		return &discordgo.ApplicationCommandInteractionDataOption{Name: name, Value: v}
	}
	type opts = []*discordgo.ApplicationCommandInteractionDataOption
	for _, tc := range []struct {
		verb api.Verb
		opts opts
		want string
	}{
		{api.VerbNew, opts{o("timer", "none"), o("stripes", float64(7))}, "stripes=7 timer=none"},
		{api.VerbJoin, opts{o("seat", float64(3))}, "3"},
		{api.VerbJoin, nil, ""},
		{api.VerbBot, opts{o("seat", float64(2)), o("remove", true)}, "remove 2"},
		{api.VerbBot, opts{o("remove", false)}, ""},
		{api.VerbTrump, opts{o("suit", "hearts")}, "hearts"},
		{api.VerbAnnounce, opts{o("call", "konter-a-matt")}, "konter-a-matt"},
		{api.VerbPlay, opts{o("card", "QS")}, "QS"},
		{api.VerbRematch, opts{o("partners", "rotate")}, "rotate"},
		{api.VerbLang, opts{o("language", "lb")}, "lb"},
		{api.VerbLang, opts{o("for", "table"), o("language", "de")}, "table de"},
		{api.VerbLang, opts{o("for", "me"), o("language", "fr")}, "fr"},
	} {
		if got := strings.Join(argsFor(tc.verb, tc.opts), " "); got != tc.want {
			t.Errorf("%s %v: args %q, want %q", tc.verb, tc.opts, got, tc.want)
		}
	}
	// Every subcommand is a verb the service knows.
	for _, sc := range subcommands {
		if v, ok := api.ParseVerb(string(sc.verb)); !ok || v != sc.verb {
			t.Errorf("subcommand %s is no verb", sc.verb)
		}
	}
}

// The REST base URL may carry a path (a proxy); only Discord's own host is rewritten.
func TestRewriter(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Host+" "+r.URL.Path+"?"+r.URL.RawQuery+" "+r.Header.Get("Authorization"))
	}))
	defer srv.Close()
	rt := newRewriter(srv.URL + "/proxy/")
	req, _ := http.NewRequest("GET", discordgo.EndpointGatewayBot+"?x=1", nil)
	req.Header.Set("Authorization", "Bot t")
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	if want := host + " /proxy/api/v" + discordgo.APIVersion + "/gateway/bot?x=1 Bot t"; len(got) != 1 || got[0] != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if req.URL.Host != "discord.com" {
		t.Errorf("the caller's request was changed: %s", req.URL)
	}
	if _, ok := newRewriter("").(*http.Transport); !ok {
		t.Errorf("no APIURL should mean no rewriting")
	}
	if _, ok := newRewriter(DefaultAPIURL).(*http.Transport); !ok {
		t.Errorf("Discord's own URL should mean no rewriting")
	}
}

func TestRedact(t *testing.T) {
	a := mustNew(t, Config{Token: "Bot abc.DEF-ghi_jkl.mnopqrstuvwxyz0123", KV: mem.New()})
	defer unregister(a)
	for _, in := range []string{
		"POST https://discord.com/api/v9/interactions/123/aW50ZXJhY3Rpb246MTIzOnNlY3JldA/callback",
		"PATCH https://discord.com/api/v9/webhooks/456/aW50ZXJhY3Rpb246MTIzOnNlY3JldA/messages/@original",
		`{"op":2,"d":{"token":"aW50ZXJhY3Rpb246MTIzOnNlY3JldA","intents":0}}`,
		`discordgo.Identify{Token:"aW50ZXJhY3Rpb246MTIzOnNlY3JldA", Properties:...}`,
		"authorization: Bot aW50ZXJhY3Rpb246MTIzOnNlY3JldA",
		"token abc.DEF-ghi_jkl.mnopqrstuvwxyz0123 in a sentence",
	} {
		out := a.redact(in)
		if strings.Contains(out, "aW50ZXJhY3Rpb246MTIzOnNlY3JldA") || strings.Contains(out, "mnopqrstuvwxyz0123") {
			t.Errorf("redact(%q) = %q", in, out)
		}
		if !strings.Contains(out, "[redacted]") {
			t.Errorf("redact(%q) = %q: nothing marked", in, out)
		}
	}
	if err := a.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "Attach") {
		t.Errorf("Run before Attach: %v", err)
	}
}

// Private messages for a player who refuses DMs: a notice is said in the channel with a ping,
// a hand is not sent anywhere (it reaches the player through "My hand"), the channel is told so
// once for the table (a refusal learnt at another table says nothing here), and no DM is tried.
func TestPrivateMessagesForClosedDMs(t *testing.T) {
	ctx := t.Context()
	f := newFakeDiscord(t)
	kv := mem.New()
	kv.Put(ctx, bucketNoDM, bob.ID, []byte("x"))
	a := mustNew(t, Config{Token: f.Token, APIURL: f.srv.URL, KV: kv})
	t.Cleanup(func() { unregister(a) })
	place := api.Place{Platform: Platform, Chat: guildChannel}
	player := api.Player{ID: "dc:" + bob.ID, Name: "Bob"}
	a.Deliver(context.Background(), []api.Message{
		{Target: api.Target{Kind: api.ToPlayer, Place: place, Player: player}, Kind: api.KindHand, Key: "hand/t/m1/1/dc:" + bob.ID,
			Version: 3, Table: "t", Text: "Q♠ K♥"},
		{Target: api.Target{Kind: api.ToPlayer, Place: place, Player: player}, Kind: api.KindNotice, Version: 3, Table: "t",
			Text: "⏰ It's your turn"},
	})
	if err := a.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	a.Deliver(context.Background(), []api.Message{{Target: api.Target{Kind: api.ToPlayer, Place: place, Player: player},
		Kind: api.KindHand, Key: "hand/t/m1/1/dc:" + bob.ID, Version: 4, Table: "t", Text: "Q♠"}})
	if err := a.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	msgs := f.channel(guildChannel)
	told := "<@" + bob.ID + "> " + escape(i18n.T("en", "discord.dm_refused", i18n.T("en", "btn.hand")))
	if len(msgs) != 2 || msgs[0].Content != told || msgs[1].Content != "<@"+bob.ID+"> ⏰ It's your turn" || len(msgs[1].Mentions) != 1 {
		t.Errorf("channel: %+v", msgs)
	}
	if calls := f.callCounts(); calls["POST users/@me/channels"] != 0 || len(f.dms) != 0 {
		t.Errorf("a DM was tried: %v", calls)
	}
}

// A wrong token fails Run at once, with an error that does not contain it.
func TestWrongToken(t *testing.T) {
	if _, err := New(Config{Token: "x"}); err == nil {
		t.Error("an adapter without a KV store was made")
	}
	f := newFakeDiscord(t)
	f.t = quietT{t} // the fake reports the bad token as a test failure otherwise
	a := mustNew(t, Config{Token: "wrong.token-value.abcdefghijklmnopqrstu", APIURL: f.srv.URL, KV: mem.New()})
	a.Attach(handOnly{})
	err := a.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "401") || strings.Contains(err.Error(), "abcdefghijklmnopqrstu") {
		t.Errorf("Run with a wrong token: %v", err)
	}
}

// quietT lets a test expect the fake's complaints.
type quietT struct{ testing.TB }

func (quietT) Errorf(string, ...any) {}

// The outbox keeps under its share of the global rate limit whatever the number of channels.
func TestOutboxGlobalRate(t *testing.T) {
	f := newFakeDiscord(t)
	a := mustNew(t, Config{Token: f.Token, APIURL: f.srv.URL, KV: mem.New(), MaxRate: 100})
	t.Cleanup(func() { unregister(a) })
	var msgs []api.Message
	for i := range 40 {
		ch := strconv.Itoa(700000 + i)
		msgs = append(msgs, api.Message{Target: api.Target{Kind: api.ToPlace, Place: api.Place{Platform: Platform, Chat: ch}},
			Kind: api.KindNotice, Text: "hi"})
	}
	start := time.Now()
	a.Deliver(context.Background(), msgs)
	if err := a.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	// A burst of 10, then 100 a second: the other 30 take at least 0.3 s.
	if d := time.Since(start); d < 290*time.Millisecond {
		t.Errorf("40 messages in %v: faster than 100 a second", d)
	}
	if n := f.callCounts()["POST channels/{id}/messages"]; n != 40 {
		t.Errorf("%d messages sent", n)
	}
}

// A move from a DM hand holds the user's queue: the hand the move produced is taken from it to be
// shown by the response, only if the pressed message is the one showing that hand; one given
// back goes out after all. (The engine's own tests cover the hold itself.)
func TestHandUpdateFromHeldQueue(t *testing.T) {
	f := newFakeDiscord(t)
	a := mustNew(t, Config{Token: f.Token, APIURL: f.srv.URL, KV: mem.New()})
	player := api.Player{ID: "dc:" + bob.ID, Name: "Bob"}
	hand := func(v uint64) api.Message {
		return api.Message{Target: api.Target{Kind: api.ToPlayer, Player: player,
			Place: api.Place{Platform: Platform, Chat: guildChannel}}, Kind: api.KindHand, Key: "t/hand/m1/1/dc:" + bob.ID,
			Version: v, Table: "t", Text: "v" + strconv.Itoa(int(v))}
	}
	ctx := context.Background()
	shown := func() fakeMessage {
		t.Helper()
		dm := f.dm(bob.ID)
		if len(dm) != 1 {
			t.Fatalf("%d DMs", len(dm))
		}
		return dm[0]
	}
	a.Deliver(ctx, []api.Message{hand(1)})
	a.Flush(ctx)
	id := shown().ID

	h := a.out.Hold("dm:" + bob.ID)
	a.Deliver(ctx, []api.Message{hand(2)}) // what the move produced
	if _, ok := a.takeHandUpdate(h, bob.ID, "another-message", "t", false); ok {
		t.Fatalf("took a hand shown in another message")
	}
	if _, ok := a.takeHandUpdate(h, bob.ID, id, "other-table", false); ok {
		t.Fatalf("took another table's hand")
	}
	it, ok := a.takeHandUpdate(h, bob.ID, id, "t", false)
	if !ok || it.Version != 2 {
		t.Fatalf("took %+v, %v", it, ok)
	}
	h.GiveBack(it) // the response failed
	h.Release()
	a.Flush(ctx)
	if m := shown(); m.Content != "v2" || m.Edits != 1 {
		t.Errorf("a failed response's hand: shown %q after %d edits, want v2 after 1", m.Content, m.Edits)
	}
}

func TestRenderUsesKmSubcommands(t *testing.T) {
	got := render(api.Message{Text: "Open one with /new, then /join; /rematch rotate."}, "")
	want := `Open one with /km new, then /km join; /km rematch rotate.`
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestTimerChoicesShowTheServiceTimeouts(t *testing.T) {
	var timer *discordgo.ApplicationCommandOption
	for _, sub := range Commands(false)[0].Options {
		for _, o := range sub.Options {
			if sub.Name == "new" && o.Name == "timer" {
				timer = o
			}
		}
	}
	if timer == nil {
		t.Fatal("/km new has no timer option")
	}
	var got []string
	for _, c := range timer.Choices {
		got = append(got, c.Name+" / "+c.NameLocalizations[discordgo.German])
	}
	want := []string{"fast (45 s) / kurz (45 s)", "normal (3 min) / normal (3 min)", "relaxed (4 h) / lang (4 h)", "unlimited / unbegrenzt"}
	if !slices.Equal(got, want) {
		t.Errorf("timer choices %q, want %q", got, want)
	}
}

// What players named themselves, and any text, shows as written: no Markdown of a name changes
// how a message looks. discordShows reads a rendered text as Discord's Markdown would and says
// what would not show as plain text.
func TestEscapeHostileNames(t *testing.T) {
	for _, name := range []string{
		"[Free Nitro](https://evil.example/nitro)",
		"# BIG", "## big", "### big", "-# small", "> quote", ">>> quotes", "- list", "+ list", "* list", "1. list",
		"<t:0:R>", "<t:1700000000>", "<@100000000000000001>", "<@&700000000000000009>", "<#500000000000000001>",
		"</km new:700000000000000001>", "<:blob:123456789012345678>", "@everyone", "@here",
		"**bold** __under__ ~~gone~~ ||spoiler|| `code`", `back\slash\`,
		"https://example.org/a_b_c*d*", "a*https://x.example/*b*", "[x](<https://evil.example>)",
	} {
		t.Run(name, func(t *testing.T) {
			for _, text := range []string{name, "Team A: " + name + " & Bob", name + "\n" + name} {
				out := render(api.Message{Text: text}, "")
				if shown, bad := discordShows(out); bad != "" || shown != text {
					t.Errorf("%q rendered as %q: Discord shows %q (%s)", text, out, shown, bad)
				}
			}
		})
	}
	// The place's name in a title is the adapter's own channel mention: it stays a mention.
	if got := render(api.Message{Title: "Table in <#500000000000000001>", Text: "x"}, ""); got != "**Table in <#500000000000000001>**\nx" {
		t.Errorf("title %q", got)
	}
	if got := render(api.Message{Title: "<t:0> in <#5>", Text: "x"}, ""); got != `**\<t:0> in <#5>**`+"\nx" {
		t.Errorf("title %q", got)
	}
}

// discordShows gives the text a rendered message shows, and what Markdown would still format
// it ("" if none): an unescaped character that starts Markdown, or Markdown at a line's start. A
// web address is a link as it stands and shown as written.
func discordShows(out string) (shown, markdown string) {
	var b strings.Builder
	for li, line := range strings.Split(out, "\n") {
		if li > 0 {
			b.WriteByte('\n')
		}
		if lineStart.MatchString(line) {
			markdown = "line start: " + line
		}
		for i := 0; i < len(line); i++ {
			if loc := webAddress.FindStringIndex(line[i:]); loc != nil && loc[0] == 0 {
				b.WriteString(line[i : i+loc[1]])
				i += loc[1] - 1
				continue
			}
			c := line[i]
			switch {
			case c == '\\' && i+1 < len(line) && !unicode.IsLetter(rune(line[i+1])) && !unicode.IsDigit(rune(line[i+1])) && line[i+1] != ' ':
				b.WriteByte(line[i+1])
				i++
			case strings.IndexByte("*_~`|[<", c) >= 0:
				markdown = fmt.Sprintf("unescaped %q in %q", c, line)
				b.WriteByte(c)
			case strings.HasPrefix(line[i:], "@everyone") || strings.HasPrefix(line[i:], "@here"):
				markdown = "a mention of everyone in " + line
				b.WriteByte(c)
			default:
				b.WriteByte(c)
			}
		}
	}
	return b.String(), markdown
}

// runKey marks Run's context in TestInteractionsDeriveFromRun.
type runKey struct{}

// ctxSpy notes whether the commands came with Run's context.
type ctxSpy struct {
	chat.Service
	fromRun *atomic.Bool
}

func (c ctxSpy) Handle(ctx context.Context, cmd api.Command) ([]api.Message, error) {
	c.fromRun.Store(ctx.Value(runKey{}) == "run")
	return c.Service.Handle(ctx, cmd)
}

// An interaction is handled within a context derived from Run's, as net/http's requests are
// from its BaseContext: what Run's context carries reaches the service with each command.
func TestInteractionsDeriveFromRun(t *testing.T) { eachMode(t, testInteractionsDeriveFromRun) }

func testInteractionsDeriveFromRun(t *testing.T, f *fakeDiscord) {
	store := mem.New()
	var fromRun atomic.Bool
	startHarness(t, f, store, store, harnessOpt{
		run:  func(ctx context.Context) context.Context { return context.WithValue(ctx, runKey{}, "run") },
		wrap: func(s chat.Service) chat.Service { return ctxSpy{s, &fromRun} },
	})
	if r := f.slash(alice, guildChannel, "rules"); r.Type != 4 {
		t.Fatalf("/km rules answered %+v", r)
	}
	if !fromRun.Load() {
		t.Error("the command was not handled within Run's context")
	}
}

// Show gives up when its context ends (the outbox gives up what it holds at Close): no DM
// channel is opened and nothing is posted.
func TestShowHonoursItsContext(t *testing.T) {
	f := newFakeDiscord(t)
	a := mustNew(t, Config{Token: f.Token, APIURL: f.srv.URL, KV: mem.New()})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	place := api.Place{Platform: Platform, Chat: guildChannel}
	for _, it := range []*item{
		{Dest: "dm:" + bob.ID, Msg: api.Message{Target: api.Target{Kind: api.ToPlayer, Place: place,
			Player: api.Player{ID: "dc:" + bob.ID}}, Kind: api.KindNotice, Text: "a DM"}},
		{Dest: "ch:" + guildChannel, Msg: api.Message{Target: api.Target{Kind: api.ToPlace, Place: place},
			Kind: api.KindNotice, Text: "a post"}},
	} {
		if _, _, err := (platform{a}).Show(ctx, it, nil); err == nil {
			t.Errorf("%s: shown with its context ended", it.Dest)
		}
	}
	if calls := f.callCounts(); calls["POST users/@me/channels"] != 0 || calls["POST channels/{id}/messages"] != 0 {
		t.Errorf("requests made with the context ended: %v", calls)
	}
}

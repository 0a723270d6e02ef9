package discord

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// /km says where it may be used: installed with a server, used there and, registered globally,
// in DMs with the bot; never in group DMs or from a user's own install.
func TestCommandContexts(t *testing.T) {
	type scope struct {
		Contexts         []int `json:"contexts"`
		IntegrationTypes []int `json:"integration_types"`
	}
	registered := func(f *fakeDiscord) scope {
		f.mu.Lock()
		defer f.mu.Unlock()
		var cmds []scope
		if err := json.Unmarshal(f.commands, &cmds); err != nil || len(cmds) != 1 {
			t.Fatalf("commands %s: %v", f.commands, err)
		}
		return cmds[0]
	}
	f := newFakeDiscord(t)
	store := mem.New()
	h := startHarness(t, f, store, store) // the server's own commands
	if got := registered(f); !slices.Equal(got.Contexts, []int{0}) || !slices.Equal(got.IntegrationTypes, []int{0}) {
		t.Errorf("guild command: %+v, want contexts [0] (guild commands have no BOT_DM) and integration_types [0]", got)
	}
	h.stop()

	g := newFakeDiscord(t)
	a := mustNew(t, Config{Token: g.Token, APIURL: g.srv.URL, KV: store})
	a.Attach(handOnly{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	g.waitFor("the global registration", func() bool { return g.commandsPath == "applications/"+g.AppID+"/commands" })
	if got := registered(g); !slices.Equal(got.Contexts, []int{0, 1}) || !slices.Equal(got.IntegrationTypes, []int{0}) {
		t.Errorf("global command: %+v, want contexts [0 1] and integration_types [0]", got)
	}
	g.waitFor("the gateway", g.connected)
	cancel()
	if err := <-done; err != nil {
		t.Error(err)
	}
}

// A command from a server the bot is not a member of answers with the link that adds it, and
// changes nothing: from a user who installed the app to their account, or from a server that
// added the commands without the bot.
func TestAddMeWhereTheBotIsNotAMember(t *testing.T) {
	const otherGuild, otherChannel = "810000000000000001", "520000000000000001"
	for _, tc := range []struct {
		name  string
		guild fakeGuild
	}{
		{"user install", fakeGuild{ID: otherGuild, NotInstalled: true}},
		{"commands without the bot", fakeGuild{ID: otherGuild, CommandsOnly: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeDiscord(t)
			f.guilds[otherGuild] = &tc.guild
			f.setChannel(fakeChannel{ID: otherChannel, Guild: otherGuild, Perms: Permissions})
			store := mem.New()
			h := startHarness(t, f, store, store)
			r := f.slash(carla, otherChannel, "new")
			if want := ephemeralText("fr", "discord.add_me", InviteURL(f.AppID, otherGuild)); r.Type != 4 || r.Flags&64 == 0 || r.Content != want {
				t.Errorf("/km new answered %+v\nwant %q", r, want)
			}
			h.a.Flush(context.Background())
			if id := h.svc.TableAt(api.Place{Platform: Platform, Chat: otherChannel}); id != "" {
				t.Errorf("a table was opened: %s", id)
			}
			if n := f.callCounts()["POST channels/{id}/messages"]; n != 0 {
				t.Errorf("%d messages tried", n)
			}
			// In the server where the bot is, the same works.
			if r := f.slash(carla, guildChannel, "new"); r.Content != ephemeralText("fr", "note.opened") {
				t.Errorf("/km new where the bot is: %+v", r)
			}
		})
	}
}

func TestInviteURL(t *testing.T) {
	u, err := url.Parse(InviteURL("900000000000000001", "800000000000000001"))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	if u.Host != "discord.com" || u.Path != "/oauth2/authorize" || q.Get("client_id") != "900000000000000001" ||
		q.Get("scope") != "bot applications.commands" || q.Get("permissions") != "274877942784" ||
		q.Get("integration_type") != "0" || q.Get("guild_id") != "800000000000000001" {
		t.Errorf("invite URL %s", u)
	}
	// View Channel, Send Messages, Attach Files and Send Messages in Threads: nothing else.
	if Permissions != 1<<10|1<<11|1<<15|1<<38 {
		t.Errorf("permissions %d", Permissions)
	}
}

// A command's size counts each field's longest localization, as Discord does: a command whose
// default texts are short but whose German ones are long is refused. /km, in its three
// languages, fits.
func TestCommandSizeCountsTheLongestLocalization(t *testing.T) {
	f := newFakeDiscord(t)
	a := mustNew(t, Config{Token: f.Token, APIURL: f.srv.URL, KV: mem.New()})
	long := map[discordgo.Locale]string{discordgo.German: strings.Repeat("ä", 100)}
	big := &discordgo.ApplicationCommand{Name: "big", Description: "x", DescriptionLocalizations: &long}
	for s := range 25 {
		sub := &discordgo.ApplicationCommandOption{Type: discordgo.ApplicationCommandOptionSubCommand,
			Name: fmt.Sprintf("s%d", s), Description: "x", DescriptionLocalizations: long}
		for o := range 25 {
			sub.Options = append(sub.Options, &discordgo.ApplicationCommandOption{Type: discordgo.ApplicationCommandOptionString,
				Name: fmt.Sprintf("o%d", o), Description: "x", DescriptionLocalizations: long})
		}
		big.Options = append(big.Options, sub)
	}
	if _, err := a.rest.ApplicationCommandBulkOverwrite(f.AppID, f.GuildID, []*discordgo.ApplicationCommand{big}); restCode(err) != 50035 {
		t.Errorf("a command of 2,344 characters by its defaults and 66,793 by its longest texts: %v, want refused (50035)", err)
	}
	for _, guildOnly := range []bool{true, false} {
		if _, err := a.rest.ApplicationCommandBulkOverwrite(f.AppID, map[bool]string{true: f.GuildID}[guildOnly], Commands(guildOnly)); err != nil {
			t.Errorf("/km (guild only %v) refused: %v", guildOnly, err)
		}
	}
}

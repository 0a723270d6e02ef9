package telegram

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// A group with privacy mode on, as every bot has it by default: a plain /new in a fresh group
// never reaches the bot. Added to the group, the bot posts a welcome with a New table button;
// from there a whole match is played with buttons, also after another bot spoke, and every text
// the group reads names the bot in the commands it tells people to type.
func TestPrivacyModeWholeMatchWithButtons(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		humans := []tgUser{alice, bob, carla}
		f, _, logs, e := startedEnv(t, humans...)
		f.command(alice, group, 0, "/new")
		settle(5 * time.Second)
		if n := len(f.messages(group)); n != 0 || !slices.Contains(f.ignoredTexts(), "/new") {
			t.Fatalf("a plain /new in a fresh group: %d bot messages, ignored %q", n, f.ignoredTexts())
		}

		f.addBot(group, alice)
		settle(3 * time.Second)
		welcome, data, ok := lastWith(f, group, api.VerbNew, "")
		if !ok {
			t.Fatalf("no New table button after the bot was added: %+v", f.messages(group))
		}
		// Without a rules page of the host's, the welcome links no page (the project's is in
		// English only); its Rules button tells the rules in the group (issue 35).
		if urls := welcome.urls(); len(urls) != 0 {
			t.Errorf("the welcome links %q without a rules page configured", urls)
		}
		if text, alert := answerOf(t, f, mustPress(t, f, bob, group, api.VerbRules, "")); alert {
			t.Fatalf("the welcome's Rules button refused: %s", text)
		}
		settle(3 * time.Second)
		if got := newest(f, group).Text; !strings.Contains(got, i18n.T("en", "rules.title")) {
			t.Errorf("the welcome's Rules button told the group %q", got)
		}
		if len(data) > api.MaxActionLen {
			t.Errorf("the New table button's data is %d bytes", len(data))
		}

		f.otherBotSpeaks(group)
		f.command(bob, group, 0, "/join") // goes to the other bot, not to ours
		settle(3 * time.Second)
		id := f.press(alice, &welcome, data)
		if text, alert := answerOf(t, f, id); alert {
			t.Fatalf("New table refused: %s", text)
		}
		settle(3 * time.Second)
		for _, u := range humans[1:] {
			if text, alert := answerOf(t, f, mustPress(t, f, u, group, api.VerbJoin, "")); alert {
				t.Fatalf("%s could not join: %s", u.First, text)
			}
		}
		settle(5 * time.Second)
		if text, alert := answerOf(t, f, mustPress(t, f, alice, group, api.VerbDeal, "")); alert {
			t.Fatalf("deal refused: %s", text)
		}
		d := newDriver(t, f, 11)
		d.playUntil(humans, time.Hour, func() bool { return d.moves >= 6 })

		// Another bot speaks in the middle of the game: a command naming ours still arrives.
		f.otherBotSpeaks(group)
		before := len(f.messages(group))
		f.command(carla, group, 0, "/board@"+botUsername)
		f.command(carla, group, 0, "/last")
		settle(time.Minute) // behind the game's own messages, within the group's 20 a minute
		var board bool
		for _, m := range f.messages(group)[before:] {
			board = board || strings.Contains(m.Text, i18n.T("en", "board.title"))
		}
		if !board {
			t.Errorf("/board@bot after another bot spoke got no answer: %+v; ignored %q", f.messages(group)[before:], f.ignoredTexts())
		}

		d.playUntil(humans, 3*time.Hour, func() bool { return over(f) })
		settle(10 * time.Second)
		if _, _, ok := lastWith(f, group, api.VerbRematch, ""); !ok {
			t.Error("the match did not end with rematch buttons")
		}
		if d.moves < 20 {
			t.Errorf("only %d moves by the humans' buttons", d.moves)
		}

		// Telegram's Start button in a group sends /start@bot: the welcome comes again.
		welcomes := func() int {
			n := 0
			for _, m := range f.messages(group) {
				for _, b := range m.buttons() {
					if act, err := api.ParseAction(b[1]); err == nil && act.Verb == api.VerbNew {
						n++
					}
				}
			}
			return n
		}
		before = welcomes()
		f.command(carla, group, 0, "/start@"+botUsername)
		settle(time.Minute)
		if n := welcomes(); n != before+1 {
			t.Errorf("/start@bot in the group: %d welcomes, want %d", n, before+1)
		}

		for _, c := range f.Calls() {
			if c.Chat < 0 && c.Err == "" {
				for _, bare := range bareCommands(c.Params["text"] + " " + c.Params["caption"]) {
					t.Errorf("%s in the group says %q without the bot's name: %q", c.Method, bare, c.Params["text"]+c.Params["caption"])
				}
			}
		}
		for _, a := range f.groupAnswers() {
			for _, bare := range bareCommands(a) {
				t.Errorf("an answer to a press in the group says %q without the bot's name: %q", bare, a)
			}
		}
		e.close()
		checkClean(t, f, logs)
	})
}

// commandMention finds a command as texts tell people to type it, and whom it names.
var commandMention = regexp.MustCompile(`(?:^|[\s(“"„«])/([a-z_]+)(@[A-Za-z0-9_]+)?`)

// bareCommands lists the bot's commands a text mentions without naming the bot.
func bareCommands(text string) []string {
	var out []string
	for _, m := range commandMention.FindAllStringSubmatch(text, -1) {
		if _, ok := api.ParseVerb(m[1]); ok && m[2] == "" {
			out = append(out, "/"+m[1])
		}
	}
	return out
}

func TestRewriteCommands(t *testing.T) {
	for _, tc := range [][2]string{
		{"Join with the button or /join; /new opens one.", "Join with the button or /join@bot; /new@bot opens one."},
		{"/help", "/help@bot"},
		{"Play again with /rematch (same teams) or /rematch rotate.", "Play again with /rematch@bot (same teams) or /rematch@bot rotate."},
		{"“/stop” and (/board).", "“/stop@bot” and (/board@bot)."},
		{"Full rules: https://github.com/kontermatt/kontermatt/blob/main/docs/rules.md", "Full rules: https://github.com/kontermatt/kontermatt/blob/main/docs/rules.md"},
		{"t.me/kmbot?start=x and a/b and /join@other", "t.me/kmbot?start=x and a/b and /join@other"},
		{"/new\n/join — take a seat", "/new@bot\n/join@bot — take a seat"},
		{"a path /usr/bin and /rules.md", "a path /usr/bin and /rules.md"},
		{"", ""},
		{"/", "/"},
	} {
		if got := addressed(tc[0], "bot"); got != tc[1] {
			t.Errorf("addressed(%q)\n got %q\nwant %q", tc[0], got, tc[1])
		}
	}
}

package discord

import (
	"strings"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/adapters/internal/chat"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// Players with hostile names sit down: every channel message shows their names as written, and
// nothing of them formats the table (no masked link, heading, timestamp or mention).
func TestHostileNamesAtTheTable(t *testing.T) { eachMode(t, testHostileNamesAtTheTable) }

func testHostileNamesAtTheTable(t *testing.T, f *fakeDiscord) {
	store := mem.New()
	startHarness(t, f, store, store)
	nitro := fakeUser{ID: "100000000000000011", Name: "[Free Nitro](https://evil.example/nitro)", Locale: "en-US"}
	big := fakeUser{ID: "100000000000000012", Name: "# BIG", Locale: "en-US"}
	when := fakeUser{ID: "100000000000000013", Name: "<t:0:R>", Locale: "en-US"}
	all := fakeUser{ID: "100000000000000014", Name: "@everyone -# x", Locale: "en-US"}
	openTable(t, f, nitro, []fakeUser{big, when, all}, opt("timer", 3, "none"))
	liveMessage(f)
	for _, m := range f.channel(guildChannel) {
		content := m.Content
		if strings.HasPrefix(content, "<@") { // the adapter's own ping
			content = content[strings.Index(content, ">")+1:]
		}
		shown, markdown := discordShows(content)
		if markdown != "" {
			t.Errorf("%s in\n%s", markdown, m.Content)
		}
		for _, u := range []fakeUser{nitro, big, when} {
			if !strings.Contains(shown, u.Name) {
				t.Errorf("%q is not shown as written in\n%s", u.Name, shown)
			}
		}
	}
}

// /km rules shows the link to the rules as it is: not rewritten like a command ("…/docs/km
// rules.md"), not broken by escaping ("km\_docs").
func TestRulesLinkWorks(t *testing.T) {
	for _, url := range []string{"", "https://example.org/km_docs/rules~1.md"} {
		t.Run(url, func(t *testing.T) {
			f := newFakeDiscord(t)
			store := mem.New()
			startHarness(t, f, store, store, harnessOpt{table: func(c *table.Config) { c.RulesURL = url }})
			r := f.slash(alice, guildChannel, "rules")
			found := webAddress.FindAllString(r.Content, -1)
			switch {
			case url == "" && len(found) != 0: // no page configured: none in English only elsewhere (issue 35)
				t.Errorf("/km rules links %q, want no link:\n%s", found, r.Content)
			case url != "" && (len(found) != 1 || found[0] != url):
				t.Errorf("/km rules links %q, want %q:\n%s", found, url, r.Content)
			}
		})
	}
}

// A player named after a web address hangs no preview of that site under the table, even where
// the bot may embed links.
func TestNoLinkPreviewsFromNames(t *testing.T) { eachMode(t, testNoLinkPreviewsFromNames) }

func testNoLinkPreviewsFromNames(t *testing.T, f *fakeDiscord) {
	f.setPerms(guildChannel, Permissions|permEmbedLinks)
	store := mem.New()
	startHarness(t, f, store, store)
	site := fakeUser{ID: "100000000000000021", Name: "https://evil.example/free-nitro", Locale: "en-US"}
	openTable(t, f, alice, []fakeUser{site}, opt("timer", 3, "none"))
	liveMessage(f)
	shown := 0
	for _, m := range f.channel(guildChannel) {
		if strings.Contains(m.Content, site.Name) {
			shown++
		}
		if m.Previews > 0 {
			t.Errorf("a link preview under %q", m.Content)
		}
	}
	if shown == 0 {
		t.Errorf("the name is shown nowhere: the test proves nothing")
	}
}

// Nor under an answer: the interaction's messages set SUPPRESS_EMBEDS too, at once, in the edit
// of a deferred answer and in a follow-up.
func TestNoLinkPreviewsInAnswers(t *testing.T) {
	site := fakeUser{ID: "100000000000000021", Name: "https://evil.example/free-nitro", Locale: "en-US"}
	for _, slow := range []bool{false, true} {
		t.Run(map[bool]string{false: "at once", true: "deferred"}[slow], func(t *testing.T) {
			f := newFakeDiscord(t)
			f.setPerms(guildChannel, Permissions|permEmbedLinks)
			store := mem.New()
			var opts []harnessOpt
			if slow {
				opts = append(opts, harnessOpt{
					cfg:  func(c *Config) { c.AckAfter = 30 * time.Millisecond },
					wrap: func(h chat.Service) chat.Service { return slowHandler{h, 150 * time.Millisecond} },
				})
			}
			startHarness(t, f, store, store, opts...)
			f.response(f.dispatch(site, 2, guildChannel, slashData("new", nil), nil))
			lobby, _ := waitLobby(f)
			board := f.dispatch(site, 2, guildChannel, slashData("board", nil), nil)
			deal, _ := findButton(lobby, api.VerbDeal)
			press := f.pressAsync(eve, lobby, deal.CustomID) // not seated: refused, in words
			var answers []fakeMessage
			f.waitFor("the answers", func() bool {
				answers = answers[:0]
				if m, ok := f.msgs[board.Original]; ok && strings.Contains(m.Content, site.Name) {
					answers = append(answers, m.copy())
				}
				ids := append([]string{press.Original}, press.Followups...)
				for _, id := range ids {
					if m, ok := f.msgs[id]; ok && m.Interaction == press.ID && m.Content != "" {
						answers = append(answers, m.copy())
					}
				}
				return len(answers) == 2
			})
			for _, m := range answers {
				if m.Previews > 0 || m.Flags&4 == 0 {
					t.Errorf("an answer with flags %d and %d link previews: %q", m.Flags, m.Previews, m.Content)
				}
			}
		})
	}
}

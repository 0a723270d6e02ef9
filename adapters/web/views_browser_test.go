//go:build browser

package web

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/cdproto/network"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// viewsTable is a table of four people speaking lang, played from the chat until the first
// one's view is the state named; it gives the table and that person.
func viewsTable(t *testing.T, e *env, lang, state string) (string, api.Player) {
	t.Helper()
	place := api.Place{Platform: benchPlatform, Chat: "views-" + lang + "-" + state}
	var ps []api.Player
	for i := range 4 {
		ps = append(ps, api.Player{ID: fmt.Sprintf("dc:%s%d%d", lang, len(state), i), Name: fmt.Sprintf("Spiller %d", i+1), Locale: lang})
	}
	stripes := "stripes=7" // a match that goes on past the states wanted
	if state == "match-end" || state == "replay" {
		stripes = "stripes=1"
	}
	e.do(place, ps[0], api.VerbNew, "timer=none", stripes)
	id := e.svc.TableAt(place)
	if state == "lobby" {
		return id, ps[0]
	}
	for _, p := range ps[1:] {
		e.do(place, p, api.VerbJoin)
	}
	e.do(place, ps[0], api.VerbDeal)
	switch state {
	case "trump":
		e.actUntil(id, ps, ps[0], func(v SeatView) bool { return len(v.Trumps) > 0 })
	case "trick", "watch":
		e.actUntil(id, ps, ps[0], func(v SeatView) bool { return v.Game.Phase == "play" && len(v.Game.Trick.Plays) > 0 })
	case "game-end":
		// The result stays until the next deal's first card: the person names trump or leads.
		e.actUntil(id, ps, ps[0], func(v SeatView) bool {
			return v.Ended != nil && v.Status == api.StatusPlaying && len(v.Game.Trick.Plays) == 0
		})
	case "match-end", "replay":
		for i := 0; i < 2000; i++ {
			v, _ := e.web.SeatView(context.Background(), id, ps[0])
			if v.Status == api.StatusOver {
				return id, ps[0]
			}
			q := ps[v.Game.ToMove]
			qv, _ := e.web.SeatView(context.Background(), id, q)
			e.act(q, qv)
		}
		t.Fatal("the match did not end")
	}
	return id, ps[0]
}

// viewReady is what the page shows once it shows each state.
var viewReady = map[string]string{
	"lobby":     `document.querySelector("#board .lobby") && document.querySelector("#choices button.deal")`,
	"trump":     `document.querySelector("#choices button.trump")`,
	"trick":     `document.querySelectorAll("#trick .card").length > 0 && document.querySelector("#hand .card.legal")`,
	"game-end":  `!document.getElementById("result").hidden`,
	"watch":     `document.querySelectorAll("#trick .card").length > 0 && document.querySelectorAll("#hand .card").length === 0 && !document.getElementById("watchers").hidden`,
	"match-end": `!document.getElementById("result").hidden && document.querySelector("#choices button.rematch") && document.querySelector("#result img.sheet")`,
	"replay":    `document.querySelector("#choices button.rematch") && !document.getElementById("replays").hidden`,
}

// stepReplay opens the played matches from the page, picks the match just played and steps
// through it with the keyboard: the focus goes to "Next", each arrow key shows the next step, and
// the live region says what the step shows.
func stepReplay(t *testing.T, tb *tab, what string) {
	t.Helper()
	tb.eval(`document.getElementById("replays").click(); true`, nil)
	tb.waitJS(what+" the list of played matches", `document.querySelectorAll("#replay-list .replay-pick").length === 1`)
	tb.eval(`document.querySelector("#replay-list .replay-pick").click(); true`, nil)
	tb.waitJS(what+" the replay", `!document.getElementById("replay-match").hidden && document.activeElement.id === "replay-next"`)
	var first string
	tb.eval(`document.getElementById("replay-step").textContent`, &first)
	tb.run(chromedp.KeyEvent(kb.ArrowRight), chromedp.KeyEvent(kb.ArrowRight), chromedp.KeyEvent(kb.ArrowRight))
	var got struct {
		Step, Say, Said string
		Cards, Hands    int
		Table           bool
	}
	tb.eval(`({step: document.getElementById("replay-step").textContent, say: document.getElementById("replay-say").textContent,
		said: document.querySelector("#said p:last-child").textContent, hands: document.querySelectorAll("#replay-seats .card").length,
		cards: document.querySelectorAll("#replay-trick .card").length, table: !document.getElementById("play").hidden})`, &got)
	if got.Step == first || got.Say == "" || got.Say != got.Said || got.Table {
		t.Errorf("%s: after three steps %+v (first %q)", what, got, first)
	}
	if got.Hands+got.Cards != 24 { // the deal and trump: every card in a hand or on the felt
		t.Errorf("%s: %d cards in the hands and %d on the felt", what, got.Hands, got.Cards)
	}
}

// axe-core finds no serious or critical violation on the lobby, the trump choice, a trick in
// play, a game's end, the match's end, the watch view (no hand) and a replay of the match just
// played (stepped through with the keyboard: stepReplay), in all four languages, at
// 320 px and at 1280 px; a screenshot of each is kept ($KONTERMATT_SCREENSHOTS, else the test's
// temporary directory).
func TestBrowserAxeEveryView(t *testing.T) {
	src := axe(t)
	e := newEnv(t, fastPlayer)
	b := browser(t)
	dir := os.Getenv("KONTERMATT_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	sizes := []struct{ w, h int64 }{{320, 640}, {1280, 800}}
	tabs := make([]*tab, len(sizes))
	for i, s := range sizes {
		tabs[i] = newTabSized(t, b, false, s.w, s.h)
	}
	loads := 0
	for _, lang := range i18n.Languages {
		for _, state := range []string{"lobby", "trump", "trick", "game-end", "match-end", "watch", "replay"} {
			id, p := viewsTable(t, e, lang, state)
			for i, s := range sizes {
				tb := tabs[i]
				link := e.link(p, id)
				if state == "watch" {
					// Someone without a seat, whose browser speaks lang.
					link = e.web.WatchLink(id)
					tb.eval(`sessionStorage.clear(); true`, nil)
					tb.withScripts(`Object.defineProperty(navigator, "language", {get: () => "` + lang + `", configurable: true})`)
				}
				// In front: a hidden tab draws no frames, and a screenshot waits for one. Each page
				// comes from an address of its own, as the reverse proxy on this machine names it:
				// the session requests of one address are limited.
				loads++
				from := network.Headers{"X-Forwarded-For": fmt.Sprintf("10.9.%d.%d", loads/200, loads%200)}
				tb.run(cdppage.BringToFront(), network.SetExtraHTTPHeaders(from), chromedp.Navigate("about:blank"), chromedp.Navigate(link))
				tb.waitJS(lang+" "+state, viewReady[state])
				if state == "replay" {
					stepReplay(t, tb, fmt.Sprint(lang, " ", s.w, "px"))
				}
				var pageLang string
				tb.eval(`document.documentElement.lang`, &pageLang)
				if pageLang != lang {
					t.Errorf("%s %s: the page speaks %q", lang, state, pageLang)
				}
				for _, x := range runAxe(tb, src) {
					t.Errorf("%s %s %dpx: %s (%s): %s %q", lang, state, s.w, x.ID, x.Impact, x.Help, x.Nodes)
				}
				var shot []byte
				tb.run(chromedp.CaptureScreenshot(&shot))
				name := filepath.Join(dir, fmt.Sprintf("view-%s-%s-%d.png", state, lang, s.w))
				if err := os.WriteFile(name, shot, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	t.Logf("screenshots in %s", dir)
}

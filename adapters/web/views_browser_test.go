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

	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table"
)

// viewsTable is a table of four people speaking lang, played from the chat until the first
// one's view is the state named; it gives the table and that person.
func viewsTable(t *testing.T, e *env, lang, state string) (string, table.Player) {
	t.Helper()
	place := table.Place{Platform: benchPlatform, Chat: "views-" + lang + "-" + state}
	var ps []table.Player
	for i := range 4 {
		ps = append(ps, table.Player{ID: fmt.Sprintf("dc:%s%d%d", lang, len(state), i), Name: fmt.Sprintf("Spiller %d", i+1), Locale: lang})
	}
	stripes := "stripes=7" // a match that goes on past the states wanted
	if state == "match-end" {
		stripes = "stripes=1"
	}
	e.do(place, ps[0], table.VerbNew, "timer=none", stripes)
	id := e.svc.TableAt(place)
	if state == "lobby" {
		return id, ps[0]
	}
	for _, p := range ps[1:] {
		e.do(place, p, table.VerbJoin)
	}
	e.do(place, ps[0], table.VerbDeal)
	switch state {
	case "trump":
		e.actUntil(id, ps, ps[0], func(v SeatView) bool { return len(v.Trumps) > 0 })
	case "trick", "watch":
		e.actUntil(id, ps, ps[0], func(v SeatView) bool { return v.Game.Phase == "play" && len(v.Game.Trick.Plays) > 0 })
	case "game-end":
		// The result stays until the next deal's first card: the person names trump or leads.
		e.actUntil(id, ps, ps[0], func(v SeatView) bool {
			return v.Ended != nil && v.Status == table.StatusPlaying && len(v.Game.Trick.Plays) == 0
		})
	case "match-end":
		for i := 0; i < 2000; i++ {
			v, _ := e.web.SeatView(context.Background(), id, ps[0])
			if v.Status == table.StatusOver {
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
}

// axe-core finds no serious or critical violation on the lobby, the trump choice, a trick in
// play, a game's end, the match's end and the watch view (no hand), in all four languages, at
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
		for _, state := range []string{"lobby", "trump", "trick", "game-end", "match-end", "watch"} {
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

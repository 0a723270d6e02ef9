//go:build browser

package web

import (
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/kontermatt/kontermatt/core/table/api"
)

// watchHolds makes the page note, for each finished trick its felt shows (four cards, one marked
// the winner), how long it stayed and whether the game's result showed with it.
const watchHolds = `(() => {
	window.holds = [];
	let cur = null;
	const look = () => {
		const cards = [...document.querySelectorAll("#trick .card")];
		const won = cards.filter(c => c.classList.contains("winner")).length;
		const key = cards.length === 4 && won === 1 ? cards.map(c => c.dataset.card).join(" ") : "";
		const now = performance.now();
		if (cur && cur.key !== key) { cur.ms = now - cur.from; window.holds.push(cur); cur = null; }
		if (key && !cur) cur = {key, from: now, result: !document.getElementById("result").hidden, ms: 0};
		if (cur && !document.getElementById("result").hidden) cur.result = true;
	};
	new MutationObserver(look).observe(document.getElementById("table"), {subtree: true, childList: true, attributes: true});
	look();
})()`

// heldPace is the quick pace with the finished trick held 1.5 s: long enough for a test to
// find it held between its taps.
const heldPace = `window.kmPace = {card: 20, trick: 1500, travel: 0, gather: 0, event: 20};`

type held struct {
	Key    string
	Ms     float64
	Result bool
}

// Against computer players that answer at once, at the page's own pace, each finished trick
// stays on the felt at least 2 s with its winner marked, and the game's last trick with its
// result, while the person plays a whole game by tapping. Before, the computer that took a
// trick led within milliseconds, and then the page held a trick 1.5 s.
func TestBrowserFinishedTrickStays(t *testing.T) {
	e := newEnv(t, fastPlayer)
	id, p, _ := e.soloTable(1)
	tb := newTabPaced(t, browser(t), false, 390, 844, "")
	tb.run(chromedp.Navigate(e.link(p, id)))
	tb.waitJS("the hand", `document.querySelectorAll("#hand .card").length > 0`)
	tb.eval(watchHolds, nil)
	tapGame(t, e, tb, id, p, 1)
	tb.waitJS("the felt past the game's end", `window.holds.some(h => h.result)`)
	var holds []held
	tb.eval(`window.holds`, &holds)
	results := 0
	for _, h := range holds {
		if h.Ms < 1990 {
			t.Errorf("the finished trick %s stayed %.0f ms", h.Key, h.Ms)
		}
		if h.Result {
			results++
		}
	}
	if len(holds) < 6 || results != 1 {
		t.Fatalf("a whole game showed %d finished tricks, %d with the game's result: %+v", len(holds), results, holds)
	}
	t.Logf("%d finished tricks held, the shortest %.0f ms", len(holds), shortest(holds))
}

func shortest(hs []held) float64 {
	m := 1e9
	for _, h := range hs {
		m = min(m, h.Ms)
	}
	return m
}

// freezer is a TCP proxy between the browser and the web server that can stop passing bytes
// either way, as a server that hangs or a network that drops everything would: connections stay
// open, nothing arrives, new ones are accepted and then hang too.
type freezer struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	cond   *sync.Cond
	frozen bool
	conns  []net.Conn
}

func newFreezer(t *testing.T) *freezer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &freezer{ln: ln}
	f.cond = sync.NewCond(&f.mu)
	t.Cleanup(func() {
		f.freeze(false)
		ln.Close()
		f.mu.Lock()
		for _, c := range f.conns {
			c.Close()
		}
		f.mu.Unlock()
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go f.serve(c)
		}
	}()
	return f
}

func (f *freezer) url() string { return "http://" + f.ln.Addr().String() }

// to sets the address the proxy passes to.
func (f *freezer) to(addr string) {
	f.mu.Lock()
	f.target = addr
	f.mu.Unlock()
}

func (f *freezer) freeze(on bool) {
	f.mu.Lock()
	f.frozen = on
	f.mu.Unlock()
	f.cond.Broadcast()
}

func (f *freezer) wait() {
	f.mu.Lock()
	for f.frozen {
		f.cond.Wait()
	}
	f.mu.Unlock()
}

func (f *freezer) serve(c net.Conn) {
	f.wait()
	f.mu.Lock()
	target := f.target
	f.mu.Unlock()
	s, err := net.Dial("tcp", target)
	if err != nil {
		c.Close()
		return
	}
	f.mu.Lock()
	f.conns = append(f.conns, c, s)
	f.mu.Unlock()
	pass := func(dst, src net.Conn) {
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				f.wait()
				if _, werr := dst.Write(buf[:n]); werr != nil {
					break
				}
			}
			if err != nil {
				break
			}
		}
		dst.Close()
		src.Close()
	}
	go pass(s, c)
	go pass(c, s)
}

// With the server frozen the page shows the overlay within 10 s, and nothing under it can be
// tapped; once the server answers again the page is back by itself within a few seconds, and a
// tap makes a move. Before, the page showed nothing wrong and a tap went nowhere.
func TestBrowserFrozenServerShowsTheOverlay(t *testing.T) {
	f := newFreezer(t)
	e := newEnv(t, fastPlayer, func(c *Config) { c.PublicURL = f.url() })
	f.to(strings.TrimPrefix(e.url, "http://"))
	b := browser(t)
	id, p, _ := e.soloTable(1)
	tb := newTab(t, b, false)
	tb.run(chromedp.Navigate(e.link(p, id)))
	v, _ := waitTurn(t, e, id, p, 1)
	tb.waitJS("the page at the player's turn", fmt.Sprintf(`document.getElementById("app").dataset.seq === "%d"`, v.Seq))
	f.freeze(true)
	frozen := time.Now()
	deadline := frozen.Add(10 * time.Second)
	for {
		var shown bool
		tb.eval(`!document.getElementById("overlay").hidden`, &shown)
		if shown {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("10 s after the server froze the page shows no overlay")
		}
		time.Sleep(50 * time.Millisecond)
	}
	took := time.Since(frozen)
	var under struct {
		Inert   bool
		Covered bool
	}
	tb.eval(`(() => { const c = document.querySelector("#hand .card"); const r = c.getBoundingClientRect();
		const at = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
		return {Inert: document.getElementById("app").inert, Covered: !!at && !!at.closest("#overlay")}; })()`, &under)
	if !under.Inert || !under.Covered {
		t.Fatalf("under the overlay the table can be used: %+v", under)
	}
	f.freeze(false)
	thawed := time.Now()
	tb.waitJS("the overlay gone", `document.getElementById("overlay").hidden`)
	t.Logf("the overlay showed %v after the freeze, and went %v after the server answered again", took.Round(100*time.Millisecond),
		time.Since(thawed).Round(100*time.Millisecond))
	if back := time.Since(thawed); back > 8*time.Second {
		t.Errorf("the page took %v to come back", back)
	}
	v, _ = waitTurn(t, e, id, p, 1)
	tapMove(t, e, tb, id, p, v)
}

// A second tab of the same player takes the seat: the first shows "Opened elsewhere — tap to
// take it back" over the table, and a tap there takes it back.
func TestBrowserOpenedElsewhere(t *testing.T) {
	e := newEnv(t, fastPlayer)
	b := browser(t)
	id, p, _ := e.soloTable(1)
	first, second := newTab(t, b, false), newTab(t, b, true)
	first.run(chromedp.Navigate(e.link(p, id)))
	first.waitJS("the hand", `document.querySelectorAll("#hand .card").length > 0`)
	second.run(chromedp.Navigate(e.link(p, id)))
	second.waitJS("the hand", `document.querySelectorAll("#hand .card").length > 0`)
	first.waitJS("the overlay", `!document.getElementById("overlay").hidden`)
	var text string
	first.eval(`document.getElementById("overlay-text").textContent`, &text)
	if text != "Opened elsewhere — tap to take it back" {
		t.Fatalf("the replaced tab says %q", text)
	}
	first.run(chromedp.Click(`#overlay-text`, chromedp.ByQuery))
	first.waitJS("the table taken back", `document.getElementById("overlay").hidden`)
	second.waitJS("the other tab's overlay", `!document.getElementById("overlay").hidden`)
}

// The turn's clock counts down on the page; a player whom the timer marked away sees it, with
// "I'm back", which gives them the seat again. The table is four people's, so that it waits for
// the next one once a computer has played for the absent player.
func TestBrowserClockAndImBack(t *testing.T) {
	e := newEnv(t, fastPlayer)
	b := browser(t)
	place := api.Place{Platform: benchPlatform, Chat: "clock"}
	var ps []api.Player
	for i := range 4 {
		ps = append(ps, api.Player{ID: fmt.Sprintf("tg:%d", 50+i), Name: fmt.Sprintf("Player %d", i+1), Locale: "en"})
	}
	e.do(place, ps[0], api.VerbNew, "timer=fast", "stripes=3")
	for _, q := range ps[1:] {
		e.do(place, q, api.VerbJoin)
	}
	e.do(place, ps[0], api.VerbDeal)
	id := e.svc.TableAt(place)
	p := ps[0]
	tb := newTab(t, b, false)
	tb.run(chromedp.Navigate(e.link(p, id)))
	tb.waitJS("the clock", `!document.getElementById("clock").hidden`)
	// The others play (as from the chat) until it is the page's player's turn.
	v := e.actUntil(id, ps, p, func(SeatView) bool { return true })
	tb.waitJS("the page at the player's turn", fmt.Sprintf(`document.getElementById("app").dataset.seq === "%d"`, v.Seq))
	var clock struct {
		Text string
		Left int
	}
	tb.eval(`({Text: document.getElementById("clock").textContent, Left: Number(document.getElementById("clock").dataset.left)})`, &clock)
	if !strings.HasPrefix(clock.Text, "⏱ Your time: 0:4") || clock.Left < 40 || clock.Left > 45 {
		t.Fatalf("the clock at the player's turn: %+v", clock)
	}
	tb.waitJS("the clock counting down", fmt.Sprintf(`Number(document.getElementById("clock").dataset.left) < %d`, clock.Left))
	e.restartAfter(50 * time.Second) // the bot was down longer than the turn's time
	tb.waitJS("the away notice", `!document.getElementById("away").hidden`)
	var away string
	tb.eval(`document.getElementById("away").textContent`, &away)
	if !strings.Contains(away, "computer plays for you") || !strings.Contains(away, "I'm back") {
		t.Fatalf("the away notice: %q", away)
	}
	tb.run(chromedp.Click(`#back`, chromedp.ByQuery))
	tb.waitJS("the seat taken back", `document.getElementById("away").hidden`)
	if v, _ := e.web.SeatView(context.Background(), id, p); v.Seats[v.You].Away {
		t.Fatal("the page shows the player back, the table does not")
	}
}

// axe is axe-core's script, from the file $KONTERMATT_AXE names (.ci/run installs a pinned
// axe-core with npm outside the repository and sets it).
func axe(t *testing.T) string {
	t.Helper()
	path := os.Getenv("KONTERMATT_AXE")
	if path == "" {
		t.Fatal("KONTERMATT_AXE is not set: the browser tests need axe-core's axe.min.js " +
			"(npm install --prefix DIR axe-core@4.14.1, then KONTERMATT_AXE=DIR/node_modules/axe-core/axe.min.js; .ci/run does so)")
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("KONTERMATT_AXE: %v", err)
	}
	defer f.Close()
	src, err := io.ReadAll(f)
	if err != nil || !strings.Contains(string(src), "axe") {
		t.Fatalf("KONTERMATT_AXE=%s is not axe-core's script: %v", path, err)
	}
	return string(src)
}

type violation struct {
	ID, Impact, Help string
	Nodes            []string
}

// runAxe runs axe-core in the tab and gives its serious and critical violations.
func runAxe(tb *tab, src string) []violation {
	tb.t.Helper()
	tb.eval(src+";true", nil)
	var out []violation
	await := func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }
	tb.run(chromedp.Evaluate(`axe.run(document, {resultTypes: ["violations"]}).then(r => r.violations
		.filter(v => v.impact === "serious" || v.impact === "critical")
		.map(v => ({ID: v.id, Impact: v.impact, Help: v.help, Nodes: v.nodes.map(n => n.html.slice(0, 160))})))`, &out, await))
	return out
}

// axe-core finds no serious or critical violation on the table in either theme: in play, with a
// finished trick and a game's result held, under the overlay.
func TestBrowserAxe(t *testing.T) {
	src := axe(t)
	e := newEnv(t, fastPlayer)
	b := browser(t)
	id, p, _ := e.soloTable(1)
	for _, dark := range []bool{false, true} {
		tb := newTabPaced(t, b, dark, 390, 844, heldPace)
		tb.run(chromedp.Navigate(e.link(p, id)))
		v, _ := waitTurn(t, e, id, p, 1)
		tb.waitJS("the player's turn", fmt.Sprintf(`document.getElementById("app").dataset.seq === "%d"`, v.Seq))
		for _, x := range runAxe(tb, src) {
			t.Errorf("dark %v, in play: %s (%s): %s %q", dark, x.ID, x.Impact, x.Help, x.Nodes)
		}
		// Play on until the felt holds a finished trick; then to the game's end, whose result
		// shows once the tricks before it were held.
		game := len(v.Board.Games) + 1
		tapUntil(t, e, tb, id, p, game, "finished trick held", `document.querySelector("#trick.held")`)
		for _, x := range runAxe(tb, src) {
			t.Errorf("dark %v, a trick held: %s (%s): %s %q", dark, x.ID, x.Impact, x.Help, x.Nodes)
		}
		tapGame(t, e, tb, id, p, game)
		tb.waitJS("the game's result", `!document.getElementById("result").hidden`)
		for _, x := range runAxe(tb, src) {
			t.Errorf("dark %v, a game's result: %s (%s): %s %q", dark, x.ID, x.Impact, x.Help, x.Nodes)
		}
		tb.eval(`document.getElementById("overlay").hidden = false; document.getElementById("overlay-text").textContent = "…"; true`, nil)
		for _, x := range runAxe(tb, src) {
			t.Errorf("dark %v, the overlay: %s (%s): %s %q", dark, x.ID, x.Impact, x.Help, x.Nodes)
		}
	}
}

// measureLatency makes the page note, for each tap on a legal card or a trump button, the time
// until the view the move made arrives (click → view) and until the frame after it was drawn is
// painted (click → paint). It runs before the page's own script, so its socket listener comes
// first: the view's time is taken before the page draws it.
const measureLatency = `(() => {
	window.lat = [];
	let pending = null;
	document.addEventListener("click", (ev) => {
		if (ev.target.closest("#hand .card.legal, #choices button.trump"))
			pending = {t0: performance.now(), seq: Number(document.getElementById("app").dataset.seq)};
	}, true);
	const WS = window.WebSocket;
	function Measured(url, protocols) {
		const ws = protocols ? new WS(url, protocols) : new WS(url);
		ws.addEventListener("message", (ev) => {
			if (!pending || !ev.data.startsWith('{"t":"view"')) return;
			if (JSON.parse(ev.data).view.seq <= pending.seq) return;
			const p = pending;
			pending = null;
			p.view = performance.now() - p.t0;
			requestAnimationFrame(() => {
				const ch = new MessageChannel();
				ch.port1.onmessage = () => { p.paint = performance.now() - p.t0; window.lat.push(p); };
				ch.port2.postMessage(0);
			});
		});
		return ws;
	}
	Measured.prototype = WS.prototype;
	for (const k of ["CONNECTING", "OPEN", "CLOSING", "CLOSED"]) Measured[k] = WS[k];
	window.WebSocket = Measured;
})()`

// BenchmarkBrowserClickToPaint plays a whole match by tapping in the page, at the phone's size,
// with the CPU as it is and slowed four times (CDP's Emulation.setCPUThrottlingRate), and
// reports the p50 and p99 of click → view and click → paint over the match's taps.
//
//	go test -tags browser -run '^$' -bench BrowserClickToPaint -benchtime 1x ./adapters/web/
func BenchmarkBrowserClickToPaint(b *testing.B) {
	for _, rate := range []float64{1, 4} {
		b.Run(fmt.Sprintf("cpu=%gx", rate), func(b *testing.B) {
			e := newEnv(b, fastPlayer)
			br := browser(b)
			var views, paints []float64
			n := 0
			for b.Loop() {
				n++
				id, p, _ := e.soloTable(n)
				tb := newTab(b, br, false)
				tb.run(emulation.SetCPUThrottlingRate(rate), chromedp.ActionFunc(func(ctx context.Context) error {
					_, err := cdppage.AddScriptToEvaluateOnNewDocument(measureLatency).Do(ctx)
					return err
				}))
				tb.run(chromedp.Navigate(e.link(p, id)))
				tapGame(b, e, tb, id, p, 99)
				var lat []struct{ View, Paint float64 }
				tb.waitJS("the last tap's paint", `window.lat.length > 0`)
				time.Sleep(200 * time.Millisecond)
				tb.eval(`window.lat`, &lat)
				for _, l := range lat {
					views, paints = append(views, l.View), append(paints, l.Paint)
				}
			}
			slices.Sort(views)
			slices.Sort(paints)
			at := func(xs []float64, q float64) float64 { return xs[min(len(xs)-1, int(q*float64(len(xs))))] }
			b.ReportMetric(at(views, .5), "view-p50-ms")
			b.ReportMetric(at(views, .99), "view-p99-ms")
			b.ReportMetric(at(paints, .5), "paint-p50-ms")
			b.ReportMetric(at(paints, .99), "paint-p99-ms")
			b.ReportMetric(float64(len(views))/float64(n), "taps/match")
		})
	}
}

// From the keyboard: Space on a legal card plays it without scrolling the page, the focus stays
// on the hand after the move, the cards are buttons named in words with the unplayable ones
// marked so, and the live region says the turn, the plays and who took the trick.
func TestBrowserKeyboardAndLiveRegion(t *testing.T) {
	e := newEnv(t, fastPlayer)
	b := browser(t)
	id, p, _ := e.soloTable(1)
	tb := newTabSized(t, b, false, 320, 568)
	tb.run(chromedp.Navigate(e.link(p, id)))
	var played int
	for i := 0; i < 30 && played < 3; i++ {
		v, mine := waitTurn(t, e, id, p, 1)
		if !mine {
			break
		}
		if len(v.Trumps) > 0 {
			tapMove(t, e, tb, id, p, v)
			continue
		}
		tb.waitJS("the view", fmt.Sprintf(`document.getElementById("app").dataset.seq === "%d" && document.querySelector("#hand .card.legal")`, v.Seq))
		var before struct {
			Y     float64
			Names []string
			Off   []string
		}
		tb.eval(`window.scrollTo(0, 40); document.querySelector("#hand .card.legal").focus(); ({Y: window.scrollY,
			Names: [...document.querySelectorAll("#hand .card")].map(c => c.getAttribute("role") + ": " + c.textContent),
			Off: [...document.querySelectorAll("#hand .card[aria-disabled=true]")].map(c => c.dataset.card)})`, &before)
		var legal, off int
		for _, c := range v.Hand {
			if c.Legal {
				legal++
			} else {
				off++
			}
		}
		if len(before.Off) != off || !strings.Contains(strings.Join(before.Names, "|"), "button: ") ||
			!strings.Contains(strings.Join(before.Names, "|"), " of ") {
			t.Fatalf("the hand's cards: %q, unplayable %q (%d legal, %d not)", before.Names, before.Off, legal, off)
		}
		tb.run(chromedp.KeyEvent(" "))
		if !moved(e, id, p, v.Seq) {
			t.Fatal("Space on a legal card made no move")
		}
		nv, _ := e.web.SeatView(context.Background(), id, p)
		tb.waitJS("the next view", fmt.Sprintf(`Number(document.getElementById("app").dataset.seq) >= %d`, nv.Seq))
		var after struct {
			Y      float64
			InHand bool
		}
		tb.eval(`({Y: window.scrollY, InHand: document.getElementById("hand").contains(document.activeElement)})`, &after)
		// Space would scroll by most of a screen; a few pixels are the page's own height changing.
		if math.Abs(after.Y-before.Y) > 40 || !after.InHand {
			t.Fatalf("after Space: scrolled from %.0f to %.0f, focus on the hand %v", before.Y, after.Y, after.InHand)
		}
		played++
	}
	if played < 3 {
		t.Fatalf("%d cards played from the keyboard", played)
	}
	tb.waitJS("a trick taken said aloud", `/wins \d+ point|You win/.test(document.getElementById("said").textContent)`)
	var said string
	tb.eval(`document.getElementById("said").textContent`, &said)
	if !strings.Contains(said, "Computer") || !strings.Contains(said, " of ") {
		t.Fatalf("the live region says %q", said)
	}
}

// In Telegram the page asks for haptic feedback on a play and on the player's turn, and shows
// Telegram's back button while a finished trick is held; pressing it lets the trick go.
func TestBrowserTelegramHapticsAndBack(t *testing.T) {
	e, id, p, data := miniAppTable(t, "en")
	b := browser(t)
	tb := newTabPaced(t, b, false, 390, 844, heldPace)
	// Telegram's apps give the page window.TelegramWebviewProxy; this one notes what it is told.
	tb.run(chromedp.ActionFunc(func(ctx context.Context) error {
		_, err := cdppage.AddScriptToEvaluateOnNewDocument(`window.told = [];
			window.TelegramWebviewProxy = {postEvent: (type, data) => window.told.push(type + " " + data)};`).Do(ctx)
		return err
	}))
	tb.run(chromedp.Navigate(e.url + "/#" + url.Values{"tgWebAppData": {data}, "tgWebAppVersion": {"8.0"}}.Encode()))
	tapUntil(t, e, tb, id, p, 1, "finished trick held", `document.querySelector("#trick.held")`)
	// Telegram's back button lets the held trick go at once, not when its time is up.
	var keys []string
	tb.eval(`(() => { const key = () => [...document.querySelectorAll("#trick .card")].map(c => c.dataset.card).join(" ") +
		(document.querySelector("#trick.held") ? " held" : "");
		const before = key(); window.Telegram.WebView.receiveEvent("back_button_pressed", null); return [before, key()]; })()`, &keys)
	if keys[0] == keys[1] {
		t.Fatalf("the back button did not let the held trick go: %q", keys)
	}
	var told []string
	tb.eval(`window.told`, &told)
	all := strings.Join(told, "\n")
	for _, want := range []string{"web_app_ready", `web_app_trigger_haptic_feedback {"type":"impact"`,
		`web_app_trigger_haptic_feedback {"type":"notification","notification_type":"success"}`,
		`web_app_setup_back_button {"is_visible":true}`} {
		if !strings.Contains(all, want) {
			t.Errorf("Telegram was not told %s; it was told:\n%s", want, all)
		}
	}
	tb.waitJS("the back button hidden again", `window.told.some(x => x === 'web_app_setup_back_button {"is_visible":false}')`)
}

// The three cards forehand names trump from are there to look at: none is greyed as unplayable.
func TestBrowserTrumpChoiceNotGreyed(t *testing.T) {
	e := newEnv(t, fastPlayer)
	b := browser(t)
	id, ps, _ := e.fourTable(1)
	p := ps[0]
	e.actUntil(id, ps, p, func(v SeatView) bool { return len(v.Trumps) > 0 })
	tb := newTab(t, b, false)
	tb.run(chromedp.Navigate(e.link(p, id)))
	tb.waitJS("the trump buttons", `document.querySelector("#choices button.trump") && document.querySelectorAll("#hand .card").length === 3`)
	var greyed []string
	tb.eval(`[...document.querySelectorAll("#hand .card")].filter(c => getComputedStyle(c).backgroundColor !== "rgb(255, 255, 255)" || getComputedStyle(c).opacity !== "1").map(c => c.dataset.card)`, &greyed)
	if len(greyed) > 0 {
		t.Fatalf("while trump is named the cards %v are greyed", greyed)
	}
}

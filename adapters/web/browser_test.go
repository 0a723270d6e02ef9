//go:build browser

// The browser tests drive the page in a real Chromium (Debian's package) with chromedp. They are
// built only with the tag "browser", which .ci/run sets after it has installed Chromium: there
// a missing browser fails them. `go test ./...` on a machine without Chromium builds none of
// them and so skips none.
package web

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image/png"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/kontermatt/kontermatt/adapters/telegram"
	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// chromium finds the browser: $KONTERMATT_CHROMIUM, else Debian's chromium on the PATH.
func chromium(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("KONTERMATT_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no Chromium found: install Debian's chromium (apt-get install -y chromium) or set KONTERMATT_CHROMIUM; " +
		"the browser tests fail rather than skip")
	return ""
}

// browser starts a headless Chromium for the test; each tab is a new context of it.
func browser(t testing.TB) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium(t)),
		chromedp.Flag("no-sandbox", true), chromedp.Flag("disable-gpu", true), chromedp.WindowSize(390, 844))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(bcancel)
	if err := chromedp.Run(bctx); err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	return bctx
}

// tab is one page of the browser, as a phone shows it, with every socket frame it received.
type tab struct {
	t      testing.TB
	ctx    context.Context
	mu     sync.Mutex
	frames []string
}

// newTab is a tab as a phone of 390×844 shows it.
func newTab(t testing.TB, b context.Context, dark bool) *tab {
	t.Helper()
	return newTabSized(t, b, dark, 390, 844)
}

// quickPace are the page's times for the tests that play many tricks and are not about the
// pace: the page tells the game in the same order and under the same rules (no tap before all is
// shown), with short waits.
const quickPace = `window.kmPace = {card: 20, trick: 150, travel: 0, gather: 0, event: 20};`

// newTabSized is a tab of w×h CSS pixels: a phone's (at scale 2) below 600 px, else a desktop's,
// at the quick pace.
func newTabSized(t testing.TB, b context.Context, dark bool, w, h int64) *tab {
	t.Helper()
	return newTabPaced(t, b, dark, w, h, quickPace)
}

// newTabPaced is a tab of w×h whose page runs the script pace first: quickPace, another
// window.kmPace, or "" for the page's own pace.
func newTabPaced(t testing.TB, b context.Context, dark bool, w, h int64, pace string) *tab {
	t.Helper()
	ctx, cancel := chromedp.NewContext(b)
	t.Cleanup(cancel)
	tb := &tab{t: t, ctx: ctx}
	// The first Run makes the tab; it must not run under a context that ends (the tab would go).
	if err := chromedp.Run(ctx); err != nil {
		t.Fatal(err)
	}
	chromedp.ListenTarget(ctx, func(ev any) {
		if f, ok := ev.(*network.EventWebSocketFrameReceived); ok {
			tb.mu.Lock()
			tb.frames = append(tb.frames, f.Response.PayloadData)
			tb.mu.Unlock()
		}
	})
	scheme := "light"
	if dark {
		scheme = "dark"
	}
	viewport := chromedp.EmulateViewport(w, h, chromedp.EmulateScale(2), chromedp.EmulateMobile)
	if w >= 600 {
		viewport = chromedp.EmulateViewport(w, h)
	}
	// In front: a hidden tab draws no frames (so a screenshot may wait for one) and slows timers.
	tb.run(network.Enable(), cdppage.BringToFront(), viewport,
		emulation.SetEmulatedMedia().WithFeatures([]*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}))
	if pace != "" {
		tb.run(chromedp.ActionFunc(func(ctx context.Context) error {
			_, err := cdppage.AddScriptToEvaluateOnNewDocument(pace).Do(ctx)
			return err
		}))
	}
	return tb
}

func (tb *tab) run(actions ...chromedp.Action) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Run(ctx, actions...); err != nil {
		tb.t.Fatalf("browser: %v", err)
	}
}

func (tb *tab) eval(js string, out any) {
	tb.t.Helper()
	tb.run(chromedp.Evaluate(js, out))
}

// waitJS waits until the expression is true in the page.
func (tb *tab) waitJS(what, js string) {
	tb.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		var ok bool
		tb.eval("!!("+js+")", &ok)
		if ok {
			return
		}
		if time.Now().After(deadline) {
			var body string
			tb.eval(`document.body.innerText`, &body)
			tb.t.Fatalf("waiting for %s; the page says:\n%s", what, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (tb *tab) received() []string {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return slices.Clone(tb.frames)
}

// turn waits until the service says p is to act at the table, or the game no is over.
func waitTurn(t testing.TB, e *env, id string, p api.Player, game int) (SeatView, bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		v, _ := e.web.SeatView(context.Background(), id, p)
		if len(v.Board.Games) >= game || v.Status != api.StatusPlaying {
			return v, false
		}
		if v.Game != nil && v.Game.ToMove == v.You {
			return v, true
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the table does not come to the player")
	return SeatView{}, false
}

// act makes p's move from the view v through the service, as a chat button would.
func (e *env) act(p api.Player, v SeatView) {
	e.t.Helper()
	verb, arg := v.FirstMove()
	replies, err := e.svc.Handle(context.Background(), api.Command{Place: api.Place{Platform: Platform, Chat: p.ID},
		Table: v.Table, Actor: p, Verb: api.Verb(verb), Args: []string{arg}, Seq: v.Seq, Private: true})
	if err != nil {
		e.t.Fatalf("%s %s %s: %v", p.ID, verb, arg, err)
	}
	for _, r := range replies {
		if r.Kind == api.KindError {
			e.t.Fatalf("%s %s %s: %s", p.ID, verb, arg, r.Text)
		}
	}
}

// tapMove makes p's move by tapping the page: a trump button or a legal card, then waits until
// the service has it.
// moved waits up to 10 s until the table is past seq.
func moved(e *env, id string, p api.Player, seq uint64) bool {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if nv, _ := e.web.SeatView(context.Background(), id, p); nv.Seq > seq {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// tapGame taps p's moves in the page until the game no is over (or the match), and gives how
// many it made.
func tapGame(t testing.TB, e *env, tb *tab, id string, p api.Player, game int) int {
	t.Helper()
	moves := 0
	for {
		v, mine := waitTurn(t, e, id, p, game)
		if !mine {
			return moves
		}
		tapMove(t, e, tb, id, p, v)
		moves++
	}
}

// tapUntil taps p's moves in the page until the page's expression js is true, within game.
func tapUntil(t testing.TB, e *env, tb *tab, id string, p api.Player, game int, what, js string) {
	t.Helper()
	for {
		// What follows a tap (the computers' cards, a finished trick held, a result) comes a
		// moment after it, at the page's pace, and a hold ends before the page shows the next
		// turn (no blind tap): look for it a while, not once.
		for look := time.Now().Add(2 * time.Second); ; time.Sleep(25 * time.Millisecond) {
			var now bool
			tb.eval("!!("+js+")", &now)
			if now {
				return
			}
			if time.Now().After(look) {
				break
			}
		}
		v, mine := waitTurn(t, e, id, p, game)
		if !mine {
			t.Fatalf("game %d is over and the page shows no %s", game, what)
		}
		tapMove(t, e, tb, id, p, v)
	}
}

// actUntil makes the move of whoever is to move, as from the chat, until p is to move and ready
// says p's view is the one wanted.
func (e *env) actUntil(id string, ps []api.Player, p api.Player, ready func(SeatView) bool) SeatView {
	e.t.Helper()
	for i := 0; i < 400; i++ {
		v, _ := e.web.SeatView(context.Background(), id, p)
		if v.Game.ToMove == v.You && ready(v) {
			return v
		}
		q := ps[v.Game.ToMove]
		qv, _ := e.web.SeatView(context.Background(), id, q)
		e.act(q, qv)
	}
	e.t.Fatal("the view wanted never came")
	return SeatView{}
}

func tapMove(t testing.TB, e *env, tb *tab, id string, p api.Player, v SeatView) {
	t.Helper()
	seq := fmt.Sprint(v.Seq)
	// The page must show this very view before the tap.
	tb.waitJS("the page at the view of seq "+seq, `document.getElementById("app").dataset.seq === "`+seq+`"`)
	if len(v.Trumps) > 0 {
		tb.waitJS("the trump buttons", `document.querySelector("#choices button.trump")`)
		tb.run(chromedp.Click(`#choices button.trump`, chromedp.ByQuery))
	} else {
		tb.waitJS("a legal card", `document.querySelector("#hand .card.legal")`)
		tb.run(chromedp.Click(`#hand .card.legal`, chromedp.ByQuery))
	}
	if moved(e, id, p, v.Seq) {
		return
	}
	var body string
	tb.eval(`document.body.innerText`, &body)
	var said []string
	for _, f := range tb.received() {
		if !strings.Contains(f, `"t":"view"`) {
			said = append(said, f)
		}
	}
	t.Fatalf("the tap at seq %s made no move; the server said %v; the page says:\n%s", seq, said, body)
}

// soloPage is a table of one person and three computer players, and the person's page opened in
// a phone's tab.
func soloPage(t *testing.T) (*env, *tab, string, api.Player) {
	t.Helper()
	e := newEnv(t, fastPlayer)
	id, p, _ := e.soloTable(1)
	tb := newTab(t, browser(t), false)
	tb.run(chromedp.Navigate(e.link(p, id)))
	return e, tb, id, p
}

// One person plays a whole game by tapping cards in the page, with three computer players.
func TestBrowserWholeGame(t *testing.T) {
	e, tb, id, p := soloPage(t)
	tb.waitJS("the table", `!document.getElementById("table").hidden && document.querySelectorAll("#hand .card").length > 0`)
	if moves := tapGame(t, e, tb, id, p, 1); moves < 6 {
		t.Fatalf("a whole game with %d moves of the person", moves)
	}
	tb.waitJS("the board with the game", `document.querySelector("#board img.sheet")`)
	var link string
	tb.eval(`location.href`, &link)
	if strings.Contains(link, "link=") {
		t.Fatalf("the used link stays in the address: %s", link)
	}
}

var frameCard = regexp.MustCompile(`"card":"([^"]*)"`)

// A second tab of another player at the same table never receives, nor shows, the first
// player's cards.
func TestBrowserSecondTabSeesOnlyItsOwnCards(t *testing.T) {
	e := newEnv(t, fastPlayer)
	b := browser(t)
	place := api.Place{Platform: benchPlatform, Chat: "two"}
	a := api.Player{ID: "tg:1", Name: "Anna", Locale: "de"}
	c := api.Player{ID: "tg:2", Name: "Carlo", Locale: "fr"}
	e.do(place, a, api.VerbNew, "timer=none")
	e.do(place, c, api.VerbJoin)
	e.do(place, a, api.VerbDeal)
	id := e.svc.TableAt(place)
	ta, tc := newTab(t, b, false), newTab(t, b, true)
	ta.run(chromedp.Navigate(e.link(a, id)))
	tc.run(chromedp.Navigate(e.link(c, id)))
	for _, tb := range []*tab{ta, tc} {
		tb.waitJS("the hand", `document.querySelectorAll("#hand .card").length > 0`)
	}
	annaHeld := map[int]core.CardSet{} // game → every card Anna's views showed in her hand
	for i := 0; i < 12; i++ {
		for _, pl := range []struct {
			p  api.Player
			tb *tab
		}{{a, ta}, {c, tc}} {
			v, _ := e.web.SeatView(context.Background(), id, pl.p)
			if v.Game != nil && v.Game.ToMove == v.You {
				tapMove(t, e, pl.tb, id, pl.p, v)
			}
		}
		time.Sleep(30 * time.Millisecond)
	}
	views := func(tb *tab) []SeatView {
		var out []SeatView
		for _, f := range tb.received() {
			var m outbound
			if json.Unmarshal([]byte(f), &m) == nil && m.View != nil {
				out = append(out, *m.View)
			}
		}
		return out
	}
	for _, v := range views(ta) {
		for _, h := range v.Hand {
			card, _ := core.ParseCard(h.Card)
			annaHeld[v.Game.No] = annaHeld[v.Game.No].Add(card)
		}
	}
	carlo := views(tc)
	if len(carlo) < 3 {
		t.Fatalf("Carlo's tab got %d views", len(carlo))
	}
	for _, f := range tc.received() {
		var m outbound
		if json.Unmarshal([]byte(f), &m) != nil || m.View == nil {
			continue
		}
		v := m.View
		public := core.CardSet(0)
		if g := v.Game; g != nil {
			for _, pl := range g.Trick.Plays {
				c, _ := core.ParseCard(pl.Card.Card)
				public = public.Add(c)
			}
			if g.Last != nil {
				for _, pl := range g.Last.Plays {
					c, _ := core.ParseCard(pl.Card.Card)
					public = public.Add(c)
				}
			}
		}
		if x := v.Ended; x != nil { // the last trick of the game before, played in the open
			for _, pl := range x.Last.Plays {
				c, _ := core.ParseCard(pl.Card.Card)
				public = public.Add(c)
			}
		}
		own := core.CardSet(0)
		for _, h := range v.Hand {
			c, _ := core.ParseCard(h.Card)
			own = own.Add(c)
			if v.Game != nil && annaHeld[v.Game.No].Has(c) {
				t.Fatalf("Carlo's tab was sent %s in his hand, a card of Anna's", c)
			}
		}
		for _, m := range frameCard.FindAllStringSubmatch(f, -1) {
			c, err := core.ParseCard(m[1])
			if err != nil || !own.Has(c) && !public.Has(c) {
				t.Fatalf("Carlo's tab was sent the card %q outside his hand and the table:\n%s", m[1], f)
			}
		}
	}
	// And what his page shows, once it shows the table as it stands: his hand.
	deadline := time.Now().Add(10 * time.Second)
	for {
		v, _ := e.web.SeatView(context.Background(), id, c)
		var page struct {
			Seq   string
			Cards []string
		}
		tc.eval(`({Seq: document.getElementById("app").dataset.seq, Cards: [...document.querySelectorAll("#hand [data-card]")].map(e => e.dataset.card)})`, &page)
		seq, shown := page.Seq, page.Cards
		if seq == fmt.Sprint(v.Seq) {
			var want []string
			for _, h := range v.Hand {
				want = append(want, h.Card)
			}
			if len(want) > 0 && !slices.Equal(shown, want) {
				t.Fatalf("Carlo's page shows the hand %v, his hand is %v", shown, want)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Carlo's page stays at seq %s, the table is at %d", seq, v.Seq)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A reload in the middle of a trick comes back to the table as it stands, and play goes on.
func TestBrowserReloadMidTrick(t *testing.T) {
	e, tb, id, p := soloPage(t)
	tb.waitJS("the hand", `document.querySelectorAll("#hand .card").length > 0`)
	// Play until a trick is under way on the table when it is the person's turn.
	for i := 0; ; i++ {
		v, mine := waitTurn(t, e, id, p, 1)
		if !mine || i > 30 {
			t.Fatal("no turn in the middle of a trick came")
		}
		if v.Game.Phase == "play" && len(v.Game.Trick.Plays) > 0 {
			break
		}
		tapMove(t, e, tb, id, p, v)
	}
	v, _ := e.web.SeatView(context.Background(), id, p)
	tb.run(chromedp.Reload())
	want := len(v.Game.Trick.Plays)
	tb.waitJS("the trick again", fmt.Sprintf(`document.querySelectorAll("#trick .card").length === %d && document.querySelectorAll("#hand .card.legal").length > 0`, want))
	var cards int
	tb.eval(`document.querySelectorAll("#hand .card").length`, &cards)
	if cards != len(v.Hand) {
		t.Fatalf("after the reload the page shows %d cards, the hand has %d", cards, len(v.Hand))
	}
	tapMove(t, e, tb, id, p, v)
}

type box struct{ X, Y, W, H float64 }

func (a box) overlaps(b box) bool {
	return a.X < b.X+b.W-0.5 && b.X < a.X+a.W-0.5 && a.Y < b.Y+b.H-0.5 && b.Y < a.Y+a.H-0.5
}

// rects gives the boxes of the elements a selector finds, in CSS pixels of the viewport.
func (tb *tab) rects(sel string) []box {
	tb.t.Helper()
	var out []box
	tb.eval(`[...document.querySelectorAll(`+"`"+sel+"`"+`)].map(e => { const r = e.getBoundingClientRect(); return {X: r.x, Y: r.y, W: r.width, H: r.height} })`, &out)
	return out
}

// Screenshots of the table at a small phone (320×568), a large one (390×844) and a desktop
// (1280×800), in both themes, checked for layout: the six cards in one row, large enough to tap
// and above the fold; the seats and the trick's cards apart, each order badge in sight; names on
// one line (a long one cut short, "Computer 2" whole); nothing wider than the screen; on the
// desktop the board beside the table, in view; the theme's colours.
func TestBrowserScreenshots(t *testing.T) {
	e := newEnv(t, fastPlayer)
	b := browser(t)
	dir := os.Getenv("KONTERMATT_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	place := api.Place{Platform: benchPlatform, Chat: "shots", Title: "Café Konter"}
	p := api.Player{ID: "tg:7", Name: "Marie-Thérèse Wagner-Schmit-Hoffmann", Locale: "en"}
	e.do(place, p, api.VerbNew, "timer=none", "stripes=3")
	e.do(place, p, api.VerbDeal)
	id := e.svc.TableAt(place)
	// Bring the person's turn in the play phase, with cards on the table.
	for i := 0; i < 40; i++ {
		v, mine := waitTurn(t, e, id, p, 1)
		if !mine {
			t.Fatal("the game ended before a trick was under way")
		}
		if v.Game.Phase == "play" && len(v.Game.Trick.Plays) > 0 {
			break
		}
		e.act(p, v)
	}
	v, _ := e.web.SeatView(context.Background(), id, p)
	for _, size := range []struct{ w, h int64 }{{320, 568}, {390, 844}, {1280, 800}} {
		for _, dark := range []bool{false, true} {
			name := fmt.Sprintf("%dx%d-light", size.w, size.h)
			if dark {
				name = strings.Replace(name, "light", "dark", 1)
			}
			tb := newTabSized(t, b, dark, size.w, size.h)
			tb.run(chromedp.Navigate(e.link(p, id)))
			tb.waitJS("the table", `document.querySelectorAll("#hand .card").length > 0 && document.querySelectorAll("#trick .card").length > 0`)
			var shot []byte
			tb.run(chromedp.CaptureScreenshot(&shot))
			file := filepath.Join(dir, "table-"+name+".png")
			if err := os.WriteFile(file, shot, 0o644); err != nil {
				t.Fatal(err)
			}
			checkLayout(t, tb, name, shot, size.w, size.h, dark, v)
			t.Logf("%s: %s, %d bytes", name, file, len(shot))
		}
	}
}

// checkLayout holds one screenshot of the table at w×h to the layout's rules (see
// TestBrowserScreenshots).
func checkLayout(t *testing.T, tb *tab, name string, shot []byte, w, h int64, dark bool, v SeatView) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatal(err)
	}
	scale := int64(2)
	if w >= 600 {
		scale = 1
	}
	bounds := img.Bounds()
	if int64(bounds.Dx()) != w*scale || int64(bounds.Dy()) != h*scale {
		t.Errorf("%s: the screenshot is %dx%d, want %dx%d", name, bounds.Dx(), bounds.Dy(), w*scale, h*scale)
	}
	var sum float64
	n := 0
	for y := bounds.Min.Y; y < bounds.Max.Y; y += 7 {
		for x := bounds.Min.X; x < bounds.Max.X; x += 7 {
			r, g, b, _ := img.At(x, y).RGBA()
			sum += (0.299*float64(r) + 0.587*float64(g) + 0.114*float64(b)) / 65535
			n++
		}
	}
	if lum := sum / float64(n); dark && lum > 0.4 || !dark && lum < 0.6 {
		t.Errorf("%s: the screenshot's mean luminance is %.2f", name, lum)
	}
	fw, fh := float64(w), float64(h)
	hand, seats, trick := tb.rects("#hand .card"), tb.rects("#table .seat"), tb.rects("#trick .card")
	if len(hand) != len(v.Hand) || len(seats) != 4 || len(trick) != len(v.Game.Trick.Plays) {
		t.Fatalf("%s: %d hand cards, %d seats, %d trick cards drawn", name, len(hand), len(seats), len(trick))
	}
	for i, c := range hand {
		if c.W < 44 || c.H < 60 || c.X < 0 || c.X+c.W > fw {
			t.Errorf("%s: hand card %d is %.0f×%.0f at x %.0f: too small to tap, or off the screen", name, i, c.W, c.H, c.X)
		}
		if c.Y+c.H > fh {
			t.Errorf("%s: hand card %d ends at y %.0f, below the fold (%d)", name, i, c.Y+c.H, h)
		}
		for j := range i {
			if c.overlaps(hand[j]) {
				t.Errorf("%s: hand cards %d and %d overlap", name, j, i)
			}
		}
		if c.Y-hand[0].Y > c.H/2 { // a legal card stands a little higher
			t.Errorf("%s: the hand wraps to a second row", name)
		}
	}
	for i, s := range seats {
		for j := range i {
			if s.overlaps(seats[j]) {
				t.Errorf("%s: seats %d and %d overlap", name, j, i)
			}
		}
		for _, c := range trick {
			if s.overlaps(c) {
				t.Errorf("%s: a trick card covers seat %d", name, i)
			}
		}
	}
	for i, c := range trick {
		for j := range i {
			if c.overlaps(trick[j]) {
				t.Errorf("%s: trick cards %d and %d overlap", name, j, i)
			}
		}
	}
	// Each order badge is what the screen shows at its centre: no card covers it.
	var hidden []int
	tb.eval(`[...document.querySelectorAll("#trick .order")].flatMap((o, i) => { const r = o.getBoundingClientRect();
		const at = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2); return at === o ? [] : [i] })`, &hidden)
	if len(hidden) > 0 {
		t.Errorf("%s: the order badges %v are covered", name, hidden)
	}
	var page struct {
		Wide    float64
		Wrapped []string
		Cut     []string
	}
	tb.eval(`({Wide: document.documentElement.scrollWidth,
		Wrapped: [...document.querySelectorAll("#table .seat .name")].filter(e => e.getBoundingClientRect().height > 1.6 * parseFloat(getComputedStyle(e).lineHeight)).map(e => e.textContent),
		Cut: [...document.querySelectorAll("#table .seat .name")].filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.textContent)})`, &page)
	if page.Wide > fw+0.5 {
		t.Errorf("%s: the page is %.0f px wide on a screen of %d", name, page.Wide, w)
	}
	if len(page.Wrapped) > 0 {
		t.Errorf("%s: names break over lines: %q", name, page.Wrapped)
	}
	for _, cut := range page.Cut {
		if strings.HasPrefix(cut, "Computer") {
			t.Errorf("%s: %q is cut short", name, cut)
		}
	}
	if w >= 900 {
		tbl, extra := tb.rects("#table")[0], tb.rects("#extra")[0]
		if extra.X < tbl.X+tbl.W || extra.Y > fh-40 || extra.Y+extra.H > fh {
			t.Errorf("%s: the board at %+v is not beside the table at %+v, in view", name, extra, tbl)
		}
	}
}

// tgCheck verifies initData as the telegram adapter does, with a test bot token.
type tgCheck struct{ token string }

func (c tgCheck) CheckInitData(data string, now time.Time) (api.Player, string, error) {
	return telegram.CheckInitData(c.token, data, now, telegram.InitDataMaxAge)
}

// signInitData signs fields as Telegram does (Mini Apps, "Validating data received via the Mini
// App"); the telegram adapter's tests check the algorithm against a published vector.
func signInitData(token string, v url.Values) string {
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var lines []string
	for _, k := range keys {
		lines = append(lines, k+"="+v.Get(k))
	}
	sk := hmac.New(sha256.New, []byte("WebAppData"))
	sk.Write([]byte(token))
	m := hmac.New(sha256.New, sk.Sum(nil))
	m.Write([]byte(strings.Join(lines, "\n")))
	v.Set("hash", hex.EncodeToString(m.Sum(nil)))
	return v.Encode()
}

// miniAppTable is a table of one person and three computer players whose page opens as a
// Telegram Mini App, with the initData Telegram would sign for the person speaking lang.
func miniAppTable(t *testing.T, lang string) (*env, string, api.Player, string) {
	t.Helper()
	const token = "123456:TEST-token-for-the-mini-app"
	e := newEnv(t, fastPlayer, func(c *Config) { c.Telegram = tgCheck{token} })
	id, p, _ := e.soloTable(1)
	data := signInitData(token, url.Values{"auth_date": {fmt.Sprint(e.clock.Now().Unix())}, "start_param": {id},
		"user": {`{"id":101,"first_name":"Jang","last_name":"1","language_code":"` + lang + `"}`}})
	return e, id, p, data
}

// The page opened as a Telegram Mini App from the group's direct link: it proves who opens it
// with Telegram's initData (the table in its start parameter), follows Telegram's dark theme,
// and shows the player's hand; a tampered initData gets the refusal.
func TestBrowserTelegramMiniApp(t *testing.T) {
	e, id, p, data := miniAppTable(t, "de")
	b := browser(t)
	open := func(initData string) *tab {
		tb := newTab(t, b, false)
		frag := url.Values{"tgWebAppData": {initData}, "tgWebAppVersion": {"8.0"},
			"tgWebAppThemeParams": {`{"bg_color":"#1c1c1d","text_color":"#ffffff"}`}}
		tb.run(chromedp.Navigate(e.url + "/#" + frag.Encode()))
		return tb
	}
	tb := open(data)
	tb.waitJS("the hand", `document.querySelectorAll("#hand .card").length > 0`)
	var theme, lang string
	tb.eval(`document.documentElement.dataset.theme`, &theme)
	tb.eval(`document.documentElement.lang`, &lang)
	if theme != "dark" || lang != "de" {
		t.Fatalf("the Mini App's theme %q, language %q", theme, lang)
	}
	// Cards and computer players in German, from the catalog: B(auer), D(ame), K(önig), A(ss).
	var letters, names []string
	tb.eval(`[...document.querySelectorAll("#hand .rank")].map(e => e.textContent)`, &letters)
	tb.eval(`[...document.querySelectorAll("#hand .card .sr-only")].map(e => e.textContent)`, &names)
	for i, l := range letters {
		if !slices.Contains([]string{"9", "10", "B", "D", "K", "A"}, l) || !strings.ContainsAny(names[i], " -") { // "Pik-Zehn", "Herz-Dame, Trumpf"
			t.Fatalf("a German hand shows %q, named %q", letters, names)
		}
	}
	v, _ := e.web.SeatView(context.Background(), id, p)
	var cards int
	tb.eval(`document.querySelectorAll("#hand .card").length`, &cards)
	if cards != len(v.Hand) {
		t.Fatalf("the Mini App shows %d cards, the hand has %d", cards, len(v.Hand))
	}
	bad := open(strings.Replace(data, "Jang", "Jean", 1))
	bad.waitJS("the refusal", `document.getElementById("status").classList.contains("error")`)
	var said string
	bad.eval(`document.getElementById("status").textContent`, &said)
	if !strings.Contains(said, "Telegram") {
		t.Fatalf("a tampered initData: %q", said)
	}
}

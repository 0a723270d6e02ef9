package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// dcFake stands for the discord adapter as the web table uses it: good codes, the players of
// each activity instance, a count of the code exchanges it was asked for, and a rate limit it
// may answer with (as Discord's 429 with Retry-After).
type dcFake struct {
	mu        sync.Mutex
	app       string
	codes     map[string]api.Player // code → user; a fake code is good any number of times
	place     api.Place
	instances map[string][]string // instance → the player IDs taking part
	exchanges int
	lookups   int           // ActivityPlayers calls
	wait      time.Duration // >0: the next exchange is answered "rate limited, retry after wait"
}

// dcRateLimited is the discord adapter's error for a 429: it says how long Discord asks to wait.
type dcRateLimited struct{ after time.Duration }

func (e dcRateLimited) Error() string             { return fmt.Sprintf("HTTP 429, retry after %v", e.after) }
func (e dcRateLimited) RetryAfter() time.Duration { return e.after }

func newDCFake(place api.Place) *dcFake {
	return &dcFake{app: "900000000000000001", codes: map[string]api.Player{}, place: place, instances: map[string][]string{}}
}

// eve is a Discord member in the Activity instance i-1 of the channel chan, whose page has the
// code c0de.
var eve = api.Player{ID: "dc:5", Name: "Eve", Locale: "fr"}

func eveInTheActivity() (*dcFake, api.Place) {
	place := api.Place{Platform: benchPlatform, Chat: "chan"}
	dc := newDCFake(place)
	dc.codes["c0de"], dc.instances["i-1"] = eve, []string{eve.ID}
	return dc, place
}

func (d *dcFake) AppID() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.app
}

func (d *dcFake) ActivityUser(_ context.Context, code, instance string) (api.Player, api.Place, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.exchanges++
	if d.wait > 0 {
		w := d.wait
		d.wait = 0
		return api.Player{}, api.Place{}, fmt.Errorf("the code exchange: %w", dcRateLimited{w})
	}
	p, ok := d.codes[code]
	if !ok || !slices.Contains(d.instances[instance], p.ID) {
		return api.Player{}, api.Place{}, errors.New("refused")
	}
	return p, d.place, nil
}

func (d *dcFake) ActivityPlayers(_ context.Context, instance string) ([]string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.lookups++
	return slices.Clone(d.instances[instance]), nil
}

func (d *dcFake) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.exchanges
}

// 300 anonymous posts with made-up codes from one address cost a few code exchanges with the
// client secret, not 300; from 300 addresses, no more than the bot's own budget for Discord. The
// rest are refused at once, in the page's language, with a Retry-After.
func TestSessionPostsAreLimited(t *testing.T) {
	place := api.Place{Platform: benchPlatform, Chat: "chan"}
	dc := newDCFake(place)
	e := newEnv(t, func(c *Config) { c.Discord = dc })
	refused := 0
	for i := range 300 {
		code, out, h := e.postFrom(map[string]string{"discord": fmt.Sprint("made-up-", i), "instance": "i-1", "lang": "de"}, "")
		switch code {
		case http.StatusTooManyRequests:
			refused++
			if out["error"] != i18n.T("de", "web.too_many_tries") || h.Get("Retry-After") == "" {
				t.Fatalf("a refusal: %v, Retry-After %q", out, h.Get("Retry-After"))
			}
		case http.StatusServiceUnavailable: // the address's network had its share (issue 32)
			refused++
			if out["error"] != i18n.T("de", "web.busy") || h.Get("Retry-After") == "" {
				t.Fatalf("a refusal: %v, Retry-After %q", out, h.Get("Retry-After"))
			}
		}
	}
	one := dc.count()
	t.Logf("300 posts from one address: %d code exchanges, %d refused at once", one, refused)
	if one > min(sessionBurst, exchangeShareBurst) || refused != 300-one {
		t.Fatalf("300 posts from one address made %d code exchanges (%d refused), want at most %d", one, refused, sessionBurst)
	}
	for i := range 300 {
		e.postFrom(map[string]string{"discord": fmt.Sprint("spread-", i), "instance": "i-1"}, fmt.Sprintf("198.51.100.%d", i%250+1))
	}
	spread := dc.count() - one
	t.Logf("300 posts from 250 addresses: %d code exchanges", spread)
	if spread > exchangeBurst {
		t.Fatalf("300 posts from 250 addresses made %d code exchanges, want at most %d", spread, exchangeBurst)
	}
}

// One Discord user gets a few sessions in a row, whatever addresses they come from.
func TestSessionsPerDiscordUser(t *testing.T) {
	dc, _ := eveInTheActivity()
	e := newEnv(t, func(c *Config) { c.Discord = dc })
	got := 0
	for i := range 10 {
		code, out, _ := e.postFrom(map[string]string{"discord": "c0de", "instance": "i-1"}, fmt.Sprintf("203.0.113.%d", i+1))
		switch code {
		case http.StatusOK:
			got++
		case http.StatusTooManyRequests:
			if out["error"] != i18n.T("fr", "web.too_many_tries") {
				t.Fatalf("Eve's refusal: %v", out)
			}
		default:
			t.Fatalf("post %d: %d %v", i, code, out)
		}
	}
	if got != userBurst {
		t.Fatalf("Eve got %d sessions in a row, want %d", got, userBurst)
	}
}

// While Discord says wait (429, Retry-After), the page is told so at once and Discord is not
// asked again; once the time is up, it is.
func TestDiscordRetryAfterIsHonoured(t *testing.T) {
	dc, _ := eveInTheActivity()
	dc.wait = 30 * time.Second
	e := newEnv(t, func(c *Config) { c.Discord = dc })
	for i := range 5 {
		code, out, h := e.postFrom(map[string]string{"discord": "c0de", "instance": "i-1", "lang": "lb"}, fmt.Sprintf("203.0.113.%d", i+1))
		if code != http.StatusServiceUnavailable || out["error"] != i18n.T("lb", "web.dc_wait", 30) || h.Get("Retry-After") != "30" {
			t.Fatalf("post %d while Discord says wait: %d %v, Retry-After %q", i, code, out, h.Get("Retry-After"))
		}
	}
	if n := dc.count(); n != 1 {
		t.Fatalf("Discord was asked %d times while it said wait, want once", n)
	}
	e.clock.Add(30 * time.Second)
	if code, out, _ := e.postFrom(map[string]string{"discord": "c0de", "instance": "i-1"}, "203.0.113.9"); code != http.StatusOK {
		t.Fatalf("after the wait: %d %v", code, out)
	}
}

// The move limit is the player's, not the socket's: reconnecting every five moves wins no
// moves.
func TestMoveLimitSurvivesReconnects(t *testing.T) {
	e := newEnv(t)
	id, p, _ := e.soloTable(1)
	s := e.session(p, id)
	fast, other := 0, 0
	for round := range 10 {
		k := e.open(s)
		for i := range 5 {
			// A move ID the page never sends: each move the limiter lets through is refused as
			// malformed, so each gets exactly one answer.
			k.move("play", "9H", k.view.Seq, fmt.Sprintf("r%d m%d", round, i))
		}
		for range 5 {
			if m := k.next("refused"); m.Text == i18n.T("en", "web.too_fast") {
				fast++
			} else {
				other++
			}
		}
		k.c.CloseNow()
	}
	t.Logf("50 moves over 10 sockets: %d refused as too fast, %d let through", fast, other)
	if other > 5 {
		t.Fatalf("50 moves over 10 sockets at one moment: %d let through, want the burst of 5", other)
	}
}

// A session is checked at every move: one that expired ends the socket with the reason, and
// the move is not made.
func TestSessionExpiresAtAMove(t *testing.T) {
	ctx := t.Context()
	e := newEnv(t)
	id, ps, _ := e.fourTable(1) // four people: nothing moves but what they send
	var k *client
	var p api.Player
	for _, pl := range ps {
		if v, _ := e.web.SeatView(ctx, id, pl); v.Game != nil && v.Game.ToMove == v.You {
			p, k = pl, e.open(e.session(pl, id))
		}
	}
	v := k.view
	verb, arg := v.FirstMove()
	e.clock.Add(12*time.Hour + time.Second)
	k.move(verb, arg, v.Seq, "late")
	if m := k.next("bye"); m.Text != i18n.T("de", "web.session_over") || !m.Renew {
		t.Fatalf("a move after the session ended: %+v", m)
	}
	if _, err := k.read(2 * time.Second); websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
		t.Fatalf("the socket after its session ended: %v", err)
	}
	if nv, _ := e.web.SeatView(ctx, id, p); nv.Seq != v.Seq {
		t.Fatalf("the move was made: the table moved from %d to %d", v.Seq, nv.Seq)
	}
}

// A Discord member who left the channel's Activity is checked at their next move: told why and
// closed, and the join is not made.
func TestLeftTheActivityCannotJoin(t *testing.T) {
	ctx := t.Context()
	dc, place := eveInTheActivity()
	e := newEnv(t, func(c *Config) { c.Discord = dc })
	owner := api.Player{ID: "dc:1", Name: "Ann", Locale: "en"}
	e.do(place, owner, api.VerbNew, "timer=none")
	frame := "https://900000000000000001.discordsays.com"
	code, out := e.post(map[string]string{"discord": "c0de", "instance": "i-1"}, frame)
	if code != 200 {
		t.Fatalf("the code exchange: %d %v", code, out)
	}
	k, err := e.dial(out["session"], frame)
	if err != nil {
		t.Fatal(err)
	}
	v := k.next("view").View
	dc.mu.Lock()
	dc.instances["i-1"] = nil // Eve left the channel
	dc.mu.Unlock()
	e.clock.Add(time.Minute)
	k.move("join", "", v.Seq, "j1")
	if m := k.next("bye"); m.Text != i18n.T("fr", "web.left_activity") {
		t.Fatalf("a join after leaving: %+v", m)
	}
	if nv, _ := e.web.SeatView(ctx, v.Table, eve); nv.You != -1 {
		t.Fatalf("Eve sits at seat %d after she left", nv.You)
	}
}

// On a timer too: a socket whose session ends, or whose Discord member left, is told why and
// closed without a move.
func TestSessionRecheckedOnATimer(t *testing.T) {
	dc, place := eveInTheActivity()
	e := newEnv(t, func(c *Config) { c.Discord, c.RecheckEvery = dc, 20*time.Millisecond })
	owner := api.Player{ID: "dc:1", Name: "Ann", Locale: "en"}
	e.do(place, owner, api.VerbNew, "timer=none")
	_, out := e.post(map[string]string{"discord": "c0de", "instance": "i-1"}, "")
	watcher, err := e.dial(out["session"], "")
	if err != nil {
		t.Fatal(err)
	}
	watcher.next("view")
	id, p, _ := e.soloTable(1)
	player := e.open(e.session(p, id))
	dc.mu.Lock()
	dc.instances["i-1"] = nil
	dc.mu.Unlock()
	e.clock.Add(time.Minute) // what Discord said a minute ago is asked again
	if m := watcher.next("bye"); m.Text != i18n.T("fr", "web.left_activity") {
		t.Fatalf("the watcher who left: %+v", m)
	}
	e.clock.Add(12 * time.Hour)
	if m := player.next("bye"); m.Text != i18n.T("en", "web.session_over") {
		t.Fatalf("the player whose session ended: %+v", m)
	}
}

// The largest names Telegram allows (64 characters each for the first and the last name, here
// all characters JSON writes as six bytes) make a session whose hello the socket takes.
func TestLargestLegalNames(t *testing.T) {
	e := newEnv(t)
	place := api.Place{Platform: benchPlatform, Chat: "big"}
	p := api.Player{ID: "tg:9223372036854775807", Name: strings.Repeat("&", 64) + " " + strings.Repeat("<", 64), Locale: "pt-br"}
	e.do(place, p, api.VerbNew, "timer=none")
	e.do(place, p, api.VerbDeal)
	id := e.svc.TableAt(place)
	s := e.session(p, id)
	hello, _ := json.Marshal(map[string]any{"t": "hello", "session": s, "seq": uint64(1<<64 - 1)})
	t.Logf("the hello of the largest legal Telegram names: %d bytes; the read limit, computed: %d", len(hello), maxHello)
	if len(hello) > maxHello {
		t.Fatalf("a hello of %d bytes over the computed bound of %d", len(hello), maxHello)
	}
	k := e.open(s)
	if k.view.Seats[k.view.You].Name != p.Name {
		t.Fatalf("the name at the table: %q", k.view.Seats[k.view.You].Name)
	}
}

// The bound holds for what the bound is made of: the longest Discord instance ID the adapter
// takes, and a name longer than any platform gives (cut in the ticket, kept at the table).
func TestLargestLegalTicket(t *testing.T) {
	if !instanceID.MatchString(strings.Repeat("i", maxInstance)) || instanceID.MatchString(strings.Repeat("i", maxInstance+1)) {
		t.Fatalf("the instance pattern and maxInstance (%d) disagree", maxInstance)
	}
	place := api.Place{Platform: benchPlatform, Chat: "18446744073709551615", Thread: "18446744073709551615"}
	dc := newDCFake(place)
	inst := strings.Repeat("i", maxInstance)
	long := api.Player{ID: "dc:18446744073709551615", Name: strings.Repeat("\u2028", 300), Locale: "lb"}
	dc.codes["c0de"], dc.instances[inst] = long, []string{long.ID}
	e := newEnv(t, func(c *Config) { c.Discord = dc })
	e.do(place, long, api.VerbNew, "timer=none")
	code, out := e.post(map[string]string{"discord": "c0de", "instance": inst}, "")
	if code != 200 || len(out["session"]) > maxTicket {
		t.Fatalf("the session: %d, %d bytes (bound %d)", code, len(out["session"]), maxTicket)
	}
	k := e.open(out["session"])
	if k.view.Seats[k.view.You].Name != long.Name {
		t.Fatalf("the name at the table was cut: %d bytes", len(k.view.Seats[k.view.You].Name))
	}
}

// The page may be framed by the app's own Activity frame only, not by any discordsays.com app;
// an Origin of "https://" with no host is no Discord frame.
func TestFrameAndOriginOfTheActivity(t *testing.T) {
	place := api.Place{Platform: benchPlatform, Chat: "chan"}
	dc := newDCFake(place)
	e := newEnv(t, func(c *Config) { c.Discord = dc })
	resp, err := http.Get(e.url + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	pol := resp.Header.Get("Content-Security-Policy")
	if !strings.Contains(pol, " https://900000000000000001.discordsays.com") || strings.Contains(pol, "*.discordsays.com") {
		t.Fatalf("CSP %q", pol)
	}
	for _, app := range []string{"900000000000000001", ""} {
		dc.mu.Lock()
		dc.app = app
		dc.mu.Unlock()
		if code, _ := e.post(map[string]string{"link": "x"}, "https://"); code != http.StatusForbidden {
			t.Fatalf("app %q: a session request from Origin https:// got %d", app, code)
		}
		if _, err := e.dial("x", "https://"); err == nil {
			t.Fatalf("app %q: a socket from Origin https:// was accepted", app)
		}
	}
	resp, err = http.Get(e.url + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if pol := resp.Header.Get("Content-Security-Policy"); strings.Contains(pol, "discordsays.com") {
		t.Fatalf("with the app not known yet, CSP %q", pol)
	}
	plain := newEnv(t)
	if code, _ := plain.post(map[string]string{"link": "x"}, "https://"); code != http.StatusForbidden {
		t.Fatalf("without Discord: a session request from Origin https:// got %d", code)
	}
}

// TestOneNetworkCannotDrainTheLogins (issue 32): 300 code exchanges asked with a new IPv6 /64 each,
// all from one /48, take no more than that network's share of the bot's exchanges with Discord;
// a real player from another network signs in at once afterwards.
func TestOneNetworkCannotDrainTheLogins(t *testing.T) {
	dc, _ := eveInTheActivity()
	e := newEnv(t, func(c *Config) { c.Discord = dc })
	for i := range 300 {
		e.postFrom(map[string]string{"discord": fmt.Sprint("flood-", i), "instance": "i-1"}, fmt.Sprintf("2001:db8:7:%x::1", i))
	}
	flood := dc.count()
	t.Logf("300 posts from 300 /64s of one /48: %d code exchanges", flood)
	if flood > exchangeShareBurst {
		t.Errorf("one /48 made %d code exchanges, want at most its share, %d", flood, exchangeShareBurst)
	}
	if code, out, _ := e.postFrom(map[string]string{"discord": "c0de", "instance": "i-1"}, "203.0.113.7"); code != http.StatusOK {
		t.Errorf("a real player after the flood: %d %v", code, out)
	}
}

package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// checkOwnCards fails if a view shows a card still held by anyone but its reader (checkSeatView).
func checkOwnCards(t *testing.T, e *env, v SeatView) {
	t.Helper()
	checkSeatView(t, e.svc, v)
}

// Four players at four sockets: each gets their own hand only; a move from one socket brings
// every socket the new state; a stale move is refused like a stale button.
func TestFourSocketsFollowTheTable(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.MoveRate, c.MoveBurst = 1000, 1000 }) // one test plays for four
	id, ps, _ := e.fourTable(1)
	var ks []*client
	for _, p := range ps {
		k := e.open(e.session(p, id))
		checkOwnCards(t, e, k.view)
		ks = append(ks, k)
	}
	for i, k := range ks {
		if k.view.You != i || k.view.Lang != "de" {
			t.Fatalf("socket %d sees seat %d in %s", i, k.view.You, k.view.Lang)
		}
	}
	if got := e.web.Sockets(); got != 4 {
		t.Fatalf("%d sockets open, want 4", got)
	}
	for step := 0; step < 30; step++ {
		var mover *client
		for _, k := range ks {
			if g := k.view.Game; g != nil && g.ToMove == k.view.You {
				mover = k
			}
		}
		if mover == nil {
			t.Fatalf("step %d: nobody's view says they move", step)
		}
		v := mover.view
		seq := v.Seq
		switch {
		case len(v.Trumps) > 0:
			mover.move("trump", v.Trumps[0].Arg, seq, fmt.Sprint("t", step))
		default:
			for _, c := range v.Hand {
				if c.Legal {
					mover.move("play", c.Card, seq, fmt.Sprint("p", step))
					break
				}
			}
		}
		mover.viewAfter(seq)
		for _, k := range ks {
			nv := k.viewAfter(seq)
			checkOwnCards(t, e, nv)
		}
		if step == 3 {
			// The same tap again, from the view the move was made in: refused, nothing changes.
			mover.move("play", "QS", seq, "again")
			if r := mover.next("refused"); r.Text != i18n.T("de", "err.stale") {
				t.Fatalf("a stale move: %q", r.Text)
			}
		}
	}
}

// A one-time link is good once; a forged, an expired or a used one gets a clear refusal.
func TestOneTimeLinks(t *testing.T) {
	e := newEnv(t)
	id, p, _ := e.soloTable(1)
	l := e.link(p, id)
	if !strings.HasPrefix(l, e.url+"/#link=") {
		t.Fatalf("link %q", l)
	}
	_, token, _ := strings.Cut(l, "#link=")
	if code, out := e.post(map[string]string{"link": token}, ""); code != 200 || out["session"] == "" || out["lang"] != "en" {
		t.Fatalf("first use: %d %v", code, out)
	}
	want := i18n.T("fr", "web.expired")
	if code, out := e.post(map[string]string{"link": token, "lang": "fr-BE"}, ""); code != 401 || out["error"] != want {
		t.Fatalf("second use: %d %v", code, out)
	}
	forged := token[:len(token)-3] + "AAA"
	if code, out := e.post(map[string]string{"link": forged, "lang": "fr"}, ""); code != 401 || out["error"] != want {
		t.Fatalf("forged: %d %v", code, out)
	}
	_, old, _ := strings.Cut(e.link(p, id), "#link=")
	e.clock.Add(11 * time.Minute)
	if code, out := e.post(map[string]string{"link": old, "lang": "fr"}, ""); code != 401 || out["error"] != want {
		t.Fatalf("expired: %d %v", code, out)
	}
	if code, out := e.post(map[string]string{"lang": "de"}, ""); code != 400 || out["error"] != i18n.T("de", "web.open_from_chat") {
		t.Fatalf("nothing: %d %v", code, out)
	}
	if code, _ := e.post(map[string]string{"link": strings.Repeat("x", 20000)}, ""); code != 400 {
		t.Fatalf("a body over the limit: %d", code)
	}
}

// A session is not a link, and a link is not a session; a session expires.
func TestTicketPurposes(t *testing.T) {
	e := newEnv(t)
	id, p, _ := e.soloTable(1)
	s := e.session(p, id)
	if code, _ := e.post(map[string]string{"link": s}, ""); code != 401 {
		t.Fatalf("a session taken as a link: %d", code)
	}
	_, token, _ := strings.Cut(e.link(p, id), "#link=")
	k, err := e.dial(token, "")
	if err != nil {
		t.Fatal(err)
	}
	if m := k.next("bye"); m.Text != i18n.T("en", "web.expired") {
		t.Fatalf("a link taken as a session: %+v", m)
	}
	e.clock.Add(13 * time.Hour)
	k, err = e.dial(s, "")
	if err != nil {
		t.Fatal(err)
	}
	if m := k.next("bye"); m.Text != i18n.T("en", "web.expired") {
		t.Fatalf("an expired session: %+v", m)
	}
}

// Someone who does not sit at the table gets no socket to it.
func TestNotSeatedIsRefused(t *testing.T) {
	e := newEnv(t)
	id, _, _ := e.soloTable(1)
	other := api.Player{ID: "tg:999", Name: "Eve", Locale: "lb"}
	k, err := e.dial(e.session(other, id), "")
	if err != nil {
		t.Fatal(err)
	}
	if m := k.next("bye"); m.Text != i18n.T("lb", "web.not_seated") {
		t.Fatalf("a stranger: %+v", m)
	}
	if _, err := k.read(2 * time.Second); websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
		t.Fatalf("the stranger's socket: %v", err)
	}
}

// Requests from another site's page are refused: the socket and the session.
func TestOriginCheck(t *testing.T) {
	e := newEnv(t)
	id, p, _ := e.soloTable(1)
	s := e.session(p, id)
	if _, err := e.dial(s, "https://evil.example"); err == nil {
		t.Fatal("a socket from another origin was accepted")
	}
	if code, _ := e.post(map[string]string{"link": "x"}, "https://evil.example"); code != http.StatusForbidden {
		t.Fatalf("a session request from another origin: %d", code)
	}
	k, err := e.dial(s, e.url)
	if err != nil {
		t.Fatalf("the page's own origin: %v", err)
	}
	k.next("view")
}

// A message over the size limit closes the socket; one that is not a move is refused.
func TestMessageLimits(t *testing.T) {
	e := newEnv(t)
	id, p, _ := e.soloTable(1)
	k := e.open(e.session(p, id))
	if err := k.sendJSON(map[string]string{"t": "nonsense"}); err != nil {
		t.Fatal(err)
	}
	if m := k.next("refused"); m.Text != i18n.T("en", "web.bad_message") {
		t.Fatalf("nonsense: %+v", m)
	}
	k.move("play", "QS", k.view.Seq, "bad id with spaces")
	if m := k.next("refused"); m.Text != i18n.T("en", "web.bad_message") {
		t.Fatalf("a bad move id: %+v", m)
	}
	k.move("stop", "", k.view.Seq, "s1")
	if m := k.next("refused"); m.Text != i18n.T("en", "web.bad_message") {
		t.Fatalf("a verb the page may not send: %+v", m)
	}
	if err := k.sendJSON(map[string]string{"t": "move", "arg": strings.Repeat("x", 2000)}); err != nil {
		t.Fatal(err)
	}
	for {
		_, err := k.read(5 * time.Second)
		if err != nil {
			if websocket.CloseStatus(err) != websocket.StatusMessageTooBig {
				t.Fatalf("after a message over the limit: %v", err)
			}
			break
		}
	}
}

// A second socket of the same player at the same table replaces the first, which is told.
func TestOneSocketPerPlayer(t *testing.T) {
	e := newEnv(t)
	id, p, _ := e.soloTable(1)
	s := e.session(p, id)
	first := e.open(s)
	second := e.open(s)
	if m := first.next("bye"); m.Text != i18n.T("en", "web.elsewhere") {
		t.Fatalf("the first socket: %+v", m)
	}
	if _, err := first.read(2 * time.Second); websocket.CloseStatus(err) != websocket.StatusNormalClosure {
		t.Fatalf("the first socket after bye: %v", err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for e.web.Sockets() != 1 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := e.web.Sockets(); n != 1 {
		t.Fatalf("%d sockets, want 1", n)
	}
	_ = second
}

// A burst of moves from one socket: the limiter lets a few through to the service and refuses
// the rest before they reach it.
func TestMoveBurstIsLimited(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.MoveRate, c.MoveBurst = 0.001, 3 })
	id, p, _ := e.soloTable(1)
	k := e.open(e.session(p, id))
	for i := range 20 {
		k.move("play", "9H", k.view.Seq, "b"+string(rune('a'+i)))
	}
	// The three moves the limiter lets through reach the table (one may be made, the others are
	// then stale); the other seventeen are refused at once.
	fast, other := 0, 0
	for fast < 17 {
		m := k.next("refused")
		if m.Text == i18n.T("en", "web.too_fast") {
			fast++
		} else {
			other++
		}
	}
	if other > 3 {
		t.Fatalf("of 20 moves at once, %d were refused as too fast and %d went to the table", fast, other)
	}
}

// The page comes with its Content Security Policy, also through Discord's /.proxy; the strings
// are the catalog's.
func TestPageHeadersAndStrings(t *testing.T) {
	e := newEnv(t)
	for _, path := range []string{"/", "/.proxy/", "/app.js", "/.proxy/app.css"} {
		resp, err := http.Get(e.url + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || len(body) == 0 {
			t.Fatalf("%s: %d, %d bytes", path, resp.StatusCode, len(body))
		}
		pol := resp.Header.Get("Content-Security-Policy")
		if !strings.Contains(pol, "script-src 'self'") || strings.Contains(pol, "unsafe") || !strings.Contains(pol, "frame-ancestors") {
			t.Fatalf("%s: CSP %q", path, pol)
		}
	}
	resp, err := http.Get(e.url + "/api/strings?lang=lb")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Lang    string
		Strings map[string]string
	}
	json.NewDecoder(resp.Body).Decode(&got)
	resp.Body.Close()
	if got.Lang != "lb" || got.Strings["web.your_cards"] != i18n.T("lb", "web.your_cards") || len(got.Strings) != len(pageKeys)+11 { // the ranks, the suits and plural.one
		t.Fatalf("strings: %s, %d texts", got.Lang, len(got.Strings))
	}
	// Cards in words and letters, the catalog's: "Rauten Damm", D for a Damm.
	if got.Strings["rank.Q"] != "Damm" || got.Strings["suit.D"] != "Rauten" || got.Strings["web.rank.Q"] != "D" {
		t.Fatalf("the card words: %q %q %q", got.Strings["rank.Q"], got.Strings["suit.D"], got.Strings["web.rank.Q"])
	}
	if resp, _ := http.Get(e.url + "/secret.txt"); resp.StatusCode != 404 {
		t.Fatalf("an unknown file: %d", resp.StatusCode)
	}
}

// A reconnect after a move gets the table as it stands now.
func TestReconnectResumes(t *testing.T) {
	e := newEnv(t)
	id, p, _ := e.soloTable(1)
	s := e.session(p, id)
	k := e.open(s)
	for k.view.Game.ToMove != k.view.You {
		k.next("view")
	}
	v := k.view
	arg := ""
	verb := "play"
	if len(v.Trumps) > 0 {
		verb, arg = "trump", v.Trumps[2].Arg
	} else {
		for _, c := range v.Hand {
			if c.Legal {
				arg = c.Card
			}
		}
	}
	k.move(verb, arg, v.Seq, "r1")
	k.viewAfter(v.Seq)
	k.c.CloseNow()
	again := e.open(s)
	if again.view.Seq <= v.Seq {
		t.Fatalf("after the reconnect the view is at %d, the move was made at %d", again.view.Seq, v.Seq)
	}
}

// dcCheck stands for the discord adapter's ActivityUser: one code, one user, one channel.
type dcCheck struct {
	code  string
	p     api.Player
	place api.Place
}

func (d dcCheck) AppID() string { return "900000000000000001" }

func (d dcCheck) ActivityPlayers(_ context.Context, instance string) ([]string, error) {
	if instance != "i-1" {
		return nil, nil
	}
	return []string{d.p.ID}, nil
}

func (d dcCheck) ActivityUser(_ context.Context, code, instance string) (api.Player, api.Place, error) {
	if code != d.code || instance != "i-1" {
		return api.Player{}, api.Place{}, errors.New("refused")
	}
	return d.p, d.place, nil
}

// In a Discord Activity the channel's table is the person's to watch, seated or not, and its
// lobby theirs to join from the page; the Activity's frame is an allowed origin; a refused code
// gets the refusal.
func TestDiscordActivitySession(t *testing.T) {
	place := api.Place{Platform: benchPlatform, Chat: "chan"}
	eve := api.Player{ID: "dc:5", Name: "Eve", Locale: "fr"}
	e := newEnv(t, func(c *Config) { c.Discord = dcCheck{"c0de", eve, place} })
	owner := api.Player{ID: "dc:1", Name: "Ann", Locale: "en"}
	e.do(place, owner, api.VerbNew, "timer=none")
	frame := "https://900000000000000001.discordsays.com"
	code, out := e.post(map[string]string{"discord": "c0de", "instance": "i-1"}, frame)
	if code != 200 || out["lang"] != "fr" {
		t.Fatalf("the code exchange: %d %v", code, out)
	}
	if code, out := e.post(map[string]string{"discord": "wrong", "instance": "i-1", "lang": "de"}, frame); code != 401 ||
		out["error"] != i18n.T("de", "web.dc_refused") {
		t.Fatalf("a refused code: %d %v", code, out)
	}
	k, err := e.dial(out["session"], frame)
	if err != nil {
		t.Fatal(err)
	}
	v := k.next("view").View
	if v.You != -1 || !v.CanJoin || len(v.Hand) != 0 {
		t.Fatalf("Eve's view of the lobby: %+v", v)
	}
	k.move("join", "", v.Seq, "j1")
	if nv := k.viewAfter(v.Seq); nv.You != 1 || nv.CanJoin || !nv.CanDeal {
		t.Fatalf("after joining: seat %d, join %v, deal %v", nv.You, nv.CanJoin, nv.CanDeal)
	}
}

package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// An env runs the real table service and the web server on an httptest server; its pages and
// sockets are the real ones. The service's platform is "bench": its outbox only tells the web.

const benchPlatform = "bench"

type nullOutbox struct{}

func (nullOutbox) Deliver(context.Context, []api.Message) {}

// fastPlayer lets a test tap faster than any person: the move-rate limit has its own test.
func fastPlayer(c *Config) { c.MoveRate, c.MoveBurst = 1000, 1000 }

// randomRobots play a random legal move each.
var randomRobots = tabletest.RandomRobots

type env struct {
	t     testing.TB
	store *mem.Store
	svc   *table.Service
	web   *Server
	url   string // the server's address, http://127.0.0.1:port
	clock *tabletest.Clock
	posts atomic.Int32 // session requests made, for an address of each player's own
}

// newEnv starts a service and a web server (its own, as Run serves it); cfg may change the
// web's config before New.
func newEnv(t testing.TB, cfg ...func(*Config)) *env {
	t.Helper()
	return newEnvOn(t, mem.New(), cfg...)
}

// newEnvOn is newEnv on a given store: another copy of the bot, when an env runs on it already.
func newEnvOn(t testing.TB, store *mem.Store, cfg ...func(*Config)) *env {
	t.Helper()
	e := &env{t: t, store: store, clock: tabletest.NewClock(time.Date(2026, 5, 1, 20, 0, 0, 0, time.UTC))}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e.url = "http://" + ln.Addr().String()
	c := Config{PublicURL: e.url, Listener: ln, KV: e.store, Now: e.clock.Now,
		Rand: rand.NewChaCha8([32]byte{7}), LinkKey: []byte("0123456789abcdef0123456789abcdef")}
	for _, f := range cfg {
		f(&c)
	}
	w, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	e.web = w
	e.svc = tabletest.New(table.Config{Store: e.store, KV: e.store, Robots: randomRobots, Seed: 11,
		Outboxes: map[string]table.Outbox{benchPlatform: w.Tee(nullOutbox{}), Platform: w}}) // Platform: bot -web's table
	w.Attach(e.svc)
	ctx, stop := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- w.Run(ctx) }()
	t.Cleanup(func() {
		e.svc.Close()
		stop()
		if err := <-ran; err != nil {
			t.Errorf("Run: %v", err)
		}
		w.Close()
	})
	return e
}

func (e *env) do(place api.Place, p api.Player, v api.Verb, args ...string) {
	e.t.Helper()
	replies, err := e.svc.Handle(context.Background(), api.Command{Place: place, Actor: p, Verb: v, Args: args})
	if err != nil {
		e.t.Fatalf("%s %s: %v", p.ID, v, err)
	}
	for _, r := range replies {
		if r.Kind == api.KindError {
			e.t.Fatalf("%s %s: %s", p.ID, v, r.Text)
		}
	}
}

// restartAfter stops the service and starts it again on the same store with its clock d later,
// as a bot that was down for d: the turn's timers are armed again from the stored state (what
// was due meanwhile is due at once). The web server and its sockets stay.
func (e *env) restartAfter(d time.Duration) {
	e.t.Helper()
	e.svc.Close()
	later := func() time.Time { return time.Now().Add(d) }
	e.svc = tabletest.New(table.Config{Store: e.store, KV: e.store, Robots: randomRobots, Seed: 11, Now: later,
		Outboxes: map[string]table.Outbox{benchPlatform: e.web.Tee(nullOutbox{})}})
	e.web.Attach(e.svc)
	if err := e.svc.Resume(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(e.svc.Close)
}

// soloTable opens a table for one person and three computer players, and deals.
func (e *env) soloTable(n int, opts ...string) (string, api.Player, api.Place) {
	e.t.Helper()
	place := api.Place{Platform: benchPlatform, Chat: fmt.Sprint("g", n), Title: "Café Konter"}
	p := api.Player{ID: fmt.Sprintf("tg:%d", 100+n), Name: fmt.Sprintf("Jang %d", n), Locale: "en"}
	if len(opts) == 0 {
		opts = []string{"timer=none", "stripes=3"}
	}
	e.do(place, p, api.VerbNew, opts...)
	e.do(place, p, api.VerbDeal)
	return e.svc.TableAt(place), p, place
}

// fourTable opens a table of four people and deals.
func (e *env) fourTable(n int) (string, []api.Player, api.Place) {
	e.t.Helper()
	place := api.Place{Platform: benchPlatform, Chat: fmt.Sprint("q", n)}
	var ps []api.Player
	for i := range 4 {
		ps = append(ps, api.Player{ID: fmt.Sprintf("dc:%d%d", n, i), Name: fmt.Sprintf("Player %d.%d", n, i+1), Locale: "de"})
	}
	e.do(place, ps[0], api.VerbNew, "timer=none")
	for _, p := range ps[1:] {
		e.do(place, p, api.VerbJoin)
	}
	e.do(place, ps[0], api.VerbDeal)
	return e.svc.TableAt(place), ps, place
}

// link makes the one-time link of a player's hand, as a chat adapter would.
func (e *env) link(p api.Player, tableID string) string {
	e.t.Helper()
	l, err := e.web.Link(p, tableID)
	if err != nil {
		e.t.Fatal(err)
	}
	return l
}

// post sends a session request as the page does, from the origin given ("" sends none).
func (e *env) post(body any, origin string) (int, map[string]string) {
	e.t.Helper()
	h := http.Header{}
	if origin != "" {
		h.Set("Origin", origin)
	}
	code, out, _ := e.postWith(body, h)
	return code, out
}

// postFrom sends a session request as a page behind the reverse proxy on this machine does:
// the proxy names the client in X-Forwarded-For ("" names none).
func (e *env) postFrom(body any, client string) (int, map[string]string, http.Header) {
	e.t.Helper()
	h := http.Header{}
	if client != "" {
		h.Set("X-Forwarded-For", client)
	}
	return e.postWith(body, h)
}

func (e *env) postWith(body any, h http.Header) (int, map[string]string, http.Header) {
	e.t.Helper()
	data, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, e.url+"/api/session", bytes.NewReader(data))
	req.Header = h
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]string{}
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out, resp.Header
}

// session redeems a player's link for a session, from an address of the player's own (as the
// reverse proxy on this machine names it).
func (e *env) session(p api.Player, tableID string) string {
	e.t.Helper()
	l := e.link(p, tableID)
	_, token, _ := strings.Cut(l, "#link=")
	n := e.posts.Add(1)
	code, out, _ := e.postFrom(map[string]string{"link": token}, fmt.Sprintf("10.%d.%d.%d", n>>16&255, n>>8&255, n&255))
	if code != http.StatusOK || out["session"] == "" {
		e.t.Fatalf("redeeming a fresh link: %d %v", code, out)
	}
	return out["session"]
}

// client is a socket as the page holds it.
type client struct {
	t    testing.TB
	c    *websocket.Conn
	view SeatView
	got  []outbound
}

func (e *env) dial(session string, origin string) (*client, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	h := http.Header{}
	if origin != "" {
		h.Set("Origin", origin)
	}
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.url, "http")+"/ws", &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		return nil, err
	}
	c.SetReadLimit(1 << 20)
	k := &client{t: e.t, c: c}
	if err := k.sendJSON(map[string]any{"t": "hello", "session": session}); err != nil {
		return nil, err
	}
	e.t.Cleanup(func() { c.CloseNow() })
	return k, nil
}

// open dials and waits for the first view.
func (e *env) open(session string) *client {
	e.t.Helper()
	k, err := e.dial(session, "")
	if err != nil {
		e.t.Fatal(err)
	}
	if m := k.next("view"); m.View == nil {
		e.t.Fatalf("no first view: %+v", m)
	}
	return k
}

func (k *client) sendJSON(v any) error {
	data, _ := json.Marshal(v)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return k.c.Write(ctx, websocket.MessageText, data)
}

// read gives the next message, or an error when the socket ends.
func (k *client) read(within time.Duration) (outbound, error) {
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	_, data, err := k.c.Read(ctx)
	if err != nil {
		return outbound{}, err
	}
	var m outbound
	if err := json.Unmarshal(data, &m); err != nil {
		k.t.Fatalf("the server sent %q", data)
	}
	if m.View != nil {
		k.view = *m.View
	}
	k.got = append(k.got, m)
	return m, nil
}

// next reads until a message of type typ.
func (k *client) next(typ string) outbound {
	k.t.Helper()
	for {
		m, err := k.read(5 * time.Second)
		if err != nil {
			k.t.Fatalf("waiting for %q: %v (got %s)", typ, err, k.kinds())
		}
		if m.T == typ {
			return m
		}
	}
}

// viewAfter reads views until one is newer than seq.
func (k *client) viewAfter(seq uint64) SeatView {
	k.t.Helper()
	for k.view.Seq <= seq {
		k.next("view")
	}
	return k.view
}

func (k *client) move(verb, arg string, seq uint64, id string) {
	k.t.Helper()
	if err := k.sendJSON(map[string]any{"t": "move", "verb": verb, "arg": arg, "seq": seq, "id": id}); err != nil {
		k.t.Fatal(err)
	}
}

// kinds lists what the socket got, for a failure's message.
func (k *client) kinds() string {
	var out []string
	for _, m := range k.got {
		s := m.T
		if m.View != nil {
			s += fmt.Sprint("@", m.View.Seq)
		}
		if m.Text != "" {
			s += " " + m.Text
		}
		out = append(out, s)
	}
	return strings.Join(out, "; ")
}

//go:build linux

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/kontermatt/kontermatt/adapters/web"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
)

// The slow-clients test runs the bot (this test binary again, as TestHelperSlowBot) under an
// open-files limit of 120, as the reviewer's `ulimit -n 120` did, with the web table on and a
// table of four dealt. The test holds 150 connections to the web table that drip a request body
// one byte every two seconds, from one address or spread over three, and meanwhile asks
// /healthz on the admin socket and plays moves on the web table from other addresses: each must
// answer within a second.

// slowBotEnv makes TestHelperSlowBot the bot: it holds the database's directory.
const slowBotEnv = "KONTERMATT_TEST_SLOW_BOT"

// slowBotFiles is the bot's open-files limit in the test.
const slowBotFiles = 120

// slowBot is what the bot tells the test when it is ready.
type slowBot struct {
	Web    string   `json:"web"`    // the web table's host:port
	Socket string   `json:"socket"` // the admin socket
	Links  []string `json:"links"`  // each player's one-time link
	Spare  []string `json:"spare"`  // and another, for a page opened again while the slow clients are held
	Files  int      `json:"files"`  // the files it has open, ready
}

// TestHelperSlowBot is the bot of TestSlowClientsDoNotStarveTheBot; run by itself it does
// nothing.
func TestHelperSlowBot(t *testing.T) {
	dir := os.Getenv(slowBotEnv)
	if dir == "" {
		return
	}
	lim := syscall.Rlimit{Cur: slowBotFiles, Max: slowBotFiles}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	var cfg Config
	cfg.Database, cfg.LogLevel, cfg.LogFormat, cfg.Think = filepath.Join(dir, "k.db"), "warn", "text", time.Second
	cfg.Telegram.Token, cfg.Telegram.APIURL = "123:test-token", "http://127.0.0.1:1" // never answers: no chat needed
	cfg.Web.Listen, cfg.Web.PublicURL = addr, "http://"+addr
	m := &Main{Config: cfg, Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: os.Stderr}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := m.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ran := make(chan error, 1)
	go func() { ran <- m.Run(ctx) }()
	place := api.Place{Platform: "telegram", Chat: "-1001"}
	var ps []api.Player
	for i := range 4 {
		ps = append(ps, api.Player{ID: fmt.Sprint("tg:", 10+i), Name: fmt.Sprint("Player ", i+1), Locale: "en"})
	}
	do := func(p api.Player, v api.Verb, args ...string) {
		replies, err := m.Service.Handle(ctx, api.Command{Place: place, Actor: p, Verb: v, Args: args})
		if err != nil {
			t.Fatalf("%s %s: %v", p.ID, v, err)
		}
		for _, r := range replies {
			if r.Kind == api.KindError {
				t.Fatalf("%s %s: %s", p.ID, v, r.Text)
			}
		}
	}
	do(ps[0], api.VerbNew, "timer=none")
	for _, p := range ps[1:] {
		do(p, api.VerbJoin)
	}
	do(ps[0], api.VerbDeal)
	var w webChat
	for _, c := range m.chats {
		if wc, ok := c.(webChat); ok {
			w = wc
		}
	}
	ready := slowBot{Web: addr, Socket: cfg.Database + ".sock"}
	for _, p := range ps {
		l, err := w.Link(p, m.Service.TableAt(place))
		spare, err2 := w.Link(p, m.Service.TableAt(place))
		if err != nil || err2 != nil {
			t.Fatal(err, err2)
		}
		ready.Links, ready.Spare = append(ready.Links, l), append(ready.Spare, spare)
	}
	for range 100 {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	fds, _ := os.ReadDir("/proc/self/fd")
	ready.Files = len(fds)
	line, _ := json.Marshal(ready)
	fmt.Printf("\nSLOWBOT %s\n", line)
	io.Copy(io.Discard, os.Stdin) // until the test is done
	cancel()
	if err := <-ran; err != nil {
		t.Log(err) // Telegram never started
	}
}

func TestSlowClientsDoNotStarveTheBot(t *testing.T) {
	for _, spread := range []int{1, 3} {
		t.Run(fmt.Sprintf("from %d addresses", spread), func(t *testing.T) { slowClients(t, spread) })
	}
}

// slowClients holds 150 slow connections from spread addresses (127.0.0.2 on) while /healthz
// and the table's players (127.0.0.11 to .14) must be answered within a second.
func slowClients(t *testing.T, spread int) {
	const slow, within = 150, time.Second
	bot := startSlowBot(t)
	healthz := func() (time.Duration, error) {
		c := &http.Client{Timeout: within, Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", bot.Socket)
		}}}
		start := time.Now()
		resp, err := c.Get("http://bot/healthz")
		if err != nil {
			return time.Since(start), err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if !strings.Contains(string(body), `"database":"ok"`) {
			return time.Since(start), fmt.Errorf("/healthz: %d %s", resp.StatusCode, body)
		}
		return time.Since(start), nil
	}
	var pages []*slowPage
	for i, l := range bot.Links {
		pg, _, err := openSlowPage(bot.Web, l, fmt.Sprintf("127.0.0.%d", 11+i), within)
		if err != nil {
			t.Fatalf("player %d's page before the slow clients: %v", i+1, err)
		}
		pages = append(pages, pg)
	}
	defer func() {
		for _, pg := range pages {
			pg.c.CloseNow()
		}
	}()
	if took, err := healthz(); err != nil {
		t.Fatalf("/healthz before the slow clients: %v", err)
	} else {
		t.Logf("before: /healthz in %v, move in %v", took.Round(time.Millisecond), playOne(t, pages, within).Round(time.Millisecond))
	}

	var closed atomic.Int32
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := range slow {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(2+i%spread))}, Timeout: 5 * time.Second}
		c, err := d.Dial("tcp", bot.Web)
		if err != nil {
			t.Fatalf("slow connection %d: %v", i, err)
		}
		conns = append(conns, c)
		fmt.Fprintf(c, "POST /api/session HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 4096\r\n\r\n{", bot.Web)
		go func() {
			io.Copy(io.Discard, c) // until the server closes it (or the test does)
			closed.Add(1)
		}()
	}
	drip := time.NewTicker(2 * time.Second)
	defer drip.Stop()
	for round := range 2 {
		<-drip.C
		for _, c := range conns {
			c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
			c.Write([]byte(" "))
		}
		took, err := healthz()
		if err != nil || took > within {
			t.Errorf("round %d: /healthz with %d slow connections (%d closed by the bot): %v after %v", round, slow, closed.Load(), err, took)
		}
		moved := playOne(t, pages, within)
		// One player's page opens again from a new link: a new session request and a new socket.
		i := round % len(pages)
		pages[i].c.CloseNow()
		pg, opened, err := openSlowPage(bot.Web, bot.Spare[i], fmt.Sprintf("127.0.0.%d", 11+i), within)
		if err != nil {
			t.Fatalf("round %d: a move on an open page answered in %v, but player %d's page reopened with %d slow connections (%d closed by the bot): %v after %v",
				round, moved.Round(time.Millisecond), i+1, slow, closed.Load(), err, opened)
		}
		pages[i] = pg
		t.Logf("with %d slow connections from %d address(es), round %d: /healthz in %v, a move in %v, a page reopened in %v; %d closed by the bot at once, %d held",
			slow, spread, round, took.Round(time.Millisecond), moved.Round(time.Millisecond), opened.Round(time.Millisecond),
			closed.Load(), slow-int(closed.Load()))
	}
}

// startSlowBot starts TestHelperSlowBot and waits until it is ready.
func startSlowBot(t *testing.T) slowBot {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperSlowBot$")
	cmd.Env = append(hostEnv(), slowBotEnv+"="+t.TempDir())
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	logs := &tabletest.Buffer{}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("the bot: %v\n%s", err, logs)
			}
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Errorf("the bot did not stop\n%s", logs)
		}
		if t.Failed() {
			t.Logf("the bot's log:\n%s", logs)
		}
	})
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), "SLOWBOT "); ok {
			var b slowBot
			if err := json.Unmarshal([]byte(line), &b); err != nil {
				t.Fatal(err)
			}
			go io.Copy(io.Discard, out)
			t.Logf("the bot runs with %d of its %d files open", b.Files, slowBotFiles)
			return b
		}
	}
	t.Fatalf("the bot did not start:\n%s", logs)
	return slowBot{}
}

// slowPage is a player's page: its socket and the newest view it got.
type slowPage struct {
	c     *websocket.Conn
	mu    sync.Mutex
	view  web.SeatView
	fresh chan struct{} // a new view came
}

// openSlowPage redeems a player's link and opens their socket from the local address ip, as a
// page does, within the time given.
func openSlowPage(web, link, ip string, within time.Duration) (*slowPage, time.Duration, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	tr := &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}).DialContext}
	client := &http.Client{Transport: tr}
	_, token, _ := strings.Cut(link, "#link=")
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+web+"/api/session", strings.NewReader(`{"link":"`+token+`"}`))
	resp, err := client.Do(req)
	if err != nil {
		return nil, time.Since(start), err
	}
	var s struct{ Session string }
	err = json.NewDecoder(resp.Body).Decode(&s)
	resp.Body.Close()
	tr.CloseIdleConnections()
	if err != nil || s.Session == "" {
		return nil, time.Since(start), fmt.Errorf("no session: %d %v", resp.StatusCode, err)
	}
	c, _, err := websocket.Dial(ctx, "ws://"+web+"/ws", &websocket.DialOptions{HTTPClient: client})
	if err != nil {
		return nil, time.Since(start), err
	}
	c.SetReadLimit(1 << 20)
	hello, _ := json.Marshal(map[string]any{"t": "hello", "session": s.Session})
	if err := c.Write(ctx, websocket.MessageText, hello); err != nil {
		return nil, time.Since(start), err
	}
	pg := &slowPage{c: c, fresh: make(chan struct{}, 1)}
	for pg.view.Seq == 0 {
		if err := pg.read(ctx); err != nil {
			return nil, time.Since(start), err
		}
	}
	go func() {
		for pg.read(context.Background()) == nil {
		}
	}()
	return pg, time.Since(start), nil
}

func (pg *slowPage) read(ctx context.Context) error {
	_, data, err := pg.c.Read(ctx)
	if err != nil {
		return err
	}
	var m struct {
		T    string
		View *web.SeatView
		Text string
	}
	if json.Unmarshal(data, &m) == nil && m.View != nil {
		pg.mu.Lock()
		if m.View.Seq > pg.view.Seq {
			pg.view = *m.View
		}
		pg.mu.Unlock()
		select {
		case pg.fresh <- struct{}{}:
		default:
		}
	}
	return nil
}

func (pg *slowPage) now() web.SeatView {
	pg.mu.Lock()
	defer pg.mu.Unlock()
	return pg.view
}

// playOne makes the move of the player whose turn it is (a trump, else a legal card) and gives
// how long until their page showed the table after it.
func playOne(t *testing.T, pages []*slowPage, within time.Duration) time.Duration {
	t.Helper()
	for _, pg := range pages {
		v := pg.now()
		if v.Game == nil || v.Game.ToMove != v.You {
			continue
		}
		verb, arg := v.FirstMove()
		start := time.Now()
		data, _ := json.Marshal(map[string]any{"t": "move", "verb": verb, "arg": arg, "seq": v.Seq, "id": fmt.Sprint("m", v.Seq)})
		ctx, cancel := context.WithTimeout(context.Background(), within)
		defer cancel()
		if err := pg.c.Write(ctx, websocket.MessageText, data); err != nil {
			t.Fatalf("sending a move: %v", err)
		}
		for pg.now().Seq <= v.Seq {
			select {
			case <-pg.fresh:
			case <-ctx.Done():
				t.Fatalf("the move %s %s was not answered within %v", verb, arg, within)
			}
		}
		return time.Since(start)
	}
	t.Fatal("no page says it is its player's turn")
	return 0
}

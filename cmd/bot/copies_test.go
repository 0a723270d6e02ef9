package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage/etcdstore/etcdtest"
)

// Two copies of the bot (two processes of the binary) on one etcd cluster, Telegram by webhook:
// each update goes to one copy, as a proxy in front of them sends it, and the copies take turns.

// fakeBotAPI is the Telegram Bot API as far as the copies use it here: the start (getMe,
// setWebhook, setMyCommands), messages sent and edited, presses answered. It keeps every chat's
// messages and counts each request, for what the players see and what was said twice.
type fakeBotAPI struct {
	t     *testing.T
	token string
	srv   *httptest.Server
	mu    sync.Mutex
	next  int
	chats map[int64][]*botMsg
	sent  map[string]int // chat, text and keyboard of each sendMessage → how often
	// answers are the presses answered: query → whether with an alert (a refusal).
	answers map[string]bool
	twice   []string // queries answered again
	// webhook is the URL setWebhook set; pending and lastError what getWebhookInfo says of it.
	webhook   string
	pending   int
	lastError string
}

type botMsg struct {
	ID     int
	Chat   int64
	Text   string
	Markup string // reply_markup as sent
}

func newFakeBotAPI(t *testing.T, token string) *fakeBotAPI {
	f := &fakeBotAPI{t: t, token: token, chats: map[int64][]*botMsg{}, sent: map[string]int{}, answers: map[string]bool{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// reply answers as the Bot API does: {"ok":true,"result":…}, or ok false with error_code and
// description (core.telegram.org/bots/api, "Making requests").
func reply(w http.ResponseWriter, code int, result any, desc string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	if code == 200 {
		json.NewEncoder(w).Encode(map[string]any{"ok": true, "result": result})
		return
	}
	json.NewEncoder(w).Encode(map[string]any{"ok": false, "error_code": code, "description": desc})
}

func (f *fakeBotAPI) serve(w http.ResponseWriter, r *http.Request) {
	method, ok := strings.CutPrefix(r.URL.Path, "/bot"+f.token+"/")
	if !ok {
		reply(w, 401, nil, "Unauthorized")
		return
	}
	if err := r.ParseMultipartForm(10 << 20); err != nil && r.ParseForm() != nil {
		reply(w, 400, nil, "Bad Request: can't parse the request")
		return
	}
	p := func(k string) string { return r.FormValue(k) }
	chat, _ := strconv.ParseInt(p("chat_id"), 10, 64)
	f.mu.Lock()
	defer f.mu.Unlock()
	switch method {
	case "getMe":
		reply(w, 200, map[string]any{"id": 999, "is_bot": true, "first_name": "Kontermatt", "username": "kontermatt_bot"}, "")
	case "setWebhook":
		f.webhook = p("url")
		reply(w, 200, true, "")
	case "deleteWebhook", "setMyCommands":
		reply(w, 200, true, "")
	case "getWebhookInfo":
		// A WebhookInfo (core.telegram.org/bots/api#getwebhookinfo): the URL set (empty: none),
		// the updates waiting, the last delivery error's Unix time and message.
		info := map[string]any{"url": f.webhook, "has_custom_certificate": false, "pending_update_count": f.pending}
		if f.lastError != "" {
			info["last_error_date"], info["last_error_message"] = time.Now().Add(-time.Minute).Unix(), f.lastError
		}
		reply(w, 200, info, "")
	case "getChatMember":
		user, _ := strconv.ParseInt(p("user_id"), 10, 64)
		reply(w, 200, map[string]any{"user": map[string]any{"id": user, "first_name": "x"}, "status": "member"}, "")
	case "answerCallbackQuery":
		// A query is answered once; a second answer is refused (tdlib/telegram-bot-api: "query
		// is too old and response timeout expired or query ID is invalid").
		id := p("callback_query_id")
		if _, done := f.answers[id]; done {
			f.twice = append(f.twice, id)
			reply(w, 400, nil, "Bad Request: query is too old and response timeout expired or query ID is invalid")
			return
		}
		f.answers[id] = p("show_alert") == "true"
		if p("show_alert") == "true" {
			f.t.Logf("press %s refused: %s", id, p("text"))
		}
		reply(w, 200, true, "")
	case "sendMessage", "sendPhoto":
		text := p("text")
		if method == "sendPhoto" {
			text = p("caption")
		}
		f.sent[fmt.Sprintf("%d\x00%s\x00%s", chat, text, p("reply_markup"))]++
		f.next++
		m := &botMsg{ID: f.next, Chat: chat, Text: text, Markup: p("reply_markup")}
		f.chats[chat] = append(f.chats[chat], m)
		reply(w, 200, f.json(m), "")
	case "editMessageText", "editMessageReplyMarkup":
		id, _ := strconv.Atoi(p("message_id"))
		i := slices.IndexFunc(f.chats[chat], func(m *botMsg) bool { return m.ID == id })
		if i < 0 {
			reply(w, 400, nil, "Bad Request: message to edit not found")
			return
		}
		m := f.chats[chat][i]
		text := p("text")
		if method == "editMessageReplyMarkup" {
			text = m.Text
		}
		if text == m.Text && p("reply_markup") == m.Markup {
			reply(w, 400, nil, "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message")
			return
		}
		m.Text, m.Markup = text, p("reply_markup")
		reply(w, 200, f.json(m), "")
	case "deleteMessage":
		reply(w, 200, true, "")
	default:
		f.t.Errorf("the bot called %s, which this fake does not know", method)
		reply(w, 400, nil, "Bad Request: method not faked: "+method)
	}
}

func (f *fakeBotAPI) json(m *botMsg) map[string]any {
	chat := map[string]any{"id": m.Chat, "type": "supergroup", "title": "Konter"}
	if m.Chat > 0 {
		chat = map[string]any{"id": m.Chat, "type": "private", "first_name": "x"}
	}
	return map[string]any{"message_id": m.ID, "chat": chat, "date": time.Now().Unix(), "text": m.Text,
		"from": map[string]any{"id": 999, "is_bot": true, "first_name": "Kontermatt", "username": "kontermatt_bot"}}
}

// buttons gives the callback data of a message's inline keyboard.
func (m *botMsg) buttons() []string {
	var kb struct {
		Rows [][]struct {
			Data string `json:"callback_data"`
		} `json:"inline_keyboard"`
	}
	json.Unmarshal([]byte(m.Markup), &kb)
	var out []string
	for _, row := range kb.Rows {
		for _, b := range row {
			if b.Data != "" {
				out = append(out, b.Data)
			}
		}
	}
	return out
}

// newestWith gives the newest message in chat with a button of one of the verbs, and those
// buttons' data.
func (f *fakeBotAPI) newestWith(chat int64, verbs ...api.Verb) (botMsg, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	msgs := f.chats[chat]
	for i := len(msgs) - 1; i >= 0; i-- {
		var data []string
		for _, d := range msgs[i].buttons() {
			if a, err := api.ParseAction(d); err == nil && slices.Contains(verbs, a.Verb) {
				data = append(data, d)
			}
		}
		if len(data) > 0 {
			return *msgs[i], data
		}
	}
	return botMsg{}, nil
}

// botCopy is one bot process: its webhook address and admin socket.
type botCopy struct {
	name string
	cmd  *exec.Cmd
	hook string // where its webhook listens
	sock string
	out  *tabletest.Buffer
	done chan error
}

const (
	copiesToken  = "123456:SECRET-copies-token"
	copiesSecret = "hook-secret-0123456789"
	copiesGroup  = int64(-1001234)
)

func startCopy(t *testing.T, bin, name, config string) *botCopy {
	t.Helper()
	dir := t.TempDir()
	// Each copy in a directory of its own, as each container or systemd instance has: on etcd
	// the admin socket is kontermatt.sock in the working directory, whatever the database path.
	b := &botCopy{name: name, hook: freeAddr(t), sock: filepath.Join(dir, "kontermatt.sock"), out: &tabletest.Buffer{}, done: make(chan error, 1)}
	b.cmd = exec.Command(bin, "-config", config)
	b.cmd.Dir = dir
	b.cmd.Env = hostEnv("KONTERMATT_TELEGRAM_WEBHOOK_LISTEN="+b.hook, "KONTERMATT_LOG_LEVEL=debug")
	b.cmd.Stdout, b.cmd.Stderr = b.out, b.out
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { b.done <- b.cmd.Wait() }()
	t.Cleanup(func() {
		b.cmd.Process.Kill()
		<-b.done
		if t.Failed() {
			t.Logf("copy %s:\n%s", name, tail(b.out.String()))
		}
	})
	return b
}

// health is the copy's /healthz, or nil when it does not answer.
func (b *botCopy) health() map[string]string {
	tr := unixTransport(b.sock)
	tr.DisableKeepAlives = true // the admin socket takes a few connections at a time
	c := &http.Client{Timeout: 2 * time.Second, Transport: tr}
	resp, err := c.Get("http://bot/healthz")
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	var state map[string]string
	if json.NewDecoder(resp.Body).Decode(&state) != nil {
		return nil
	}
	return state
}

func unixTransport(sock string) *http.Transport {
	return &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}
}

// holds reports whether the copy's /healthz names the lease.
func (b *botCopy) holds(lease string) bool {
	return slices.Contains(strings.Split(b.health()["leases"], ","), lease)
}

// post sends an update to the copy's webhook as Telegram does (the secret in its header).
func (b *botCopy) post(t *testing.T, update map[string]any) {
	t.Helper()
	body, _ := json.Marshal(update)
	req, _ := http.NewRequest(http.MethodPost, "http://"+b.hook+"/telegram/hook", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Telegram-Bot-Api-Secret-Token", copiesSecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("posting to copy %s: %v", b.name, err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("copy %s answered the webhook %d", b.name, resp.StatusCode)
	}
}

type tgPlayer struct {
	id   int64
	name string
}

func (p tgPlayer) json() map[string]any {
	return map[string]any{"id": p.id, "is_bot": false, "first_name": p.name, "language_code": "en"}
}

// TestTwoCopiesPlayOneTable: two bot processes on a 3-member etcd cluster play one Telegram
// table, the updates alternating between them. Each /healthz names the store and the quorum,
// and the lease of the group's place (its partition's) is at exactly one copy. The copy holding
// it is killed (SIGKILL): the other takes the place over within 15 s, and the table plays on there (the computers move
// again, the humans' presses are taken). No press is answered twice, and no message sent twice.
func TestTwoCopiesPlayOneTable(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{})
	bin := buildBot(t)
	f := newFakeBotAPI(t, copiesToken)
	config := writeConfig(t, fmt.Sprintf(`store: etcd
etcd:
  endpoints: ["%s"]
  prefix: "copies/"
think: 50ms
telegram:
  token: "%s"
  api_url: "%s"
  webhook:
    url: https://bot.example.org/telegram/hook
    secret_token: %s
`, strings.Join(c.Endpoints(), `", "`), copiesToken, f.srv.URL, copiesSecret))
	copies := []*botCopy{startCopy(t, bin, "a", config), startCopy(t, bin, "b", config)}
	for _, b := range copies {
		tabletest.WaitUntil(t, 30*time.Second, "copy "+b.name+" healthy", func() bool { return b.health()["quorum"] == "ok" })
	}
	// The copy that owns the group's place fires its table's timers and plays its computers.
	groupLease := table.PlaceLease(api.Place{Platform: "telegram", Chat: strconv.FormatInt(copiesGroup, 10)})
	timersAt := func() []*botCopy {
		var at []*botCopy
		for _, b := range copies {
			if b.holds(groupLease) {
				at = append(at, b)
			}
		}
		return at
	}
	// The places' partitions are spread over both copies a few seconds after the second starts
	// (a lease given up is taken by the other). A place handed over mid-match waits for its new
	// owner's first report of what the group shows (Pace.Wait): the match starts once the spread
	// has settled, so that the only take-over measured here is the kill's.
	placesHeld := func(b *botCopy) (n int) {
		for _, l := range strings.Split(b.health()["leases"], ",") {
			if strings.HasPrefix(l, "places/") {
				n++
			}
		}
		return n
	}
	tabletest.WaitUntil(t, 30*time.Second, "the places spread over both copies", func() bool {
		return placesHeld(copies[0]) == table.Partitions/2 && placesHeld(copies[1]) == table.Partitions/2
	})
	tabletest.WaitUntil(t, 15*time.Second, "the group's place owned", func() bool { return len(timersAt()) == 1 })
	for _, b := range copies {
		h := b.health()
		if !strings.HasPrefix(h["store"], "etcd ") || h["quorum"] != "ok" {
			t.Errorf("copy %s's /healthz: %v", b.name, h)
		}
		t.Logf("copy %s: %v", b.name, h)
	}

	// The updates go to the copies in turn, as a proxy in front of them would send them.
	var updateID, turn int
	var queries []string
	send := func(update map[string]any) *botCopy {
		updateID++
		update["update_id"] = updateID
		b := copies[turn%len(copies)]
		turn++
		b.post(t, update)
		return b
	}
	alice, bob := tgPlayer{201, "Alice"}, tgPlayer{202, "Bob"}
	command := func(from tgPlayer, text string) {
		word, _, _ := strings.Cut(text, " ")
		send(map[string]any{"message": map[string]any{"message_id": 10000 + updateID, "from": from.json(), "date": time.Now().Unix(),
			"chat": map[string]any{"id": copiesGroup, "type": "supergroup", "title": "Konter"}, "text": text,
			"entities": []map[string]any{{"type": "bot_command", "offset": 0, "length": len(word)}}}})
	}
	press := func(from tgPlayer, m botMsg, data string) string {
		id := "q" + strconv.Itoa(len(queries)+1)
		queries = append(queries, id)
		f.mu.Lock()
		msg := f.json(&m)
		f.mu.Unlock()
		send(map[string]any{"callback_query": map[string]any{"id": id, "from": from.json(), "message": msg, "chat_instance": "ci", "data": data}})
		return id
	}
	answer := func(id string) (alert, ok bool) {
		f.mu.Lock()
		defer f.mu.Unlock()
		alert, ok = f.answers[id]
		return alert, ok
	}
	waitAnswer := func(id string) bool {
		var alert, ok bool
		tabletest.WaitUntil(t, 10*time.Second, "press "+id+" answered", func() bool { alert, ok = answer(id); return ok })
		return !alert
	}

	command(alice, "/new@kontermatt_bot stripes=5")
	var lobby botMsg
	var data []string
	tabletest.WaitUntil(t, 10*time.Second, "the lobby", func() bool { lobby, data = f.newestWith(copiesGroup, api.VerbJoin); return data != nil })
	if !waitAnswer(press(bob, lobby, data[0])) {
		t.Fatal("Bob could not join")
	}
	tabletest.WaitUntil(t, 10*time.Second, "the lobby with Bob", func() bool {
		lobby, data = f.newestWith(copiesGroup, api.VerbDeal)
		return data != nil && strings.Contains(lobby.Text, "Bob")
	})
	if !waitAnswer(press(alice, lobby, data[0])) {
		t.Fatal("dealing refused")
	}

	// The humans play from their hands in the private chats: a random card or trump each time,
	// until one is taken (a refused press changes nothing). The computers' moves are timers.
	rng := rand.New(rand.NewPCG(24, 24))
	accepted := 0
	// Each card of a hand is pressed once at most: a refused press (not this player's turn, or
	// not a legal card) is followed by another card, or by the next version of the hand.
	tried := map[string]bool{}
	play := func(until time.Duration, moves int) {
		t.Helper()
		deadline := time.Now().Add(until)
		for start := accepted; accepted-start < moves; {
			if time.Now().After(deadline) {
				t.Fatalf("%d moves taken in %v, want %d", accepted-start, until, moves)
			}
			for _, p := range []tgPlayer{alice, bob} {
				hand, cards := f.newestWith(p.id, api.VerbPlay, api.VerbTrump)
				rng.Shuffle(len(cards), func(i, j int) { cards[i], cards[j] = cards[j], cards[i] })
				for _, card := range cards {
					if key := fmt.Sprint(hand.ID, hand.Markup, card); !tried[key] {
						tried[key] = true
						if waitAnswer(press(p, hand, card)) {
							accepted++
						}
						break
					}
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	play(30*time.Second, 6)

	holder := timersAt()[0]
	var survivor *botCopy
	for _, b := range copies {
		if b != holder {
			survivor = b
		}
	}
	died := time.Now()
	holder.cmd.Process.Kill() // SIGKILL: no lease is given up
	<-holder.done
	holder.done <- nil // for the cleanup
	copies = []*botCopy{survivor}
	tabletest.WaitUntil(t, 15*time.Second, "the survivor owns the group's place", func() bool { return survivor.holds(groupLease) })
	t.Logf("copy %s took the group's place over %v after copy %s was killed", survivor.name, time.Since(died).Round(10*time.Millisecond), holder.name)
	// Between two moves of one human the other three seats move: the computers' among them are
	// the survivor's timers.
	play(30*time.Second, 6)

	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.twice) > 0 {
		t.Errorf("presses answered twice: %v", f.twice)
	}
	for _, id := range queries {
		if _, ok := f.answers[id]; !ok {
			t.Errorf("press %s never answered", id)
		}
	}
	for k, n := range f.sent {
		if n > 1 {
			t.Errorf("sent %d times: %q", n, strings.ReplaceAll(k, "\x00", " | "))
		}
	}
	t.Logf("%d updates, %d moves taken, %d messages sent", updateID, accepted, len(f.sent))
}

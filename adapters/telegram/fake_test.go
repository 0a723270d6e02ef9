package telegram

import (
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// fakeAPI is a small Bot API server: enough of getMe, getUpdates (long poll), sendMessage,
// sendPhoto, editMessageText, deleteMessage, answerCallbackQuery, setMyCommands, deleteWebhook
// and getChatMember for the real library to talk to. It records every call, keeps every chat's
// messages, refuses private messages to users who never pressed Start, and enforces Telegram's
// flood limit of 20 messages a minute per group with a 429.
type fakeAPI struct {
	token string
	bot   tgUser

	mu      sync.Mutex
	calls   []call
	chats   map[int64]*fakeChat
	updates []fakeUpdate // not yet confirmed
	nextUpd int
	wake    chan struct{} // closed when an update arrives
	started map[int64]bool
	members map[[2]int64]string
	rules   []*failRule
	groupAt map[int64][]time.Time // recent group messages, for the flood limit
	sentAt  map[int64][]time.Time // every group message that got through
	floods  int                   // 429s from the flood limit (not injected ones)
	answers map[string]tgbotapi.CallbackConfig
	pressed []string // callback query IDs pushed
	nextCB  int
	netErr  map[string]int // method → how many calls fail at the transport
	// onGroup sees every text the bot shows in a group (messages, captions, edits), with f.mu
	// held.
	onGroup func(chat int64, thread int, text string)
}

type fakeUpdate struct {
	id   int
	body map[string]any
}

type call struct {
	Method string
	Params map[string]string
	At     time.Time
	Err    string // the error description, if the call failed
	Chat   int64
}

type fakeChat struct {
	id     int64
	nextID int
	msgs   []*fmsg
}

// fmsg is a message as the fake holds it; Rev counts edits.
type fmsg struct {
	ID      int
	Chat    int64
	From    int64 // 0: the bot
	Text    string
	Markup  *tgbotapi.InlineKeyboardMarkup
	Photo   bool
	ReplyTo int
	Thread  int
	Deleted bool
	Rev     int
}

type failRule struct {
	method     string
	chat       int64 // 0: any
	times      int
	code       int
	desc       string
	retryAfter int
}

type tgUser struct {
	ID    int64
	First string
	Last  string
	Lang  string
}

func (u tgUser) json() map[string]any {
	m := map[string]any{"id": u.ID, "is_bot": false, "first_name": u.First}
	if u.Last != "" {
		m["last_name"] = u.Last
	}
	if u.Lang != "" {
		m["language_code"] = u.Lang
	}
	return m
}

func newFake(token string) *fakeAPI {
	return &fakeAPI{token: token, bot: tgUser{ID: 999, First: "Konter"}, chats: map[int64]*fakeChat{}, wake: make(chan struct{}),
		started: map[int64]bool{}, members: map[[2]int64]string{}, groupAt: map[int64][]time.Time{},
		sentAt: map[int64][]time.Time{}, answers: map[string]tgbotapi.CallbackConfig{}, netErr: map[string]int{}}
}

const botUsername = "kmtestbot"

func chatJSON(id int64) map[string]any {
	if id < 0 {
		return map[string]any{"id": id, "type": "supergroup", "title": "Konter club"}
	}
	return map[string]any{"id": id, "type": "private", "first_name": "u"}
}

func (f *fakeAPI) chat(id int64) *fakeChat {
	c := f.chats[id]
	if c == nil {
		c = &fakeChat{id: id}
		f.chats[id] = c
	}
	return c
}

func (c *fakeChat) add(m *fmsg) *fmsg {
	c.nextID++
	m.ID, m.Chat = c.nextID, c.id
	c.msgs = append(c.msgs, m)
	return m
}

func (c *fakeChat) find(id int) *fmsg {
	for _, m := range c.msgs {
		if m.ID == id && !m.Deleted {
			return m
		}
	}
	return nil
}

// Transport makes an http.Client talk to the fake in memory (the library cannot tell), so tests
// run in a synctest bubble with fake time.
func (f *fakeAPI) Transport() http.RoundTripper { return memTransport{f} }

type memTransport struct{ f *fakeAPI }

func (m memTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	method := req.URL.Path[strings.LastIndex(req.URL.Path, "/")+1:]
	m.f.mu.Lock()
	fail := m.f.netErr[method] > 0
	if fail {
		m.f.netErr[method]--
	}
	m.f.mu.Unlock()
	if fail {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, errors.New("connection reset by peer")
	}
	rec := httptest.NewRecorder()
	m.f.ServeHTTP(rec, req)
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	return rec.Result(), nil
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	prefix := "/bot" + f.token + "/"
	if !strings.HasPrefix(r.URL.Path, prefix) {
		writeJSON(w, 401, map[string]any{"ok": false, "error_code": 401, "description": "Unauthorized"})
		return
	}
	method := strings.TrimPrefix(r.URL.Path, prefix)
	params := map[string]string{}
	if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/") {
		if err := r.ParseMultipartForm(1 << 20); err != nil {
			writeJSON(w, 400, map[string]any{"ok": false, "error_code": 400, "description": "Bad Request: " + err.Error()})
			return
		}
		for k, v := range r.MultipartForm.Value {
			params[k] = v[0]
		}
		for k, fh := range r.MultipartForm.File {
			kind := "data"
			if file, err := fh[0].Open(); err == nil {
				// A photo counts as a PNG only if it decodes completely.
				if _, err := png.Decode(file); err == nil {
					kind = "PNG"
				}
				file.Close()
			}
			params[k] = fmt.Sprintf("<file %s %d bytes %s>", fh[0].Filename, fh[0].Size, kind)
		}
	} else {
		if err := r.ParseForm(); err != nil {
			writeJSON(w, 400, map[string]any{"ok": false, "error_code": 400, "description": "Bad Request"})
			return
		}
		for k, v := range r.PostForm {
			params[k] = v[0]
		}
	}
	if method == "getUpdates" {
		f.getUpdates(w, r, params)
		return
	}
	f.mu.Lock()
	status, result, apiErr := f.apply(method, params)
	c := call{Method: method, Params: params, At: time.Now(), Chat: atoi64(params["chat_id"])}
	if apiErr != nil {
		c.Err = apiErr["description"].(string)
	}
	f.calls = append(f.calls, c)
	f.mu.Unlock()
	if apiErr != nil {
		writeJSON(w, status, apiErr)
		return
	}
	writeJSON(w, 200, map[string]any{"ok": true, "result": result})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func atoi64(s string) int64 { n, _ := strconv.ParseInt(s, 10, 64); return n }

func apiError(code int, desc string, retryAfter int) map[string]any {
	e := map[string]any{"ok": false, "error_code": code, "description": desc}
	if retryAfter > 0 {
		e["parameters"] = map[string]any{"retry_after": retryAfter}
	}
	return e
}

// apply runs one method (f.mu held).
func (f *fakeAPI) apply(method string, p map[string]string) (int, any, map[string]any) {
	chat := atoi64(p["chat_id"])
	for _, r := range f.rules {
		if r.times > 0 && r.method == method && (r.chat == 0 || r.chat == chat) {
			r.times--
			return r.code, nil, apiError(r.code, r.desc, r.retryAfter)
		}
	}
	switch method {
	case "getMe":
		return 200, map[string]any{"id": f.bot.ID, "is_bot": true, "first_name": f.bot.First, "username": botUsername}, nil
	case "deleteWebhook", "setMyCommands":
		return 200, true, nil
	case "answerCallbackQuery":
		f.answers[p["callback_query_id"]] = tgbotapi.CallbackConfig{CallbackQueryID: p["callback_query_id"], Text: p["text"], ShowAlert: p["show_alert"] == "true"}
		return 200, true, nil
	case "getChatMember":
		status := f.members[[2]int64{chat, atoi64(p["user_id"])}]
		if status == "" {
			status = "member"
		}
		return 200, map[string]any{"user": map[string]any{"id": atoi64(p["user_id"]), "first_name": "x"}, "status": status}, nil
	case "deleteMessage":
		if m := f.chat(chat).find(atoi(p["message_id"])); m != nil {
			m.Deleted = true
			return 200, true, nil
		}
		return 400, nil, apiError(400, "Bad Request: message to delete not found", 0)
	case "sendMessage", "sendPhoto", "editMessageText":
	default:
		return 400, nil, apiError(400, "Bad Request: method not faked: "+method, 0)
	}
	if chat > 0 && !f.started[chat] {
		return 403, nil, apiError(403, "Forbidden: bot can't initiate conversation with a user", 0)
	}
	var kb *tgbotapi.InlineKeyboardMarkup
	if s := p["reply_markup"]; s != "" {
		kb = new(tgbotapi.InlineKeyboardMarkup)
		if err := json.Unmarshal([]byte(s), kb); err != nil {
			return 400, nil, apiError(400, "Bad Request: can't parse reply keyboard markup JSON object", 0)
		}
		for _, row := range kb.InlineKeyboard {
			if len(row) > 8 {
				return 400, nil, apiError(400, "Bad Request: too many buttons in a row", 0)
			}
			for _, b := range row {
				if b.CallbackData != nil && (len(*b.CallbackData) == 0 || len(*b.CallbackData) > 64) {
					return 400, nil, apiError(400, "Bad Request: BUTTON_DATA_INVALID", 0)
				}
			}
		}
		if len(kb.InlineKeyboard) == 0 {
			kb = nil
		}
	}
	var m *fmsg
	if method == "editMessageText" {
		m = f.chat(chat).find(atoi(p["message_id"]))
		if m == nil {
			return 400, nil, apiError(400, "Bad Request: message to edit not found", 0)
		}
		if m.Text == p["text"] && sameMarkup(m.Markup, kb) {
			return 400, nil, apiError(400, "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message", 0)
		}
	}
	if chat < 0 {
		now := time.Now()
		recent := slices.DeleteFunc(f.groupAt[chat], func(t time.Time) bool { return now.Sub(t) >= time.Minute })
		if len(recent) >= 20 {
			f.groupAt[chat] = recent
			f.floods++
			wait := int(recent[0].Add(time.Minute).Sub(now)/time.Second) + 1
			return 429, nil, apiError(429, fmt.Sprintf("Too Many Requests: retry after %d", wait), wait)
		}
		f.groupAt[chat] = append(recent, now)
		f.sentAt[chat] = append(f.sentAt[chat], now)
	}
	if chat < 0 && f.onGroup != nil {
		text := p["text"]
		if method == "sendPhoto" {
			text = p["caption"]
		}
		thread := atoi(p["message_thread_id"])
		if m != nil {
			thread = m.Thread
		}
		f.onGroup(chat, thread, text)
	}
	if method == "editMessageText" {
		m.Text, m.Markup = p["text"], kb
		m.Rev++
	} else {
		text := p["text"]
		if method == "sendPhoto" {
			text = p["caption"]
		}
		m = f.chat(chat).add(&fmsg{Text: text, Markup: kb, Photo: method == "sendPhoto", ReplyTo: atoi(p["reply_to_message_id"]), Thread: atoi(p["message_thread_id"])})
	}
	return 200, f.messageJSON(m), nil
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

func sameMarkup(a, b *tgbotapi.InlineKeyboardMarkup) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

func (f *fakeAPI) messageJSON(m *fmsg) map[string]any {
	j := map[string]any{"message_id": m.ID, "chat": chatJSON(m.Chat), "date": time.Now().Unix(), "text": m.Text}
	if m.From == 0 {
		j["from"] = map[string]any{"id": f.bot.ID, "is_bot": true, "first_name": f.bot.First, "username": botUsername}
	}
	if m.Thread != 0 {
		j["message_thread_id"], j["is_topic_message"] = m.Thread, true
	}
	return j
}

// getUpdates serves the queued updates at or after offset, waiting up to timeout for one; a
// call with an offset confirms (drops) the ones before it, as Telegram does.
func (f *fakeAPI) getUpdates(w http.ResponseWriter, r *http.Request, p map[string]string) {
	offset, timeout := atoi(p["offset"]), atoi(p["timeout"])
	deadline := time.NewTimer(time.Duration(timeout) * time.Second)
	defer deadline.Stop()
	f.mu.Lock()
	f.calls = append(f.calls, call{Method: "getUpdates", Params: p, At: time.Now()})
	for {
		f.updates = slices.DeleteFunc(f.updates, func(u fakeUpdate) bool { return offset > 0 && u.id < offset })
		if len(f.updates) > 0 {
			var out []map[string]any
			for _, u := range f.updates {
				out = append(out, u.body)
			}
			f.mu.Unlock()
			writeJSON(w, 200, map[string]any{"ok": true, "result": out})
			return
		}
		wake := f.wake
		f.mu.Unlock()
		select {
		case <-wake:
		case <-deadline.C:
			writeJSON(w, 200, map[string]any{"ok": true, "result": []any{}})
			return
		case <-r.Context().Done():
			return
		}
		f.mu.Lock()
	}
}

// push queues an update and wakes the long poll; it gives the update ID.
func (f *fakeAPI) push(body map[string]any) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextUpd++
	body["update_id"] = f.nextUpd
	f.updates = append(f.updates, fakeUpdate{id: f.nextUpd, body: body})
	close(f.wake)
	f.wake = make(chan struct{})
	return f.nextUpd
}

// command sends text from a user in a chat (thread: a forum topic), with the bot_command entity
// the library needs.
func (f *fakeAPI) command(from tgUser, chat int64, thread int, text string) *fmsg {
	f.mu.Lock()
	m := f.chat(chat).add(&fmsg{From: from.ID, Text: text, Thread: thread})
	j := f.messageJSON(m)
	f.mu.Unlock()
	j["from"] = from.json()
	word, _, _ := strings.Cut(text, " ")
	if strings.HasPrefix(text, "/") {
		j["entities"] = []map[string]any{{"type": "bot_command", "offset": 0, "length": len16(word)}}
	}
	if chat > 0 {
		j["chat"] = map[string]any{"id": chat, "type": "private", "first_name": from.First}
	}
	f.push(map[string]any{"message": j})
	return m
}

// start is the user pressing Start in the bot's private chat (with a deep-link payload).
func (f *fakeAPI) start(u tgUser, payload string) {
	f.mu.Lock()
	f.started[u.ID] = true
	f.mu.Unlock()
	text := "/start"
	if payload != "" {
		text += " " + payload
	}
	f.command(u, u.ID, 0, text)
}

// press is a user pressing a button with data on message m; it gives the callback query ID.
func (f *fakeAPI) press(from tgUser, m *fmsg, data string) string {
	f.mu.Lock()
	f.nextCB++
	id := "cb" + strconv.Itoa(f.nextCB)
	f.pressed = append(f.pressed, id)
	msg := f.messageJSON(m)
	f.mu.Unlock()
	f.push(map[string]any{"callback_query": map[string]any{"id": id, "from": from.json(), "message": msg,
		"chat_instance": "ci", "data": data}})
	return id
}

// answer gives the callback answer for a press, if any.
func (f *fakeAPI) answer(id string) (tgbotapi.CallbackConfig, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a, ok := f.answers[id]
	return a, ok
}

func (f *fakeAPI) failNext(method string, chat int64, times, code int, desc string, retryAfter int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = append(f.rules, &failRule{method: method, chat: chat, times: times, code: code, desc: desc, retryAfter: retryAfter})
}

func (f *fakeAPI) failNet(method string, times int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.netErr[method] += times
}

func (f *fakeAPI) setMember(chat, user int64, status string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.members[[2]int64{chat, user}] = status
}

func (f *fakeAPI) setStarted(user int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.started[user] = true
}

// Calls gives a copy of the recorded calls.
func (f *fakeAPI) Calls() []call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// messages gives copies of a chat's messages that the bot sent and nobody deleted.
func (f *fakeAPI) messages(chat int64) []fmsg {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []fmsg
	if c := f.chats[chat]; c != nil {
		for _, m := range c.msgs {
			if !m.Deleted && m.From == 0 {
				out = append(out, *m)
			}
		}
	}
	return out
}

// unanswered lists the presses that got no callback answer.
func (f *fakeAPI) unanswered() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, id := range f.pressed {
		if _, ok := f.answers[id]; !ok {
			out = append(out, id)
		}
	}
	return out
}

// maxPerMinute is the most messages that went to a group in any 60 seconds.
func (f *fakeAPI) maxPerMinute(chat int64) int {
	f.mu.Lock()
	ts := slices.Clone(f.sentAt[chat])
	f.mu.Unlock()
	best, j := 0, 0
	for i := range ts {
		for ts[i].Sub(ts[j]) >= time.Minute {
			j++
		}
		best = max(best, i-j+1)
	}
	return best
}

func (f *fakeAPI) floodCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.floods
}

// buttons gives a message's callback buttons as label → data.
func (m fmsg) buttons() [][2]string {
	var out [][2]string
	if m.Markup == nil {
		return nil
	}
	for _, row := range m.Markup.InlineKeyboard {
		for _, b := range row {
			if b.CallbackData != nil {
				out = append(out, [2]string{b.Text, *b.CallbackData})
			}
		}
	}
	return out
}

// urls gives a message's URL buttons.
func (m fmsg) urls() []string {
	var out []string
	if m.Markup == nil {
		return nil
	}
	for _, row := range m.Markup.InlineKeyboard {
		for _, b := range row {
			if b.URL != nil {
				out = append(out, *b.URL)
			}
		}
	}
	return out
}

package telegram

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// fakeAPI is a small Bot API server: enough of getMe, getUpdates (long poll), setWebhook (then it
// posts updates to the bot), sendMessage, sendPhoto, editMessageText, editMessageReplyMarkup,
// deleteMessage, answerCallbackQuery, setMyCommands, deleteWebhook and getChatMember for the real
// library to talk to. It records every call, keeps every chat's messages, and refuses what
// Telegram refuses:
//   - private messages to users who never pressed Start (Bot FAQ, "Why doesn't my bot see
//     messages from other bots?"/"How can I message a user?": a bot cannot initiate a chat);
//   - more than 20 messages a minute to a group, with a 429 (Bot FAQ, "My bot is hitting
//     limits");
//   - in a group with privacy mode on (every bot's default), it delivers only what Telegram
//     delivers (Bot API docs, features#privacy-mode): commands meant for this bot
//     (/cmd@bot), general commands if this bot was the last bot to send a message there, and
//     replies to the bot; button presses and service messages always;
//   - every call for a group that became a supergroup, with 400 and migrate_to_chat_id (Bot
//     API, ResponseParameters);
//   - sends by a bot that was removed (403), may not post (400 "not enough rights to send text
//     messages", or photos), or writes in a closed topic (400 TOPIC_CLOSED);
//   - deleting a message older than 48 hours (Bot API, deleteMessage);
//   - getUpdates while a webhook is set (409; Bot API, getUpdates: "will not work if an outgoing
//     webhook is set up"), and a webhook URL that is not HTTPS (Bot API, setWebhook).
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
	pressed []string         // callback query IDs pushed
	expired map[string]bool  // callback query IDs Telegram dropped unsent (see fakeUpdate.expires)
	pressAt map[string]int64 // callback query ID → the chat of the pressed message
	nextCB  int
	netErr  map[string]int // method → how many calls fail at the transport
	// onGroup sees every text the bot shows in a group (messages, captions, edits), with f.mu
	// held.
	onGroup func(chat int64, thread int, text string)

	privacy  bool             // the bot's privacy mode (BotFather /setprivacy): on unless a test turns it off
	botAdmin map[int64]bool   // groups where the bot is an admin: with privacy mode, they deliver everything
	lastBot  map[int64]int64  // group → the bot that sent the last message there
	ignored  []string         // group messages Telegram did not deliver to the bot
	migrated map[int64]int64  // old group → its supergroup
	left     map[int64]bool   // groups the bot was removed from
	rights   map[int64]rights // groups where the bot is restricted
	closedT  map[[2]int64]bool
	stalls   map[string]chan struct{} // method → a call waits until the channel is closed
	hook     *fakeHook
	// longPoll is closed to end the getUpdates waiting now (a newer one takes its place);
	// conflictAt is when the next 409 may be answered at once (see getUpdates).
	longPoll   chan struct{}
	conflictAt time.Time
	// hookClient reaches the bot's webhook server: a test sets it before the bot sets its
	// webhook. onHookAck, if set, sees each update the webhook acknowledged, as it does.
	hookClient *http.Client
	onHookAck  func(update int)
	// hookLose is how many of the webhook's next 2xx answers are lost on the way back (the
	// connection broke): Telegram takes them for failures.
	hookLose int
	// membersHidden are groups whose members Telegram tells only an admin bot (see getChatMember).
	membersHidden map[int64]bool
	deletedT      map[[2]int64]bool // deleted forum topics
}

// rights are what a restricted bot may still send (Bot API, ChatMemberRestricted).
type rights struct{ text, photos, documents bool }

// fakeHook is a webhook the bot set: the fake posts each update to it until one gets a 2xx.
type fakeHook struct {
	url, secret string
	client      *http.Client // reaches the bot's server (a test's in-memory listener)
	max         int          // max_connections: posts at once
	posts       []hookPost
	stop        chan struct{}
	done        chan struct{}
}

// hookPost is one post the fake made to the webhook, with the answer.
type hookPost struct {
	update int
	status int
	at     time.Time
}

type fakeUpdate struct {
	id   int
	body map[string]any
	// expires is when Telegram drops the update unsent (the reference server,
	// tdlib/telegram-bot-api Client.cpp: a callback query is queued for 150 seconds
	// (add_update(UpdateType::CallbackQuery, ..., 150, ...)); a message or a chat member
	// update until a day after its date (add_update_chat_member, add_new_message:
	// "message_date + 86400 - now"; "don't send messages received/edited more than 1 day
	// ago")).
	expires time.Time
	// queue is the webhook's queue of the update (Client.cpp's webhook_queue_id): a chat's
	// messages, one user's callback queries, a chat's my_chat_member updates. Each queue is
	// posted in order, one update at a time (WebhookActor.cpp, queue_updates_).
	queue string
	// The webhook's retries (see deliver): being posted now, when to post it again, the delay
	// before that, and how many posts failed.
	posting      bool
	wakeAt       time.Time
	delay, fails int
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
	ID     int
	Chat   int64
	From   int64 // 0: the bot
	Text   string
	Markup *tgbotapi.InlineKeyboardMarkup
	// Apps are the URLs of its web_app buttons, which the library's markup type does not know.
	Apps  []string
	Photo bool
	// Document is the file a sendDocument sent, as received.
	Document []byte
	ReplyTo  int
	Thread   int
	Deleted  bool
	Rev      int
	At       time.Time // when it was sent
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
		sentAt: map[int64][]time.Time{}, answers: map[string]tgbotapi.CallbackConfig{}, netErr: map[string]int{},
		privacy: true, botAdmin: map[int64]bool{}, lastBot: map[int64]int64{}, migrated: map[int64]int64{},
		left: map[int64]bool{}, rights: map[int64]rights{}, closedT: map[[2]int64]bool{}, stalls: map[string]chan struct{}{},
		pressAt: map[string]int64{}, expired: map[string]bool{}, membersHidden: map[int64]bool{},
		deletedT: map[[2]int64]bool{}}
}

const botUsername = "kmtestbot"

// otherBotID is another bot in the tests' groups.
const otherBotID int64 = 4444

// Supergroup IDs begin with -100; a basic group's are shorter (Bot API, Chat.id: "this number
// may have more than 32 significant bits").
func isSupergroup(id int64) bool { return strings.HasPrefix(strconv.FormatInt(id, 10), "-100") }

func chatJSON(id int64) map[string]any {
	switch {
	case id < 0 && isSupergroup(id):
		return map[string]any{"id": id, "type": "supergroup", "title": "Konter club"}
	case id < 0:
		return map[string]any{"id": id, "type": "group", "title": "Konter club"}
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
	m.ID, m.Chat, m.At = c.nextID, c.id, time.Now()
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
// run in a synctest bubble with fake time. Each transport is one process's network: cut, it
// fails every request, as a killed process makes none.
func (f *fakeAPI) Transport() *memTransport { return &memTransport{f: f} }

type memTransport struct {
	f   *fakeAPI
	cut atomic.Bool
	// mute fails the process's sends (new messages, edits, deletions) before they reach
	// Telegram, while it still takes updates and answers presses: a process about to die, whose
	// last commit is stored and whose messages of it are not out yet.
	mute atomic.Bool
	// held holds the process's requests of one method on their way out, before Telegram gets
	// them, until released (holdCalls): a process killed (cut) meanwhile never sends them, as
	// a process killed mid-send whose request had not reached Telegram.
	held struct {
		sync.Mutex
		method  string
		release chan struct{}
		waiting int
		chats   []int64 // the chats of the requests held now
	}
}

// holdCalls holds the process's requests of method before they reach Telegram until release.
func (m *memTransport) holdCalls(method string) (release func()) {
	ch := make(chan struct{})
	m.held.Lock()
	m.held.method, m.held.release = method, ch
	m.held.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			m.held.Lock()
			m.held.method, m.held.release = "", nil
			m.held.Unlock()
			close(ch)
		})
	}
}

// holding gives the chats of the process's requests held now (holdCalls).
func (m *memTransport) holding() []int64 {
	m.held.Lock()
	defer m.held.Unlock()
	return slices.Clone(m.held.chats)
}

// waitHeld holds a request of a held method until it is released, the request is given up or
// the process is cut; it reports whether the request goes on to Telegram.
func (m *memTransport) waitHeld(req *http.Request, method string) bool {
	m.held.Lock()
	ch := m.held.release
	if ch == nil || m.held.method != method {
		m.held.Unlock()
		return true
	}
	var chat int64
	if req.Body != nil { // the library's requests are forms (Bot API, "Making requests")
		body, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
		form, _ := url.ParseQuery(string(body))
		chat = atoi64(form.Get("chat_id"))
	}
	m.held.waiting++
	m.held.chats = append(m.held.chats, chat)
	m.held.Unlock()
	defer func() {
		m.held.Lock()
		m.held.waiting--
		if i := slices.Index(m.held.chats, chat); i >= 0 {
			m.held.chats = slices.Delete(m.held.chats, i, i+1)
		}
		m.held.Unlock()
	}()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ch:
			return !m.cut.Load()
		case <-req.Context().Done():
			return false
		case <-tick.C:
			if m.cut.Load() {
				return false
			}
		}
	}
}

// sends are the Bot API methods that change what a chat shows.
var sends = []string{"sendMessage", "sendPhoto", "sendDocument", "editMessageText", "editMessageReplyMarkup", "deleteMessage"}

var errCut = errors.New("connection refused: the process is gone")

func (m *memTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if m.cut.Load() {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, errCut
	}
	method := req.URL.Path[strings.LastIndex(req.URL.Path, "/")+1:]
	if !m.waitHeld(req, method) {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, errCut
	}
	if m.mute.Load() && slices.Contains(sends, method) {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, errCut
	}
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
	if m.cut.Load() { // the process died while Telegram answered
		return nil, errCut
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
			if file, err := fh[0].Open(); err == nil {
				data, _ := io.ReadAll(file)
				params[k+".bytes"] = string(data) // no Bot API parameter has a dot: the test's own
				file.Close()
			}
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
	f.mu.Lock()
	stall := f.stalls[method]
	f.mu.Unlock()
	if stall != nil {
		select {
		case <-stall:
		case <-r.Context().Done():
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

// The errors of groups, worded as Telegram words them (the reference server,
// tdlib/telegram-bot-api Client.cpp; seen by bots, e.g. qbittorrent_telegram_notification#12
// for TOPIC_CLOSED).
const (
	errUpgraded    = "Bad Request: group chat was upgraded to a supergroup chat"
	errKicked      = "Forbidden: bot was kicked from the group chat"
	errNoText      = "Bad Request: not enough rights to send text messages to the chat"
	errNoPhotos    = "Bad Request: not enough rights to send photos to the chat"
	errNoDocuments = "Bad Request: not enough rights to send documents to the chat"
	errTopic       = "Bad Request: TOPIC_CLOSED"
	errNoThread    = "Bad Request: message thread not found"
	errOld         = "Bad Request: message can't be deleted for everyone"
)

// apply runs one method (f.mu held).
func (f *fakeAPI) apply(method string, p map[string]string) (int, any, map[string]any) {
	chat := atoi64(p["chat_id"])
	for _, r := range f.rules {
		if r.times > 0 && r.method == method && (r.chat == 0 || r.chat == chat) {
			r.times--
			return r.code, nil, apiError(r.code, r.desc, r.retryAfter)
		}
	}
	if to, ok := f.migrated[chat]; ok && chat != 0 {
		e := apiError(400, errUpgraded, 0)
		e["parameters"] = map[string]any{"migrate_to_chat_id": to}
		return 400, nil, e
	}
	if f.left[chat] && chat != 0 {
		return 403, nil, apiError(403, errKicked, 0)
	}
	switch method {
	case "getMe":
		return 200, map[string]any{"id": f.bot.ID, "is_bot": true, "first_name": f.bot.First, "username": botUsername}, nil
	case "setMyCommands":
		return 200, true, nil
	case "deleteWebhook":
		f.stopHookLocked()
		return 200, true, nil
	case "setWebhook":
		return f.setWebhook(p)
	case "getWebhookInfo":
		// A WebhookInfo (Bot API, getWebhookInfo): the URL set (empty: none) and the updates
		// waiting for delivery.
		url := ""
		if f.hook != nil {
			url = f.hook.url
		}
		return 200, map[string]any{"url": url, "has_custom_certificate": false, "pending_update_count": len(f.updates)}, nil
	case "answerCallbackQuery":
		// A query is answered once (a second answer is refused as an unknown query: Client.cpp
		// turns QUERY_ID_INVALID into this text).
		if _, done := f.answers[p["callback_query_id"]]; done {
			return 400, nil, apiError(400, "Bad Request: query is too old and response timeout expired or query ID is invalid", 0)
		}
		f.answers[p["callback_query_id"]] = tgbotapi.CallbackConfig{CallbackQueryID: p["callback_query_id"], Text: p["text"], ShowAlert: p["show_alert"] == "true"}
		return 200, true, nil
	case "getChatMember":
		// "The method is only guaranteed to work for other users if the bot is an
		// administrator in the chat" (Bot API, getChatMember); "the bot needs administrator
		// rights in the supergroup to be able to call getChatMember for users, which wasn't
		// received recently by the bot" (levlam, tdlib/td#589, with this error).
		if user := atoi64(p["user_id"]); f.membersHidden[chat] && !f.botAdmin[chat] && user != f.bot.ID {
			return 400, nil, apiError(400, "Bad Request: USER_ID_INVALID", 0)
		}
		status := f.members[[2]int64{chat, atoi64(p["user_id"])}]
		if status == "" {
			status = "member"
		}
		return 200, map[string]any{"user": map[string]any{"id": atoi64(p["user_id"]), "first_name": "x"}, "status": status}, nil
	case "deleteMessage":
		if m := f.chat(chat).find(atoi(p["message_id"])); m != nil {
			if time.Since(m.At) >= 48*time.Hour {
				return 400, nil, apiError(400, errOld, 0)
			}
			m.Deleted = true
			return 200, true, nil
		}
		return 400, nil, apiError(400, "Bad Request: message to delete not found", 0)
	case "sendMessage", "sendPhoto", "sendDocument", "editMessageText", "editMessageReplyMarkup":
	default:
		return 400, nil, apiError(400, "Bad Request: method not faked: "+method, 0)
	}
	if chat > 0 && !f.started[chat] {
		return 403, nil, apiError(403, "Forbidden: bot can't initiate conversation with a user", 0)
	}
	var kb *tgbotapi.InlineKeyboardMarkup
	var apps []string
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
		var refused string
		if apps, refused = checkButtons(chat, s); refused != "" {
			return 400, nil, apiError(400, refused, 0)
		}
	}
	// Bot API, sendPhoto and sendDocument: the file is required; a caption has 0-1024
	// characters; bots send files of up to 50 MB.
	switch file := p[map[string]string{"sendPhoto": "photo", "sendDocument": "document"}[method]]; {
	case method != "sendPhoto" && method != "sendDocument":
	case !strings.HasPrefix(file, "<file "):
		return 400, nil, apiError(400, "Bad Request: there is no "+strings.TrimPrefix(method, "send")+" in the request", 0)
	case utf8.RuneCountInString(p["caption"]) > 1024:
		return 400, nil, apiError(400, "Bad Request: message caption is too long", 0)
	case len(p[map[string]string{"sendPhoto": "photo", "sendDocument": "document"}[method]+".bytes"]) > 50<<20:
		return 400, nil, apiError(400, "Bad Request: file is too big", 0)
	}
	// Bot API 7.0 replaced reply_to_message_id and disable_web_page_preview with these objects
	// (ReplyParameters, LinkPreviewOptions); the current docs list only them.
	var reply struct {
		MessageID int `json:"message_id"`
	}
	if s := p["reply_parameters"]; s != "" {
		if err := json.Unmarshal([]byte(s), &reply); err != nil || reply.MessageID == 0 {
			return 400, nil, apiError(400, "Bad Request: can't parse reply parameters JSON object", 0)
		}
	}
	if s := p["link_preview_options"]; s != "" {
		var lp struct {
			IsDisabled *bool `json:"is_disabled"`
		}
		if err := json.Unmarshal([]byte(s), &lp); err != nil {
			return 400, nil, apiError(400, "Bad Request: can't parse link preview options JSON object", 0)
		}
	}
	var m *fmsg
	edit := method == "editMessageText" || method == "editMessageReplyMarkup"
	if edit {
		m = f.chat(chat).find(atoi(p["message_id"]))
		if m == nil {
			return 400, nil, apiError(400, "Bad Request: message to edit not found", 0)
		}
		text := p["text"]
		if method == "editMessageReplyMarkup" {
			text = m.Text
		}
		if m.Text == text && sameMarkup(m.Markup, kb) && slices.Equal(m.Apps, apps) {
			return 400, nil, apiError(400, "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message", 0)
		}
	}
	thread := atoi(p["message_thread_id"])
	if m != nil {
		thread = m.Thread
	}
	if chat < 0 {
		// A restricted bot may send only what its rights allow (Bot API, ChatMemberRestricted);
		// a closed topic takes nothing from a bot that does not administer the group (400
		// TOPIC_CLOSED). The docs do not say whether edits need the same right: the fake takes
		// the stricter reading and refuses them too.
		r, restricted := f.rights[chat]
		switch {
		case f.deletedT[[2]int64{chat, int64(thread)}]:
			// The reference server looks the topic up first (Client.cpp, its forum topic
			// check: "Message thread not found").
			return 400, nil, apiError(400, errNoThread, 0)
		case f.closedT[[2]int64{chat, int64(thread)}]:
			return 400, nil, apiError(400, errTopic, 0)
		case restricted && !r.text:
			return 400, nil, apiError(400, errNoText, 0)
		case restricted && !r.photos && method == "sendPhoto":
			return 400, nil, apiError(400, errNoPhotos, 0)
		case restricted && !r.documents && method == "sendDocument":
			return 400, nil, apiError(400, errNoDocuments, 0)
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
	if chat < 0 && f.onGroup != nil && method != "editMessageReplyMarkup" {
		text := p["text"]
		if method == "sendPhoto" || method == "sendDocument" {
			text = p["caption"]
		}
		f.onGroup(chat, thread, text)
	}
	if chat < 0 && !edit {
		f.lastBot[chat] = f.bot.ID // privacy mode: this bot wrote last
	}
	switch method {
	case "editMessageText":
		m.Text, m.Markup, m.Apps = p["text"], kb, apps
		m.Rev++
	case "editMessageReplyMarkup":
		m.Markup, m.Apps = kb, apps
		m.Rev++
	default:
		text := p["text"]
		if method == "sendPhoto" || method == "sendDocument" {
			text = p["caption"]
		}
		m = f.chat(chat).add(&fmsg{Text: text, Markup: kb, Apps: apps, Photo: method == "sendPhoto", ReplyTo: reply.MessageID, Thread: atoi(p["message_thread_id"])})
		if method == "sendDocument" {
			m.Document = []byte(p["document.bytes"])
		}
	}
	return 200, f.messageJSON(m), nil
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

// checkButtons enforces what the Bot API says of a keyboard's buttons (Bot API,
// InlineKeyboardButton): "You must use exactly one of the optional fields"; url is an "HTTP or
// tg:// URL"; web_app is "Available only in private chats between a user and the bot", and its
// WebAppInfo.url is "An HTTPS URL of a Web App". It gives the web_app buttons' URLs, or the
// refusal (worded as the reference server words TDLib's errors: BUTTON_TYPE_INVALID).
func checkButtons(chat int64, markup string) (apps []string, refused string) {
	var kb struct {
		InlineKeyboard [][]map[string]json.RawMessage `json:"inline_keyboard"`
	}
	if err := json.Unmarshal([]byte(markup), &kb); err != nil {
		return nil, "Bad Request: can't parse reply keyboard markup JSON object"
	}
	for _, row := range kb.InlineKeyboard {
		for _, b := range row {
			actions := 0
			for k := range b {
				if k != "text" {
					actions++
				}
			}
			if actions != 1 {
				return nil, "Bad Request: can't parse inline keyboard button: exactly one of the optional fields must be used"
			}
			if raw, ok := b["url"]; ok {
				var u string
				json.Unmarshal(raw, &u)
				if !strings.HasPrefix(u, "https://") && !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "tg://") {
					return nil, "Bad Request: inline keyboard button URL '" + u + "' is invalid: Unsupported URL protocol"
				}
			}
			if raw, ok := b["web_app"]; ok {
				var w struct {
					URL string `json:"url"`
				}
				json.Unmarshal(raw, &w)
				switch {
				case chat < 0:
					return nil, "Bad Request: BUTTON_TYPE_INVALID"
				case !strings.HasPrefix(w.URL, "https://"):
					return nil, "Bad Request: inline keyboard button Web App URL '" + w.URL + "' is invalid: Only HTTPS links are allowed"
				}
				apps = append(apps, w.URL)
			}
		}
	}
	return apps, ""
}

func sameMarkup(a, b *tgbotapi.InlineKeyboardMarkup) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

func (f *fakeAPI) messageJSON(m *fmsg) map[string]any {
	j := map[string]any{"message_id": m.ID, "chat": chatJSON(m.Chat), "date": m.At.Unix(), "text": m.Text}
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
	if f.hook != nil {
		f.mu.Unlock()
		writeJSON(w, 409, apiError(409, "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first", 0))
		return
	}
	// One long poll at a time: a getUpdates about to wait ends the one waiting with 409 (the
	// reference server, Client.cpp do_get_updates calls abort_long_poll: "Conflict: terminated
	// by other getUpdates request; make sure that only one bot instance is running"); a poll that
	// answers at once ends none. fail_query_conflict answers at most one such 409 every 3
	// seconds at once, the others 3 seconds later.
	aborted := make(chan struct{})
	defer func() {
		f.mu.Lock()
		if f.longPoll == aborted {
			f.longPoll = nil
		}
		f.mu.Unlock()
	}()
	for {
		// Bot API, getUpdates: a call with an offset confirms the updates before it; limit
		// caps the batch; timeout 0 is a short poll that answers at once.
		f.updates = slices.DeleteFunc(f.updates, func(u fakeUpdate) bool { return offset > 0 && u.id < offset })
		f.dropExpiredLocked()
		if len(f.updates) > 0 || timeout == 0 {
			out := []map[string]any{}
			for _, u := range f.updates {
				if limit := atoi(p["limit"]); limit > 0 && len(out) >= limit {
					break
				}
				out = append(out, u.body)
			}
			f.mu.Unlock()
			writeJSON(w, 200, map[string]any{"ok": true, "result": out})
			return
		}
		if f.longPoll != aborted {
			if f.longPoll != nil {
				close(f.longPoll)
			}
			f.longPoll = aborted
		}
		wake := f.wake
		f.mu.Unlock()
		select {
		case <-wake:
		case <-deadline.C:
			writeJSON(w, 200, map[string]any{"ok": true, "result": []any{}})
			return
		case <-aborted:
			f.mu.Lock()
			now := time.Now()
			later := now.Before(f.conflictAt)
			if !later {
				f.conflictAt = now.Add(3 * time.Second)
			}
			f.mu.Unlock()
			if later {
				time.Sleep(3 * time.Second)
			}
			writeJSON(w, 409, apiError(409, "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running", 0))
			return
		case <-r.Context().Done():
			return
		}
		f.mu.Lock()
	}
}

// push queues an update and wakes the long poll (or the webhook's poster); it gives the update
// ID.
func (f *fakeAPI) push(body map[string]any) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextUpd++
	body["update_id"] = f.nextUpd
	u := fakeUpdate{id: f.nextUpd, body: body}
	switch {
	case body["callback_query"] != nil:
		cq := body["callback_query"].(map[string]any)
		u.expires = time.Now().Add(150 * time.Second)
		u.queue = fmt.Sprint("callback ", cq["from"].(map[string]any)["id"])
	case body["message"] != nil:
		m := body["message"].(map[string]any)
		u.expires = time.Unix(m["date"].(int64), 0).Add(24 * time.Hour)
		u.queue = fmt.Sprint("message ", m["chat"].(map[string]any)["id"])
	case body["my_chat_member"] != nil:
		m := body["my_chat_member"].(map[string]any)
		u.expires = time.Unix(m["date"].(int64), 0).Add(24 * time.Hour)
		u.queue = fmt.Sprint("member ", m["chat"].(map[string]any)["id"])
	default:
		panic(fmt.Sprintf("the fake does not know this update: %v", body))
	}
	f.updates = append(f.updates, u)
	close(f.wake)
	f.wake = make(chan struct{})
	return f.nextUpd
}

// command sends text from a user in a chat (thread: a forum topic), with the bot_command entity
// the library needs. In a group with privacy mode on, Telegram keeps from the bot what is not
// meant for it: the message is in the chat, but no update comes.
func (f *fakeAPI) command(from tgUser, chat int64, thread int, text string) *fmsg {
	return f.post(from.json(), nil, chat, thread, text)
}

// post is a message by from (a user's JSON) on behalf of senderChat (nil: themselves).
func (f *fakeAPI) post(from, senderChat map[string]any, chat int64, thread int, text string) *fmsg {
	f.mu.Lock()
	m := f.chat(chat).add(&fmsg{From: from["id"].(int64), Text: text, Thread: thread})
	j := f.messageJSON(m)
	delivered := f.deliversLocked(chat, text)
	if !delivered {
		f.ignored = append(f.ignored, text)
	}
	f.mu.Unlock()
	j["from"] = from
	if senderChat != nil {
		j["sender_chat"] = senderChat
	}
	word, _, _ := strings.Cut(text, " ")
	if strings.HasPrefix(text, "/") {
		j["entities"] = []map[string]any{{"type": "bot_command", "offset": 0, "length": len16(word)}}
	}
	if chat > 0 {
		j["chat"] = map[string]any{"id": chat, "type": "private", "first_name": from["first_name"]}
	}
	if delivered {
		f.push(map[string]any{"message": j})
	}
	return m
}

// deliversLocked tells whether Telegram gives a group's text message to the bot (f.mu held).
// Privacy mode (Bot API docs, features#privacy-mode): the bot gets commands explicitly meant for
// it (/command@this_bot), general commands only if it was the last bot to send a message to the
// group, and replies to its messages; an admin bot gets everything. Replies are not modelled:
// the tests' messages reply to nothing.
func (f *fakeAPI) deliversLocked(chat int64, text string) bool {
	if chat > 0 || !f.privacy || f.botAdmin[chat] {
		return true
	}
	word, _, _ := strings.Cut(text, " ")
	cmd, ok := strings.CutPrefix(word, "/")
	if !ok {
		return false
	}
	if _, at, addressed := strings.Cut(cmd, "@"); addressed {
		return strings.EqualFold(at, botUsername)
	}
	return f.lastBot[chat] == f.bot.ID
}

// otherBotSpeaks is another bot posting in a group: from now on a general command there goes to
// that bot, not to ours (privacy mode).
func (f *fakeAPI) otherBotSpeaks(chat int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.chat(chat).add(&fmsg{From: otherBotID, Text: "I am another bot."})
	f.lastBot[chat] = otherBotID
}

// ignoredTexts gives the group messages Telegram kept from the bot.
func (f *fakeAPI) ignoredTexts() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.ignored)
}

// anonymousAdmin is a group admin posting as the group (Bot API, Message.sender_chat: "the
// supergroup itself for messages from anonymous group administrators"; from is
// GroupAnonymousBot, id 1087968824).
func (f *fakeAPI) anonymousAdmin(chat int64, text string) *fmsg {
	from := map[string]any{"id": anonymousAdmin, "is_bot": true, "first_name": "Group", "username": "GroupAnonymousBot"}
	return f.post(from, chatJSON(chat), chat, 0, text)
}

// channelPost is a post of the group's linked channel, forwarded into it automatically (Bot API,
// Message.is_automatic_forward; from is user 777000, "Telegram", not marked as a bot).
func (f *fakeAPI) channelPost(chat int64, text string) *fmsg {
	from := map[string]any{"id": telegramService, "is_bot": false, "first_name": "Telegram"}
	channel := map[string]any{"id": int64(-1009876543210), "type": "channel", "title": "Konter news"}
	return f.post(from, channel, chat, 0, text)
}

// memberUpdate pushes my_chat_member: the bot's status in a group changed from old to now (Bot
// API, Update.my_chat_member: "The bot's chat member status was updated in a chat").
func (f *fakeAPI) memberUpdate(chat int64, by tgUser, old, now map[string]any) {
	bot := map[string]any{"id": f.bot.ID, "is_bot": true, "first_name": f.bot.First, "username": botUsername}
	old["user"], now["user"] = bot, bot
	f.push(map[string]any{"my_chat_member": map[string]any{"chat": chatJSON(chat), "from": by.json(),
		"date": time.Now().Unix(), "old_chat_member": old, "new_chat_member": now}})
}

func status(s string) map[string]any { return map[string]any{"status": s} }

// addBot is a user adding the bot to a group.
func (f *fakeAPI) addBot(chat int64, by tgUser) {
	f.mu.Lock()
	delete(f.left, chat)
	delete(f.rights, chat)
	f.mu.Unlock()
	f.memberUpdate(chat, by, status("left"), status("member"))
}

// removeBot is a user removing (kicked: banning) the bot from a group.
func (f *fakeAPI) removeBot(chat int64, by tgUser, kicked bool) {
	f.mu.Lock()
	f.left[chat] = true
	f.mu.Unlock()
	now := "left"
	if kicked {
		now = "kicked"
	}
	f.memberUpdate(chat, by, status("member"), status(now))
}

// restrict takes rights from the bot in a group (tell: with the my_chat_member update).
func (f *fakeAPI) restrict(chat int64, by tgUser, r rights, tell bool) {
	f.mu.Lock()
	f.rights[chat] = r
	f.mu.Unlock()
	if tell {
		f.memberUpdate(chat, by, status("member"), map[string]any{"status": "restricted", "is_member": true,
			"can_send_messages": r.text, "can_send_photos": r.photos, "can_send_documents": r.documents})
	}
}

// unrestrict gives the bot its rights back, with the my_chat_member update.
func (f *fakeAPI) unrestrict(chat int64, by tgUser) {
	f.mu.Lock()
	delete(f.rights, chat)
	f.mu.Unlock()
	f.memberUpdate(chat, by, map[string]any{"status": "restricted", "is_member": true}, status("member"))
}

// closeTopic closes (or reopens) a forum topic; reopening posts its service message there,
// which every bot gets (Bot FAQ: all bots receive service messages; Bot API,
// Message.forum_topic_reopened).
func (f *fakeAPI) closeTopic(chat int64, thread int, closed bool, by tgUser) {
	f.mu.Lock()
	f.closedT[[2]int64{chat, int64(thread)}] = closed
	var j map[string]any
	if !closed {
		m := f.chat(chat).add(&fmsg{From: by.ID, Thread: thread})
		j = f.messageJSON(m)
	}
	f.mu.Unlock()
	if j != nil {
		j["from"] = by.json()
		delete(j, "text")
		j["forum_topic_reopened"] = map[string]any{}
		f.push(map[string]any{"message": j})
	}
}

// deleteTopic deletes a forum topic "along with all its messages" (Bot API, deleteForumTopic);
// no service message tells the bot.
func (f *fakeAPI) deleteTopic(chat int64, thread int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deletedT[[2]int64{chat, int64(thread)}] = true
	for _, m := range f.chat(chat).msgs {
		if m.Thread == thread {
			m.Deleted = true
		}
	}
}

// upgrade makes a basic group a supergroup: the old ID is dead from now on (Bot API,
// ResponseParameters.migrate_to_chat_id). tell: the two service messages come as updates, as
// they do (Bot API, Message.migrate_to_chat_id in the old group, migrate_from_chat_id in the
// new one); else the bot must learn it from a refused send.
func (f *fakeAPI) upgrade(old, to int64, by tgUser, tell bool) {
	f.mu.Lock()
	f.migrated[old] = to
	f.chat(to)
	f.lastBot[to] = f.lastBot[old]
	var jOld, jNew map[string]any
	if tell {
		jOld = f.messageJSON(f.chat(old).add(&fmsg{From: by.ID}))
		jNew = f.messageJSON(f.chat(to).add(&fmsg{From: by.ID}))
	}
	f.mu.Unlock()
	if !tell {
		return
	}
	for _, j := range []map[string]any{jOld, jNew} {
		j["from"] = by.json()
		delete(j, "text")
	}
	jOld["migrate_to_chat_id"] = to
	jNew["migrate_from_chat_id"] = old
	f.push(map[string]any{"message": jOld})
	f.push(map[string]any{"message": jNew})
}

// stallCalls makes calls of method wait until the returned function is called.
func (f *fakeAPI) stallCalls(method string) (release func()) {
	ch := make(chan struct{})
	f.mu.Lock()
	f.stalls[method] = ch
	f.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			f.mu.Lock()
			delete(f.stalls, method)
			f.mu.Unlock()
			close(ch)
		})
	}
}

// dropExpiredLocked drops the updates whose time ran out before the bot took them (f.mu held):
// Telegram sends them to nobody (see fakeUpdate.expires).
func (f *fakeAPI) dropExpiredLocked() {
	now := time.Now()
	f.updates = slices.DeleteFunc(f.updates, func(u fakeUpdate) bool {
		if now.Before(u.expires) {
			return false
		}
		if cq, ok := u.body["callback_query"].(map[string]any); ok {
			f.expired[cq["id"].(string)] = true
		}
		return true
	})
}

// pending gives the IDs of the updates Telegram still holds (not confirmed, or not acknowledged
// by the webhook).
func (f *fakeAPI) pending() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ids []int
	for _, u := range f.updates {
		ids = append(ids, u.id)
	}
	return ids
}

// setWebhook takes the bot's webhook (f.mu held): HTTPS only, an allowed secret token;
// max_connections is clamped to 1-100, 40 when not given, and drop_pending_updates drops what
// waits (the reference server, Client.cpp get_webhook_max_connections and do_set_webhook:
// get_integer_arg(query, "max_connections", 40, 1, 100), clear_tqueue()).
func (f *fakeAPI) setWebhook(p map[string]string) (int, any, map[string]any) {
	u := p["url"]
	if p["drop_pending_updates"] == "true" {
		f.updates = nil
	}
	if u == "" {
		f.stopHookLocked()
		return 200, true, nil
	}
	if !strings.HasPrefix(u, "https://") {
		return 400, nil, apiError(400, "Bad Request: bad webhook: An HTTPS URL must be provided for webhook", 0)
	}
	secret := p["secret_token"]
	for _, c := range secret {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') || len(secret) > 256 {
			return 400, nil, apiError(400, "Bad Request: secret token contains unallowed characters", 0)
		}
	}
	if f.hookClient == nil {
		return 400, nil, apiError(400, "Bad Request: bad webhook: Failed to resolve host: the test gave no webhook client", 0)
	}
	maxConn := 40
	if s, ok := p["max_connections"]; ok {
		maxConn = min(max(atoi(s), 1), 100)
	}
	f.stopHookLocked()
	h := &fakeHook{url: u, secret: secret, client: f.hookClient, max: maxConn, stop: make(chan struct{}), done: make(chan struct{})}
	f.hook = h
	go f.deliver(h)
	return 200, true, nil
}

// deliver posts the held updates to the webhook as the reference server's WebhookActor does
// (tdlib/telegram-bot-api WebhookActor.cpp): each queue (see fakeUpdate.queue) in order, one
// update of a queue at a time, up to max_connections posts at once. An update leaves only with a
// 2xx answer (Bot API, setWebhook: "In case of an unsuccessful request ... we will repeat the
// request"); otherwise on_update_error posts it again after the answer's Retry-After (at most
// 3600 s) or, without one, at once the first time and then after 2, 4, 8 ... seconds, doubling
// up to WEBHOOK_MAX_RESEND_TIMEOUT (60 s; the server picks 60-120 at random, the fake 60), and
// drops it once the next try would come after the update expires.
func (f *fakeAPI) deliver(h *fakeHook) {
	defer close(h.done)
	var posting sync.WaitGroup
	defer posting.Wait()
	finished := make(chan struct{}, 100)
	for {
		f.mu.Lock()
		f.dropExpiredLocked()
		now := time.Now()
		wake := f.wake
		busy, heads := 0, map[string]bool{}
		var ready []*fakeUpdate
		next := time.Time{}
		for i := range f.updates {
			u := &f.updates[i]
			if heads[u.queue] {
				continue // behind the queue's first
			}
			heads[u.queue] = true
			switch {
			case u.posting:
				busy++
			case u.wakeAt.After(now):
				if next.IsZero() || u.wakeAt.Before(next) {
					next = u.wakeAt
				}
			default:
				ready = append(ready, u)
			}
		}
		var start []fakeUpdate
		for _, u := range ready {
			if busy+len(start) >= h.max {
				break
			}
			u.posting = true
			start = append(start, *u)
		}
		f.mu.Unlock()
		for _, u := range start {
			posting.Add(1)
			go func() {
				defer posting.Done()
				f.postHook(h, u)
				finished <- struct{}{}
			}()
		}
		var timer <-chan time.Time
		if !next.IsZero() {
			timer = time.After(next.Sub(now))
		}
		select {
		case <-wake:
		case <-finished:
		case <-timer:
		case <-h.stop:
			return
		}
	}
}

// postHook posts one update to the webhook and handles the answer as WebhookActor does (see
// deliver).
func (f *fakeAPI) postHook(h *fakeHook, u fakeUpdate) {
	body, _ := json.Marshal(u.body)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-h.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if h.secret != "" {
		req.Header.Set("X-Telegram-Bot-Api-Secret-Token", h.secret)
	}
	status, retryAfter := 0, 0
	if resp, err := h.client.Do(req); err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		status = resp.StatusCode
		retryAfter = min(max(atoi(resp.Header.Get("Retry-After")), 0), 3600)
	}
	f.mu.Lock()
	now := time.Now()
	if status/100 == 2 && f.hookLose > 0 {
		f.hookLose--
		status = 0
	}
	h.posts = append(h.posts, hookPost{update: u.id, status: status, at: now})
	i := slices.IndexFunc(f.updates, func(q fakeUpdate) bool { return q.id == u.id })
	ok := status/100 == 2
	switch {
	case i < 0: // dropped meanwhile (drop_pending_updates)
	case ok:
		f.updates = slices.Delete(f.updates, i, i+1)
	default:
		q := &f.updates[i]
		q.posting = false
		delay, wait := max(q.delay, 1), retryAfter
		if retryAfter == 0 && q.fails > 0 {
			delay = min(60, delay*2)
			wait = delay
		}
		if now.Add(time.Duration(wait) * time.Second).After(q.expires) {
			q.expires = now // "Drop update": gone with the next look
			f.dropExpiredLocked()
			break
		}
		q.delay, q.wakeAt, q.fails = delay, now.Add(time.Duration(wait)*time.Second), q.fails+1
	}
	ack := f.onHookAck
	f.mu.Unlock()
	if ack != nil && ok {
		ack(u.id)
	}
}

// stopHookLocked ends the webhook's poster (f.mu held; it waits for the poster, which takes f.mu,
// only after releasing it).
func (f *fakeAPI) stopHookLocked() {
	h := f.hook
	if h == nil {
		return
	}
	f.hook = nil
	close(h.stop)
	f.mu.Unlock()
	<-h.done
	f.mu.Lock()
}

// stopWebhook ends the webhook's poster (at a test's end).
func (f *fakeAPI) stopWebhook() {
	f.mu.Lock()
	f.stopHookLocked()
	f.mu.Unlock()
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
	return f.pressOn(from, m, data, f.messageJSON)
}

// pressOn is a press whose update shows the message as msg makes it (with f.mu held).
func (f *fakeAPI) pressOn(from tgUser, m *fmsg, data string, msg func(*fmsg) map[string]any) string {
	f.mu.Lock()
	f.nextCB++
	id := "cb" + strconv.Itoa(f.nextCB)
	f.pressed = append(f.pressed, id)
	f.pressAt[id] = m.Chat
	j := msg(m)
	f.mu.Unlock()
	// A press on a message is delivered whatever the privacy mode (Bot API docs,
	// features#privacy-mode: callback queries always reach the bot).
	f.push(map[string]any{"callback_query": map[string]any{"id": id, "from": from.json(), "message": j,
		"chat_instance": "ci", "data": data}})
	return id
}

// pressInaccessible is a press on a message the bot can no longer access: the update carries an
// InaccessibleMessage, with the chat and the message ID and date 0, nothing else — no topic
// (Bot API, CallbackQuery.message: MaybeInaccessibleMessage; InaccessibleMessage: "a message
// that was deleted or is otherwise inaccessible to the bot", date "Always 0").
func (f *fakeAPI) pressInaccessible(from tgUser, m *fmsg, data string) string {
	return f.pressOn(from, m, data, func(m *fmsg) map[string]any {
		return map[string]any{"chat": chatJSON(m.Chat), "message_id": m.ID, "date": 0}
	})
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
		if _, ok := f.answers[id]; !ok && !f.expired[id] { // an expired press never reached the bot
			out = append(out, id)
		}
	}
	return out
}

// maxPerMinute is the most messages that went to a group in any 60 seconds; with more chats
// (a group and the supergroup it became), to them together.
func (f *fakeAPI) maxPerMinute(chats ...int64) int {
	f.mu.Lock()
	var ts []time.Time
	for _, c := range chats {
		ts = append(ts, f.sentAt[c]...)
	}
	f.mu.Unlock()
	slices.SortFunc(ts, time.Time.Compare)
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

// groupAnswers gives the answers to presses on group messages.
func (f *fakeAPI) groupAnswers() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for id, chat := range f.pressAt {
		if a, ok := f.answers[id]; ok && chat < 0 {
			out = append(out, a.Text)
		}
	}
	return out
}

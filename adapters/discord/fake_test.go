package discord

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// fakeDiscord is a small Discord: REST on an httptest server and a websocket gateway, enough
// for a real discordgo session. It records every message as the users would see it and checks
// the rules a real Discord enforces (one answer per interaction, within 3 s; component limits).

type fakeUser struct {
	ID, Name, Locale string
	Perms            int64
}

type fakeButton struct {
	Label    string `json:"label"`
	Style    int    `json:"style"`
	CustomID string `json:"custom_id"`
	Type     int    `json:"type"`
}

type fakeRow struct {
	Type       int          `json:"type"`
	Components []fakeButton `json:"components"`
}

type fakeVersion struct {
	Content string
	Rows    []fakeRow
}

type fakeMessage struct {
	ID, ChannelID string
	Content       string
	Rows          []fakeRow
	Flags         int
	Files         int
	Mentions      []string // users it may ping
	Edits         int
	History       []fakeVersion // every content it showed, oldest first
	ForUser       string        // an ephemeral message: the only user who sees it
	Interaction   string        // the interaction whose response it is
}

func (m *fakeMessage) copy() fakeMessage {
	c := *m
	c.Rows = slices.Clone(m.Rows)
	c.History = slices.Clone(m.History)
	return c
}

// buttons lists the message's buttons row by row.
func (m fakeMessage) buttons() []fakeButton {
	var out []fakeButton
	for _, r := range m.Rows {
		out = append(out, r.Components...)
	}
	return out
}

type fakeChoice struct {
	Name  string `json:"name"`
	Value any    `json:"value"`
}

type fakeResponse struct {
	Type    int
	Content string
	Rows    []fakeRow
	Flags   int
	Files   int
	Choices []fakeChoice
}

type fakeInteraction struct {
	ID, Token  string
	User       fakeUser
	Channel    string
	Message    string // the message a button sat on
	Dispatched time.Time
	Responded  time.Time
	Resp       *fakeResponse
	Original   string   // ID of the message that is its original response
	Followups  []string // IDs of follow-up messages
}

type fakeLimit struct {
	count int           // how many 429s are still to give
	after time.Duration // retry_after
	hits  []time.Time
}

type wireMessage struct {
	Content         *string    `json:"content"`
	Components      *[]fakeRow `json:"components"`
	Flags           int        `json:"flags"`
	AllowedMentions *struct {
		Parse []string `json:"parse"`
		Users []string `json:"users"`
	} `json:"allowed_mentions"`
	Choices []fakeChoice `json:"choices"`
}

type fakeConn struct {
	mu sync.Mutex // gorilla allows one writer at a time
	c  *websocket.Conn
}

func (c *fakeConn) send(v any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.c.WriteJSON(v)
}

type fakeDiscord struct {
	t                            testing.TB
	Token, AppID, BotID, GuildID string
	srv                          *httptest.Server
	mu                           sync.Mutex
	changed                      chan struct{}
	ids                          int64
	msgs                         map[string]*fakeMessage
	order                        map[string][]string // channel → its messages, oldest first
	ephemeral                    map[string][]string // user → ephemeral messages, oldest first
	dms                          map[string]string   // user → DM channel
	dmUser                       map[string]string   // DM channel → user
	blocked                      map[string]bool     // users refusing DMs
	forbidden                    map[string]bool     // channels the bot may not post in
	limits                       map[string]*fakeLimit
	inter                        map[string]*fakeInteraction
	byToken                      map[string]*fakeInteraction
	commands                     []byte
	commandsPath                 string
	calls                        map[string]int
	conn                         *fakeConn
	seq                          int
	identifies                   []map[string]any
	latencies                    []time.Duration
	dmAttempts                   map[string]int // user → message POSTs to their DM channel
	updates                      int            // interactions answered by updating their message
	// onPublic sees every text the bot shows in a channel to everyone (not ephemeral, not a DM),
	// with f.mu held.
	onPublic func(channel, content string)
}

var apiPath = regexp.MustCompile(`^/api/v[0-9]+/(.*)$`)

func newFakeDiscord(t testing.TB) *fakeDiscord {
	f := &fakeDiscord{t: t, Token: "MTAxNTA0.fake-bot-token.s3cr3t-ZZZZZZZZZZZZZZZZZZZZ", AppID: "900000000000000001",
		BotID: "900000000000000001", GuildID: "800000000000000001", changed: make(chan struct{}), ids: 1000,
		msgs: map[string]*fakeMessage{}, order: map[string][]string{}, ephemeral: map[string][]string{},
		dms: map[string]string{}, dmUser: map[string]string{}, blocked: map[string]bool{}, forbidden: map[string]bool{}, limits: map[string]*fakeLimit{},
		inter: map[string]*fakeInteraction{}, byToken: map[string]*fakeInteraction{}, calls: map[string]int{},
		dmAttempts: map[string]int{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serveHTTP))
	t.Cleanup(f.srv.Close)
	return f
}

// notify wakes whoever waits for a change (f.mu held).
func (f *fakeDiscord) notify() {
	close(f.changed)
	f.changed = make(chan struct{})
}

// waitFor waits until cond (called with f.mu held) is true.
func (f *fakeDiscord) waitFor(what string, cond func() bool) {
	f.t.Helper()
	f.waitForOr(what, cond, nil)
}

// waitForOr is waitFor that describes the state (dump, called with f.mu held) if it times out.
func (f *fakeDiscord) waitForOr(what string, cond func() bool, dump func() string) {
	f.t.Helper()
	deadline := time.After(15 * time.Second)
	for {
		f.mu.Lock()
		ok, ch := cond(), f.changed
		f.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			state := ""
			if dump != nil {
				f.mu.Lock()
				state = dump()
				f.mu.Unlock()
			}
			f.t.Fatalf("fake discord: timed out waiting for %s%s", what, state)
		}
	}
}

func (f *fakeDiscord) nextID() string {
	f.ids++
	return strconv.FormatInt(f.ids, 10)
}

func (f *fakeDiscord) fail(format string, args ...any) {
	f.t.Errorf("fake discord: "+format, args...)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	h.Set("X-RateLimit-Limit", "50")
	h.Set("X-RateLimit-Remaining", "49")
	// X-RateLimit-Reset without Reset-After makes discordgo compute the reset from Date.
	h.Set("X-RateLimit-Reset", strconv.FormatFloat(float64(time.Now().Add(time.Second).UnixMilli())/1000, 'f', 3, 64))
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func discordError(w http.ResponseWriter, status, code int, msg string) {
	writeJSON(w, status, map[string]any{"message": msg, "code": code})
}

// route names a request by its shape, with IDs and tokens replaced.
func route(method string, parts []string) string {
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = p
		if i > 0 && (parts[i-1] == "channels" || parts[i-1] == "messages" || parts[i-1] == "interactions" ||
			parts[i-1] == "webhooks" || parts[i-1] == "applications" || parts[i-1] == "guilds") && p != "@original" {
			out[i] = "{id}"
		}
		if i > 1 && (parts[i-2] == "interactions" || parts[i-2] == "webhooks") {
			out[i] = "{token}"
		}
	}
	return method + " " + strings.Join(out, "/")
}

func (f *fakeDiscord) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/ws") {
		f.serveWS(w, r)
		return
	}
	m := apiPath.FindStringSubmatch(r.URL.Path)
	if m == nil {
		f.fail("request outside the API: %s %s", r.Method, r.URL.Path)
		discordError(w, 404, 0, "404: Not Found")
		return
	}
	if got := r.Header.Get("Authorization"); got != "Bot "+f.Token {
		f.fail("request without the bot token: %s %s", r.Method, r.URL.Path)
		discordError(w, 401, 0, "401: Unauthorized")
		return
	}
	parts := strings.Split(m[1], "/")
	rt := route(r.Method, parts)
	body, files := readBody(f.t, r)
	f.mu.Lock()
	f.calls[rt]++
	f.mu.Unlock()
	switch {
	case r.Method == "GET" && (m[1] == "gateway" || m[1] == "gateway/bot"):
		writeJSON(w, 200, map[string]any{"url": "ws://" + r.Host + "/ws", "shards": 1})
	case r.Method == "GET" && m[1] == "users/@me":
		writeJSON(w, 200, map[string]any{"id": f.BotID, "username": "kontermatt", "bot": true})
	case r.Method == "PUT" && len(parts) >= 3 && parts[0] == "applications" && parts[len(parts)-1] == "commands":
		f.mu.Lock()
		f.commands, f.commandsPath = body, m[1]
		f.notify()
		f.mu.Unlock()
		var cmds []map[string]any
		json.Unmarshal(body, &cmds)
		for _, c := range cmds {
			c["id"], c["application_id"] = "700000000000000001", f.AppID
		}
		writeJSON(w, 200, cmds)
	case r.Method == "POST" && len(parts) == 4 && parts[0] == "interactions" && parts[3] == "callback":
		f.callback(w, parts[1], parts[2], body, files)
	case r.Method == "PATCH" && len(parts) == 5 && parts[0] == "webhooks" && parts[3] == "messages":
		f.editWebhookMessage(w, parts[1], parts[2], parts[4], body, files)
	case r.Method == "POST" && len(parts) == 3 && parts[0] == "webhooks":
		f.followup(w, parts[1], parts[2], body, files)
	case r.Method == "POST" && m[1] == "users/@me/channels":
		var req struct {
			Recipient string `json:"recipient_id"`
		}
		json.Unmarshal(body, &req)
		f.mu.Lock()
		ch, ok := f.dms[req.Recipient]
		if !ok {
			ch = "dm" + f.nextID()
			f.dms[req.Recipient], f.dmUser[ch] = ch, req.Recipient
		}
		f.mu.Unlock()
		writeJSON(w, 200, map[string]any{"id": ch, "type": 1, "recipients": []any{map[string]any{"id": req.Recipient}}})
	case r.Method == "POST" && len(parts) == 3 && parts[0] == "channels" && parts[2] == "messages":
		f.createMessage(w, parts[1], body, files)
	case r.Method == "PATCH" && len(parts) == 4 && parts[0] == "channels" && parts[2] == "messages":
		f.editMessage(w, parts[1], parts[3], body, files)
	default:
		f.fail("unexpected request %s %s", r.Method, r.URL.Path)
		discordError(w, 404, 0, "404: Not Found")
	}
}

// readBody reads a JSON body, or the payload_json of a multipart body and counts its files.
func readBody(t testing.TB, r *http.Request) ([]byte, int) {
	mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "multipart/form-data" {
		b, _ := io.ReadAll(r.Body)
		return b, 0
	}
	mr := multipart.NewReader(r.Body, params["boundary"])
	var payload []byte
	files := 0
	for {
		p, err := mr.NextPart()
		if err != nil {
			break
		}
		b, _ := io.ReadAll(p)
		if p.FormName() == "payload_json" {
			payload = b
		} else if _, err := png.Decode(bytes.NewReader(b)); err == nil {
			files++
		} else {
			t.Errorf("fake discord: an attached file is not a valid PNG: %v", err)
		}
	}
	return payload, files
}

// check enforces Discord's limits on a message body.
func (f *fakeDiscord) check(where string, wm wireMessage) {
	if wm.Content != nil && len([]rune(*wm.Content)) > 2000 {
		f.fail("%s: content of %d characters", where, len([]rune(*wm.Content)))
	}
	if wm.Components == nil {
		return
	}
	rows := *wm.Components
	if len(rows) > 5 {
		f.fail("%s: %d action rows", where, len(rows))
	}
	seen := map[string]bool{}
	for _, row := range rows {
		if row.Type != 1 || len(row.Components) == 0 || len(row.Components) > 5 {
			f.fail("%s: bad action row (type %d, %d buttons)", where, row.Type, len(row.Components))
		}
		for _, b := range row.Components {
			if b.Type != 2 || b.CustomID == "" || len(b.CustomID) > 100 || len([]rune(b.Label)) > 80 || b.Style < 1 || b.Style > 4 {
				f.fail("%s: bad button %+v", where, b)
			}
			if seen[b.CustomID] {
				f.fail("%s: custom_id %q twice in one message", where, b.CustomID)
			}
			seen[b.CustomID] = true
		}
	}
}

func (f *fakeDiscord) apply(m *fakeMessage, wm wireMessage, files int) {
	if wm.Content != nil {
		m.Content = *wm.Content
	}
	if wm.Components != nil {
		m.Rows = slices.Clone(*wm.Components)
	}
	if files > 0 {
		m.Files = files
	}
	if wm.AllowedMentions != nil {
		m.Mentions = wm.AllowedMentions.Users
	}
	m.History = append(m.History, fakeVersion{m.Content, slices.Clone(m.Rows)})
	if _, dm := f.dmUser[m.ChannelID]; !dm && m.ForUser == "" && m.Flags&64 == 0 && f.onPublic != nil {
		f.onPublic(m.ChannelID, m.Content)
	}
}

func (f *fakeDiscord) createMessage(w http.ResponseWriter, channel string, body []byte, files int) {
	var wm wireMessage
	if err := json.Unmarshal(body, &wm); err != nil {
		f.fail("create message: %v", err)
	}
	f.check("create message", wm)
	if wm.AllowedMentions == nil || wm.AllowedMentions.Parse == nil || len(wm.AllowedMentions.Parse) > 0 {
		f.fail("a channel message that may ping anyone: %s", body)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if l := f.limits[channel]; l != nil && l.count > 0 {
		l.count--
		l.hits = append(l.hits, time.Now())
		secs := strconv.FormatFloat(l.after.Seconds(), 'f', 3, 64)
		h := w.Header()
		h.Set("Retry-After", secs)
		h.Set("X-RateLimit-Limit", "5")
		h.Set("X-RateLimit-Remaining", "0")
		h.Set("X-RateLimit-Reset-After", secs)
		h.Set("X-RateLimit-Bucket", "channel-"+channel)
		h.Set("X-RateLimit-Scope", "user")
		h.Set("Content-Type", "application/json")
		h.Set("Date", time.Now().UTC().Format(http.TimeFormat))
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprintf(w, `{"message": "You are being rate limited.", "retry_after": %s, "global": false}`, secs)
		return
	}
	if f.forbidden[channel] {
		discordError(w, http.StatusForbidden, 50013, "Missing Permissions")
		return
	}
	if u, ok := f.dmUser[channel]; ok {
		f.dmAttempts[u]++
		if f.blocked[u] {
			discordError(w, http.StatusForbidden, 50007, "Cannot send messages to this user")
			return
		}
	}
	msg := &fakeMessage{ID: f.nextID(), ChannelID: channel}
	f.apply(msg, wm, files)
	f.msgs[msg.ID] = msg
	f.order[channel] = append(f.order[channel], msg.ID)
	f.notify()
	writeJSON(w, 200, map[string]any{"id": msg.ID, "channel_id": channel, "content": msg.Content})
}

func (f *fakeDiscord) editMessage(w http.ResponseWriter, channel, id string, body []byte, files int) {
	var wm wireMessage
	json.Unmarshal(body, &wm)
	f.check("edit message", wm)
	f.mu.Lock()
	defer f.mu.Unlock()
	msg, ok := f.msgs[id]
	if !ok || msg.ChannelID != channel || msg.ForUser != "" {
		discordError(w, 404, 10008, "Unknown Message")
		return
	}
	msg.Edits++
	f.apply(msg, wm, files)
	f.notify()
	writeJSON(w, 200, map[string]any{"id": msg.ID, "channel_id": channel, "content": msg.Content})
}

func (f *fakeDiscord) callback(w http.ResponseWriter, id, token string, body []byte, files int) {
	var req struct {
		Type int         `json:"type"`
		Data wireMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		f.fail("callback body: %v", err)
	}
	f.check("interaction response", req.Data)
	f.mu.Lock()
	defer f.mu.Unlock()
	in, ok := f.inter[id]
	if !ok || in.Token != token {
		discordError(w, 404, 10062, "Unknown interaction")
		return
	}
	if in.Resp != nil {
		f.fail("interaction %s answered twice", id)
		discordError(w, 400, 40060, "Interaction has already been acknowledged.")
		return
	}
	in.Responded = time.Now()
	lat := in.Responded.Sub(in.Dispatched)
	if lat > 3*time.Second {
		f.fail("interaction %s (from %s) answered after %v", id, in.User.Name, lat)
	}
	f.latencies = append(f.latencies, lat)
	resp := &fakeResponse{Type: req.Type, Flags: req.Data.Flags, Choices: req.Data.Choices, Files: files}
	if req.Data.Content != nil {
		resp.Content = *req.Data.Content
	}
	if req.Data.Components != nil {
		resp.Rows = *req.Data.Components
	}
	in.Resp = resp
	switch req.Type {
	case 4, 5: // a message (or "thinking"), ephemeral when flagged
		msg := &fakeMessage{ID: f.nextID(), ChannelID: in.Channel, Flags: req.Data.Flags, Interaction: id}
		f.apply(msg, req.Data, files)
		f.msgs[msg.ID] = msg
		if req.Data.Flags&64 != 0 {
			msg.ForUser = in.User.ID
			f.ephemeral[in.User.ID] = append(f.ephemeral[in.User.ID], msg.ID)
		} else {
			f.order[in.Channel] = append(f.order[in.Channel], msg.ID)
		}
		in.Original = msg.ID
	case 6: // deferred update: the original is the message the button sat on
		in.Original = in.Message
	case 7: // the message the button sat on, updated
		msg, ok := f.msgs[in.Message]
		if !ok {
			f.fail("update of interaction %s without a message", id)
			break
		}
		msg.Edits++
		f.apply(msg, req.Data, files)
		in.Original = in.Message
		f.updates++
	case 8:
		if req.Data.Choices == nil {
			f.fail("autocomplete answer without a choices list")
		}
	default:
		f.fail("interaction response type %d", req.Type)
	}
	f.notify()
	w.WriteHeader(http.StatusNoContent)
}

func (f *fakeDiscord) editWebhookMessage(w http.ResponseWriter, app, token, which string, body []byte, files int) {
	var wm wireMessage
	json.Unmarshal(body, &wm)
	f.check("webhook edit", wm)
	f.mu.Lock()
	defer f.mu.Unlock()
	in, ok := f.byToken[token]
	if !ok || app != f.AppID || in.Resp == nil || which != "@original" || in.Original == "" {
		discordError(w, 404, 10015, "Unknown Webhook")
		return
	}
	msg := f.msgs[in.Original]
	msg.Edits++
	f.apply(msg, wm, files)
	f.notify()
	writeJSON(w, 200, map[string]any{"id": msg.ID, "channel_id": msg.ChannelID, "content": msg.Content})
}

func (f *fakeDiscord) followup(w http.ResponseWriter, app, token string, body []byte, files int) {
	var wm wireMessage
	json.Unmarshal(body, &wm)
	f.check("follow-up", wm)
	f.mu.Lock()
	defer f.mu.Unlock()
	in, ok := f.byToken[token]
	if !ok || app != f.AppID || in.Resp == nil {
		discordError(w, 404, 10015, "Unknown Webhook")
		return
	}
	msg := &fakeMessage{ID: f.nextID(), ChannelID: in.Channel, Flags: wm.Flags, Interaction: in.ID}
	f.apply(msg, wm, files)
	f.msgs[msg.ID] = msg
	if wm.Flags&64 != 0 {
		msg.ForUser = in.User.ID
		f.ephemeral[in.User.ID] = append(f.ephemeral[in.User.ID], msg.ID)
	} else {
		f.order[in.Channel] = append(f.order[in.Channel], msg.ID)
	}
	in.Followups = append(in.Followups, msg.ID)
	f.notify()
	writeJSON(w, 200, map[string]any{"id": msg.ID, "channel_id": msg.ChannelID, "content": msg.Content})
}

var upgrader = websocket.Upgrader{}

func (f *fakeDiscord) serveWS(w http.ResponseWriter, r *http.Request) {
	c, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		f.fail("websocket upgrade: %v", err)
		return
	}
	defer c.Close()
	conn := &fakeConn{c: c}
	conn.send(map[string]any{"op": 10, "d": map[string]any{"heartbeat_interval": 45000}})
	_, raw, err := c.ReadMessage()
	if err != nil {
		return
	}
	var ident struct {
		Op int            `json:"op"`
		D  map[string]any `json:"d"`
	}
	json.Unmarshal(raw, &ident)
	if ident.Op != 2 || (ident.D["token"] != "Bot "+f.Token && ident.D["token"] != f.Token) {
		f.fail("expected IDENTIFY with the token, got op %d", ident.Op)
		c.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(4004, "Authentication failed."))
		return
	}
	conn.send(map[string]any{"op": 0, "s": 1, "t": "READY", "d": map[string]any{
		"v": 10, "session_id": "session-" + f.nextIDLocked(), "user": map[string]any{"id": f.BotID, "username": "kontermatt", "bot": true},
		"application": map[string]any{"id": f.AppID, "flags": 0}, "guilds": []any{}, "private_channels": []any{}}})
	f.mu.Lock()
	f.identifies = append(f.identifies, ident.D)
	f.conn, f.seq = conn, 1
	f.notify()
	f.mu.Unlock()
	for {
		_, raw, err := c.ReadMessage()
		if err != nil {
			break
		}
		var op struct {
			Op int `json:"op"`
		}
		json.Unmarshal(raw, &op)
		if op.Op == 1 {
			conn.send(map[string]any{"op": 11})
		}
	}
	f.mu.Lock()
	if f.conn == conn {
		f.conn = nil
	}
	f.notify()
	f.mu.Unlock()
}

func (f *fakeDiscord) nextIDLocked() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.nextID()
}

func userJSON(u fakeUser) map[string]any {
	return map[string]any{"id": u.ID, "username": strings.ToLower(u.Name), "global_name": u.Name}
}

// dispatch sends an INTERACTION_CREATE over the gateway and returns its record.
func (f *fakeDiscord) dispatch(u fakeUser, typ int, channel string, data any, on *fakeMessage) *fakeInteraction {
	f.t.Helper()
	f.waitFor("a gateway connection", func() bool { return f.conn != nil })
	f.mu.Lock()
	id := f.nextID()
	in := &fakeInteraction{ID: id, Token: "aW50ZXJhY3Rpb24" + id + "-token-xyz", User: u, Channel: channel}
	payload := map[string]any{"id": id, "application_id": f.AppID, "type": typ, "token": in.Token, "version": 1,
		"channel_id": channel, "locale": u.Locale, "data": data}
	if _, dm := f.dmUser[channel]; dm {
		payload["user"], payload["context"] = userJSON(u), 1
	} else {
		payload["guild_id"], payload["context"] = f.GuildID, 0
		payload["member"] = map[string]any{"user": userJSON(u), "permissions": strconv.FormatInt(u.Perms, 10)}
	}
	if on != nil {
		in.Message = on.ID
		payload["message"] = map[string]any{"id": on.ID, "channel_id": on.ChannelID, "content": on.Content, "flags": on.Flags}
	}
	f.inter[id], f.byToken[in.Token] = in, in
	f.seq++
	seq, conn := f.seq, f.conn
	in.Dispatched = time.Now()
	f.mu.Unlock()
	if err := conn.send(map[string]any{"op": 0, "s": seq, "t": "INTERACTION_CREATE", "d": payload}); err != nil {
		f.t.Fatalf("fake discord: dispatch: %v", err)
	}
	return in
}

// response waits for the interaction's answer.
func (f *fakeDiscord) response(in *fakeInteraction) fakeResponse {
	f.t.Helper()
	f.waitFor("the answer to interaction "+in.ID, func() bool { return in.Resp != nil })
	f.mu.Lock()
	defer f.mu.Unlock()
	return *in.Resp
}

// press clicks a button of a message as user u and waits for the answer.
func (f *fakeDiscord) press(u fakeUser, on fakeMessage, customID string) fakeResponse {
	f.t.Helper()
	return f.response(f.pressAsync(u, on, customID))
}

func (f *fakeDiscord) pressAsync(u fakeUser, on fakeMessage, customID string) *fakeInteraction {
	f.t.Helper()
	return f.dispatch(u, 3, on.ChannelID, map[string]any{"custom_id": customID, "component_type": 2}, &on)
}

// slash runs /km <sub> with options as user u in a channel and waits for the answer.
func (f *fakeDiscord) slash(u fakeUser, channel, sub string, opts ...map[string]any) fakeResponse {
	f.t.Helper()
	return f.response(f.dispatch(u, 2, channel, slashData(sub, opts), nil))
}

func slashData(sub string, opts []map[string]any) map[string]any {
	if opts == nil {
		opts = []map[string]any{}
	}
	return map[string]any{"id": "700000000000000001", "name": "km", "type": 1,
		"options": []any{map[string]any{"name": sub, "type": 1, "options": opts}}}
}

func opt(name string, typ int, value any) map[string]any {
	return map[string]any{"name": name, "type": typ, "value": value}
}

// autocomplete asks for the choices of /km play card:<typed>.
func (f *fakeDiscord) autocomplete(u fakeUser, channel, typed string) []fakeChoice {
	f.t.Helper()
	o := opt("card", 3, typed)
	o["focused"] = true
	r := f.response(f.dispatch(u, 4, channel, slashData("play", []map[string]any{o}), nil))
	if r.Type != 8 {
		f.t.Fatalf("autocomplete answered with type %d", r.Type)
	}
	return r.Choices
}

// channel gives the messages of a channel as they look now, oldest first.
func (f *fakeDiscord) channel(ch string) []fakeMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.channelLocked(ch)
}

func (f *fakeDiscord) channelLocked(ch string) []fakeMessage {
	var out []fakeMessage
	for _, id := range f.order[ch] {
		out = append(out, f.msgs[id].copy())
	}
	return out
}

// dm gives the messages of a user's DM channel.
func (f *fakeDiscord) dm(userID string) []fakeMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.channelLocked(f.dms[userID])
}

// ephemerals gives the ephemeral messages a user was shown, oldest first.
func (f *fakeDiscord) ephemerals(userID string) []fakeMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []fakeMessage
	for _, id := range f.ephemeral[userID] {
		out = append(out, f.msgs[id].copy())
	}
	return out
}

func (f *fakeDiscord) callCounts() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]int{}
	for k, v := range f.calls {
		out[k] = v
	}
	return out
}

func (f *fakeDiscord) takeLatencies() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.latencies
	f.latencies = nil
	return out
}

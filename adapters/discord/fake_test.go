package discord

import (
	"bytes"
	"cmp"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"io"
	"math"
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

	"github.com/kontermatt/kontermatt/core/table/api"
)

// fakeDiscord is a small Discord: REST on an httptest server and a websocket gateway with
// shards, enough for real discordgo sessions. It records every message as the users would see
// it and refuses what a real Discord refuses; each rule names where Discord documents it
// ("docs:" is https://discord.com/developers/docs, "#n" an issue of discord/discord-api-docs).

type fakeUser struct {
	ID, Name, Locale string
	Perms            int64
}

type fakeButton struct {
	Label    string `json:"label"`
	Style    int    `json:"style"`
	CustomID string `json:"custom_id"`
	URL      string `json:"url,omitempty"`
	Type     int    `json:"type"`
}

type fakeRow struct {
	Type       int          `json:"type"`
	Components []fakeButton `json:"components"`
}

type fakeVersion struct {
	Content string
	Rows    []fakeRow
	At      time.Time // when Discord took it
}

type fakeMessage struct {
	ID, ChannelID string
	Content       string
	Rows          []fakeRow
	Flags         int
	Files         int
	Attached      []fakeFile
	Mentions      []string // users it may ping
	Edits         int
	History       []fakeVersion // every content it showed, oldest first
	Previews      int           // link previews Discord added (embeds of the links in it)
	ForUser       string        // an ephemeral message: the only user who sees it
	Interaction   string        // the interaction whose response it is
	editAsked     time.Time     // when the request of its newest edit by the channel route came
}

func (m *fakeMessage) copy() fakeMessage {
	c := *m
	c.Rows = slices.Clone(m.Rows)
	c.History = slices.Clone(m.History)
	return c
}

// buttons lists the message's table buttons (those whose custom_id is an Action) row by row.
func (m fakeMessage) buttons() []fakeButton {
	var out []fakeButton
	for _, r := range m.Rows {
		for _, b := range r.Components {
			if _, err := api.ParseAction(b.CustomID); err == nil {
				out = append(out, b)
			}
		}
	}
	return out
}

// extras lists the message's other buttons: links, and the Activity's "Play in app".
func (m fakeMessage) extras() []fakeButton {
	var out []fakeButton
	for _, r := range m.Rows {
		for _, b := range r.Components {
			if _, err := api.ParseAction(b.CustomID); err != nil {
				out = append(out, b)
			}
		}
	}
	return out
}

type fakeChoice struct {
	Name  string `json:"name"`
	Value any    `json:"value"`
}

type fakeResponse struct {
	Type     int
	Content  string
	Rows     []fakeRow
	Flags    int
	Files    int
	Attached []fakeFile
	Choices  []fakeChoice
}

type fakeInteraction struct {
	ID, Token  string
	Type       int // 2 command, 3 component, 4 autocomplete
	User       fakeUser
	Channel    string
	Message    string    // the message a button sat on
	Made       time.Time // by the snowflake in its ID
	Dispatched time.Time
	Replayed   bool // sent again by a RESUME
	Responded  time.Time
	Resp       *fakeResponse
	Original   string   // ID of the message that is its original response
	Followups  []string // IDs of follow-up messages
	Late       int      // answers refused because the answer window had passed
	Perms      int64    // app_permissions as the payload said
	Refused    []int    // codes of the answers refused for what they held
	// By HTTP: the post is in flight (its answer not read yet), and the status of an answer that
	// was no interaction response (the user saw "This interaction failed").
	posting bool
	Failed  int
	// taking: the HTTP answer is read and Discord has not taken it yet (takeLater).
	taking bool
}

type fakeLimit struct {
	count int           // how many 429s are still to give
	after time.Duration // retry_after
	hits  []time.Time
}

type wireMessage struct {
	Content         *string    `json:"content"`
	Components      *[]fakeRow `json:"components"`
	Embeds          []any      `json:"embeds"`
	Flags           *int       `json:"flags"`
	AllowedMentions *struct {
		Parse []string `json:"parse"`
		Users []string `json:"users"`
	} `json:"allowed_mentions"`
	Choices []fakeChoice `json:"choices"`
}

// The flags an interaction's messages may set. An answer (callback types 4 and 7): "only
// SUPPRESS_EMBEDS, EPHEMERAL, IS_COMPONENTS_V2, IS_VOICE_MESSAGE, and SUPPRESS_NOTIFICATIONS can
// be set"; a deferred answer (type 5): "the only valid message flag you may use is EPHEMERAL"
// (docs: Interactions, Receiving and Responding, Interaction Response Object: Messages); a
// follow-up as Execute Webhook takes them (SUPPRESS_EMBEDS, SUPPRESS_NOTIFICATIONS,
// IS_COMPONENTS_V2), and EPHEMERAL (docs: Create Followup Message); an edit of one as Edit
// Webhook Message does, SUPPRESS_EMBEDS and IS_COMPONENTS_V2 (its flags in the OpenAPI
// description, IncomingWebhookUpdateRequestPartial), "an existing message's ephemeral state
// cannot be changed" (docs: Create Followup Message).
const (
	flagsAnswer   = 1<<2 | 1<<6 | 1<<12 | 1<<13 | 1<<15
	flagsDeferred = 1 << 6
	flagsFollowup = 1<<2 | 1<<6 | 1<<12 | 1<<15
	flagsEdit     = 1<<2 | 1<<15
)

func (wm wireMessage) flags() int {
	if wm.Flags == nil {
		return 0
	}
	return *wm.Flags
}

// checkFlags refuses flags a message may not set: on a new message only SUPPRESS_EMBEDS,
// SUPPRESS_NOTIFICATIONS, IS_VOICE_MESSAGE and IS_COMPONENTS_V2, on an edit only SUPPRESS_EMBEDS
// and IS_COMPONENTS_V2 (docs: Message, Create Message and Edit Message). Interaction answers have
// their own lists (flagsAnswer and the others below).
func (f *fakeDiscord) checkFlags(where string, wm wireMessage, allowed int) {
	if wm.flags()&^allowed != 0 {
		f.fail("%s: flags %d", where, wm.flags())
	}
}

// fakeChannel is a guild channel or thread and what the bot may do in it.
type fakeChannel struct {
	ID, Guild string
	Thread    bool
	Archived  bool
	Perms     int64 // the bot's permissions there, as app_permissions reports them
	// A private thread (type 12) is seen only by its members and those with Manage Threads;
	// Joined says the bot is a member. A locked thread takes new messages only from those with
	// Manage Threads. Neither shows in app_permissions (see guildChannelAllows).
	Private, Joined, Locked bool
	// AutoMod is a word the server's AutoMod blocks in members' messages, the bot's included.
	AutoMod string
}

// fakeGuild is a server and how the app is in it.
type fakeGuild struct {
	ID string
	// NotInstalled: the server never installed the app; commands come from users who installed
	// it to their account. CommandsOnly: the server installed the commands without the bot.
	NotInstalled, CommandsOnly bool
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

// fakeSession is a gateway session: what RESUME needs to replay (docs: Gateway, Resuming).
type fakeSession struct {
	ID            string
	Shard, Shards int
	conn          *fakeConn
	events        []map[string]any // every dispatch, in seq order; seq = index+1
	valid         bool
	Began         time.Time // its READY
}

type fakeDiscord struct {
	t                            testing.TB
	gatewayDown                  bool // new gateway connections fail (an outage)
	Token, AppID, BotID, GuildID string
	srv                          *httptest.Server
	mu                           sync.Mutex
	changed                      chan struct{}
	increment                    int64 // the low bits of the snowflakes
	msgs                         map[string]*fakeMessage
	order                        map[string][]string // channel → its messages, oldest first
	ephemeral                    map[string][]string // user → ephemeral messages, oldest first
	dms                          map[string]string   // user → DM channel
	dmUser                       map[string]string   // DM channel → user
	blocked                      map[string]bool     // users refusing DMs
	channels                     map[string]*fakeChannel
	guilds                       map[string]*fakeGuild
	limits                       map[string]*fakeLimit
	failures                     map[string][]int // route → statuses to answer before it works
	inter                        map[string]*fakeInteraction
	byToken                      map[string]*fakeInteraction
	commands                     []byte
	commandsPath                 string
	calls                        map[string]int
	refused                      map[string][]int // channel → Discord codes of refused requests
	// The gateway. Shards is the shard count GET /gateway/bot recommends; StartsLeft the
	// session starts left today; MaxConcurrency the IDENTIFYs per IdentifyWindow and bucket.
	Shards, StartsLeft, MaxConcurrency int
	IdentifyWindow                     time.Duration
	sessions                           map[string]*fakeSession
	shardSession                       map[int]*fakeSession // shard → its live session (the newest)
	// mostOpen is the most sessions of each shard connected at one moment: Discord takes several
	// (docs: Gateway, Sharding: "You can establish multiple sessions with the same [shard_id,
	// num_shards]") and routes the shard's events to each of them.
	mostOpen         map[int]int
	identifies       []map[string]any
	identifiedAt     map[int]time.Time // rate_limit_key → last IDENTIFY
	identifiedAtList []time.Time       // when each IDENTIFY came
	invalidSessions  int               // IDENTIFYs still to answer with an Invalid Session
	resumes          []string          // the address each RESUME came to
	dispatched       map[int]int       // shard → interactions sent on it
	latencies        []time.Duration
	dmAttempts       map[string]int // user → message POSTs to their DM channel
	updates          int            // interactions answered by updating their message
	// onPublic sees every text the bot shows in a channel to everyone (not ephemeral, not a DM),
	// with f.mu held.
	onPublic func(channel, content string)
	copies   []*clusterCopy // the copies of the bot startOwnedCopy started, for onPublic
	// patience is how long waitFor waits; default 15 s.
	patience time.Duration
	// The app's Activity (see activity_test.go): its client secret, whether Activities are
	// switched on (then the app has an Entry Point command), the OAuth2 codes Discord's client
	// would hand out and the access tokens they became, the activity instances running.
	ClientSecret string
	Activities   bool
	EntryHandler int // the Entry Point command's handler: 1 APP_HANDLER, else 2 DISCORD_LAUNCH_ACTIVITY
	codes        map[string]fakeUser
	tokens       map[string]fakeUser
	instances    map[string]fakeInstance
	launched     int // interactions answered with LAUNCH_ACTIVITY
	// Users who share no server with the bot; DMOpenLimit is how many DM channels the bot may
	// open before Discord says it opens them too fast (0: no limit), dmOpenRefused how often it
	// said so.
	noMutual                             map[string]bool
	DMOpenLimit, dmOpened, dmOpenRefused int
	// HTTP mode (fake_http_test.go): interactions are posted, signed with signKey, to Endpoint,
	// the bot's interactions server, and answered in the response; there is no gateway.
	viaHTTP  bool
	signKey  ed25519.PrivateKey
	Endpoint string
	// Pool, when not empty, is the copies of the bot behind the Endpoint URL: as a load
	// balancer in front of them, each post goes to the next in turn (any copy answers any post:
	// docs/hosting.md), and a copy that stopped is taken out of it.
	Pool   []string
	pooled int
	poster *http.Client
	posts  sync.WaitGroup // posts whose answer is being read
	// errorAnswers are the requests the fake answered with an error status, by route ("PATCH
	// channels/{id}/messages/{id} 404"), in order.
	errorAnswers []string
	// early404 counts webhook calls answered Unknown Webhook because their interaction's HTTP
	// answer was not taken yet; staleUpdates the updates (type 7) taken after an edit of their
	// message that was sent after them (takeLater).
	early404, staleUpdates int
	// takeDelay, when set, is how long every HTTP answer takes to be taken (else 2–40 ms).
	takeDelay time.Duration
	// tokenLimited, when set, answers the next code exchange with a 429 that says to wait that
	// many seconds (docs: Rate Limits, "Exceeding A Rate Limit": the body's retry_after and
	// global, the Retry-After header).
	tokenLimited float64
}

// fakeInstance is a running activity instance: where, and who takes part.
type fakeInstance struct {
	Channel, Guild string
	Users          []string
}

// fakeIdentifyWindow stands for Discord's 5 s between IDENTIFYs of a bucket (docs: Gateway, Max
// Concurrency), short enough for the tests' restarts.
const fakeIdentifyWindow = 300 * time.Millisecond

var apiPath = regexp.MustCompile(`^/api/v[0-9]+/(.*)$`)

// defaultPerms are the bot's permissions in a channel unless a test says otherwise: what the
// invite asks for.
const defaultPerms = Permissions

// dmPerms are app_permissions in a DM with the bot (docs: Interactions, Interaction Object).
const dmPerms = permAttachFiles | permEmbedLinks | 1<<17 | 1<<18 // + MENTION_EVERYONE, USE_EXTERNAL_EMOJIS

func newFakeDiscord(t testing.TB) *fakeDiscord {
	f := &fakeDiscord{t: t, Token: "MTAxNTA0.fake-bot-token.s3cr3t-ZZZZZZZZZZZZZZZZZZZZ", AppID: "900000000000000001",
		BotID: "900000000000000001", GuildID: "800000000000000001", changed: make(chan struct{}),
		msgs: map[string]*fakeMessage{}, order: map[string][]string{}, ephemeral: map[string][]string{},
		dms: map[string]string{}, dmUser: map[string]string{}, blocked: map[string]bool{}, noMutual: map[string]bool{},
		channels: map[string]*fakeChannel{}, guilds: map[string]*fakeGuild{}, limits: map[string]*fakeLimit{},
		failures: map[string][]int{}, inter: map[string]*fakeInteraction{}, byToken: map[string]*fakeInteraction{},
		calls: map[string]int{}, refused: map[string][]int{}, dmAttempts: map[string]int{},
		Shards: 1, StartsLeft: 1000, MaxConcurrency: 1, IdentifyWindow: fakeIdentifyWindow,
		sessions: map[string]*fakeSession{}, shardSession: map[int]*fakeSession{}, mostOpen: map[int]int{}, identifiedAt: map[int]time.Time{},
		dispatched: map[int]int{}, ClientSecret: "fake-client-secret-QQQQQQQQ", codes: map[string]fakeUser{},
		tokens: map[string]fakeUser{}, instances: map[string]fakeInstance{}}
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
	f.mu.Lock()
	patience := cmp.Or(f.patience, 15*time.Second)
	f.mu.Unlock()
	deadline := time.After(patience)
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

// snowflake makes an ID as Discord does: milliseconds since 2015 in the top bits (docs:
// Reference, Snowflakes), unique within the fake (f.mu held).
func (f *fakeDiscord) snowflake(at time.Time) string {
	f.increment++
	return strconv.FormatInt((at.UnixMilli()-discordEpoch)<<22|f.increment&0xfff, 10)
}

func (f *fakeDiscord) nextID() string { return f.snowflake(time.Now()) }

func (f *fakeDiscord) fail(format string, args ...any) {
	f.t.Errorf("fake discord: "+format, args...)
}

// channel gives a guild channel's record (f.mu held); one not set up is a text channel of the
// default server where the bot has the invite's permissions.
func (f *fakeDiscord) channelInfo(id string) *fakeChannel {
	c, ok := f.channels[id]
	if !ok {
		c = &fakeChannel{ID: id, Guild: f.GuildID, Perms: defaultPerms}
		f.channels[id] = c
	}
	return c
}

// setChannel sets up a guild channel.
func (f *fakeDiscord) setChannel(c fakeChannel) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c.Guild == "" {
		c.Guild = f.GuildID
	}
	f.channels[c.ID] = &c
}

// setPerms changes the bot's permissions in a channel, as a server admin would.
func (f *fakeDiscord) setPerms(channel string, perms int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.channelInfo(channel).Perms = perms
}

func (f *fakeDiscord) guild(id string) *fakeGuild {
	g, ok := f.guilds[id]
	if !ok {
		g = &fakeGuild{ID: id}
		f.guilds[id] = g
	}
	return g
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
			parts[i-1] == "webhooks" || parts[i-1] == "applications" || parts[i-1] == "guilds") && p != "@original" && p != "@me" {
			out[i] = "{id}"
		}
		if i > 1 && (parts[i-2] == "interactions" || parts[i-2] == "webhooks") {
			out[i] = "{token}"
		}
	}
	return method + " " + strings.Join(out, "/")
}

// failRoute makes the next requests of a route fail with these HTTP statuses, in turn.
func (f *fakeDiscord) failRoute(rt string, statuses ...int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failures[rt] = append(f.failures[rt], statuses...)
}

func (f *fakeDiscord) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if f.viaHTTP && (strings.HasPrefix(r.URL.Path, "/ws") || strings.HasSuffix(r.URL.Path, "/gateway/bot") || strings.HasSuffix(r.URL.Path, "/gateway")) {
		// With an Interactions Endpoint URL the bot needs no gateway, and opens none (issue 23).
		f.fail("the bot asked for the gateway while interactions come by HTTP: %s %s", r.Method, r.URL.Path)
	}
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
	if m[1] == "oauth2/token" || strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
		f.serveOAuth(w, r, m[1])
		return
	}
	if got := r.Header.Get("Authorization"); got != "Bot "+f.Token {
		f.fail("request without the bot token: %s %s", r.Method, r.URL.Path)
		discordError(w, 401, 0, "401: Unauthorized")
		return
	}
	parts := strings.Split(m[1], "/")
	rt := route(r.Method, parts)
	rec := &statusWriter{ResponseWriter: w, status: http.StatusOK}
	w = rec
	defer func() {
		if rec.status >= 400 {
			name := rt
			if parts[0] == "webhooks" {
				name = r.Method + " webhooks (an interaction's token)" // the route keeps the token
			}
			f.mu.Lock()
			f.errorAnswers = append(f.errorAnswers, name+" "+strconv.Itoa(rec.status))
			f.mu.Unlock()
		}
	}()
	body, files := readBody(f.t, r)
	f.mu.Lock()
	f.calls[rt]++
	var failWith int
	if fs := f.failures[rt]; len(fs) > 0 {
		failWith, f.failures[rt] = fs[0], fs[1:]
	}
	f.notify()
	f.mu.Unlock()
	if failWith != 0 {
		discordError(w, failWith, 0, http.StatusText(failWith))
		return
	}
	switch {
	case r.Method == "GET" && m[1] == "gateway":
		writeJSON(w, 200, map[string]any{"url": "ws://" + r.Host + "/ws"})
	case r.Method == "GET" && m[1] == "gateway/bot":
		f.mu.Lock()
		// docs: Gateway, Get Gateway Bot and Session Start Limit Object.
		resp := map[string]any{"url": "ws://" + r.Host + "/ws", "shards": f.Shards, "session_start_limit": map[string]any{
			"total": 1000, "remaining": f.StartsLeft, "reset_after": 14400000, "max_concurrency": f.MaxConcurrency}}
		f.mu.Unlock()
		writeJSON(w, 200, resp)
	case r.Method == "GET" && m[1] == "users/@me":
		writeJSON(w, 200, map[string]any{"id": f.BotID, "username": "kontermatt", "bot": true})
	case r.Method == "GET" && m[1] == "oauth2/applications/@me":
		writeJSON(w, 200, map[string]any{"id": f.AppID, "name": "kontermatt", "bot_public": true,
			"bot": map[string]any{"id": f.BotID, "username": "kontermatt", "bot": true}})
	case r.Method == "PUT" && len(parts) >= 3 && parts[0] == "applications" && parts[len(parts)-1] == "commands":
		f.registerCommands(w, m[1], parts, body)
	case r.Method == "GET" && len(parts) == 3 && parts[0] == "applications" && parts[2] == "commands":
		f.globalCommands(w)
	case r.Method == "GET" && len(parts) == 4 && parts[0] == "applications" && parts[2] == "activity-instances":
		f.activityInstance(w, parts[1], parts[3])
	case r.Method == "POST" && len(parts) == 4 && parts[0] == "interactions" && parts[3] == "callback":
		f.callback(w, parts[1], parts[2], body, files)
	case r.Method == "GET" && len(parts) == 5 && parts[0] == "webhooks" && parts[3] == "messages":
		f.getWebhookMessage(w, parts[1], parts[2], parts[4])
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
		if !ok && f.DMOpenLimit > 0 && f.dmOpened >= f.DMOpenLimit {
			// docs: Opcodes and Status Codes, 40003 "You are opening direct messages too fast";
			// Discord says neither the limit nor the status, which libraries meet as a 400 (Bad
			// Request) with that code.
			f.dmOpenRefused++
			f.notify()
			f.mu.Unlock()
			discordError(w, http.StatusBadRequest, 40003, "You are opening direct messages too fast")
			return
		}
		if !ok {
			ch = "dm" + f.nextID()
			f.dms[req.Recipient], f.dmUser[ch] = ch, req.Recipient
			f.dmOpened++
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

// statusWriter notes the status an answer was given.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	w.status = status
	w.ResponseWriter.WriteHeader(status)
}

// refusedCalls gives the requests answered with an error, but for the webhook calls Discord
// answered Unknown Webhook only because it had not taken their interaction's HTTP answer yet
// (early404), which the adapter rightly tries again.
func (f *fakeDiscord) refusedCalls() (refused []string, early int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	early = f.early404
	for _, e := range f.errorAnswers {
		if early > 0 && strings.HasSuffix(e, " webhooks (an interaction's token) 404") {
			early--
			continue
		}
		refused = append(refused, e)
	}
	return refused, f.early404
}

// registerCommands takes a bulk overwrite of the commands, checking what Discord's schema
// requires of contexts and integration_types (docs: Application Commands, Application Command
// Object: at least one each, no repeats, known values).
func (f *fakeDiscord) registerCommands(w http.ResponseWriter, path string, parts []string, body []byte) {
	var cmds []map[string]any
	if err := json.Unmarshal(body, &cmds); err != nil {
		f.fail("commands: %v", err)
	}
	for _, c := range cmds {
		for field, known := range map[string][]float64{"contexts": {0, 1, 2}, "integration_types": {0, 1}} {
			vals, _ := c[field].([]any)
			seen := map[float64]bool{}
			for _, v := range vals {
				n, _ := v.(float64)
				if !slices.Contains(known, n) || seen[n] {
					f.fail("command %v: %s %v", c["name"], field, vals)
				}
				seen[n] = true
			}
			if c[field] != nil && len(vals) == 0 {
				f.fail("command %v: empty %s", c["name"], field)
			}
		}
	}
	for _, c := range cmds {
		if c["type"] == float64(4) {
			continue // the Entry Point command, as Discord made it
		}
		if n := f.checkOptions(fmt.Sprint(c["name"]), c, "command"); n > 8000 {
			// Discord's answer to a command over its size (docs: Opcodes and Status Codes, 50035
			// Invalid Form Body, with the field's error in "errors").
			writeJSON(w, 400, map[string]any{"code": 50035, "message": "Invalid Form Body", "errors": map[string]any{
				"_errors": []any{map[string]any{"code": "APPLICATION_COMMAND_TOO_LARGE",
					"message": fmt.Sprintf("Command exceeds maximum size (8000): %d", n)}}}})
			return
		}
	}
	if global := len(parts) == 3; global && f.Activities && !slices.ContainsFunc(cmds, func(c map[string]any) bool { return c["type"] == float64(4) }) {
		// docs: Opcodes and Status Codes, 50240; Application Commands, Entry Point Commands: an app
		// with Activities switched on has one, made by Discord.
		discordError(w, 400, 50240, "You cannot remove this app's Entry Point command in a bulk update operation. "+
			"Please include the Entry Point command in your update request or delete it separately.")
		return
	}
	f.mu.Lock()
	f.commands, f.commandsPath = body, path
	f.notify()
	f.mu.Unlock()
	for _, c := range cmds {
		c["id"], c["application_id"] = "700000000000000001", f.AppID
	}
	writeJSON(w, 200, cmds)
}

// checkOptions enforces what Discord requires of a command's options (developer docs,
// Application Commands: Application Command Option Structure, Subcommands and Subcommand
// Groups): at most 25 options, each named 1–32 lower-case characters and described in 1–100;
// at most 25 choices; a group holds only subcommands, a subcommand no group, and nothing nests
// deeper. It gives the characters the command counts towards Discord's limit of 8,000: "combined
// name, description, and value properties for each command, its options (including subcommands
// and groups), and choices. When localization fields are present, only the longest localization
// for each field (including the default value) is counted towards the size limit" (docs:
// Application Commands, Slash Commands).
func (f *fakeDiscord) checkOptions(where string, o map[string]any, kind string) int {
	n := longestLocalization(o, "name") + longestLocalization(o, "description")
	opts, _ := o["options"].([]any)
	if len(opts) > 25 {
		f.fail("%s: %d options, Discord takes 25", where, len(opts))
	}
	for _, x := range opts {
		c, _ := x.(map[string]any)
		name, _ := c["name"].(string)
		desc, _ := c["description"].(string)
		typ, _ := c["type"].(float64)
		if name == "" || len([]rune(name)) > 32 || strings.ToLower(name) != name {
			f.fail("%s: option name %q", where, name)
		}
		if l := len([]rune(desc)); l < 1 || l > 100 {
			f.fail("%s %s: description of %d characters", where, name, l)
		}
		child := map[float64]string{1: "subcommand", 2: "group"}[typ]
		if child == "" {
			child = "option"
		}
		switch {
		case kind == "group" && child != "subcommand":
			f.fail("%s %s: a group holds only subcommands", where, name)
		case kind == "subcommand" && child != "option", kind == "option":
			f.fail("%s %s: a %s inside a %s", where, name, child, kind)
		}
		choices, _ := c["choices"].([]any)
		if len(choices) > 25 {
			f.fail("%s %s: %d choices, Discord takes 25", where, name, len(choices))
		}
		for _, ch := range choices {
			m, _ := ch.(map[string]any)
			n += longestLocalization(m, "name") + len([]rune(fmt.Sprint(m["value"])))
		}
		n += f.checkOptions(where+" "+name, c, child)
	}
	return n
}

// longestLocalization is the length of a field's longest text: its default or one of its
// localizations (field_localizations).
func longestLocalization(o map[string]any, field string) int {
	n := len([]rune(fmt.Sprint(o[field])))
	locs, _ := o[field+"_localizations"].(map[string]any)
	for _, v := range locs {
		n = max(n, len([]rune(fmt.Sprint(v))))
	}
	return n
}

// fakeFile is a file attached to a message.
type fakeFile struct {
	Name string
	Data []byte
}

// maxRequest is the largest request Discord takes when a message carries files (developer docs,
// Uploading Files: "The maximum request size when sending a message is 25 MiB").
const maxRequest = 25 << 20

// readBody reads a JSON body, or the payload_json of a multipart body and its files; a file named
// .png must be a whole PNG.
func readBody(t testing.TB, r *http.Request) ([]byte, []fakeFile) {
	return readParts(t, r.Header, r.Body)
}

// readParts is readBody of a request's or a response's header and body.
func readParts(t testing.TB, h http.Header, body io.Reader) ([]byte, []fakeFile) {
	mt, params, _ := mime.ParseMediaType(h.Get("Content-Type"))
	if mt != "multipart/form-data" {
		b, _ := io.ReadAll(body)
		return b, nil
	}
	mr := multipart.NewReader(io.LimitReader(body, maxRequest+1), params["boundary"])
	var payload []byte
	var files []fakeFile
	size := 0
	for {
		p, err := mr.NextPart()
		if err != nil {
			break
		}
		b, _ := io.ReadAll(p)
		size += len(b)
		switch {
		case p.FormName() == "payload_json":
			payload = b
		case strings.HasSuffix(p.FileName(), ".png"):
			if _, err := png.Decode(bytes.NewReader(b)); err != nil {
				t.Errorf("fake discord: an attached picture is not a valid PNG: %v", err)
			}
			files = append(files, fakeFile{p.FileName(), b})
		default:
			files = append(files, fakeFile{p.FileName(), b})
		}
	}
	if size > maxRequest {
		t.Errorf("fake discord: a request of more than 25 MiB")
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
			if b.Type == 2 && b.Style == 5 {
				// "Link buttons must have a url, and cannot have a custom_id" (docs: Message
				// Components, Button): up to 512 characters.
				if b.CustomID != "" || !strings.HasPrefix(b.URL, "http") || len(b.URL) > 512 || len([]rune(b.Label)) > 80 {
					f.fail("%s: bad link button %+v", where, b)
				}
				continue
			}
			// "Non-link buttons must have a custom_id, and cannot have a url".
			if b.Type != 2 || b.CustomID == "" || b.URL != "" || len(b.CustomID) > 100 || len([]rune(b.Label)) > 80 || b.Style < 1 || b.Style > 4 {
				f.fail("%s: bad button %+v", where, b)
			}
			if seen[b.CustomID] {
				f.fail("%s: custom_id %q twice in one message", where, b.CustomID)
			}
			seen[b.CustomID] = true
		}
	}
}

func (f *fakeDiscord) apply(m *fakeMessage, wm wireMessage, files []fakeFile) {
	if wm.Content != nil {
		m.Content = *wm.Content
	}
	if wm.Flags != nil {
		ephemeral := m.Flags & 64 // an edit cannot change it (see flagsEdit)
		if len(m.History) == 0 {
			ephemeral = *wm.Flags & 64
		}
		m.Flags = *wm.Flags&^64 | ephemeral
	}
	// "Links sent by users with this permission will be auto-embedded" (docs: Permissions,
	// EMBED_LINKS), unless the message has SUPPRESS_EMBEDS (docs: Message, Message Flags). An
	// interaction's messages have the permissions its app_permissions say (see answerAllows).
	m.Previews = 0
	embeds := f.channelInfo(m.ChannelID).Perms&permEmbedLinks != 0
	if in, ok := f.inter[m.Interaction]; ok {
		embeds = in.Perms&permEmbedLinks != 0
	}
	if _, dm := f.dmUser[m.ChannelID]; m.Flags&4 == 0 && (dm || embeds) {
		m.Previews = len(webAddress.FindAllString(m.Content, -1))
	}
	if wm.Components != nil {
		m.Rows = slices.Clone(*wm.Components)
	}
	if len(files) > 0 {
		m.Files, m.Attached = len(files), files
	}
	if wm.AllowedMentions != nil {
		m.Mentions = wm.AllowedMentions.Users
	}
	m.History = append(m.History, fakeVersion{m.Content, slices.Clone(m.Rows), time.Now()})
	if _, dm := f.dmUser[m.ChannelID]; !dm && m.ForUser == "" && m.Flags&64 == 0 && f.onPublic != nil {
		f.onPublic(m.ChannelID, m.Content)
	}
}

// refuse answers a request the bot's permissions in a guild channel do not allow (f.mu held).
func (f *fakeDiscord) refuse(w http.ResponseWriter, channel string, status, code int, msg string) {
	f.refused[channel] = append(f.refused[channel], code)
	f.notify()
	discordError(w, status, code, msg)
}

// guildChannelAllows checks a request in a guild channel against the bot's permissions there and
// gives false, having answered, if Discord refuses it (f.mu held). Every request needs View
// Channel, else 50001 Missing Access; a new message needs Send Messages, in a thread Send Messages
// in Threads, which Send Messages does not stand for (docs: Permissions, Permissions for
// Threads), else 50013; an edit of the bot's own message does not need it (#3096, a maintainer:
// "Send Messages restricts the ability to send new messages, but does not prevent existing
// messages from being updated"); a file needs Attach Files (docs: Permissions, "Allows for
// uploading images and files"), an embed Embed Links (#2601: 403 Missing Permissions), both
// 50013.
//
// A private thread is seen by "those invited and those with the MANAGE_THREADS permission", and
// a locked thread takes messages only from those with it (docs: Threads; Channel, Thread
// Metadata Object: "when a thread is locked, only users with MANAGE_THREADS can unarchive it"):
// a private thread the bot is not in refuses it as unseen, 50001, and a locked one a new message
// with 160005 "Thread is locked" (docs: Opcodes and Status Codes), both 403 as the platform
// review saw them. app_permissions shows neither: they come from the bot's roles and the
// parent channel's overwrites.
func (f *fakeDiscord) guildChannelAllows(w http.ResponseWriter, c *fakeChannel, create bool, files []fakeFile, embeds bool) bool {
	need := func(p int64) bool { return c.Perms&p == p }
	switch {
	case f.guild(c.Guild).NotInstalled || f.guild(c.Guild).CommandsOnly || !need(permViewChannel),
		c.Private && !c.Joined && !need(permManageThreads):
		f.refuse(w, c.ID, http.StatusForbidden, 50001, "Missing Access")
	case create && c.Locked && !need(permManageThreads):
		f.refuse(w, c.ID, http.StatusForbidden, 160005, "Thread is locked")
	case create && !need(sendPermission(c.Thread)):
		f.refuse(w, c.ID, http.StatusForbidden, 50013, "Missing Permissions")
	case len(files) > 0 && !need(permAttachFiles), embeds && !need(permEmbedLinks):
		f.refuse(w, c.ID, http.StatusForbidden, 50013, "Missing Permissions")
	default:
		return true
	}
	return false
}

// autoModAllows blocks a message whose text holds the channel's AutoMod word: the Block Message
// action "blocks a member's message and prevents it from being posted", on a message sent or
// edited (docs: Auto Moderation, Action Types and Event Types: MESSAGE_SEND "when a member sends
// or edits a message in the guild"), answered with 200000 "Message was blocked by automatic
// moderation" (docs: Opcodes and Status Codes; the status is not documented: 400) (f.mu held).
func (f *fakeDiscord) autoModAllows(w http.ResponseWriter, c *fakeChannel, wm wireMessage) bool {
	if c.AutoMod == "" || wm.Content == nil || !strings.Contains(strings.ToLower(*wm.Content), strings.ToLower(c.AutoMod)) {
		return true
	}
	f.refuse(w, c.ID, http.StatusBadRequest, 200000, "Message was blocked by automatic moderation")
	return false
}

func (f *fakeDiscord) createMessage(w http.ResponseWriter, channel string, body []byte, files []fakeFile) {
	var wm wireMessage
	if err := json.Unmarshal(body, &wm); err != nil {
		f.fail("create message: %v", err)
	}
	f.check("create message", wm)
	f.checkFlags("create message", wm, 1<<2|1<<12|1<<13|1<<15)
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
	if u, ok := f.dmUser[channel]; ok {
		f.dmAttempts[u]++
		switch {
		case f.blocked[u]:
			discordError(w, http.StatusForbidden, 50007, "Cannot send messages to this user")
			return
		case f.noMutual[u]:
			// docs: Opcodes and Status Codes, 50278 "Cannot send messages to this user due to
			// having no mutual guilds".
			discordError(w, http.StatusForbidden, 50278, "Cannot send messages to this user due to having no mutual guilds")
			return
		}
	} else {
		c := f.channelInfo(channel)
		if !f.guildChannelAllows(w, c, true, files, len(wm.Embeds) > 0) || !f.autoModAllows(w, c, wm) {
			return
		}
		// "Sending a message will automatically unarchive the thread" (docs: Threads, Active &
		// Archived Threads).
		c.Archived = false
	}
	msg := &fakeMessage{ID: f.nextID(), ChannelID: channel}
	f.apply(msg, wm, files)
	f.msgs[msg.ID] = msg
	f.order[channel] = append(f.order[channel], msg.ID)
	f.notify()
	writeJSON(w, 200, map[string]any{"id": msg.ID, "channel_id": channel, "content": msg.Content})
}

func (f *fakeDiscord) editMessage(w http.ResponseWriter, channel, id string, body []byte, files []fakeFile) {
	asked := time.Now()
	var wm wireMessage
	json.Unmarshal(body, &wm)
	f.check("edit message", wm)
	f.checkFlags("edit message", wm, 1<<2|1<<15)
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, dm := f.dmUser[channel]; !dm {
		c := f.channelInfo(channel)
		if !f.guildChannelAllows(w, c, false, files, len(wm.Embeds) > 0) || !f.autoModAllows(w, c, wm) {
			return
		}
		if c.Archived {
			// "Users cannot edit messages ... in archived threads" (docs: Threads); code 50083.
			f.refuse(w, channel, http.StatusBadRequest, 50083, "Thread is archived")
			return
		}
	}
	msg, ok := f.msgs[id]
	if !ok || msg.ChannelID != channel || msg.ForUser != "" {
		discordError(w, 404, 10008, "Unknown Message")
		return
	}
	msg.Edits++
	msg.editAsked = asked
	f.apply(msg, wm, files)
	f.notify()
	writeJSON(w, 200, map[string]any{"id": msg.ID, "channel_id": channel, "content": msg.Content})
}

// Interaction answers are bound to the interaction's app_permissions, "the computed permissions
// for a bot or app in the context of a specific interaction (including any channel overwrites)";
// ATTACH_FILES and EMBED_LINKS are among "the permissions that can be used in interaction
// responses", and "for interactions, you can use the app_permissions field to determine your app
// or bot's contextual permissions before replying" (docs: Change Log, 2022-06-29, Calculated
// Permissions in Interaction Payloads and Changes to Bot Permissions for Interactions and
// Webhooks). An answer that uploads a file where they lack ATTACH_FILES is refused like a post,
// 403 with 50013, as the platform review saw it and PLATFORMS.md records ("Interaction answers
// are checked against app_permissions too"). An app without a bot in the server always has both
// there (#5316, Discord staff), as the fake's responsePermissions say.

// answerAllows refuses an answer of in that the interaction's app_permissions do not allow (f.mu
// held).
func (f *fakeDiscord) answerAllows(w http.ResponseWriter, in *fakeInteraction, files []fakeFile) bool {
	if r := f.answerRefusal(in, files); r != nil {
		discordError(w, r.status, r.code, r.msg)
		return false
	}
	return true
}

// answerRefusal is answerAllows's verdict, nil if the answer may go (f.mu held).
func (f *fakeDiscord) answerRefusal(in *fakeInteraction, files []fakeFile) *fakeRefusal {
	if len(files) > 0 && in.Perms&permAttachFiles == 0 {
		in.Refused = append(in.Refused, 50013)
		f.notify()
		return &fakeRefusal{http.StatusForbidden, 50013, "Missing Permissions"}
	}
	return nil
}

// fakeRefusal is an error answer of Discord's: its HTTP status, its code and message.
type fakeRefusal struct {
	status, code int
	msg          string
}

// callback takes an interaction's first answer at its callback route (gateway mode).
func (f *fakeDiscord) callback(w http.ResponseWriter, id, token string, body []byte, files []fakeFile) {
	if f.viaHTTP {
		// "These two methods are mutually exclusive" (docs: Interactions, Receiving and
		// Responding): the answer goes in the HTTP response, issue 23 says, not here.
		f.fail("interaction %s answered at its callback route while it came by HTTP", id)
	}
	if r := f.takeAnswer(id, token, body, files); r != nil {
		discordError(w, r.status, r.code, r.msg)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// takeAnswer records an interaction's first answer, from its callback route or its HTTP
// response, or gives Discord's refusal.
func (f *fakeDiscord) takeAnswer(id, token string, body []byte, files []fakeFile) *fakeRefusal {
	var req struct {
		Type int         `json:"type"`
		Data wireMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		f.fail("callback body: %v", err)
	}
	f.check("interaction response", req.Data)
	switch req.Type {
	case 4, 7:
		f.checkFlags("interaction response", req.Data, flagsAnswer)
	case 5:
		f.checkFlags("deferred interaction response", req.Data, flagsDeferred)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	in, ok := f.inter[id]
	if !ok || in.Token != token {
		return &fakeRefusal{404, 10062, "Unknown interaction"}
	}
	if in.Resp != nil {
		f.fail("interaction %s answered twice", id)
		return &fakeRefusal{400, 40060, "Interaction has already been acknowledged."}
	}
	now := time.Now()
	if in.Replayed && now.Sub(in.Made) > answerWindow {
		// "If the 3 second deadline is exceeded, the token will be invalidated" (docs:
		// Interactions, Receiving and Responding).
		in.Late++
		f.notify()
		return &fakeRefusal{404, 10062, "Unknown interaction"}
	}
	if r := f.answerRefusal(in, files); r != nil {
		return r
	}
	in.Responded = now
	lat := in.Responded.Sub(in.Dispatched)
	if lat > answerWindow {
		f.fail("interaction %s (from %s) answered after %v", id, in.User.Name, lat)
	}
	f.latencies = append(f.latencies, lat)
	resp := &fakeResponse{Type: req.Type, Flags: req.Data.flags(), Choices: req.Data.Choices, Files: len(files), Attached: files}
	if req.Data.Content != nil {
		resp.Content = *req.Data.Content
	}
	if req.Data.Components != nil {
		resp.Rows = *req.Data.Components
	}
	in.Resp = resp
	switch req.Type {
	case 4, 5: // a message (or "thinking"), ephemeral when flagged
		msg := &fakeMessage{ID: f.nextID(), ChannelID: in.Channel, Interaction: id}
		f.apply(msg, req.Data, files)
		f.msgs[msg.ID] = msg
		if req.Data.flags()&64 != 0 {
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
	case 12:
		// "Launch the Activity associated with the app. Only available for apps with Activities
		// enabled" (docs: Interactions, Interaction Callback Type); not for autocomplete.
		if !f.Activities || in.Type == 4 {
			in.Resp = nil
			return &fakeRefusal{400, 50035, "Invalid Form Body: Activities are not enabled for this application"}
		}
		in.Original = in.Message
		f.launched++
	default:
		f.fail("interaction response type %d", req.Type)
	}
	f.notify()
	return nil
}

// webhookToken finds the interaction of a follow-up or edit; its token works 15 minutes (docs:
// Interactions, Receiving and Responding), else 401 with 50027 Invalid Webhook Token (f.mu held).
func (f *fakeDiscord) webhookToken(w http.ResponseWriter, app, token string) (*fakeInteraction, bool) {
	in, ok := f.byToken[token]
	switch {
	case !ok || app != f.AppID || in.Resp == nil:
		if ok && in.taking {
			f.early404++ // the answer is on its way in (takeLater)
		}
		discordError(w, 404, 10015, "Unknown Webhook")
	case time.Since(in.Made) > tokenLife:
		discordError(w, 401, 50027, "Invalid Webhook Token")
	default:
		return in, true
	}
	return nil, false
}

// getWebhookMessage answers Get Original Interaction Response: "Returns the initial Interaction
// response" (docs: Receiving and Responding), the message as it is now.
func (f *fakeDiscord) getWebhookMessage(w http.ResponseWriter, app, token, which string) {
	f.awaitHTTPAnswer(token)
	f.mu.Lock()
	defer f.mu.Unlock()
	in, ok := f.webhookToken(w, app, token)
	if !ok {
		return
	}
	msg, found := f.msgs[in.Original]
	if which != "@original" || !found {
		discordError(w, 404, 10008, "Unknown Message")
		return
	}
	writeJSON(w, 200, map[string]any{"id": msg.ID, "channel_id": msg.ChannelID, "content": msg.Content})
}

func (f *fakeDiscord) editWebhookMessage(w http.ResponseWriter, app, token, which string, body []byte, files []fakeFile) {
	f.awaitHTTPAnswer(token)
	var wm wireMessage
	json.Unmarshal(body, &wm)
	f.check("webhook edit", wm)
	f.checkFlags("webhook edit", wm, flagsEdit)
	f.mu.Lock()
	defer f.mu.Unlock()
	in, ok := f.webhookToken(w, app, token)
	if !ok {
		return
	}
	if which != "@original" || in.Original == "" {
		discordError(w, 404, 10008, "Unknown Message")
		return
	}
	if !f.answerAllows(w, in, files) {
		return
	}
	msg := f.msgs[in.Original]
	msg.Edits++
	f.apply(msg, wm, files)
	f.notify()
	writeJSON(w, 200, map[string]any{"id": msg.ID, "channel_id": msg.ChannelID, "content": msg.Content})
}

func (f *fakeDiscord) followup(w http.ResponseWriter, app, token string, body []byte, files []fakeFile) {
	f.awaitHTTPAnswer(token)
	var wm wireMessage
	json.Unmarshal(body, &wm)
	f.check("follow-up", wm)
	f.checkFlags("follow-up", wm, flagsFollowup)
	f.mu.Lock()
	defer f.mu.Unlock()
	in, ok := f.webhookToken(w, app, token)
	if !ok || !f.answerAllows(w, in, files) {
		return
	}
	msg := &fakeMessage{ID: f.nextID(), ChannelID: in.Channel, Interaction: in.ID}
	f.apply(msg, wm, files)
	f.msgs[msg.ID] = msg
	if wm.flags()&64 != 0 {
		msg.ForUser = in.User.ID
		f.ephemeral[in.User.ID] = append(f.ephemeral[in.User.ID], msg.ID)
	} else {
		f.order[in.Channel] = append(f.order[in.Channel], msg.ID)
	}
	in.Followups = append(in.Followups, msg.ID)
	f.notify()
	writeJSON(w, 200, map[string]any{"id": msg.ID, "channel_id": msg.ChannelID, "content": msg.Content})
}

// The gateway (docs: Gateway). A connection gets HELLO, then IDENTIFY starts a session (READY)
// or RESUME continues one, replaying what it missed (RESUMED). Sessions are shards: IDENTIFY's
// shard [id, count]; guild events go to shard (guild_id >> 22) % count, DMs to shard 0 only
// (docs: Gateway, Sharding).

var upgrader = websocket.Upgrader{}

type gatewayOp struct {
	Op int             `json:"op"`
	D  json.RawMessage `json:"d"`
}

func (f *fakeDiscord) serveWS(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	down := f.gatewayDown
	f.mu.Unlock()
	if down { // an outage: the connection fails before the websocket is up
		http.Error(w, "upstream connect error", http.StatusBadGateway)
		return
	}
	c, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		f.fail("websocket upgrade: %v", err)
		return
	}
	defer c.Close()
	conn := &fakeConn{c: c}
	conn.send(map[string]any{"op": 10, "d": map[string]any{"heartbeat_interval": 45000}})
	var first gatewayOp
	if err := c.ReadJSON(&first); err != nil {
		return
	}
	var sess *fakeSession
	invalid := false
	switch first.Op {
	case 2:
		sess, invalid = f.identify(conn, r, first.D)
	case 6:
		sess = f.resume(conn, r, first.D)
	default:
		f.fail("expected IDENTIFY or RESUME, got op %d", first.Op)
	}
	if invalid {
		// The connection stays; after an Invalid Session "your app should disconnect", then
		// identify on a new connection (docs: Gateway, Resuming).
		var next gatewayOp
		if err := c.ReadJSON(&next); err == nil && next.Op == 2 {
			f.fail("an IDENTIFY on the connection its Invalid Session came on")
		}
		return
	}
	if sess == nil {
		return
	}
	for {
		var op gatewayOp
		if err := c.ReadJSON(&op); err != nil {
			var ce *websocket.CloseError
			if errors.As(err, &ce) && (ce.Code == websocket.CloseNormalClosure || ce.Code == websocket.CloseGoingAway) {
				// "When you close the connection to the gateway with close code 1000 or 1001,
				// your session will be invalidated" (docs: Gateway, Disconnecting).
				f.mu.Lock()
				sess.valid = false
				f.mu.Unlock()
			}
			break
		}
		if op.Op == 1 {
			conn.send(map[string]any{"op": 11})
		}
	}
	f.mu.Lock()
	if sess.conn == conn {
		sess.conn = nil
	}
	f.notify()
	f.mu.Unlock()
}

// identify starts a session, or refuses: a wrong token closes with 4004, too few shards with 4011,
// an IDENTIFY over max_concurrency gets an Invalid Session (docs: Gateway, Max Concurrency), and
// the day's last session start is a test failure: Discord would reset the token (docs: Gateway,
// Session Start Limit).
func (f *fakeDiscord) identify(conn *fakeConn, r *http.Request, raw json.RawMessage) (sess *fakeSession, invalid bool) {
	var d map[string]any
	json.Unmarshal(raw, &d)
	if d["token"] != "Bot "+f.Token && d["token"] != f.Token {
		f.fail("IDENTIFY without the token")
		conn.c.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(4004, "Authentication failed."))
		return nil, false
	}
	shard, shards := 0, 1
	if s, ok := d["shard"].([]any); ok && len(s) == 2 {
		a, _ := s[0].(float64)
		b, _ := s[1].(float64)
		shard, shards = int(a), int(b)
	}
	f.mu.Lock()
	f.identifies = append(f.identifies, d)
	f.identifiedAtList = append(f.identifiedAtList, time.Now())
	f.StartsLeft--
	left := f.StartsLeft
	key := shard % max(f.MaxConcurrency, 1)
	last, seen := f.identifiedAt[key]
	f.identifiedAt[key] = time.Now()
	f.notify()
	f.mu.Unlock()
	switch {
	case left < 0:
		f.fail("the day's session starts are used up: Discord resets the bot token")
		conn.c.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(4004, "Authentication failed."))
		return nil, false
	case seen && time.Since(last) < f.IdentifyWindow:
		f.fail("shard %d identified %v after another of its bucket, within %v", shard, time.Since(last), f.IdentifyWindow)
		conn.send(map[string]any{"op": 9, "d": false})
		return nil, false
	case f.invalidSessions > 0:
		// A gateway incident: the IDENTIFY is answered with an Invalid Session (docs: Gateway
		// Events, Invalid Session: "the gateway could not initialize a session"), and the
		// session start is spent all the same.
		f.mu.Lock()
		f.invalidSessions--
		f.mu.Unlock()
		conn.send(map[string]any{"op": 9, "d": false})
		return nil, true
	case shards < f.Shards:
		conn.c.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(4011, "Sharding required."))
		return nil, false
	}
	f.mu.Lock()
	sess = &fakeSession{ID: "session-" + f.nextID(), Shard: shard, Shards: shards, conn: conn, valid: true, Began: time.Now()}
	f.sessions[sess.ID], f.shardSession[shard] = sess, sess
	f.countOpen(shard)
	f.mu.Unlock()
	f.send(sess, "READY", map[string]any{"v": 10, "session_id": sess.ID,
		"resume_gateway_url": "ws://" + r.Host + "/ws-resume", "shard": []int{shard, shards},
		"user":        map[string]any{"id": f.BotID, "username": "kontermatt", "bot": true},
		"application": map[string]any{"id": f.AppID, "flags": 0}, "guilds": []any{}, "private_channels": []any{}})
	return sess, false
}

// resume continues a session: the dispatches after the client's seq again, then RESUMED.
// Discord wants a RESUME at the session's resume_gateway_url, and says a client that resumes
// elsewhere "will experience disconnects at a higher rate than normal" (docs: Gateway,
// Resuming); discordgo v0.29.0 resumes where it first connected, so the fake takes a RESUME at
// either address and records which.
func (f *fakeDiscord) resume(conn *fakeConn, r *http.Request, raw json.RawMessage) *fakeSession {
	var d struct {
		Token     string `json:"token"`
		SessionID string `json:"session_id"`
		Seq       int    `json:"seq"`
	}
	json.Unmarshal(raw, &d)
	f.mu.Lock()
	sess, ok := f.sessions[d.SessionID]
	f.resumes = append(f.resumes, r.URL.Path)
	if !ok || !sess.valid || d.Token != "Bot "+f.Token && d.Token != f.Token {
		f.mu.Unlock()
		conn.send(map[string]any{"op": 9, "d": false})
		return nil
	}
	sess.conn = conn
	f.shardSession[sess.Shard] = sess
	f.countOpen(sess.Shard)
	missed := slices.Clone(sess.events[min(d.Seq, len(sess.events)):])
	f.notify()
	f.mu.Unlock()
	for i, ev := range missed {
		conn.send(map[string]any{"op": 0, "s": d.Seq + i + 1, "t": ev["t"], "d": ev["d"]})
	}
	f.send(sess, "RESUMED", map[string]any{})
	return sess
}

// send dispatches an event on a session, keeping it for a RESUME.
func (f *fakeDiscord) send(sess *fakeSession, typ string, d any) {
	f.mu.Lock()
	sess.events = append(sess.events, map[string]any{"t": typ, "d": d})
	seq, conn := len(sess.events), sess.conn
	f.mu.Unlock()
	if conn != nil {
		conn.send(map[string]any{"op": 0, "s": seq, "t": typ, "d": d})
	}
}

// openSessions are the shard's sessions connected now (f.mu held).
func (f *fakeDiscord) openSessions(shard int) []*fakeSession {
	var open []*fakeSession
	for _, s := range f.sessions {
		if s.Shard == shard && s.conn != nil {
			open = append(open, s)
		}
	}
	return open
}

// countOpen notes how many sessions of the shard are connected now (f.mu held).
func (f *fakeDiscord) countOpen(shard int) {
	f.mostOpen[shard] = max(f.mostOpen[shard], len(f.openSessions(shard)))
}

// connected reports whether every shard has a live connection (f.mu held).
func (f *fakeDiscord) connected() bool {
	for shard := range f.Shards {
		if s := f.shardSession[shard]; s == nil || s.conn == nil {
			return false
		}
	}
	return true
}

// invalidate ends a shard's session as the gateway may ("the gateway has invalidated an active
// session and is requesting client action": docs: Gateway Events, Invalid Session), with d false:
// it cannot be resumed.
func (f *fakeDiscord) invalidate(shard int) {
	f.mu.Lock()
	sess := f.shardSession[shard]
	sess.valid = false
	conn := sess.conn
	f.mu.Unlock()
	conn.send(map[string]any{"op": 9, "d": false})
}

// dropConnection breaks a shard's connection as a network failure would: no close frame, so
// the session stays resumable.
func (f *fakeDiscord) dropConnection(shard int) {
	f.mu.Lock()
	sess := f.shardSession[shard]
	conn := sess.conn
	sess.conn = nil
	f.notify()
	f.mu.Unlock()
	conn.c.UnderlyingConn().Close()
}

// shardOf is the shard that gets a channel's events (f.mu held).
func (f *fakeDiscord) shardOf(channel string) int {
	if _, dm := f.dmUser[channel]; dm {
		return 0
	}
	g, _ := strconv.ParseUint(f.channelInfo(channel).Guild, 10, 64)
	return int((g >> 22) % uint64(max(f.Shards, 1)))
}

func userJSON(u fakeUser) map[string]any {
	return map[string]any{"id": u.ID, "username": strings.ToLower(u.Name), "global_name": u.Name}
}

// interaction builds an INTERACTION_CREATE as Discord sends it (docs: Interactions, Interaction
// Object), made at the given time (f.mu held).
func (f *fakeDiscord) interaction(u fakeUser, typ int, channel string, data any, on *fakeMessage, made time.Time) (*fakeInteraction, map[string]any) {
	id := f.snowflake(made)
	in := &fakeInteraction{ID: id, Token: "aW50ZXJhY3Rpb24" + id + "-token-xyz", Type: typ, User: u, Channel: channel, Made: made}
	payload := map[string]any{"id": id, "application_id": f.AppID, "type": typ, "token": in.Token, "version": 1,
		"channel_id": channel, "locale": u.Locale, "data": data}
	if _, dm := f.dmUser[channel]; dm {
		payload["user"], payload["context"] = userJSON(u), 1
		payload["channel"] = map[string]any{"id": channel, "type": 1}
		payload["app_permissions"] = strconv.FormatInt(dmPerms, 10)
		in.Perms = dmPerms
		payload["authorizing_integration_owners"] = map[string]any{"0": "0"}
	} else {
		c := f.channelInfo(channel)
		g := f.guild(c.Guild)
		payload["guild_id"], payload["context"] = c.Guild, 0
		payload["member"] = map[string]any{"user": userJSON(u), "permissions": strconv.FormatInt(u.Perms, 10)}
		// A partial channel; a thread's also has its thread_metadata (docs: Interactions,
		// Interaction Object and Resolved Data Structure): type 11 public, 12 private.
		partial := map[string]any{"id": channel, "type": 0, "guild_id": c.Guild}
		if c.Thread {
			partial["type"] = map[bool]int{false: 11, true: 12}[c.Private]
			partial["thread_metadata"] = map[string]any{"archived": c.Archived, "locked": c.Locked,
				"auto_archive_duration": 1440, "archive_timestamp": made.UTC().Format(time.RFC3339)}
		}
		payload["channel"] = partial
		perms := c.Perms
		switch {
		case g.NotInstalled:
			perms = responsePermissions // @everyone's, cut to what answers can use
			payload["authorizing_integration_owners"] = map[string]any{"1": u.ID}
		case g.CommandsOnly:
			perms = responsePermissions
			payload["authorizing_integration_owners"] = map[string]any{"0": c.Guild}
		default:
			payload["authorizing_integration_owners"] = map[string]any{"0": c.Guild}
		}
		payload["app_permissions"] = strconv.FormatInt(perms, 10)
		in.Perms = perms
	}
	if on != nil {
		in.Message = on.ID
		payload["message"] = map[string]any{"id": on.ID, "channel_id": on.ChannelID, "content": on.Content, "flags": on.Flags}
	}
	f.inter[id], f.byToken[in.Token] = in, in
	return in, payload
}

// dispatch sends an INTERACTION_CREATE on the channel's shard and returns its record.
func (f *fakeDiscord) dispatch(u fakeUser, typ int, channel string, data any, on *fakeMessage) *fakeInteraction {
	f.t.Helper()
	if f.viaHTTP {
		return f.post(u, typ, channel, data, on)
	}
	var sess *fakeSession
	f.waitFor("a gateway connection", func() bool {
		sess = f.shardSession[f.shardOf(channel)]
		return sess != nil && sess.conn != nil
	})
	f.mu.Lock()
	in, payload := f.interaction(u, typ, channel, data, on, time.Now())
	in.Dispatched = time.Now()
	f.dispatched[sess.Shard]++
	open := f.openSessions(sess.Shard) // every session of the shard gets its events
	if len(open) == 0 {
		open = []*fakeSession{sess} // dropped meanwhile: kept for its RESUME
	}
	f.mu.Unlock()
	for _, s := range open {
		f.send(s, "INTERACTION_CREATE", payload)
	}
	return in
}

// missedWhileDown makes an interaction while the channel's shard is disconnected, made long
// enough ago that its answer window is over by the time a RESUME replays it.
func (f *fakeDiscord) missedWhileDown(u fakeUser, channel string, data any, on *fakeMessage, typ int, ago time.Duration) *fakeInteraction {
	f.mu.Lock()
	sess := f.shardSession[f.shardOf(channel)]
	if sess.conn != nil {
		f.mu.Unlock()
		f.t.Fatalf("fake discord: shard %d is connected", sess.Shard)
	}
	made := time.Now().Add(-ago)
	in, payload := f.interaction(u, typ, channel, data, on, made)
	in.Dispatched, in.Replayed = made, true
	f.mu.Unlock()
	f.send(sess, "INTERACTION_CREATE", payload)
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
	return f.dispatch(u, 3, on.ChannelID, buttonData(customID), &on)
}

func buttonData(customID string) map[string]any {
	return map[string]any{"custom_id": customID, "component_type": 2}
}

// slash runs /km <sub> with options as user u in a channel and waits for the answer.
func (f *fakeDiscord) slash(u fakeUser, channel, sub string, opts ...map[string]any) fakeResponse {
	f.t.Helper()
	return f.response(f.dispatch(u, 2, channel, slashData(sub, opts), nil))
}

// slashData is the data of /km <sub>; a sub of two words is a group's subcommand ("league top").
func slashData(sub string, opts []map[string]any) map[string]any {
	if opts == nil {
		opts = []map[string]any{}
	}
	o := map[string]any{"name": sub, "type": 1, "options": opts}
	if group, name, ok := strings.Cut(sub, " "); ok {
		o = map[string]any{"name": group, "type": 2, "options": []any{map[string]any{"name": name, "type": 1, "options": opts}}}
	}
	return map[string]any{"id": "700000000000000001", "name": "km", "type": 1, "options": []any{o}}
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

// refusals gives the codes of the requests refused in a channel.
func (f *fakeDiscord) refusals(channel string) []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.refused[channel])
}

func (f *fakeDiscord) takeLatencies() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.latencies
	f.latencies = nil
	return out
}

// archive archives a thread, as Discord does after its inactivity timeout (docs: Threads, Auto
// Archive).
func (f *fakeDiscord) archive(thread string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.channelInfo(thread)
	if !c.Thread {
		f.t.Fatalf("fake discord: %s is no thread", thread)
	}
	c.Archived = true
}

// entryPoint is the Entry Point command Discord makes when Activities are switched on (docs:
// Application Commands, Entry Point Commands: type PRIMARY_ENTRY_POINT 4, handler
// DISCORD_LAUNCH_ACTIVITY 2), or with the handler the app's owner chose.
func (f *fakeDiscord) entryPoint() map[string]any {
	return map[string]any{"id": "700000000000000004", "application_id": f.AppID, "type": 4, "name": "launch",
		"description": "", "handler": f.entryHandler(), "integration_types": []int{0, 1}, "contexts": []int{0, 1, 2}}
}

func (f *fakeDiscord) entryHandler() int {
	if f.EntryHandler == 1 {
		return 1
	}
	return 2
}

// launchFromEntryPoint runs the app's Entry Point command as u in a channel. With the handler
// APP_HANDLER "the app handles the interaction using an interaction token"; with
// DISCORD_LAUNCH_ACTIVITY "Discord handles the interaction by launching an Activity and sending
// a follow-up message without coordinating with the app" (docs: Application Commands, Entry
// Point Command Handler Types), so the app gets nothing to answer.
func (f *fakeDiscord) launchFromEntryPoint(u fakeUser, channel string) *fakeInteraction {
	f.t.Helper()
	f.mu.Lock()
	ok := f.Activities && f.entryHandler() == 1
	f.mu.Unlock()
	if !ok {
		f.t.Fatalf("fake discord: no Entry Point command whose interactions the app handles")
	}
	return f.dispatch(u, 2, channel, map[string]any{"id": "700000000000000004", "name": "launch", "type": 4}, nil)
}

// globalCommands lists the global commands: what the last global overwrite registered, or with
// Activities switched on only the Entry Point.
func (f *fakeDiscord) globalCommands(w http.ResponseWriter) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var cmds []any
	if f.commands != nil && strings.Count(f.commandsPath, "/") == 2 {
		json.Unmarshal(f.commands, &cmds)
	} else if f.Activities {
		cmds = []any{f.entryPoint()}
	}
	if cmds == nil {
		cmds = []any{}
	}
	writeJSON(w, 200, cmds)
}

// serveOAuth is the OAuth2 side (docs: OAuth2): the authorization code exchange, which needs the
// client's ID and secret and takes each code once, and the requests made with the access token.
func (f *fakeDiscord) serveOAuth(w http.ResponseWriter, r *http.Request, path string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case r.Method == "POST" && path == "oauth2/token" && f.tokenLimited > 0:
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(f.tokenLimited))))
		writeJSON(w, 429, map[string]any{"message": "You are being rate limited.", "retry_after": f.tokenLimited, "global": false})
		f.tokenLimited = 0
	case r.Method == "POST" && path == "oauth2/token":
		if err := r.ParseForm(); err != nil || r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
			writeJSON(w, 400, map[string]any{"error": "invalid_request"})
			return
		}
		if r.PostForm.Get("client_id") != f.AppID || r.PostForm.Get("client_secret") != f.ClientSecret {
			writeJSON(w, 401, map[string]any{"error": "invalid_client"})
			return
		}
		u, ok := f.codes[r.PostForm.Get("code")]
		if r.PostForm.Get("grant_type") != "authorization_code" || !ok {
			writeJSON(w, 400, map[string]any{"error": "invalid_grant"})
			return
		}
		delete(f.codes, r.PostForm.Get("code")) // a code is good once
		tok := "access-" + f.nextID()
		f.tokens[tok] = u
		writeJSON(w, 200, map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 604800,
			"refresh_token": "refresh-" + tok, "scope": "identify"})
	case r.Method == "GET" && path == "users/@me":
		u, ok := f.tokens[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
		if !ok {
			discordError(w, 401, 0, "401: Unauthorized")
			return
		}
		writeJSON(w, 200, map[string]any{"id": u.ID, "username": strings.ToLower(u.Name), "global_name": u.Name,
			"locale": u.Locale, "discriminator": "0"})
	default:
		f.fail("a bearer token used for %s %s", r.Method, path)
		discordError(w, 403, 0, "403: Forbidden")
	}
}

// activityInstance answers GET /applications/{app}/activity-instances/{instance} (the bot's
// token): the instance's location and participants, or 404 Unknown.
func (f *fakeDiscord) activityInstance(w http.ResponseWriter, app, id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	in, ok := f.instances[id]
	if app != f.AppID || !ok {
		discordError(w, 404, 10001, "Unknown Application")
		return
	}
	loc := map[string]any{"id": "gc-" + in.Guild + "-" + in.Channel, "kind": "gc", "channel_id": in.Channel, "guild_id": in.Guild}
	if in.Guild == "" {
		loc = map[string]any{"id": "pc-" + in.Channel, "kind": "pc", "channel_id": in.Channel}
	}
	writeJSON(w, 200, map[string]any{"application_id": f.AppID, "instance_id": id, "launch_id": "1", "location": loc,
		"users": in.Users})
}

package web

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// The socket's protocol is JSON text messages. The page says hello with its session and the
// sequence number of the view it shows, then sends moves; the server sends views (each with the
// table's sequence number), the page's texts when its language is set or changes, refusals of
// moves and notes, and a last word before it closes the socket.
//
//	page:   {"t":"hello","session":"…","seq":41}
//	page:   {"t":"move","verb":"play","arg":"QS","seq":41,"id":"m7"}
//	page:   {"t":"move","verb":"back","seq":41,"id":"m8"}   (I'm back: the seat is the player's again)
//	page:   {"t":"ping"}
//	page:   {"t":"watchlink"}                           (a seated player asks for the table's watch link)
//	server: {"t":"ping","beat":4000}                       (first, then {"t":"ping"} while idle)
//	server: {"t":"view","view":{…SeatView…}}
//	server: {"t":"strings","lang":"de","strings":{…}}
//	server: {"t":"refused","id":"m7","text":"…"}
//	server: {"t":"note","text":"…"}
//	server: {"t":"board","png":"data:image/png;base64,…","text":"…"}  (the stripe board as the chats draw
//	                                              it, with its alt text: when a game ends, and first)
//	server: {"t":"watchers","n":2}                     (how many watch without a seat, when it changes)
//	server: {"t":"watchlink","text":"https://…"}
//	page:   {"t":"shown","seq":41}                      (the page has shown the table at 41: its last card is on show)
//	page:   {"t":"replays"}                                (the kept matches of the table's place)
//	server: {"t":"replays","list":{"lines":["…"],"empty":"…"}}
//	page:   {"t":"replay","n":1}                           (the first match listed, step by step)
//	server: {"t":"replay","n":1,"replay":{…ReplayMatch…}}
//	server: {"t":"bye","text":"…"}              (with "renew":true: the session is over, get a new one;
//	                                              with "why":"elsewhere": another tab took the seat)
//
// Heartbeats go both ways: each side sends a ping after Config.Heartbeat without sending
// anything else. The page counts the server lost after two beats without a word and shows so;
// the server ends a socket whose page said nothing for pageSilence beats.

type inbound struct {
	T       string `json:"t"`
	Session string `json:"session"`
	Verb    string `json:"verb"`
	Arg     string `json:"arg"`
	Seq     uint64 `json:"seq"`
	ID      string `json:"id"`
	Dark    bool   `json:"dark"` // hello: the page's theme, for the board's picture
	N       int    `json:"n"`    // replay: which kept match, as replays listed it (from 1)
}

type outbound struct {
	T       string            `json:"t"`
	View    *SeatView         `json:"view,omitempty"`
	Lang    string            `json:"lang,omitempty"`
	Strings map[string]string `json:"strings,omitempty"`
	ID      string            `json:"id,omitempty"`
	Text    string            `json:"text,omitempty"`
	Renew   bool              `json:"renew,omitempty"`
	Why     string            `json:"why,omitempty"`  // a bye's reason the page acts on: "elsewhere"
	Beat    int64             `json:"beat,omitempty"` // the first ping: the heartbeat in ms
	PNG     string            `json:"png,omitempty"`  // a board: its picture as a data: URL
	N       int               `json:"n,omitempty"`    // watchers: how many
	List    *ReplayList       `json:"list,omitempty"`
	Replay  *ReplayMatch      `json:"replay,omitempty"`
}

// pageSilence is how many heartbeats a page may say nothing before its socket is ended.
const pageSilence = 8

// moveVerbs are the commands the page may send; join only from a place the platform vouched for
// (a Discord Activity's channel). "back" is the page's "I'm back": any command from a player
// marked away gives them their seat again, and the board is one that changes nothing else (its
// answer, the board's text, is not shown: the page shows the board).
var moveVerbs = map[string]api.Verb{"play": api.VerbPlay, "trump": api.VerbTrump, "announce": api.VerbAnnounce,
	"deal": api.VerbDeal, "rematch": api.VerbRematch, "join": api.VerbJoin, "back": api.VerbBoard}

var moveID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)

// helloWithin is how long a new socket may take to say who it is.
const helloWithin = 10 * time.Second

// sock is one player's socket at one table.
type sock struct {
	s      *Server
	conn   *websocket.Conn
	t      ticket
	player api.Player
	table  string
	ctx    context.Context
	cancel context.CancelFunc
	ended  atomic.Bool // the last word is said: nothing the page sends counts any more

	mu      sync.Mutex
	view    []byte   // the newest view not yet written
	msgs    [][]byte // other messages not yet written, in order
	bye     []byte   // the last word, then close
	byeCode websocket.StatusCode
	lang    string // the language of the texts the page has
	wake    chan struct{}
	last    uint64 // the sequence number of the newest view queued
	dark    bool   // the page's theme
	board   string // what the board picture sent last shows: language and games
}

func (s *Server) serveSocket(w http.ResponseWriter, r *http.Request) {
	if !s.allowedOrigin(r) {
		http.Error(w, "forbidden origin", http.StatusForbidden)
		return
	}
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true}) // origin checked above
	if err != nil {
		return // Accept answered the request
	}
	c.SetReadLimit(s.cfg.MaxMessage)
	s.wg.Add(1)
	defer s.wg.Done()
	ctx, cancel := context.WithCancel(s.life)
	defer cancel()
	lang := i18n.Pick(r.Header.Get("Accept-Language"))
	hctx, hcancel := context.WithTimeout(ctx, helloWithin)
	var hello inbound
	_, data, err := c.Read(hctx)
	hcancel()
	if err != nil || json.Unmarshal(data, &hello) != nil || hello.T != "hello" {
		c.Close(websocket.StatusPolicyViolation, "say hello first")
		return
	}
	t, err := s.session(hello.Session)
	if err != nil {
		s.refuseSocket(ctx, c, lang, "web.expired")
		return
	}
	lang = i18n.Pick(t.Locale, lang)
	if why := s.sessionEnded(ctx, t, s.cfg.Now()); why != "" {
		s.refuseSocket(ctx, c, lang, why)
		return
	}
	if t.Table == "" {
		s.refuseSocket(ctx, c, lang, "err.no_table")
		return
	}
	v, ok := s.SeatView(ctx, t.Table, t.player())
	switch {
	case !ok:
		s.refuseSocket(ctx, c, lang, "err.closed")
		return
	case v.You < 0 && t.Place == "" && !t.watching():
		s.refuseSocket(ctx, c, lang, "web.not_seated")
		return
	}
	k := &sock{s: s, conn: c, t: t, player: t.player(), table: t.Table, ctx: ctx, cancel: cancel,
		wake: make(chan struct{}, 1), dark: hello.Dark}
	k.send(outbound{T: "ping", Beat: s.cfg.Heartbeat.Milliseconds()}) // the first word, before any view
	s.hub.join(k)
	defer s.hub.leave(k)
	// The table may have changed since v was taken, and the hub told only the sockets it knew
	// then: the view is taken again now that the socket hears of every change, else the page
	// shows the table from before until the next move (perhaps its own player's, whose turn
	// it then does not show).
	if now, ok := s.SeatView(ctx, t.Table, t.player()); ok {
		v = now
	}
	k.push(v)
	go k.writer()
	k.read()
}

// refuseSocket tells the page why it cannot have the table and closes the socket.
func (s *Server) refuseSocket(ctx context.Context, c *websocket.Conn, lang, key string) {
	data, _ := json.Marshal(outbound{T: "bye", Text: i18n.T(lang, key), Renew: renews(key)})
	wctx, cancel := context.WithTimeout(ctx, s.cfg.WriteTimeout)
	defer cancel()
	_ = c.Write(wctx, websocket.MessageText, data)
	c.Close(websocket.StatusPolicyViolation, key)
}

// push queues a view; only the newest waiting view is written. The page's texts go first when
// the view's language is new to it, and the board's picture when a game ended since the last.
func (k *sock) push(v SeatView) {
	data, err := json.Marshal(outbound{T: "view", View: &v})
	if err != nil {
		k.s.log.Error("encoding a view", "err", err)
		return
	}
	board := k.boardPicture(v)
	k.mu.Lock()
	defer k.mu.Unlock()
	if v.Seq < k.last {
		return // a newer view is already on its way
	}
	k.last = v.Seq
	if v.Lang != k.lang {
		k.lang = v.Lang
		s, _ := json.Marshal(outbound{T: "strings", Lang: v.Lang, Strings: pageStrings(v.Lang)})
		k.msgs = append(k.msgs, s)
	}
	if board != nil {
		k.msgs = append(k.msgs, board)
	}
	k.view = data
	k.signal()
}

// boardPicture is the board message for v when its picture changed since the socket's last (a
// game ended, the language changed), else nil. Drawn here, outside every lock: it takes
// milliseconds, and only once a game.
func (k *sock) boardPicture(v SeatView) []byte {
	key := fmt.Sprint(v.Table, " ", v.Lang, " ", len(v.Board.Games))
	k.mu.Lock()
	same := k.board == key
	dark := k.dark
	k.mu.Unlock()
	if same {
		return nil
	}
	png, alt, err := k.s.service().Picture(k.ctx, api.Message{Table: v.Table, Picture: api.PictureBoard, Lang: v.Lang}, dark)
	if err != nil {
		k.s.log.Debug("drawing the board for the page", "table", v.Table, "err", err)
		return nil
	}
	data, _ := json.Marshal(outbound{T: "board", PNG: "data:image/png;base64," + base64.StdEncoding.EncodeToString(png), Text: alt})
	k.mu.Lock()
	k.board = key
	k.mu.Unlock()
	return data
}

// maxQueued bounds the refusals and notes waiting for a page that does not read.
const maxQueued = 32

func (k *sock) send(o outbound) {
	data, _ := json.Marshal(o)
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.msgs) >= maxQueued {
		return
	}
	k.msgs = append(k.msgs, data)
	k.signal()
}

// goodbye says a last word and closes the socket with code; what the page sends after it no
// longer counts.
func (k *sock) goodbye(o outbound, code websocket.StatusCode) {
	o.T = "bye"
	data, _ := json.Marshal(o)
	k.ended.Store(true)
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.bye == nil {
		k.bye, k.byeCode = data, code
	}
	k.signal()
}

// end closes a socket whose session no longer holds, saying why (a catalog key).
func (k *sock) end(why string) {
	k.s.log.Debug("a socket's session ended", "player", k.player.ID, "table", k.table, "why", why)
	k.goodbye(outbound{Text: i18n.T(k.langNow(), why), Renew: renews(why)}, websocket.StatusPolicyViolation)
}

// renews tells whether a refusal means the page's session is over: a new one may hold.
func renews(key string) bool {
	return key == "web.expired" || key == "web.session_over" || key == "web.left_activity"
}

func (k *sock) signal() {
	select {
	case k.wake <- struct{}{}:
	default:
	}
}

// ping is the heartbeat a side sends when it has said nothing for a beat.
var ping = []byte(`{"t":"ping"}`)

// writer writes what is queued until the socket ends, and a ping after a heartbeat of silence;
// a write that takes longer than Config.WriteTimeout ends it.
func (k *sock) writer() {
	defer k.cancel()
	beat := time.NewTimer(k.s.cfg.Heartbeat)
	defer beat.Stop()
	for {
		var msgs [][]byte
		select {
		case <-k.ctx.Done():
			k.conn.Close(websocket.StatusGoingAway, "the bot restarts")
			return
		case <-beat.C:
			msgs = append(msgs, ping)
		case <-k.wake:
		}
		k.mu.Lock()
		msgs, view, bye := append(msgs, k.msgs...), k.view, k.bye
		k.msgs, k.view = nil, nil
		k.mu.Unlock()
		if view != nil {
			msgs = append(msgs, view)
		}
		for _, m := range msgs {
			if err := k.write(m); err != nil {
				return
			}
		}
		if bye != nil {
			_ = k.write(bye)
			k.mu.Lock()
			code := k.byeCode
			k.mu.Unlock()
			k.conn.Close(code, "bye")
			return
		}
		beat.Reset(k.s.cfg.Heartbeat)
	}
}

func (k *sock) write(data []byte) error {
	ctx, cancel := context.WithTimeout(k.ctx, k.s.cfg.WriteTimeout)
	defer cancel()
	return k.conn.Write(ctx, websocket.MessageText, data)
}

// read takes the page's moves until the socket ends. A message too big closes the socket (the
// library's read limit); one that is not a move is refused; a page silent for pageSilence
// heartbeats is gone (the library closes the connection when the read's context ends).
func (k *sock) read() {
	defer k.cancel()
	for {
		ctx, cancel := context.WithTimeout(k.ctx, pageSilence*k.s.cfg.Heartbeat)
		typ, data, err := k.conn.Read(ctx)
		cancel()
		if err != nil {
			if k.ctx.Err() == nil && !closedNormally(err) {
				k.s.log.Debug("socket read", "err", err)
			}
			return
		}
		if k.ended.Load() {
			continue // the last word is on its way; the writer closes the socket
		}
		var m inbound
		if typ == websocket.MessageText && json.Unmarshal(data, &m) == nil && m.T == "ping" {
			continue // the page is there
		}
		if m.T == "watchlink" && !k.t.watching() {
			k.send(outbound{T: "watchlink", Text: k.s.WatchLink(k.table)})
			continue
		}
		if m.T == "shown" {
			k.shown(m.Seq)
			continue
		}
		if m.T == "replays" || m.T == "replay" {
			k.replayAsked(m)
			continue
		}
		if typ != websocket.MessageText || json.Unmarshal(data, &m) != nil || m.T != "move" {
			k.send(outbound{T: "refused", Text: i18n.T(k.langNow(), "web.bad_message")})
			continue
		}
		k.move(m)
	}
}

// shown passes on what a seated person's page shows, where the page is the place's public table
// (a place of the web's own: bot -web's table): the game then follows the page's timeline, as it
// follows the chats' table messages (table.Service.Shown). A page of a chat's table says nothing:
// the chat's message is that place's table.
func (k *sock) shown(seq uint64) {
	if k.t.watching() || seq == 0 {
		return
	}
	svc := k.s.service()
	if place, ok := svc.PlaceOf(k.table); ok && place.Platform == Platform {
		svc.Shown(place, seq)
	}
}

// replayAsked answers the page's request for the kept matches, or for one of them step by step;
// it counts against the player's moves, as it reads the store.
func (k *sock) replayAsked(m inbound) {
	lang := k.langNow()
	if ok, _ := k.s.moves.allow(k.table+" "+k.player.ID, k.s.cfg.Now()); !ok {
		k.send(outbound{T: "refused", Text: i18n.T(lang, "web.too_fast")})
		return
	}
	if m.T == "replays" {
		list, err := k.replays()
		if err != nil {
			k.send(outbound{T: "note", Text: replayProblem(lang, err)})
			return
		}
		k.send(outbound{T: "replays", List: &list})
		return
	}
	rm, err := k.replay(m.N)
	if err != nil {
		k.send(outbound{T: "note", Text: replayProblem(lang, err)})
		return
	}
	k.send(outbound{T: "replay", N: m.N, Replay: &rm})
}

// replayProblem is what the page is told when a replay cannot be had: the service's refusal as
// it said it, else that the match is no longer kept.
func replayProblem(lang string, err error) string {
	var said replyError
	if errors.As(err, &said) {
		return string(said)
	}
	return i18n.T(lang, "history.gone")
}

func closedNormally(err error) bool {
	s := websocket.CloseStatus(err)
	return s == websocket.StatusNormalClosure || s == websocket.StatusGoingAway || errors.Is(err, context.Canceled)
}

func (k *sock) langNow() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return i18n.Pick(k.lang, k.player.Locale)
}

// move hands one move to the service as the session's player, after checking the session
// still holds (else the socket ends), and refusing the move if the player sends too fast or it
// is not a move the page may send.
func (k *sock) move(m inbound) {
	now := k.s.cfg.Now()
	if why := k.s.sessionEnded(k.ctx, k.t, now); why != "" {
		k.end(why)
		return
	}
	lang := k.langNow()
	refuse := func(text string) { k.send(outbound{T: "refused", ID: m.ID, Text: text}) }
	if k.t.watching() {
		refuse(i18n.T(lang, "web.not_seated")) // a watcher makes no move
		return
	}
	if ok, _ := k.s.moves.allow(k.table+" "+k.player.ID, now); !ok {
		refuse(i18n.T(lang, "web.too_fast"))
		return
	}
	verb, ok := moveVerbs[m.Verb]
	if !ok || !moveID.MatchString(m.ID) || m.Seq == 0 || len(m.Arg) > 16 || verb == api.VerbJoin && k.t.Place == "" {
		refuse(i18n.T(lang, "web.bad_message"))
		return
	}
	place := api.Place{Platform: Platform, Chat: k.player.ID}
	if p, ok := api.ParsePlaceKey(k.t.Place); ok {
		// The place the platform vouched the person is in (a Discord Activity's channel): its
		// table answers them there, seated or not; a private place only for their own seat.
		place = p
	}
	cmd := api.Command{Place: place, Table: k.table, Actor: k.player,
		Verb: verb, EventID: "web:" + k.player.ID + ":" + k.table + ":" + m.ID, Seq: m.Seq, Private: true}
	if a := strings.TrimSpace(m.Arg); a != "" {
		cmd.Args = []string{a}
	}
	replies, _ := k.s.service().Handle(k.ctx, cmd) // a command not done is refused in its replies
	for _, r := range replies {
		switch {
		case r.Kind == api.KindError:
			refuse(r.Text)
		case m.Verb == "back":
		case r.Kind == api.KindNotice, r.Kind == api.KindReply:
			k.send(outbound{T: "note", ID: m.ID, Text: r.Text})
		}
	}
}

// hub knows the sockets of each table and brings them new views when the table changes.
type hub struct {
	s     *Server
	mu    sync.Mutex
	rooms map[string]*room
	wg    sync.WaitGroup // the rooms' refreshers: Close waits for them
}

// room is one table's sockets, one per player, and its refresher.
type room struct {
	id    string
	socks map[string]*sock // by player ID
	dirty chan struct{}    // the table changed
	done  chan struct{}    // closed when the room empties
}

func (h *hub) init(s *Server) {
	h.s = s
	h.rooms = map[string]*room{}
}

// join adds a socket to its table's room; an older socket of the same player at that table is
// told it is replaced and closes.
func (h *hub) join(k *sock) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.rooms[k.table]
	if r == nil {
		r = &room{id: k.table, socks: map[string]*sock{}, dirty: make(chan struct{}, 1), done: make(chan struct{})}
		h.rooms[k.table] = r
		h.wg.Add(1)
		go h.refresh(r)
	}
	if old := r.socks[k.player.ID]; old != nil {
		old.goodbye(outbound{Text: i18n.T(old.langNow(), "web.elsewhere"), Why: "elsewhere"}, websocket.StatusNormalClosure)
	}
	r.socks[k.player.ID] = k
	r.countWatchers(k.t.watching())
}

// countWatchers tells the room's sockets how many watch without a seat, when a watcher came or
// went (changed), and a newcomer the count there is. Called under the hub's lock.
func (r *room) countWatchers(changed bool) {
	n := 0
	for _, k := range r.socks {
		if k.t.watching() {
			n++
		}
	}
	for _, k := range r.socks {
		if changed || n > 0 {
			k.send(outbound{T: "watchers", N: n})
		}
	}
}

func (h *hub) leave(k *sock) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.rooms[k.table]
	if r == nil || r.socks[k.player.ID] != k {
		return
	}
	delete(r.socks, k.player.ID)
	if len(r.socks) == 0 {
		delete(h.rooms, k.table)
		close(r.done)
		return
	}
	if k.t.watching() {
		r.countWatchers(true)
	}
}

// changed marks a table's views stale; it never waits.
func (h *hub) changed(tableID string) {
	h.mu.Lock()
	r := h.rooms[tableID]
	h.mu.Unlock()
	if r == nil {
		return
	}
	select {
	case r.dirty <- struct{}{}:
	default:
	}
}

// refresh gives every socket of the room its new view each time the table changes, until the
// room empties or the server closes. Changes that come while it works are taken together.
func (h *hub) refresh(r *room) {
	defer h.wg.Done()
	for {
		select {
		case <-r.done:
			return
		case <-h.s.life.Done():
			return
		case <-r.dirty:
		}
		h.mu.Lock()
		socks := make([]*sock, 0, len(r.socks))
		for _, k := range r.socks {
			socks = append(socks, k)
		}
		h.mu.Unlock()
		for _, k := range socks {
			v, ok := h.s.SeatView(k.ctx, r.id, k.player)
			if !ok {
				k.goodbye(outbound{Text: i18n.T(k.langNow(), "err.closed")}, websocket.StatusNormalClosure)
				continue
			}
			k.push(v)
		}
	}
}

// all lists the open sockets.
func (h *hub) all() []*sock {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []*sock
	for _, r := range h.rooms {
		for _, k := range r.socks {
			out = append(out, k)
		}
	}
	return out
}

// Sockets is how many sockets are open, for metrics and tests.
func (s *Server) Sockets() int {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	n := 0
	for _, r := range s.hub.rooms {
		n += len(r.socks)
	}
	return n
}

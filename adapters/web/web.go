// Package web is the web table: an HTTP server in the bot's process that serves one page (HTML,
// CSS and plain JavaScript, embedded) and a WebSocket per player. The same page runs as a
// Telegram Mini App, as a Discord Activity and in any browser; the server pushes each player
// their own view of the table (SeatView, from render.Seen: their hand only, the public table) and turns the
// moves the page sends into the same table.Commands a button press makes, with the player taken
// from a verified session, never from the page.
//
// Who someone is comes from their platform: Telegram's signed initData (Config.Telegram), a
// Discord Activity's OAuth2 code exchanged with the application's client secret
// (Config.Discord), or a one-time link that a chat adapter made for a player who asked for their
// hand (Server.Link). Each becomes a session, a ticket signed with Config.LinkKey.
//
// The web is not a platform of its own: tables live in chats. Wrap each chat platform's outbox
// with Tee, so the server learns when a table's messages change and pushes its new views.
//
// Wiring:
//
//	w, err := web.New(web.Config{Listen: addr, PublicURL: url, KV: store, Telegram: tg, Discord: dc})
//	outboxes[telegram.Platform] = w.Tee(tgAdapter)
//	svc := table.New(table.Config{Outboxes: outboxes, ...})
//	w.Attach(svc)
//	err = w.Run(ctx) // serve until ctx ends; open sockets are told the bot restarts
package web

import (
	"context"
	"crypto/rand"
	"embed"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/kontermatt/kontermatt/adapters/httpserve"
	"github.com/kontermatt/kontermatt/adapters/internal/chat"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/render"
)

// Platform names the web table in the places of the commands it sends: a player's private
// channel to the table, like a DM.
const Platform = "web"

// Service is what the web table asks of the table service; *table.Service satisfies it.
type Service interface {
	Handle(ctx context.Context, cmd api.Command) ([]api.Message, error)
	// Seen is what p may see of a table (their own hand only): the page's view is drawn from it.
	Seen(ctx context.Context, tableID string, p api.Player) (render.Seen, bool)
	TableAt(p api.Place) string
	// Shown tells the service what the place's public table shows (its sequence number): where
	// the page is the place's table (bot -web's), computer players wait until it showed what
	// came before, as they wait for the chats' table messages.
	Shown(p api.Place, seq uint64)
	// PlaceOf is where a table is played: its kept matches (history) are that place's.
	PlaceOf(tableID string) (api.Place, bool)
	// Picture draws a message's picture: the page shows the stripe board as the chats do.
	Picture(ctx context.Context, m api.Message, dark bool) (png []byte, alt string, err error)
}

var _ Service = (*table.Service)(nil)

// Telegram checks a Telegram Mini App's initData (the telegram adapter's CheckInitData): the
// user it vouches for and the start parameter of a t.me/<bot>/<app>?startapp= link.
type Telegram interface {
	CheckInitData(initData string, now time.Time) (p api.Player, startParam string, err error)
}

// Discord identifies the user of a Discord Activity (the discord adapter's ActivityUser): it
// exchanges the OAuth2 code for a token with the client secret, asks Discord who the user is,
// and which channel the activity instance runs in, the user being in it.
type Discord interface {
	// AppID is the application's ID (the page's client_id), "" while it is not known yet.
	AppID() string
	// ActivityUser's error says so when Discord asked to wait (a 429): it has a method
	// RetryAfter() time.Duration, and no code is exchanged until then.
	ActivityUser(ctx context.Context, code, instanceID string) (api.Player, api.Place, error)
	// ActivityPlayers are the players taking part in an activity instance now (the IDs
	// ActivityUser gives); none once the instance has ended.
	ActivityPlayers(ctx context.Context, instanceID string) ([]string, error)
}

// Config sets up a Server. Listen (or Listener), PublicURL and KV are required.
type Config struct {
	Listen string // host:port to listen on, e.g. 127.0.0.1:8480 behind a reverse proxy
	// Listener, if set, is served instead of listening on Listen (socket activation, tests).
	Listener net.Listener
	// HTTP are the server's limits; a zero field takes the web table's default (see webLimits).
	HTTP httpserve.Limits
	// PublicURL is the page's public address (https://table.example.org, or with a path
	// prefix): the links point there, and a browser's page must come from its origin.
	PublicURL string
	// LinkKey signs links and sessions; without one a random key is made at start, and links
	// and sessions of an earlier process are no longer valid.
	LinkKey []byte
	KV      table.KV // which one-time links were used
	Log     *slog.Logger
	// Telegram and Discord verify who opens the page from those apps; nil: not offered.
	Telegram Telegram
	Discord  Discord

	Now  func() time.Time // default time.Now
	Rand io.Reader        // nonces and a missing LinkKey; default crypto/rand
	// LinkTTL is how long a one-time link may be used (default 10 minutes); SessionTTL how long
	// a session lasts (default 12 hours).
	LinkTTL, SessionTTL time.Duration
	// MoveRate and MoveBurst limit the moves one player may send at one table, over all the
	// sockets they open (default 5 a second, a burst of 5); more are refused, not applied.
	MoveRate  rate.Limit
	MoveBurst int
	// MaxMessage bounds one message from the page (default: the largest legal hello, maxHello);
	// a larger one closes the socket.
	MaxMessage int64
	// RecheckEvery is how often an open socket's session is checked again (default a minute):
	// a session that expired, or a Discord member who left the channel's Activity, ends the
	// socket with the reason. Every move checks it too.
	RecheckEvery time.Duration
	// WriteTimeout bounds one write to a socket (default 10 s): a page that reads nothing is
	// closed.
	WriteTimeout time.Duration
	// Heartbeat is how long a socket may be silent before its side sends a ping (default 4 s):
	// the page shows the connection lost after two beats without a word from the server, and
	// the server ends a socket whose page said nothing for eight.
	Heartbeat time.Duration
}

//go:embed page
var page embed.FS

// Server is the web table.
type Server struct {
	cfg    Config
	log    *slog.Logger
	sign   signer
	public *url.URL
	link   *chat.Link

	svcMu sync.RWMutex
	svc   Service

	linkMu sync.Mutex // redeeming a link: checked and marked used as one step
	randMu sync.Mutex // Config.Rand need not be safe for concurrent use

	hub hub

	moves     *limiters // by table and player
	perAddr   *limiters // session requests by client address
	perUser   *limiters // sessions by Discord user
	exchanges *limiters // the bot's code exchanges with Discord, all together ("")
	shares    *limiters // each network's share of them (shareKey)
	dcWait    waitUntil // Discord's last Retry-After for the code exchange
	members   members   // who takes part in each Discord Activity instance, as Discord last said

	life   context.Context // ends at Close: every socket goes
	stop   context.CancelFunc
	wg     sync.WaitGroup // sockets
	srvMu  sync.Mutex
	server *httpserve.Server
}

// webLimits are the web table's HTTP limits: a session request waits for Discord's code
// exchange (up to 15 s) before it is answered; the sockets are hijacked and so outlive the
// timeouts; a browser opens a few connections per page, and many people may share an address
// (a household, a mobile carrier's NAT); the reverse proxy is on this machine unless the host
// says otherwise (trusted_proxies).
var webLimits = httpserve.Limits{ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 20 * time.Second,
	WriteTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 16 << 10, MaxBody: maxBody,
	MaxConns: 1024, MaxConnsPerAddr: 64, Proxies: httpserve.Loopback}

// New makes a server; it listens from Run.
func New(cfg Config) (*Server, error) {
	if cfg.KV == nil {
		return nil, errors.New("web: no KV store")
	}
	pub, err := url.Parse(strings.TrimSuffix(cfg.PublicURL, "/"))
	if err != nil || (pub.Scheme != "https" && pub.Scheme != "http") || pub.Host == "" || pub.RawQuery != "" || pub.Fragment != "" {
		return nil, fmt.Errorf("web: public_url %q is not an http(s) address without a query", cfg.PublicURL)
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Reader
	}
	if cfg.LinkTTL <= 0 {
		cfg.LinkTTL = 10 * time.Minute
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = 12 * time.Hour
	}
	if cfg.MoveRate <= 0 {
		cfg.MoveRate = 5
	}
	if cfg.MoveBurst <= 0 {
		cfg.MoveBurst = 5
	}
	if cfg.MaxMessage <= 0 {
		cfg.MaxMessage = int64(maxHello)
	}
	if cfg.RecheckEvery <= 0 {
		cfg.RecheckEvery = time.Minute
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = 10 * time.Second
	}
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = 4 * time.Second
	}
	key := cfg.LinkKey
	if len(key) == 0 {
		key = make([]byte, 32)
		if _, err := io.ReadFull(cfg.Rand, key); err != nil {
			return nil, fmt.Errorf("web: making a link key: %w", err)
		}
	} else if len(key) < 16 {
		return nil, errors.New("web: the link key must have at least 16 bytes")
	}
	s := &Server{cfg: cfg, log: cfg.Log.With("platform", Platform), sign: signer{key: key}, public: pub, link: chat.NewLink(),
		moves: newLimiters(cfg.MoveRate, cfg.MoveBurst), perAddr: newLimiters(rate.Every(sessionEvery), sessionBurst),
		perUser: newLimiters(rate.Every(userEvery), userBurst), exchanges: newLimiters(rate.Every(exchangeEvery), exchangeBurst),
		shares: newLimiters(rate.Every(exchangeShareEvery), exchangeShareBurst)}
	s.hub.init(s)
	s.members.init()
	s.life, s.stop = context.WithCancel(context.Background())
	return s, nil
}

// Verify sets who vouches for the people who open the page from Telegram and from Discord (the
// platforms' adapters, made after the server); nil leaves one out. Call it before Run.
func (s *Server) Verify(tg Telegram, dc Discord) {
	s.cfg.Telegram, s.cfg.Discord = tg, dc
}

// Attach gives the server the service its moves go to. Call it before Run.
func (s *Server) Attach(svc Service) {
	s.svcMu.Lock()
	defer s.svcMu.Unlock()
	s.svc = svc
}

func (s *Server) service() Service {
	s.svcMu.RLock()
	defer s.svcMu.RUnlock()
	return s.svc
}

// PublicURL is the page's public address.
func (s *Server) PublicURL() string { return s.public.String() }

// Connected is nil while the server listens, else why not: the health check's view.
func (s *Server) Connected() error { return s.link.Connected() }

// Run listens on Config.Listen and serves until ctx ends; then every socket is told the bot
// restarts (the pages connect again by themselves) and Run returns. A failure to listen is a
// chat.StartError, worth another try.
func (s *Server) Run(ctx context.Context) error {
	if s.service() == nil {
		return errors.New("web: Run before Attach")
	}
	ln := s.cfg.Listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", s.cfg.Listen); err != nil {
			s.link.Down(err)
			return &chat.StartError{Err: fmt.Errorf("web: %w", err)}
		}
	}
	srv := httpserve.New("web table", s.Handler(), s.cfg.HTTP.Or(webLimits), s.log)
	s.srvMu.Lock()
	s.server = srv
	s.srvMu.Unlock()
	s.link.Up()
	lim := srv.Limits()
	s.log.Info("serving the web table", "listen", ln.Addr().String(), "public_url", s.public.String(),
		"max_conns", lim.MaxConns, "max_conns_per_address", lim.MaxConnsPerAddr)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	rctx, stopRecheck := context.WithCancel(ctx)
	defer stopRecheck()
	go s.recheck(rctx)
	select {
	case <-ctx.Done():
	case err := <-done:
		s.link.Down(err)
		return &chat.StartError{Err: fmt.Errorf("web: %w", err)}
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx) // the sockets are hijacked: Close ends them
	s.closeSockets()
	s.link.Down(errors.New("stopped"))
	return nil
}

// Close ends every socket and waits for their handlers and for the goroutines that bring them
// new views. Call it after the service's Close.
func (s *Server) Close() error {
	s.closeSockets()
	return nil
}

func (s *Server) closeSockets() {
	s.stop()
	s.wg.Wait()
	s.hub.wg.Wait()
}

// Tee is next with the web table listening in: each batch of messages the service delivers for
// next's platform also tells the server which tables changed. Like any Outbox it only queues.
func (s *Server) Tee(next table.Outbox) table.Outbox { return tee{next: next, s: s} }

type tee struct {
	next table.Outbox
	s    *Server
}

func (t tee) Deliver(ctx context.Context, msgs []api.Message) {
	t.next.Deliver(ctx, msgs)
	t.s.Deliver(ctx, msgs)
}

// Deliver notes the tables whose messages changed; their sockets get new views soon. It never
// waits (the service holds the table's lock).
func (s *Server) Deliver(_ context.Context, msgs []api.Message) {
	var last string
	for _, m := range msgs {
		if m.Table != "" && m.Table != last {
			s.hub.changed(m.Table)
			last = m.Table
		}
	}
}

// Link is a signed one-time address of the page for a player at a table, valid for
// Config.LinkTTL: what a chat adapter offers with a player's hand. It is for that player alone.
func (s *Server) Link(p api.Player, tableID string) (string, error) {
	s.randMu.Lock()
	n, err := nonce(s.cfg.Rand)
	s.randMu.Unlock()
	if err != nil {
		return "", err
	}
	t := newTicket(p)
	t.Table, t.Via, t.Exp, t.Nonce = tableID, "link", s.cfg.Now().Add(s.cfg.LinkTTL).Unix(), n
	return s.public.String() + "/#link=" + s.sign.sign(purposeLink, t), nil
}

// WatchLink is the signed address of the page for people without a seat at a table: they see the
// public table (no hand, ever) and make no move. Unlike a player's link it may be shared and used
// by many, until Config.SessionTTL.
//
// The link is the same for a table for half a session's time (its expiry is counted from the
// start of that half): the chats' table messages carry it, and a link that changed every second
// would make every message look changed, worth an edit.
func (s *Server) WatchLink(tableID string) string {
	half := s.cfg.SessionTTL / 2
	exp := s.cfg.Now().Truncate(half).Add(s.cfg.SessionTTL) // valid at least half a session from now
	t := ticket{Player: "watch", Table: tableID, Via: "watch", Exp: exp.Unix()}
	return s.public.String() + "/#watch=" + s.sign.sign(purposeWatch, t)
}

// AppURL is the page's address for a table as a Telegram Mini App opens it from a web_app
// button; "" when the public address is not https, which Telegram requires.
func (s *Server) AppURL(tableID string) string {
	if s.public.Scheme != "https" {
		return ""
	}
	return s.public.String() + "/?table=" + url.QueryEscape(tableID)
}

var _ chat.Web = (*Server)(nil)

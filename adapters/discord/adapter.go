// Package discord connects the table service to Discord through discordgo: one slash command /km
// with subcommands, buttons whose custom_id is a table.Action, ephemeral replies for everything
// meant only for the one who asked, and an Outbox that posts and edits the table's messages with
// one queue per channel and per DM.
//
// Wiring:
//
//	var svc *table.Service
//	a, err := discord.New(discord.Config{Token: tok, KV: store, Log: log,
//		Picture: func(m table.Message) ([]byte, error) { png, _, err := svc.Picture(m, false); return png, err }})
//	svc = table.New(table.Config{Store: store, Outboxes: map[string]table.Outbox{discord.Platform: a}})
//	a.Attach(svc)
//	svc.Resume(ctx)   // may already deliver: REST works before Run
//	err := a.Run(ctx) // connect, register /km, serve until ctx is done
//	svc.Close()
//	a.Close()         // send what the service said while closing, save the message records
//
// With several shards in one process, each gets its own Adapter (ShardID, ShardCount) and Run;
// one of them is the service's Outbox (REST is not bound to a shard) and shard 0 registers /km.
package discord

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"
	"golang.org/x/time/rate"

	"github.com/kontermatt/kontermatt/adapters/internal/chat"
	"github.com/kontermatt/kontermatt/adapters/internal/outbox"
	"github.com/kontermatt/kontermatt/core/table"
)

// Platform is the platform name in table.Place and in the service's Outboxes map.
const Platform = "discord"

// DefaultAPIURL is where REST requests go unless Config.APIURL says otherwise.
const DefaultAPIURL = "https://discord.com"

// Config configures an Adapter.
type Config struct {
	Token   string // the bot token, without "Bot "
	GuildID string // register the commands in this server only (applies at once); "" = globally
	// APIURL is the base URL REST requests go to: https://discord.com, or a REST proxy shared by
	// several shards or processes, or a fake in tests. The gateway address comes from GET /gateway.
	APIURL     string
	ShardID    int
	ShardCount int // 0 or 1: no sharding
	Log        *slog.Logger
	// KV keeps which Discord message shows which table message, and who refuses private messages,
	// so both survive restarts. Required.
	KV table.KV
	// AckAfter is how long an interaction waits for the service before it is acknowledged with a
	// deferred response (the answer then follows as an edit or follow-up). Discord allows 3 s;
	// the default is 2 s.
	AckAfter time.Duration
	// DrainTimeout bounds how long Run waits, when it stops, for queued messages. Default 5 s.
	DrainTimeout time.Duration
	// MaxRate bounds the outbox's REST requests per second across all channels, under Discord's
	// global limit of 50 (a global 429 would also hold back interaction answers). Default 45.
	MaxRate float64
	// Verbose also logs discordgo's own debug output (redacted) at slog's debug level.
	Verbose bool
}

// Adapter is one Discord connection (one shard). It is the service's Outbox for Discord.
type Adapter struct {
	cfg   Config
	log   *slog.Logger
	token string
	s     *discordgo.Session
	kv    table.KV

	svcMu sync.RWMutex
	svc   chat.Service

	mu       sync.Mutex // guards closed; orders inflight.Add before inflight.Wait
	closed   bool
	inflight sync.WaitGroup
	running  bool

	out   *outbox.Engine
	limit *rate.Limiter // the outbox's share of the global rate limit

	usersMu sync.Mutex
	dmChan  map[string]string        // Discord user ID → DM channel ID
	noDM    map[string]bool          // Discord user ID → refuses DMs (cache of the KV)
	hands   map[string]ephemeralHand // Discord user ID → the latest ephemeral hand shown
	blocked map[string]time.Time     // channel ID → until when the bot does not try to post there
}

var _ table.Outbox = (*Adapter)(nil)

// New makes an adapter; it does not connect yet. REST works at once (the service may deliver
// messages while it resumes, before Run).
func New(cfg Config) (*Adapter, error) {
	if cfg.KV == nil {
		return nil, errors.New("discord: no KV store")
	}
	if cfg.APIURL == "" {
		cfg.APIURL = DefaultAPIURL
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.AckAfter <= 0 {
		cfg.AckAfter = 2 * time.Second
	}
	if cfg.DrainTimeout <= 0 {
		cfg.DrainTimeout = 5 * time.Second
	}
	if cfg.MaxRate <= 0 {
		cfg.MaxRate = 45
	}
	a := &Adapter{cfg: cfg, log: cfg.Log.With("platform", Platform), token: strings.TrimPrefix(cfg.Token, "Bot "),
		kv: cfg.KV, dmChan: map[string]string{}, noDM: map[string]bool{}, hands: map[string]ephemeralHand{}, blocked: map[string]time.Time{}}
	a.limit = rate.NewLimiter(rate.Limit(cfg.MaxRate), 10)
	a.out = outbox.New(outbox.Config{Platform: platform{a}, KV: a.kv, Bucket: bucketMessages, Log: a.log,
		Backoff: func(n int) time.Duration { return 500 * time.Millisecond << (n - 1) }})
	register(a)

	s, _ := discordgo.New("Bot " + a.token) // New never fails
	s.LogLevel = discordgo.LogWarning
	if cfg.Verbose {
		s.LogLevel = discordgo.LogDebug
	}
	s.ShouldRetryOnRateLimit = true // a 429 is waited out per route; queues keep other channels moving
	s.ShardID, s.ShardCount = cfg.ShardID, max(cfg.ShardCount, 1)
	s.Identify.Intents = 0 // interactions arrive without any intent
	s.Client = &http.Client{Timeout: 20 * time.Second, Transport: newRewriter(cfg.APIURL)}
	a.s = s
	return a, nil
}

// Close sends what is still queued (at most DrainTimeout) and stops the outbox. Call it after
// the service's Close: messages delivered later are dropped.
func (a *Adapter) Close() error {
	a.out.Close(a.cfg.DrainTimeout)
	unregister(a)
	return nil
}

// Attach gives the adapter the service that handles its commands. Call it before Run.
func (a *Adapter) Attach(h chat.Service) {
	a.svcMu.Lock()
	defer a.svcMu.Unlock()
	a.svc = h
}

func (a *Adapter) service() chat.Service {
	a.svcMu.RLock()
	defer a.svcMu.RUnlock()
	return a.svc
}

// Run connects, registers the slash commands and serves interactions until ctx is done; then it
// closes the gateway connection, waits for the interactions in flight and for the queued messages
// (at most DrainTimeout). It returns an error if it cannot start.
func (a *Adapter) Run(ctx context.Context) error {
	if a.token == "" {
		return errors.New("discord: no token")
	}
	if a.service() == nil {
		return errors.New("discord: Run before Attach")
	}
	a.mu.Lock()
	if a.running || a.closed {
		a.mu.Unlock()
		return errors.New("discord: Run called twice")
	}
	a.running = true
	a.mu.Unlock()
	defer unregister(a)

	me, err := a.s.User("@me")
	if err != nil {
		return a.errorf("checking the token", err)
	}
	ready := make(chan *discordgo.Ready, 1)
	removeReady := a.s.AddHandlerOnce(func(_ *discordgo.Session, r *discordgo.Ready) { ready <- r })
	defer removeReady()
	removeInteraction := a.s.AddHandler(a.onInteraction)
	defer removeInteraction()
	if err := a.s.Open(); err != nil {
		return a.errorf("opening the gateway", err)
	}
	var appID string
	select {
	case r := <-ready:
		if r.Application != nil {
			appID = r.Application.ID
		}
	case <-time.After(15 * time.Second):
		a.stop()
		return errors.New("discord: no READY from the gateway within 15 s")
	case <-ctx.Done():
		a.stop()
		return nil
	}
	if appID == "" {
		appID = me.ID // bots made since 2019 have the application's ID
	}
	if a.cfg.ShardID == 0 { // one shard registers for all
		if _, err := a.s.ApplicationCommandBulkOverwrite(appID, a.cfg.GuildID, Commands()); err != nil {
			a.stop()
			return a.errorf("registering the slash commands", err)
		}
	}
	a.log.Info("connected", "bot", me.Username, "application", appID, "guild", a.cfg.GuildID,
		"shard", a.cfg.ShardID, "shards", max(a.cfg.ShardCount, 1))
	<-ctx.Done()
	a.stop()
	return nil
}

// stop closes the gateway, waits for handlers in flight and drains the queues.
func (a *Adapter) stop() {
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
	// discordgo's heartbeat goroutine may hit the closing connection and start a reconnect loop
	// that outlives Run (seen when Run stops right after connecting): forbid it first.
	a.s.Lock()
	a.s.ShouldReconnectOnError = false
	a.s.Unlock()
	if err := a.s.Close(); err != nil {
		a.log.Warn("closing the gateway", "err", a.redact(err.Error()))
	}
	a.inflight.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), a.cfg.DrainTimeout)
	defer cancel()
	if err := a.Flush(ctx); err != nil {
		items, queues := a.out.Queued()
		a.log.Warn("messages still queued at shutdown", "messages", items, "queues", queues)
	}
}

// errorf wraps a start-up error with the token redacted from its text.
func (a *Adapter) errorf(what string, err error) error {
	var re *discordgo.RESTError
	if errors.As(err, &re) && re.Response != nil && re.Response.StatusCode == http.StatusUnauthorized {
		return fmt.Errorf("discord: %s: the token was refused (HTTP 401)", what)
	}
	return fmt.Errorf("discord: %s: %s", what, a.redact(err.Error()))
}

// rewriter sends Discord's REST requests to the configured base URL (scheme, host and path
// prefix). discordgo builds its endpoints from package variables; rewriting at the transport
// serves a fake in tests and a REST proxy in production alike.
type rewriter struct {
	from string // the host discordgo addresses
	base *url.URL
	next http.RoundTripper
}

func newRewriter(apiURL string) http.RoundTripper {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64 // many channels' queues talk to one host at once
	base, err := url.Parse(strings.TrimSuffix(apiURL, "/"))
	from, _ := url.Parse(discordgo.EndpointDiscord)
	if err != nil || base.Host == "" || base.String() == strings.TrimSuffix(discordgo.EndpointDiscord, "/") {
		return tr
	}
	return &rewriter{from: from.Host, base: base, next: tr}
}

func (r *rewriter) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host != r.from {
		return r.next.RoundTrip(req)
	}
	out := req.Clone(req.Context())
	out.URL.Scheme, out.URL.Host, out.Host = r.base.Scheme, r.base.Host, r.base.Host
	out.URL.Path = r.base.Path + req.URL.Path
	out.URL.RawPath = ""
	return r.next.RoundTrip(out)
}

// Redaction. discordgo logs through one package-level Logger; it is installed once and passes
// each line, with every live adapter's token and any interaction token removed, to the live
// adapters' loggers.

var registry struct {
	sync.Mutex
	once sync.Once
	live map[*Adapter]bool
}

func register(a *Adapter) {
	registry.once.Do(func() { discordgo.Logger = libraryLog })
	registry.Lock()
	defer registry.Unlock()
	if registry.live == nil {
		registry.live = map[*Adapter]bool{}
	}
	registry.live[a] = true
}

func unregister(a *Adapter) {
	registry.Lock()
	defer registry.Unlock()
	delete(registry.live, a)
}

var secretPatterns = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`((?:interactions|webhooks)/[0-9]+/)[A-Za-z0-9_.\-]+`), "${1}[redacted]"},
	{regexp.MustCompile(`("token"\s*:\s*")[^"]*`), "${1}[redacted]"},
	{regexp.MustCompile(`(Token:\s*")[^"]*`), "${1}[redacted]"},
	{regexp.MustCompile(`(?i)(authorization[^A-Za-z0-9]+)(Bot\s+)?[A-Za-z0-9_.\-]{20,}`), "${1}[redacted]"},
}

// redact removes tokens from a text meant for a log or an error.
func (a *Adapter) redact(s string) string {
	if a.token != "" {
		s = strings.ReplaceAll(s, a.token, "[redacted]")
	}
	return redactAll(s)
}

func redactAll(s string) string {
	registry.Lock()
	for a := range registry.live {
		if a.token != "" {
			s = strings.ReplaceAll(s, a.token, "[redacted]")
		}
	}
	registry.Unlock()
	for _, p := range secretPatterns {
		s = p.re.ReplaceAllString(s, p.repl)
	}
	return s
}

func libraryLog(level, _ int, format string, args ...any) {
	msg := redactAll(fmt.Sprintf(format, args...))
	lvl := slog.LevelDebug // discordgo's "informational" lines are chatter
	switch {
	case strings.Contains(msg, "websocket: close sent"):
		// The heartbeat goroutine racing our own Close: nothing is wrong.
	case level == discordgo.LogError:
		lvl = slog.LevelError
	case level == discordgo.LogWarning:
		lvl = slog.LevelWarn
	}
	registry.Lock()
	seen := map[*slog.Logger]bool{}
	var logs []*slog.Logger
	for a := range registry.live {
		if !seen[a.cfg.Log] { // shards sharing a logger get each line once
			seen[a.cfg.Log] = true
			logs = append(logs, a.log)
		}
	}
	registry.Unlock()
	for _, l := range logs {
		l.Log(context.Background(), lvl, msg, "source", "discordgo")
	}
}

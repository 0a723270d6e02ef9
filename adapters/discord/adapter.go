// Package discord connects the table service to Discord through discordgo: one slash command /km
// with subcommands, buttons whose custom_id is an api.Action, ephemeral replies for everything
// meant only for the one who asked, and an Outbox that posts and edits the table's messages with
// one queue per channel and per DM.
//
// Wiring:
//
//	a, err := discord.New(discord.Config{Token: tok, KV: store, Log: log})
//	svc := table.New(table.Config{Store: store, Outboxes: map[string]table.Outbox{discord.Platform: a}})
//	a.Attach(svc)
//	svc.Resume(ctx)   // may already deliver: REST works before Run
//	err := a.Run(ctx) // register /km, connect every shard, serve until ctx is done
//	svc.Close()
//	a.Close()         // send what the service said while closing, save the message records
//
// One Adapter runs every shard of the bot in this process: Discord sends DMs to shard 0 only,
// so a DM button press must reach the same service as the guild on shard 7 whose table it is for.
// A Run that fails to start may be called again.
package discord

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bwmarrin/discordgo"
	"golang.org/x/time/rate"

	"github.com/kontermatt/kontermatt/adapters/internal/chat"
	"github.com/kontermatt/kontermatt/adapters/internal/outbox"
	"github.com/kontermatt/kontermatt/core/table"
)

// Platform is the platform name in api.Place and in the service's Outboxes map.
const Platform = "discord"

// DefaultAPIURL is where REST requests go unless Config.APIURL says otherwise.
const DefaultAPIURL = "https://discord.com"

// Config configures an Adapter.
type Config struct {
	Token   string // the bot token, without "Bot "
	GuildID string // register the commands in this server only (applies at once); "" = globally
	// APIURL is the base URL REST requests go to: https://discord.com, or a REST proxy, or a
	// fake in tests. The gateway address comes from GET /gateway.
	APIURL string
	// ShardCount is how many gateway connections this process opens; together they serve every
	// server. 0: as many as Discord recommends (GET /gateway/bot), which is what a bot in more
	// than 2,500 servers must do.
	ShardCount int
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

	// ClientSecret is the application's OAuth2 client secret: with it the web table runs as the
	// app's Activity (the table's messages get "Play in app", and ActivityUser exchanges the
	// Activity's codes). Web is the web table (adapters/web), if it runs: the answer to a request
	// for the hand then carries a one-time link to it.
	ClientSecret string
	Web          chat.Web

	// Shared says several copies of the bot deliver through KV (store: etcd): the records of what
	// each message shows move by compare-and-swap (KV must be a table.Swapper), so that no copy
	// posts a message another posted or edits it back (adapters/internal/outbox).
	Shared bool
	// Cluster, when set, says this is one of several copies of the bot on one store (store:
	// etcd), with the copies' leases; it implies Shared. In gateway mode each shard's session is
	// open at one copy at a time, the one holding the lease ShardLease(id) (see holdShard), and
	// the IDENTIFYs of all copies are paced together. nil: the only copy, which runs every
	// shard. HTTP interactions need no lease: any copy answers any post.
	Cluster table.Leases

	// Owner says which places this copy tells (chat.Owner): of several copies, a place's owner
	// alone posts and edits its table's messages, its games' results and its players' hands,
	// and tells again what is untold when it takes a place over. nil: the attached service's
	// Owns when Shared (several copies), else this copy tells every place.
	Owner chat.Owner
	// Now is the adapter's clock (which places it tells, the claims of shared message records);
	// default time.Now.
	Now func() time.Time

	// Interactions, when on, has Discord post the interactions to the bot's own HTTP server
	// (the Interactions Endpoint URL) instead of sending them over the gateway: Run then opens
	// no gateway connection at all.
	Interactions Interactions
}

// Adapter is the bot's Discord connection: every shard, one REST client, one outbox. It is the
// service's Outbox for Discord.
type Adapter struct {
	cfg     Config
	log     *slog.Logger
	token   string
	client  *http.Client
	clock   *discordClock
	traffic chat.Traffic       // the last interaction and the endpoint's refusals, for metrics
	rest    *discordgo.Session // REST for the outbox and registration; never opened
	tokens  *tokenSessions     // REST for interaction tokens, forgotten with the tokens
	kv      table.KV

	// identifyWindow is Discord's window for max_concurrency IDENTIFYs (5 s; shorter in tests).
	identifyWindow time.Duration
	// permsFresh is how long what the bot learnt of a channel is believed (defaultPermsFresh);
	// dmOpenWait the first wait after Discord said DMs are opened too fast (dmOpenFirstWait).
	// Shorter in tests; both read under usersMu.
	permsFresh, dmOpenWait time.Duration

	chat.Slot // the service commands go to

	mu       sync.Mutex      // guards the fields below; orders inflight.Add before inflight.Wait
	base     context.Context // Run's context without its end: every interaction's context derives from it
	closed   bool            // not taking interactions (stopping, or not started)
	running  bool
	shut     bool // Close was called
	appID    string
	shards   []*discordgo.Session
	gateway  gatewayState          // each shard's connection, for the health check
	endpoint endpoint              // the interactions endpoint, in HTTP mode
	gate     *identifyGate         // paces every shard's IDENTIFYs
	redo     map[int]bool          // shards whose session is to start anew (see gatedConn)
	down     map[int]chan struct{} // a shard's session dropped (see keepShard)
	keepers  sync.WaitGroup
	inflight sync.WaitGroup

	out    *outbox.Engine[extra]
	teller *chat.Teller // which places' timelines this copy tells (Config.Owner)
	// telling: the teller's Run is running (a Run that failed to start may be called again).
	telling atomic.Bool
	limit   *rate.Limiter     // the outbox's share of the global rate limit
	reach   *chat.Unreachable // users who refuse DMs

	usersMu  sync.Mutex
	dmChan   map[string]string        // Discord user ID → DM channel ID
	hands    map[string]ephemeralHand // Discord user ID → the latest ephemeral hand shown
	lastHand map[string]newestHand    // Discord user ID → the newest hand the outbox had
	channels map[string]channelInfo   // channel ID → what the bot may do there, as last seen
	actors   map[string]*responder    // guild channel ID → the latest interaction there
	dmPause  dmPause                  // while Discord says DMs are opened too fast

	// answeredMsgs are DM hands a move's HTTP answer updated, whose next edit goes by its
	// interaction's webhook (editAfterAnswer), by message ID.
	answeredMsgs map[string]answeredMessage

	// held says until when a table message's content is to stay in view (waitHeld), by key.
	heldMu sync.Mutex
	held   map[string]time.Time
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
	if cfg.ShardCount < 0 {
		return nil, errors.New("discord: negative shard count")
	}
	if cfg.Cluster != nil {
		cfg.Shared = true
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if _, ok := cfg.KV.(table.Swapper); cfg.Shared && !ok {
		return nil, errors.New("discord: several copies (Config.Shared) need a store with compare-and-swap")
	}
	if err := cfg.Interactions.Check(); err != nil {
		return nil, fmt.Errorf("discord: %w", err)
	}
	a := &Adapter{cfg: cfg, log: cfg.Log.With("platform", Platform), token: strings.TrimPrefix(cfg.Token, "Bot "),
		kv: cfg.KV, clock: &discordClock{}, identifyWindow: 5 * time.Second, closed: true,
		dmChan: map[string]string{}, hands: map[string]ephemeralHand{}, answeredMsgs: map[string]answeredMessage{}, held: map[string]time.Time{}, lastHand: map[string]newestHand{}, channels: map[string]channelInfo{},
		actors: map[string]*responder{}, redo: map[int]bool{}, gate: newIdentifyGate(5 * time.Second), permsFresh: defaultPermsFresh, dmOpenWait: dmOpenFirstWait}
	a.client = &http.Client{Timeout: 20 * time.Second, Transport: &clockTransport{clock: a.clock, next: newRewriter(cfg.APIURL)}}
	a.limit = rate.NewLimiter(rate.Limit(cfg.MaxRate), 10)
	a.reach = chat.NewUnreachable(a.kv, bucketNoDM, bucketTold, a.log)
	// Of several copies, only a place's owner tells its timeline (chat.NewTeller).
	a.teller = a.NewTeller(cfg.Owner, cfg.Shared, cfg.Now)
	a.out = outbox.New(outbox.Config[extra]{Platform: platform{a}, KV: a.kv, Bucket: bucketMessages, Log: a.log,
		Backoff: func(n int) time.Duration { return 500 * time.Millisecond << (n - 1) }, Paused: a.pauseChannel,
		Shared: cfg.Shared, ClaimTTL: a.client.Timeout + 15*time.Second, Now: cfg.Now, Tells: a.teller.Tells, Fence: a.teller.Fence, Out: a.outOne})
	if cfg.Interactions.On() {
		a.endpoint.key, _ = parsePublicKey(cfg.Interactions.PublicKey) // Check parsed it
	}
	register(a)
	a.rest = a.session()
	a.tokens = newTokenSessions(a.session, tokenLife)
	return a, nil
}

// session makes a discordgo session on the adapter's token and HTTP client.
func (a *Adapter) session() *discordgo.Session {
	s, _ := discordgo.New("Bot " + a.token) // New never fails
	s.LogLevel = discordgo.LogWarning
	if a.cfg.Verbose {
		s.LogLevel = discordgo.LogDebug
	}
	s.ShouldRetryOnRateLimit = true // a 429 is waited out per route; queues keep other channels moving
	// discordgo reports each 429 it waits out as a RateLimit event: the metrics count them.
	s.AddHandler(func(*discordgo.Session, *discordgo.RateLimit) { a.out.NoteRateLimited() })
	s.Identify.Intents = 0 // interactions arrive without any intent
	s.Client = a.client
	return s
}

// Close sends what is still queued (at most DrainTimeout) and stops the outbox. Call it after
// the service's Close: messages delivered later are dropped.
func (a *Adapter) Close() error {
	a.mu.Lock()
	a.shut = true
	a.mu.Unlock()
	a.out.Close(a.cfg.DrainTimeout)
	unregister(a)
	return nil
}

// Run registers the slash commands, connects every shard (or in HTTP mode serves the
// interactions endpoint instead) and serves interactions until ctx is done; then it closes the gateway connections, waits for the interactions in flight and for the
// queued messages (at most DrainTimeout). If it cannot start it returns a *chat.StartError,
// having closed what it opened, and may be called again.
func (a *Adapter) Run(ctx context.Context) error {
	err := a.run(ctx)
	if err != nil {
		a.gateway.running(0, err) // the health check says why, until a start works
	}
	return err
}

func (a *Adapter) run(ctx context.Context) error {
	if a.token == "" {
		return &chat.StartError{Err: errors.New("discord: no token"), Fatal: true}
	}
	if a.Service() == nil {
		return errors.New("discord: Run before Attach")
	}
	a.mu.Lock()
	if a.running || a.shut {
		a.mu.Unlock()
		return errors.New("discord: Run while running, or after Close")
	}
	a.running = true
	// As net/http's BaseContext: what an interaction does is done within a context derived from
	// Run's, with its values; not ended with it, since Run waits for the interactions in flight
	// before it returns (a move acknowledged is a move stored).
	a.base = context.WithoutCancel(ctx)
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		a.running = false
		a.mu.Unlock()
	}()

	// Everything that can fail without costing a session start comes first: a start that fails
	// again and again must not spend the day's IDENTIFYs.
	app, err := a.rest.Application("@me")
	if err != nil {
		return a.startError("looking up the application", err)
	}
	a.mu.Lock()
	a.appID = app.ID
	a.mu.Unlock()
	if err := a.registerCommands(app.ID); err != nil {
		return a.startError("registering the slash commands", err)
	}
	if a.telling.CompareAndSwap(false, true) {
		// The places this copy takes over are retold from their stored state while it runs.
		go func() {
			defer a.telling.Store(false)
			a.teller.Run(ctx)
		}()
	}
	if a.cfg.Interactions.On() {
		a.mu.Lock()
		a.closed = false
		a.mu.Unlock()
		if err := a.runEndpoint(ctx); err != nil {
			return err
		}
		return nil
	}
	gw, err := a.rest.GatewayBot()
	if err != nil {
		return a.startError("asking for the gateway", err)
	}
	n := a.cfg.ShardCount
	if n == 0 {
		n = max(gw.Shards, 1)
	}
	if err := checkSessionStarts(gw.SessionStartLimit, n); err != nil {
		return err
	}
	a.gate.mu.Lock()
	a.gate.window = a.identifyWindow
	a.gate.leases = a.cfg.Cluster
	a.gate.mu.Unlock()
	a.gate.learn(gw.SessionStartLimit, n)
	a.mu.Lock()
	a.closed = false
	a.mu.Unlock()
	if a.cfg.Cluster != nil {
		a.runShardsUnderLeases(ctx, n)
		a.log.Info("connected; this copy runs the shards whose leases it holds", "application", app.Name, "id", app.ID,
			"guild", a.cfg.GuildID, "shards", n)
		return a.serve(ctx)
	}
	shards, err := a.openShards(ctx, n, gw.SessionStartLimit.MaxConcurrency)
	if err != nil {
		a.stop()
		return a.startError("connecting to the gateway", err)
	}
	a.mu.Lock()
	a.shards = shards
	a.mu.Unlock()
	a.gateway.running(len(shards), nil)
	if ctx.Err() == nil {
		a.log.Info("connected", "application", app.Name, "id", app.ID, "guild", a.cfg.GuildID, "shards", n,
			"session_starts_left", gw.SessionStartLimit.Remaining-n)
	}
	for id := range shards {
		a.keepers.Go(func() { a.keepShard(ctx, id, n) })
	}
	return a.serve(ctx)
}

// serve sweeps what the adapter remembers until ctx ends, then stops.
func (a *Adapter) serve(ctx context.Context) error {
	sweep := time.NewTicker(time.Minute)
	defer sweep.Stop()
	for done := false; !done; {
		select {
		case <-ctx.Done():
			done = true
		case <-sweep.C:
			a.sweep()
		}
	}
	a.stop()
	return nil
}

// stop closes the gateway connections, waits for handlers in flight and drains the queues.
func (a *Adapter) stop() {
	a.mu.Lock()
	a.closed = true
	shards := a.shards
	a.shards = nil
	a.mu.Unlock()
	closeShards(shards, a.log, a.redact)
	a.keepers.Wait() // they see closed, and close what they were opening
	a.inflight.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), a.cfg.DrainTimeout)
	defer cancel()
	if err := a.Flush(ctx); err != nil {
		items, queues := a.out.Queued()
		a.log.Warn("messages still queued at shutdown", "messages", items, "queues", queues)
	}
}

// startError wraps a start-up failure with the token redacted from its text; a refused token is
// Fatal, anything else worth another try.
func (a *Adapter) startError(what string, err error) error {
	var se *chat.StartError
	if errors.As(err, &se) {
		return se
	}
	if refusedToken(err) {
		return &chat.StartError{Err: fmt.Errorf("discord: %s: the token was refused (HTTP 401)", what), Fatal: true}
	}
	return &chat.StartError{Err: fmt.Errorf("discord: %s: %s", what, a.redact(err.Error()))}
}

func refusedToken(err error) bool {
	var re *discordgo.RESTError
	return errors.As(err, &re) && re.Response != nil && re.Response.StatusCode == http.StatusUnauthorized
}

// baseContext is the context an interaction's starts from: Run's (see run), or before Run the
// background.
func (a *Adapter) baseContext() context.Context {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.base == nil {
		return context.Background()
	}
	return a.base
}

// applicationID gives the application's ID once Run has looked it up.
func (a *Adapter) applicationID() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.appID
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

// redact removes tokens from a text meant for a log or an error. It also names the address the
// request went to: discordgo's errors name discord.com, which the transport rewrites to APIURL.
func (a *Adapter) redact(s string) string {
	if a.token != "" {
		s = strings.ReplaceAll(s, a.token, "[redacted]")
	}
	if base := strings.TrimSuffix(a.cfg.APIURL, "/"); base != "" && base != strings.TrimSuffix(discordgo.EndpointDiscord, "/") {
		s = strings.ReplaceAll(s, strings.TrimSuffix(discordgo.EndpointDiscord, "/"), base)
	}
	if a.cfg.ClientSecret != "" {
		s = strings.ReplaceAll(s, a.cfg.ClientSecret, "[redacted]")
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
	case strings.Contains(msg, errReidentify.Error()):
		// The gate closed a connection an Invalid Session came on (gate.go); the shard's keeper
		// says what it does next.
	case level == discordgo.LogError:
		lvl = slog.LevelError
	case level == discordgo.LogWarning:
		lvl = slog.LevelWarn
	}
	registry.Lock()
	seen := map[*slog.Logger]bool{}
	var logs []*slog.Logger
	for a := range registry.live {
		if !seen[a.cfg.Log] { // adapters sharing a logger get each line once
			seen[a.cfg.Log] = true
			logs = append(logs, a.log)
		}
	}
	registry.Unlock()
	for _, l := range logs {
		l.Log(context.Background(), lvl, msg, "source", "discordgo")
	}
}

// jsonField reads one field of a raw JSON object into v (for the fields discordgo v0.29.0 does
// not decode); it reports whether the field was there and readable.
func jsonField(raw []byte, name string, v any) bool {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return false
	}
	f, ok := obj[name]
	return ok && json.Unmarshal(f, v) == nil
}

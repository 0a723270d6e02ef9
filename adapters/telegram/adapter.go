// Package telegram connects the table service to Telegram through the Bot API
// (github.com/go-telegram-bot-api/telegram-bot-api/v5): it turns updates into table.Commands and
// delivers the service's Messages within Telegram's limits.
//
// Wiring, in this order:
//
//	a, err := telegram.New(telegram.Config{Token: token, KV: store, Log: log}) // calls getMe
//	svc := table.New(table.Config{Store: store, Outboxes: map[string]table.Outbox{telegram.Platform: a}, ...})
//	a.Attach(svc)
//	svc.Resume(ctx)
//	err = a.Run(ctx) // long polling (or a webhook: Config.Webhook) until ctx ends; then finishes the updates it has taken
//	svc.Close()      // no more messages after this
//	a.Close()        // sends what is queued (bounded by CloseTimeout)
package telegram

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
	"golang.org/x/time/rate"

	"github.com/kontermatt/kontermatt/adapters/internal/chat"
	"github.com/kontermatt/kontermatt/adapters/internal/outbox"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// Platform is the name of this platform in api.Place and in the service's Outboxes.
const Platform = "telegram"

// Config sets up an Adapter. Token and KV are required.
type Config struct {
	Token  string
	APIURL string // Bot API server; default https://api.telegram.org (requests go to APIURL+"/bot<token>/<method>")
	Log    *slog.Logger
	KV     table.KV // which Telegram message shows which keyed message; who cannot get private messages

	// Client makes the HTTP requests (a proxy, a test server); default a plain http.Client.
	Client *http.Client
	// PollTimeout is how long one getUpdates long poll may wait; default 50 s.
	PollTimeout time.Duration
	// RequestTimeout bounds every other request; default 30 s.
	RequestTimeout time.Duration
	// CloseTimeout bounds how long Close keeps sending what is queued; default 5 s.
	CloseTimeout time.Duration

	// GroupPerMinute caps messages and edits to one group in any 60 seconds; default 20.
	GroupPerMinute int
	// PrivateInterval is the least time between two messages or edits to one private chat;
	// default 1 s.
	PrivateInterval time.Duration
	// GlobalPerSecond caps all messages and edits together; default 30.
	GlobalPerSecond float64

	// RulesURL is the rules' link on the welcome a group gets; "": a button that tells the rules
	// in the chat, in the group's language.
	RulesURL string
	// Webhook, when its URL is set, receives updates by webhook instead of long polling.
	Webhook Webhook

	// Web is the web table (adapters/web), if it runs: private hands get its web_app button, and
	// the answer to a request for the hand a one-time link to it. MiniApp is the short name of
	// the Mini App registered with BotFather (/newapp) for the page: the table's group messages
	// then link to it (t.me/<bot>/<MiniApp>?startapp=<table>).
	Web     chat.Web
	MiniApp string

	// Cluster, when set, says this is one of several copies of the bot on one store (store:
	// etcd), with the copies' leases. The records of what each message shows move by
	// compare-and-swap (KV must be a table.Swapper), so that no copy posts a message another
	// posted or edits it back; a group's 20 messages a minute are counted in the store, for all
	// copies together; and long polling, which one process at a time may do, runs only in the
	// copy that holds the lease PollerLease (a webhook needs none: any copy takes any post).
	// nil: the only copy.
	Cluster table.Leases
	// Owner says which places this copy tells (chat.Owner): of several copies, a place's owner
	// alone posts and edits its table message, its results and its players' hands, and tells
	// again what is untold when it takes a place over. nil: the attached service's Owns with
	// Cluster set (several copies), else this copy tells every place.
	Owner chat.Owner
}

// PollerLease is the lease the copy that long-polls holds (Config.Cluster).
const PollerLease = "telegram/poller"

// Adapter is one bot: it receives updates for the service and is the service's Telegram Outbox.
type Adapter struct {
	base      atomic.Pointer[context.Context] // Run's context without its end (baseContext)
	cfg       Config
	log       *slog.Logger
	red       *redactor
	bot       *tgbotapi.BotAPI
	client    *apiClient
	kv        table.KV
	chat.Slot // the service commands go to

	started  atomic.Bool
	stopping atomic.Bool // Run's context ended

	in     serial // updates, one chat at a time
	groups groups // what the adapter knows of the groups it writes to
	out    *outbox.Engine[extra]
	teller *chat.Teller      // which places' timelines this copy tells (Config.Owner)
	window *chat.Window      // the groups' budget shared by the copies (Config.Cluster); nil: the only copy
	reach  *chat.Unreachable // users who cannot get private messages (never pressed Start, or blocked the bot)
	global *rate.Limiter     // all messages together
	limMu  sync.Mutex
	lims   map[int64]*limits // each chat's
	born   time.Time         // when this process began sending
	users  users
	late   late // whom the adapter told that their late commands were not applied
	// unstored are the webhook's updates whose change was not stored (see webhookHandler);
	// refusals are the posts it refused, for a quiet log.
	unstored unstored
	refusals refusals
	traffic  chat.Traffic // the last update and the refusals, for metrics
	webhook  webhookView  // Telegram's view of the webhook (getWebhookInfo), for the health check
	link     *chat.Link   // whether Telegram answers, for the health check
	live     liveKeys     // each place's newest table message, the one whose showing the service hears of
	me       struct {
		sync.Mutex
		name string // the bot's username, from getMe
	}
}

var _ table.Outbox = (*Adapter)(nil)

// Connected is nil while Telegram answers the adapter (its last poll, or the webhook set up),
// else why not: the health check's view.
func (a *Adapter) Connected() error { return a.link.Connected() }

// New makes the adapter and asks Telegram who the bot is (getMe); if Telegram cannot be reached
// now, Run asks again, so that a platform that is down at start is tried again like Discord's
// (cmd/bot's runChat). Nothing is received until Run; messages the service delivers before Run
// (at Resume) are queued and sent at once.
func New(cfg Config) (*Adapter, error) {
	if cfg.Token == "" {
		return nil, errors.New("telegram: no bot token")
	}
	if cfg.KV == nil {
		return nil, errors.New("telegram: no KV store")
	}
	if cfg.APIURL == "" {
		cfg.APIURL = "https://api.telegram.org"
	}
	cfg.APIURL = strings.TrimSuffix(cfg.APIURL, "/")
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{}
	}
	if cfg.PollTimeout <= 0 {
		cfg.PollTimeout = 50 * time.Second
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = 30 * time.Second
	}
	if cfg.CloseTimeout <= 0 {
		cfg.CloseTimeout = 5 * time.Second
	}
	if cfg.GroupPerMinute <= 0 {
		cfg.GroupPerMinute = 20
	}
	if cfg.PrivateInterval <= 0 {
		cfg.PrivateInterval = time.Second
	}
	if cfg.GlobalPerSecond <= 0 {
		cfg.GlobalPerSecond = 30
	}
	if err := cfg.Webhook.Check(); err != nil {
		return nil, err
	}
	sw, swaps := cfg.KV.(table.Swapper)
	if cfg.Cluster != nil && !swaps {
		return nil, errors.New("telegram: several copies (Config.Cluster) need a store with compare-and-swap")
	}
	a := &Adapter{cfg: cfg, link: chat.NewLink(), log: cfg.Log.With("platform", Platform), red: newRedactor(cfg.Token, cfg.Webhook.SecretToken), kv: cfg.KV,
		global: rate.NewLimiter(rate.Limit(cfg.GlobalPerSecond), max(1, int(cfg.GlobalPerSecond))),
		lims:   map[int64]*limits{}, born: time.Now()}
	a.client = newAPIClient(cfg.Client, cfg.RequestTimeout, cfg.PollTimeout)
	a.users.init()
	a.groups.init()
	theLibLogger.register(a)
	// The library's constructor would fail without an answer to getMe: the bot is made here and
	// asks on its own.
	a.bot = &tgbotapi.BotAPI{Token: cfg.Token, Client: a.client, Buffer: 100}
	a.bot.SetAPIEndpoint(cfg.APIURL + "/bot%s/%s")
	a.reach = chat.NewUnreachable(cfg.KV, bucketBlocked, bucketTold, a.log)
	// Of several copies, the attached service's per-place ownership decides (chat.NewTeller).
	a.teller = a.NewTeller(cfg.Owner, cfg.Cluster != nil, nil)
	a.out = outbox.New(outbox.Config[extra]{Platform: platform{a}, KV: cfg.KV, Bucket: bucketMsg, Log: a.log, Merge: mergeItems,
		Moved: a.sendsMoved, Paused: a.pausePlace, ProbeEvery: probeEvery,
		Shared: cfg.Cluster != nil, ClaimTTL: cfg.RequestTimeout + 15*time.Second, Tells: a.teller.Tells, Fence: a.teller.Fence, Out: a.out1})
	if cfg.Cluster != nil {
		// Bot FAQ, "My bot is hitting limits": no more than 20 messages a minute to one group,
		// and about one a second in one chat.
		a.window = &chat.Window{KV: sw, Bucket: bucketWindow, N: cfg.GroupPerMinute, Per: time.Minute, Gap: time.Second, Burst: groupBurst,
			Slack: limiterSlack}
	}
	if err := a.whoAmI(); err != nil && !refusedStart(err) {
		// A refused token is said once, as the reason the platform cannot start.
		a.log.Warn("Telegram does not answer yet; the bot asks again when it starts receiving updates", "err", err)
	}
	return a, nil
}

// whoAmI asks Telegram for the bot's username (getMe), once it has it no more. A refused token
// is a StartError that no retry mends.
func (a *Adapter) whoAmI() error {
	if a.Username() != "" {
		return nil
	}
	me, err := a.bot.GetMe()
	if err != nil {
		var te *tgbotapi.Error
		if errors.As(err, &te) && te.Code == http.StatusUnauthorized {
			return &chat.StartError{Err: fmt.Errorf("telegram: the bot token was refused (getMe: %s): check telegram.token or KONTERMATT_TELEGRAM_TOKEN", a.red.Err(err)), Fatal: true}
		}
		return &chat.StartError{Err: fmt.Errorf("telegram: getMe: %s", a.red.Err(err))}
	}
	a.me.Lock()
	a.me.name = me.UserName
	a.me.Unlock()
	a.log.Info("connected", "bot", me.UserName)
	return nil
}

// refusedStart reports whether err is a start that no retry mends.
func refusedStart(err error) bool {
	var se *chat.StartError
	return errors.As(err, &se) && se.Fatal
}

// Username is the bot's username (from getMe), or "" before Telegram has answered.
func (a *Adapter) Username() string {
	a.me.Lock()
	defer a.me.Unlock()
	return a.me.name
}

// allowedUpdates are the update types Run asks for.
var allowedUpdates = []string{"message", "callback_query", "my_chat_member"}

// Run receives updates until ctx ends — by long polling, or by webhook when Config.Webhook.URL
// is set — and hands them to the service. Then it stops taking updates, finishes the ones being
// handled and returns. It runs once; only a failure before anything started lets it be called
// again.
func (a *Adapter) Run(ctx context.Context) error {
	if a.Service() == nil {
		return errors.New("telegram: Run before Attach")
	}
	if !a.started.CompareAndSwap(false, true) {
		return errors.New("telegram: Run called twice")
	}
	base := context.WithoutCancel(ctx)
	a.base.Store(&base)
	if err := a.whoAmI(); err != nil {
		a.started.Store(false) // nothing started yet: Run may be tried again
		a.link.Down(err)
		return err
	}
	// Handlers finish what they started even after ctx ends.
	hctx := context.WithoutCancel(ctx)
	go a.teller.Run(ctx)
	if a.cfg.Webhook.URL != "" {
		err := a.runWebhook(ctx, hctx)
		if err != nil && !a.stopping.Load() {
			a.started.Store(false)
		}
		return err
	}
	if _, err := a.bot.Request(tgbotapi.DeleteWebhookConfig{}); err != nil {
		a.started.Store(false) // nothing started yet: Run may be tried again
		return fmt.Errorf("telegram: deleteWebhook: %s", a.red.Err(err))
	}
	a.link.Up() // Telegram answered; the polls say from now on
	a.setCommands()

	if a.cfg.Cluster != nil {
		a.pollUnderLease(ctx, hctx)
	} else {
		pollCtx, stopPoll := context.WithCancel(ctx)
		defer stopPoll()
		a.client.setPollContext(pollCtx)
		a.log.Info("polling for updates")
		a.poll(pollCtx, hctx, func() bool { return true })
	}
	a.stopping.Store(true)
	a.in.wait()
	a.log.Info("stopped polling")
	return nil
}

// pollUnderLease long-polls while this copy holds PollerLease, until ctx ends: Telegram gives a
// bot's updates to one poll at a time (see conflict.go), so of several copies one polls and the
// others wait to take over, within the lease's time to live of the holder's death. The lease is
// kept until the last updates taken are confirmed, so the next holder starts after them; a
// copy that lost it stops at once and confirms nothing (the next holder gets again what it had
// not confirmed, and the service applies each update once: Command.EventID).
func (a *Adapter) pollUnderLease(ctx, hctx context.Context) {
	chat.Lease{Leases: a.cfg.Cluster, Name: PollerLease, Retry: pollRetry, Log: a.log,
		Waiting: "the poller lease cannot be had now; trying again",
		Lost:    "this copy lost the poller lease (the store was out of reach): another copy polls now; this one waits to take over",
	}.Run(ctx, func(pollCtx context.Context, holding func() bool) {
		a.log.Info("this copy holds the poller lease: polling for updates", "lease", PollerLease)
		a.client.setPollContext(pollCtx)
		a.poll(pollCtx, hctx, holding)
	})
}

// Close sends what is queued, for at most CloseTimeout, and stops. Call it after the service's
// Close: messages delivered later are dropped.
func (a *Adapter) Close() error {
	a.out.Close(a.cfg.CloseTimeout)
	theLibLogger.unregister(a)
	return nil
}

// setCommands registers the command menu: the default list in English, then one per language,
// with the catalog's short cmd.<verb> texts that Discord's menu shows too (a test keeps them far
// below Telegram's 256 characters; clip only guards the limit).
func (a *Adapter) setCommands() {
	langs := append([]string{""}, i18n.Languages...)
	for _, lang := range langs {
		var cmds []tgbotapi.BotCommand
		for _, v := range api.Verbs {
			cmds = append(cmds, tgbotapi.BotCommand{Command: string(v), Description: clip(i18n.T(i18n.Pick(lang), "cmd."+string(v)), 256)})
		}
		cfg := tgbotapi.NewSetMyCommands(cmds...)
		cfg.LanguageCode = lang
		if _, err := a.bot.Request(cfg); err != nil {
			a.log.Warn("setMyCommands failed", "lang", lang, "err", a.red.Err(err))
		}
	}
}

// clip shortens s to at most n characters (runes), marking the cut with "…".
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// serial runs functions one at a time per key, different keys in parallel, one goroutine per
// busy key.
type serial struct {
	mu     sync.Mutex
	queues map[int64][]func()
	wg     sync.WaitGroup
}

func (s *serial) do(key int64, fn func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.queues == nil {
		s.queues = map[int64][]func(){}
	}
	q, busy := s.queues[key]
	s.queues[key] = append(q, fn)
	if busy {
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			s.mu.Lock()
			q := s.queues[key]
			if len(q) == 0 {
				delete(s.queues, key)
				s.mu.Unlock()
				return
			}
			fn := q[0]
			s.queues[key] = q[1:]
			s.mu.Unlock()
			fn()
		}
	}()
}

func (s *serial) wait() { s.wg.Wait() }

// playerOf is the table identity of a Telegram user.
func playerOf(u *tgbotapi.User) api.Player {
	name := strings.TrimSpace(u.FirstName + " " + u.LastName)
	if name == "" {
		name = u.UserName
	}
	if name == "" {
		name = "user " + strconv.FormatInt(u.ID, 10)
	}
	return api.Player{ID: "tg:" + strconv.FormatInt(u.ID, 10), Name: name, Locale: u.LanguageCode}
}

// userOf reads the Telegram user ID out of a player ID ("tg:123").
func userOf(p api.Player) (int64, bool) {
	s, ok := strings.CutPrefix(p.ID, "tg:")
	if !ok {
		return 0, false
	}
	id, err := strconv.ParseInt(s, 10, 64)
	return id, err == nil && id > 0
}

// placeOf is the table place of a chat (and forum topic).
func placeOf(chat int64, thread int) api.Place {
	p := api.Place{Platform: Platform, Chat: strconv.FormatInt(chat, 10)}
	if thread != 0 {
		p.Thread = strconv.Itoa(thread)
	}
	return p
}

// chatOf reads a Telegram chat (and topic) out of a place; false for another platform's place.
func chatOf(p api.Place) (chat int64, thread int, ok bool) {
	if p.Platform != Platform {
		return 0, 0, false
	}
	chat, err := strconv.ParseInt(p.Chat, 10, 64)
	if err != nil {
		return 0, 0, false
	}
	if p.Thread != "" {
		if thread, err = strconv.Atoi(p.Thread); err != nil {
			return 0, 0, false
		}
	}
	return chat, thread, true
}

// limiterSlack is how much longer than a limit's window newLimiter spreads its events over.
const limiterSlack = 500 * time.Millisecond

// newLimiter gives a token bucket that lets at most n events through in any window of length w
// (a window [t, t+w), as Telegram counts "20 messages per minute": Bot FAQ, "My bot is hitting
// limits"). Its worst window begins with a full bucket: burst events at once, then one each
// 1/r, of which ceil(r·w)-1 more fall within w; so burst-1+r·w ≤ n. The pace is kept a little
// (limiterSlack) below that bound, so that a request delayed on its way does not make two of them
// seem a window apart when they were not.
func newLimiter(n int, w time.Duration, burst int) *rate.Limiter {
	if burst > n {
		burst = n
	}
	if burst < 1 {
		burst = 1
	}
	r := rate.Limit(float64(n-burst+1) / (w + limiterSlack).Seconds())
	return rate.NewLimiter(r, burst)
}

package main

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/kontermatt/kontermatt/adapters/discord"
	"github.com/kontermatt/kontermatt/adapters/httpserve"
	"github.com/kontermatt/kontermatt/adapters/telegram"
	"github.com/kontermatt/kontermatt/adapters/web"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/storage/etcdstore"
)

// chatAdapter is a chat platform's connection: it is the service's Outbox for that platform and
// feeds it commands while it runs.
type chatAdapter interface {
	table.Outbox
	Attach(svc *table.Service)
	Run(ctx context.Context) error
	Close() error
	Name() string
	// Describe names the platform and the bot on it for the start-up line: "telegram @kmbot".
	Describe() string
}

// discordChat adapts the Discord adapter to chatAdapter.
type discordChat struct{ *discord.Adapter }

func (d discordChat) Attach(svc *table.Service) { d.Adapter.Attach(svc) }
func (d discordChat) Close() error {
	// Run drained its queue; this sends what the service said while it stopped.
	return d.Adapter.Close()
}
func (d discordChat) Name() string     { return "discord" }
func (d discordChat) Describe() string { return "discord" }

type telegramChat struct{ *telegram.Adapter }

func (t telegramChat) Attach(svc *table.Service) { t.Adapter.Attach(svc) }
func (t telegramChat) Name() string              { return "telegram" }
func (t telegramChat) Describe() string {
	if t.Username() == "" {
		return "telegram (not reached yet)"
	}
	return "telegram @" + t.Username()
}

// webChat runs the web table like a platform: started (and retried) with the others, stopped
// after the service. It is no platform's Outbox: the platforms' outboxes tell it what changed.
type webChat struct{ *web.Server }

func (w webChat) Attach(svc *table.Service)              { w.Server.Attach(svc) }
func (w webChat) Deliver(context.Context, []api.Message) {}
func (w webChat) Name() string                           { return "web" }
func (w webChat) Describe() string                       { return "web " + w.Server.PublicURL() }

// newChats makes the configured platforms' adapters and registers each as its platform's Outbox;
// with the web table on, each platform's outbox also tells it which tables changed. leases are
// this copy's in the cluster (store etcd), nil for the only copy: then the adapters share what
// they say with the other copies, and hold what only one copy may do (the Telegram poller,
// each Discord shard).
func newChats(cfg Config, store table.KV, log *slog.Logger, outboxes map[string]table.Outbox, leases *etcdstore.Leases) ([]chatAdapter, error) {
	var cluster table.Leases // nil, not a nil *etcdstore.Leases: the only copy
	if leases != nil {
		cluster = leases
	}
	var chats []chatAdapter
	var w *web.Server
	if cfg.Web.Listen != "" {
		var err error
		if w, err = web.New(web.Config{Listen: cfg.Web.Listen, PublicURL: cfg.Web.PublicURL, LinkKey: []byte(cfg.Web.LinkKey),
			HTTP: httpserve.Limits{Proxies: cfg.proxies}, KV: store, Log: log}); err != nil {
			return nil, err
		}
	}
	outbox := func(o table.Outbox) table.Outbox {
		if w == nil {
			return o
		}
		return w.Tee(o)
	}
	var tg *telegram.Adapter
	var dc *discord.Adapter
	if cfg.Telegram.Token != "" {
		tcfg := telegram.Config{Token: cfg.Telegram.Token, APIURL: cfg.Telegram.APIURL, KV: store,
			Log: log, RulesURL: strings.ReplaceAll(rulesURL(cfg), "{lang}", ""), Webhook: *cfg.telegramWebhook(), Cluster: cluster}
		if w != nil {
			tcfg.Web, tcfg.MiniApp = w, cfg.Telegram.MiniApp
		}
		a, err := telegram.New(tcfg)
		if err != nil {
			return nil, err // the adapter's errors name the platform and never hold the token
		}
		tg = a
		outboxes[telegram.Platform] = outbox(a)
		chats = append(chats, telegramChat{a})
	}
	if cfg.Discord.Token != "" {
		dcfg := discord.Config{Token: cfg.Discord.Token, GuildID: cfg.Discord.GuildID, APIURL: cfg.Discord.APIURL,
			ShardCount: cfg.Discord.ShardCount, Interactions: cfg.discordInteractions(), KV: store, Log: log, Cluster: cluster}
		if w != nil {
			dcfg.Web, dcfg.ClientSecret = w, cfg.Discord.ClientSecret
		}
		a, err := discord.New(dcfg)
		if err != nil {
			return nil, err
		}
		dc = a
		outboxes[discord.Platform] = outbox(a)
		chats = append(chats, discordChat{a})
	}
	if w != nil {
		var vt web.Telegram
		var vd web.Discord
		if tg != nil {
			vt = tg
		}
		if dc != nil && cfg.Discord.ClientSecret != "" {
			vd = dc
		}
		w.Verify(vt, vd)
		chats = append(chats, webChat{w})
	}
	return chats, nil
}

// runChats serves every platform until ctx ends (SIGTERM): each stops taking updates and
// finishes what is in flight; the caller then stops the service and closes the database. A
// platform that fails to start is tried again (see runChat) while the others serve; the errors
// of platforms that cannot start at all are returned when ctx ends.
func runChats(ctx context.Context, chats []chatAdapter, log *slog.Logger) error {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed error
	for _, c := range chats {
		wg.Go(func() {
			if err := runChat(ctx, c, log); err != nil {
				mu.Lock()
				failed = errors.Join(failed, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return failed
}

// startRetry says how a platform that failed to start is tried again: after wait(n) before the
// n-th new try (n from 1), or longer if the platform asks (a limit that renews later).
var startRetry = func(n int) time.Duration { return min(5*time.Second<<min(n-1, 10), 5*time.Minute) }

// runChat runs one platform until ctx ends. A failed start (the network, the platform's servers,
// a registration refused) is tried again, with a growing wait, for as long as the bot runs: the
// platform may come back, and the other platforms serve meanwhile. An error the adapter marks
// permanent (a token refused) ends it at once: no retry can mend that.
func runChat(ctx context.Context, c chatAdapter, log *slog.Logger) error {
	for n := 1; ; n++ {
		err := c.Run(ctx)
		if err == nil || ctx.Err() != nil {
			return nil
		}
		var permanent interface{ Permanent() bool }
		if errors.As(err, &permanent) && permanent.Permanent() {
			log.Error("platform cannot start; the others go on without it", "platform", c.Name(), "err", err)
			return err
		}
		wait := startRetry(n)
		var later interface{ RetryAfter() time.Duration }
		if errors.As(err, &later) {
			wait = max(wait, later.RetryAfter())
		}
		log.Error("platform failed to start; trying again", "platform", c.Name(), "in", wait, "try", n, "err", err)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
}

// closeChats sends what the adapters still hold; call it after the service has stopped.
func closeChats(chats []chatAdapter, log *slog.Logger) {
	for _, c := range chats {
		if err := c.Close(); err != nil {
			log.Error("closing", "platform", c.Name(), "err", err)
		}
	}
	if len(chats) > 0 {
		log.Info("stopped")
	}
}

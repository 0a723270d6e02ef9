package main

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	"github.com/kontermatt/kontermatt/adapters/discord"
	"github.com/kontermatt/kontermatt/adapters/telegram"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/storage"
)

// chatAdapter is a chat platform's connection: it is the service's Outbox for that platform and
// feeds it commands while it runs.
type chatAdapter interface {
	table.Outbox
	Attach(svc *table.Service)
	Run(ctx context.Context) error
	Close() error
	Name() string
}

// discordChat adapts the Discord adapter to chatAdapter.
type discordChat struct{ *discord.Adapter }

func (d discordChat) Attach(svc *table.Service) { d.Adapter.Attach(svc) }
func (d discordChat) Close() error {
	// Run drained its queue; this sends what the service said while it stopped.
	return d.Adapter.Close()
}
func (d discordChat) Name() string { return "discord" }

type telegramChat struct{ *telegram.Adapter }

func (t telegramChat) Attach(svc *table.Service) { t.Adapter.Attach(svc) }
func (t telegramChat) Name() string              { return "telegram" }

// newChats makes the configured platforms' adapters and registers each as its platform's Outbox.
func newChats(cfg Config, store *storage.Store, log *slog.Logger, outboxes map[string]table.Outbox) ([]chatAdapter, error) {
	var chats []chatAdapter
	if cfg.Telegram.Token != "" {
		a, err := telegram.New(telegram.Config{Token: cfg.Telegram.Token, APIURL: cfg.Telegram.APIURL, KV: store,
			Log: log})
		if err != nil {
			return nil, err // the adapter's errors name the platform and never hold the token
		}
		outboxes[telegram.Platform] = a
		chats = append(chats, telegramChat{a})
	}
	if cfg.Discord.Token != "" {
		a, err := discord.New(discord.Config{Token: cfg.Discord.Token, GuildID: cfg.Discord.GuildID, APIURL: cfg.Discord.APIURL,
			ShardCount: cfg.Discord.ShardCount, KV: store, Log: log})
		if err != nil {
			return nil, err
		}
		outboxes[discord.Platform] = a
		chats = append(chats, discordChat{a})
	}
	return chats, nil
}

// runChats serves every platform until ctx ends (SIGTERM): each stops taking updates and
// finishes what is in flight; the caller then stops the service and closes the database.
func runChats(ctx context.Context, chats []chatAdapter, log *slog.Logger) error {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed error
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for _, c := range chats {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.Run(ctx); err != nil && ctx.Err() == nil {
				log.Error("platform stopped", "platform", c.Name(), "err", err)
				mu.Lock()
				failed = errors.Join(failed, err)
				mu.Unlock()
				cancel() // one platform failing stops the bot, so a supervisor restarts it whole
			}
		}()
	}
	wg.Wait()
	return failed
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

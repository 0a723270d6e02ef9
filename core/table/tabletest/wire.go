package tabletest

import (
	"log/slog"

	coachverbs "github.com/kontermatt/kontermatt/core/coach/verbs"
	"github.com/kontermatt/kontermatt/core/league"
	leagueverbs "github.com/kontermatt/kontermatt/core/league/verbs"
	privacyverbs "github.com/kontermatt/kontermatt/core/privacy/verbs"
	"github.com/kontermatt/kontermatt/core/table"
)

// New is table.New with every verb registered, those answered outside the engine too (Wire):
// the one call a test makes for a service that answers what the bot's does.
func New(cfg table.Config) *table.Service {
	Wire(&cfg)
	return table.New(cfg)
}

// Wire registers in cfg the verbs answered outside the engine, as cmd/bot does, with what they
// share with the service (the league).
func Wire(cfg *table.Config) {
	kv := cfg.KV
	if kv == nil {
		kv, _ = cfg.Store.(table.KV) // as table.New takes it
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.League == nil {
		cfg.League = league.NewCache(kv, log)
	}
	l := &leagueverbs.League{Cache: cfg.League, Records: cfg.Store, Now: cfg.Now, Log: log}
	p := &privacyverbs.People{League: cfg.League, Retention: cfg.Retention, Log: log}
	cfg.Verbs = append(cfg.Verbs, l.Verbs()...)
	cfg.Verbs = append(cfg.Verbs, p.Verbs()...)
	cfg.Verbs = append(cfg.Verbs, coachverbs.Verbs(cfg.Coach, log)...)
}

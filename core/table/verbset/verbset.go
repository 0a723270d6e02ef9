// Package verbset registers the verbs answered outside the engine (table.Config.Verbs): the
// league's, the privacy verbs, the place's settings and the coach's, with what they share with the service (the
// league). The bot's wiring and the tests' services (tabletest.New) call the one Wire, so a test
// answers what the bot does.
package verbset

import (
	"log/slog"

	coachverbs "github.com/kontermatt/kontermatt/core/coach/verbs"
	"github.com/kontermatt/kontermatt/core/league/keeper"
	leagueverbs "github.com/kontermatt/kontermatt/core/league/verbs"
	"github.com/kontermatt/kontermatt/core/places"
	placeverbs "github.com/kontermatt/kontermatt/core/places/verbs"
	privacyverbs "github.com/kontermatt/kontermatt/core/privacy/verbs"
	"github.com/kontermatt/kontermatt/core/table"
)

// Wire registers in cfg the verbs answered outside the engine, and gives it the league. The
// league the engine's match ends teach and the one the verbs read are one: cfg.League, a
// keeper.Keeper made here on the KV unless cfg has one.
func Wire(cfg *table.Config) {
	kv := cfg.KV
	if kv == nil {
		kv, _ = cfg.Store.(table.KV) // as table.New takes it
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	k, ok := cfg.League.(*keeper.Keeper)
	if !ok {
		k = keeper.New(kv, cfg.Shared, log)
		cfg.League = k
	}
	l := &leagueverbs.League{Cache: k.Cache, Records: cfg.Store, Now: cfg.Now, Log: log}
	p := &privacyverbs.People{League: k.Cache, Retention: cfg.Retention, Log: log}
	cfg.Verbs = append(cfg.Verbs, l.Verbs()...)
	cfg.Verbs = append(cfg.Verbs, p.Verbs()...)
	cfg.Verbs = append(cfg.Verbs, (&placeverbs.Settings{Places: places.New(kv, log), Log: log}).Verbs()...)
	cfg.Verbs = append(cfg.Verbs, coachverbs.Verbs(cfg.Coach, log)...)
}

// Package verbs answers the coach's verb that needs no table: coach on|off, whether a person's
// games are reviewed for them. The table service dispatches it (table.Config.Verbs) without a
// table's lock. Hints and reviews are about a table's game, so the engine answers them under the
// table's lock (core/table's coach.go), as it asks for each game's reviews at its end.
//
// verbs_test.go answers it through a service's registry, with a Coach that may only be closed
// and a memory store that fails where a test asks; core/table's coach_test.go says it over whole
// matches, its services registering it as the bot does (tabletest.Wire).
package verbs

import (
	"context"
	"log/slog"
	"strings"

	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/options"
	"github.com/kontermatt/kontermatt/core/privacy"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// Verbs is coach, for table.Config.Verbs: coach is the service's (table.Config.Coach; nil: the
// bot has none, and says so), log where a choice that could not be saved is told (nil: none).
func Verbs(coach table.Coach, log *slog.Logger) []table.OutsideVerb {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	run := func(ctx context.Context, r *table.Request) ([]api.Message, error) {
		return choose(ctx, r, coach != nil, log)
	}
	return []table.OutsideVerb{{Verb: api.VerbCoach, Person: true, Run: run}}
}

// choose sets whether the actor's games are reviewed (coach on|off), or says it.
func choose(ctx context.Context, r *table.Request, available bool, log *slog.Logger) ([]api.Message, error) {
	lang := r.Lang
	if !available {
		return nil, table.Refuse("coach.none")
	}
	arg := strings.ToLower(strings.TrimSpace(strings.Join(r.Args, " ")))
	on := r.Choices.Get(r.Actor.ID).Coach
	if arg != "" {
		o, _ := options.Named("hints")
		v, ok := o.Value(arg) // on and off, with their aliases in every language
		if !ok {
			return nil, table.Refuse("coach.usage")
		}
		on = v.Key == "on"
		if err := r.Choices.Change(ctx, r.Actor.ID, func(p *privacy.Choices) { p.Coach = on }); err != nil {
			log.Error("saving a coach choice", "err", err)
			return nil, table.NotStored(err)
		}
	}
	key := "coach.off"
	if on {
		key = "coach.on"
	}
	return []api.Message{r.Reply(api.KindNotice, i18n.T(lang, key))}, nil
}

// Package research holds the tools that measure the computer players: duel (two levels on
// duplicate deals or whole matches) and selfplay (matches through the service the chats use).
// They are subcommands of the binary, but no part of the bot's start-up: cmd/bot parses their
// flags and prints; the play is here.
package research

import (
	"context"
	"fmt"
	"time"

	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// SelfplayConfig says how many matches, at which level and with which table options.
type SelfplayConfig struct {
	Matches int
	Seed    uint64
	Level   string
	Options []string                                      // table options, e.g. stripes=5
	Robots  func(level string, seed uint64) table.Decider // the computer players
	Done    func()                                        // called after each match; may be nil
}

// Selfplay plays complete matches between computer players through the same service the chats
// use, in memory, and gives each kept record to keep.
func Selfplay(ctx context.Context, cfg SelfplayConfig, keep func(key string, rec []byte) error) error {
	store := mem.New()
	svc := table.New(table.Config{Store: store, Robots: cfg.Robots, Seed: cfg.Seed, Think: 10 * time.Second})
	defer svc.Close()
	admin := api.Player{ID: "selfplay", Name: "selfplay"}
	for i := 1; i <= cfg.Matches; i++ {
		place := api.Place{Platform: "selfplay", Chat: fmt.Sprint(i)}
		opts := append([]string{"timer=none", "level=" + cfg.Level}, cfg.Options...)
		for _, c := range []api.Command{{Verb: api.VerbNew, Args: opts}, {Verb: api.VerbLeave}, {Verb: api.VerbDeal, Admin: true}} {
			c.Place, c.Actor = place, admin
			replies, err := svc.Handle(ctx, c)
			if err != nil {
				return fmt.Errorf("match %d: %w", i, err)
			}
			for _, r := range replies {
				if r.Kind == api.KindError {
					return fmt.Errorf("match %d: %s", i, r.Text)
				}
			}
		}
		if err := svc.Settle(ctx); err != nil {
			return err
		}
		if cfg.Done != nil {
			cfg.Done()
		}
	}
	return store.Records(ctx, keep)
}

package tabletest

import (
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/verbset"
)

// New is table.New with every verb registered, those answered outside the engine too (Wire):
// the one call a test makes for a service that answers what the bot's does.
func New(cfg table.Config) *table.Service {
	Wire(&cfg)
	return table.New(cfg)
}

// Wire registers in cfg the verbs answered outside the engine, as cmd/bot does (verbset.Wire).
func Wire(cfg *table.Config) { verbset.Wire(cfg) }

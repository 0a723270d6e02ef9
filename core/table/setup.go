package table

import (
	"github.com/kontermatt/kontermatt/core/options"

	"github.com/kontermatt/kontermatt/core/table/api"
)

// Setup is what a table was opened with and who sits at it: a surface that opens its tables from
// settings of its own (the terminal, from its command line) compares it with what it was asked
// for before it resumes a stored table.
type Setup struct {
	Status  api.Status
	Options options.Options
	Learn   bool         // a guided game (learn)
	Lang    string       // the language the table speaks in public
	People  []api.Player // the people seated, in seat order
	Games   int          // the games of the current match begun so far
}

// SetupOf gives the setup of a table in memory; false when there is none.
func (s *Service) SetupOf(id string) (Setup, bool) {
	t, ok := s.index.get(id)
	if !ok {
		return Setup{}, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	su := Setup{Status: t.st.Status, Options: t.opts, Learn: t.st.Learn, Lang: t.st.Lang}
	for _, seat := range t.st.Seats {
		if seat.Player != nil {
			su.People = append(su.People, *seat.Player)
		}
	}
	if t.match != nil {
		su.Games = t.match.NumGames()
	}
	return su, true
}

// Speaks gives the language a person chose for themselves (lang xx), or "" when they chose none.
func (s *Service) Speaks(p api.Player) string { return s.users.Lang(p.ID) }

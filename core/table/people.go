package table

// The language a person's texts are in: their own choice (kept by core/privacy's Book and set by
// core/privacy/verbs' "lang xx"), else their platform's. A place's own defaults for new tables
// are core/places'.

import (
	"github.com/kontermatt/kontermatt/core/i18n"

	"github.com/kontermatt/kontermatt/core/table/api"
)

// langFor is the language for a person's texts away from a table: their own choice, else their
// platform's locale.
func (s *Service) langFor(p api.Player) string {
	if l := s.users.Lang(p.ID); l != "" {
		return l
	}
	return i18n.Pick(p.Locale)
}

package league

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/kontermatt/kontermatt/core/i18n"
)

// What the league's verbs (core/league/verbs) and the engine's season posts and standings
// pictures both say of a place's table.

// Standings is a place's ranked table of a month ("" all time), without those hidden says are
// never shown.
func (c *Cache) Standings(ctx context.Context, placeKey, month string, hidden func(id string) bool) []Standing {
	p := c.Place(ctx, placeKey)
	rows := p.AllTime()
	if month != "" {
		rows = p.SeasonTable(month)
	}
	return Rank(rows, hidden)
}

// StandingsRows are a ranked table's lines in lang, each after a line break.
func StandingsRows(lang string, ranked []Standing) string {
	if len(ranked) == 0 {
		return "\n" + i18n.T(lang, "top.empty")
	}
	var b strings.Builder
	for i, r := range ranked {
		line := i18n.T(lang, "top.row", i+1, r.Name, i18n.Decimal(lang, r.Rating.Ordinal()), r.Won, r.Matches)
		if r.Provisional {
			line += " " + i18n.T(lang, "top.provisional")
		}
		b.WriteString("\n" + line)
	}
	return b.String()
}

// MonthName is "November 2026" in lang.
func MonthName(lang, month string) string {
	t, err := time.Parse("2006-01", month)
	if err != nil {
		return month
	}
	names := strings.Split(i18n.T(lang, "months"), ",")
	if len(names) != 12 {
		return month
	}
	return names[t.Month()-1] + " " + strconv.Itoa(t.Year())
}

// FirstOfMonth is midnight of the first of now's month where the league keeps time.
func FirstOfMonth(now time.Time) time.Time {
	t := now.In(Zone)
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, Zone)
}

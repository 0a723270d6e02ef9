package table

import (
	"context"
	"net/url"
	"strings"

	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/options"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// RulesLines are the game in short, in lang: who names trump and when, following or trumping,
// the trump order, the points, the announcements and the stake, how stripes move and the draw.
// /rules says them in the chats and the web table's rules page shows the same lines.
func RulesLines(lang string) []string { return strings.Split(i18n.T(lang, "rules.text"), "\n") }

// RulesLink is the rules page for a reader of lang: Config.RulesURL with "{lang}" replaced by
// the language; "" when there is none.
func RulesLink(rulesURL, lang string) string {
	return strings.ReplaceAll(rulesURL, "{lang}", url.QueryEscape(lang))
}

// rules answers /rules: the game in short, the house rules new tables here get (not in a private
// chat or at a terminal, which have none), how to learn by playing, and the rules page when there
// is one.
func (s *Service) rules(ctx context.Context, _ *tbl, c *call) *userError {
	lang := c.lang
	lines := append([]string{i18n.T(lang, "rules.title")}, RulesLines(lang)...)
	if !c.Private && !s.view.Surface(c.Place).Personal { // a terminal's settings are its command line's
		opts, _ := options.Parse(s.places.Get(ctx, c.Place.Key()).Args())
		lines = append(lines, "", i18n.T(lang, "rules.house", options.Line(lang, opts)))
	}
	lines = append(lines, i18n.T(lang, "rules.learn"))
	if link := RulesLink(s.cfg.RulesURL, lang); link != "" {
		lines = append(lines, i18n.T(lang, "rules.link", link))
	}
	return c.answer(reply(c.Command, lang, api.KindReply, strings.Join(lines, "\n")))
}

package table

// People and places: the language a person's texts are in (their own choice, kept by
// core/privacy's Book and set by core/privacy/verbs' "lang xx"), and each place's own defaults
// for new tables (settings), which the people at its table change together.

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/options"
	"github.com/kontermatt/kontermatt/core/places"
)

// langFor is the language for a person's texts away from a table: their own choice, else their
// platform's locale.
func (s *Service) langFor(p Player) string {
	if l := s.users.Lang(p.ID); l != "" {
		return l
	}
	return i18n.Pick(p.Locale)
}

// langOf is the language for a player's private texts at a table: their own choice, their
// platform locale, then the table's language.
func (s *Service) langOf(t *tbl, p Player) string { return s.view.personLang(p, t.st.Lang) }

func (s *Service) settingsVerb(ctx context.Context, _ *tbl, c *call) *userError {
	cmd, lang := c.Command, c.lang
	if cmd.Private {
		return refuse("settings.private")
	}
	key := cmd.Place.Key()
	cur := s.places.Get(ctx, key)
	if len(cmd.Args) == 0 {
		opts, _ := options.Parse(cur.Args())
		text := i18n.T(lang, "settings.title", placeTitle(cmd, lang)) + "\n" + options.Line(lang, opts)
		if cur.Lang != "" {
			text += "\n" + i18n.T(lang, "settings.lang", i18n.T(cur.Lang, "lang.name"))
		}
		return c.answer(reply(cmd, lang, KindReply, text+"\n"+i18n.T(lang, "settings.how")))
	}
	next := places.Settings{Options: map[string]string{}, Lang: cur.Lang}
	for k, v := range cur.Options {
		next.Options[k] = v
	}
	var optArgs []string
	for _, a := range cmd.Args {
		k, v, _ := strings.Cut(a, "=")
		if i18n.Fold(k) == "lang" || i18n.Fold(k) == "language" {
			l := i18n.Match(v)
			if l == "" {
				return refuse("err.bad_lang", lit(v))
			}
			next.Lang = l
			continue
		}
		optArgs = append(optArgs, a)
	}
	parsed, err := options.Parse(optArgs)
	if oe := (*options.Error)(nil); errors.As(err, &oe) {
		return optionRefusal(oe)
	}
	for _, a := range optArgs {
		k, _, _ := strings.Cut(a, "=")
		if o, ok := options.Named(strings.TrimSpace(k)); ok {
			next.Options[o.Key] = o.In(parsed)
		}
	}
	change := strings.Join(append(next.Args(), "lang="+next.Lang), " ")
	if !cmd.Admin {
		votes, need, uerr := s.voteSettings(ctx, cmd, change)
		if uerr != nil {
			return uerr
		}
		if votes < need {
			return c.answer(reply(cmd, lang, KindNotice, i18n.T(lang, "settings.vote", cmd.Actor.Name, votes, need)))
		}
	}
	if err := s.places.Set(ctx, key, next); err != nil {
		s.cfg.Log.Error("saving a place's settings", "err", err)
		return storeRefusal(err)
	}
	opts, _ := options.Parse(next.Args())
	return c.answer(reply(cmd, lang, KindNotice, i18n.T(lang, "settings.saved")+"\n"+options.Line(lang, opts)))
}

// voteSettings counts a seated person's vote for a change of the place's settings: every person
// at the place's table must ask for the same change.
func (s *Service) voteSettings(ctx context.Context, cmd Command, change string) (votes, need int, uerr *userError) {
	t, ok := s.table(s.TableAt(cmd.Place))
	if !ok {
		return 0, 0, refuse("settings.who")
	}
	t.mu.Lock()
	var humans []string
	for _, seat := range t.st.Seats {
		if seat.Human() && !seat.Away {
			humans = append(humans, seat.Player.ID)
		}
	}
	t.mu.Unlock()
	if !slices.Contains(humans, cmd.Actor.ID) {
		return 0, 0, refuse("settings.who")
	}
	n, need, err := s.places.Vote(ctx, cmd.Place.Key(), cmd.Actor.ID, humans, change)
	if err != nil {
		s.cfg.Log.Error("counting a vote on a place's settings", "err", err)
		return 0, 0, storeRefusal(err)
	}
	return n, need, nil
}

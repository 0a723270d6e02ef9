// Package verbs answers settings: a place's defaults for new tables and its tables' language,
// shown to anyone there, changed at once by a chat admin and otherwise when every person at the
// place's table asked for the same change (core/places keeps them and the votes). The table
// service dispatches it (table.Config.Verbs) without a table's lock; who sits at the place's
// table is the one thing it asks of the engine (table.Request.Seated).
//
// verbs_test.go answers it through a service's registry, on a memory store that fails where a
// test asks; core/table's TestHouseRules and Telegram's TestAdminsChangeHouseRules say it over
// whole matches and chats, their services registering it as the bot does (tabletest.Wire).
package verbs

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/options"
	"github.com/kontermatt/kontermatt/core/places"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// Settings answers the settings verb over a book of places' settings.
type Settings struct {
	Places *places.Book
	Log    *slog.Logger // nil: none
}

// Verbs is settings, for table.Config.Verbs.
func (s *Settings) Verbs() []table.OutsideVerb {
	if s.Log == nil {
		s.Log = slog.New(slog.DiscardHandler)
	}
	return []table.OutsideVerb{{Verb: api.VerbSettings, Place: true, Admin: true, Run: s.settings}}
}

// settings shows the place's settings (no arguments), or changes them: "stripes=3 lang=de".
func (s *Settings) settings(ctx context.Context, r *table.Request) ([]api.Message, error) {
	lang := r.Lang
	if r.Private {
		return nil, table.Refuse("settings.private")
	}
	key := r.Place.Key()
	cur := s.Places.Get(ctx, key)
	if len(r.Args) == 0 {
		opts, _ := options.Parse(cur.Args())
		text := i18n.T(lang, "settings.title", r.PlaceTitle()) + "\n" + options.Line(lang, opts)
		if cur.Lang != "" {
			text += "\n" + i18n.T(lang, "settings.lang", i18n.T(cur.Lang, "lang.name"))
		}
		return []api.Message{r.Reply(api.KindReply, text+"\n"+i18n.T(lang, "settings.how"))}, nil
	}
	// What the command changes: the language, and the options it names.
	chosenLang, named := "", map[string]string{}
	var optArgs []string
	for _, a := range r.Args {
		k, v, _ := strings.Cut(a, "=")
		if i18n.Fold(k) == "lang" || i18n.Fold(k) == "language" {
			l := i18n.Match(v)
			if l == "" {
				return nil, table.Refuse("err.bad_lang", v)
			}
			chosenLang = l
			continue
		}
		optArgs = append(optArgs, a)
	}
	parsed, err := options.Parse(optArgs)
	if oe := (*options.Error)(nil); errors.As(err, &oe) {
		return nil, table.OptionRefusal(oe)
	}
	for _, a := range optArgs {
		k, _, _ := strings.Cut(a, "=")
		if o, ok := options.Named(strings.TrimSpace(k)); ok {
			named[o.Key] = o.In(parsed)
		}
	}
	apply := func(ps *places.Settings) {
		opts := maps.Clone(ps.Options)
		if opts == nil {
			opts = map[string]string{}
		}
		maps.Copy(opts, named)
		ps.Options = opts
		if chosenLang != "" {
			ps.Lang = chosenLang
		}
	}
	next := cur
	apply(&next)
	change := strings.Join(append(next.Args(), "lang="+next.Lang), " ")
	if !r.Admin {
		// Every person at the place's table must ask for the same change.
		seated, ok := r.Seated()
		if !ok || !slices.Contains(seated, r.Actor.ID) {
			return nil, table.Refuse("settings.who")
		}
		votes, need, err := s.Places.Vote(ctx, key, r.Actor.ID, seated, change)
		if err != nil {
			s.Log.Error("counting a vote on a place's settings", "err", err)
			return nil, table.NotStored(err)
		}
		if votes < need {
			return []api.Message{r.Reply(api.KindNotice, i18n.T(lang, "settings.vote", r.Actor.Name, votes, need))}, nil
		}
	}
	// Made from the settings stored now: another change meanwhile (an admin at another copy)
	// is kept beside this one.
	kept, err := s.Places.Change(ctx, key, apply)
	if err != nil {
		s.Log.Error("saving a place's settings", "err", err)
		return nil, table.NotStored(err)
	}
	opts, _ := options.Parse(kept.Args())
	return []api.Message{r.Reply(api.KindNotice, i18n.T(lang, "settings.saved")+"\n"+options.Line(lang, opts))}, nil
}

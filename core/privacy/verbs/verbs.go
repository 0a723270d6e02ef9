// Package verbs answers what a person may ask about themselves: what is kept about them (mydata),
// to be forgotten (forget), and to be spoken to in their own language (lang xx). The table
// service dispatches them (table.Config.Verbs) without a table's lock; forgetting reaches the
// tables through the service's Forget, a new language through Request.Retell.
//
// verbs_test.go answers each verb through a service's registry, on a memory store that fails where
// a test asks; core/table's forget_test.go, league_test.go and lifecycle_test.go say them over
// whole matches, their services registering them as the bot does (tabletest.Wire).
package verbs

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/league"
	"github.com/kontermatt/kontermatt/core/privacy"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// People is what the verbs tell a person about: the league (keeper.Keeper's Cache) and how long
// closed tables are kept (table.Config.Retention).
type People struct {
	League    *league.Cache
	Retention time.Duration // 0: table.DefaultRetention, as the service takes it
	Log       *slog.Logger  // nil: none
}

// Verbs are mydata, forget and a person's own language (lang xx), for table.Config.Verbs.
func (p *People) Verbs() []table.OutsideVerb {
	if p.Retention <= 0 {
		p.Retention = table.DefaultRetention
	}
	if p.Log == nil {
		p.Log = slog.New(slog.DiscardHandler)
	}
	return []table.OutsideVerb{
		{Verb: api.VerbMyData, Place: true, Run: p.myData},
		{Verb: api.VerbForget, Run: p.forget},
		{Verb: api.VerbLang, Personal: true, Run: p.lang},
	}
}

// lang sets the language a person is spoken to in ("lang xx"): their own choice, kept apart from
// every table (the engine keeps "lang table xx"). Their private messages at the tables they sit
// at follow at once.
func (p *People) lang(ctx context.Context, r *table.Request) ([]api.Message, error) {
	l, err := table.ParseLang(r.Args)
	if err != nil {
		return nil, err
	}
	if err := r.Choices.Change(ctx, r.Actor.ID, func(c *privacy.Choices) { c.Lang = l }); err != nil {
		p.Log.Error("saving a language choice", "err", err)
		return nil, table.NotStored(err)
	}
	r.Retell(ctx)
	m := r.Reply(api.KindNotice, i18n.T(l, "note.lang_player"))
	m.Lang = l // said in the language just chosen
	return []api.Message{m}, nil
}

// myData tells the person who asks, privately, what is kept about them, and how to change it.
func (p *People) myData(ctx context.Context, r *table.Request) ([]api.Message, error) {
	lang, id := r.Lang, r.Actor.ID
	prefs := r.Choices.Get(id)
	var b strings.Builder
	b.WriteString(r.SayAbout(id, "mydata.title", r.Actor.Name, id))
	if prefs.Lang != "" {
		b.WriteString("\n" + i18n.T(lang, "mydata.lang", i18n.T(prefs.Lang, "lang.name")))
	}
	if prefs.Hidden {
		b.WriteString("\n" + i18n.T(lang, "mydata.hidden"))
	} else {
		b.WriteString("\n" + i18n.T(lang, "mydata.shown"))
	}
	pl, here := p.League.Place(ctx, r.Place.Key()).Players[id]
	global, rated := p.League.Person(ctx, id)
	if here {
		b.WriteString("\n" + i18n.T(lang, "mydata.here", r.PlaceTitle(), pl.Games, i18n.Decimal(lang, pl.Rating.Ordinal())))
	}
	if rated {
		b.WriteString("\n" + i18n.T(lang, "mydata.global", i18n.Decimal(lang, global.Ordinal())))
	}
	b.WriteString("\n" + i18n.N(lang, "mydata.kept", int(p.Retention.Hours()/24)))
	m := r.Reply(api.KindReply, b.String())
	m.Secret, m.Public = true, i18n.T(lang, "league.private")
	return []api.Message{m}, nil
}

// forget asks first ("forget"), then forgets the person ("forget yes", Service.Forget).
func (p *People) forget(ctx context.Context, r *table.Request) ([]api.Message, error) {
	lang := r.Lang
	if strings.ToLower(strings.TrimSpace(strings.Join(r.Args, " "))) != "yes" {
		m := r.Reply(api.KindReply, i18n.T(lang, "forget.ask"))
		m.Secret, m.Public = true, i18n.T(lang, "league.private")
		return []api.Message{m}, nil
	}
	n, err := r.Service.Forget(ctx, r.Actor.ID)
	var pending *table.ForgetPending
	if err != nil && !errors.As(err, &pending) {
		p.Log.Error("forgetting a person", "err", err)
		// Part may be done (the store writes in several transactions): never "nothing was
		// changed"; a second forget finishes it.
		return nil, table.Refuse("forget.unfinished")
	}
	text := i18n.N(lang, "forget.done", n)
	if pending != nil {
		p.Log.Warn("forgot a person; the store keeps older versions until its compaction", "until", pending.By, "err", pending.Cause)
		text += " " + i18n.T(lang, "forget.later", pending.By.UTC().Format("2006-01-02 15:04 UTC"))
	}
	m := r.Reply(api.KindNotice, text)
	m.Secret, m.Public, m.Reason = true, i18n.T(lang, "league.private"), api.ReasonForgotten
	return []api.Message{m}, nil
}

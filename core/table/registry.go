package table

import (
	"context"
	"errors"

	"github.com/kontermatt/kontermatt/core/options"
	"github.com/kontermatt/kontermatt/core/privacy"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// The registry's seam: a verb that needs no table (help's kind, or a place's league) may live
// outside the engine. Its package gives an OutsideVerb, the wiring lists it in Config.Verbs, and
// the service answers its commands as it answers its own verbs of scope none and place: the
// actor's language found, an anonymous sender refused where a person is needed, a refusal
// turned into an error reply in the reader's language.

// OutsideVerb is a verb answered without a table's lock, registered from outside the engine
// (Config.Verbs).
type OutsideVerb struct {
	Verb api.Verb
	// Place: the verb is about the place the command was sent in, with a table there or not
	// (stats, settings); else it is answered for the actor alone (forget, coach).
	Place bool
	// Person: refused to someone who speaks for the chat (Command.Anonymous).
	Person bool
	// Admin: a chat admin may do more with it than others (AdminMatters).
	Admin bool
	// Personal: it answers only the actor's own form of an engine verb whose other form is the
	// table's (lang xx, against lang table xx), as a verb of the actor's alone that needs a person.
	Personal bool
	// Run answers a command of the verb: the replies to its actor, or an error made by Refuse
	// or NotStored (any other error is logged and told as an internal error).
	Run func(ctx context.Context, r *Request) ([]api.Message, error)
}

// Request is a command of an OutsideVerb with what the service knows around it.
type Request struct {
	api.Command
	// Lang is the actor's language: their own choice, else their platform's locale.
	Lang string
	// Surface is what the command's place shows (Config.Surfaces).
	Surface api.Surface
	// Service is the service answering it, for what the verb asks of the engine (Forget).
	Service *Service
	// Choices are each person's own choices, as the service keeps them.
	Choices *privacy.Book
}

// SayAbout gives the text for key about the person id, named by name; but when that person is
// the one reading their own screen (Surface.Personal), the text's second-person variant (key.you)
// with the other arguments: "You have not finished a game", not "You has …".
func (r *Request) SayAbout(id, key, name string, args ...any) string {
	return sayAbout(r.Surface, r.Command, id, r.Lang, key, name, args...)
}

// PlaceTitle is how the request's place is named in the league's texts.
func (r *Request) PlaceTitle() string { return placeTitle(r.Command, r.Lang) }

// Hidden reports whether a person is never shown in a place's league: they asked not to be
// ranked, or they are a forgotten person's placeholder.
func (r *Request) Hidden(id string) bool { return r.Service.hidden(id) }

// Retell shows again every table the actor sits at, as it stands: after a choice of their own
// changed what they see there (their language), their private messages follow at once. Each
// table's lock is taken in turn, never two at once.
func (r *Request) Retell(ctx context.Context) {
	s := r.Service
	for _, t := range s.index.all() {
		if !t.view().seats(r.Actor.ID) {
			continue // found by the seats as stored: no other table's lock is waited for
		}
		t.mu.Lock()
		s.pub.publish(ctx, t, nil)
		t.mu.Unlock()
	}
}

// Seated gives the people seated at the table of the request's place, and there (not away), by
// player ID: those who decide together what the place's settings become (core/places/verbs).
// false: the place has no table. They are read as the table was last stored, without its lock,
// which a command of the table holds through its commit: a vote waits for no table's store.
func (r *Request) Seated() ([]string, bool) {
	s := r.Service
	t, ok := s.index.get(s.TableAt(r.Place))
	if !ok {
		return nil, false
	}
	v := t.view()
	var people []string
	for i, id := range v.players {
		if id != "" && !v.away[i] {
			people = append(people, id)
		}
	}
	return people, true
}

// OptionRefusal refuses a command whose options do not read (options.Parse's error), telling
// the actor which option and what it takes, as new does.
func OptionRefusal(e *options.Error) error { return optionRefusal(e) }

// ParseLang reads the language of "lang [table] xx"; its error is a refusal (Refuse).
func ParseLang(args []string) (string, error) {
	l, uerr := parseLangArgs(args)
	if uerr != nil {
		return "", uerr
	}
	return l, nil
}

// personalForm reports whether v may be registered beside the engine's verb of its name: it
// answers that verb's personal form (OutsideVerb.Personal), and nothing else does yet.
func personalForm(v OutsideVerb, outside map[api.Verb]verbSpec) bool {
	_, twice := outside[v.Verb]
	return v.Personal && verbs[v.Verb].personal != nil && !twice
}

// Reply is a message of kind to the request's actor, in their language.
func (r *Request) Reply(kind api.Kind, text string) api.Message {
	return reply(r.Command, r.Lang, kind, text)
}

// Refuse refuses a command: the actor is told the catalog text key with args, in their language.
func Refuse(key string, args ...string) error {
	e := refuse(key)
	for _, a := range args {
		e.args = append(e.args, lit(a))
	}
	return e
}

// NotStored refuses a command because the store failed (err): Handle gives ErrNotStored wrapping
// it, as for the engine's own verbs.
func NotStored(err error) error { return storeRefusal(err) }

// outsideSpec is an outside verb as the service dispatches it.
func outsideSpec(v OutsideVerb) verbSpec {
	sc := scopeNone
	if v.Place {
		sc = scopePlace
	}
	return verbSpec{scope: sc, person: v.Person, admin: v.Admin,
		run: func(s *Service, ctx context.Context, _ *tbl, c *call) *userError {
			msgs, err := v.Run(ctx, &Request{Command: c.Command, Lang: c.lang, Surface: s.view.Surface(c.Place), Service: s,
				Choices: s.users})
			if err != nil {
				var ue *userError
				if errors.As(err, &ue) {
					return ue
				}
				s.cfg.Log.Error("a verb failed", "verb", v.Verb, "err", err)
				return refuse("err.internal")
			}
			return c.answer(msgs...)
		}}
}

// spec is what the service knows of a verb: its own, or one registered from outside.
func (s *Service) spec(v api.Verb) (verbSpec, bool) {
	if spec, ok := verbs[v]; ok {
		return spec, true
	}
	spec, ok := s.outside[v]
	return spec, ok
}

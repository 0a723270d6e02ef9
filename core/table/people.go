package table

// People and places: the language a person's texts are in (their own choice, kept by
// core/privacy's Book and set by core/privacy/verbs' "lang xx"), and each place's own defaults
// for new tables (settings), which the people at its table change together.

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/options"
)

// getJSON reads a KV entry of the service's into v; false when there is none, or it does not
// read (which is logged).
func (s *Service) getJSON(ctx context.Context, bucket, key string, v any) bool {
	data, ok, err := s.cfg.KV.Get(ctx, bucket, key)
	if err != nil {
		s.cfg.Log.Error("reading a setting", "bucket", bucket, "err", err)
		return false
	}
	if ok {
		if err := json.Unmarshal(data, v); err != nil {
			s.cfg.Log.Error("a setting does not decode; using the defaults", "bucket", bucket, "key", key, "err", err)
			return false
		}
	}
	return ok
}

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

// placeSettings are a place's defaults for new tables: option keys and values as new takes them,
// and the language its tables speak. Kept in the KV (bucket table.place), per place.
type placeSettings struct {
	Options map[string]string `json:"options,omitempty"`
	Lang    string            `json:"lang,omitempty"`
}

const bucketPlaces = "table.place"

func (s *Service) placeSettings(ctx context.Context, placeKey string) placeSettings {
	var ps placeSettings
	s.getJSON(ctx, bucketPlaces, placeKey, &ps)
	return ps
}

// args are the settings as arguments of new, in the options' order.
func (ps placeSettings) args() []string {
	var out []string
	for _, o := range options.All {
		if v, ok := ps.Options[o.Key]; ok {
			out = append(out, o.Key+"="+v)
		}
	}
	return out
}

// proposal is a change to a place's settings some of the people at its table asked for; it is
// made when all of them have.
type proposal struct {
	Change string   `json:"change"`
	Votes  []string `json:"votes,omitempty"` // the player IDs of those who asked for it
}

func (s *Service) settingsVerb(ctx context.Context, _ *tbl, c *call) *userError {
	cmd, lang := c.Command, c.lang
	if cmd.Private {
		return refuse("settings.private")
	}
	key := cmd.Place.Key()
	cur := s.placeSettings(ctx, key)
	if len(cmd.Args) == 0 {
		opts, _ := options.Parse(cur.args())
		text := i18n.T(lang, "settings.title", placeTitle(cmd, lang)) + "\n" + options.Line(lang, opts)
		if cur.Lang != "" {
			text += "\n" + i18n.T(lang, "settings.lang", i18n.T(cur.Lang, "lang.name"))
		}
		return c.answer(reply(cmd, lang, KindReply, text+"\n"+i18n.T(lang, "settings.how")))
	}
	next := placeSettings{Options: map[string]string{}, Lang: cur.Lang}
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
	change := strings.Join(append(next.args(), "lang="+next.Lang), " ")
	if !cmd.Admin {
		votes, need, uerr := s.voteSettings(ctx, cmd, change)
		if uerr != nil {
			return uerr
		}
		if votes < need {
			return c.answer(reply(cmd, lang, KindNotice, i18n.T(lang, "settings.vote", cmd.Actor.Name, votes, need)))
		}
	}
	data, _ := json.Marshal(next)
	if err := s.cfg.KV.Put(ctx, bucketPlaces, key, data); err != nil {
		s.cfg.Log.Error("saving a place's settings", "err", err)
		return storeRefusal(err)
	}
	opts, _ := options.Parse(next.args())
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
	n := 0
	err := s.changeProposal(ctx, cmd.Place.Key(), func(p *proposal) {
		if p.Change != change {
			*p = proposal{Change: change}
		}
		if !slices.Contains(p.Votes, cmd.Actor.ID) {
			p.Votes = append(p.Votes, cmd.Actor.ID)
		}
		n = 0
		for _, v := range p.Votes {
			if slices.Contains(humans, v) {
				n++
			}
		}
		if n >= len(humans) {
			*p = proposal{} // made: the proposal goes
		}
	})
	if err != nil {
		s.cfg.Log.Error("counting a vote on a place's settings", "err", err)
		return 0, 0, storeRefusal(err)
	}
	return n, len(humans), nil
}

// bucketProposals is the service's KV bucket of the changes of places' settings being voted on:
// place key → proposal. It is in the store, not in a copy's memory, so that votes given at
// several copies count together; it moves by compare-and-swap where the KV can (Swapper).
const bucketProposals = "table.proposal"

// changeProposal changes the place's proposal as f says (an empty proposal is none), from the
// one stored now, again if another copy changed it meanwhile.
func (s *Service) changeProposal(ctx context.Context, placeKey string, f func(p *proposal)) error {
	for attempt := 1; ; attempt++ {
		raw, found, err := s.cfg.KV.Get(ctx, bucketProposals, placeKey)
		if err != nil {
			return err
		}
		var p proposal
		if found && json.Unmarshal(raw, &p) != nil {
			p = proposal{} // one that does not read is started anew
		}
		if !found {
			raw = nil
		}
		f(&p)
		var next []byte
		if p.Change != "" {
			next, _ = json.Marshal(p)
		}
		sw, ok := s.claims()
		switch {
		case !ok && next == nil:
			return s.cfg.KV.Delete(ctx, bucketProposals, placeKey)
		case !ok:
			return s.cfg.KV.Put(ctx, bucketProposals, placeKey, next)
		}
		if _, err = sw.Swap(ctx, bucketProposals, placeKey, raw, next); !errors.Is(err, ErrConflict) || attempt == 4*maxAttempts {
			return err
		}
	}
}

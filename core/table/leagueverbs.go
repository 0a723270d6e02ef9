package table

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/league"
)

// sayAbout gives the text for key about the person id, named by its first argument; but when
// that person is the one reading their own screen (Surface.Personal), the text's second-person
// variant (key.you) with the other arguments, as say does for a seat: "You have not finished a
// game", not "You has …" with the terminal's "You" as a name.
func (s *Service) sayAbout(cmd Command, id, lang, key string, name string, args ...any) string {
	if id == cmd.Actor.ID && s.surface(cmd.Place).Personal {
		return i18n.T(lang, key+".you", args...)
	}
	return i18n.T(lang, key, append([]any{name}, args...)...)
}

// placeTitle is how the place is named in the league's texts.
func placeTitle(cmd Command, lang string) string {
	if cmd.Place.Title != "" {
		return cmd.Place.Title
	}
	return i18n.T(lang, "league.here")
}

func (s *Service) statsVerb(_ context.Context, _ *tbl, c *call) *userError {
	cmd, lang := c.Command, c.lang
	arg := strings.TrimSpace(strings.Join(cmd.Args, " "))
	if word := strings.ToLower(arg); word == "off" || word == "on" {
		if err := s.users.setHidden(cmd.Actor.ID, word == "off"); err != nil {
			return refuse("err.internal")
		}
		return c.answer(reply(cmd, lang, KindNotice, i18n.T(lang, "stats."+word)))
	}
	p := s.league.Place(cmd.Place.Key())
	id := cmd.Actor.ID
	if arg != "" && strings.ToLower(arg) != "me" {
		// Of two people with the name, the one who played more here (then the smaller ID).
		id = ""
		for _, pid := range slices.Sorted(maps.Keys(p.Players)) {
			pl := p.Players[pid]
			if i18n.Fold(pl.Name) == i18n.Fold(arg) && !strings.HasPrefix(pid, forgottenPrefix) &&
				(id == "" || pl.Games > p.Players[id].Games) {
				id = pid
			}
		}
		if id == "" {
			return refuse("stats.nobody", lit(arg))
		}
	}
	pl, ok := p.Players[id]
	name := cmd.Actor.Name
	if ok {
		name = pl.Name
	}
	switch {
	case id != cmd.Actor.ID && s.users.get(id).Hidden:
		return c.answer(reply(cmd, lang, KindReply, i18n.T(lang, "stats.hidden", name)))
	case !ok || pl.Games == 0:
		return c.answer(reply(cmd, lang, KindReply, s.sayAbout(cmd, id, lang, "stats.none", name, placeTitle(cmd, lang))))
	}
	var b strings.Builder
	b.WriteString(s.sayAbout(cmd, id, lang, "stats.title", name, placeTitle(cmd, lang)))
	ranked := league.Rank(p.AllTime(), s.hidden)
	rank := slices.IndexFunc(ranked, func(r league.Standing) bool { return r.ID == id })
	if pl.Matches > 0 {
		line := i18n.T(lang, "stats.rating", decimal(lang, pl.Rating.Ordinal()), decimal(lang, pl.Rating.Mu), decimal(lang, pl.Rating.Sigma))
		if rank >= 0 {
			line += " · " + i18n.T(lang, "stats.rank", rank+1, len(ranked))
		}
		if pl.Rating.Sigma > league.Provisional {
			line += " · " + i18n.T(lang, "stats.provisional")
		}
		b.WriteString("\n" + line)
		share, lo, hi := league.Share(pl.MatchesWon, pl.Matches)
		b.WriteString("\n" + i18n.N(lang, "stats.matches", pl.Matches, pl.MatchesWon, percent(share), percent(lo), percent(hi)))
	}
	b.WriteString("\n" + i18n.N(lang, "stats.games", pl.Games, pl.GamesWon, pl.Draws))
	if _, c := league.Best(s.shown(pl.With), false); c != nil {
		b.WriteString("\n" + i18n.T(lang, "stats.partner", c.Name, c.Won, c.Matches))
	}
	if _, c := league.Best(s.shown(pl.Against), true); c != nil {
		b.WriteString("\n" + i18n.T(lang, "stats.opponent", c.Name, c.Won, c.Matches))
	}
	b.WriteString("\n" + i18n.T(lang, "stats.calls", pl.KonterCalled, pl.KonterWon, pl.MattCalled, pl.MattWon,
		pl.TrumpNamed, pl.TrumpWon))
	b.WriteString("\n" + i18n.T(lang, "stats.tricks", pl.AllTricks, pl.NoTricks, pl.BestRun))
	m := reply(cmd, lang, KindReply, b.String())
	if id == cmd.Actor.ID && s.users.get(id).Hidden {
		// Someone who is not ranked sees their statistics alone, never in the group.
		m.Secret, m.Public = true, i18n.T(lang, "league.private")
	}
	return c.answer(m)
}

// hidden reports whether a person asked not to be ranked, or is a forgotten person's placeholder
// (rated, so that the others' ratings stay as they were, and never shown).
func (s *Service) hidden(id string) bool {
	return strings.HasPrefix(id, forgottenPrefix) || s.users.get(id).Hidden
}

// shown is a player's book of partners or opponents without those never shown.
func (s *Service) shown(book map[string]*league.Company) map[string]*league.Company {
	out := make(map[string]*league.Company, len(book))
	for id, c := range book {
		if !s.hidden(id) {
			out[id] = c
		}
	}
	return out
}

// season reads top's argument: "" or "month" is this month, "all" all time, "2026-11" that
// month, "last" the month before.
func (s *Service) season(arg string) (string, bool) {
	now := s.cfg.Now()
	switch strings.ToLower(strings.TrimSpace(arg)) {
	case "", "month", "mount", "monat", "mois":
		return league.SeasonOf(now), true
	case "last":
		return league.SeasonOf(firstOfMonth(now).Add(-time.Hour)), true
	case "all", "alles", "tout":
		return "", true
	}
	if t, err := time.Parse("2006-01", strings.TrimSpace(arg)); err == nil {
		return t.Format("2006-01"), true
	}
	return "", false
}

// firstOfMonth is midnight of the first of now's month where the league keeps time.
func firstOfMonth(now time.Time) time.Time {
	t := now.In(league.Zone)
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, league.Zone)
}

func (s *Service) topVerb(_ context.Context, _ *tbl, c *call) *userError {
	cmd, lang := c.Command, c.lang
	month, ok := s.season(strings.Join(cmd.Args, " "))
	if !ok {
		return refuse("top.usage")
	}
	m := reply(cmd, lang, KindReply, s.standingsText(cmd.Place.Key(), placeTitle(cmd, lang), month, lang))
	m.Picture, m.Season = PictureStandings, seasonArg(month)
	return c.answer(m)
}

func seasonArg(month string) string {
	if month == "" {
		return "all"
	}
	return month
}

// standingsText is a place's table of a month ("" all time) as text.
func (s *Service) standingsText(placeKey, title, month, lang string) string {
	head := i18n.T(lang, "top.all", title)
	if month != "" {
		head = i18n.T(lang, "top.month", title, monthName(lang, month))
	}
	return head + s.standingsRows(placeKey, month, lang)
}

// standings is a place's ranked table of a month ("" all time), hidden people left out.
func (s *Service) standings(placeKey, month string) []league.Standing {
	p := s.league.Place(placeKey)
	rows := p.AllTime()
	if month != "" {
		rows = p.SeasonTable(month)
	}
	return league.Rank(rows, s.hidden)
}

// standingsRows are the table's lines, each after a line break.
func (s *Service) standingsRows(placeKey, month, lang string) string {
	ranked := s.standings(placeKey, month)
	if len(ranked) == 0 {
		return "\n" + i18n.T(lang, "top.empty")
	}
	var b strings.Builder
	for i, r := range ranked {
		line := i18n.T(lang, "top.row", i+1, r.Name, decimal(lang, r.Rating.Ordinal()), r.Won, r.Matches)
		if r.Provisional {
			line += " " + i18n.T(lang, "top.provisional")
		}
		b.WriteString("\n" + line)
	}
	return b.String()
}

// monthName is "November 2026" in lang.
func monthName(lang, month string) string {
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

// maxHistory is how many matches history lists: two buttons each fit every platform's limits.
const maxHistory = 8

func (s *Service) historyVerb(_ context.Context, _ *tbl, c *call) *userError {
	cmd, lang := c.Command, c.lang
	recent := slices.Clone(s.league.Place(cmd.Place.Key()).Recent)
	recent = recent[max(0, len(recent)-maxHistory):]
	slices.Reverse(recent)
	// A button names its match by key ("b:KEY"); typed, it is its number in the list ("board 2").
	switch arg := strings.TrimSpace(strings.Join(cmd.Args, " ")); {
	case arg == "":
	case strings.HasPrefix(arg, "b:"), strings.HasPrefix(arg, "r:"):
		return s.historyItem(c, arg[:1], arg[2:])
	default:
		what, n, _ := strings.Cut(strings.ToLower(arg), " ")
		i, err := strconv.Atoi(strings.TrimSpace(n))
		if (what != "board" && what != "record") || err != nil || i < 1 || i > len(recent) {
			return refuse("history.bad")
		}
		return s.historyItem(c, what[:1], recent[i-1].Key)
	}
	if len(recent) == 0 {
		return c.answer(reply(cmd, lang, KindReply, i18n.T(lang, "history.empty", placeTitle(cmd, lang))))
	}
	var b strings.Builder
	b.WriteString(i18n.T(lang, "history.title", placeTitle(cmd, lang)))
	var rows [][]Button
	for i, l := range recent {
		when := l.End.In(league.Zone).Format("2006-01-02 15:04")
		var line string
		switch w := l.Winner; w {
		case -1:
			line = i18n.T(lang, "history.stopped", i+1, when, l.Teams[0], l.Teams[1], l.Board[0], l.Board[1])
		default: // the winners first, their stripes too
			line = i18n.N(lang, "history.line", l.Games, i+1, when, l.Teams[w], l.Teams[1-w], l.Board[w], l.Board[1-w])
		}
		b.WriteString("\n" + line)
		n := strconv.Itoa(i + 1)
		rows = append(rows, []Button{
			{Label: "📋 " + n, Action: Action{Verb: VerbHistory, Arg: "b:" + l.Key}, Style: StyleSecondary},
			{Label: "📄 " + n, Action: Action{Verb: VerbHistory, Arg: "r:" + l.Key}, Style: StyleSecondary},
		})
	}
	if s.surface(cmd.Place).Typed {
		b.WriteString("\n" + i18n.T(lang, "history.buttons.typed"))
		rows = nil
	} else {
		b.WriteString("\n" + i18n.T(lang, "history.buttons"))
	}
	m := reply(cmd, lang, KindReply, b.String())
	m.Buttons = rows
	return c.answer(m)
}

// historyItem sends one kept match of the place: its board picture, or its record as a file in
// the replay format.
func (s *Service) historyItem(c *call, what, key string) *userError {
	cmd, lang := c.Command, c.lang
	known := slices.ContainsFunc(s.league.Place(cmd.Place.Key()).Recent, func(l league.Line) bool { return l.Key == key })
	var data []byte
	found := false
	if known {
		var err error
		if data, found, err = s.cfg.Store.Record(key); err != nil {
			s.cfg.Log.Error("reading a kept match", "record", key, "err", err)
			return refuse("err.internal")
		}
	}
	if !found { // a match of another place, or one pruned since: not this place's to show
		return refuse("history.gone")
	}
	m := reply(cmd, lang, KindReply, i18n.T(lang, "history.board"))
	m.Record = key
	if what == "b" {
		m.Picture = PictureBoard
		return c.answer(m)
	}
	recs, err := Export(data)
	if err != nil {
		return refuse("history.gone")
	}
	m.Text = i18n.T(lang, "history.record")
	m.File = &File{Name: strings.ReplaceAll(key, "/", "-") + ".json", Data: mustJSON(recs[key+"/match"].(ExportedMatch).Public())}
	return c.answer(m)
}

func mustJSON(v any) []byte {
	data, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		panic(fmt.Sprintf("a record does not encode: %v", err)) // records are plain data
	}
	return data
}

// placeSettings are a place's defaults for new tables: option keys and values as new takes them,
// and the language its tables speak. Kept in the KV (bucket table.place), per place.
type placeSettings struct {
	Options map[string]string `json:"options,omitempty"`
	Lang    string            `json:"lang,omitempty"`
}

const bucketPlaces = "table.place"

func (s *Service) placeSettings(placeKey string) placeSettings {
	var ps placeSettings
	s.getJSON(bucketPlaces, placeKey, &ps)
	return ps
}

// args are the settings as arguments of new, in the options' order.
func (ps placeSettings) args() []string {
	var out []string
	for _, o := range TableOptions {
		if v, ok := ps.Options[o.Key]; ok {
			out = append(out, o.Key+"="+v)
		}
	}
	return out
}

// proposal is a change to a place's settings some of the people at its table asked for; it is
// made when all of them have.
type proposal struct {
	change string
	votes  []string
}

func (s *Service) settingsVerb(ctx context.Context, _ *tbl, c *call) *userError {
	cmd, lang := c.Command, c.lang
	if cmd.Private {
		return refuse("settings.private")
	}
	key := cmd.Place.Key()
	cur := s.placeSettings(key)
	if len(cmd.Args) == 0 {
		opts, _ := ParseOptions(cur.args())
		text := i18n.T(lang, "settings.title", placeTitle(cmd, lang)) + "\n" + optionsLine(lang, opts)
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
	parsed, err := ParseOptions(optArgs)
	if oe := (*OptionError)(nil); errors.As(err, &oe) {
		return optionRefusal(oe)
	}
	for _, a := range optArgs {
		k, _, _ := strings.Cut(a, "=")
		if o, ok := OptionNamed(strings.TrimSpace(k)); ok {
			next.Options[o.Key] = o.get(parsed)
		}
	}
	change := strings.Join(append(next.args(), "lang="+next.Lang), " ")
	if !cmd.Admin {
		votes, need, uerr := s.voteSettings(cmd, change)
		if uerr != nil {
			return uerr
		}
		if votes < need {
			return c.answer(reply(cmd, lang, KindNotice, i18n.T(lang, "settings.vote", cmd.Actor.Name, votes, need)))
		}
	}
	data, _ := json.Marshal(next)
	if err := s.cfg.KV.Put(bucketPlaces, key, data); err != nil {
		s.cfg.Log.Error("saving a place's settings", "err", err)
		return refuse("err.internal")
	}
	opts, _ := ParseOptions(next.args())
	return c.answer(reply(cmd, lang, KindNotice, i18n.T(lang, "settings.saved")+"\n"+optionsLine(lang, opts)))
}

// voteSettings counts a seated person's vote for a change of the place's settings: every person
// at the place's table must ask for the same change.
func (s *Service) voteSettings(cmd Command, change string) (votes, need int, uerr *userError) {
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
	s.mu.Lock()
	defer s.mu.Unlock()
	key := cmd.Place.Key()
	p := s.proposals[key]
	if p == nil || p.change != change {
		p = &proposal{change: change}
		s.proposals[key] = p
	}
	if !slices.Contains(p.votes, cmd.Actor.ID) {
		p.votes = append(p.votes, cmd.Actor.ID)
	}
	n := 0
	for _, v := range p.votes {
		if slices.Contains(humans, v) {
			n++
		}
	}
	if n >= len(humans) {
		delete(s.proposals, key)
	}
	return n, len(humans), nil
}

// myDataVerb tells the person who asks, privately, what is kept about them.
func (s *Service) myDataVerb(_ context.Context, _ *tbl, c *call) *userError {
	m := reply(c.Command, c.lang, KindReply, s.myData(c.Command, c.lang))
	m.Secret, m.Public = true, i18n.T(c.lang, "league.private")
	return c.answer(m)
}

// myData says what is kept about the person who asks, and how to change it.
func (s *Service) myData(cmd Command, lang string) string {
	id := cmd.Actor.ID
	prefs := s.users.get(id)
	var b strings.Builder
	b.WriteString(s.sayAbout(cmd, id, lang, "mydata.title", cmd.Actor.Name, id))
	if prefs.Lang != "" {
		b.WriteString("\n" + i18n.T(lang, "mydata.lang", i18n.T(prefs.Lang, "lang.name")))
	}
	if prefs.Hidden {
		b.WriteString("\n" + i18n.T(lang, "mydata.hidden"))
	} else {
		b.WriteString("\n" + i18n.T(lang, "mydata.shown"))
	}
	pl, here := s.league.Place(cmd.Place.Key()).Players[id]
	global, rated := s.league.Person(id)
	if here {
		b.WriteString("\n" + i18n.T(lang, "mydata.here", placeTitle(cmd, lang), pl.Games, decimal(lang, pl.Rating.Ordinal())))
	}
	if rated {
		b.WriteString("\n" + i18n.T(lang, "mydata.global", decimal(lang, global.Ordinal())))
	}
	b.WriteString("\n" + i18n.N(lang, "mydata.kept", int(s.cfg.Retention.Hours()/24)))
	return b.String()
}

func (s *Service) forgetVerb(_ context.Context, _ *tbl, c *call) *userError {
	cmd, lang := c.Command, c.lang
	if strings.ToLower(strings.TrimSpace(strings.Join(cmd.Args, " "))) != "yes" {
		m := reply(cmd, lang, KindReply, i18n.T(lang, "forget.ask"))
		m.Secret, m.Public = true, i18n.T(lang, "league.private")
		return c.answer(m)
	}
	n, err := s.Forget(cmd.Actor.ID)
	if err != nil {
		s.cfg.Log.Error("forgetting a person", "err", err)
		return refuse("err.internal")
	}
	m := reply(cmd, lang, KindNotice, i18n.N(lang, "forget.done", n))
	m.Secret, m.Public = true, i18n.T(lang, "league.private")
	return c.answer(m)
}

// randomID draws a number from the service's source of randomness (s.mu taken).
func (s *Service) randomID() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.randomUint64()
}

// decimal writes a rating with one decimal as lang writes numbers (i18n.Decimal).
func decimal(lang string, x float64) string { return i18n.Decimal(lang, x) }

// percent is a chance as a whole percentage.
func percent(p float64) int { return int(math.Round(100 * p)) }

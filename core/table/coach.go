package table

import (
	"context"
	"errors"
	"slices"
	"strconv"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/options"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/render"
)

// review is one player's review of one finished game: what the coach judges, and where its
// text goes.
type review struct {
	key    string // table/match/game/player: what the coach keeps it under
	table  string
	place  api.Place
	player api.Player
	lang   string
	title  string
	seat   core.Seat
	game   core.Game // a copy of the finished game
	open   [2]int    // the board before it
	gameNo int
}

// hintsOn reports whether the table gives hints: its option, or a guided game.
func (t *tbl) hintsOn() bool { return t.opts.Hints || t.st.Learn }

// hint answers the player to move with the strong choice and a reason, privately. The search
// runs once the table's lock is released, on the command's context (ended early by the
// service's closing too), over a View taken under the lock: the others play on meanwhile, and
// a hint whose turn is over by the time it is found is not given (see exec). One search at a
// time runs for a table, and a hint asked for again at the same turn is the one found.
func (s *Service) hint(_ context.Context, t *tbl, c *call) *userError {
	if s.cfg.Coach == nil {
		return refuse("coach.none")
	}
	if !t.hintsOn() {
		return refuse("hint.off")
	}
	g := t.game()
	if g == nil || g.ToMove() != c.seat {
		return refuse("hint.not_turn")
	}
	asked := lastHint{seq: t.st.Seq, lang: c.lang}
	v, seed := t.match.View(c.seat), t.st.seed64(useHint, 0)
	c.out.think = func(ctx context.Context) api.Message {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(s.ctx, cancel)()
		t.hinting.Lock()
		defer t.hinting.Unlock()
		text := t.hinted.text
		if t.hinted.seq != asked.seq || t.hinted.lang != asked.lang || text == "" {
			text = s.cfg.Coach.Hint(ctx, v, seed, c.lang)
			if ctx.Err() == nil { // one cut short is not kept
				asked.text, t.hinted = text, asked
			}
		}
		m := reply(c.Command, c.lang, api.KindReply, text)
		m.Secret, m.Public = true, s.view.pressHand(c.Place, c.lang, "hand.private")
		return m
	}
	return nil
}

// lastHint is the last hint found at a table: at which sequence number, in which language.
type lastHint struct {
	seq        uint64
	lang, text string
}

// reviewVerb sends the player the review of the match's last finished game (or of game N).
func (s *Service) reviewVerb(_ context.Context, t *tbl, c *call) *userError {
	if s.cfg.Coach == nil {
		return refuse("coach.none")
	}
	if t.match == nil {
		return refuse("err.no_game")
	}
	hist := t.match.History()
	n := len(hist)
	if c.arg != "" {
		k, err := strconv.Atoi(c.arg)
		if err != nil || k < 1 || k > len(hist) {
			return refuse("review.bad", lit(c.arg), lit(strconv.Itoa(len(hist))))
		}
		n = k
	}
	if n == 0 {
		return refuse("review.none")
	}
	p := *t.st.Seats[c.seat].Player
	r := t.reviewOf(n, c.seat, p, s.view.PersonLang(p, t.st.Lang))
	if text, ok := s.cfg.Coach.Reviewed(r.key); ok {
		c.out.replies = append(c.out.replies, r.message(text, true, c.Command))
		return nil
	}
	if !s.tutor.ask(r) {
		return refuse("review.busy")
	}
	c.out.replies = append(c.out.replies, reply(c.Command, c.lang, api.KindNotice, i18n.T(c.lang, "review.coming", n)))
	return nil
}

// reviewOf is the review of the table's game n (1-based, finished) for the player p in seat, who
// reads lang: a copy of the game, judged after the table's lock is released (table lock held).
func (t *tbl) reviewOf(n int, seat core.Seat, p api.Player, lang string) review {
	games := t.match.Games()
	hist := t.match.History()
	open := [2]int{t.opts.Rules.Stripes, t.opts.Rules.Stripes}
	if n > 1 {
		open = hist[n-2].Board.OpenBoth()
	}
	return review{key: t.st.ID + "/" + strconv.Itoa(t.st.MatchNo) + "/" + strconv.Itoa(n) + "/" + p.ID,
		table: t.st.ID, place: t.st.Place, player: p, lang: lang, title: render.PrivateTitle(t.st.Place, lang), seat: seat,
		game: *games[n-1], open: open, gameNo: n}
}

// tutor is what the engine tells the coach (Config.Coach) and the players about it as a table
// changes: the reviews a game's end asks for, which it asks the coach for once the change is
// stored and delivers once judged, and the guided game's lessons. It reads a table under its
// lock; of the service it needs only what its fields say.
//
// It stays in the engine, beside the Coach port rather than behind one of its own: what it
// reads is the engine's table (who sits where, who is away, the learner's turn, the language
// each is spoken to in) and what it gives is the table's messages, delivered under the table's
// lock. The coach's side of it, judging a copy of the ended game, is core/coach's already.
type tutor struct {
	coach  Coach                                       // nil: no coach
	langOf func(p api.Player, tableLang string) string // the language a person is spoken to in
	wants  func(playerID string) bool                  // the person asked for reviews (coach on)
	// life is the service's: a review judged after it stopped is not sent.
	life context.Context
	// table finds a table in memory (tableIndex.get); deliver hands messages to a platform's
	// outbox (publisher.deliver).
	table   func(id string) (*tbl, bool)
	deliver func(ctx context.Context, platform string, msgs []api.Message)
}

// ask asks the coach for a review, which goes to its player once it is judged; false when the
// coach has no room for it.
func (tu tutor) ask(r review) bool {
	return tu.coach.Review(r.key, r.game, r.seat, r.open, r.gameNo, r.lang, func(text string) { tu.sendReview(r, text) })
}

// gameOver queues the reviews of a game that just ended for the players who asked for them
// (table lock held); they are asked for once the change is stored (see commit).
func (tu tutor) gameOver(t *tbl, g *core.Game, n int, out *outcome) {
	for i, seat := range t.st.Seats {
		if tu.coach == nil || seat.Player == nil || seat.Away || !tu.wants(seat.Player.ID) {
			continue
		}
		out.reviews = append(out.reviews, t.reviewOf(n, core.Seat(i), *seat.Player, tu.langOf(*seat.Player, t.st.Lang)))
	}
	if t.st.Learn {
		out.public = append(out.public, tu.stripes(t, g, n)...)
	}
}

// startReviews asks for the reviews of a stored change; a review the coach has no room for is
// dropped with a note to its player (table lock held).
func (tu tutor) startReviews(ctx context.Context, t *tbl, reviews []review) {
	var notes []api.Message
	for _, r := range reviews {
		if tu.ask(r) {
			continue
		}
		m := api.Message{Target: api.Target{Kind: api.ToPlayer, Place: r.place, Player: r.player}, Kind: api.KindNotice, Lang: r.lang,
			Title: r.title, Text: i18n.T(r.lang, "review.dropped", r.gameNo)}
		notes = append(notes, m)
	}
	tu.deliverAt(ctx, t, notes)
}

// deliverAt sends messages of a table (table lock held or not needed).
func (tu tutor) deliverAt(ctx context.Context, t *tbl, msgs []api.Message) {
	for i := range msgs {
		msgs[i].Table, msgs[i].Version = t.st.ID, t.st.Seq
	}
	tu.deliver(ctx, t.st.Place.Platform, msgs)
}

// sendReview sends a judged review to its player (on a coach worker).
func (tu tutor) sendReview(r review, text string) {
	if tu.life.Err() != nil {
		return
	}
	m := r.message(text, false, api.Command{})
	if t, ok := tu.table(r.table); ok {
		t.mu.Lock()
		tu.deliverAt(tu.life, t, []api.Message{m})
		t.mu.Unlock()
		return
	}
	m.Table = r.table
	tu.deliver(tu.life, r.place.Platform, []api.Message{m})
}

// message is the review's text as its player receives it: privately, with a public text that
// shows nothing held for a surface that can reach them only in public; asReply, as the answer to
// their command cmd.
func (r review) message(text string, asReply bool, cmd api.Command) api.Message {
	m := api.Message{Target: api.Target{Kind: api.ToPlayer, Place: r.place, Player: r.player}, Kind: api.KindNotice, Lang: r.lang,
		Title: r.title, Text: text, Table: r.table}
	if asReply {
		m = reply(cmd, r.lang, api.KindReply, text)
		m.Title, m.Table = r.title, r.table
	}
	m.Secret, m.Public = true, i18n.T(r.lang, "review.private")
	return m
}

// learnDefaults are a guided game's options, before what learn was given: gentle computer
// players, no turn timer, hints on.
var learnDefaults = []string{"level=easy", "timer=none", "hints=on"}

// learn opens a guided solo game in the actor's private chat (or on a screen of their own):
// the actor against three computer players, dealt at once. At each of their turns they are told
// privately which cards they may play and why, what an announcement needs, and after each game
// how the stripes moved. It counts for no rating.
func (s *Service) learn(ctx context.Context, _ *tbl, c *call) *userError {
	cmd, lang := c.Command, c.lang
	if !cmd.Private && !s.view.Surface(cmd.Place).Personal {
		return refuse("learn.where")
	}
	opts, err := options.Parse(append(slices.Clone(learnDefaults), cmd.Args...))
	if oe := (*options.Error)(nil); errors.As(err, &oe) {
		return optionRefusal(oe)
	}
	id, uerr := s.openTable(ctx, c, i18n.N(lang, "learn.welcome", opts.Rules.Stripes), opts, func(st *state) {
		st.Learn = true
		for i := 1; i < 4; i++ {
			st.Seats[i] = robotSeat(core.Seat(i))
		}
	})
	if id != "" {
		for i := range c.out.replies {
			c.out.replies[i].Table = id
		}
	}
	return uerr
}

// lessons is the lesson for the learner's turn, once per turn (table lock held).
func (tu tutor) lessons(t *tbl) []api.Message {
	g := t.game()
	if !t.st.Learn || g == nil || t.st.Paused || tu.coach == nil {
		return nil
	}
	seat := g.ToMove()
	p := t.st.Seats[seat].Player
	if p == nil || t.st.Seats[seat].Away {
		return nil
	}
	turn := strconv.Itoa(t.match.NumGames()) + "/" + strconv.Itoa(len(g.Moves()))
	if t.learnSaid == turn {
		return nil
	}
	t.learnSaid = turn
	lang := tu.langOf(*p, t.st.Lang)
	return []api.Message{lesson(t.st.Place, *p, lang, tu.coach.Lesson(lang, g.View(seat)))}
}

// lesson is a private text of the guided game at place for its learner p.
func lesson(place api.Place, p api.Player, lang, text string) api.Message {
	return api.Message{Target: api.Target{Kind: api.ToPlayer, Place: place, Player: p}, Kind: api.KindNotice, Lang: lang,
		Title: render.PrivateTitle(place, lang), Text: text, Secret: true, Public: i18n.T(lang, "learn.private")}
}

// stripes explains to the learner how game n of the guided match, g, moved the stripes.
func (tu tutor) stripes(t *tbl, g *core.Game, n int) []api.Message {
	p := t.st.Seats[0].Player
	if p == nil || tu.coach == nil {
		return nil
	}
	lang := tu.langOf(*p, t.st.Lang)
	return []api.Message{lesson(t.st.Place, *p, lang, tu.coach.Stripes(lang, g, t.match.History()[n-1].Board))}
}

package table

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/robot"
)

// The coach (issue 16): a private review of each game for the players who ask for it, a hint
// for one's own turn at tables with hints on, and a guided solo game (learn.go). Each judges a
// decision from what its player could see then, with the strong computer player's search over
// the deals that fit that view (robot.Judge); never with the other hands.
const (
	VerbCoach  Verb = "coach"  // coach on|off: a private review after each game one plays
	VerbReview Verb = "review" // the review of the last game (or "review 2") now, privately
	VerbHint   Verb = "hint"   // the strong choice for one's turn, with a reason (hints on)
	VerbLearn  Verb = "learn"  // a guided solo game against three computer players
)

// CoachConfig sizes the coach. Reviews run off the command path on a few workers with a budget
// of work per player and game; when the queue is full a review is dropped, with a note to its
// player. Budgets are solver nodes, not time, so that a review or a hint of the same game says
// the same on any machine, however busy; the caps in time only keep an overloaded machine from
// waiting for ever, and every review or hint they cut is logged.
type CoachConfig struct {
	Workers int // reviews judged at once; default 1
	Queue   int // reviews waiting; default 8
	// Nodes is one player's review of one game, in solver nodes shared by its decisions;
	// default 20,000,000 (about 2 s of one core). Cap bounds its time; default 10 s.
	Nodes  uint64
	Cap    time.Duration
	Worlds int // deals judged per decision at most; default robot.DefaultJudgeWorlds
	// HintNodes is one hint, judged while its player waits; default robot.DefaultJudgeNodes
	// (3,000,000: about 300 ms).
	// HintCap bounds its time; default 2 s.
	HintNodes uint64
	HintCap   time.Duration

	// hold, when a test sets it, keeps the workers from taking any review until it is closed:
	// the queue then fills as on a busy machine.
	hold chan struct{}
}

func (c CoachConfig) withDefaults() CoachConfig {
	if c.Workers <= 0 {
		c.Workers = 1
	}
	if c.Queue <= 0 {
		c.Queue = 8
	}
	if c.Nodes == 0 {
		c.Nodes = 20_000_000
	}
	if c.Cap <= 0 {
		c.Cap = 10 * time.Second
	}
	if c.HintNodes == 0 {
		c.HintNodes = robot.DefaultJudgeNodes
	}
	if c.HintCap <= 0 {
		c.HintCap = 2 * time.Second
	}
	return c
}

// reviewJob is one player's review of one finished game.
type reviewJob struct {
	key      string // table/game/player: the cache key
	table    string
	place    Place
	player   Player
	lang     string
	title    string
	seat     core.Seat
	game     core.Game // a copy of the finished game
	open     [2]int    // the board before it
	gameNo   int
	names    [4]string
	personal bool // the place is the player's own screen: the note needs no fallback
}

// maxReviews is how many finished reviews are kept to send again on request.
const maxReviews = 256

// coach is the service's review pool and the reviews it made.
type coach struct {
	cfg  CoachConfig
	jobs chan reviewJob

	mu    sync.Mutex
	done  map[string]string // review key → its text
	order []string          // keys, oldest first
	busy  map[string]bool   // keys queued or being judged
}

func (c *coach) init(s *Service) {
	c.cfg = s.cfg.Coach.withDefaults()
	c.jobs = make(chan reviewJob, c.cfg.Queue)
	c.done, c.busy = map[string]string{}, map[string]bool{}
	for range c.cfg.Workers {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			if c.cfg.hold != nil {
				select {
				case <-c.cfg.hold:
				case <-s.ctx.Done():
					return
				}
			}
			for {
				select {
				case <-s.ctx.Done():
					return
				case j := <-c.jobs:
					s.runReview(j)
				}
			}
		}()
	}
}

func (c *coach) cached(key string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	text, ok := c.done[key]
	return text, ok
}

func (c *coach) keep(key, text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.busy, key)
	if _, ok := c.done[key]; !ok {
		c.order = append(c.order, key)
	}
	c.done[key] = text
	for len(c.order) > maxReviews {
		delete(c.done, c.order[0])
		c.order = c.order[1:]
	}
}

// enqueue queues a review unless the same one is queued already; false when the queue is full.
func (c *coach) enqueue(j reviewJob) bool {
	c.mu.Lock()
	if c.busy[j.key] {
		c.mu.Unlock()
		return true
	}
	c.busy[j.key] = true
	c.mu.Unlock()
	select {
	case c.jobs <- j:
		return true
	default:
		c.mu.Lock()
		delete(c.busy, j.key)
		c.mu.Unlock()
		return false
	}
}

// setCoach keeps a person's choice to have their games reviewed.
func (u *users) setCoach(id string, on bool) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	p := u.getLocked(id)
	p.Coach = on
	return u.put(id, p)
}

// coachVerb answers coach, and learn; false when cmd is neither.
func (s *Service) coachVerb(ctx context.Context, cmd Command, lang string) ([]Message, bool) {
	switch cmd.Verb {
	case VerbLearn:
		return s.learn(ctx, cmd, lang), true
	case VerbCoach:
	default:
		return nil, false
	}
	if cmd.Anonymous {
		return []Message{s.errorReply(cmd, lang, refuse("err.anonymous"))}, true
	}
	arg := strings.ToLower(strings.TrimSpace(strings.Join(cmd.Args, " ")))
	on := s.users.get(cmd.Actor.ID).Coach
	if arg != "" {
		o, _ := OptionNamed("hints")
		v, ok := o.Value(arg) // on and off, with their aliases in every language
		if !ok {
			return []Message{s.errorReply(cmd, lang, refuse("coach.usage"))}, true
		}
		on = v.Key == "on"
		if err := s.users.setCoach(cmd.Actor.ID, on); err != nil {
			s.cfg.Log.Error("saving a coach choice", "err", err)
			return []Message{s.errorReply(cmd, lang, refuse("err.internal"))}, true
		}
	}
	key := "coach.off"
	if on {
		key = "coach.on"
	}
	return []Message{reply(cmd, lang, KindNotice, i18n.T(lang, key))}, true
}

// addCoachVerbs adds the coach's table verbs to verbs.
func addCoachVerbs() {
	verbs[VerbHint] = verbSpec{run: (*Service).hint, seated: true, allowed: in(StatusPlaying), notAllowed: "err.no_game"}
	verbs[VerbReview] = verbSpec{run: (*Service).reviewVerb, seated: true, allowed: in(StatusPlaying, StatusOver),
		notAllowed: "err.no_game"}
}

// hintsOn reports whether the table gives hints: its option, or a guided game.
func (t *tbl) hintsOn() bool { return t.opts.Hints || t.st.Learn }

// hint answers the player to move with the strong choice and a reason, privately.
func (s *Service) hint(t *tbl, c *call) *userError {
	if !t.hintsOn() {
		return refuse("hint.off")
	}
	g := t.game()
	if g == nil || g.ToMove() != c.seat {
		return refuse("hint.not_turn")
	}
	v := t.match.View(c.seat)
	text := s.hintText(t, v, c.lang)
	m := reply(c.Command, c.lang, KindReply, text)
	m.Secret, m.Public = true, s.pressHand(c.Place, c.lang, "hand.private")
	c.out.replies = append(c.out.replies, m)
	return nil
}

// hintText is the strong choice for the view with a one-line reason.
func (s *Service) hintText(t *tbl, v core.View, lang string) string {
	if v.Phase == core.PhasePlay && v.Legal.Len() == 1 && len(v.Calls) == 0 {
		return i18n.T(lang, "hint.only", v.Legal.First().Chat())
	}
	cfg := s.coach.cfg
	j, ok := robot.Judge(s.ctx, v, t.st.seed64(useHint, 0), robot.Effort{Nodes: cfg.HintNodes, Worlds: cfg.Worlds, Cap: cfg.HintCap})
	if j.Cut && s.ctx.Err() == nil {
		s.cfg.Log.Warn("the coach's time cap cut a hint short: the machine is too busy for its budget, and the hint's numbers come from fewer deals",
			"table", t.st.ID, "cap", cfg.HintCap, "deals", j.Worlds, "nodes", j.Nodes, "budget", cfg.HintNodes)
	}
	if !ok {
		return i18n.T(lang, "hint.none")
	}
	return renderHint(lang, v, j)
}

// renderHint writes the judged strong choice for the view. The chances said are the game's own:
// wins, and 20–20 draws apart (a draw is no half win: it costs the trump team a stripe).
func renderHint(lang string, v core.View, j robot.Judgement) string {
	best := j.Best()
	if v.Phase == core.PhaseTrump {
		text := i18n.T(lang, "hint.trump", i18n.SuitLabel(lang, best.Move.Suit), percent(best.Win))
		if d := percent(best.Draw); d >= 1 {
			text = i18n.T(lang, "hint.trump.draws", i18n.SuitLabel(lang, best.Move.Suit), percent(best.Win), d)
		}
		if len(j.Choices) > 1 {
			next := j.Choices[1]
			text += " " + i18n.T(lang, "hint.next", i18n.SuitLabel(lang, next.Move.Suit), percent(next.Win))
		}
		return text
	}
	var b strings.Builder
	if j.ShouldCall() {
		b.WriteString(i18n.T(lang, "hint.call", j.Call.Title(), stripesText(lang, j.CallStripes)) + "\n")
	}
	if robot.Decided(v) {
		b.WriteString(i18n.T(lang, "hint.decided", best.Move.Card.Chat(), int(math.Round(best.Points))))
		return b.String()
	}
	if d := percent(best.Draw); d >= 1 {
		b.WriteString(i18n.T(lang, "hint.card.draws", best.Move.Card.Chat(), percent(best.Win), d, int(math.Round(best.Points))))
	} else {
		b.WriteString(i18n.T(lang, "hint.card", best.Move.Card.Chat(), percent(best.Win), int(math.Round(best.Points))))
	}
	if len(j.Choices) > 1 {
		next := j.Choices[1]
		b.WriteString(" " + i18n.T(lang, "hint.next", next.Move.Card.Chat(), percent(next.Win)))
	}
	return b.String()
}

// percent is a chance as a whole percentage.
func percent(p float64) int { return int(math.Round(100 * p)) }

// stripesText is an expected number of stripes with its sign and one decimal as lang writes
// numbers: "+0.6", "−1,2".
func stripesText(lang string, x float64) string {
	if x < 0 {
		return decimal(lang, x)
	}
	return "+" + decimal(lang, x)
}

// reviewVerb sends the player the review of the match's last finished game (or of game N).
func (s *Service) reviewVerb(t *tbl, c *call) *userError {
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
	j := s.reviewJobFor(t, n, c.seat, *t.st.Seats[c.seat].Player)
	if text, ok := s.coach.cached(j.key); ok {
		c.out.replies = append(c.out.replies, s.reviewMessage(j, text, true, c.Command))
		return nil
	}
	if !s.coach.enqueue(j) {
		return refuse("review.busy")
	}
	c.out.replies = append(c.out.replies, reply(c.Command, c.lang, KindNotice, i18n.T(c.lang, "review.coming", n)))
	return nil
}

// reviewJobFor is the review of game n (1-based, finished) for the player in seat.
func (s *Service) reviewJobFor(t *tbl, n int, seat core.Seat, p Player) reviewJob {
	games := t.match.Games()
	hist := t.match.History()
	open := [2]int{t.opts.Rules.Stripes, t.opts.Rules.Stripes}
	if n > 1 {
		open = hist[n-2].Board.OpenBoth()
	}
	lang := s.langOf(t, p)
	j := reviewJob{key: t.st.ID + "/" + strconv.Itoa(t.st.MatchNo) + "/" + strconv.Itoa(n) + "/" + p.ID,
		table: t.st.ID, place: t.st.Place, player: p, lang: lang, title: s.privateTitle(t, lang), seat: seat,
		game: *games[n-1], open: open, gameNo: n, personal: s.surface(t.st.Place).Personal}
	for i := range j.names {
		j.names[i] = seatName(t, core.Seat(i))
	}
	return j
}

// coachGameOver queues the reviews of a game that just ended for the players who asked for them
// (table lock held); they are judged once the change is stored (see commit).
func (s *Service) coachGameOver(t *tbl, g *core.Game, n int, out *outcome) {
	for i, seat := range t.st.Seats {
		if seat.Player == nil || seat.Away || !s.users.get(seat.Player.ID).Coach {
			continue
		}
		out.reviews = append(out.reviews, s.reviewJobFor(t, n, core.Seat(i), *seat.Player))
	}
	if t.st.Learn {
		out.public = append(out.public, s.learnStripes(t, g, n)...)
	}
}

// startReviews queues the reviews of a stored change; a review the queue has no room for is
// dropped with a note to its player (table lock held).
func (s *Service) startReviews(ctx context.Context, t *tbl, jobs []reviewJob) {
	var notes []Message
	for _, j := range jobs {
		if s.coach.enqueue(j) {
			continue
		}
		m := Message{Target: Target{Kind: ToPlayer, Place: j.place, Player: j.player}, Kind: KindNotice, Lang: j.lang,
			Title: j.title, Text: i18n.T(j.lang, "review.dropped", j.gameNo)}
		notes = append(notes, m)
	}
	s.deliverAt(ctx, t, notes)
}

// deliverAt sends messages of a table (table lock held or not needed).
func (s *Service) deliverAt(ctx context.Context, t *tbl, msgs []Message) {
	for i := range msgs {
		msgs[i].Table, msgs[i].Version = t.st.ID, t.st.Seq
	}
	s.deliver(ctx, t.st.Place.Platform, msgs)
}

// runReview judges one review and sends it (on a coach worker).
func (s *Service) runReview(j reviewJob) {
	ctx, cancel := context.WithTimeout(s.ctx, s.coach.cfg.Cap)
	text := s.reviewText(ctx, j)
	cancel()
	if s.ctx.Err() != nil {
		return
	}
	s.coach.keep(j.key, text)
	m := s.reviewMessage(j, text, false, Command{})
	if t, ok := s.table(j.table); ok {
		t.mu.Lock()
		s.deliverAt(s.ctx, t, []Message{m})
		t.mu.Unlock()
		return
	}
	m.Table = j.table
	s.deliver(s.ctx, j.place.Platform, []Message{m})
}

// reviewMessage is a review as its player receives it: privately, with a public text that
// shows nothing held for a surface that can reach them only in public.
func (s *Service) reviewMessage(j reviewJob, text string, asReply bool, cmd Command) Message {
	m := Message{Target: Target{Kind: ToPlayer, Place: j.place, Player: j.player}, Kind: KindNotice, Lang: j.lang,
		Title: j.title, Text: text, Table: j.table}
	if asReply {
		m = reply(cmd, j.lang, KindReply, text)
		m.Title, m.Table = j.title, j.table
	}
	m.Secret, m.Public = true, i18n.T(j.lang, "review.private")
	return m
}

// decision is one of a player's decisions in a game, as the review judges it.
type decision struct {
	trick  int // 1..6; 0 for the trump choice
	view   core.View
	move   core.Move // what the player did
	called bool      // the player announced at this decision
	judged robot.Judgement
	ok     bool
}

// reviewDecisions lists the decisions the player in seat made in the game: naming trump, and
// every card played with a choice (or with a call that could be made).
func reviewDecisions(g core.Game, seat core.Seat, open [2]int) []decision {
	var hands [4][6]core.Card
	for s := range hands {
		hands[s] = g.Dealt(core.Seat(s))
	}
	r, err := core.NewGame(g.Rules(), g.Dealer(), hands)
	if err != nil {
		return nil
	}
	var out []decision
	var pending *decision // the view where the player could announce, before their card
	for _, m := range g.Moves() {
		if m.Seat == seat {
			v := r.View(seat)
			v.Open = open
			switch m.Kind {
			case core.MoveTrump:
				out = append(out, decision{view: v, move: m})
			case core.MoveAnnounce:
				if pending == nil {
					pending = &decision{trick: 1, view: v, called: true}
				}
			case core.MovePlay:
				d := decision{trick: r.TricksDone() + 1, view: v, move: m}
				if pending != nil {
					d.view, d.called = pending.view, true
					pending = nil
				}
				if d.view.Legal.Len() > 1 || len(d.view.Calls) > 0 {
					out = append(out, d)
				}
			}
		}
		if err := r.Apply(m); err != nil {
			return out
		}
	}
	return out
}

// reviewText judges a player's decisions in a finished game, within the coach's budget (and the
// context's time), and writes the review: how many matched the strong choice and the costliest
// ones.
func (s *Service) reviewText(ctx context.Context, j reviewJob) string {
	return renderReview(j, s.judgeDecisions(ctx, j))
}

// judgeDecisions judges the player's decisions, sharing the review's budget of solver nodes
// between them as their positions' sizes ask (early cards have the most deals to judge). The
// last decisions are judged first: what the small ones leave of their share goes to the earlier,
// bigger ones. Everything here depends on the game alone, so a review is the same on any
// machine unless the context's time cuts it, which is logged.
func (s *Service) judgeDecisions(ctx context.Context, j reviewJob) []decision {
	ds := reviewDecisions(j.game, j.seat, j.open)
	weight := 0.0
	for _, d := range ds {
		weight += weightOf(d)
	}
	left := float64(s.coach.cfg.Nodes)
	cut := 0
	for i := len(ds) - 1; i >= 0; i-- {
		d := &ds[i]
		w := weightOf(*d)
		share := left * w / max(weight, w)
		d.judged, d.ok = robot.Judge(ctx, d.view, uint64(i)+1, robot.Effort{Nodes: max(uint64(share), 1), Worlds: s.coach.cfg.Worlds})
		weight -= w
		left = max(left-float64(d.judged.Nodes), 0)
		if d.judged.Cut {
			cut++
		}
	}
	if cut > 0 && s.ctx.Err() == nil {
		s.cfg.Log.Warn("the coach's time cap cut a review short: the machine is too busy for its budget, and the review's numbers come from fewer deals",
			"table", j.table, "game", j.gameNo, "cap", s.coach.cfg.Cap, "decisions", len(ds), "cut", cut, "budget", s.coach.cfg.Nodes)
	}
	return ds
}

// renderReview writes the review of the judged decisions in the job's language.
func renderReview(j reviewJob, ds []decision) string {
	lang := j.lang
	type finding struct {
		cost   float64 // in win chance, for the order
		text   string
		chance bool // it says a win chance
	}
	var found []finding
	judged, matched := 0, 0
	// The win chance a finding gives counts a 20–20 draw as half a game won (the review says so).
	chance := func(c robot.Choice) float64 { return c.Win + c.Draw/2 }
	for _, d := range ds {
		if !d.ok {
			continue
		}
		if d.move.Kind == core.MovePlay && d.view.Legal.Len() > 1 || d.move.Kind == core.MoveTrump {
			judged++
			chosen, rank, ok := d.judged.Find(d.move)
			best := d.judged.Best()
			if !ok {
				continue
			}
			winCost := chance(best) - chance(chosen)
			// Worth, not points, orders the cards: the better card may keep fewer card points on
			// average than the one played (it gives up a trick for a surer 21), and then no
			// points were lost — ptsCost is negative and is not said.
			ptsCost := best.Points - chosen.Points
			if rank == 0 || (chosen.Worth >= best.Worth-1e-9 && (best.Points < 0 || ptsCost < 0.05)) {
				matched++
			} else if d.move.Kind == core.MoveTrump {
				if winCost >= 0.005 {
					found = append(found, finding{winCost, i18n.T(lang, "review.trump", i18n.SuitLabel(lang, chosen.Move.Suit),
						percent(winCost), i18n.SuitLabel(lang, best.Move.Suit)), true})
				}
			} else if percent(winCost) >= 1 && ptsCost >= 0.05 {
				found = append(found, finding{winCost + ptsCost/100, i18n.T(lang, "review.card", d.trick, d.move.Card.Chat(),
					pointsText(lang, ptsCost), percent(winCost), best.Move.Card.Chat()), true})
			} else if percent(winCost) >= 1 {
				found = append(found, finding{winCost, i18n.T(lang, "review.card.chance", d.trick, d.move.Card.Chat(),
					percent(winCost), best.Move.Card.Chat()), true})
			} else if ptsCost >= 0.5 {
				found = append(found, finding{ptsCost / 100, i18n.T(lang, "review.card.points", d.trick, d.move.Card.Chat(),
					pointsText(lang, ptsCost), best.Move.Card.Chat()), false})
			}
		}
		if d.judged.Call != 0 {
			judged++
			switch should := d.judged.ShouldCall(); {
			case should == d.called:
				matched++
			case should:
				found = append(found, finding{0.5 * math.Abs(d.judged.CallStripes) / 2, i18n.T(lang, "review.could_call",
					d.judged.Call.Title(), stripesText(lang, d.judged.CallStripes)), false})
			default:
				found = append(found, finding{0.5 * math.Abs(d.judged.CallStripes) / 2, i18n.T(lang, "review.called",
					d.judged.Call.Title(), stripesText(lang, d.judged.CallStripes)), false})
			}
		}
	}
	var b strings.Builder
	r := j.game.Result()
	team := j.seat.Team()
	b.WriteString(i18n.T(lang, "review.title", j.gameNo, r.Points[team], r.Points[team.Other()]))
	if judged == 0 {
		b.WriteString("\n" + i18n.T(lang, "review.nothing"))
		return b.String()
	}
	b.WriteString("\n" + i18n.N(lang, "review.matched", judged, matched))
	// The costliest first, at most three.
	slices.SortStableFunc(found, func(a, b finding) int { return cmp.Compare(b.cost, a.cost) })
	for i, f := range found {
		if i == 3 {
			break
		}
		b.WriteString("\n· " + f.text)
	}
	if len(found) == 0 {
		b.WriteString("\n" + i18n.T(lang, "review.clean"))
	}
	b.WriteString("\n" + i18n.T(lang, "review.how"))
	if slices.ContainsFunc(found[:min(len(found), 3)], func(f finding) bool { return f.chance }) {
		b.WriteString(" " + i18n.T(lang, "review.draws"))
	}
	return b.String()
}

// weightOf is a decision's share of the review's time: about the size of its search.
func weightOf(d decision) float64 {
	if d.move.Kind == core.MoveTrump {
		return 0.05 // from the trump table
	}
	n := float64(d.view.Hand.Len())
	return n * n * n
}

// pointsText is an expected number of card points, whole or with one decimal when small.
func pointsText(lang string, x float64) string {
	if x >= 2 {
		return fmt.Sprintf("%d", int(math.Round(x)))
	}
	return decimal(lang, x)
}

// Package terminal plays a table in a terminal: the public messages scroll by, the local players'
// hands are shown when they are to move, and each input line is one command with the same verbs
// as in the chats. It reads from any io.Reader, so a pipe can drive it.
package terminal

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kontermatt/kontermatt/adapters/internal/chat"
	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/options"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// Platform is the name the terminal's places and players carry.
const Platform = "local"

// Surface is how the terminal shows a table, for the service's Config.Surfaces: everything is
// typed, the screen is one person's, so with one player at the table its texts say "you", and it
// shows no pictures.
var Surface = api.Surface{Typed: true, Personal: true, NoPictures: true}

// Config sets up a terminal table.
type Config struct {
	In      io.Reader
	Out     io.Writer
	Humans  int      // local players at the keyboard: 0 (watch four computers) to 4
	Options []string // options for a new table, as new takes them (also for one typed later)
	Name    string   // the first player's name
	// Lang is the language asked for on the command line, for the whole screen: the table's and
	// the players' own; "" keeps what was chosen before (the first player's own choice, else the
	// stored table's language).
	Lang string
	// Insist is what the command line asked for rather than left at its default: a stored table
	// that differs is not resumed as if nothing had been asked (see Run).
	Insist Insist
	// Fresh stops an unfinished match stored here and opens a new table (the command line's
	// -new); the stopped match is kept in the history.
	Fresh bool
	// Pace is how long computer players pause before each move, so that a person can follow;
	// negative: a second when nobody plays at the keyboard, else none. See Robots.
	Pace time.Duration
	// Dir is where files the service sends (a match's record, from history) are saved; "" is the
	// working directory.
	Dir string
	// Learn opens a guided game (the service's learn) instead of a table, for the one player.
	Learn bool
}

// Insist lists the settings given on the command line: the options typed (as new takes them,
// -level's among them) and whether the number of players at the keyboard was given.
type Insist struct {
	Options []string
	Humans  bool
}

// ConflictError is an unfinished match stored at the terminal that is not what the command line
// asked for. Run then resumes nothing and changes nothing; the text says what differs and how to
// start afresh, in the screen's language.
type ConflictError struct{ text string }

func (e *ConflictError) Error() string { return e.text }

// Terminal is the local surface and its Outbox.
type Terminal struct {
	cfg   Config
	place api.Place
	svc   *table.Service
	// ready is closed when Run has chosen the table to play: computer players wait for it.
	ready     chan struct{}
	readyOnce sync.Once
	pause     time.Duration // the computer players' pause, set before ready closes

	mu       sync.Mutex
	live     map[string][]string    // live message key → its lines, to print only what changed
	liveKey  string                 // the live message printed last
	lobby    string                 // the lobby's text as it stands
	hands    map[string]api.Message // player ID → latest hand
	shown    string                 // the hand text last shown with its moves
	seen     string                 // hot seat: the player whose hand may be on the screen
	handover string                 // hot seat: the player asked to take the keyboard
	stopping bool                   // stop was typed once: the next line confirms it or not
	opening  bool                   // the table is being opened to be dealt at once: its lobby is not news
	started  bool                   // Run has begun: before, what the service sends is kept, not printed
	// screen is the screen's language ("" is English): Config.Lang, or what was chosen before.
	// Only Run's goroutine writes it, holding mu.
	screen string
}

// clearScreen moves the cursor home, clears the terminal (ANSI) and its scrollback (ESC [3J, an
// xterm extension that VTE, iTerm2, Windows Terminal and tmux follow), so the next player at a hot
// seat can neither see nor scroll back to the last one's hand.
const clearScreen = "\033[H\033[2J\033[3J"

// New makes a terminal surface; give it to the service as the "local" Outbox, and its Robots to
// the service's Config.Robots, then Run.
func New(cfg Config) *Terminal {
	return &Terminal{cfg: cfg, place: api.Place{Platform: Platform, Chat: "terminal", Title: "Terminal"},
		live: map[string][]string{}, hands: map[string]api.Message{}, ready: make(chan struct{}), screen: cfg.Lang}
}

func (t *Terminal) player(n int) api.Player {
	name := t.cfg.Name
	switch {
	case n > 1 || name == "" && t.cfg.Humans > 1:
		// At a hot seat the first is a player like the others.
		name = i18n.T(t.lang(), "term.player", n)
	case name == "":
		// One player at the screen is "you" (the table's texts speak to them).
		name = i18n.T(t.lang(), "term.you")
	}
	return api.Player{ID: fmt.Sprintf("local:%d", n), Name: name, Locale: t.screen}
}

func (t *Terminal) lang() string { return i18n.Pick(t.screen) }

// Robots wraps the computer players of the service the terminal plays on: none moves before Run
// has chosen the table to play (a stored match is resumed only if it is what was asked for, and
// one that is not must stay as it was), and each pauses for Config.Pace before its move.
func (t *Terminal) Robots(inner func(level string, seed uint64) table.Decider) func(level string, seed uint64) table.Decider {
	return func(level string, seed uint64) table.Decider { return gated{t, inner(level, seed)} }
}

type gated struct {
	t *Terminal
	table.Decider
}

func (g gated) Decide(ctx context.Context, v core.View) core.Move {
	select {
	case <-g.t.ready:
	case <-ctx.Done():
		return g.Decider.Decide(ctx, v) // the service is stopping: this move is not applied
	}
	if g.t.pause > 0 {
		tm := time.NewTimer(g.t.pause)
		defer tm.Stop()
		select {
		case <-tm.C:
		case <-ctx.Done():
		}
	}
	return g.Decider.Decide(ctx, v)
}

// letRobotsGo sets the computer players' pause for the players at the keyboard and lets them move.
func (t *Terminal) letRobotsGo() {
	t.readyOnce.Do(func() {
		t.pause = t.cfg.Pace
		if t.pause < 0 && t.cfg.Humans == 0 {
			t.pause = time.Second // watching: a card a second can be followed
		}
		close(t.ready)
	})
}

// println prints a text of the service's: the commands it names are written as they are typed
// here, without the chats' slash ("type rematch").
func (t *Terminal) println(text string) {
	fmt.Fprintln(t.cfg.Out, i18n.RewriteCommands(text, api.Verbs, func(v api.Verb) string { return string(v) }))
}

// Deliver prints public messages (only the lines that changed, for the live table message) and
// keeps each local player's hand to show when that player is to move.
func (t *Terminal) Deliver(ctx context.Context, msgs []api.Message) {
	t.mu.Lock()
	defer t.mu.Unlock()
	// A game's end comes as its table message's last version and the game's summary (at a
	// match's end the match's summary too, and the table message after them): print the last
	// trick from the one first, then the result and the board from the others, each line once.
	var summary []string
	for _, m := range msgs {
		if m.Kind == api.KindSummary {
			summary = append(summary, strings.Split(m.Text, "\n")...)
		}
	}
	edits := map[int]bool{} // live messages printed before anything else: new versions of one on the screen
	for i, m := range msgs {
		// Only at a game's end: elsewhere a notice says first what the table's line then shows
		// ("📣 You announce Konter!", then "Calls: Konter (You)").
		if _, shown := t.live[m.Key]; m.Kind == api.KindLive && shown && t.started && len(summary) > 0 {
			t.printLive(m, summary)
			edits[i] = true
		}
	}
	var said []string // the summaries' lines printed so far: the match's board is the game's
	for i, m := range msgs {
		if m.Kind == api.KindLobby {
			t.lobby = m.Text
		}
		switch {
		case edits[i]:
		case m.Kind == api.KindHand:
			t.hands[m.Target.Player.ID] = m
		case m.Kind == api.KindLive:
			t.printLive(m, summary)
		case !t.started, m.Kind == api.KindLobby && t.opening:
			// Before Run, the service resumes the table: its table message is shown by Run, in
			// the language asked for; notices of the last run are old news.
		case m.Target.Kind == api.ToPlayer && t.cfg.Humans > 1:
			// At a hot seat a private notice (a reminder) says whom it is for; one that shows
			// what its player holds (a review) shows its public form, the screen being shared
			// (the delivery policy: chat.Public).
			if pub, ok := chat.Public(m); ok {
				t.println(i18n.T(t.lang(), "term.for", m.Target.Player.Name) + " " + pub.Text)
			}
		case m.Kind == api.KindSummary:
			for _, l := range strings.Split(m.Text, "\n") {
				if t.cfg.Humans == 0 && l == i18n.T(m.Lang, "summary.rematch.typed") {
					continue // watching: nobody is at the keyboard to type rematch, and the program ends
				}
				if !slices.Contains(said, l) {
					t.println(l)
					said = append(said, l)
				}
			}
		default:
			t.println(m.Text)
		}
	}
}

// printLive prints the lines of a live message that are new (the table message scrolls by as a
// log), but those a summary of the same delivery says.
func (t *Terminal) printLive(m api.Message, summary []string) {
	lines := strings.Split(m.Text, "\n")
	prev := t.live[m.Key]
	t.live[m.Key], t.liveKey = lines, m.Key
	for _, l := range lines {
		if t.started && !slices.Contains(prev, l) && !slices.Contains(summary, l) {
			t.println("  " + l)
		}
	}
}

// toMove is the local player whose hand shows they must act, if any.
func (t *Terminal) toMove() (api.Player, api.Message, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for n := 1; n <= t.cfg.Humans; n++ {
		p := t.player(n)
		m, ok := t.hands[p.ID]
		if ok && len(legalMoves(m)) > 0 {
			return p, m, true
		}
	}
	return api.Player{}, api.Message{}, false
}

// legalMoves are the moves a hand offers now, as they are typed: "play QS", "trump H"; a card
// with the rank letter of the hand's language ("play DS" in de), as the hand shows it (D♠).
func legalMoves(m api.Message) []string {
	var moves []string
	for _, row := range m.Buttons {
		for _, b := range row {
			if b.Legal {
				moves = append(moves, string(b.Action.Verb)+" "+typedArg(m.Lang, b.Action))
			}
		}
	}
	return moves
}

// typedArg is a move's argument as it is typed in lang: a card's rank letter is the language's,
// its suit the letter every language reads (a keyboard has no ♠).
func typedArg(lang string, a api.Action) string {
	c, err := core.ParseCard(a.Arg)
	if a.Verb != api.VerbPlay || err != nil {
		return a.Arg
	}
	return strings.TrimSuffix(i18n.Card(lang, c), c.Suit().Symbol()) + c.Suit().String()
}

// showTurn prints the hand of the local player to move with the moves they may make. At a hot
// seat, a hand is shown only to the player at the keyboard: when the turn passes to another, the
// screen is cleared and they are asked to take the keyboard and press Enter first.
func (t *Terminal) showTurn() {
	p, m, ok := t.toMove()
	if !ok || m.Text == t.shown {
		return // the same hand is on the screen already
	}
	if t.cfg.Humans > 1 && p.ID != t.seen {
		if t.handover != p.ID {
			t.handover = p.ID
			t.mu.Lock()
			table := t.live[t.liveKey]
			t.mu.Unlock()
			fmt.Fprint(t.cfg.Out, clearScreen)
			for _, l := range table {
				t.println("  " + l)
			}
			t.println("\n" + i18n.T(t.lang(), "term.pass", p.Name))
		}
		return
	}
	t.shown = m.Text
	legal := legalMoves(m)
	t.println("\n" + p.Name + " — " + m.Text + "\n" + i18n.T(t.lang(), "term.moves", strings.Join(legal, " | ")))
}

// Run opens or resumes the terminal's table and reads commands until In ends or ctx is done.
//
// A table stored here from an earlier run is resumed when it is what the command line asked for:
// what was not given is taken from it (the players at the keyboard, the language). An unfinished
// match that differs from what was given is left as it was, and Run returns a *ConflictError,
// unless Config.Fresh stops it first. A finished match is shown with what to type next, or, when
// something else was asked for (or nobody is at the keyboard to type rematch), a new table opens.
func (t *Terminal) Run(ctx context.Context, svc *table.Service) error {
	t.svc = svc
	var su table.Setup
	stored := false
	if id := svc.TableAt(t.place); id != "" {
		su, stored = svc.SetupOf(id)
	}
	stored = stored && su.Status != api.StatusClosed
	over := stored && su.Status == api.StatusOver
	t.mu.Lock()
	if t.cfg.Lang == "" {
		t.screen = t.chosenLang(su, stored)
	}
	if stored && !t.cfg.Insist.Humans && !t.cfg.Learn && (!over || len(su.People) > 0) {
		t.cfg.Humans = len(su.People) // the players of the stored match are back (a lesson is for one)
	}
	t.mu.Unlock()
	conflicts := t.conflicts(su)
	switch {
	case !stored:
		err := t.start(ctx, "")
		if err != nil {
			return err
		}
	case over && (t.cfg.Fresh || len(conflicts) > 0 || su.Learn || t.cfg.Learn || t.cfg.Humans == 0 || len(su.People) != t.cfg.Humans):
		// Nothing is lost: the finished match is kept, and new closes its table.
		if err := t.start(ctx, "term.over_new"); err != nil {
			return err
		}
	case !over && t.cfg.Fresh:
		t.svc.Handle(ctx, api.Command{Place: t.place, Actor: t.player(1), Verb: api.VerbStop, Admin: true})
		if err := t.start(ctx, "term.fresh"); err != nil {
			return err
		}
	case !over && len(conflicts) > 0:
		return &ConflictError{i18n.T(t.lang(), "term.conflict", strings.Join(conflicts, "; "))}
	default:
		t.speak(ctx)
		t.letRobotsGo()
		t.begin()
		t.mu.Lock()
		t.println(i18n.T(t.lang(), "term.resumed"))
		for _, l := range t.live[t.liveKey] {
			t.println("  " + l)
		}
		if su.Status == api.StatusLobby {
			t.println(t.lobby) // a table opened with new, not dealt yet: who sits, what to type
		}
		if over {
			t.println(i18n.T(t.lang(), "term.over"))
		}
		t.mu.Unlock()
	}
	if err := svc.Settle(ctx); err != nil {
		return err
	}
	if t.cfg.Humans == 0 {
		return nil // watching: the match was played out meanwhile; nobody types
	}
	t.showTurn()
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(t.cfg.In)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case line, ok := <-lines:
			if !ok { // the input ended: Ctrl-D, or the end of a pipe
				t.sayKept()
				return nil
			}
			if !t.command(ctx, line) {
				t.sayKept()
				return nil
			}
			if err := svc.Settle(ctx); err != nil {
				return nil
			}
			t.showTurn()
		}
	}
}

// sayKept tells a player who leaves an unfinished match that it is kept, and how to go on.
func (t *Terminal) sayKept() {
	su, ok := t.svc.SetupOf(t.svc.TableAt(t.place))
	if ok && su.Status == api.StatusPlaying {
		t.mu.Lock()
		t.println(i18n.T(t.lang(), "term.kept"))
		t.mu.Unlock()
	}
}

// begin lets Deliver print.
func (t *Terminal) begin() {
	t.mu.Lock()
	t.started = true
	t.mu.Unlock()
}

// speak makes the language asked for on the command line the screen's: the table's (its public
// texts) and every local player's own, whatever was chosen in an earlier run.
func (t *Terminal) speak(ctx context.Context) {
	if t.cfg.Lang == "" {
		return
	}
	cmds := []api.Command{{Verb: api.VerbLang, Actor: t.player(1), Args: []string{"table", t.cfg.Lang}, Admin: true}}
	for n := 1; n <= max(t.cfg.Humans, 1); n++ {
		cmds = append(cmds, api.Command{Verb: api.VerbLang, Actor: t.player(n), Args: []string{t.cfg.Lang}})
	}
	for _, c := range cmds {
		c.Place = t.place
		t.svc.Handle(ctx, c) // the notes they answer ("the table speaks …") are not news here
	}
}

// start opens a new table as the command line asked, after the note (a key) that says why the
// stored one is not resumed.
func (t *Terminal) start(ctx context.Context, note string) error {
	t.speak(ctx)
	t.letRobotsGo()
	t.begin()
	if note != "" {
		t.println(i18n.T(t.lang(), note))
	}
	if !t.cfg.Learn {
		// What the stripes are for, which only a lesson says otherwise: a newcomer reads the board
		// as points to gather.
		o, err := options.Parse(t.cfg.Options)
		if err == nil {
			t.println(i18n.N(t.lang(), "term.goal", o.Rules.Stripes))
		}
	}
	return t.open(ctx)
}

// chosenLang is the screen's language when the command line gave none: the first player's own
// choice from an earlier run, else the stored table's language.
func (t *Terminal) chosenLang(su table.Setup, stored bool) string {
	if l := t.svc.Speaks(t.player(1)); l != "" {
		return l
	}
	if stored {
		return su.Lang
	}
	return ""
}

// conflicts says, in the screen's language, what the command line asked for that the stored
// table is not: a guided game, the number of players at the keyboard, an option.
func (t *Terminal) conflicts(su table.Setup) []string {
	var out []string
	if t.cfg.Learn && !su.Learn {
		out = append(out, i18n.T(t.lang(), "term.conflict.learn"))
	}
	if t.cfg.Insist.Humans && len(su.People) != t.cfg.Humans {
		out = append(out, i18n.T(t.lang(), "term.conflict.humans", t.cfg.Humans, len(su.People)))
	}
	want, err := options.Parse(t.cfg.Insist.Options)
	if err != nil {
		return out // a bad option is the opening's to refuse
	}
	have, wanted := optionValues(su.Options), optionValues(want)
	said := map[string]bool{}
	for _, a := range t.cfg.Insist.Options {
		k, _, _ := strings.Cut(a, "=")
		opt, ok := options.Named(strings.ToLower(strings.TrimSpace(k)))
		if ok && have[opt.Key] != wanted[opt.Key] && !said[opt.Key] {
			said[opt.Key] = true
			out = append(out, i18n.T(t.lang(), "term.conflict.option", opt.Key+"="+wanted[opt.Key], opt.Key+"="+have[opt.Key]))
		}
	}
	return out
}

// optionValues are a table's options by key, as new takes them.
func optionValues(o options.Options) map[string]string {
	m := map[string]string{}
	for _, kv := range strings.Fields(o.String()) {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

func (t *Terminal) open(ctx context.Context) error {
	first := t.player(1)
	if t.cfg.Learn {
		return t.do(ctx, api.Command{Verb: api.VerbLearn, Actor: first, Args: t.cfg.Options})
	}
	steps := []api.Command{{Verb: api.VerbNew, Actor: first, Args: t.cfg.Options}}
	for n := 2; n <= t.cfg.Humans; n++ {
		steps = append(steps, api.Command{Verb: api.VerbJoin, Actor: t.player(n)})
	}
	if t.cfg.Humans == 0 {
		steps = append(steps, api.Command{Verb: api.VerbLeave, Actor: first})
	}
	steps = append(steps, api.Command{Verb: api.VerbDeal, Actor: first, Admin: true})
	// The lobby would ask to type join and deal, which the terminal does itself right away: the
	// screen starts with the match that has started.
	t.setOpening(true)
	defer t.setOpening(false)
	for i, c := range steps {
		if i == len(steps)-1 {
			t.setOpening(false)
		}
		if err := t.do(ctx, c); err != nil {
			return err
		}
	}
	return nil
}

func (t *Terminal) setOpening(on bool) {
	t.mu.Lock()
	t.opening = on
	t.mu.Unlock()
}

// do sends one of the commands that open the table, printing what answers it but a refusal,
// which it returns.
func (t *Terminal) do(ctx context.Context, c api.Command) error {
	c.Place = t.place
	replies, err := t.svc.Handle(ctx, c)
	if err != nil {
		return fmt.Errorf("opening the table: %w", err)
	}
	for _, r := range replies {
		if r.Kind == api.KindError {
			return fmt.Errorf("opening the table: %s", r.Text)
		}
		if c.Verb == api.VerbLearn {
			t.println(r.Text)
		}
	}
	return nil
}

// command reads one line: "verb args", with or without a slash; a bare card plays it and a bare
// suit names trump. The actor is the local player to move, else the first player.
func (t *Terminal) command(ctx context.Context, line string) (goOn bool) {
	if t.handover != "" {
		// The line that answers the handover is the Enter of the player who takes the keyboard,
		// whatever it says: it must not act for the one before.
		t.seen, t.handover, t.shown = t.handover, "", ""
		return true
	}
	fields := strings.Fields(line)
	if t.stopping {
		t.stopping = false
		if len(fields) == 1 && (fields[0] == "stop" || fields[0] == "/stop") {
			return t.send(ctx, api.Command{Actor: t.player(1), Verb: api.VerbStop, Admin: true})
		}
		t.println(i18n.T(t.lang(), "term.stop_kept"))
	}
	if len(fields) == 0 {
		return true
	}
	actor := t.player(1)
	if p, _, ok := t.toMove(); ok {
		actor = p
	}
	verb, ok := api.ParseVerb(fields[0])
	args := fields[1:]
	if !ok {
		switch {
		case fields[0] == "quit" || fields[0] == "exit":
			return false
		default:
			if _, err := i18n.ParseCard(line); err == nil {
				verb, args = api.VerbPlay, fields
			} else if _, ok := i18n.ParseSuit(line); ok {
				verb, args = api.VerbTrump, fields
			} else {
				verb = api.Verb(fields[0])
			}
		}
	}
	switch verb {
	case api.VerbStop:
		// Stopping ends a match for good: ask once more.
		t.stopping = true
		t.println(i18n.T(t.lang(), "term.stop_confirm"))
		return true
	case api.VerbNew:
		// A table opened here later has the terminal's settings too (no turn timer: nobody is
		// away from a keyboard they sit at); what was typed comes after, so it wins.
		args = append(slices.Clone(t.cfg.Options), args...)
	}
	goOn = t.send(ctx, api.Command{Actor: actor, Verb: verb, Args: args, Admin: true})
	if verb == api.VerbAnnounce {
		t.shown = "" // still the announcer's turn: their cards and moves again, under what they said
	}
	if verb == api.VerbLang {
		// The screen speaks what was just chosen: the first player's own language, else the
		// table's.
		var su table.Setup
		stored := false
		if id := t.svc.TableAt(t.place); id != "" {
			su, stored = t.svc.SetupOf(id)
		}
		l := t.chosenLang(su, stored)
		t.mu.Lock()
		t.screen = l
		t.mu.Unlock()
	}
	return goOn
}

// send hands a command of a local player to the service and prints the answers. At a hot seat
// an answer that shows what its actor holds is theirs alone: it shows only if they are the one
// at the keyboard, else its public form (the delivery policy: chat.Public), as in a chat's group.
func (t *Terminal) send(ctx context.Context, cmd api.Command) bool {
	cmd.Place = t.place
	replies, _ := t.svc.Handle(ctx, cmd) // a command not done is refused in its replies, shown below
	for _, r := range replies {
		if r.Secret && t.cfg.Humans > 1 && cmd.Actor.ID != t.seen {
			pub, ok := chat.Public(r)
			if !ok {
				continue
			}
			r = pub
		}
		t.mu.Lock()
		t.println(r.Text)
		if r.File != nil {
			t.println(t.save(r.File))
		}
		t.mu.Unlock()
	}
	return true
}

// save writes a file the service sent into Dir and says where it is.
func (t *Terminal) save(f *api.File) string {
	path := filepath.Join(t.cfg.Dir, filepath.Base(f.Name))
	if err := os.WriteFile(path, f.Data, 0o644); err != nil {
		return i18n.T(t.lang(), "term.save_failed", path, err.Error())
	}
	return i18n.T(t.lang(), "term.saved", path)
}

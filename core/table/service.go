package table

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/i18n"
)

// Decider is a computer player: it sees one seat's View and returns a move for it. The robot
// package's players satisfy it; the service never shows a Decider anything but a View.
type Decider interface {
	Decide(ctx context.Context, v core.View) core.Move
}

// Config wires a Service.
type Config struct {
	Store    Store
	Outboxes map[string]Outbox // by platform; messages for a platform without one are dropped
	// Robots makes a computer player of a level ("easy", "normal", "strong").
	Robots func(level string, seed uint64) Decider
	// Now is the clock; timers use the runtime's timers, so tests run them in testing/synctest.
	Now      func() time.Time
	Seed     uint64 // seeds table IDs and every table's deals
	Log      *slog.Logger
	RulesURL string
	// Think bounds one computer decision (the level's own budget may be smaller).
	Think time.Duration
}

// Service runs every table. Commands for one table are applied one at a time under that table's
// lock; different tables run in parallel.
type Service struct {
	cfg Config

	mu      sync.Mutex // guards the maps and rng
	tables  map[string]*tbl
	byPlace map[string]string // place key → the place's current table
	rng     *rand.Rand

	// onPublish, when set (by this package's tests), sees each batch of messages with its table,
	// under the table's lock, before delivery.
	onPublish func(t *tbl, msgs []Message)

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup // computer players and timers in flight
}

// tbl is a table in memory: its stored state plus what is derived from it.
type tbl struct {
	mu        sync.Mutex
	st        *state
	opts      Options
	match     *core.Match // nil in a lobby before the first deal
	committed []byte      // the last stored state, to roll back to if a commit fails
	timer     *time.Timer
	robots    [4]Decider
	thinking  bool
	sent      map[string]uint64 // editable message key → fingerprint of the last content sent
	handSig   [4]handSig        // what each seat's hand message was last built from
}

// New makes a service; call Resume to load stored tables.
func New(cfg Config) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Think <= 0 {
		cfg.Think = 2 * time.Second
	}
	if cfg.RulesURL == "" {
		cfg.RulesURL = "https://github.com/kontermatt/kontermatt/blob/main/docs/rules.md"
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Service{cfg: cfg, tables: map[string]*tbl{}, byPlace: map[string]string{},
		rng: rand.New(rand.NewPCG(cfg.Seed, 0x6b6d)), ctx: ctx, cancel: cancel}
}

// Close stops timers and waits for computer players in flight. Commands after Close are refused.
func (s *Service) Close() {
	s.cancel()
	s.mu.Lock()
	for _, t := range s.tables {
		t.mu.Lock()
		if t.timer != nil {
			t.timer.Stop()
		}
		t.mu.Unlock()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// Resume loads every stored table, brings its messages up to date, re-arms its timers and lets
// computer players continue. A table that cannot be read is logged and skipped.
func (s *Service) Resume(ctx context.Context) error {
	var loaded []*tbl
	err := s.cfg.Store.Tables(func(id string, data []byte) error {
		t, err := s.load(data)
		if err != nil {
			s.cfg.Log.Error("skipping unreadable table", "table", id, "err", err)
			return err
		}
		loaded = append(loaded, t)
		return nil
	})
	for _, t := range loaded {
		t.mu.Lock()
		// A closed table's messages were final when it closed: nothing to bring up to date.
		if t.st.Status != StatusClosed {
			s.publish(ctx, t, nil)
		}
		s.arm(t)
		s.scheduleRobot(t)
		t.mu.Unlock()
	}
	return err
}

func (s *Service) load(data []byte) (*tbl, error) {
	st, opts, m, err := decodeState(data)
	if err != nil {
		return nil, err
	}
	t := &tbl{st: st, opts: opts, match: m, committed: data, sent: map[string]uint64{}}
	s.makeRobots(t)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tables[st.ID] = t
	if cur, ok := s.byPlace[st.Place.Key()]; !ok || s.tables[cur].st.Created <= st.Created {
		s.byPlace[st.Place.Key()] = st.ID
	}
	return t, nil
}

// Tables is how many tables the service holds.
func (s *Service) Tables() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.tables)
}

// TableAt gives the ID of the place's current table, or "".
func (s *Service) TableAt(p Place) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byPlace[p.Key()]
}

func (s *Service) makeRobots(t *tbl) {
	for i := range t.robots {
		t.robots[i] = nil
		if s.cfg.Robots != nil {
			t.robots[i] = s.cfg.Robots(t.opts.Level, t.st.Seed^uint64(i+1)*0x9e3779b97f4a7c15)
		}
	}
}

// Handle applies one command. It returns the replies meant only for the actor; everything else
// (public table messages, private hands) goes to the platform's Outbox after the change is stored.
func (s *Service) Handle(ctx context.Context, cmd Command) []Message {
	lang := i18n.Pick(cmd.Actor.Locale)
	if s.ctx.Err() != nil {
		return []Message{errorReply(cmd, lang, refuse("err.shutting_down"))}
	}
	switch cmd.Verb {
	case VerbHelp:
		return []Message{reply(cmd, lang, KindReply, helpText(lang))}
	case VerbRules:
		return []Message{reply(cmd, lang, KindReply, i18n.T(lang, "rules.text", s.cfg.RulesURL))}
	case VerbNew:
		return s.open(ctx, cmd)
	case VerbTimeout:
		return nil // only the table's own timer may say that
	}
	t, uerr := s.find(cmd)
	if uerr != nil {
		if cmd.Verb == VerbLang {
			return []Message{reply(cmd, lang, KindReply, s.langNoTable(cmd))}
		}
		return []Message{errorReply(cmd, lang, uerr)}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return s.exec(ctx, t, cmd)
}

// find gives the table a command is for: the one a button or private command names, else the
// current table of the place, else the only table the actor sits at.
func (s *Service) find(cmd Command) (*tbl, *userError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cmd.Table != "" {
		if t, ok := s.tables[cmd.Table]; ok {
			return t, nil
		}
		return nil, refuse("err.no_such_table")
	}
	if id, ok := s.byPlace[cmd.Place.Key()]; ok {
		return s.tables[id], nil
	}
	if cmd.Private {
		var found []*tbl
		for _, t := range s.tables {
			// Reading another table's seats needs its lock; the seat list only changes under it.
			t.mu.Lock()
			if t.st.Status != StatusClosed && seatOf(t.st, cmd.Actor.ID) != core.NoSeat {
				found = append(found, t)
			}
			t.mu.Unlock()
		}
		if len(found) == 1 {
			return found[0], nil
		}
		if len(found) > 1 {
			return nil, refuse("err.several_tables")
		}
	}
	return nil, refuse("err.no_table")
}

func seatOf(st *state, playerID string) core.Seat {
	for i, seat := range st.Seats {
		if seat.Player != nil && seat.Player.ID == playerID {
			return core.Seat(i)
		}
	}
	return core.NoSeat
}

// moveVerbs are refused when they carry a sequence number that is not the table's current one: a
// double click or an old button. Idempotent verbs (join, hand, board...) are always answered.
var moveVerbs = map[Verb]bool{VerbBot: true, VerbSeat: true, VerbShuffle: true, VerbDeal: true, VerbTrump: true,
	VerbAnnounce: true, VerbPlay: true, VerbStop: true, VerbRematch: true, VerbLeave: true}

// outcome is what a verb did: whether it changed the table, what to tell whom, what to keep.
type outcome struct {
	changed bool
	replies []Message // to the actor
	public  []Message // one-off messages (summaries, notices) sent with the table's update
	records []Record
}

func (s *Service) exec(ctx context.Context, t *tbl, cmd Command) []Message {
	lang := s.langOf(t, cmd.Actor)
	if cmd.EventID != "" && slices.Contains(t.st.Events, cmd.EventID) {
		return []Message{reply(cmd, lang, KindNotice, i18n.T(lang, "note.duplicate"))}
	}
	// A button made before its presser's last accepted command of the same kind (a game move, or
	// a table command) is a double click or an old message: refuse it. Buttons stay valid through
	// others' moves and the presser's other commands, so a hand message need not be sent again
	// every time someone else plays or the presser votes to stop.
	if cmd.Seq != 0 && cmd.Seq < t.st.Acted[actedKey(cmd)] && moveVerbs[cmd.Verb] {
		return []Message{errorReply(cmd, lang, refuse("err.stale"))}
	}
	// The place's title may have changed (a renamed group); it is stored with the next change.
	if title := cmd.Place.Title; title != "" && title != t.st.Place.Title && cmd.Place.Key() == t.st.Place.Key() {
		t.st.Place.Title = title
	}
	var out outcome
	// Any command from an absent player brings them back to the table.
	if seat := seatOf(t.st, cmd.Actor.ID); seat != core.NoSeat && t.st.Seats[seat].Away {
		t.st.Seats[seat].Away = false
		out.changed = true
		out.public = append(out.public, s.notice(t, "note.back", seatName(t, seat)))
	}
	uerr := s.do(ctx, t, cmd, lang, &out)
	if uerr != nil {
		if out.changed { // only the return from away: keep it
			s.commit(ctx, t, cmd, &outcome{changed: true, public: out.public})
		}
		return []Message{errorReply(cmd, lang, uerr)}
	}
	if out.changed {
		if uerr := s.commit(ctx, t, cmd, &out); uerr != nil {
			return []Message{errorReply(cmd, lang, uerr)}
		}
	}
	return out.replies
}

// actedKey is where a player's last accepted command of the command's kind is remembered.
func actedKey(cmd Command) string {
	switch cmd.Verb {
	case VerbTrump, VerbAnnounce, VerbPlay:
		return cmd.Actor.ID + "/game"
	}
	return cmd.Actor.ID + "/table"
}

// commit stores the table's new state with its log entry in one transaction, then (and only
// then) tells everyone. If the store fails, the table rolls back to its last stored state.
func (s *Service) commit(ctx context.Context, t *tbl, cmd Command, out *outcome) *userError {
	st := t.st
	now := s.cfg.Now()
	st.Seq++
	if cmd.EventID != "" {
		st.Events = append(st.Events, cmd.EventID)
		if len(st.Events) > maxEvents {
			st.Events = st.Events[len(st.Events)-maxEvents:]
		}
	}
	if cmd.Verb != VerbTimeout {
		st.TurnAt, st.Reminded = now.UnixMilli(), false
	}
	if cmd.Actor.ID != "" && !strings.HasPrefix(cmd.Actor.ID, "robot:") {
		if st.Acted == nil {
			st.Acted = map[string]uint64{}
		}
		st.Acted[actedKey(cmd)] = st.Seq
	}
	if t.match != nil {
		// Finished games never change: only the last one is encoded again.
		games := t.match.Games()
		if len(st.Games) > len(games) {
			st.Games = st.Games[:0]
		}
		for i := max(len(st.Games)-1, 0); i < len(games); i++ {
			enc := encodeGame(games[i])
			if i < len(st.Games) {
				st.Games[i] = enc
			} else {
				st.Games = append(st.Games, enc)
			}
		}
	}
	data, err := json.Marshal(st)
	if err == nil {
		err = s.cfg.Store.Commit(Change{TableID: st.ID, State: data, Records: out.records,
			Log: LogEntry{Seq: st.Seq, Time: now.UnixMilli(), Actor: cmd.Actor.ID, Verb: cmd.Verb, Args: cmd.Args, EventID: cmd.EventID}})
	}
	if err != nil {
		s.cfg.Log.Error("commit failed; rolling back", "table", st.ID, "err", err)
		s.rollback(t)
		return refuse("err.internal")
	}
	t.committed = data
	s.publish(ctx, t, out.public)
	s.arm(t)
	s.scheduleRobot(t)
	return nil
}

func (s *Service) rollback(t *tbl) {
	if t.committed == nil {
		return // never stored: the caller discards the table
	}
	st, opts, m, err := decodeState(t.committed)
	if err != nil {
		// The bytes were written by this process a moment ago; failing to read them is a bug.
		panic(fmt.Sprintf("table %s: cannot reload own state: %v", t.st.ID, err))
	}
	t.st, t.opts, t.match = st, opts, m
}

// deliver hands messages to their platforms' outboxes.
func (s *Service) deliver(ctx context.Context, platform string, msgs []Message) {
	if len(msgs) == 0 {
		return
	}
	if ob, ok := s.cfg.Outboxes[platform]; ok {
		ob.Deliver(ctx, msgs)
	}
}

// publish sends the table's editable messages whose content changed, and the one-off messages.
func (s *Service) publish(ctx context.Context, t *tbl, extra []Message) {
	// One-off messages first: a game's summary belongs before the next game's table message.
	msgs := append([]Message(nil), extra...)
	for _, m := range s.render(t) {
		fp := fingerprint(m)
		if t.sent[m.Key] == fp {
			continue
		}
		t.sent[m.Key] = fp
		msgs = append(msgs, m)
	}
	for i := range msgs {
		msgs[i].Version, msgs[i].Table = t.st.Seq, t.st.ID
		if msgs[i].Target.Place == (Place{}) {
			msgs[i].Target.Place = t.st.Place
		}
	}
	if s.onPublish != nil {
		s.onPublish(t, msgs)
	}
	s.deliver(ctx, t.st.Place.Platform, msgs)
}

// fingerprint identifies what a message shows. Button sequence numbers are left out: a message is
// sent again only when its visible content changes, and its buttons stay valid until the player
// acts (see exec). The hash is per process, as is the map that keeps it.
func fingerprint(m Message) uint64 {
	var h maphash.Hash
	h.SetSeed(fingerprintSeed)
	h.WriteString(m.Title)
	h.WriteByte(0)
	h.WriteString(m.Text)
	h.WriteByte(0)
	h.WriteString(string(m.Picture))
	for _, row := range m.Buttons {
		h.WriteByte(1)
		for _, b := range row {
			h.WriteByte(2)
			h.WriteString(b.Label)
			h.WriteByte(3)
			h.WriteString(string(b.Action.Verb))
			h.WriteByte(3)
			h.WriteString(b.Action.Arg)
			h.WriteByte(byte(b.Style))
		}
	}
	return h.Sum64()
}

var fingerprintSeed = maphash.MakeSeed()

// open handles new: a table at the place, in the lobby, with the actor seated.
func (s *Service) open(ctx context.Context, cmd Command) []Message {
	lang := i18n.Pick(cmd.Actor.Locale)
	if cmd.Private {
		return []Message{errorReply(cmd, lang, refuse("err.new_in_private"))}
	}
	opts, err := ParseOptions(cmd.Args)
	if err != nil {
		var oe *optionError
		errors.As(err, &oe)
		return []Message{errorReply(cmd, lang, refuse("err.bad_option", lit(oe.text)))}
	}
	// The place is reserved under the service lock, so two /new at once open one table; the
	// new table's own lock keeps others waiting until it is stored.
	key := cmd.Place.Key()
	s.mu.Lock()
	prev, hadPrev := s.byPlace[key]
	if hadPrev {
		old := s.tables[prev]
		old.mu.Lock() // lock order: service, then table
		status, dup := old.st.Status, cmd.EventID != "" && slices.Contains(old.st.Events, cmd.EventID)
		old.mu.Unlock()
		if dup { // the platform delivered the same /new again
			s.mu.Unlock()
			return []Message{reply(cmd, lang, KindNotice, i18n.T(lang, "note.duplicate"))}
		}
		if status == StatusLobby || status == StatusPlaying {
			s.mu.Unlock()
			return []Message{errorReply(cmd, lang, refuse("err.table_exists"))}
		}
	}
	id := s.newID()
	st := &state{V: stateVersion, ID: id, Place: cmd.Place, Lang: lang, Options: opts.state(),
		Status: StatusLobby, Seed: s.rng.Uint64(), MatchNo: 1, Created: s.cfg.Now().UnixMilli()}
	st.Seats[0] = SeatState{Player: &Player{ID: cmd.Actor.ID, Name: cmd.Actor.Name, Locale: cmd.Actor.Locale}}
	t := &tbl{st: st, opts: opts, sent: map[string]uint64{}}
	s.makeRobots(t)
	t.mu.Lock()
	defer t.mu.Unlock()
	s.tables[id], s.byPlace[key] = t, id
	s.mu.Unlock()

	out := outcome{changed: true, replies: []Message{reply(cmd, lang, KindNotice, i18n.T(lang, "note.opened"))}}
	if uerr := s.commit(ctx, t, cmd, &out); uerr != nil {
		s.mu.Lock()
		delete(s.tables, id)
		delete(s.byPlace, key)
		if hadPrev {
			s.byPlace[key] = prev
		}
		s.mu.Unlock()
		return []Message{errorReply(cmd, lang, uerr)}
	}
	return out.replies
}

// newID makes a short table ID (s.mu held).
func (s *Service) newID() string {
	for {
		id := strconv.FormatUint(s.rng.Uint64()%(36*36*36*36*36*36), 36)
		if _, taken := s.tables[id]; !taken && len(id) >= 4 {
			return id
		}
	}
}

// langOf is the language for a player's private texts: their choice at this table, their
// platform locale, then the table's language.
func (s *Service) langOf(t *tbl, p Player) string {
	if l, ok := t.st.Langs[p.ID]; ok {
		return l
	}
	return i18n.Pick(p.Locale, t.st.Lang)
}

func (s *Service) langNoTable(cmd Command) string {
	lang := i18n.Pick(cmd.Actor.Locale)
	if len(cmd.Args) > 0 {
		if l := i18n.Match(cmd.Args[len(cmd.Args)-1]); l != "" {
			return i18n.T(l, "note.lang_no_table")
		}
	}
	return i18n.T(lang, "lang.usage")
}

func reply(cmd Command, lang string, kind Kind, text string) Message {
	return Message{Target: Target{Kind: ToActor, Place: cmd.Place, Player: cmd.Actor}, Kind: kind, Text: text,
		Lang: lang, Table: cmd.Table}
}

func errorReply(cmd Command, lang string, e *userError) Message {
	return reply(cmd, lang, KindError, e.text(lang))
}

// notice is a one-off public message in the table's language.
func (s *Service) notice(t *tbl, key string, args ...any) Message {
	return Message{Target: Target{Kind: ToPlace, Place: t.st.Place}, Kind: KindNotice,
		Text: i18n.T(t.st.Lang, key, args...), Lang: t.st.Lang}
}

// dealNext deals the match's next game from the table's seeded deck.
func (s *Service) dealNext(t *tbl) {
	rng := rand.New(rand.NewPCG(t.st.Seed, t.st.Deals))
	t.st.Deals++
	hands := core.DealHands(rng, t.match.NextDealer())
	if _, err := t.match.Deal(hands); err != nil {
		panic(fmt.Sprintf("table %s: dealing: %v", t.st.ID, err)) // the service checked the match can go on
	}
}

// startMatch begins a match: the first dealer is drawn from the table's seed.
func (s *Service) startMatch(t *tbl) {
	rng := rand.New(rand.NewPCG(t.st.Seed, 1<<63|uint64(t.st.MatchNo)))
	t.st.First = rng.IntN(4)
	t.st.Games = nil
	t.match, _ = core.NewMatch(t.opts.Rules, core.Seat(t.st.First))
	t.st.Status = StatusPlaying
	t.st.Votes = nil
	s.dealNext(t)
}

// game is the game in progress, or nil.
func (t *tbl) game() *core.Game {
	if t.match == nil || t.st.Status != StatusPlaying {
		return nil
	}
	if g := t.match.Current(); g != nil && g.Phase() != core.PhaseOver {
		return g
	}
	return nil
}

// Status gives a table's status, and false for an unknown table.
func (s *Service) Status(id string) (Status, bool) {
	s.mu.Lock()
	t, ok := s.tables[id]
	s.mu.Unlock()
	if !ok {
		return "", false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.st.Status, true
}

// Settle waits until no computer decision is due at any table: scripts and tests that drive the
// service line by line use it so each line meets a table that has finished moving.
func (s *Service) Settle(ctx context.Context) error {
	for {
		busy := false
		s.mu.Lock()
		tables := make([]*tbl, 0, len(s.tables))
		for _, t := range s.tables {
			tables = append(tables, t)
		}
		s.mu.Unlock()
		for _, t := range tables {
			t.mu.Lock()
			if g := t.game(); t.thinking || (g != nil && t.actsForItself(g.ToMove())) {
				busy = true
			}
			t.mu.Unlock()
		}
		if !busy {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// Turn tells who must act at a table and, in the play phase, which cards they may play (for
// autocomplete, and for tools that drive tables). playerID is "" when a computer acts or no game
// is on.
func (s *Service) Turn(tableID string) (playerID string, legal []core.Card, trumpPhase bool) {
	s.mu.Lock()
	t, ok := s.tables[tableID]
	s.mu.Unlock()
	if !ok {
		return "", nil, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	g := t.game()
	if g == nil {
		return "", nil, false
	}
	seat := g.ToMove()
	p := t.st.Seats[seat].Player
	if p == nil || t.st.Seats[seat].Away {
		return "", nil, false
	}
	return p.ID, g.LegalCards(seat).Cards(), g.Phase() == core.PhaseTrump
}

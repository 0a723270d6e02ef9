package table

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/options"
	"github.com/kontermatt/kontermatt/core/places"
	"github.com/kontermatt/kontermatt/core/privacy"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/pace"
	"github.com/kontermatt/kontermatt/core/table/placement"
	"github.com/kontermatt/kontermatt/core/table/render"
)

// Config wires a Service.
type Config struct {
	Store    Store
	Outboxes map[string]Outbox // by platform; messages for a platform without one are dropped
	// Surfaces describe the platforms whose places are not chats with buttons (the terminal);
	// a platform not listed has buttons and a group reading along.
	Surfaces map[string]api.Surface
	// KV keeps each person's own settings (their language), each place's settings and leagues.
	// Without it, the Store's: every store of this repository is a KV (New panics on one that is
	// not, a wiring mistake).
	KV KV
	// Robots makes a computer player of a level ("easy", "normal", "strong").
	Robots func(level string, seed uint64) Decider
	// Now is the clock; timers use the runtime's timers, so tests run them in testing/synctest.
	Now func() time.Time
	// Random is where table IDs and each table's secret (its deals, its computer players' seeds)
	// come from; nil: crypto/rand, or ChaCha8 from Seed when Seed is not 0 (see random.go).
	Random io.Reader
	// Seed, when not 0 and Random is nil, makes the service deterministic: the same seed opens the
	// same tables and deals the same games (tests, tools, a host's -seed).
	Seed uint64
	Log  *slog.Logger
	// RulesURL is the page /rules links, "{lang}" in it replaced by the reader's language: the web
	// table's rules page (cmd/bot sets web.public_url's /rules?lang={lang}) or the host's
	// rules_url. Empty: no link, the chat's own text is the rules.
	RulesURL string
	// Think bounds one computer decision (the level's own budget may be smaller).
	Think time.Duration
	// OverFor is how long a finished match waits for a rematch before its table closes; default
	// a day.
	OverFor time.Duration
	// Retention is how long a closed table's state and command log are kept (its match records
	// are kept for ever); default 30 days. Prune runs at Resume and every PruneEvery (default an
	// hour).
	Retention, PruneEvery time.Duration
	// Observe hears what the service does, for metrics; default: nothing.
	Observe Observer
	// Coach gives hints, reviews and a guided game's lessons (coach.go; core/coach makes one); nil:
	// none. The service closes it when it closes.
	Coach Coach
	// People are what each platform's adapter keeps about people, for Forget to reach.
	People []People
	// Paces are the times of the pace presets (pace.go); nil, or a preset not in it:
	// DefaultPaces. Tests shorten them.
	Paces map[options.PacePreset]Pace
	// Leases, when set, say which places this copy owns (owner.go): several copies of the bot on
	// one store each have their own, held in the store (etcd, a Spread); LocalLeases for the only
	// copy. Nil: the service owns every place from its start, as the only copy.
	Leases Leases
	// Shared says other copies of the bot use the same store and KV: what the service keeps of
	// the KV in memory (people's settings, the leagues) is read again rather than trusted.
	Shared bool
	// Verbs are the verbs answered outside the engine (registry.go): each package's own, listed
	// by the wiring. A verb of the engine's, or listed twice, is a wiring mistake New panics on.
	Verbs []OutsideVerb
	// League keeps every place's league, which a match's end teaches (core/league/keeper's; the
	// wiring gives the same league to the league's verbs). Nil: no league is kept.
	League League
}

// Observer hears what the service does, for metrics. Its methods must be quick and safe to call
// from many goroutines; they are called with a table's lock held.
type Observer interface {
	// Command is one Handle call: the verb, "ok" or "refused", and how long it took.
	Command(verb api.Verb, outcome string, took time.Duration)
	// Commit is one write to the store and how long it took; err is its failure, if any.
	Commit(took time.Duration, err error)
	// Decision is one computer player's decision at a level and how long it took.
	Decision(level string, took time.Duration)
}

type noObserver struct{}

func (noObserver) Command(api.Verb, string, time.Duration) {}
func (noObserver) Commit(time.Duration, error)             {}
func (noObserver) Decision(string, time.Duration)          {}

// Count gives how many tables in memory are in each status.
func (s *Service) Count() map[api.Status]int {
	out := map[api.Status]int{}
	for _, t := range s.index.all() {
		out[t.view().status]++ // as stored: a table's lock may be held through its commit
	}
	return out
}

// Defaults of the Config.
const (
	DefaultOverFor    = 24 * time.Hour
	DefaultRetention  = 30 * 24 * time.Hour
	DefaultPruneEvery = time.Hour
)

// Service runs every table. Commands for one table are applied one at a time under that table's
// lock; different tables run in parallel. The Service finds a command's table, locks it and
// dispatches the verb; its parts do the rest, each with what it needs alone: play the rules of a
// table's change (play.go), committer the commit path (commit.go), follower keeping in step with
// the other copies (cluster.go), tableIndex the tables in memory (index.go), renderer the
// messages (render.go), publisher what follows a stored change to the outboxes (publish.go),
// timers what a table does with no command (robots.go), tutor the coach (coach.go), pacer the
// pace (pace.go).
type Service struct {
	cfg Config

	index *tableIndex // the tables in memory, by ID and by place (index.go)
	draw  *source     // randomness for table IDs and secrets (random.go)

	// forgetter forgets people (Forget): core/privacy's, with the engine's part (forget.go).
	forgetter *privacy.Forgetter

	outside map[api.Verb]verbSpec // Config.Verbs, by verb

	users *privacy.Book // each person's own choices
	view  renderer      // what the tables show (core/table/render; the sight it reads: render.go)
	play  play          // how a table changes by its rules (play.go)
	// clustered hears what keeps copies in step (Config.Observe's ClusterObserver part).
	clustered ClusterObserver
	// follow keeps the tables in step with what other copies store (cluster.go).
	follow follower
	// commits is the commit path: how a table's change is stored (commit.go).
	commits committer
	tutor   tutor // what the coach is asked and the guided game says (coach.go)
	// places are each place's own settings and the votes on them (core/places).
	places *places.Book
	// pub tells what follows a stored change: the messages, to the outboxes (publish.go).
	pub publisher
	// timers move a table with no command: its deadlines, its computer players (robots.go).
	timers timers

	// place is which places this copy owns (owner.go).
	place *placement.Owner
	// placed are the places' claims: which table each has (cluster.go).
	placed placeClaims
	// pacer is what the pace asks of a table, and which platforms report what their places
	// show (pace.go).
	pacer pace.Pacer

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup // computer players, timers and the janitor in flight
}

// tbl is a table in memory: its stored state plus what is derived from it.
type tbl struct {
	mu tableLock
	// placeKey is the Key of the table's place, guarded by the index's lock (not the table's):
	// find reads it without the table's lock, while t.st may be replaced under that lock alone
	// (a rollback, a reload from the store).
	placeKey string
	// tableID and created are st.ID and st.Created, which never change: read under either lock.
	tableID   string
	created   int64
	st        *state
	opts      options.Options
	match     *core.Match // nil in a lobby before the first deal
	committed []byte      // the last stored state, to roll back to if a commit fails
	timer     *time.Timer
	robots    [4]Decider
	thinking  bool
	learnSaid string            // a guided game: the turn the learner was last told about
	sent      map[string]uint64 // editable message key → Digest of the last content sent
	handSig   [4]handSig        // what each seat's hand message was last built from
	// hinting lets one hint's search run at a time for the table, and hinted is the last one
	// found (coach.go); neither needs the table's lock.
	hinting sync.Mutex
	hinted  lastHint
	// failures counts the background commits (a computer's move, a timeout) that failed in a row;
	// retry is the timer that tries again, later each time.
	failures int
	retry    *time.Timer
	// claimed is the place's claim as it was before claimPlace claimed the place for this new
	// table: unclaim gives it back if the table cannot be stored.
	claimed []byte
	// shown is what the place's public table message shows, as its adapter reports (pace.go).
	shown shownState
	// stored is what the table's last stored state says of where it is and who sits at it, for
	// the lookups that must not wait for the table's lock, which a command holds through its
	// commit: PlaceOf, Status, Count, find's search by seat. Replaced whole (noteStored), never
	// changed, read without a lock.
	stored atomic.Pointer[storedView]
}

// tableLock is a table's lock: a mutex, but one a command stops waiting for when its ctx ends
// (LockCtx), for the lock is held through the table's commit, which may hang on a store. The
// zero value is unlocked.
//
// It is held through ITS table's commit, and that is no lock across I/O in the sense to avoid:
//   - It is the order of that table's moves. A command decides on the table as stored, commits
//     the new state guarded by its Seq, and only then tells anyone (or rolls back). The next
//     command for the table must decide on what the first stored or rolled back to; let go
//     during the commit, it would decide on a state that may yet roll back, and its own commit
//     would conflict and be decided again anyway. Commands of one table are one at a time
//     whatever the lock (a double click must not play two cards).
//   - It is ctx-cancellable: a command waits for it within its ctx (LockCtx,
//     TestACommandStopsWaitingWhenItsContextEnds), and the commit it waits for gives the store
//     the committing command's ctx.
//   - Nothing else waits for it: no other table's command (the index's lock is never held
//     while a table's is waited for), no lookup across tables (PlaceOf, Status, Count, find by
//     seat read the table as last stored, t.stored), no adapter's report of what its place shows
//     (Shown takes the report's own lock). locks_test.go shows it on memory, and
//     storage/etcdstore's TestOtherTablesAnswerWhileOneCommitHangs on memory, bbolt and etcd: the
//     other tables' p99 unchanged while one table's commit hangs. What still takes it to read
//     (Seen, Picture, Turn, Retell) reads that table alone, and wants it as stored.
type tableLock struct {
	once sync.Once
	ch   chan struct{} // holds a value while locked
}

func (l *tableLock) c() chan struct{} {
	l.once.Do(func() { l.ch = make(chan struct{}, 1) })
	return l.ch
}

// Lock waits for the lock.
func (l *tableLock) Lock() { l.c() <- struct{}{} }

// LockCtx waits for the lock until ctx ends; then it gives ctx's error, unlocked.
func (l *tableLock) LockCtx(ctx context.Context) error {
	select {
	case l.c() <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TryLock takes the lock if it is free, and reports whether it did.
func (l *tableLock) TryLock() bool {
	select {
	case l.c() <- struct{}{}:
		return true
	default:
		return false
	}
}

// Unlock lets the lock go (the next Lock's send happens after this receive, so what was
// written under the lock is seen under the next).
func (l *tableLock) Unlock() {
	select {
	case <-l.c():
	default:
		panic("table: unlock of an unlocked table")
	}
}

// storedView is a table as last stored, as far as lookups across tables need it.
type storedView struct {
	place   api.Place
	status  api.Status
	players [4]string // the seated people's IDs ("" for an empty or a computer's seat)
	away    [4]bool   // a computer plays for the seated person (SeatState.Away)
}

// noteStored takes the table's state as the one stored now (table lock held): after a commit,
// a load or a reload, and for a new table from its making.
func (t *tbl) noteStored() {
	v := &storedView{place: t.st.Place, status: t.st.Status}
	for i, seat := range t.st.Seats {
		if seat.Player != nil {
			v.players[i] = seat.Player.ID
		}
		v.away[i] = seat.Away
	}
	t.stored.Store(v)
}

// seats reports whether the person sits at the table as last stored, and it is not closed.
func (v *storedView) seats(id string) bool {
	return id != "" && v.status != api.StatusClosed && slices.Contains(v.players[:], id)
}

// view is the table as last stored (see stored); the table's lock is not needed.
func (t *tbl) view() *storedView { return t.stored.Load() }

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
	if cfg.OverFor <= 0 {
		cfg.OverFor = DefaultOverFor
	}
	if cfg.Retention <= 0 {
		cfg.Retention = DefaultRetention
	}
	if cfg.PruneEvery <= 0 {
		cfg.PruneEvery = DefaultPruneEvery
	}
	if cfg.Observe == nil {
		cfg.Observe = noObserver{}
	}
	if cfg.KV == nil {
		// The league is written with its matches into the store's KV, and read back from this
		// one to be compared (Change.Expect): the store's own KV, when it has one.
		kv, ok := cfg.Store.(KV)
		if !ok { // a wiring mistake, not a user's: every store of the project is a KV
			panic("table.New: Config.KV is nil and the store is not a KV")
		}
		cfg.KV = kv
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Service{cfg: cfg, index: newTableIndex(), draw: &source{r: randomSource(cfg)}, ctx: ctx, cancel: cancel}
	s.clustered = clusterObserver(cfg.Observe)
	s.place = s.newOwner()
	s.commits = committer{store: cfg.Store, league: cfg.League, observe: cfg.Observe, now: cfg.Now, log: cfg.Log, place: s.place}
	s.placed = newPlaceClaims(cfg)
	s.pacer.Paces, s.pacer.Now = cfg.Paces, cfg.Now
	s.outside = map[api.Verb]verbSpec{}
	for _, v := range cfg.Verbs {
		if _, taken := s.spec(v.Verb); taken && !personalForm(v, s.outside) {
			panic("table.New: the verb " + string(v.Verb) + " is registered twice")
		}
		s.outside[v.Verb] = outsideSpec(v)
	}
	s.users = privacy.NewBook(ctx, cfg.KV, cfg.Log)
	s.places = places.New(cfg.KV, cfg.Log)
	s.forgetter = s.newForgetter()
	s.view = renderer{render.Renderer{Surfaces: cfg.Surfaces, Chosen: s.users.Lang}}
	s.pub = publisher{outboxes: cfg.Outboxes, view: s.view, pacer: &s.pacer, life: ctx}
	s.tutor = tutor{coach: cfg.Coach, langOf: s.view.PersonLang, wants: func(id string) bool { return s.users.Get(id).Coach },
		life: ctx, table: s.index.get, deliver: s.pub.deliver}
	s.pub.lessons = s.tutor.lessons
	s.follow = follower{store: cfg.Store, index: s.index, placed: s.placed, draw: s.draw, robots: cfg.Robots,
		adopt: s.users.Adopt, told: s.clustered, log: cfg.Log, engine: s, ctx: ctx, wg: &s.wg}
	s.play = play{now: cfg.Now, view: s.view, sight: s.pub.sight, tutor: s.tutor}
	s.timers = timers{life: ctx, wg: &s.wg, now: cfg.Now, overFor: cfg.OverFor, think: cfg.Think, place: s.place, pacer: &s.pacer,
		play: s.play, observe: cfg.Observe, log: cfg.Log, commit: s.commit, reload: s.follow.reload}
	if cfg.Shared {
		s.users.Shared(cfg.Now)
	}
	return s
}

// Close stops timers and waits for computer players in flight. Commands after Close are refused.
func (s *Service) Close() {
	s.cancel()
	for _, t := range s.index.all() { // no table's lock is waited for under the service's
		t.mu.Lock()
		s.timers.stop(t)
		if h := t.shown.held; h != nil {
			h.timer.Stop()
		}
		t.mu.Unlock()
	}
	if s.cfg.Coach != nil {
		s.cfg.Coach.Close()
	}
	s.wg.Wait()
}

// Resume loads every live stored table, brings its messages up to date, re-arms its timers and
// lets computer players continue; then it prunes what has outlived the retention period, now and
// every PruneEvery. A table that cannot be read is logged and skipped.
func (s *Service) Resume(ctx context.Context) error {
	// The revision before the tables are read: watching from the one after it, no change another
	// copy commits is missed (one may come twice; the table's Seq tells).
	w, watching := s.cfg.Store.(Watcher)
	var from uint64
	if watching {
		if rev, err := w.Revision(ctx); err == nil {
			from = rev + 1
		}
	}
	var loaded []*tbl
	err := s.cfg.Store.Tables(ctx, func(id string, data []byte) error {
		t, err := s.follow.load(data)
		if err != nil {
			s.cfg.Log.Error("skipping unreadable table", "table", id, "err", err)
			return err
		}
		if t != nil {
			loaded = append(loaded, t)
		}
		return nil
	})
	for _, t := range loaded {
		t.mu.Lock()
		s.pub.publish(ctx, t, nil)
		s.timers.start(t)
		t.mu.Unlock()
	}
	if s.cfg.Leases == nil {
		s.prune(ctx)
		s.postSeasons(ctx)
	} else {
		s.wg.Go(func() { s.place.Run(s.ctx) }) // which prunes and posts once it holds partition 0
	}
	s.wg.Add(1)
	go s.janitor()
	if watching {
		feed := changeFeed{w: w, log: s.cfg.Log, heard: s.follow.heard,
			resync: func() { s.clustered.Reloaded("compacted"); s.follow.reloadAll() }}
		s.wg.Go(func() { feed.run(s.ctx, from) })
	}
	return err
}

// janitor prunes closed tables every PruneEvery until the service closes.
func (s *Service) janitor() {
	defer s.wg.Done()
	tick := time.NewTicker(s.cfg.PruneEvery)
	defer tick.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-tick.C:
			if s.place.RunsJanitor() {
				s.prune(s.ctx)
				s.postSeasons(s.ctx)
			}
		}
	}
}

func (s *Service) prune(ctx context.Context) {
	n, err := s.cfg.Store.Prune(ctx, s.cfg.Now().Add(-s.cfg.Retention))
	switch {
	case err != nil:
		s.cfg.Log.Error("pruning closed tables", "err", err)
	case n > 0:
		s.cfg.Log.Info("pruned closed tables", "tables", n, "retention", s.cfg.Retention)
	}
}

// Tables is how many tables the service holds in memory (the live ones).
func (s *Service) Tables() int { return s.index.count() }

// TableAt gives the ID of the place's current table, or "".
func (s *Service) TableAt(p api.Place) string {
	id, _, _ := s.index.current(p.Key())
	return id
}

// PlaceOf gives the place of a live table; false when there is none by that ID.
func (s *Service) PlaceOf(tableID string) (api.Place, bool) {
	// As stored: the table's lock may be held through its commit, which no caller waits for.
	t, ok := s.index.get(tableID)
	if !ok {
		return api.Place{}, false
	}
	return t.view().place, true
}

// makeRobots makes the table's computer players (one per seat, each from its own seed of the
// table's secret) with robots (Config.Robots; nil: none).
func (t *tbl) makeRobots(robots func(level string, seed uint64) Decider) {
	for i := range t.robots {
		t.robots[i] = nil
		if robots != nil {
			t.robots[i] = robots(t.opts.Level, t.st.seed64(useRobot, uint64(i)))
		}
	}
}

// Handle applies one command. It returns the replies meant only for the actor; everything else
// (public table messages, private hands) goes to the platform's Outbox after the change is stored.
// Its error says the command could not be done at all, whatever the replies tell the actor:
// ErrNotStored (the store failed, or ctx ended, before the change was stored: the platform may
// deliver the command again) or ErrStopped (the service is closing). A command refused by the
// rules or the table (not one's turn, a stale button) is answered, with no error.
func (s *Service) Handle(ctx context.Context, cmd api.Command) ([]api.Message, error) {
	start := time.Now()
	replies, err := s.handle(ctx, cmd)
	outcome := "ok"
	for _, r := range replies {
		if r.Kind == api.KindError {
			outcome = "refused"
		}
	}
	s.cfg.Observe.Command(cmd.Verb, outcome, time.Since(start))
	return replies, err
}

// handle dispatches a command by its verb's scope (verbs): a table verb is applied to the
// table the command is for, under its lock; the others are answered without one.
func (s *Service) handle(ctx context.Context, cmd api.Command) ([]api.Message, error) {
	lang := s.langFor(cmd.Actor)
	if s.ctx.Err() != nil {
		return s.view.refusal(cmd, lang, &userError{key: "err.shutting_down", cause: ErrStopped})
	}
	spec, ok := s.spec(cmd.Verb)
	if !ok {
		return s.view.refusal(cmd, lang, unknownVerb(cmd.Verb))
	}
	if spec.personal != nil && spec.personal(cmd.Args) {
		spec.scope, spec.person = scopeNone, true
		if own, ok := s.outside[cmd.Verb]; ok {
			spec.run = own.run // answered outside the engine (OutsideVerb.Personal)
		}
	}
	switch spec.scope {
	case scopeInternal:
		return nil, nil // only the table's own timer, and the platform through the service's methods, say that
	case scopeTable:
		return s.atTable(ctx, spec, cmd)
	}
	if cmd.Anonymous && spec.person {
		return s.view.refusal(cmd, lang, refuse("err.anonymous"))
	}
	var out outcome
	c := &call{Command: cmd, seat: core.NoSeat, arg: strings.TrimSpace(strings.Join(cmd.Args, " ")), lang: lang, out: &out}
	if uerr := spec.run(s, ctx, nil, c); uerr != nil {
		return s.view.refusal(cmd, lang, uerr)
	}
	return out.replies, nil
}

// atTable applies a table verb to the table the command is for. What the verb leaves to think
// about (a hint's search) is done once the table's lock is released.
func (s *Service) atTable(ctx context.Context, spec verbSpec, cmd api.Command) ([]api.Message, error) {
	t, uerr := s.find(ctx, cmd)
	if uerr != nil {
		return s.view.refusal(cmd, s.langFor(cmd.Actor), uerr)
	}
	// The table's lock is held through its commit, which may hang on the store: the command
	// waits its turn only as long as its ctx lasts, and then changed nothing.
	if err := t.mu.LockCtx(ctx); err != nil {
		return s.view.refusal(cmd, s.langFor(cmd.Actor), storeRefusal(err))
	}
	replies, think, err := s.exec(ctx, t, spec, cmd)
	id := t.st.ID
	t.mu.Unlock()
	if think != nil {
		replies = append(replies, think(ctx)...)
	}
	for i := range replies {
		replies[i].Table = id // a typed command names no table; its answer does
	}
	return replies, err
}

// find gives the table a command is for: the one a button or private command names, else the
// current table of the place, else the only table the actor sits at. A command sent in a group
// or channel acts only on that place's table, whatever its button says.
func (s *Service) find(ctx context.Context, cmd api.Command) (*tbl, *userError) {
	if cmd.Table != "" {
		// Another copy may have opened it: then it is read from the store now.
		t, uerr := s.follow.lookup(ctx, cmd.Table)
		if t == nil || uerr != nil {
			return nil, cmp.Or(uerr, refuse("err.closed"))
		}
		// A table's place key is the index's: it may be read here without the table's lock.
		key, current := s.index.placed(t)
		switch {
		case key == cmd.Place.Key():
		case !cmd.Private:
			return nil, refuse("err.other_place")
		case !t.view().seats(cmd.Actor.ID):
			// A private chat answers for the person's own seat alone: a button pressed there
			// (or forged) must not seat them at a group's table, or act there for them.
			return nil, refuse("err.not_seated")
		}
		if !current {
			return nil, refuse("err.closed") // a newer table took the place
		}
		return t, nil
	}
	if _, t, ok := s.index.current(cmd.Place.Key()); ok && t != nil {
		return t, nil
	}
	// The place's table may be one another copy opened, that this one has not heard of yet.
	if t, uerr := s.follow.claimedTable(ctx, cmd.Place.Key()); t != nil || uerr != nil {
		return t, uerr
	}
	if cmd.Private {
		var found []*tbl
		for _, t := range s.index.all() {
			// The seats as stored, without the table's lock (held through a commit): a table whose
			// commit hangs holds up only the commands that act on it.
			if t.view().seats(cmd.Actor.ID) {
				found = append(found, t)
			}
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

// unknownVerb refuses a verb the service does not know, naming the one it looks most like.
func unknownVerb(v api.Verb) *userError {
	if near := nearestVerb(string(v)); near != "" {
		return refuse("err.unknown_verb.near", lit(string(v)), lit(string(near)))
	}
	return refuse("err.unknown_verb", lit(string(v)))
}

// nearestVerb is the verb a typo most likely meant: two edits away at most, a swap of two letters
// counting as one ("plya" is play); "" when none is that close.
func nearestVerb(typed string) api.Verb {
	typed = strings.ToLower(typed)
	best, bestD := api.Verb(""), 3
	for _, v := range api.Verbs {
		if d := typoDistance(typed, string(v)); d < bestD {
			best, bestD = v, d
		}
	}
	return best
}

// typoDistance is the optimal string alignment distance: insertions, deletions, substitutions
// and swaps of neighbours each cost one.
func typoDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

func seatOf(st *state, playerID string) core.Seat {
	for i, seat := range st.Seats {
		if seat.Player != nil && seat.Player.ID == playerID {
			return core.Seat(i)
		}
	}
	return core.NoSeat
}

// outcome is what a verb did: whether it changed the table, what to tell whom, what to keep.
type outcome struct {
	changed bool
	replies []api.Message // to the actor
	public  []api.Message // one-off messages (summaries, notices) sent with the table's update
	records []Record
	league  *learnedMatch // a match that ended: the league learns it with the change
	reviews []review      // reviews of a game that ended, asked for once the change is stored
	// think is work a table verb leaves for after the table's lock is released (a hint's
	// search): it runs on the command's context and gives the reply, which the actor gets only
	// if the table has not moved on meanwhile (else "hint.moved").
	think func(ctx context.Context) api.Message
	// owner says the change is the place's owner's work (a timer's, a computer player's): it is
	// fenced by the place's lease (Change.Fence).
	owner bool
}

// exec applies a command of a table verb (table lock held): it gives the replies, and the
// verb's thinking to do once the lock is released (see outcome.think). When another copy
// committed the table first, the command is applied again to the table as read back from the
// store, a few times at most: a button it made stale is then refused as any stale button is.
func (s *Service) exec(ctx context.Context, t *tbl, spec verbSpec, cmd api.Command) ([]api.Message, func(context.Context) []api.Message, error) {
	for attempt := 1; ; attempt++ {
		replies, think, err, conflict := s.execOnce(ctx, t, spec, cmd)
		if attempt == maxAttempts {
			return replies, think, err
		}
		if !conflict {
			// Refused by this copy's state, which may be behind another copy's commit not heard
			// of yet ("not your turn" for the one whose turn it is now): with other copies on
			// the store, a refusal is given only from the table as stored.
			if !s.cfg.Shared || !refused(replies) || !s.commits.behind(ctx, t) {
				return replies, think, err
			}
		}
		if uerr := s.follow.reload(ctx, t, "conflict"); uerr != nil {
			replies, err := s.view.refusal(cmd, s.view.PersonLang(cmd.Actor, t.st.Lang), uerr)
			return replies, nil, err
		}
	}
}

// refused reports whether the replies refuse the command.
func refused(replies []api.Message) bool {
	return slices.ContainsFunc(replies, func(m api.Message) bool { return m.Kind == api.KindError })
}

// execOnce is one attempt of exec; err is Handle's, conflict says its commit lost to another
// copy's.
func (s *Service) execOnce(ctx context.Context, t *tbl, spec verbSpec, cmd api.Command) (_ []api.Message, _ func(context.Context) []api.Message, err error, conflict bool) {
	lang := s.view.PersonLang(cmd.Actor, t.st.Lang)
	st := t.st
	if st.Status == api.StatusClosed { // closing, not yet out of memory
		return []api.Message{s.view.errorReply(cmd, lang, refuse("err.closed"))}, nil, nil, false
	}
	if cmd.EventID != "" && slices.Contains(st.Events, cmd.EventID) {
		return []api.Message{reply(cmd, lang, api.KindNotice, i18n.T(lang, "note.duplicate"))}, nil, nil, false
	}
	if spec.stale(st, cmd) {
		return []api.Message{s.view.errorReply(cmd, lang, refuse("err.stale"))}, nil, nil, false
	}
	// Someone who speaks for the chat has no seat and may take none; what an admin may do without
	// a seat stays open to them.
	if cmd.Anonymous && (spec.person || spec.seated && !(spec.admin && cmd.Admin && cmd.Place.Key() == st.Place.Key())) {
		return []api.Message{s.view.errorReply(cmd, lang, refuse("err.anonymous"))}, nil, nil, false
	}
	// Administering a chat counts in that chat only (find already keeps group commands to their
	// place; a private command carries no admin right).
	cmd.Admin = cmd.Admin && cmd.Place.Key() == st.Place.Key()
	// The place's title may have changed (a renamed group); it is stored with the next change.
	if title := cmd.Place.Title; title != "" && title != st.Place.Title && cmd.Place.Key() == st.Place.Key() {
		st.Place.Title = title
	}
	seat := seatOf(st, cmd.Actor.ID)
	// So may a player's name (a new nickname); the table shows the newest with the next change.
	if p := cmd.Actor; seat != core.NoSeat && p.Name != "" && p.Name != st.Seats[seat].Player.Name {
		st.Seats[seat].Player.Name = p.Name
	}
	// Only the seat to move, or a change for everyone, starts the turn's time again: anyone else
	// talking at the table must not keep an absent player from being replaced.
	restart := spec.turns
	if g := t.game(); g != nil && seat != core.NoSeat && g.ToMove() == seat {
		restart = true
	}
	var out outcome
	// Any command from an absent player brings them back to the table.
	if seat != core.NoSeat && st.Seats[seat].Away {
		st.Seats[seat].Away = false
		out.changed = true
		out.public = append(out.public, s.play.notice(t, "note.back", render.SeatRef(seat)))
	}
	c := &call{Command: cmd, seat: seat, arg: strings.TrimSpace(strings.Join(cmd.Args, " ")), lang: lang, out: &out}
	uerr := spec.check(st, c)
	if uerr == nil {
		uerr = spec.run(s, ctx, t, c)
	}
	if uerr != nil {
		if out.changed { // only the return from away: keep it
			if s.commit(ctx, t, cmd, &outcome{changed: true, public: out.public}, spec.acted, restart) == errConflicted {
				return []api.Message{s.view.errorReply(cmd, lang, errConflicted)}, nil, errConflicted.cause, true
			}
		}
		return []api.Message{s.view.errorReply(cmd, lang, uerr)}, nil, uerr.cause, false
	}
	if out.changed {
		if uerr := s.commit(ctx, t, cmd, &out, spec.acted, restart); uerr != nil {
			return []api.Message{s.view.errorReply(cmd, lang, uerr)}, nil, uerr.cause, uerr == errConflicted
		}
	}
	if out.think == nil {
		return out.replies, nil, nil, false
	}
	// What the verb thought holds for the table as it is now: if it moves on meanwhile, the
	// actor is told so instead.
	seq, think := t.st.Seq, out.think
	return out.replies, func(ctx context.Context) []api.Message {
		m := think(ctx)
		t.mu.Lock()
		defer t.mu.Unlock()
		if t.st.Seq != seq {
			return []api.Message{s.view.errorReply(cmd, lang, refuse("hint.moved"))}
		}
		return []api.Message{m}
	}, nil, false
}

// commit stores the table's new state with its log entry in one transaction (committer.write),
// then (and only then) tells everyone. If the store fails, the table rolls back to its last
// stored state. acted is the kind of command whose buttons the actor has now used up; restart
// starts the turn's timer again.
func (s *Service) commit(ctx context.Context, t *tbl, cmd api.Command, out *outcome, acted actedKind, restart bool) *userError {
	if uerr := s.commits.write(ctx, t, cmd, out, acted, restart); uerr != nil {
		return uerr
	}
	st := t.st
	s.pub.publish(ctx, t, out.public)
	s.tutor.startReviews(ctx, t, out.reviews)
	if st.Status == api.StatusClosed {
		s.forget(t)
		return nil
	}
	s.timers.start(t)
	return nil
}

// forget lets a closed table leave memory once its last messages are out (table lock held). The
// index's lock comes before a table's, so it changes in a goroutine of its own; meanwhile exec
// refuses the table's commands as closed.
func (s *Service) forget(t *tbl) {
	s.timers.stop(t)
	s.wg.Go(func() { s.index.remove(t) })
}

// open handles new: a table at the place, in the lobby, with the actor seated. A finished match
// still waiting for a rematch is closed to make room; a lobby or a match in progress is not.
func (s *Service) open(ctx context.Context, _ *tbl, c *call) *userError {
	cmd, lang := c.Command, c.lang
	if cmd.Private {
		return refuse("err.new_in_private")
	}
	// The place's own settings come first; what new says overrides them.
	house := s.places.Get(ctx, cmd.Place.Key())
	houseArgs := house.Args()
	if _, err := options.Parse(houseArgs); err != nil {
		// Kept by an older version whose options differed: new tables start from the defaults.
		s.cfg.Log.Warn("a place's settings no longer read; ignoring them", "place", cmd.Place.Key(), "err", err)
		houseArgs = nil
	}
	opts, err := options.Parse(append(houseArgs, cmd.Args...))
	if oe := (*options.Error)(nil); errors.As(err, &oe) {
		return optionRefusal(oe)
	}
	_, uerr := s.openTable(ctx, c, i18n.T(lang, "note.opened"), opts, func(st *state) { st.Lang = cmp.Or(house.Lang, lang) })
	return uerr
}

// openTable opens a table at the command's place (claimPlace), with the actor in its first seat,
// made as set says, stores it and tells the actor welcome. It gives the new table's ID ("" when
// the platform sent the same command again, which the actor is told).
func (s *Service) openTable(ctx context.Context, c *call, welcome string, opts options.Options, set func(st *state)) (string, *userError) {
	cmd := c.Command
	t, uerr, dup := s.claimPlace(ctx, cmd, func(id string, secret []byte) *tbl {
		st := &state{V: stateVersion, ID: id, Place: cmd.Place, Lang: c.lang, Options: stateOfOptions(opts),
			Status: api.StatusLobby, Secret: secret, MatchNo: 1, Created: s.cfg.Now().UnixMilli()}
		st.Seats[0] = SeatState{Player: &api.Player{ID: cmd.Actor.ID, Name: cmd.Actor.Name, Locale: cmd.Actor.Locale}}
		set(st)
		return &tbl{st: st, opts: opts, sent: map[string]uint64{}}
	})
	switch {
	case dup:
		return "", c.answer(reply(cmd, c.lang, api.KindNotice, i18n.T(c.lang, "note.duplicate")))
	case uerr != nil:
		return "", uerr
	}
	defer t.mu.Unlock()
	if t.st.Learn {
		t.startMatch(s.cfg.Now()) // a guided game is dealt at once
	}
	out := outcome{changed: true, replies: []api.Message{reply(cmd, c.lang, api.KindNotice, welcome)}}
	if uerr := s.commit(ctx, t, cmd, &out, actedTable, true); uerr != nil {
		s.unclaim(ctx, t)
		return "", uerr
	}
	c.answer(out.replies...)
	return t.st.ID, nil
}

// claimPlace makes room at the command's place and puts a new table there, made by newTable with
// the ID and secret it draws: a finished match still waiting for a rematch is closed first; a
// lobby or a match in progress stays, and the command is refused. The old table is stored closed
// under its own lock alone, never the index's, so that finding any other table does not wait
// for that commit. The place is claimed in the store by compare-and-swap (bucketClaims) and then
// taken under the index's lock (tableIndex.claim), so two /new at once, on one copy or two, open
// one table: if another took the place meanwhile, claimPlace starts again with that one. It gives
// the new table locked, to be stored by the caller (unclaim takes it back if that fails); or the
// refusal, or dup when the platform delivered the same command again.
func (s *Service) claimPlace(ctx context.Context, cmd api.Command, newTable func(id string, secret []byte) *tbl) (t *tbl, uerr *userError, dup bool) {
	key := cmd.Place.Key()
	for attempt := 0; ; attempt++ {
		if attempt == 4*maxAttempts {
			return nil, errConflicted, false // the place's claim kept moving under this copy
		}
		raw, claim, err := s.placed.read(ctx, key)
		if err != nil {
			s.cfg.Log.Error("reading a place's table", "place", key, "err", err)
			return nil, storeRefusal(err), false
		}
		prev, old, had := s.index.current(key)
		if claim.Table != "" && claim.Table != prev {
			// Another copy opened a table here that this one has not heard of yet, or is
			// storing it now.
			ct, uerr := s.follow.lookup(ctx, claim.Table)
			switch {
			case uerr != nil:
				return nil, uerr, false
			case ct != nil:
				prev, had, old = claim.Table, true, ct
			case s.cfg.Now().Sub(time.UnixMilli(claim.At)) < claimPending:
				// Not live when asked: closed (the place is free), or not stored yet.
				data, stored, err := s.cfg.Store.Table(ctx, claim.Table)
				if err != nil {
					return nil, storeRefusal(err), false
				}
				if !stored {
					return nil, refuse("err.table_exists"), false // being opened by another copy
				}
				var st struct{ Status api.Status }
				if json.Unmarshal(data, &st) == nil && st.Status != api.StatusClosed {
					continue // stored just now: it is loaded next time round
				}
			}
		}
		if had {
			old.mu.Lock()
			switch status := old.st.Status; {
			case cmd.EventID != "" && slices.Contains(old.st.Events, cmd.EventID):
				dup = true
			case status == api.StatusLobby || status == api.StatusPlaying:
				uerr = refuse("err.table_exists")
			case status == api.StatusOver:
				var out outcome
				s.play.close(old, &out)
				uerr = s.commit(ctx, old, api.Command{Place: old.st.Place, Table: prev, Actor: cmd.Actor, Verb: cmd.Verb}, &out, actedNone, false)
				if uerr == errConflicted {
					// Another copy changed it first (a rematch, or closed it itself): decide again.
					uerr = s.follow.reload(ctx, old, "conflict")
					if uerr == nil {
						old.mu.Unlock()
						continue
					}
				}
			}
			old.mu.Unlock()
			if dup || uerr != nil {
				return nil, uerr, dup
			}
		}
		id := unusedID(ctx, s.draw, s.cfg.Store) // asks the store: under no lock
		switch err := s.placed.swap(ctx, key, raw, id); {
		case errors.Is(err, ErrConflict):
			continue // another copy claimed the place meanwhile
		case err != nil:
			s.cfg.Log.Error("claiming a place for a new table", "place", key, "err", err)
			return nil, storeRefusal(err), false
		}
		t, ok := s.index.claim(key, prev, id, func() *tbl {
			t := newTable(id, s.draw.secret())
			t.placeKey, t.tableID, t.created, t.claimed = key, id, t.st.Created, raw
			t.makeRobots(s.cfg.Robots)
			t.noteStored() // not stored yet: lookups see it as opened (unclaim takes it away again)
			t.mu.Lock()    // lock order: index, then table
			return t
		})
		if !ok {
			s.placed.giveBack(ctx, key, id, raw)
			continue // another table took the place meanwhile, or the ID
		}
		return t, nil, false
	}
}

// unclaim takes a table claimPlace made out of memory again, and the place's claim back: it
// could not be stored.
func (s *Service) unclaim(ctx context.Context, t *tbl) {
	s.placed.giveBack(ctx, t.st.Place.Key(), t.id(), t.claimed)
	s.index.remove(t)
}

// unusedID draws a short table ID that the store keeps no table and no kept match under (a
// seeded service draws the IDs of its earlier runs again, and six letters may meet by chance in a
// bot's years). The store is asked under no lock; the caller checks the tables in memory
// (tableIndex.claim).
func unusedID(ctx context.Context, draw *source, store Store) string {
	for {
		id := strconv.FormatUint(draw.uint64()%(36*36*36*36*36*36), 36)
		if len(id) >= 4 && !storeHas(ctx, store, id) {
			return id
		}
	}
}

// storeHas tells whether the store keeps a table or a first match under id; a store it cannot
// read says no, and the commit then decides.
func storeHas(ctx context.Context, store Store, id string) bool {
	_, table, _ := store.Table(ctx, id)
	_, record, _ := store.Record(ctx, StoredKey(id, 1))
	return table || record
}

func reply(cmd api.Command, lang string, kind api.Kind, text string) api.Message {
	return api.Message{Target: api.Target{Kind: api.ToActor, Place: cmd.Place, Player: cmd.Actor}, Kind: kind, Text: text,
		Lang: lang, Table: cmd.Table}
}

// refusal is the answer to a command that is refused: the reason to its actor, and Handle's
// error when the command could not be done at all (see userError.cause).
func (r renderer) refusal(cmd api.Command, lang string, e *userError) ([]api.Message, error) {
	return []api.Message{r.errorReply(cmd, lang, e)}, e.cause
}

// errorReply is a refusal's message to the actor: e's text in lang, and when e has a public
// text, that text for the place instead of the secret reason.
func (r renderer) errorReply(cmd api.Command, lang string, e *userError) api.Message {
	m := reply(cmd, lang, api.KindError, e.text(lang))
	m.Reason = e.key
	if e.public != "" {
		m.Secret, m.Public = true, r.pressHand(cmd.Place, lang, e.public)
	}
	return m
}

// game is the game in progress, or nil.
func (t *tbl) game() *core.Game {
	if t.match == nil || t.st.Status != api.StatusPlaying {
		return nil
	}
	if g := t.match.Current(); g != nil && g.Phase() != core.PhaseOver {
		return g
	}
	return nil
}

// Status gives a table's status, and false for a table not in memory (unknown, or closed and
// gone).
func (s *Service) Status(id string) (api.Status, bool) {
	t, ok := s.index.get(id)
	if !ok {
		return "", false
	}
	return t.view().status, true // as stored, without waiting for a commit in flight
}

// Settle waits until no computer decision is due at any table: scripts and tests that drive the
// service line by line use it so each line meets a table that has finished moving.
func (s *Service) Settle(ctx context.Context) error {
	for {
		busy := false
		for _, t := range s.index.all() {
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
	t, ok := s.index.get(tableID)
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

// HeldCards gives the number of the game in progress at a table and the cards still held in it
// (0 and none when no game is on). No message to a place may show one of them: tests and audits
// check what reached a chat against it. Never show its result to anyone.
func (s *Service) HeldCards(tableID string) (game int, held core.CardSet) {
	t, ok := s.index.get(tableID)
	if !ok {
		return 0, 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	g := t.game()
	if g == nil {
		return 0, 0
	}
	for seat := core.Seat(0); seat < 4; seat++ {
		held |= g.Hand(seat)
	}
	return t.match.NumGames(), held
}

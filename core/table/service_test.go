package table

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// randomDecider is a test computer player: a seeded random legal move from the view alone.
type randomDecider struct {
	mu  sync.Mutex
	rng *rand.Rand
}

func (d *randomDecider) Decide(ctx context.Context, v core.View) core.Move {
	d.mu.Lock()
	defer d.mu.Unlock()
	if v.Phase == core.PhaseTrump {
		return core.NameTrump(v.Seat, v.Hand.Nth(d.rng.IntN(v.Hand.Len())).Suit())
	}
	return core.Play(v.Seat, v.Legal.Nth(d.rng.IntN(v.Legal.Len())))
}

func randomRobots(level string, seed uint64) Decider {
	return &randomDecider{rng: rand.New(rand.NewPCG(seed, 1))}
}

// outbox records what the service delivers.
type outbox struct {
	mu   sync.Mutex
	msgs []api.Message
}

func (o *outbox) Deliver(ctx context.Context, msgs []api.Message) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.msgs = append(o.msgs, msgs...)
}

// checkSecret sees every batch the moment it is published, under the table's lock, and fails the
// test if a public message shows a card still held by anyone.
func checkSecret(t *testing.T) func(tb *tbl, msgs []api.Message) {
	return func(tb *tbl, msgs []api.Message) {
		for _, m := range msgs {
			if m.Target.Kind != api.ToPlace {
				continue
			}
			// A keyed message shows one game ("live/<table>/m<match>/<game>"): check against that
			// game's hands, which are empty once it is over.
			g := tb.lastGame()
			if parts := strings.Split(m.Key, "/"); len(parts) >= 4 && g != nil {
				n, _ := strconv.Atoi(parts[3])
				if games := tb.match.Games(); n >= 1 && n <= len(games) {
					g = games[n-1]
				}
			}
			if g == nil {
				continue
			}
			for seat := core.Seat(0); seat < 4; seat++ {
				for _, c := range g.Hand(seat).Cards() {
					if strings.Contains(m.Text, c.Chat()+" ") || strings.HasSuffix(m.Text, c.Chat()) {
						t.Errorf("public %s message shows %v held by seat %d:\n%s", m.Kind, c, seat, m.Text)
					}
					for _, row := range m.Buttons {
						for _, b := range row {
							if b.Label == c.Chat() {
								t.Errorf("public message has a button for held card %v", c)
							}
						}
					}
				}
			}
		}
	}
}

func (o *outbox) all() []api.Message {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]api.Message(nil), o.msgs...)
}

// latest gives the newest delivered message with the key prefix for a player (or public when
// playerID is "").
func (o *outbox) latest(kind api.Kind, playerID string) (api.Message, bool) {
	msgs := o.all()
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Kind == kind && (playerID == "" || m.Target.Player.ID == playerID) {
			return m, true
		}
	}
	return api.Message{}, false
}

type harness struct {
	t     *testing.T
	store *mem.Store
	svc   *Service
	out   *outbox
	place api.Place
	event int
	// err is Handle's error for the last command do or press sent.
	err error
}

// newHarness makes a service over store; tweak may change its config (a failing store, a KV).
func newHarness(t *testing.T, store *mem.Store, tweak ...func(*Config)) *harness {
	h := &harness{t: t, store: store, place: api.Place{Platform: "test", Chat: "g1", Title: "Café Konter"}}
	h.out = &outbox{}
	cfg := Config{Store: store, Outboxes: map[string]Outbox{"test": h.out}, Robots: randomRobots, Seed: 7}
	for _, f := range tweak {
		f(&cfg)
	}
	if WireOutside != nil {
		WireOutside(&cfg)
	}
	h.svc = New(cfg)
	h.svc.pub.onPublish = checkSecret(t)
	return h
}

// withKV gives the service the mem.Store as its KV too.
func withKV(c *Config) { c.KV = c.Store.(KV) }

// resumed is a harness whose service resumed the store's tables (as after a restart); it closes
// when the test ends.
func resumed(t *testing.T, store *mem.Store, tweak ...func(*Config)) *harness {
	t.Helper()
	h := newHarness(t, store, tweak...)
	t.Cleanup(h.svc.Close)
	if err := h.svc.Resume(context.Background()); err != nil {
		t.Fatal(err)
	}
	synctest.Wait()
	return h
}

func player(n int) api.Player {
	return api.Player{ID: "p" + string(rune('0'+n)), Name: "Player" + string(rune('0'+n)), Locale: "en"}
}

func (h *harness) do(p api.Player, v api.Verb, args ...string) []api.Message {
	h.t.Helper()
	h.event++
	var msgs []api.Message
	msgs, h.err = h.svc.Handle(context.Background(), api.Command{Place: h.place, Actor: p, Verb: v, Args: args,
		EventID: "e" + string(rune(h.event))})
	return msgs
}

func (h *harness) press(p api.Player, b api.Button) []api.Message {
	h.t.Helper()
	h.event++
	var msgs []api.Message
	msgs, h.err = h.svc.Handle(context.Background(), b.Action.Command(h.place, p, "", false))
	return msgs
}

// msgsOf gives the replies of a Handle, whatever its error (the replies say it to the actor).
func msgsOf(msgs []api.Message, _ error) []api.Message { return msgs }

// errText is the text of the first refusal among msgs; it takes a Handle's results as they are.
func errText(msgs []api.Message, _ ...error) string {
	for _, m := range msgs {
		if m.Kind == api.KindError {
			return m.Text
		}
	}
	return ""
}

// legalButton is the first button of m that makes a legal move, or nil.
func legalButton(m api.Message) *api.Button {
	for _, row := range m.Buttons {
		for j := range row {
			if row[j].Legal {
				return &row[j]
			}
		}
	}
	return nil
}

// playAsHuman makes p act whenever its hand message shows it is to move, by pressing a legal
// button, until the match is over. It returns the number of moves made.
func (h *harness) playAsHuman(p api.Player, stopAfter int) int {
	h.t.Helper()
	moves := 0
	for i := 0; i < 2000 && moves < stopAfter; i++ {
		synctest.Wait()
		if h.over() {
			return moves
		}
		m, ok := h.out.latest(api.KindHand, p.ID)
		if !ok || !strings.Contains(m.Text, "▶") && !strings.Contains(m.Text, "forehand") {
			h.t.Fatalf("no move possible for %s:\n%s", p.ID, m.Text)
		}
		pick := legalButton(m)
		if pick == nil {
			h.t.Fatalf("no legal button in:\n%s", m.Text)
		}
		if e := errText(h.press(p, *pick)); e != "" {
			h.t.Fatalf("pressing %s: %s", pick.Label, e)
		}
		moves++
	}
	return moves
}

// soloTable opens a table without timers for one human and three computer players, and deals.
func soloTable(t *testing.T) (*harness, api.Player) {
	t.Helper()
	h := newHarness(t, mem.New())
	me := player(1)
	if e := errText(h.do(me, api.VerbNew, "timer=none")); e != "" {
		t.Fatalf("new: %s", e)
	}
	if e := errText(h.do(me, api.VerbDeal)); e != "" {
		t.Fatalf("deal: %s", e)
	}
	return h, me
}

func (h *harness) over() bool {
	id := h.svc.TableAt(h.place)
	t, _ := h.svc.index.get(id)
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.st.Status == api.StatusOver
}

func TestWholeMatchOneHumanThreeComputers(t *testing.T) {
	ctx := t.Context()
	synctest.Test(t, func(t *testing.T) {
		store := mem.New()
		h := newHarness(t, store)
		defer h.svc.Close()
		me := player(1)
		if e := errText(h.do(me, api.VerbNew, "timer=none")); e != "" {
			t.Fatal(e)
		}
		if e := errText(h.do(me, api.VerbDeal)); e != "" {
			t.Fatal(e)
		}
		moves := h.playAsHuman(me, 10000)
		if !h.over() {
			t.Fatalf("match not over after %d moves", moves)
		}
		// The kept match, exported as a docs/records.md record, replays through the engine to the
		// same winner.
		var rec []byte
		store.Records(ctx, func(key string, data []byte) error {
			recs, err := Export(data)
			if err != nil {
				t.Fatalf("kept match %s: %v", key, err)
			}
			rec, _ = json.Marshal(recs[key+"/match"])
			return nil
		})
		out, err := core.Replay(rec)
		if err != nil {
			t.Fatalf("match record does not replay: %v", err)
		}
		ms := out.(core.MatchSummary)
		if ms.Winner == nil {
			t.Fatalf("replayed match has no winner: %+v", ms.Board)
		}
		sum, _ := h.out.latest(api.KindSummary, "")
		if !strings.Contains(sum.Text, "wins the match") || !strings.Contains(sum.Text, "Team "+*ms.Winner) {
			t.Errorf("last summary %q does not name winner %s", sum.Text, *ms.Winner)
		}
		t.Logf("%d human moves, %d games, board %v", moves, len(ms.Games), ms.Board)
	})
}

func TestRefusals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mem.New())
		defer h.svc.Close()
		a, b, c, d, stranger := player(1), player(2), player(3), player(4), player(9)
		h.do(a, api.VerbNew, "timer=none")
		for _, p := range []api.Player{b, c, d} {
			if e := errText(h.do(p, api.VerbJoin)); e != "" {
				t.Fatal(e)
			}
		}
		for _, tc := range []struct {
			name string
			p    api.Player
			verb api.Verb
			args []string
			want string
		}{
			{"join twice", a, api.VerbJoin, nil, "already sit"},
			{"table full", stranger, api.VerbJoin, nil, "full"},
			{"bad option at new", a, api.VerbNew, []string{"stripes=99"}, "stripes must be 1 to 20"},
			{"table exists", a, api.VerbNew, nil, "already open"},
			{"play before deal", a, api.VerbPlay, []string{"QS"}, "No game"},
			{"stranger deals", stranger, api.VerbDeal, nil, "don't sit"},
			{"bad seat", a, api.VerbSeat, []string{"7"}, "not a seat"},
			{"unknown lang", a, api.VerbLang, []string{"xx"}, "don't speak"},
		} {
			// synctest bubbles allow no subtests: name the case in the message instead.
			if got := errText(h.do(tc.p, tc.verb, tc.args...)); !strings.Contains(got, tc.want) {
				t.Errorf("%s: got %q, want it to contain %q", tc.name, got, tc.want)
			}
		}
		h.do(a, api.VerbDeal)
		synctest.Wait()
		// Find forehand and someone else.
		var fore, other api.Player
		for _, p := range []api.Player{a, b, c, d} {
			m, _ := h.out.latest(api.KindHand, p.ID)
			if strings.Contains(m.Text, "forehand") {
				fore = p
			} else {
				other = p
			}
		}
		if fore.ID == "" {
			t.Fatal("nobody is forehand")
		}
		if e := errText(h.do(other, api.VerbTrump, "hearts")); !strings.Contains(e, "not your turn") {
			t.Errorf("trump by non-forehand: %q", e)
		}
		if e := errText(h.do(fore, api.VerbPlay, "QS")); !strings.Contains(e, "Trump hasn't been named") {
			t.Errorf("play before trump: %q", e)
		}
		if e := errText(h.do(fore, api.VerbTrump, "purple")); !strings.Contains(e, "not a suit") {
			t.Errorf("bad suit: %q", e)
		}
		hand, _ := h.out.latest(api.KindHand, fore.ID)
		trumpBtn := hand.Buttons[len(hand.Buttons)-1][1] // hearts, in the last row below the cards
		if e := errText(h.press(stranger, trumpBtn)); !strings.Contains(e, "don't sit") {
			t.Errorf("stranger pressing forehand's button: %q", e)
		}
		if e := errText(h.press(fore, trumpBtn)); e != "" {
			t.Fatalf("naming trump: %s", e)
		}
		if e := errText(h.press(fore, trumpBtn)); !strings.Contains(e, "old") {
			t.Errorf("double press: %q", e)
		}
		// Duplicate delivery of the same platform event is applied once and answered politely.
		cmd := api.Command{Place: h.place, Actor: fore, Verb: api.VerbLang, Args: []string{"table", "de"}, EventID: "dup"}
		if r, _ := h.svc.Handle(context.Background(), cmd); r[0].Kind != api.KindNotice || errText(r) != "" {
			t.Fatalf("lang table de: %+v", r)
		}
		if r, _ := h.svc.Handle(context.Background(), cmd); r[0].Kind != api.KindNotice || r[0].Text != i18n.T("en", "note.duplicate") {
			t.Errorf("the same event again: %+v", r)
		}
		applied := 0
		for _, e := range h.store.Log(h.svc.TableAt(h.place)) {
			if e.EventID == "dup" {
				applied++
			}
		}
		if applied != 1 {
			t.Errorf("event applied %d times", applied)
		}
	})
}

func TestIllegalCardNamesTheLegalOnes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, me := soloTable(t)
		defer h.svc.Close()
		for i := 0; i < 200; i++ {
			synctest.Wait()
			m, _ := h.out.latest(api.KindHand, me.ID)
			if strings.Contains(m.Text, "forehand") {
				b, _ := firstButton(m, api.VerbTrump, true)
				h.press(me, b)
				continue
			}
			if !strings.Contains(m.Text, "Your turn") {
				t.Fatalf("not my turn:\n%s", m.Text)
			}
			if m.Title != "Table in Café Konter" {
				t.Errorf("the private hand does not name its table: title %q", m.Title)
			}
			var illegal, legal *api.Button
			for j := range m.Buttons[0] {
				b := &m.Buttons[0][j]
				if !b.Legal && illegal == nil {
					illegal = b
				} else if b.Legal && legal == nil {
					legal = b
				}
			}
			if illegal != nil {
				e := errText(h.press(me, *illegal))
				if !strings.Contains(e, "You may play") || !strings.Contains(e, legal.Label) {
					t.Fatalf("illegal %s: %q", illegal.Label, e)
				}
				return
			}
			h.press(me, *legal)
		}
		t.Fatal("never held an illegal card")
	})
}

func TestTimeoutMarksAwayAndComputerPlays(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mem.New())
		defer h.svc.Close()
		me := player(1)
		h.do(me, api.VerbNew, "timer=fast")
		h.do(me, api.VerbDeal)
		synctest.Wait()
		before := len(h.out.all())
		time.Sleep(21 * time.Second)
		synctest.Wait()
		var reminded bool
		for _, m := range h.out.all()[before:] {
			reminded = reminded || (m.Target.Kind == api.ToPlayer && strings.Contains(m.Text, "your turn"))
		}
		if !reminded {
			t.Fatal("no reminder after 21 s")
		}
		time.Sleep(30 * time.Second)
		synctest.Wait()
		n, _ := h.out.latest(api.KindNotice, "")
		found := false
		for _, m := range h.out.all() {
			found = found || strings.Contains(m.Text, "did not play in time")
		}
		if !found {
			t.Fatalf("no away notice; last notice %q", n.Text)
		}
		// The computer plays the whole match for the absent player.
		time.Sleep(time.Hour)
		synctest.Wait()
		if !h.over() {
			t.Fatal("match did not finish with the absent player replaced")
		}
	})
}

func TestLobbyExpires(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mem.New())
		defer h.svc.Close()
		h.do(player(1), api.VerbNew, "timer=fast")
		time.Sleep(31 * time.Minute)
		synctest.Wait()
		lobby, _ := h.out.latest(api.KindLobby, "")
		if !strings.Contains(lobby.Text, "closed") || len(lobby.Buttons) != 0 {
			t.Errorf("lobby after expiry: %q buttons %d", lobby.Text, len(lobby.Buttons))
		}
		if e := errText(h.do(player(2), api.VerbJoin)); !strings.Contains(e, "no table here") {
			t.Errorf("join after expiry: %q", e)
		}
		if e := errText(h.do(player(2), api.VerbNew)); e != "" {
			t.Errorf("new after expiry: %q", e)
		}
	})
}

func TestResumeContinuesMatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := mem.New()
		h := newHarness(t, store)
		me := player(1)
		h.do(me, api.VerbNew, "timer=none")
		h.do(me, api.VerbDeal)
		h.playAsHuman(me, 7)
		synctest.Wait()
		h.svc.Close()

		h2 := resumed(t, store)
		if _, ok := h2.out.latest(api.KindLive, ""); !ok {
			t.Fatal("resume did not bring the live message up to date")
		}
		h2.playAsHuman(me, 10000)
		if !h2.over() {
			t.Fatal("resumed match did not finish")
		}
	})
}

func TestCorruptTableIsSkipped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := mem.New()
		h := newHarness(t, store)
		h.do(player(1), api.VerbNew)
		h.svc.Close()
		store.PutTable("zzzz", []byte(`{"v":1,"id":"zzzz","games":["garbage"],"status":"playing"}`))
		h2 := newHarness(t, store)
		defer h2.svc.Close()
		err := h2.svc.Resume(context.Background())
		if err == nil {
			t.Fatal("corrupt table not reported")
		}
		if h2.svc.Tables() != 1 {
			t.Fatalf("tables served: %d, want the 1 good one", h2.svc.Tables())
		}
		if e := errText(h2.do(player(2), api.VerbJoin)); e != "" {
			t.Errorf("good table not served: %s", e)
		}
	})
}

func TestFailedCommitChangesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := mem.New()
		h := newHarness(t, store)
		defer h.svc.Close()
		h.do(player(1), api.VerbNew)
		store.Fail = errors.New("disk full")
		if e := errText(h.do(player(2), api.VerbJoin)); !strings.Contains(e, "nothing was changed") {
			t.Fatalf("failed commit: %q", e)
		}
		if e := errText(h.do(player(2), api.VerbJoin)); e != "" {
			t.Fatalf("join after the store recovered: %q", e)
		}
		lobby, _ := h.out.latest(api.KindLobby, "")
		if strings.Count(lobby.Text, "Player2") != 1 {
			t.Errorf("lobby: %s", lobby.Text)
		}
	})
}

func TestCompactGameRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	m, _ := core.NewMatch(core.DefaultRules(), 2)
	g, _ := m.Deal(core.DealHands(rng, 2))
	g.NameTrump(3, core.Clubs)
	for g.Phase() != core.PhaseOver {
		s := g.ToMove()
		if calls := g.PossibleCalls(s); len(calls) > 0 {
			g.Announce(s, calls[0])
		}
		g.Play(s, g.LegalCards(s).First())
	}
	enc := encodeGame(g)
	m2, _ := core.NewMatch(core.DefaultRules(), 2)
	if err := decodeGame(m2, enc); err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(m.Summary())
	b, _ := json.Marshal(m2.Summary())
	if string(a) != string(b) {
		t.Errorf("round trip differs:\n%s\n%s", a, b)
	}
	for _, bad := range []string{"", "9abc", enc[:30] + "zz", enc + "0"} {
		m3, _ := core.NewMatch(core.DefaultRules(), 2)
		if decodeGame(m3, bad) == nil {
			t.Errorf("decodeGame(%q) accepted", bad)
		}
	}
}

func TestPictureOfTheBoard(t *testing.T) {
	ctx := t.Context()
	synctest.Test(t, func(t *testing.T) {
		h, me := soloTable(t)
		defer h.svc.Close()
		h.playAsHuman(me, 30)
		r := h.do(me, api.VerbBoard)
		if len(r) != 1 || r[0].Picture != api.PictureBoard {
			t.Fatalf("board reply: %+v", r)
		}
		png, alt, err := h.svc.Picture(ctx, r[0], true)
		if err != nil || len(png) < 8 || string(png[1:4]) != "PNG" {
			t.Fatalf("picture: %v, %d bytes", err, len(png))
		}
		if alt == "" {
			t.Error("no alt text")
		}
		last := h.do(me, api.VerbLast)
		if len(last) != 1 || last[0].Picture != api.PictureLastTrick {
			t.Fatalf("last reply: %+v", last)
		}
		if png, alt, err := h.svc.Picture(ctx, last[0], false); err != nil || string(png[1:4]) != "PNG" || alt == "" {
			t.Fatalf("table picture: %v, %d bytes, alt %q", err, len(png), alt)
		}
		if _, _, err := h.svc.Picture(ctx, api.Message{Table: "nope", Picture: api.PictureBoard}, false); !errors.Is(err, ErrNoPicture) {
			t.Errorf("unknown table: %v", err)
		}
	})
}

// A stop vote between two moves does not make the voter's hand buttons stale, and the lobby's
// last version after the deal has no buttons left.
func TestButtonsSurviveOtherCommands(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mem.New())
		defer h.svc.Close()
		// Four people, so that one of them is forehand whatever the deal.
		people := []api.Player{player(1), player(2), player(3), player(4)}
		h.do(people[0], api.VerbNew, "timer=none")
		for _, p := range people[1:] {
			h.do(p, api.VerbJoin)
		}
		h.do(people[0], api.VerbDeal)
		synctest.Wait()
		lobby, _ := h.out.latest(api.KindLobby, "")
		if len(lobby.Buttons) != 0 || !strings.Contains(lobby.Text, "started") {
			t.Errorf("lobby after the deal: %q with %d button rows", lobby.Text, len(lobby.Buttons))
		}
		for _, p := range people {
			hand, _ := h.out.latest(api.KindHand, p.ID)
			if !strings.Contains(hand.Text, "forehand") {
				continue
			}
			if e := errText(h.do(p, api.VerbStop)); e != "" {
				t.Fatalf("stop vote: %s", e)
			}
			trump, _ := firstButton(hand, api.VerbTrump, true)
			if e := errText(h.press(p, trump)); e != "" {
				t.Fatalf("trump button after a stop vote: %s", e)
			}
			return
		}
		t.Fatal("nobody is forehand")
	})
}

// A restart sends nothing for a table that was closed before it: its messages are final.
func TestResumeLeavesClosedTablesAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := mem.New()
		h := newHarness(t, store)
		h.do(player(1), api.VerbNew, "timer=fast")
		time.Sleep(31 * time.Minute) // the lobby expires and closes
		synctest.Wait()
		if lobby, _ := h.out.latest(api.KindLobby, ""); !strings.Contains(lobby.Text, "closed") {
			t.Fatalf("lobby not closed: %q", lobby.Text)
		}
		h.svc.Close()

		h2 := resumed(t, store)
		if msgs := h2.out.all(); len(msgs) != 0 {
			t.Errorf("resume sent %d messages for a closed table: %+v", len(msgs), msgs[0])
		}
		if e := errText(h2.do(player(2), api.VerbNew)); e != "" {
			t.Errorf("a new table at the closed one's place: %s", e)
		}
	})
}

// Opening a table when the store fails changes nothing, and the place is free for the next try.
func TestFailedNewLeavesThePlaceFree(t *testing.T) {
	store := mem.New()
	h := newHarness(t, store)
	defer h.svc.Close()
	store.Fail = errors.New("disk full")
	if e := errText(h.do(player(1), api.VerbNew)); !strings.Contains(e, "nothing was changed") {
		t.Fatalf("new with a failing store: %q", e)
	}
	if h.svc.Tables() != 0 {
		t.Fatalf("%d tables after a failed new", h.svc.Tables())
	}
	if e := errText(h.do(player(1), api.VerbNew)); e != "" {
		t.Fatalf("new after the store recovered: %q", e)
	}
}

// Two /new at the same time in one place open one table.
func TestConcurrentNewOpensOneTable(t *testing.T) {
	h := newHarness(t, mem.New())
	defer h.svc.Close()
	var wg sync.WaitGroup
	var opened atomic.Int32
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, _ := h.svc.Handle(context.Background(), api.Command{Place: h.place, Actor: player(i + 1), Verb: api.VerbNew})
			if errText(r) == "" {
				opened.Add(1)
			}
		}()
	}
	wg.Wait()
	if opened.Load() != 1 || h.svc.Tables() != 1 {
		t.Errorf("%d /new succeeded, %d tables; want 1 and 1", opened.Load(), h.svc.Tables())
	}
}

package discord

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/adapters/internal/chat"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
)

// A harness runs the real service behind a real discordgo session against the fake.

const guildChannel = "500000000000000001"

var (
	alice = fakeUser{ID: "100000000000000001", Name: "Alice", Locale: "en-US"}
	bob   = fakeUser{ID: "100000000000000002", Name: "Bob", Locale: "de"}
	carla = fakeUser{ID: "100000000000000003", Name: "Carla", Locale: "fr"}
	dan   = fakeUser{ID: "100000000000000004", Name: "Dan", Locale: "en-GB"}
	eve   = fakeUser{ID: "100000000000000005", Name: "Eve", Locale: "en-US"} // never sits down
)

// randomRobots play a random legal move each.
var randomRobots = tabletest.RandomRobots

type harness struct {
	t       testing.TB
	f       *fakeDiscord
	a       *Adapter
	svc     *table.Service
	cancel  context.CancelFunc
	done    chan error
	logs    *tabletest.Buffer
	stopped bool
	// allowErrors are log lines at level ERROR the test provokes.
	allowErrors []string
	endpoint    string // its interactions endpoint, in HTTP mode
	// standby: one of several copies, which may hold no shard and identify never.
	standby bool
}

// leavePool takes the harness's endpoint out of the fake's Pool, as a load balancer does with a
// copy that stopped.
func (h *harness) leavePool() {
	h.f.mu.Lock()
	defer h.f.mu.Unlock()
	h.f.Pool = slices.DeleteFunc(h.f.Pool, func(e string) bool { return e == h.endpoint })
}

type harnessOpt struct {
	cfg     func(*Config)
	adapter func(*Adapter) // before Run
	table   func(*table.Config)
	wrap    func(chat.Service) chat.Service
	run     func(context.Context) context.Context // Run's context
	// noWait returns once Run is started, without waiting for every shard to connect.
	noWait bool
	// fake sets up the fake before the harness starts (read by the tests that use it).
	fake func(*fakeDiscord)
	// pool puts the copy's endpoint into the fake's Pool, in HTTP mode: one of several copies.
	pool bool
}

// mustNew makes an adapter or fails the test; it is closed when the test ends.
func mustNew(t testing.TB, cfg Config) *Adapter {
	t.Helper()
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// startHarness wires adapter and service over store and kv, resumes the service and runs the
// adapter until the test ends (or stop).
func startHarness(t testing.TB, f *fakeDiscord, store table.Store, kv table.KV, opts ...harnessOpt) *harness {
	t.Helper()
	logs := &tabletest.Buffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	// The outbox's global rate has its own test; here it would only pace the matches.
	cfg := Config{Token: f.Token, GuildID: f.GuildID, APIURL: f.srv.URL, Log: log, KV: kv, Verbose: true, MaxRate: 2000}
	if f.viaHTTP {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		cfg.Interactions = Interactions{URL: fakeEndpointURL, Listener: ln, PublicKey: f.publicKey()}
		f.mu.Lock()
		f.Endpoint = "http://" + ln.Addr().String() + "/discord/interactions"
		if slices.ContainsFunc(opts, func(o harnessOpt) bool { return o.pool }) {
			f.Pool = append(f.Pool, f.Endpoint)
		}
		f.mu.Unlock()
	}
	for _, o := range opts {
		if o.cfg != nil {
			o.cfg(&cfg)
		}
	}
	a := mustNew(t, cfg)
	a.identifyWindow = f.IdentifyWindow
	for _, o := range opts {
		if o.adapter != nil {
			o.adapter(a)
		}
	}
	// The computers keep a human pace (the adapter reports what each channel shows), at a
	// twentieth of its times: tests that play whole matches stay quick.
	tcfg := table.Config{Store: store, Outboxes: map[string]table.Outbox{Platform: a}, Robots: randomRobots,
		Seed: 7, Log: log, Think: time.Second, Paces: scaledPaces(0.05)}
	for _, o := range opts {
		if o.table != nil {
			o.table(&tcfg)
		}
	}
	svc := tabletest.New(tcfg)
	var h chat.Service = svc
	for _, o := range opts {
		if o.wrap != nil {
			h = o.wrap(h)
		}
	}
	a.Attach(h)
	ctx, cancel := context.WithCancel(context.Background())
	if err := svc.Resume(ctx); err != nil {
		t.Fatalf("Resume: %v", err)
	}
	runCtx := ctx
	for _, o := range opts {
		if o.run != nil {
			runCtx = o.run(runCtx)
		}
	}
	hs := &harness{t: t, f: f, a: a, svc: svc, cancel: cancel, done: make(chan error, 1), logs: logs, endpoint: f.Endpoint}
	// Every text shown to a whole channel is checked, as it arrives, against the cards still held
	// at the channel's table.
	f.mu.Lock()
	f.onPublic = func(channel, content string) {
		game, held := svc.HeldCards(svc.TableAt(api.Place{Platform: Platform, Chat: channel}))
		if leaks := tabletest.Leaks(content, game, held); len(leaks) > 0 {
			t.Errorf("channel %s was shown %v, still held in game %d:\n%s", channel, leaks, game, content)
		}
	}
	f.mu.Unlock()
	registered := f.callCounts()["PUT applications/{id}/guilds/{id}/commands"]
	go func() { hs.done <- a.Run(runCtx) }()
	t.Cleanup(hs.stop)
	if slices.ContainsFunc(opts, func(o harnessOpt) bool { return o.noWait }) {
		return hs
	}
	f.waitFor("the commands to be registered and every shard connected", func() bool {
		return (f.viaHTTP || f.connected()) && f.calls["PUT applications/{id}/guilds/{id}/commands"] > registered
	})
	if f.viaHTTP {
		if err := f.checkEndpoint(); err != nil {
			t.Fatalf("the portal would not save the Interactions Endpoint URL: %v", err)
		}
	}
	return hs
}

// stop ends Run (closing the session before the fake goes), closes the service, waits for the
// queues and checks the captured logs for the token.
func (h *harness) stop() {
	if h.stopped {
		return
	}
	h.stopped = true
	h.leavePool()
	h.cancel()
	if err := <-h.done; err != nil {
		h.t.Errorf("Run: %v", err)
	}
	h.svc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := h.a.Flush(ctx); err != nil {
		h.t.Errorf("Flush: %v", err)
	}
	logs := h.logs.String()
	if strings.Contains(logs, h.f.Token) || strings.Contains(logs, "s3cr3t") {
		h.t.Errorf("the bot token appears in the logs")
	}
	if identified := strings.Contains(logs, "Identify Packet"); h.f.viaHTTP && identified {
		h.t.Errorf("the bot identified on the gateway while interactions come by HTTP")
	} else if !identified && !h.f.viaHTTP && !h.standby {
		h.t.Errorf("discordgo's debug lines (identify included) are missing from the log: the token check proves nothing")
	}
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, "msg=interaction ") && !strings.Contains(line, "took=0s") {
			if d, err := time.ParseDuration(strings.Fields(line[strings.Index(line, "took=")+5:])[0]); err == nil && d > time.Second {
				h.t.Logf("slow: %s", line)
			}
		}
		if h.t.Failed() && (strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR")) {
			h.t.Logf("log: %s", line)
		}
		if strings.Contains(line, "level=ERROR") && !slices.ContainsFunc(h.allowErrors, func(s string) bool { return strings.Contains(line, s) }) {
			h.t.Errorf("error in the log: %s", line)
		}
	}
}

// Reading what users see.

func actionOf(b fakeButton) api.Action {
	a, err := api.ParseAction(b.CustomID)
	if err != nil {
		panic("not our button: " + b.CustomID)
	}
	return a
}

func findButton(m fakeMessage, verb api.Verb) (fakeButton, bool) {
	for _, b := range m.buttons() {
		if actionOf(b).Verb == verb {
			return b, true
		}
	}
	return fakeButton{}, false
}

// lastWith gives the newest message holding a button of the verb.
func lastWith(msgs []fakeMessage, verb api.Verb) (fakeMessage, fakeButton, bool) {
	for i := len(msgs) - 1; i >= 0; i-- {
		if b, ok := findButton(msgs[i], verb); ok {
			return msgs[i], b, true
		}
	}
	return fakeMessage{}, fakeButton{}, false
}

// moves are a hand's buttons drawn as playable: trump suits, or legal cards.
func moves(m fakeMessage) []fakeButton {
	var out []fakeButton
	for _, b := range m.buttons() {
		if v := actionOf(b).Verb; (v == api.VerbPlay || v == api.VerbTrump) && b.Style == 1 {
			out = append(out, b)
		}
	}
	return out
}

// applied tells an answer to an accepted press: a deferred update, or the pressed message updated.
func applied(r fakeResponse) bool { return r.Type == 6 || r.Type == 7 }

func ephemeralText(lang, key string, args ...any) string {
	return escape(kmCommands(i18n.T(lang, key, args...)))
}

// A seat's player and how they see their hand.
type seatPlayer struct {
	u    fakeUser
	noDM bool // plays from the ephemeral hand ("My hand") instead of DMs
}

// handView is the message that shows the player's current hand (f.mu held).
func (f *fakeDiscord) handViewLocked(p seatPlayer) (fakeMessage, bool) {
	var ids []string
	if p.noDM {
		ids = f.ephemeral[p.u.ID]
	} else {
		ids = f.order[f.dms[p.u.ID]]
	}
	for i := len(ids) - 1; i >= 0; i-- {
		m := f.msgs[ids[i]]
		for _, b := range m.copy().buttons() {
			if v := actionOf(b).Verb; v == api.VerbPlay || v == api.VerbTrump {
				return m.copy(), true
			}
		}
	}
	return fakeMessage{}, false
}

// matchOver reports whether the channel's newest match is over: a message offering a rematch came
// after the newest table message (a rematch's first game posts a new one).
func matchOver(msgs []fakeMessage) bool {
	over, _, ok := lastWith(msgs, api.VerbRematch)
	live, _, playing := lastWith(msgs, api.VerbHand)
	return ok && (!playing || snowflakeAfter(over.ID, live.ID))
}

// snowflakeAfter reports whether the message ID a is newer than b (IDs grow with time).
func snowflakeAfter(a, b string) bool { return len(a) > len(b) || len(a) == len(b) && a > b }

// openTable has owner open a table with options, the others join with the lobby's button, and
// owner deal. It returns the table ID.
func openTable(t testing.TB, f *fakeDiscord, owner fakeUser, others []fakeUser, options ...map[string]any) string {
	t.Helper()
	r := f.slash(owner, guildChannel, "new", options...)
	if r.Type != 4 || r.Flags&64 == 0 || !strings.HasPrefix(r.Content, ephemeralText("en", "note.opened")) {
		t.Fatalf("/km new answered %+v", r)
	}
	for _, u := range others {
		var lobby fakeMessage
		var join fakeButton
		f.waitFor("the lobby", func() bool {
			var ok bool
			lobby, join, ok = lastWith(f.channelLocked(guildChannel), api.VerbJoin)
			return ok
		})
		if r := f.press(u, lobby, join.CustomID); r.Type != 6 {
			t.Fatalf("%s joining: %+v", u.Name, r)
		}
	}
	var lobby fakeMessage
	var deal fakeButton
	f.waitFor("the lobby with everyone", func() bool {
		var ok bool
		lobby, deal, ok = lastWith(f.channelLocked(guildChannel), api.VerbDeal)
		if !ok {
			return false
		}
		for _, u := range others {
			if !strings.Contains(lobby.Content, u.Name) {
				return false
			}
		}
		return true
	})
	if r := f.press(owner, lobby, deal.CustomID); r.Type != 6 {
		t.Fatalf("dealing: %+v", r)
	}
	return actionOf(deal).Table
}

// liveMessage waits for the table's live message (the one with "My hand").
func liveMessage(f *fakeDiscord) (fakeMessage, fakeButton) {
	return waitButton(f, "the live table message", api.VerbHand)
}

// waitButton waits for the newest channel message with a button of the verb.
func waitButton(f *fakeDiscord, what string, verb api.Verb) (fakeMessage, fakeButton) {
	var msg fakeMessage
	var btn fakeButton
	f.waitFor(what, func() bool {
		var ok bool
		msg, btn, ok = lastWith(f.channelLocked(guildChannel), verb)
		return ok
	})
	return msg, btn
}

// playMatch plays until the match is over: whoever's hand shows playable buttons presses a
// random one. Players without DMs ask for their hand once ("My hand", kept up to date by the
// adapter) and play every other card with /km play and its autocomplete. It returns the moves made.
func playMatch(t testing.TB, f *fakeDiscord, players []seatPlayer, rng *rand.Rand) int {
	t.Helper()
	mp := newMatchPlayer(t, f, players, rng)
	for !mp.step(nil) {
	}
	return mp.n
}

// matchPlayer makes the people's moves of a match one at a time (step).
type matchPlayer struct {
	t       testing.TB
	f       *fakeDiscord
	players []seatPlayer
	rng     *rand.Rand
	lastSeq uint64
	n       int           // moves made
	longest time.Duration // the longest a step waited for a person's turn
}

// newMatchPlayer has the players without DMs ask for their hand ("My hand").
func newMatchPlayer(t testing.TB, f *fakeDiscord, players []seatPlayer, rng *rand.Rand) *matchPlayer {
	t.Helper()
	for _, p := range players {
		if p.noDM {
			live, hand := liveMessage(f)
			if r := f.press(p.u, live, hand.CustomID); r.Type != 4 || r.Flags&64 == 0 {
				t.Fatalf("%s: My hand answered %+v", p.u.Name, r)
			}
		}
	}
	return &matchPlayer{t: t, f: f, players: players, rng: rng}
}

// step waits for a person's move, the end of the match or done (if not nil: asked with the
// fake's lock held), and makes the move. It reports whether the match is over or done.
func (mp *matchPlayer) step(done func() bool) bool {
	t, f, players := mp.t, mp.f, mp.players
	t.Helper()
	var who seatPlayer
	var view fakeMessage
	var best uint64
	over := false
	began := time.Now()
	defer func() { mp.longest = max(mp.longest, time.Since(began)) }()
	dump := func() string {
		var b strings.Builder
		fmt.Fprintf(&b, "\nlast seq %d", mp.lastSeq)
		for _, p := range players {
			m, ok := f.handViewLocked(p)
			fmt.Fprintf(&b, "\n%s (view %v, %d edits): %q", p.u.Name, ok, m.Edits, m.Content)
			for _, x := range m.buttons() {
				a := actionOf(x)
				fmt.Fprintf(&b, " [%s %s seq %d style %d]", a.Verb, a.Arg, a.Seq, x.Style)
			}
		}
		msgs := f.channelLocked(guildChannel)
		for _, m := range msgs[max(len(msgs)-3, 0):] {
			fmt.Fprintf(&b, "\nchannel: %q", m.Content)
		}
		return b.String()
	}
	f.waitForOr("a move or the end of the match", func() bool {
		if matchOver(f.channelLocked(guildChannel)) || done != nil && done() {
			over = true
			return true
		}
		best = 0
		for _, p := range players {
			m, ok := f.handViewLocked(p)
			if !ok {
				continue
			}
			if mv := moves(m); len(mv) > 0 && actionOf(mv[0]).Seq > mp.lastSeq && actionOf(mv[0]).Seq > best {
				who, view, best = p, m, actionOf(mv[0]).Seq
			}
		}
		return best > 0
	}, dump)
	if over {
		return true
	}
	mv := moves(view)
	b := mv[mp.rng.IntN(len(mv))]
	act := actionOf(b)
	if who.noDM && act.Verb == api.VerbPlay && mp.n%2 == 0 {
		// The slash command way: autocomplete must offer exactly the playable cards.
		var want []string
		for _, x := range mv {
			want = append(want, actionOf(x).Arg)
		}
		var got []string
		for _, c := range f.autocomplete(who.u, guildChannel, "") {
			got = append(got, c.Value.(string))
		}
		sort.Strings(want)
		sort.Strings(got)
		if !slices.Equal(got, want) {
			t.Fatalf("autocomplete offered %v, the hand shows %v", got, want)
		}
		if r := f.slash(who.u, guildChannel, "play", opt("card", 3, act.Arg)); r.Type != 4 || r.Content != doneText {
			t.Fatalf("%s: /km play %s answered %+v", who.u.Name, act.Arg, r)
		}
	} else if r := f.press(who.u, view, b.CustomID); !applied(r) {
		t.Fatalf("%s pressing %s (seq %d): %+v", who.u.Name, b.Label, act.Seq, r)
	}
	mp.lastSeq = act.Seq
	mp.n++
	if mp.n > 500 {
		t.Fatalf("the match does not end")
	}
	return false
}

func slogTo(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := int(p * float64(len(s)-1))
	return s[i]
}

func restSummary(before, after map[string]int) (total int, lines []string) {
	for k, v := range after {
		if d := v - before[k]; d > 0 {
			total += d
			lines = append(lines, k+": "+strconv.Itoa(d))
		}
	}
	sort.Strings(lines)
	return total, lines
}

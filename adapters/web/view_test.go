package web

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// views is a table service with the web's views of it, without a listener: the tests that follow
// time in a synctest bubble read the views straight from the server.
type views struct {
	t     *testing.T
	svc   *table.Service
	web   *Server
	place api.Place
	event int
}

// newViews opens a table at a place for n people (1: one person and three computer players; 4:
// four people) with opts, and deals; it gives the people in seat order.
func newViews(t *testing.T, n int, opts ...string) (*views, []api.Player) {
	t.Helper()
	store := mem.New()
	w, err := New(Config{PublicURL: "http://table.test", KV: store})
	if err != nil {
		t.Fatal(err)
	}
	h := &views{t: t, web: w, place: api.Place{Platform: "test", Chat: "g1", Title: "Café Konter"}}
	h.svc = tabletest.New(table.Config{Store: store, KV: store, Robots: randomRobots, Seed: 7,
		Outboxes: map[string]table.Outbox{"test": nullOutbox{}}})
	w.Attach(h.svc)
	var ps []api.Player
	for i := range n {
		ps = append(ps, api.Player{ID: fmt.Sprint("p", i+1), Name: fmt.Sprint("Player", i+1), Locale: "en"})
	}
	if len(opts) == 0 {
		opts = []string{"timer=none"}
	}
	h.must(ps[0], api.VerbNew, opts...)
	for _, p := range ps[1:] {
		h.must(p, api.VerbJoin)
	}
	h.must(ps[0], api.VerbDeal)
	return h, ps
}

// do gives the text of the refusal of p's command, "" when it was taken.
func (h *views) do(p api.Player, v api.Verb, args ...string) string {
	h.t.Helper()
	h.event++
	msgs, err := h.svc.Handle(context.Background(), api.Command{Place: h.place, Actor: p, Verb: v, Args: args,
		EventID: fmt.Sprint("e", h.event)})
	if err != nil {
		return err.Error()
	}
	for _, m := range msgs {
		if m.Kind == api.KindError {
			return m.Text
		}
	}
	return ""
}

func (h *views) must(p api.Player, v api.Verb, args ...string) {
	h.t.Helper()
	if e := h.do(p, v, args...); e != "" {
		h.t.Fatalf("%s %s: %s", p.ID, v, e)
	}
}

var cardField = regexp.MustCompile(`"card":"([^"]*)"`)

// checkSeatView fails if the view shows a card that is still held by anyone but its reader. The
// game that ended (Ended) is left out: its cards were dealt in an earlier game, and its last
// trick was played in the open.
func checkSeatView(t *testing.T, svc *table.Service, v SeatView) {
	t.Helper()
	v.Ended = nil
	_, held := svc.HeldCards(v.Table)
	var own core.CardSet
	for _, c := range v.Hand {
		card, err := core.ParseCard(c.Card)
		if err != nil {
			t.Fatalf("seat %d's hand holds %q", v.You, c.Card)
		}
		own = own.Add(card)
	}
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range cardField.FindAllStringSubmatch(string(data), -1) {
		c, err := core.ParseCard(m[1])
		if err != nil {
			t.Fatalf("the view shows %q, not a card", m[1])
		}
		if held.Has(c) && !own.Has(c) {
			t.Fatalf("the view of seat %d shows %s, which another player holds:\n%s", v.You, c, data)
		}
	}
}

// A whole match played from the four seat views: each player sees their own cards only (the
// first packet while trump is named), the legal ones marked, and the public table; a person who
// does not sit there sees no hand at all.
func TestSeatViewsPlayAWholeMatch(t *testing.T) {
	ctx := t.Context()
	synctest.Test(t, func(t *testing.T) {
		h, ps := newViews(t, 4, "timer=none", "stripes=3")
		defer h.svc.Close()
		id := h.svc.TableAt(h.place)
		watcher := api.Player{ID: "w", Name: "Watcher", Locale: "de"}
		moves := 0
		for ; moves < 2000; moves++ {
			synctest.Wait()
			if st, _ := h.svc.Status(id); st != api.StatusPlaying {
				break
			}
			wv, ok := h.web.SeatView(ctx, id, watcher)
			if !ok || wv.You != -1 || len(wv.Hand) != 0 || wv.Lang != "de" {
				t.Fatalf("the watcher's view: seat %d, %d cards, lang %s", wv.You, len(wv.Hand), wv.Lang)
			}
			checkSeatView(t, h.svc, wv)
			acted := false
			for i, p := range ps {
				v, _ := h.web.SeatView(ctx, id, p)
				checkSeatView(t, h.svc, v)
				if v.You != i {
					t.Fatalf("%s sits at %d, the view says %d", p.ID, i, v.You)
				}
				g := v.Game
				if g.Phase == "trump" && len(v.Hand) != 3 {
					t.Fatalf("%s sees %d cards while trump is named", p.ID, len(v.Hand))
				}
				if acted || g.ToMove != i {
					continue
				}
				switch {
				case len(v.Trumps) > 0:
					if e := h.do(p, api.VerbTrump, v.Trumps[moves%4].Arg); e != "" {
						t.Fatalf("trump: %s", e)
					}
				default:
					var legal []string
					for _, c := range v.Hand {
						if c.Legal {
							legal = append(legal, c.Card)
						}
					}
					if len(legal) == 0 {
						t.Fatalf("%s is to play and has no legal card: %+v", p.ID, v.Hand)
					}
					if e := h.do(p, api.VerbPlay, legal[moves%len(legal)]); e != "" {
						t.Fatalf("play %s: %s", legal[0], e)
					}
				}
				acted = true
			}
			if !acted {
				t.Fatalf("nobody could act")
			}
		}
		v, _ := h.web.SeatView(ctx, id, ps[0])
		if v.Status != api.StatusOver || v.Board.Winner == "" || !v.CanRematch || len(v.Hand) != 0 {
			t.Fatalf("after %d moves: status %s, winner %q, rematch %v, %d cards", moves, v.Status, v.Board.Winner, v.CanRematch, len(v.Hand))
		}
		if len(v.Board.Games) == 0 || v.Say == "" {
			t.Fatalf("the board lists %d games; say %q", len(v.Board.Games), v.Say)
		}
	})
}

// In the lobby a view offers to deal to those seated and to join to the others; an unknown
// table has no view.
func TestSeatViewLobby(t *testing.T) {
	ctx := t.Context()
	store := mem.New()
	w, err := New(Config{PublicURL: "http://table.test", KV: store})
	if err != nil {
		t.Fatal(err)
	}
	h := &views{t: t, web: w, place: api.Place{Platform: "test", Chat: "g1"}}
	h.svc = tabletest.New(table.Config{Store: store, KV: store, Outboxes: map[string]table.Outbox{"test": nullOutbox{}}})
	w.Attach(h.svc)
	defer h.svc.Close()
	me, other := api.Player{ID: "p1", Name: "Player1", Locale: "en"}, api.Player{ID: "p2", Name: "Player2", Locale: "en"}
	h.must(me, api.VerbNew, "timer=none")
	id := h.svc.TableAt(h.place)
	v, ok := h.web.SeatView(ctx, id, me)
	if !ok || v.You != 0 || !v.CanDeal || v.CanJoin || v.Game != nil {
		t.Fatalf("the opener's lobby view: %+v", v)
	}
	if v, _ := h.web.SeatView(ctx, id, other); v.You != -1 || v.CanDeal || !v.CanJoin {
		t.Fatalf("another's lobby view: %+v", v)
	}
	if _, ok := h.web.SeatView(ctx, "nope", me); ok {
		t.Fatal("a view of a table that does not exist")
	}
}

// A view carries what its reader must still see of what just happened, however many changes
// the page was not sent: the trick taken last, with its winner, and the game that ended, with
// its last trick and result, until the next game's first trick is taken.
func TestSeatViewKeepsWhatEnded(t *testing.T) {
	ctx := t.Context()
	synctest.Test(t, func(t *testing.T) {
		h, ps := newViews(t, 4, "timer=none", "stripes=3")
		defer h.svc.Close()
		id := h.svc.TableAt(h.place)
		games := 0
		for moves := 0; moves < 2000; moves++ {
			synctest.Wait()
			v, _ := h.web.SeatView(ctx, id, ps[0])
			if v.Status != api.StatusPlaying {
				if v.Ended == nil || v.Ended.No != v.Game.No || len(v.Ended.Last.Plays) != 4 {
					t.Fatalf("the match is over and the view shows its last game as %+v", v.Ended)
				}
				break
			}
			g := v.Game
			taken := g.Tricks[0] + g.Tricks[1]
			switch {
			case g.No == 1 && taken == 0 && v.Ended != nil:
				t.Fatalf("game 1 has no trick taken and the view shows an ended game %d", v.Ended.No)
			case g.No > 1 && taken == 0:
				e := v.Ended
				if e == nil || e.No != g.No-1 || len(e.Last.Plays) != 4 || e.Last.Winner < 0 || e.Last.No != 6 || e.Text == "" {
					t.Fatalf("game %d has begun; the view shows the game before as %+v", g.No, e)
				}
				if e.Last.Won == "" || e.Winner != "" && !strings.Contains(e.Text, e.Winner) {
					t.Fatalf("the ended game's words: %q, %q (winner %q)", e.Last.Won, e.Text, e.Winner)
				}
				if games < g.No-1 {
					games = g.No - 1
				}
			case taken > 0 && v.Ended != nil:
				t.Fatalf("game %d has %d tricks taken and the view still shows game %d", g.No, taken, v.Ended.No)
			}
			if taken > 0 && (g.Last == nil || g.Last.No != taken || len(g.Last.Plays) != 4 || g.Last.Winner < 0) {
				t.Fatalf("game %d, %d tricks taken: the last trick shown is %+v", g.No, taken, g.Last)
			}
			mover := ps[g.ToMove]
			mv, _ := h.web.SeatView(ctx, id, mover)
			verb, arg := api.VerbPlay, ""
			if len(mv.Trumps) > 0 {
				verb, arg = api.VerbTrump, mv.Trumps[moves%4].Arg
			}
			for _, c := range mv.Hand {
				if c.Legal {
					arg = c.Card
				}
			}
			if e := h.do(mover, verb, arg); e != "" {
				t.Fatalf("%s %s: %s", verb, arg, e)
			}
		}
		if games == 0 {
			t.Fatal("no game ended")
		}
	})
}

// The turn's clock: whose time runs and how long is left, the reminder, and none once a
// computer plays for the absent player, who is back with any command.
func TestSeatViewClock(t *testing.T) {
	ctx := t.Context()
	synctest.Test(t, func(t *testing.T) {
		h, ps := newViews(t, 4, "stripes=3")
		defer h.svc.Close() // the normal timer: a reminder at 90 s, a computer at 3 min
		id := h.svc.TableAt(h.place)
		v, _ := h.web.SeatView(ctx, id, ps[0])
		to := v.Game.ToMove
		c := v.Clock
		if c == nil || c.Seat != to || c.Left != 180_000 || c.Total != 180_000 || c.Reminded {
			t.Fatalf("the clock at the deal: %+v (seat %d to move)", c, to)
		}
		time.Sleep(30 * time.Second)
		if v, _ = h.web.SeatView(ctx, id, ps[1]); v.Clock == nil || v.Clock.Left != 150_000 || v.Clock.Seat != to {
			t.Fatalf("30 s later: %+v", v.Clock)
		}
		time.Sleep(61 * time.Second)
		synctest.Wait()
		if v, _ = h.web.SeatView(ctx, id, ps[to]); v.Clock == nil || !v.Clock.Reminded || v.Clock.Left != 89_000 {
			t.Fatalf("after the reminder: %+v", v.Clock)
		}
		time.Sleep(90 * time.Second)
		synctest.Wait()
		v, _ = h.web.SeatView(ctx, id, ps[to])
		if !v.Seats[to].Away || v.Clock != nil && v.Clock.Seat == to {
			t.Fatalf("after the timeout: away %v, clock %+v", v.Seats[to].Away, v.Clock)
		}
		if e := h.do(ps[to], api.VerbBoard); e != "" {
			t.Fatal(e)
		}
		if v, _ = h.web.SeatView(ctx, id, ps[to]); v.Seats[to].Away {
			t.Fatal("a command did not bring the absent player back")
		}
	})
}

// Computer players are named in the reader's language, and the hand lists its trumps first.
func TestSeatViewNamesAndHandOrder(t *testing.T) {
	ctx := t.Context()
	h, ps := newViews(t, 1)
	defer h.svc.Close()
	me := ps[0]
	id := h.svc.TableAt(h.place)
	v, _ := h.web.SeatView(ctx, id, api.Player{ID: "w", Name: "Watcher", Locale: "fr"})
	if v.Seats[1].Name != "Ordinateur 2" {
		t.Fatalf("a French reader sees seat 2 as %q", v.Seats[1].Name)
	}
	if v, _ := h.web.SeatView(ctx, id, me); v.Seats[1].Name != "Computer 2" {
		t.Fatalf("an English reader sees seat 2 as %q", v.Seats[1].Name)
	}
	for _, tc := range []struct {
		hand  string
		trump core.Suit
		want  string
	}{
		{"QC 9H AH QS KD 10S", core.Hearts, "AH QS 9H 10S KD QC"},
		{"QC 9H AH QS KD 10S", core.Clubs, "QS QC 10S AH 9H KD"},
		{"KD QD 9S", core.NoSuit, "QD 9S KD"},
	} {
		var got []string
		for _, c := range handOrder(core.SetOf(core.MustCards(tc.hand)...), tc.trump) {
			got = append(got, c.String())
		}
		if s := strings.Join(got, " "); s != tc.want {
			t.Errorf("%s with trump %v: %s, want %s", tc.hand, tc.trump, s, tc.want)
		}
	}
}

// TestSeatViewCardsInTheReadersLetters: the page names a card as the chat does in the reader's
// language (issue 35: one rank letter per language in chat, web and typed commands).
func TestSeatViewCardsInTheReadersLetters(t *testing.T) {
	for _, tc := range []struct {
		card core.Card
		lang string
		want string
	}{
		{core.MustCards("QS")[0], "en", "Q♠"},
		{core.MustCards("QS")[0], "de", "D♠"},
		{core.MustCards("JC")[0], "fr", "V♣"},
		{core.MustCards("10H")[0], "lb", "10♥"},
	} {
		if got := viewCard(tc.lang, tc.card).Label; got != tc.want {
			t.Errorf("%v in %s: %q, want %q", tc.card, tc.lang, got, tc.want)
		}
	}
}

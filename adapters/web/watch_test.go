package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/kontermatt/kontermatt/core"
)

var anyCard = regexp.MustCompile(`"card":"([^"]*)"`)

// A seated player asks for the table's watch link; people who open it (any number) see the
// public table and never a hand, not even in what their socket carries; their moves are
// refused; everyone at the table is told how many watch. A forged watch link gives no session.
func TestWatchLink(t *testing.T) {
	e := newEnv(t, fastPlayer)
	id, p, _ := e.soloTable(1)
	seated := e.open(e.session(p, id))
	if err := seated.sendJSON(map[string]string{"t": "watchlink"}); err != nil {
		t.Fatal(err)
	}
	link := seated.next("watchlink").Text
	_, token, ok := strings.Cut(link, "#watch=")
	if !ok || !strings.HasPrefix(link, e.url+"/") {
		t.Fatalf("the watch link: %q", link)
	}
	if code, _ := e.post(map[string]string{"watch": token + "x"}, ""); code != http.StatusUnauthorized {
		t.Fatalf("a forged watch link: %d", code)
	}
	var watchers []*client
	for range 2 {
		code, out := e.post(map[string]string{"watch": token, "lang": "fr"}, "")
		if code != http.StatusOK || out["session"] == "" {
			t.Fatalf("opening the watch link: %d %v", code, out)
		}
		watchers = append(watchers, e.open(out["session"]))
	}
	if n := seated.next("watchers").N; n != 1 {
		t.Fatalf("the player was told %d watchers first", n)
	}
	if n := seated.next("watchers").N; n != 2 {
		t.Fatalf("the player was told %d watchers", n)
	}
	w := watchers[0]
	if w.view.You != -1 || len(w.view.Hand) > 0 || w.view.Lang != "fr" {
		t.Fatalf("a watcher's view: seat %d, %d cards, %s", w.view.You, len(w.view.Hand), w.view.Lang)
	}
	w.move("play", "QS", w.view.Seq, "w1")
	if r := w.next("refused"); !strings.Contains(r.Text, "table") {
		t.Fatalf("a watcher's move: %q", r.Text)
	}
	if err := w.sendJSON(map[string]string{"t": "watchlink"}); err != nil {
		t.Fatal(err)
	}
	// Play the person's moves until a few tricks went by; every card a watcher got was on the
	// table (a play of the trick, the last trick, the game just ended), never in a hand.
	for seated.view.Game.Trick.No < 3 && len(seated.view.Board.Games) == 0 {
		if v := seated.view; v.Game.ToMove == v.You {
			verb, arg := v.FirstMove()
			seated.move(verb, arg, v.Seq, fmt.Sprint("s", v.Seq))
		}
		seated.next("view")
	}
	w.next("view")
	for _, m := range w.got {
		if m.T == "watchlink" {
			t.Fatal("a watcher was given the watch link")
		}
		if m.View == nil {
			continue
		}
		public := core.CardSet(0)
		v := m.View
		if len(v.Hand) > 0 || v.You != -1 {
			t.Fatalf("a watcher was sent a hand: %+v", v.Hand)
		}
		if g := v.Game; g != nil {
			for _, pl := range g.Trick.Plays {
				c, _ := core.ParseCard(pl.Card.Card)
				public = public.Add(c)
			}
			if g.Last != nil {
				for _, pl := range g.Last.Plays {
					c, _ := core.ParseCard(pl.Card.Card)
					public = public.Add(c)
				}
			}
		}
		if x := v.Ended; x != nil {
			for _, pl := range x.Last.Plays {
				c, _ := core.ParseCard(pl.Card.Card)
				public = public.Add(c)
			}
		}
		data, _ := json.Marshal(m)
		for _, c := range anyCard.FindAllStringSubmatch(string(data), -1) {
			card, err := core.ParseCard(c[1])
			if err != nil || !public.Has(card) {
				t.Fatalf("a watcher was sent the card %q outside the table", c[1])
			}
		}
	}
	watchers[1].c.CloseNow()
	if n := seated.next("watchers").N; n != 1 {
		t.Fatalf("after a watcher left the player was told %d", n)
	}
}

package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

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

// The watch link that the chats' table messages carry stays the same for half a session (a link
// new every second would make every table message look changed, worth an edit), and it opens
// the table until at least half a session from when it was given.
func TestWatchLinkIsSteady(t *testing.T) {
	e := newEnv(t)
	id, _, _ := e.soloTable(1)
	first := e.web.WatchLink(id)
	e.clock.Add(time.Second)
	if again := e.web.WatchLink(id); again != first {
		t.Fatalf("a second later the watch link is another:\n%s\n%s", first, again)
	}
	if other, _, _ := e.soloTable(2); e.web.WatchLink(other) == first {
		t.Fatal("two tables have one watch link")
	}
	e.clock.Add(6*time.Hour - time.Minute) // the link is still valid: at most this old
	_, token, _ := strings.Cut(first, "#watch=")
	if code, out := e.post(map[string]string{"watch": token}, ""); code != http.StatusOK || out["session"] == "" {
		t.Fatalf("opening a watch link given 6 hours ago: %d %v", code, out)
	}
}

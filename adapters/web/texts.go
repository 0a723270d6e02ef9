package web

import (
	"strconv"
	"strings"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/i18n"
)

// pageKeys are the catalog's texts the page shows by itself (labels, states); everything about
// the table comes in its view, said by the service. The page has no texts of its own but the
// ones it shows before it reaches the server.
var pageKeys = []string{
	"web.title", "web.connecting", "web.reconnecting", "web.open_from_chat", "web.your_cards", "web.watching",
	"web.dealer", "web.stake", "web.you", "web.choose_trump", "web.calls",
	"web.take_back", "web.back", "web.clock", "web.clock_mine", "web.continue",
	"web.rank.J", "web.rank.Q", "web.rank.K", "web.rank.A",
	"pic.Trump", "pic.Trick", "pic.LastTrick", "pic.Points", "pic.Stripes", "pic.Game", "pic.TeamA", "pic.TeamB",
	"pic.Open", "pic.NoGames", "pic.Cards", "pic.CardsOne", "pic.Winner", "pic.Calls",
	"btn.deal", "btn.join", "btn.rematch", "btn.rotate", "btn.board", "seat.away",
	"hand.your_turn", "note.reminder", "note.away.you",
	"card.name",   // a card in words: "%[1]s of %[2]s" with the names below
	"label.colon", // between a label and its value: the page writes no punctuation of its own
	"note.announced", "web.section.table", "web.section.moves", "web.section.board",
	"web.choose_trump.label", "web.calls.label", "web.trump_named", "web.partner", "web.rules", "web.sound",
	"web.result.stake", "web.result.stripes", "web.last_trick", "web.teams",
	// A count's forms: the page picks one with plural.one (below).
	"web.watchers.one", "web.watchers.other", "web.watch_link",
	"web.replays", "web.replay.prev", "web.replay.next", "web.replay.game", "web.replay.step", "web.replay.close",
	"web.replay.hands",
}

// pageStrings are the page's texts in lang, with the names of the ranks and suits the page
// names cards with ("rank.Q": "queen", "suit.D": "diamonds").
func pageStrings(lang string) map[string]string {
	out := make(map[string]string, len(pageKeys)+10)
	for _, k := range pageKeys {
		out[k] = i18n.T(lang, k)
	}
	// The counts that take the singular in lang ("0,1" in French): the page counts with them.
	var one []string
	for n := range 100 {
		if i18n.PluralForm(lang, n) == "one" {
			one = append(one, strconv.Itoa(n))
		}
	}
	out["plural.one"] = strings.Join(one, ",")
	for r := core.Nine; r <= core.Ace; r++ {
		out["rank."+r.String()] = i18n.Rank(lang, r)
	}
	for _, s := range core.Suits {
		out["suit."+s.String()] = i18n.Suit(lang, s)
	}
	return out
}

package web

import "github.com/kontermatt/kontermatt/core/i18n"

// pageKeys are the catalog's texts the page shows by itself (labels, states); everything about
// the table comes in its view, said by the service. The page has no texts of its own but the
// ones it shows before it reaches the server.
var pageKeys = []string{
	"web.title", "web.connecting", "web.reconnecting", "web.open_from_chat", "web.your_cards", "web.watching",
	"web.dealer", "web.stake", "web.you", "web.choose_trump", "web.calls",
	"pic.Trump", "pic.Trick", "pic.LastTrick", "pic.Points", "pic.Stripes", "pic.Game", "pic.TeamA", "pic.TeamB",
	"pic.Open", "pic.NoGames", "pic.Cards", "pic.Winner", "pic.Calls",
	"btn.deal", "btn.join", "btn.rematch", "btn.rotate", "btn.board", "seat.away",
	"label.colon", // between a label and its value: the page writes no punctuation of its own
}

// pageStrings are the page's texts in lang.
func pageStrings(lang string) map[string]string {
	out := make(map[string]string, len(pageKeys))
	for _, k := range pageKeys {
		out[k] = i18n.T(lang, k)
	}
	return out
}

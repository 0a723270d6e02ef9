package chat

import "github.com/kontermatt/kontermatt/core/table/api"

// Web is the web table (adapters/web) as the chat adapters offer it to players. nil in an
// adapter's config: there is none.
type Web interface {
	// Link is a signed one-time address of the web table for a player at a table, for that
	// player alone (a private message, an ephemeral reply).
	Link(p api.Player, tableID string) (string, error)
	// AppURL is the page's address for a table to open as a Telegram Mini App (a web_app
	// button); "" when the page is not served over https.
	AppURL(tableID string) string
	// WatchLink is the address of the web table for people without a seat at a table: the public
	// table, no hand, no move. It may be shared (the table's public message carries it).
	WatchLink(tableID string) string
}

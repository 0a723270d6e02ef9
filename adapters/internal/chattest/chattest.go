// Package chattest holds the test doubles the chat adapters' tests share.
package chattest

import (
	"github.com/kontermatt/kontermatt/core/table/api"
)

// Web stands for the web table (chat.Web): the addresses it would give. With HTTPS it is served
// over https, so it has a Mini App address for Telegram; without, none.
type Web struct{ HTTPS bool }

// Link is a one-time address of the web table for a player at a table.
func (Web) Link(p api.Player, tableID string) (string, error) {
	return "https://table.example/#link=" + tableID + "-" + p.ID, nil
}

// AppURL is the page's address for a table, "" without HTTPS.
func (w Web) AppURL(tableID string) string {
	if !w.HTTPS {
		return ""
	}
	return "https://table.example/?table=" + tableID
}

// WatchLink is the address of the web table for people without a seat.
func (Web) WatchLink(tableID string) string { return "https://table.example/#watch=" + tableID }

package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"github.com/kontermatt/kontermatt/adapters/web"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// localWeb is the web table of bot -web: served on this machine's loopback only, at a port the
// system picks, for the one person at this machine. It is its own platform's outbox (the
// table's place is web.LocalPlace): its Deliver tells the page what changed.
func localWeb(outboxes map[string]table.Outbox, store table.KV, log *slog.Logger) (*web.Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("the web table cannot listen on this machine: %w", err)
	}
	// The link is printed once, for the person at this machine: it stays valid as long as a
	// session (the page keeps its session on a reload).
	w, err := web.New(web.Config{Listener: ln, PublicURL: "http://" + ln.Addr().String(), KV: store, Log: log,
		LinkTTL: 12 * time.Hour})
	if err != nil {
		ln.Close()
		return nil, err
	}
	outboxes[web.Platform] = w
	return w, nil
}

// openLocalTable opens (or resumes) the person's table with three computer players and prints
// its link: the line to click.
func (m *Main) openLocalTable(ctx context.Context, w *web.Server) error {
	tf := m.Terminal
	name := os.Getenv("USER")
	if name == "" {
		name = "Player"
	}
	opts := append([]string{"timer=none", "level=" + tf.Level}, strings.Fields(tf.Options)...)
	link, err := w.LocalTable(ctx, api.Player{ID: "local", Name: name, Locale: tf.Lang}, opts)
	if err != nil {
		return fmt.Errorf("opening the web table: %w", err)
	}
	fmt.Fprintf(m.Stdout, "Your table with three computer players is open in the browser at\n\n  %s\n\n(on this machine only; Ctrl-C stops the bot, and the match resumes at the next start)\n", link)
	return nil
}

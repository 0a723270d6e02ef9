package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/cmd/bot/internal/ops"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage"
)

// With the web table configured, it runs beside the chat platform (serving its page where
// web.listen says), and the platform's outbox tells it what changed.
func TestWebTableWiring(t *testing.T) {
	st, err := storage.Open(filepath.Join(t.TempDir(), "k.db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var cfg Config
	cfg.Telegram.Token, cfg.Telegram.APIURL = "123:test-token", "http://127.0.0.1:1" // never answers
	cfg.Telegram.MiniApp = "table"
	cfg.Web.Listen, cfg.Web.PublicURL = addr, "http://"+addr
	if err := cfg.checkWeb(); err != nil {
		t.Fatal(err)
	}
	outboxes := map[string]table.Outbox{}
	chats, err := newChats(cfg, st, slog.New(slog.NewTextHandler(io.Discard, nil)), outboxes, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(chats) != 2 || chats[1].Name() != "web" || !strings.HasPrefix(chats[1].Describe(), "web http://") {
		t.Fatalf("chats: %v", chats)
	}
	if _, teed := outboxes["telegram"].(interface {
		Deliver(context.Context, []api.Message)
	}); !teed {
		t.Fatal("no telegram outbox")
	}
	svc := tabletest.New(table.Config{Store: st, KV: st, Outboxes: outboxes})
	defer svc.Close()
	chats[1].Attach(svc)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- chats[1].Run(ctx) }()
	var resp *http.Response
	for i := 0; i < 100; i++ {
		if resp, err = http.Get("http://" + addr + "/api/strings?lang=de"); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("the web table does not answer: %v", err)
	}
	resp.Body.Close()
	if err := chats[1].(ops.ConnectedReporter).Connected(); err != nil {
		t.Fatalf("health: %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	for _, c := range chats {
		c.Close()
	}
}

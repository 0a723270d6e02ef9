package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage/etcdstore"
	"github.com/kontermatt/kontermatt/storage/etcdstore/etcdtest"
)

// TestQuorumLossAnsweredInTime (issue 32, measured): a bot on a three-member etcd cluster serves a
// Telegram group by webhook (the real telegram-bot-api client against the fake Bot API). Two
// members stop: the cluster has no quorum. A press then gets its refusal (err.unavailable, an
// alert) within Telegram's 15 s for a callback answer, and the webhook does not acknowledge the
// update that was not stored (no 2xx: Telegram sends it again). The times are logged as
// MEASURED lines; on a loaded machine they are noisy.
func TestQuorumLossAnsweredInTime(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{})
	useEtcd(t, c, "quorum/")
	f := newFakeBotAPI(t, copiesToken)
	hook := freeAddr(t)
	for k, v := range map[string]string{"KONTERMATT_TELEGRAM_TOKEN": copiesToken, "KONTERMATT_TELEGRAM_API_URL": f.srv.URL,
		"KONTERMATT_TELEGRAM_WEBHOOK_URL": "https://bot.example.org/telegram/hook", "KONTERMATT_TELEGRAM_WEBHOOK_SECRET": copiesSecret,
		"KONTERMATT_TELEGRAM_WEBHOOK_LISTEN": hook, "KONTERMATT_THINK": "50ms"} {
		t.Setenv(k, v)
	}
	cfg, err := loadConfig("", os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	logs := &tabletest.Buffer{}
	m := &Main{Config: cfg, Stdout: io.Discard, Stderr: logs}
	defer func() {
		if t.Failed() {
			t.Log(logs.String())
		}
	}()
	if err := m.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ctx, stop := context.WithCancel(t.Context())
	ran := make(chan error, 1)
	go func() { ran <- m.Run(ctx) }()
	defer func() { stop(); <-ran }()

	updateID := 0
	post := func(update map[string]any) (int, time.Duration) {
		updateID++
		update["update_id"] = updateID
		body, _ := json.Marshal(update)
		req, _ := http.NewRequest(http.MethodPost, "http://"+hook+"/telegram/hook", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Telegram-Bot-Api-Secret-Token", copiesSecret)
		start := time.Now()
		resp, err := (&http.Client{Timeout: 60 * time.Second}).Do(req)
		if err != nil {
			t.Fatalf("posting an update: %v", err)
		}
		resp.Body.Close()
		return resp.StatusCode, time.Since(start)
	}
	alice, bob := tgPlayer{301, "Alice"}, tgPlayer{302, "Bob"}
	tabletest.WaitUntil(t, 10*time.Second, "the webhook listening", func() bool {
		resp, err := http.Get("http://" + hook + "/telegram/hook")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	})
	if code, _ := post(map[string]any{"message": map[string]any{"message_id": 1, "from": alice.json(), "date": time.Now().Unix(),
		"chat": map[string]any{"id": copiesGroup, "type": "supergroup", "title": "Konter"}, "text": "/new@kontermatt_bot",
		"entities": []map[string]any{{"type": "bot_command", "offset": 0, "length": len("/new@kontermatt_bot")}}}}); code != 200 {
		t.Fatalf("/new: %d", code)
	}
	var lobby botMsg
	var data []string
	tabletest.WaitUntil(t, 10*time.Second, "the lobby", func() bool { lobby, data = f.newestWith(copiesGroup, api.VerbJoin); return data != nil })

	c.Stop(1)
	c.Stop(2)
	f.mu.Lock()
	msg := f.json(&lobby)
	f.mu.Unlock()
	pressed := time.Now()
	done := make(chan struct{})
	var code int
	var took time.Duration
	go func() {
		defer close(done)
		code, took = post(map[string]any{"callback_query": map[string]any{"id": "q-quorum", "from": bob.json(), "message": msg,
			"chat_instance": "ci", "data": data[0]}})
	}()
	var answered time.Duration
	var alert bool
	tabletest.WaitUntil(t, 30*time.Second, "the press answered", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		a, ok := f.answers["q-quorum"]
		if ok && answered == 0 {
			answered, alert = time.Since(pressed), a
		}
		return ok
	})
	<-done
	if cfg.Etcd.Timeout != 0 {
		t.Fatalf("etcd.timeout %v: the measure is of the default (%v)", cfg.Etcd.Timeout, etcdstore.DefaultTimeout)
	}
	t.Logf("MEASURED quorum lost: the press's refusal reached Telegram after %v (limit 15 s); the webhook answered %d after %v",
		answered.Round(time.Millisecond), code, took.Round(time.Millisecond))
	if answered >= 15*time.Second || !alert {
		t.Errorf("the refusal came after %v (alert %v), want an alert within 15 s", answered, alert)
	}
	if code >= 200 && code < 300 {
		t.Errorf("the webhook acknowledged (%d) a press whose change was not stored", code)
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/core/table/tabletest"
)

// TestWebhookSeriesOverMetricsAddr (issue 32): a bot on Telegram by webhook (the real
// telegram-bot-api client against the fake Bot API) with metrics_addr: a Prometheus scraping that
// listener sees kontermatt_webhook_refusals_total count a post without the secret, and
// kontermatt_last_update_timestamp_seconds move from 0 to the time of the first update posted.
func TestWebhookSeriesOverMetricsAddr(t *testing.T) {
	f := newFakeBotAPI(t, copiesToken)
	hook, metricsAddr := freeAddr(t), freeAddr(t)
	env := map[string]string{"KONTERMATT_TELEGRAM_TOKEN": copiesToken, "KONTERMATT_TELEGRAM_API_URL": f.srv.URL,
		"KONTERMATT_TELEGRAM_WEBHOOK_URL": "https://bot.example.org/telegram/hook", "KONTERMATT_TELEGRAM_WEBHOOK_SECRET": copiesSecret,
		"KONTERMATT_TELEGRAM_WEBHOOK_LISTEN": hook, "KONTERMATT_METRICS_ADDR": metricsAddr,
		"KONTERMATT_DATABASE": filepath.Join(t.TempDir(), "k.db")}
	cfg, err := loadConfig("", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	logs := &tabletest.Buffer{}
	m := &Main{Config: cfg, Stdout: io.Discard, Stderr: logs}
	if err := m.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ctx, stop := context.WithCancel(t.Context())
	ran := make(chan error, 1)
	go func() { ran <- m.Run(ctx) }()
	defer func() { stop(); <-ran }()

	series := func(name string) float64 {
		t.Helper()
		resp, err := http.Get("http://" + metricsAddr + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		match := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` (\S+)$`).FindSubmatch(body)
		if match == nil {
			t.Fatalf("/metrics (%s) lacks %s", resp.Status, name)
		}
		v, _ := strconv.ParseFloat(string(match[1]), 64)
		return v
	}
	refusals, last := `kontermatt_webhook_refusals_total{platform="telegram"}`, `kontermatt_last_update_timestamp_seconds{platform="telegram"}`
	tabletest.WaitUntil(t, 10*time.Second, "the webhook listening", func() bool {
		resp, err := http.Get("http://" + hook + "/telegram/hook")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	})
	if got := series(last); got != 0 {
		t.Errorf("%s before any update: %v, want 0", last, got)
	}
	before := series(refusals) // the GET above was refused: not a POST
	req, _ := http.NewRequest(http.MethodPost, "http://"+hook+"/telegram/hook", strings.NewReader(`{"update_id":1}`))
	req.Header.Set("X-Telegram-Bot-Api-Secret-Token", "not-the-secret-at-all")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a post without the secret: %v %v", resp, err)
	}
	if got := series(refusals); got != before+1 {
		t.Errorf("%s after a post without the secret: %v, want %v", refusals, got, before+1)
	}
	sent := time.Now()
	body, _ := json.Marshal(map[string]any{"update_id": 2, "message": map[string]any{"message_id": 1, "date": sent.Unix(),
		"from": tgPlayer{7, "Ana"}.json(), "chat": map[string]any{"id": 7, "type": "private"}, "text": "/help"}})
	req, _ = http.NewRequest(http.MethodPost, "http://"+hook+"/telegram/hook", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Telegram-Bot-Api-Secret-Token", copiesSecret)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("an update: %v %v", resp, err)
	}
	if got := series(last); got < float64(sent.Unix()) || got > float64(time.Now().Unix()+1) {
		t.Errorf("%s after an update at %d: %v", last, sent.Unix(), got)
	}
}

// TestWebhookReadiness (issue 32): in webhook mode /readyz includes Telegram's view of the
// webhook (getWebhookInfo, asked now and then, here every 20 ms): the updates waiting and the
// last delivery error are shown, and a webhook Telegram has set to another URL (or none) makes
// the copy not ready, since no update reaches it. A delivery error alone does not: it would be
// the same at every copy, and taking them all out of rotation would keep Telegram from ever
// delivering again.
func TestWebhookReadiness(t *testing.T) {
	was := webhookInfoEvery
	webhookInfoEvery = 20 * time.Millisecond
	defer func() { webhookInfoEvery = was }()
	f := newFakeBotAPI(t, copiesToken)
	env := map[string]string{"KONTERMATT_TELEGRAM_TOKEN": copiesToken, "KONTERMATT_TELEGRAM_API_URL": f.srv.URL,
		"KONTERMATT_TELEGRAM_WEBHOOK_URL": "https://bot.example.org/telegram/hook", "KONTERMATT_TELEGRAM_WEBHOOK_SECRET": copiesSecret,
		"KONTERMATT_TELEGRAM_WEBHOOK_LISTEN": freeAddr(t), "KONTERMATT_DATABASE": filepath.Join(t.TempDir(), "k.db")}
	cfg, err := loadConfig("", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	m := &Main{Config: cfg, Stdout: io.Discard, Stderr: &tabletest.Buffer{}}
	if err := m.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ctx, stop := context.WithCancel(t.Context())
	ran := make(chan error, 1)
	go func() { ran <- m.Run(ctx) }()
	defer func() { stop(); <-ran }()

	ready := func() (int, map[string]string) {
		rec := httptest.NewRecorder()
		m.admin.Health.ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
		var state map[string]string
		_ = json.Unmarshal(rec.Body.Bytes(), &state)
		return rec.Code, state
	}
	set := func(change func()) {
		f.mu.Lock()
		defer f.mu.Unlock()
		change()
	}
	var code int
	var state map[string]string
	tabletest.WaitUntil(t, 10*time.Second, "Telegram's view in /readyz", func() bool {
		code, state = ready()
		return state["telegram webhook"] == "ok, 0 pending"
	})
	if code != 200 {
		t.Errorf("the webhook as Telegram sees it set: %d %v", code, state)
	}
	set(func() { f.pending, f.lastError = 3, "Connection refused" })
	tabletest.WaitUntil(t, 10*time.Second, "the delivery error shown", func() bool {
		code, state = ready()
		return strings.HasPrefix(state["telegram webhook"], "3 pending, last delivery error 1m0s ago: Connection refused")
	})
	if code != 200 {
		t.Errorf("a delivery error alone: %d %v, want still ready", code, state)
	}
	set(func() { f.webhook = "https://elsewhere.example/hook" })
	tabletest.WaitUntil(t, 10*time.Second, "not ready", func() bool {
		code, state = ready()
		return code == 503
	})
	if !strings.Contains(state["telegram webhook"], "another URL") || strings.Contains(state["telegram webhook"], "elsewhere") {
		t.Errorf("a webhook set elsewhere: %v", state)
	}
}

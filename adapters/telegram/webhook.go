package telegram

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/kontermatt/kontermatt/adapters/httpserve"
)

// Webhook makes Telegram post updates to the adapter's own HTTP server instead of the adapter
// long-polling for them: for a host behind a reverse proxy that terminates HTTPS. Each update is
// answered only after it was handled (and what it changed stored): an update the bot could not
// handle gets no 2xx, so Telegram sends it again (Bot API, setWebhook: "In case of an
// unsuccessful request ... we will repeat the request").
type Webhook struct {
	// URL is the public HTTPS address Telegram posts to; its path is the one served. Empty: long
	// polling.
	URL string
	// Listen is the address the server listens on (the proxy's upstream); default
	// 127.0.0.1:8443.
	Listen string
	// SecretToken is required: Telegram sends it with every update in the header
	// X-Telegram-Bot-Api-Secret-Token, and requests without it are refused. 1–256 characters
	// of A–Z, a–z, 0–9, _ and - (Bot API, setWebhook).
	SecretToken string
	// Listener, if set, is served instead of listening on Listen (socket activation, tests).
	Listener net.Listener
	// HTTP are the server's limits; a zero field takes the webhook's default (webhookLimits).
	HTTP httpserve.Limits
}

// webhookLimits are the webhook server's: Telegram posts one update per request, answered once
// it is handled, over at most max_connections connections at once (1-100, default 40; Bot API,
// setWebhook) from its own few addresses; the reverse proxy is on this machine unless the host
// says otherwise.
var webhookLimits = httpserve.Limits{ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
	WriteTimeout: time.Minute, IdleTimeout: 2 * time.Minute, MaxBody: maxUpdateBytes + 1,
	MaxConns: 256, MaxConnsPerAddr: 128, Proxies: httpserve.Loopback}

// secretHeader is where Telegram puts the webhook's secret token.
const secretHeader = "X-Telegram-Bot-Api-Secret-Token"

// maxUpdateBytes bounds a posted update; Telegram's are a few kilobytes.
const maxUpdateBytes = 1 << 20

// Check validates the webhook settings (New calls it; a config loader may call it first) and
// fills in the default Listen. Its errors never show the secret.
func (w *Webhook) Check() error {
	if w.URL == "" {
		return nil
	}
	u, err := url.Parse(w.URL)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("%w: url %q must be an https:// URL", errConfigWebhook, w.URL)
	}
	if n := len(w.SecretToken); n < 1 || n > 256 {
		return fmt.Errorf("%w: a secret_token of 1 to 256 characters is required", errConfigWebhook)
	}
	for _, c := range w.SecretToken {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return fmt.Errorf("%w: the secret_token may hold only A-Z, a-z, 0-9, _ and -", errConfigWebhook)
		}
	}
	if w.Listen == "" {
		w.Listen = "127.0.0.1:8443"
	}
	return nil
}

// path is the URL path the server answers on.
func (w *Webhook) path() string {
	u, _ := url.Parse(w.URL)
	if u.Path == "" {
		return "/"
	}
	return u.Path
}

// runWebhook serves the webhook until ctx ends: it listens first, then tells Telegram where to
// post (setWebhook with the secret), so the first post finds it ready.
func (a *Adapter) runWebhook(ctx, hctx context.Context) error {
	w := a.cfg.Webhook
	ln := w.Listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", w.Listen); err != nil {
			return fmt.Errorf("telegram: webhook: %w", err)
		}
	}
	mux := http.NewServeMux()
	mux.Handle(w.path(), a.webhookHandler(hctx))
	srv := httpserve.New("telegram webhook", mux, w.HTTP.Or(webhookLimits), a.log)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	p := tgbotapi.Params{"url": w.URL, "secret_token": w.SecretToken}
	_ = p.AddInterface("allowed_updates", allowedUpdates)
	if _, err := a.bot.MakeRequest("setWebhook", p); err != nil {
		_ = srv.Close()
		<-served
		return fmt.Errorf("telegram: setWebhook: %s", a.red.Err(err))
	}
	a.link.Up()
	a.setCommands()
	a.log.Info("receiving updates by webhook", "url", w.URL, "listen", ln.Addr().String())
	select {
	case <-ctx.Done():
	case err := <-served:
		if !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("telegram: webhook server: %w", err)
		}
	}
	a.stopping.Store(true)
	// Shutdown waits for the updates being handled; Telegram sends the others again later.
	sctx, cancel := context.WithTimeout(context.Background(), a.cfg.CloseTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		a.log.Warn("webhook server did not stop in time", "err", err)
		_ = srv.Close()
	}
	<-served
	a.in.wait()
	a.log.Info("stopped receiving updates")
	return nil
}

// webhookHandler takes Telegram's posts: only with the secret, one update each, answered once
// it is handled.
func (a *Adapter) webhookHandler(hctx context.Context) http.Handler {
	secret := []byte(a.cfg.Webhook.SecretToken)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "POST only", http.StatusMethodNotAllowed)
			return
		}
		if subtle.ConstantTimeCompare([]byte(r.Header.Get(secretHeader)), secret) != 1 {
			a.log.Warn("webhook request without the right secret token refused", "remote", r.RemoteAddr)
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		if a.stopping.Load() {
			http.Error(w, "stopping", http.StatusServiceUnavailable) // Telegram tries again later
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxUpdateBytes+1))
		if err != nil || len(body) > maxUpdateBytes {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		u, err := decodeUpdate(body)
		if err != nil {
			a.log.Error("a posted update the library cannot read; dropped", "err", err)
			w.WriteHeader(http.StatusOK) // sending it again would not make it readable
			return
		}
		done := make(chan struct{})
		a.dispatch(hctx, u, func() { close(done) })
		<-done
		w.WriteHeader(http.StatusOK)
	})
}

package telegram

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"sync"
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
	// MaxConnections is how many connections Telegram may open at once to post updates (Bot
	// API, setWebhook max_connections: 1-100); 0: Telegram's default, 40. Telegram posts each
	// chat's updates one at a time, in order, so more connections serve more chats at once.
	MaxConnections int
	// DropPendingUpdates has Telegram drop the updates that wait for the bot when it sets its
	// webhook (Bot API, setWebhook drop_pending_updates): what was typed or pressed while the bot
	// was down is then lost for good. Off by default.
	DropPendingUpdates bool
	// Listener, if set, is served instead of listening on Listen (socket activation, tests).
	Listener net.Listener
	// HTTP are the server's limits; a zero field takes the webhook's default (webhookLimits).
	HTTP httpserve.Limits
	// InfoEvery is how often Telegram is asked its view of the webhook (getWebhookInfo) for the
	// health check; 0: every minute.
	InfoEvery time.Duration
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
	if w.MaxConnections < 0 || w.MaxConnections > 100 {
		return fmt.Errorf("%w: max_connections %d: Telegram takes 1 to 100 (0: its default, 40)", errConfigWebhook, w.MaxConnections)
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
	p.AddNonZero("max_connections", w.MaxConnections)
	p.AddBool("drop_pending_updates", w.DropPendingUpdates)
	if _, err := a.bot.MakeRequest("setWebhook", p); err != nil {
		_ = srv.Close()
		<-served
		return fmt.Errorf("telegram: setWebhook: %s", a.red.Err(err))
	}
	a.link.Up()
	a.setCommands()
	a.log.Info("receiving updates by webhook", "url", w.URL, "listen", ln.Addr().String())
	go a.watchWebhook(ctx)
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
	a.refusals.flush(a.log)
	a.log.Info("stopped receiving updates")
	return nil
}

// refusePost counts a refused post (metrics) and logs it quietly.
func (a *Adapter) refusePost(why, remote string) {
	a.traffic.Refused()
	a.refusals.note(a.log, why, remote)
}

// refusalLogEvery is how often at most the webhook logs the posts it refused: whoever posts
// without the secret (a scanner, an attack) must not fill the log, one line per post.
const refusalLogEvery = time.Minute

// refusals logs the webhook's refused posts quietly: the first at once, the others in one line
// at most every refusalLogEvery, saying how many were refused since the line before.
type refusals struct {
	mu      sync.Mutex
	last    time.Time // the last line
	n       int       // refused since it
	why     string    // the newest refusal's reason and remote address
	remote  string
	pending *time.Timer // writes the line the count waits for
}

func (f *refusals) note(log *slog.Logger, why, remote string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	f.why, f.remote = why, remote
	if wait := refusalLogEvery - time.Since(f.last); wait > 0 {
		if f.pending == nil {
			f.pending = time.AfterFunc(wait, func() { f.flush(log) })
		}
		return
	}
	f.logLocked(log)
}

// flush writes the line the count waits for, if any.
func (f *refusals) flush(log *slog.Logger) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.pending != nil {
		f.pending.Stop()
		f.pending = nil
	}
	if f.n > 0 {
		f.logLocked(log)
	}
}

func (f *refusals) logLocked(log *slog.Logger) {
	attrs := []any{"refused", f.n, "last_reason", f.why, "last_remote", f.remote}
	if !f.last.IsZero() {
		attrs = append(attrs, "since", f.last.UTC().Format(time.RFC3339))
	}
	log.Warn("webhook posts refused", attrs...)
	f.last, f.n = time.Now(), 0
}

// unstored are the updates the webhook answered without a 2xx because their change was not
// stored, with when that happened first, so that their senders hear of it once however often
// Telegram sends them again. An update is sent for a day at most.
type unstored struct {
	mu  sync.Mutex
	ids map[int]time.Time
}

// unstoredGiveUp is how long an update whose change cannot be stored is tried again: Telegram
// would try for a day (a message's life) while the chat's later updates wait behind it, and a
// change that failed for so long (or a handler that panics each time) is a fault for the host to
// see, not to wait out. A typed move counts as late after three minutes anyway (lateAfter).
const unstoredGiveUp = 10 * time.Minute

// since gives when the update's change first failed to be stored, if it did.
func (u *unstored) since(id int) (time.Time, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	at, ok := u.ids[id]
	return at, ok
}

func (u *unstored) add(id int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	now := time.Now()
	if u.ids == nil {
		u.ids = map[int]time.Time{}
	}
	if _, ok := u.ids[id]; !ok {
		for old, at := range u.ids {
			if now.Sub(at) > 25*time.Hour {
				delete(u.ids, old)
			}
		}
		u.ids[id] = now
	}
}

func (u *unstored) remove(id int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.ids, id)
}

// webhookHandler takes Telegram's posts: only with the secret, one update each, answered once
// it is handled.
func (a *Adapter) webhookHandler(hctx context.Context) http.Handler {
	secret := []byte(a.cfg.Webhook.SecretToken)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			a.refusePost("not a POST", r.RemoteAddr)
			http.Error(w, "POST only", http.StatusMethodNotAllowed)
			return
		}
		if subtle.ConstantTimeCompare([]byte(r.Header.Get(secretHeader)), secret) != 1 {
			a.refusePost("without the right secret token", r.RemoteAddr)
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		if a.stopping.Load() {
			http.Error(w, "stopping", http.StatusServiceUnavailable) // Telegram tries again later
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxUpdateBytes+1))
		if err != nil || len(body) > maxUpdateBytes {
			a.refusePost("body unreadable or too large", r.RemoteAddr)
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		u, err := decodeUpdate(body)
		if err != nil {
			a.log.Error("a posted update the library cannot read; dropped", "err", err)
			w.WriteHeader(http.StatusOK) // sending it again would not make it readable
			return
		}
		first, again := a.unstored.since(u.UpdateID)
		u.again = again
		done := make(chan error, 1)
		a.dispatch(hctx, u, func(err error) { done <- err })
		err = <-done
		switch {
		case err == nil:
			a.unstored.remove(u.UpdateID)
		case again && time.Since(first) >= unstoredGiveUp:
			// Telegram would go on for a day, and its chat's later updates wait behind it.
			a.log.Error("an update's change could not be stored for a long time; dropped", "update", u.UpdateID,
				"for", unstoredGiveUp, "err", err)
			a.unstored.remove(u.UpdateID)
		default:
			// Not stored: no 2xx, so Telegram sends it again (WebhookActor.cpp: at once, then
			// after 2, 4, 8 ... seconds, up to a minute or two between tries, until the update
			// expires: a day for a message, 150 s for a press).
			level := slog.LevelWarn
			if again {
				level = slog.LevelDebug
			}
			a.log.Log(r.Context(), level, "an update's change was not stored; Telegram sends it again", "update", u.UpdateID, "err", err)
			a.unstored.add(u.UpdateID)
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
}

package telegram

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// The library builds every request URL as <endpoint>/bot<TOKEN>/<method>, and a failed request's
// error text (a *url.Error) holds that URL. Nothing here may print such text unredacted.

const redacted = "<redacted>"

// redactor hides one bot token in any text: as typed, percent-encoded, and its secret half.
type redactor struct{ olds []string }

// Other secrets (the webhook's secret token) are hidden the same way.
func newRedactor(token string, secrets ...string) *redactor {
	r := &redactor{}
	add := func(s string) {
		if len(s) >= 6 && !slices.Contains(r.olds, s) {
			r.olds = append(r.olds, s)
		}
	}
	for _, s := range append([]string{token}, secrets...) {
		add(s)
		add(url.PathEscape(s))
		add(url.QueryEscape(s))
	}
	if _, secret, ok := strings.Cut(token, ":"); ok && len(secret) >= 8 {
		add(secret)
	}
	// Longest first, so the whole token goes before its secret half.
	slices.SortFunc(r.olds, func(a, b string) int { return len(b) - len(a) })
	return r
}

func (r *redactor) String(s string) string {
	for _, o := range r.olds {
		s = strings.ReplaceAll(s, o, redacted)
	}
	return s
}

// Err gives an error's text with the token hidden; "" for nil.
func (r *redactor) Err(err error) string {
	if err == nil {
		return ""
	}
	return r.String(err.Error())
}

// libLogger receives the library's own log lines (tgbotapi.SetLogger is process-wide). It hides
// every token an adapter ever registered and passes the line to the adapters running now.
type libLogger struct {
	mu    sync.Mutex
	known []*redactor // every token seen, kept after Close: a late library goroutine may still log
	live  []*Adapter
}

var (
	theLibLogger = &libLogger{}
	setLibLogger sync.Once
)

func (l *libLogger) register(a *Adapter) {
	setLibLogger.Do(func() { _ = tgbotapi.SetLogger(theLibLogger) })
	l.mu.Lock()
	defer l.mu.Unlock()
	l.known = append(l.known, a.red)
	l.live = append(l.live, a)
}

func (l *libLogger) unregister(a *Adapter) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.live = slices.DeleteFunc(l.live, func(x *Adapter) bool { return x == a })
}

func (l *libLogger) Println(v ...any)               { l.write(strings.TrimSuffix(fmt.Sprintln(v...), "\n")) }
func (l *libLogger) Printf(format string, v ...any) { l.write(fmt.Sprintf(format, v...)) }

func (l *libLogger) write(line string) {
	l.mu.Lock()
	for _, r := range l.known {
		line = r.String(line)
	}
	live := slices.Clone(l.live)
	l.mu.Unlock()
	for _, a := range live {
		level := slog.LevelWarn
		// A poll cut short by shutdown is expected; so is the library's "retrying" line after it.
		if a.stopping.Load() {
			level = slog.LevelDebug
		}
		a.log.Log(context.Background(), level, "telegram library", "line", line)
	}
}

// apiClient is the HTTP client the library uses. It ties the long poll to Run's context (the
// library cannot cancel a request in flight) and bounds every other request.
type apiClient struct {
	hc          *http.Client
	timeout     time.Duration // any request but the long poll
	pollTimeout time.Duration

	mu   sync.Mutex
	poll context.Context
}

func newAPIClient(hc *http.Client, timeout, pollTimeout time.Duration) *apiClient {
	return &apiClient{hc: hc, timeout: timeout, pollTimeout: pollTimeout, poll: context.Background()}
}

func (c *apiClient) setPollContext(ctx context.Context) {
	c.mu.Lock()
	c.poll = ctx
	c.mu.Unlock()
}

// Do implements tgbotapi.HTTPClient.
func (c *apiClient) Do(req *http.Request) (*http.Response, error) {
	method := path.Base(req.URL.Path)
	if method != "getUpdates" {
		ctx, cancel := context.WithTimeout(req.Context(), c.timeout)
		resp, err := c.hc.Do(req.WithContext(ctx))
		if err != nil {
			cancel()
			return nil, err
		}
		resp.Body = &cancelBody{ReadCloser: resp.Body, cancel: cancel}
		return resp, nil
	}
	c.mu.Lock()
	base := c.poll
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(base, c.pollTimeout+15*time.Second)
	defer cancel()
	resp, err := c.hc.Do(req.WithContext(ctx))
	if err != nil {
		if base.Err() != nil {
			// Run is stopping: an empty answer ends the poll loop at once, without an error (and
			// its URL) in the log.
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
				Body: io.NopCloser(strings.NewReader(`{"ok":true,"result":[]}`)), Request: req}, nil
		}
		return nil, err
	}
	// The body is read whole before the poll's context ends.
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, nil
}

type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

package telegram

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kontermatt/kontermatt/core/table"
)

// memListener is a network listener in memory: the webhook's server accepts the fake's
// connections through it, inside a synctest bubble.
type memListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func newMemListener() *memListener {
	return &memListener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

func (l *memListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *memListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *memListener) Addr() net.Addr { return memAddr{} }

type memAddr struct{}

func (memAddr) Network() string { return "mem" }
func (memAddr) String() string  { return "127.0.0.1:8443" }

// client reaches the listener whatever the URL says: the reverse proxy in front of the bot.
func (l *memListener) client() *http.Client {
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		a, b := net.Pipe()
		select {
		case l.conns <- b:
			return a, nil
		case <-l.closed:
			return nil, &net.OpError{Op: "dial", Err: errCut}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}}
	return &http.Client{Transport: proxy{tr}}
}

// proxy ends TLS as a reverse proxy does: the bot's server speaks plain HTTP behind it.
type proxy struct{ next http.RoundTripper }

func (p proxy) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.URL.Scheme = "http"
	return p.next.RoundTrip(r)
}

const (
	hookURL    = "https://bot.example.org/tg/hook"
	hookSecret = "kmHOOK-secret_8842-do-not-log"
)

func withWebhook(ln net.Listener) func(*Config) {
	return func(c *Config) {
		c.Webhook = Webhook{URL: hookURL, SecretToken: hookSecret, Listener: ln}
	}
}

// Webhook mode: the bot sets its webhook with the secret, Telegram posts the updates, and each
// is acknowledged only after what it did is stored. A post without the secret is refused.
func TestWebhook(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, store, logs := newFake(testToken), table.NewMemStore(), &logBuf{}
		f.setStarted(alice.ID)
		f.setStarted(bob.ID)
		ln := newMemListener()
		f.hookClient = ln.client()
		t.Cleanup(f.stopWebhook) // after the bot stopped
		var opened string
		f.onHookAck = func(id int) {
			if id == 1 { // the /new: its table is stored before Telegram hears back
				opened = e2eTableAt(store)
			}
		}
		e := startEnv(t, f, store, logs, withWebhook(ln))
		var set *call
		for _, c := range f.Calls() {
			switch c.Method {
			case "setWebhook":
				set = &c
			case "getUpdates", "deleteWebhook":
				t.Errorf("%s in webhook mode", c.Method)
			}
		}
		if set == nil || set.Params["url"] != hookURL || set.Params["secret_token"] != hookSecret ||
			!strings.Contains(set.Params["allowed_updates"], "my_chat_member") {
			t.Fatalf("setWebhook: %+v", set)
		}

		seatAll(t, f, "timer=fast stripes=3", alice, bob)
		if opened == "" {
			t.Error("the /new was acknowledged before its table was stored")
		}
		d := newDriver(t, f, 61)
		d.playUntil([]tgUser{alice, bob}, time.Hour, func() bool { return d.moves >= 6 })
		if p := f.pending(); len(p) > 0 {
			t.Errorf("updates %v not acknowledged", p)
		}
		// An update is acknowledged once handled: while its handling waits, Telegram holds it.
		release := f.stallCalls("getChatMember")
		f.command(olga, group, 0, "/stop")
		settle(5 * time.Second)
		if p := f.pending(); len(p) != 1 {
			t.Errorf("while the /stop is handled Telegram holds %v, want it", p)
		}
		release()
		settle(5 * time.Second)
		if p := f.pending(); len(p) > 0 {
			t.Errorf("updates %v not acknowledged after they were handled", p)
		}

		// Someone who knows the address but not the secret.
		for _, secret := range []string{"", "wrong"} {
			body := []byte(`{"update_id":900,"message":{"message_id":1,"date":1,"chat":{"id":-1009,"type":"supergroup"},` +
				`"from":{"id":7,"is_bot":false,"first_name":"Eve"},"text":"/new@` + botUsername + `",` +
				`"entities":[{"type":"bot_command","offset":0,"length":14}]}}`)
			req, _ := http.NewRequest(http.MethodPost, hookURL, bytes.NewReader(body))
			if secret != "" {
				req.Header.Set(secretHeader, secret)
			}
			resp, err := f.hookClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode/100 == 2 {
				t.Errorf("a post with secret %q was taken: %d", secret, resp.StatusCode)
			}
		}
		settle(3 * time.Second)
		if id := e.svc.TableAt(placeOf(-1009, 0)); id != "" {
			t.Errorf("a post without the secret opened table %s", id)
		}
		e.close()
		f.hookClient.CloseIdleConnections()
		if s := logs.String(); strings.Contains(s, hookSecret) {
			t.Error("the webhook's secret appears in the logs")
		}
		checkClean(t, f, logs)
	})
}

// e2eTableAt gives the ID of the test group's table in the store, or "".
func e2eTableAt(store *table.MemStore) string {
	id := ""
	store.Tables(func(tid string, state []byte) error {
		if strings.Contains(string(state), `"`+dest(group)+`"`) {
			id = tid
		}
		return nil
	})
	return id
}

// The webhook's settings are checked before anything starts, and the secret never shows in an
// error.
func TestWebhookConfig(t *testing.T) {
	for _, w := range []Webhook{
		{URL: "http://bot.example.org/hook", SecretToken: hookSecret},
		{URL: "https://bot.example.org/hook"},
		{URL: "https://bot.example.org/hook", SecretToken: "has spaces " + hookSecret},
		{URL: "https://bot.example.org/hook", SecretToken: strings.Repeat("x", 257)},
	} {
		cfg := Config{Token: testToken, KV: table.NewMemStore(), Webhook: w}
		_, err := New(cfg)
		if err == nil {
			t.Errorf("New accepted %+v", w)
			continue
		}
		if strings.Contains(err.Error(), hookSecret) {
			t.Errorf("the error shows the secret: %v", err)
		}
	}
}

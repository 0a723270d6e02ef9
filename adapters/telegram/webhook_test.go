package telegram

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage/mem"
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
	h := &hookProxy{}
	h.to.Store(l)
	return h.client()
}

// hookProxy is the reverse proxy in front of the bot: the fake posts to one URL, and the proxy
// passes each post to the process listening now (to), which a test that kills and starts the
// bot again changes. A post while none listens (a killed process's listener is closed) fails,
// and Telegram posts it again later.
type hookProxy struct {
	to atomic.Pointer[memListener]
	// restarts: the process behind may change, so no connection is kept for the next post.
	restarts bool
}

func (h *hookProxy) client() *http.Client {
	tr := &http.Transport{DisableKeepAlives: h.restarts, DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		l := h.to.Load()
		if l == nil {
			return nil, &net.OpError{Op: "dial", Err: errCut}
		}
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
		f, store, logs, e, _ := webhookEnv(t)
		var opened string
		f.mu.Lock()
		f.onHookAck = func(id int) {
			if id == 1 { // the /new: its table is stored before Telegram hears back
				opened = e2eTableAt(store)
			}
		}
		f.mu.Unlock()
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
func e2eTableAt(store *mem.Store) string {
	ctx := context.Background()
	id := ""
	store.Tables(ctx, func(tid string, state []byte) error {
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
		{URL: "https://bot.example.org/hook", SecretToken: hookSecret, MaxConnections: 101},
		{URL: "https://bot.example.org/hook", SecretToken: hookSecret, MaxConnections: -1},
	} {
		cfg := Config{Token: testToken, KV: mem.New(), Webhook: w}
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

// webhookEnv starts a bot in webhook mode inside the calling synctest bubble, with alice and bob
// able to get private messages.
func webhookEnv(t testing.TB, tweak ...func(*Config)) (*fakeAPI, *mem.Store, *tabletest.Buffer, *env, *memListener) {
	t.Helper()
	f, store, logs := newFake(testToken), mem.New(), &tabletest.Buffer{}
	f.setStarted(alice.ID)
	f.setStarted(bob.ID)
	ln := newMemListener()
	f.hookClient = ln.client()
	t.Cleanup(f.stopWebhook) // after the bot stopped
	e := startEnv(t, f, store, logs, append([]func(*Config){withWebhook(ln)}, tweak...)...)
	return f, store, logs, e, ln
}

// hookStatuses gives the webhook's answers to the posts of one update, in order.
func hookStatuses(f *fakeAPI, update int) []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []int
	for _, h := range []*fakeHook{f.hook} {
		if h == nil {
			continue
		}
		for _, p := range h.posts {
			if p.update == update {
				out = append(out, p.status)
			}
		}
	}
	return out
}

// joins counts the table's joins by a user.
func joins(store *mem.Store, tableID string, u tgUser) int {
	n := 0
	for _, l := range store.Log(tableID) {
		if l.Verb == api.VerbJoin && l.Actor == fmt.Sprintf("tg:%d", u.ID) {
			n++
		}
	}
	return n
}

// panicOnce is the service, but its next Handle panics; with always, every /rules does.
type panicOnce struct {
	*table.Service
	armed  atomic.Bool
	always bool
}

func (p *panicOnce) Handle(ctx context.Context, cmd api.Command) ([]api.Message, error) {
	if p.armed.CompareAndSwap(true, false) || p.always && cmd.Verb == api.VerbRules {
		panic("a handler's bug")
	}
	return p.Service.Handle(ctx, cmd)
}

// An update whose change could not be stored is not acknowledged: the webhook answers 500, so
// Telegram sends it again (at once, then 2 s, 4 s later ...), and once the store works it is
// applied, once. Its sender hears of the failure once, not at every retry. A handler that panics
// gets no 2xx either. An update that was stored but whose answer was lost comes again and is not
// applied twice.
func TestWebhookNotStoredIsSentAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, store, logs, e, _ := webhookEnv(t)
		f.command(alice, group, 0, "/new@"+botUsername+" timer=none")
		settle(3 * time.Second)
		tableID := tableOf(t, f)

		// A press while the disk is full: three commits fail.
		store.Fail, store.FailN = errors.New("disk full"), 2
		press := mustPress(t, f, bob, group, api.VerbJoin, "")
		id := lastUpdateID(f)
		settle(time.Minute)
		if got := hookStatuses(f, id); len(got) != 4 || got[0] != 500 || got[3] != 200 {
			t.Errorf("the webhook answered the press %v, want 500 until stored, then 200", got)
		}
		if n := joins(store, tableID, bob); n != 1 {
			t.Errorf("Bob joined %d times, want once", n)
		}
		if text, _ := answerOf(t, f, press); text != i18n.T("en", "err.internal") {
			t.Errorf("Bob's press was answered %q, want the failure", text)
		}
		_, failedAnswers := countCalls(f.Calls(), "answerCallbackQuery", 0)
		if failedAnswers > 0 {
			t.Errorf("%d answers to presses refused: a press was answered more than once", failedAnswers)
		}

		// A typed command while the disk is full: its group is told once.
		store.Fail, store.FailN = errors.New("disk full"), 1
		before := len(f.messages(group))
		cmd := f.command(carla, group, 0, "/join")
		settle(time.Minute)
		told := 0
		for _, m := range f.messages(group)[before:] {
			if m.ReplyTo == cmd.ID && m.Text == i18n.T("en", "err.internal") {
				told++
			}
		}
		if told != 1 || joins(store, tableID, carla) != 1 {
			t.Errorf("Carla was told %d times of the failure and joined %d times, want once each", told, joins(store, tableID, carla))
		}

		// A handler that panics.
		svc := &panicOnce{Service: e.svc}
		svc.armed.Store(true)
		e.a.Attach(svc)
		f.command(dan, group, 0, "/join")
		id = lastUpdateID(f)
		settle(time.Minute)
		if got := hookStatuses(f, id); len(got) != 2 || got[0]/100 == 2 || got[1] != 200 {
			t.Errorf("the webhook answered a post whose handler panicked %v, want no 2xx, then 200", got)
		}
		if n := joins(store, tableID, dan); n != 1 {
			t.Errorf("Dan joined %d times, want once", n)
		}

		// An update that fails every time is given up after ten minutes, not a day: the chat's
		// later updates, waiting behind it, come.
		svc.always = true
		f.command(ursula, group, 0, "/rules@"+botUsername)
		poison := lastUpdateID(f)
		help := f.command(ursula, group, 0, "/help@"+botUsername) // a later typed move would come too late
		settle(15 * time.Minute)
		if got := hookStatuses(f, poison); len(got) < 5 || got[len(got)-1] != 200 {
			t.Errorf("the webhook answered an update that always fails %v, want 500s, then 200 after ten minutes", got)
		}
		answered := false
		for _, m := range f.messages(group) {
			answered = answered || m.ReplyTo == help.ID
		}
		if !answered {
			t.Error("Ursula's /help behind an update that always fails got no answer")
		}
		e.a.Attach(e.svc)

		// Stored, but the answer never reached Telegram: the update comes again and counts once.
		f.mu.Lock()
		f.hookLose = 1
		f.mu.Unlock()
		mustPress(t, f, dan, group, api.VerbLeave, "")
		id = lastUpdateID(f)
		settle(time.Minute)
		if got := hookStatuses(f, id); len(got) != 2 {
			t.Errorf("the fake posted the press %d times, want twice (the first answer lost)", len(got))
		}
		leaves := 0
		for _, l := range store.Log(tableID) {
			if l.Verb == api.VerbLeave {
				leaves++
			}
		}
		if leaves != 1 {
			t.Errorf("the press delivered twice left %d times", leaves)
		}
		e.close()
		checkClean(t, f, logs)
	})
}

// The webhook's max_connections and drop_pending_updates go to setWebhook: with the drop, what
// waited while the bot was down is not applied.
func TestWebhookSettings(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, store, logs := newFake(testToken), mem.New(), &tabletest.Buffer{}
		ln := newMemListener()
		f.hookClient = ln.client()
		t.Cleanup(f.stopWebhook)
		f.command(alice, group, 0, "/new@"+botUsername) // while the bot is down
		e := startEnv(t, f, store, logs, withWebhook(ln), func(c *Config) {
			c.Webhook.MaxConnections, c.Webhook.DropPendingUpdates = 10, true
		})
		settle(10 * time.Second)
		var set call
		for _, c := range f.Calls() {
			if c.Method == "setWebhook" {
				set = c
			}
		}
		if set.Params["max_connections"] != "10" || set.Params["drop_pending_updates"] != "true" {
			t.Errorf("setWebhook: %v", set.Params)
		}
		f.mu.Lock()
		maxConn := f.hook.max
		f.mu.Unlock()
		if maxConn != 10 {
			t.Errorf("Telegram opens up to %d connections, want 10", maxConn)
		}
		if id := e.svc.TableAt(placeOf(group, 0)); id != "" {
			t.Errorf("an update dropped at setWebhook opened table %s", id)
		}
		e.close()
		checkClean(t, f, logs)
	})
}

// Refused posts are logged in one WARN line a minute at most, which says how many were refused
// since the line before: 200 posts without the secret make two lines, not 200.
func TestWebhookRefusalsLogQuietly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, _, logs, e, _ := webhookEnv(t)
		for i := range 200 {
			req, _ := http.NewRequest(http.MethodPost, hookURL, strings.NewReader(`{"update_id":1}`))
			if i%2 == 1 {
				req.Header.Set(secretHeader, "wrong")
			}
			resp, err := f.hookClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden {
				t.Fatalf("a post without the secret: %d", resp.StatusCode)
			}
		}
		settle(2 * time.Minute)
		var lines []string
		for line := range strings.SplitSeq(logs.String(), "\n") {
			if strings.Contains(line, "refused") && strings.Contains(line, "webhook") {
				lines = append(lines, line)
			}
		}
		if len(lines) != 2 || !strings.Contains(lines[0], "refused=1 ") || !strings.Contains(lines[1], "refused=199 ") {
			t.Errorf("200 refused posts logged as:\n%s", strings.Join(lines, "\n"))
		}
		e.close()
		f.hookClient.CloseIdleConnections()
		checkClean(t, f, logs)
	})
}

// A keep-alive connection that stays idle is closed by the webhook's server, so idle clients
// cannot hold its connections (and file descriptors) for ever.
func TestWebhookClosesIdleConnections(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, _, logs, e, ln := webhookEnv(t)
		client, server := net.Pipe()
		ln.conns <- server
		fmt.Fprintf(client, "GET /tg/hook HTTP/1.1\r\nHost: bot.example.org\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(client), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		closed := make(chan struct{})
		go func() {
			io.Copy(io.Discard, client) // returns once the server closes the connection
			close(closed)
		}()
		settle(5 * time.Minute)
		select {
		case <-closed:
		default:
			t.Error("an idle keep-alive connection is still open after 5 minutes")
		}
		client.Close()
		e.close()
		checkClean(t, f, logs)
	})
}

// TestWebhookUnavailableIsSentAgain (issue 32): with the store out of reach (etcd without a
// quorum: table.ErrUnavailable, refused with err.unavailable) a press is not acknowledged either:
// the webhook answers 500 until it is stored, so Telegram sends it again, and it is applied once.
func TestWebhookUnavailableIsSentAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, store, _, _, _ := webhookEnv(t)
		f.command(alice, group, 0, "/new@"+botUsername+" timer=none")
		settle(3 * time.Second)
		tableID := tableOf(t, f)
		store.Fail, store.FailN = fmt.Errorf("no quorum: %w", table.ErrUnavailable), 2
		press := mustPress(t, f, bob, group, api.VerbJoin, "")
		id := lastUpdateID(f)
		settle(time.Minute)
		if got := hookStatuses(f, id); len(got) < 2 || got[0] != 500 || got[len(got)-1] != 200 {
			t.Errorf("the webhook answered the press %v, want 500 until stored, then 200", got)
		}
		if n := joins(store, tableID, bob); n != 1 {
			t.Errorf("Bob joined %d times, want once", n)
		}
		if text, _ := answerOf(t, f, press); text != i18n.T("en", "err.unavailable") {
			t.Errorf("Bob's press was answered %q, want the refusal", text)
		}
	})
}

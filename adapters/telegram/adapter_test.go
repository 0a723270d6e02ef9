package telegram

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kontermatt/kontermatt/adapters/internal/chat"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage/mem"
)

func TestTokenNeverLogged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, store, logs := newFake(testToken), mem.New(), &tabletest.Buffer{}

		// getMe fails at the transport: the error names the URL, token and all. New goes on (a
		// platform down at start is tried again); Run fails, to be tried again.
		f.failNet("getMe", 2)
		a, err := New(testConfig(f, store, logs))
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		svc := tabletest.New(table.Config{Store: store})
		defer svc.Close() // the service runs the coach's workers
		a.Attach(svc)
		err = a.Run(t.Context())
		var se *chat.StartError
		if !errors.As(err, &se) || se.Permanent() {
			t.Fatalf("Run while Telegram is unreachable: %v, want a StartError to retry", err)
		}
		if s := err.Error(); strings.Contains(s, testSecret) || !strings.Contains(s, redacted) {
			t.Errorf("Run's error is not redacted: %q", s)
		}
		if s := a.Connected(); s == nil || strings.Contains(s.Error(), testSecret) {
			t.Errorf("the health check says %v", s)
		}
		a.Close()

		// The library logs failed polls itself, with the URL.
		f.failNet("getUpdates", 2)
		e := startEnv(t, f, store, logs)
		settle(10 * time.Second)
		f.setStarted(alice.ID)
		f.command(alice, alice.ID, 0, "/help")
		settle(3 * time.Second)
		if len(f.messages(alice.ID)) != 1 {
			t.Error("no answer to /help after the poll recovered")
		}
		// A send that fails at the transport is logged by the adapter.
		f.failNet("sendMessage", 4)
		f.command(alice, alice.ID, 0, "/rules")
		settle(30 * time.Second)
		e.close()
		out := logs.String()
		if !strings.Contains(out, "failed to get updates") || !strings.Contains(out, "/bot"+redacted+"/getUpdates") {
			t.Errorf("the library's poll errors were not logged (redacted):\n%s", out)
		}
		if !strings.Contains(out, "/bot"+redacted+"/sendMessage") {
			t.Errorf("the failed send was not logged (redacted):\n%s", out)
		}
		checkClean(t, f, logs)
	})
}

func TestRedactor(t *testing.T) {
	r := newRedactor("123:ABCdefGHIjkl")
	for _, in := range []string{
		`Post "https://api.telegram.org/bot123:ABCdefGHIjkl/getMe": EOF`,
		"bot123%3AABCdefGHIjkl/x",
		"secret ABCdefGHIjkl alone",
	} {
		out := r.String(in)
		if strings.Contains(out, "ABCdefGHIjkl") || !strings.Contains(out, redacted) {
			t.Errorf("%q → %q", in, out)
		}
	}
	if got := r.Err(errors.New("no token here")); got != "no token here" {
		t.Errorf("clean text changed: %q", got)
	}
}

// TestRealHTTPServer runs the bot against the fake over real sockets, and checks that Run returns
// promptly although a long poll is in flight.
func TestRealHTTPServer(t *testing.T) {
	f, store, logs := newFake(testToken), mem.New(), &tabletest.Buffer{}
	srv := httptest.NewServer(f)
	defer srv.Close()
	cfg := testConfig(f, store, logs)
	cfg.APIURL, cfg.Client = srv.URL, nil
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	svc := tabletest.New(table.Config{Store: store, Outboxes: map[string]table.Outbox{Platform: a}, Robots: randomRobots})
	a.Attach(svc)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	f.setStarted(alice.ID)
	f.command(alice, alice.ID, 0, "/help@"+botUsername)
	deadline := time.Now().Add(10 * time.Second)
	for len(f.messages(alice.ID)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no reply over HTTP")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := f.messages(alice.ID)[0].Text; !strings.Contains(got, "/new") {
		t.Errorf("help reply: %q", got)
	}
	var methods []string
	for _, c := range f.Calls() {
		methods = append(methods, c.Method)
	}
	joined := strings.Join(methods, " ")
	if !strings.HasPrefix(joined, "getMe deleteWebhook setMyCommands setMyCommands setMyCommands setMyCommands setMyCommands getUpdates") {
		t.Errorf("start-up calls: %s", joined)
	}
	langs := map[string]bool{}
	for _, c := range f.Calls() {
		if c.Method == "setMyCommands" {
			lang := c.Params["language_code"]
			langs[lang] = true
			// The menu shows the catalog's short texts, the default one in English.
			want := `{"command":"play","description":"` + i18n.T(i18n.Pick(lang), "cmd.play") + `"}`
			if !strings.Contains(c.Params["commands"], want) {
				t.Errorf("command list for %q without %s: %s", lang, want, c.Params["commands"])
			}
		}
	}
	for _, l := range []string{"", "en", "lb", "de", "fr"} {
		if !langs[l] {
			t.Errorf("no command list for language %q", l)
		}
	}
	time.Sleep(50 * time.Millisecond) // a long poll (50 s) is now in flight
	start := time.Now()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	t.Logf("Run returned %v after cancel", time.Since(start).Round(time.Millisecond))
	svc.Close()
	a.Close()
	checkClean(t, f, logs)
}

func TestMarkupRows(t *testing.T) {
	var row []api.Button
	for i := range 10 {
		row = append(row, api.Button{Label: string(rune('A' + i)), Action: api.Action{Verb: api.VerbPlay, Table: "t1", Seq: 3, Arg: "QS"}})
	}
	kb, err := markup([][]api.Button{row, row[:2]}, urlButton{"https://t.me/x?start=t1", "Start"}, webAppButton{"", "none"},
		webAppButton{"https://table.example/?table=t1", "Play"})
	if err != nil {
		t.Fatal(err)
	}
	var sizes []int
	for _, r := range kb.InlineKeyboard {
		sizes = append(sizes, len(r))
	}
	if len(sizes) != 5 || sizes[0] != 8 || sizes[1] != 2 || sizes[2] != 2 || sizes[3] != 1 || sizes[4] != 1 {
		t.Errorf("row sizes %v, want [8 2 2 1 1]", sizes)
	}
	if w := kb.InlineKeyboard[4][0].WebApp; w == nil || w.URL != "https://table.example/?table=t1" || kb.InlineKeyboard[4][0].URL != nil {
		t.Errorf("web_app button %+v", kb.InlineKeyboard[4][0])
	}
	if d := *kb.InlineKeyboard[0][0].CallbackData; d != "km|play|t1|3|QS" {
		t.Errorf("callback data %q", d)
	}
	if u := kb.InlineKeyboard[3][0].URL; u == nil || *u != "https://t.me/x?start=t1" {
		t.Errorf("link button %v", u)
	}
	if kb, err := markup(nil, urlButton{}); kb != nil || err != nil {
		t.Errorf("no buttons: %v %v", kb, err)
	}
	long := api.Button{Label: "x", Action: api.Action{Verb: api.VerbPlay, Table: strings.Repeat("t", 70)}}
	if _, err := markup([][]api.Button{{long}}); err == nil {
		t.Error("over-long callback data was not refused")
	}
}

func TestCompactAndClip(t *testing.T) {
	hand := "🂠 Your hand · game 12\nTrump: ♥ hearts\nQ♠  K♥  9♦  10♣  A♣  J♥\n▶ Your turn.\nTrick: Alexandrina Vanderbilt 10♥ · Bartholomew Fitzgerald-Smythe K♥ · Christopher Columbus 9♥"
	got := compact([]string{hand}, alertMax)
	if len16(got) > alertMax || !strings.Contains(got, "Q♠  K♥") {
		t.Errorf("compact hand (%d): %q", len16(got), got)
	}
	if got := compact([]string{"a\n\n b ", "c"}, 200); got != "a\nb\nc" {
		t.Errorf("compact: %q", got)
	}
	if got := clip16(strings.Repeat("🂠", 10), 5); len16(got) > 5 || !strings.HasSuffix(got, "…") {
		t.Errorf("clip16 of astral runes: %q (%d units)", got, len16(got))
	}
	if got := clip16("short", 10); got != "short" {
		t.Errorf("clip16 changed a short text: %q", got)
	}
}

// TestLimiterWindow checks the group limiter never lets more than n through in any window, at
// any pace of demand.
func TestLimiterWindow(t *testing.T) {
	for _, n := range []int{20, 5, 1} {
		lim := newLimiter(n, time.Minute, 3)
		now := time.Unix(0, 0)
		var at []time.Time
		for step := 0; step < 20000; step++ {
			now = now.Add(time.Duration(step%7) * 100 * time.Millisecond)
			if lim.AllowN(now, 1) {
				at = append(at, now)
			}
		}
		j := 0
		for i := range at {
			for at[i].Sub(at[j]) >= time.Minute {
				j++
			}
			if i-j+1 > n {
				t.Fatalf("n=%d: %d events in a minute", n, i-j+1)
			}
		}
		if len(at) < 10 {
			t.Fatalf("n=%d: limiter let only %d through", n, len(at))
		}
	}
}

func TestRunNeedsAttach(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, store, logs := newFake(testToken), mem.New(), &tabletest.Buffer{}
		a, err := New(testConfig(f, store, logs))
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		if err := a.Run(context.Background()); err == nil {
			t.Error("Run without a service did not fail")
		}
		svc := tabletest.New(table.Config{Store: store, Outboxes: map[string]table.Outbox{Platform: a}})
		defer svc.Close()
		a.Attach(svc)
		f.failNet("deleteWebhook", 1)
		if err := a.Run(context.Background()); err == nil || strings.Contains(err.Error(), testSecret) {
			t.Errorf("Run with a failing deleteWebhook: %v", err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- a.Run(ctx) }()
		synctest.Wait()
		if err := a.Run(ctx); err == nil {
			t.Error("a second Run did not fail")
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run after a failed start: %v", err)
		}
		if _, err := New(Config{KV: store}); err == nil {
			t.Error("New without a token did not fail")
		}
		cfg := testConfig(f, store, logs)
		cfg.Token = "1:wrong-token-value"
		// A refused token: Run says so, and that no retry can mend it.
		wrong, err := New(cfg)
		if err != nil {
			t.Fatalf("New with a wrong token: %v", err)
		}
		wrongSvc := tabletest.New(table.Config{Store: store})
		defer wrongSvc.Close()
		wrong.Attach(wrongSvc)
		err = wrong.Run(context.Background())
		var se *chat.StartError
		if !errors.As(err, &se) || !se.Permanent() || !strings.Contains(err.Error(), "Unauthorized") {
			t.Errorf("Run with a wrong token: %v", err)
		}
		wrong.Close()
	})
}

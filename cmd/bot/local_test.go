package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/kontermatt/kontermatt/core/table/tabletest"
)

var printedLink = regexp.MustCompile(`http://127\.0\.0\.1:[0-9]+/#link=[A-Za-z0-9_.-]+`)

// bot -web, the newcomer's second command: with no chat token it serves the web table on this
// machine's loopback and prints the link; the link opens the page, gives a session, and the
// table's socket shows the person's hand at a table with three computer players. A second run
// on the same database resumes that match.
func TestWebFlagServesALocalTable(t *testing.T) {
	db := filepath.Join(t.TempDir(), "k.db")
	if code, _, stderr := runIn("", "-web", "-humans", "4"); code != 2 || !strings.Contains(stderr, "-web is a table for one player") {
		t.Fatalf("-web -humans 4: exit %d, %q", code, stderr)
	}
	var tableID string
	for run := 1; run <= 2; run++ {
		cfg, err := loadConfig("", func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		cfg.Database = db
		out := &tabletest.Buffer{}
		fs, _, _ := serveFlags(&Main{})
		if fs.Lookup("web") == nil {
			t.Fatal("no -web flag")
		}
		m := &Main{Config: cfg, Terminal: TerminalFlags{Humans: 1, Level: "easy", Lang: "de", Web: true},
			Stdin: strings.NewReader(""), Stdout: out, Stderr: io.Discard}
		ctx, cancel := context.WithCancel(context.Background())
		if err := m.Open(ctx); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- m.Run(ctx) }()
		link := printedLink.FindString(out.String())
		if link == "" {
			t.Fatalf("run %d printed no link on this machine: %q", run, out.String())
		}
		u, _ := url.Parse(link)
		base := "http://" + u.Host
		var resp *http.Response
		for i := 0; i < 100; i++ {
			if resp, err = http.Get(base + "/"); err == nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("the page does not open: %v", err)
		}
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(page), "app.js") {
			t.Fatalf("the page: %s", page)
		}
		body, _ := json.Marshal(map[string]string{"link": strings.TrimPrefix(u.Fragment, "link=")})
		resp, err = http.Post(base+"/api/session", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		var sess map[string]string
		_ = json.NewDecoder(resp.Body).Decode(&sess)
		resp.Body.Close()
		if sess["session"] == "" || sess["lang"] != "de" {
			t.Fatalf("the link gives no session: %v", sess)
		}
		c, _, err := websocket.Dial(ctx, "ws://"+u.Host+"/ws", nil)
		if err != nil {
			t.Fatal(err)
		}
		hello, _ := json.Marshal(map[string]any{"t": "hello", "session": sess["session"]})
		if err := c.Write(ctx, websocket.MessageText, hello); err != nil {
			t.Fatal(err)
		}
		var view struct {
			Table string `json:"table"`
			You   int    `json:"you"`
			Seats [4]struct {
				Robot bool `json:"robot"`
			} `json:"seats"`
			Status string            `json:"status"`
			Hand   []json.RawMessage `json:"hand"`
		}
		for view.Table == "" {
			rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
			_, data, err := c.Read(rctx)
			rcancel()
			if err != nil {
				t.Fatalf("run %d: no view: %v", run, err)
			}
			var m struct {
				T    string          `json:"t"`
				View json.RawMessage `json:"view"`
			}
			if json.Unmarshal(data, &m) == nil && m.T == "view" {
				if err := json.Unmarshal(m.View, &view); err != nil {
					t.Fatal(err)
				}
			}
		}
		robots := 0
		for _, s := range view.Seats {
			if s.Robot {
				robots++
			}
		}
		if view.You < 0 || robots != 3 || view.Status != "playing" || len(view.Hand) == 0 {
			t.Fatalf("run %d: the page's view: seat %d, %d computer players, %s, %d cards", run, view.You, robots, view.Status, len(view.Hand))
		}
		if run == 2 && view.Table != tableID {
			t.Fatalf("the second run opened table %s, not the stored %s", view.Table, tableID)
		}
		tableID = view.Table
		c.Close(websocket.StatusNormalClosure, "")
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("Run: %v", err)
		}
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

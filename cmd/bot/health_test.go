package main

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/cmd/bot/internal/ops"
	"github.com/kontermatt/kontermatt/storage"
)

// health asks the bot that runs: a whole bot started in this process answers healthy (exit 0, one
// line); a bot whose platform is down answers not healthy (exit 1), naming it first; with no bot
// running the answer is not healthy too, and says why.
func TestHealthCommand(t *testing.T) {
	health1 := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run(append([]string{"health"}, args...), nil, &out, &errb)
		return code, out.String(), errb.String()
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "k.db")
	var screen, log bytes.Buffer
	m := &Main{Config: Config{Database: db, LogLevel: "info", LogFormat: "text"}, Terminal: TerminalFlags{Humans: 0, Level: "easy"},
		Stdout: &screen, Stderr: &log}
	if err := m.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := health1("-db", db)
	// The only copy on its file holds the lease of every place as soon as it resumed its tables.
	for i := 0; i < 100 && strings.Contains(stdout, "leases none"); i++ {
		time.Sleep(10 * time.Millisecond)
		code, stdout, stderr = health1("-db", db)
	}
	if want := "healthy: database ok; leases places; store bbolt " + db + "\n"; code != 0 || stdout != want || stderr != "" {
		t.Errorf("a running bot: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	m.Close()
	code, stdout, _ = health1("-db", db)
	if code != 1 || stdout != "not healthy: no bot runs with "+db+" (no admin socket at "+db+".sock)\n" {
		t.Errorf("no bot: exit %d, stdout %q", code, stdout)
	}

	db2 := filepath.Join(dir, "d.db")
	st, err := storage.Open(db2, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	chats := []chatAdapter{&connectedChat{fakeChat: fakeChat{name: "telegram"}},
		&connectedChat{fakeChat: fakeChat{name: "discord"}, down: errors.New("gateway closed")}}
	startAdmin(t, &ops.Admin{Store: st, Socket: db2 + ".sock", Health: ops.Health(st, platforms(chats), nil)})
	if code, _, stderr := health1("-db", db2, "now"); code != 2 || !strings.Contains(stderr, `"now" is not a flag`) {
		t.Errorf("a word where none goes: exit %d, %q", code, stderr)
	}
	code, stdout, _ = health1("-db", db2)
	if want := "not healthy: discord not connected: gateway closed; database ok; telegram connected\n"; code != 1 || stdout != want {
		t.Errorf("a platform down: exit %d, stdout %q, want %q", code, stdout, want)
	}
	if strings.Count(stdout, "\n") != 1 {
		t.Errorf("more than one line: %q", stdout)
	}
}

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/cmd/bot/internal/ops"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// The log a host reads at start, as JSON: the line that says what started comes first (the
// platforms' own lines after it); a token Telegram refuses is said as that, once, in the host's
// words; Discord's errors name the api_url that was dialled; durations read "5s", not nanoseconds.
func TestTheStartLog(t *testing.T) {
	bin := buildBot(t)
	// Telegram's answer to a revoked or mistyped token: HTTP 401 with ok false and error_code 401
	// (core.telegram.org/bots/api, "Making requests"; tdlib/telegram-bot-api answers every method
	// so, getMe included).
	tg := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"ok":false,"error_code":401,"description":"Unauthorized"}`)
	}))
	defer tg.Close()
	dead := "http://" + freeAddr(t)
	config := writeConfig(t, "telegram:\n  token: 123456:SECRET-telegram\n")
	if err := os.Chmod(config, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-db", filepath.Join(t.TempDir(), "k.db"), "-config", config)
	cmd.Env = hostEnv("KONTERMATT_LOG_FORMAT=json", "KONTERMATT_TELEGRAM_API_URL="+tg.URL,
		"KONTERMATT_DISCORD_TOKEN=SECRET.discord.token", "KONTERMATT_DISCORD_API_URL="+dead)
	var out tabletest.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// Both platforms' first failures are said before the bot is stopped: on a busy machine
	// Telegram's refusal may come after Discord's retry.
	for _, line := range []string{"trying again", "the bot token was refused"} {
		select {
		case <-out.Seen(line, 60*time.Second):
		case err := <-done:
			t.Fatalf("the bot stopped: %v\n%s", err, out.String())
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	<-done
	log := out.String()
	var lines []map[string]any
	var plain []string // the exit's own line: why the bot could not serve every platform
	sc := bufio.NewScanner(strings.NewReader(log))
	for sc.Scan() {
		var l map[string]any
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			plain = append(plain, sc.Text())
			continue
		}
		lines = append(lines, l)
	}
	if len(lines) == 0 || lines[0]["msg"] != "kontermatt started" {
		t.Errorf("the first line does not say what started:\n%s", log)
	}
	refused, readable := 0, 0
	for _, l := range lines {
		msg, _ := l["msg"].(string)
		if err, ok := l["err"].(string); ok {
			msg += " " + err
		}
		if strings.Contains(msg, "the bot token was refused") && strings.Contains(msg, "KONTERMATT_TELEGRAM_TOKEN") {
			refused++
		}
		if l["level"] == "WARN" && strings.Contains(msg, "every user of this machine may read it") && strings.Contains(msg, "telegram.token") {
			readable++
		}
		if l["platform"] == "discord" && l["err"] != nil && (!strings.Contains(l["err"].(string), dead) || strings.Contains(l["err"].(string), "discord.com")) {
			t.Errorf("Discord's error does not name %s, which was dialled: %v", dead, l["err"])
		}
		if in, ok := l["in"]; ok {
			if s, isText := in.(string); !isText || s != "5s" {
				t.Errorf("a duration reads %v (%T), want \"5s\"", in, in)
			}
		}
	}
	if len(plain) > 1 {
		t.Errorf("more than the exit's line is not JSON: %q", plain)
	}
	if readable != 1 {
		t.Errorf("the config file every user may read is warned about %d times, want once:\n%s", readable, log)
	}
	if refused != 1 {
		t.Errorf("the refused token is said %d times, want once:\n%s", refused, log)
	}
	for _, bad := range []string{"Run asks again", "does not answer yet", "SECRET"} {
		if strings.Contains(log, bad) {
			t.Errorf("the log says %q:\n%s", bad, log)
		}
	}
}

// The JSON log gives durations as text, the way the text log does.
func TestJSONLogDurations(t *testing.T) {
	var b bytes.Buffer
	newLogger(&b, "info", "json").Info("x", "took", 1500*time.Millisecond)
	if !strings.Contains(b.String(), `"took":"1.5s"`) {
		t.Errorf("got %s", b.String())
	}
}

// connectedChat is a platform that says whether it is connected.
type connectedChat struct {
	fakeChat
	down error
}

func (c *connectedChat) Connected() error { return c.down }

// /metrics says which platforms are connected and which build runs.
func TestMetricsPlatformsAndBuild(t *testing.T) {
	met := ops.NewMetrics(buildLabels())
	svc := tabletest.New(table.Config{Store: mem.New()})
	defer svc.Close()
	met.Watch(svc, platforms([]chatAdapter{&connectedChat{fakeChat: fakeChat{name: "telegram"}},
		&connectedChat{fakeChat: fakeChat{name: "discord"}, down: errors.New("gateway closed")}}))
	rec := httptest.NewRecorder()
	met.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, want := range []string{`kontermatt_platform_connected{platform="telegram"} 1`, `kontermatt_platform_connected{platform="discord"} 0`,
		`kontermatt_build_info{goversion="go1.`} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// A live backup that was sent says so in the bot's log, with its size.
func TestALiveBackupIsLogged(t *testing.T) {
	db := filepath.Join(t.TempDir(), "k.db")
	st, err := storage.Open(db, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	logs := startAdmin(t, &ops.Admin{Store: st, Socket: db + ".sock"})
	if code, _, stderr := backupCmd(t, db, filepath.Join(t.TempDir(), "b.db")); code != 0 {
		t.Fatalf("backup: %d %s", code, stderr)
	}
	logs.WaitFor(t, "live backup sent", 5*time.Second)
	if !strings.Contains(logs.String(), "bytes=") || !strings.Contains(logs.String(), "via="+db+".sock") {
		t.Errorf("the line: %s", logs.String())
	}
}

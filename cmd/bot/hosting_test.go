package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// With no chat token and no terminal to play in (stdin /dev/null, as under systemd or in a
// container), the bot says so and exits 2, a configuration to mend (systemd's unit does not start
// it again), instead of playing a game nobody sees.
func TestNoTokenNoTerminal(t *testing.T) {
	bin := buildBot(t)
	code, stdout, stderr := runBin(t, bin, "-db", filepath.Join(t.TempDir(), "k.db"))
	if code != 2 || !strings.Contains(stderr, "no chat token set") || !strings.Contains(stderr, "no terminal to play in") || stdout != "" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	// Watching four computers needs no one at the keyboard.
	if code, stdout, _ := runBin(t, bin, "-db", filepath.Join(t.TempDir(), "w.db"), "-humans", "0", "-pace", "0", "-level", "easy", "-options", "stripes=1"); code != 0 || !strings.Contains(stdout, "wins the match") {
		t.Errorf("watching: exit %d\n%s", code, tail(stdout))
	}
}

// getSocket asks a running bot's admin socket.
func getSocket(t *testing.T, sock, path string) (int, string) {
	t.Helper()
	c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}}
	resp, err := c.Get("http://bot" + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// The admin socket serves /healthz (the database takes a write) and Prometheus metrics of what
// the service did.
func TestHealthAndMetrics(t *testing.T) {
	bin := buildBot(t)
	db := filepath.Join(t.TempDir(), "k.db")
	_, stop := startBotOut(t, bin, db)
	defer stop()
	code, body := getSocket(t, db+".sock", "/healthz")
	var state map[string]string
	if code != http.StatusOK || json.Unmarshal([]byte(body), &state) != nil || state["database"] != "ok" {
		t.Errorf("/healthz: %d %s", code, body)
	}
	code, body = getSocket(t, db+".sock", "/metrics")
	for _, want := range []string{`kontermatt_commands_total{outcome="ok",verb="new"} 1`, `kontermatt_tables{status="playing"} 1`,
		"kontermatt_commit_seconds_bucket", "kontermatt_decision_seconds_count", "go_goroutines"} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics (%d) lacks %q", code, want)
		}
	}
}

// The container image builds with the Go the module asks for, and runs the bot with its database
// on the volume.
func TestDockerfileMatchesTheModule(t *testing.T) {
	gomod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	docker, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	var goLine string
	for _, l := range strings.Split(string(gomod), "\n") {
		if v, ok := strings.CutPrefix(l, "go "); ok {
			goLine = v
		}
	}
	major, minor, _ := strings.Cut(goLine, ".")
	minor, _, _ = strings.Cut(minor, ".")
	for _, want := range []string{"FROM golang:" + major + "." + minor + " AS build", "CGO_ENABLED=0", "./cmd/bot",
		"USER nonroot", "VOLUME /data", "KONTERMATT_DATABASE=/data/kontermatt.db", "STOPSIGNAL SIGTERM"} {
		if !strings.Contains(string(docker), want) {
			t.Errorf("the Dockerfile lacks %q (go.mod says go %s)", want, goLine)
		}
	}
}

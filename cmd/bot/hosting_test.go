package main

import (
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
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

// The container image builds with the very Go the module asks for (the official image builds with
// no other), both bases pinned by digest, runs the bot as a non-root user with its database on the
// volume, and checks its health with the bot itself (no shell, no curl in the image).
func TestDockerfileMatchesTheModule(t *testing.T) {
	gomod := readRepoFile(t, "go.mod")
	docker := readRepoFile(t, "Dockerfile")
	var goLine string
	for _, l := range strings.Split(gomod, "\n") {
		if v, ok := strings.CutPrefix(l, "go "); ok {
			goLine = v
		}
	}
	for _, want := range []string{"FROM golang:" + goLine + "@sha256:", " AS build", "CGO_ENABLED=0", "./cmd/bot",
		"USER nonroot", "VOLUME /data", "KONTERMATT_DATABASE=/data/kontermatt.db", "STOPSIGNAL SIGTERM",
		`HEALTHCHECK --interval=30s --timeout=10s --start-period=30s --retries=3 CMD ["/kontermatt", "health"]`} {
		if !strings.Contains(docker, want) {
			t.Errorf("the Dockerfile lacks %q (go.mod says go %s)", want, goLine)
		}
	}
	pinned := regexp.MustCompile(`^[a-z0-9./:-]+@sha256:[0-9a-f]{64}$`)
	froms := 0
	for _, l := range strings.Split(docker, "\n") {
		if f, ok := strings.CutPrefix(l, "FROM "); ok {
			froms++
			if image, _, _ := strings.Cut(f, " "); !pinned.MatchString(image) {
				t.Errorf("a base image not pinned by digest: %s", l)
			}
		}
	}
	if froms != 2 {
		t.Errorf("%d FROM lines, want the build and the distroless base", froms)
	}
	ignored := strings.Fields(readRepoFile(t, ".dockerignore"))
	for _, want := range []string{".env", "config.yaml", "*.db", ".git"} {
		if !slices.Contains(ignored, want) {
			t.Errorf(".dockerignore does not keep %s out of the build context", want)
		}
	}
}

func readRepoFile(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// compose.yaml passes every secret the docs name, publishes the webhook's and the web table's
// ports on the host's loopback only, and runs the container read-only, without capabilities or
// a way to gain privileges, its logs rotated.
func TestComposeFile(t *testing.T) {
	var compose struct {
		Services map[string]struct {
			Environment map[string]string `yaml:"environment"`
			Ports       []string          `yaml:"ports"`
			ReadOnly    bool              `yaml:"read_only"`
			CapDrop     []string          `yaml:"cap_drop"`
			SecurityOpt []string          `yaml:"security_opt"`
			Volumes     []string          `yaml:"volumes"`
			Logging     struct {
				Driver  string            `yaml:"driver"`
				Options map[string]string `yaml:"options"`
			} `yaml:"logging"`
			StopGracePeriod string `yaml:"stop_grace_period"`
		} `yaml:"services"`
		Volumes map[string]any `yaml:"volumes"`
	}
	if err := yaml.Unmarshal([]byte(readRepoFile(t, "compose.yaml")), &compose); err != nil {
		t.Fatal(err)
	}
	svc, ok := compose.Services["kontermatt"]
	if !ok {
		t.Fatal("compose.yaml has no kontermatt service")
	}
	for name, key := range envKeys {
		if slices.Contains(secretKeys, key) {
			if _, ok := svc.Environment[name]; !ok {
				t.Errorf("compose.yaml does not pass %s (%s)", name, key)
			}
		}
	}
	for _, port := range []string{"127.0.0.1:8443:8443", "127.0.0.1:8480:8480"} {
		if !slices.Contains(svc.Ports, port) {
			t.Errorf("compose.yaml does not publish %s (ports %v)", port, svc.Ports)
		}
	}
	if svc.Environment["KONTERMATT_TELEGRAM_WEBHOOK_LISTEN"] != "${KONTERMATT_TELEGRAM_WEBHOOK_LISTEN:-0.0.0.0:8443}" {
		t.Errorf("in the container the webhook must listen where the published port leads: %q", svc.Environment["KONTERMATT_TELEGRAM_WEBHOOK_LISTEN"])
	}
	if !svc.ReadOnly || !slices.Equal(svc.CapDrop, []string{"ALL"}) || !slices.Contains(svc.SecurityOpt, "no-new-privileges:true") {
		t.Errorf("read_only %v, cap_drop %v, security_opt %v", svc.ReadOnly, svc.CapDrop, svc.SecurityOpt)
	}
	if svc.Logging.Driver != "json-file" || svc.Logging.Options["max-size"] == "" || svc.Logging.Options["max-file"] == "" {
		t.Errorf("logs not rotated: %+v", svc.Logging)
	}
	if !slices.Contains(svc.Volumes, "kontermatt-data:/data") || compose.Volumes == nil || svc.StopGracePeriod != "30s" {
		t.Errorf("volumes %v %v, stop_grace_period %q", svc.Volumes, compose.Volumes, svc.StopGracePeriod)
	}
}

// The systemd unit does not restart a bot whose configuration must be mended (exit 2), and its
// backup recipe is one that works with DynamicUser.
func TestSystemdUnit(t *testing.T) {
	unit := readRepoFile(t, "deploy/kontermatt.service")
	for _, want := range []string{"\nRestartPreventExitStatus=2\n", "\nDynamicUser=yes\n",
		"#   sudo /usr/local/bin/kontermatt backup -db /var/lib/kontermatt/kontermatt.db ",
		"#   sudo /usr/local/bin/kontermatt health -db /var/lib/kontermatt/kontermatt.db\n"} {
		if !strings.Contains(unit, want) {
			t.Errorf("the unit lacks %q", want)
		}
	}
	if strings.Contains(unit, "#   systemd-run") {
		t.Error("the unit still recommends systemd-run with a dynamic user of its own")
	}
}

// Every KONTERMATT_ variable the bot reads is named in docs/hosting.md, and the code reads no
// variable that envKeys does not list.
func TestHostingDocNamesEveryVariable(t *testing.T) {
	doc := readRepoFile(t, "docs/hosting.md")
	read := map[string]bool{}
	name := regexp.MustCompile(`KONTERMATT_[A-Z0-9_]+`)
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		data, err := os.ReadFile(path)
		for _, v := range name.FindAllString(string(data), -1) {
			read[v] = true
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for v := range envKeys {
		read[v] = true
	}
	for _, v := range slices.Sorted(maps.Keys(read)) {
		if !strings.Contains(doc, "`"+v+"`") {
			t.Errorf("docs/hosting.md does not name %s", v)
		}
	}
}

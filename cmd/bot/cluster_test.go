package main

import (
	"maps"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// composeVar is a variable as compose.yaml writes it: ${NAME}, ${NAME:-default}, ${NAME:?error}.
var composeVar = regexp.MustCompile(`\$\{([A-Z_][A-Z0-9_]*)(?:(:-|:\?)([^}]*))?\}`)

// expand substitutes compose variables from env, as Compose does: a default when unset or empty,
// and a failure for a required one.
func expand(t *testing.T, s string, env map[string]string) string {
	return composeVar.ReplaceAllStringFunc(s, func(m string) string {
		p := composeVar.FindStringSubmatch(m)
		if v := env[p[1]]; v != "" {
			return v
		}
		if p[2] == ":?" {
			t.Errorf("compose would refuse to start without %s (%s)", p[1], p[3])
		}
		return p[3]
	})
}

// TestClusterComposeFile: deploy/cluster/compose.yaml starts three etcd members of a pinned
// official image as one cluster, two copies of the bot configured alike on it, with variables the
// bot reads (and every secret it has), and Caddy sends the webhook, the interactions and the web
// table to where the copies listen.
func TestClusterComposeFile(t *testing.T) {
	type service struct {
		Image       string            `yaml:"image"`
		Command     []string          `yaml:"command"`
		Environment map[string]string `yaml:"environment"`
		Volumes     []string          `yaml:"volumes"`
		ReadOnly    bool              `yaml:"read_only"`
		CapDrop     []string          `yaml:"cap_drop"`
		StopGrace   string            `yaml:"stop_grace_period"`
	}
	var compose struct {
		Services map[string]service `yaml:"services"`
	}
	if err := yaml.Unmarshal([]byte(readRepoFile(t, "deploy/cluster/compose.yaml")), &compose); err != nil {
		t.Fatal(err)
	}
	pinned := regexp.MustCompile(`^(quay\.io/coreos/etcd|gcr\.io/etcd-development/etcd):v3\.[67]\.\d+$`)
	var members []string
	for _, name := range slices.Sorted(maps.Keys(compose.Services)) {
		s := compose.Services[name]
		if !strings.HasPrefix(name, "etcd-") {
			continue
		}
		members = append(members, name)
		if !pinned.MatchString(s.Image) {
			t.Errorf("%s runs %q: the official etcd image, pinned to a v3.6 or v3.7 release", name, s.Image)
		}
		flags := strings.Join(s.Command, " ")
		for _, want := range []string{"--name " + name, "--advertise-client-urls http://" + name + ":2379",
			"--initial-cluster etcd-1=http://etcd-1:2380,etcd-2=http://etcd-2:2380,etcd-3=http://etcd-3:2380"} {
			if !strings.Contains(flags, want) {
				t.Errorf("%s's flags lack %q: %s", name, want, flags)
			}
		}
	}
	if len(members) != 3 {
		t.Fatalf("etcd members %v, want three", members)
	}
	if img := compose.Services["caddy"].Image; !regexp.MustCompile(`^caddy:2\.\d+\.\d+$`).MatchString(img) {
		t.Errorf("caddy runs %q: pin a release", img)
	}

	a, b := compose.Services["kontermatt-a"], compose.Services["kontermatt-b"]
	if a.Environment == nil || !maps.Equal(a.Environment, b.Environment) {
		t.Fatalf("the two copies are not configured alike:\n%v\n%v", a.Environment, b.Environment)
	}
	if !a.ReadOnly || !slices.Equal(a.CapDrop, []string{"ALL"}) || a.StopGrace != "30s" {
		t.Errorf("read_only %v, cap_drop %v, stop_grace_period %q", a.ReadOnly, a.CapDrop, a.StopGrace)
	}
	if slices.Equal(a.Volumes, b.Volumes) {
		t.Errorf("the copies share a volume for their admin sockets: %v", a.Volumes)
	}
	// Every variable named is one the bot reads, and every secret it has is passed.
	read := map[string]bool{"KONTERMATT_ETCD_ENDPOINTS": true, "KONTERMATT_ETCD_USERNAME": true, "KONTERMATT_ETCD_PASSWORD": true}
	for name := range envKeys {
		read[name] = true
	}
	for name := range a.Environment {
		if !read[name] {
			t.Errorf("compose passes %s, which the bot does not read", name)
		}
	}
	for name, key := range envKeys {
		if _, ok := a.Environment[name]; slices.Contains(secretKeys, key) && !ok && key != "admin_token" {
			t.Errorf("compose does not pass %s (%s)", name, key)
		}
	}
	// The copies' environment, filled in as a host's .env would, is a configuration the bot
	// starts with: on etcd, every member named.
	hostEnv := map[string]string{"BOT_DOMAIN": "bot.example.org", "TABLE_DOMAIN": "table.example.org",
		"KONTERMATT_TELEGRAM_TOKEN": "123:x", "KONTERMATT_TELEGRAM_WEBHOOK_SECRET": "hook-secret-0123456789",
		"KONTERMATT_WEB_LINK_KEY": "0123456789abcdef0123456789abcdef", "KONTERMATT_METRICS_TOKEN": "metrics-0123456789abcdef"}
	env := map[string]string{}
	for k, v := range a.Environment {
		env[k] = expand(t, v, hostEnv)
	}
	cfg, err := loadConfig("", func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("the copies' environment: %v", err)
	}
	if cfg.Store != "etcd" || len(cfg.Etcd.Endpoints) != 3 {
		t.Errorf("store %q on %v", cfg.Store, cfg.Etcd.Endpoints)
	}
	for i, m := range members {
		if u, _ := url.Parse(cfg.Etcd.Endpoints[i]); u == nil || u.Hostname() != m {
			t.Errorf("endpoint %d is %q, not member %s", i, cfg.Etcd.Endpoints[i], m)
		}
	}

	// Caddy sends each path to both copies where they listen.
	var file struct {
		Discord struct {
			Interactions struct {
				URL    string `yaml:"url"`
				Listen string `yaml:"listen"`
			} `yaml:"interactions"`
		} `yaml:"discord"`
	}
	if err := yaml.Unmarshal([]byte(readRepoFile(t, "deploy/cluster/kontermatt.yaml")), &file); err != nil {
		t.Fatal(err)
	}
	caddy := readRepoFile(t, "deploy/cluster/Caddyfile")
	port := func(addr string) string {
		_, p, err := net.SplitHostPort(addr)
		if err != nil {
			t.Errorf("%q: %v", addr, err)
		}
		return p
	}
	hook, _ := url.Parse(cfg.Telegram.Webhook.URL)
	inter, _ := url.Parse(file.Discord.Interactions.URL)
	for _, route := range []struct{ path, port string }{
		{hook.Path, port(cfg.Telegram.Webhook.Listen)},
		{"/discord/interactions", port(file.Discord.Interactions.Listen)},
		{"", port(cfg.Web.Listen)},
	} {
		want := strings.TrimSpace("reverse_proxy " + route.path + " kontermatt-a:" + route.port + " kontermatt-b:" + route.port)
		want = strings.Replace(want, "reverse_proxy  ", "reverse_proxy ", 1)
		if !strings.Contains(caddy, want+" {") {
			t.Errorf("the Caddyfile lacks %q", want)
		}
	}
	if inter == nil || inter.Path != "/discord/interactions" {
		t.Errorf("discord.interactions.url %q", file.Discord.Interactions.URL)
	}
}

package main

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.yaml.in/yaml/v3"
)

// etcdFlags are the flags etcd v3.7 (the version go.mod and the shipped files name) takes.
func etcdFlags() *flag.FlagSet {
	fs := flag.NewFlagSet("etcd", flag.ContinueOnError)
	embed.NewConfig().AddFlags(fs)
	// The few the etcd command adds to embed's (go.etcd.io/etcd/server/v3/etcdmain/config.go,
	// newConfig), which the test cannot reach: that function is not exported.
	for _, name := range []string{"config-file", "discovery-fallback", "initial-cluster-state", "v2-deprecation", "version"} {
		fs.Bool(name, false, "")
	}
	return fs
}

// checkEtcdArgs checks an etcd command line: every --flag is etcd's, and the history and quota
// flags are set (issue 32: the history bounded, the quota explicit).
func checkEtcdArgs(t *testing.T, where string, args []string) {
	t.Helper()
	fs := etcdFlags()
	var named []string
	for _, a := range args {
		if name, ok := strings.CutPrefix(a, "--"); ok {
			name, _, _ = strings.Cut(name, "=")
			named = append(named, name)
			if fs.Lookup(name) == nil {
				t.Errorf("%s: --%s is not an etcd flag", where, name)
			}
		}
	}
	for _, want := range []string{"auto-compaction-mode", "auto-compaction-retention", "quota-backend-bytes", "name", "initial-cluster"} {
		if !slices.Contains(named, want) {
			t.Errorf("%s does not set --%s", where, want)
		}
	}
}

// unit reads a systemd unit: each key's values in order, with continued lines joined.
func unit(text string) map[string][]string {
	keys := map[string][]string{}
	text = strings.ReplaceAll(text, "\\\n", " ")
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "[") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if ok {
			keys[k] = append(keys[k], v)
		}
	}
	return keys
}

// knownVariable tells whether the bot reads an environment variable.
func knownVariable(name string) bool {
	_, ok := envKeys[name]
	return ok || name == "KONTERMATT_ETCD_USERNAME" || name == "KONTERMATT_ETCD_PASSWORD"
}

// checkVariables checks that every KONTERMATT_ variable a file names is one the bot reads.
func checkVariables(t *testing.T, where, text string) {
	t.Helper()
	for _, name := range regexp.MustCompile(`KONTERMATT_[A-Z_]+`).FindAllString(text, -1) {
		if !knownVariable(name) {
			t.Errorf("%s names %s, which the bot does not read", where, name)
		}
	}
}

// TestClusterSystemdUnits (issue 32): deploy/cluster/systemd runs three etcd members and two
// copies of the bot without Docker. Each member's etcd flags are etcd's own and bound its
// history and quota; each member's file names itself and all three in its cluster; the copies'
// unit names only variables the bot reads and flags it takes, and gives each copy its own
// working directory (so its own admin socket).
func TestClusterSystemdUnits(t *testing.T) {
	etcd := unit(readRepoFile(t, "deploy/cluster/systemd/etcd.service"))
	if len(etcd["ExecStart"]) != 1 {
		t.Fatalf("etcd.service: ExecStart %q", etcd["ExecStart"])
	}
	args := strings.Fields(etcd["ExecStart"][0])
	if args[0] != "/usr/local/bin/etcd" {
		t.Errorf("etcd.service runs %s", args[0])
	}
	checkEtcdArgs(t, "etcd.service", args[1:])
	used := regexp.MustCompile(`\$\{([A-Z_]+)\}`).FindAllStringSubmatch(etcd["ExecStart"][0], -1)
	for i := 1; i <= 3; i++ {
		name := "etcd-" + string(rune('0'+i))
		env := map[string]string{}
		for k, vs := range unit(readRepoFile(t, "deploy/cluster/systemd/"+name+".env")) {
			env[k] = vs[0]
		}
		for _, u := range used {
			if env[u[1]] == "" {
				t.Errorf("%s.env does not set %s, which etcd.service uses", name, u[1])
			}
		}
		if env["MEMBER_NAME"] != name || !strings.Contains(env["CLUSTER"], name+"=https://"+env["MEMBER_IP"]+":2380") ||
			strings.Count(env["CLUSTER"], "=https://") != 3 {
			t.Errorf("%s.env: %v", name, env)
		}
	}

	text := readRepoFile(t, "deploy/cluster/systemd/kontermatt@.service")
	checkVariables(t, "kontermatt@.service", text)
	bot := unit(text)
	for _, e := range bot["Environment"] {
		name, _, _ := strings.Cut(e, "=")
		if !knownVariable(name) {
			t.Errorf("kontermatt@.service sets %s, which the bot does not read", name)
		}
	}
	fs, _, _ := serveFlags(&Main{})
	for _, a := range strings.Fields(bot["ExecStart"][0])[1:] {
		if name, ok := strings.CutPrefix(a, "-"); ok && fs.Lookup(strings.TrimLeft(name, "-")) == nil {
			t.Errorf("kontermatt@.service: %s is not a flag of the bot", a)
		}
	}
	for key, want := range map[string]string{"WorkingDirectory": "%S/kontermatt-%i", "StateDirectory": "kontermatt-%i",
		"RestartPreventExitStatus": "2", "KillSignal": "SIGTERM"} {
		if !slices.Contains(bot[key], want) {
			t.Errorf("kontermatt@.service: %s=%v, want %s", key, bot[key], want)
		}
	}
	if !slices.Contains(bot["Environment"], "KONTERMATT_STORE=etcd") {
		t.Error("kontermatt@.service does not run on etcd")
	}
}

// TestComposeEtcdFlags: the compose file's etcd members take only etcd's flags, history and
// quota bounded.
func TestComposeEtcdFlags(t *testing.T) {
	var compose struct {
		Services map[string]struct {
			Command []string `yaml:"command"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal([]byte(readRepoFile(t, "deploy/cluster/compose.yaml")), &compose); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"etcd-1", "etcd-2", "etcd-3"} {
		checkEtcdArgs(t, "compose "+name, compose.Services[name].Command[1:])
	}
}

// k8sObject is what the test reads of a manifest.
type k8sObject struct {
	Kind       string            `yaml:"kind"`
	StringData map[string]string `yaml:"stringData"`
	Spec       struct {
		Replicas int `yaml:"replicas"`
		Ports    []struct {
			Name       string `yaml:"name"`
			TargetPort string `yaml:"targetPort"`
		} `yaml:"ports"`
		Template struct {
			Spec struct {
				Containers []k8sContainer `yaml:"containers"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

type k8sContainer struct {
	Env []struct {
		Name      string `yaml:"name"`
		Value     string `yaml:"value"`
		ValueFrom struct {
			SecretKeyRef struct {
				Name string `yaml:"name"`
				Key  string `yaml:"key"`
			} `yaml:"secretKeyRef"`
		} `yaml:"valueFrom"`
	} `yaml:"env"`
	Ports []struct {
		Name          string `yaml:"name"`
		ContainerPort int    `yaml:"containerPort"`
	} `yaml:"ports"`
	ReadinessProbe *k8sProbe `yaml:"readinessProbe"`
	LivenessProbe  *k8sProbe `yaml:"livenessProbe"`
	StartupProbe   *k8sProbe `yaml:"startupProbe"`
}

type k8sProbe struct {
	Exec struct {
		Command []string `yaml:"command"`
	} `yaml:"exec"`
	TimeoutSeconds int `yaml:"timeoutSeconds"`
}

// TestKubernetesManifests (issue 32): deploy/kubernetes has a Secret, a Deployment of two copies
// with probes and a Service, pointing at an etcd. Every variable is one the bot reads, every
// secret it takes comes from the Secret (by a key the Secret has), the environment (the secrets
// filled in) is a configuration the bot starts with, the probes run the bot's own health
// (readiness, and -live for liveness) with flags it takes, and the Service's ports are the
// container's, where the bot listens.
func TestKubernetesManifests(t *testing.T) {
	text := readRepoFile(t, "deploy/kubernetes/kontermatt.yaml")
	checkVariables(t, "kontermatt.yaml", text)
	objs := map[string]k8sObject{}
	dec := yaml.NewDecoder(strings.NewReader(text))
	for {
		var o k8sObject
		err := dec.Decode(&o)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		objs[o.Kind] = o
	}
	secret, dep, svc := objs["Secret"], objs["Deployment"], objs["Service"]
	if dep.Spec.Replicas < 2 || len(dep.Spec.Template.Spec.Containers) != 1 || len(svc.Spec.Ports) == 0 {
		t.Fatalf("want a Secret, a Deployment of two copies and a Service: %v", slices.Collect(func(yield func(string) bool) {
			for k := range objs {
				yield(k)
			}
		}))
	}
	c := dep.Spec.Template.Spec.Containers[0]
	env := map[string]string{}
	for _, e := range c.Env {
		if !knownVariable(e.Name) {
			t.Errorf("the Deployment sets %s, which the bot does not read", e.Name)
		}
		ref := e.ValueFrom.SecretKeyRef
		key := envKeys[e.Name]
		switch {
		case ref.Key != "":
			if _, ok := secret.StringData[ref.Key]; !ok || ref.Name != "kontermatt" {
				t.Errorf("%s comes from %s/%s, which the Secret does not have", e.Name, ref.Name, ref.Key)
			}
			env[e.Name] = "secret-" + ref.Key + "-0123456789abcdef0123456789abcdef"
		case slices.Contains(secretKeys, key) || strings.HasSuffix(e.Name, "_PASSWORD"):
			t.Errorf("%s (%s) is a secret given in the manifest itself", e.Name, key)
		default:
			env[e.Name] = e.Value
		}
	}
	env["KONTERMATT_DISCORD_PUBLIC_KEY"] = strings.Repeat("ab", 32)
	cfg, err := loadConfig("", func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("the Deployment's environment: %v", err)
	}
	if cfg.Store != "etcd" || len(cfg.Etcd.Endpoints) != 3 || cfg.MetricsAddr == "" {
		t.Errorf("store %s on %v, metrics %q", cfg.Store, cfg.Etcd.Endpoints, cfg.MetricsAddr)
	}

	// The probes: the bot's own health command, with flags it takes.
	var help bytes.Buffer
	run([]string{"health", "-h"}, nil, &help, io.Discard)
	for name, p := range map[string]*k8sProbe{"readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
		if p == nil {
			t.Errorf("no %s probe", name)
			continue
		}
		cmd := p.Exec.Command
		if len(cmd) < 2 || cmd[0] != "/kontermatt" || cmd[1] != "health" {
			t.Errorf("the %s probe runs %q", name, cmd)
			continue
		}
		for _, a := range cmd[2:] {
			if !strings.Contains(help.String(), "  "+a+"\n") && !strings.Contains(help.String(), "  "+a+" ") {
				t.Errorf("the %s probe: %s is not a flag of health", name, a)
			}
		}
		if live := slices.Contains(cmd, "-live"); live != (name == "liveness") {
			t.Errorf("the %s probe %q: -live is liveness's alone", name, cmd)
		}
		if time.Duration(p.TimeoutSeconds)*time.Second <= 5*time.Second {
			t.Errorf("the %s probe gives up after %d s, before health's own 5 s", name, p.TimeoutSeconds)
		}
	}

	// The Service's ports are the container's, and the container's are where the bot listens.
	ports := map[string]int{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	for _, p := range svc.Spec.Ports {
		if _, ok := ports[p.TargetPort]; !ok {
			t.Errorf("the Service's port %s targets %q, which the container does not have", p.Name, p.TargetPort)
		}
	}
	for name, addr := range map[string]string{"telegram": cfg.Telegram.Webhook.Listen, "discord": cfg.Discord.Interactions.Listen,
		"web": cfg.Web.Listen, "metrics": cfg.MetricsAddr} {
		_, port, _ := net.SplitHostPort(addr)
		if port != strconv.Itoa(ports[name]) {
			t.Errorf("the bot listens for %s on %s, the container's port is %d", name, addr, ports[name])
		}
	}
}

// TestProxyTimeoutsAndHealthChecks (issue 32): the shipped reverse proxy skips a hung copy: every
// route bounds how long a copy may take to begin its answer, the Discord interactions' and the
// web table's below Discord's 3 s, Telegram's below its 15 s for a button's answer; the copies'
// readiness is checked actively on their metrics listener with its token; and the compose files
// check each copy's health.
func TestProxyTimeoutsAndHealthChecks(t *testing.T) {
	caddy := readRepoFile(t, "deploy/cluster/Caddyfile")
	routes := regexp.MustCompile(`(?m)^\treverse_proxy (\S*) ?kontermatt-a:\d+ kontermatt-b:\d+ \{\n\t\timport copies (\S+)\n`).FindAllStringSubmatch(caddy, -1)
	if len(routes) != 3 {
		t.Fatalf("%d routes import the copies with a timeout, want 3 (the webhook, the interactions, the web table)", len(routes))
	}
	for _, r := range routes {
		d, err := time.ParseDuration(r[2])
		limit := 3 * time.Second // Discord's for an interaction; the web table's pages alike
		if r[1] == "/telegram/hook" {
			limit = 15 * time.Second
		}
		if err != nil || d <= 0 || d >= limit {
			t.Errorf("route %q: the answer may take %s, want less than %v", r[1], r[2], limit)
		}
	}
	for _, want := range []string{"response_header_timeout {args[0]}", "health_uri /readyz", "health_port 9464",
		`Authorization "Bearer {$KONTERMATT_METRICS_TOKEN}"`} {
		if !strings.Contains(caddy, want) {
			t.Errorf("the Caddyfile lacks %q", want)
		}
	}
	var compose struct {
		XKontermatt struct {
			Environment map[string]string `yaml:"environment"`
			Healthcheck struct {
				Test []string `yaml:"test"`
			} `yaml:"healthcheck"`
		} `yaml:"x-kontermatt"`
		Services map[string]struct {
			Environment map[string]string `yaml:"environment"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal([]byte(readRepoFile(t, "deploy/cluster/compose.yaml")), &compose); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(compose.XKontermatt.Healthcheck.Test, []string{"CMD", "/kontermatt", "health"}) {
		t.Errorf("the copies' health check: %q", compose.XKontermatt.Healthcheck.Test)
	}
	if _, port, _ := net.SplitHostPort(compose.XKontermatt.Environment["KONTERMATT_METRICS_ADDR"]); port != "9464" {
		t.Errorf("the copies' metrics listener is not where Caddy asks their readiness: %q", compose.XKontermatt.Environment["KONTERMATT_METRICS_ADDR"])
	}
	if _, ok := compose.Services["caddy"].Environment["KONTERMATT_METRICS_TOKEN"]; !ok {
		t.Error("Caddy has no metrics token to ask the copies' readiness with")
	}
	if !strings.Contains(readRepoFile(t, "Dockerfile"), `HEALTHCHECK`) {
		t.Error("the image has no health check")
	}
}

// TestRootComposeOnEtcd: the root compose file can run the etcd store: its profile etcd starts one
// member (etcd's own flags, history and quota bounded, the cluster's pinned image), the bot takes
// the store and the endpoints from the environment, and its comment says the command.
func TestRootComposeOnEtcd(t *testing.T) {
	text := readRepoFile(t, "compose.yaml")
	var compose struct {
		Services map[string]struct {
			Image       string            `yaml:"image"`
			Profiles    []string          `yaml:"profiles"`
			Command     []string          `yaml:"command"`
			Environment map[string]string `yaml:"environment"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal([]byte(text), &compose); err != nil {
		t.Fatal(err)
	}
	etcd, ok := compose.Services["etcd"]
	if !ok || !slices.Equal(etcd.Profiles, []string{"etcd"}) {
		t.Fatalf("compose.yaml has no etcd service in the profile etcd (%+v)", etcd)
	}
	checkEtcdArgs(t, "compose.yaml etcd", etcd.Command[1:])
	var cluster struct {
		Services map[string]struct {
			Image string `yaml:"image"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal([]byte(readRepoFile(t, "deploy/cluster/compose.yaml")), &cluster); err != nil {
		t.Fatal(err)
	}
	if want := cluster.Services["etcd-1"].Image; etcd.Image != want {
		t.Errorf("compose.yaml's etcd is %s, the cluster's %s", etcd.Image, want)
	}
	bot := compose.Services["kontermatt"].Environment
	for _, name := range []string{"KONTERMATT_STORE", "KONTERMATT_ETCD_ENDPOINTS"} {
		if !strings.HasPrefix(bot[name], "${"+name) || !knownVariable(name) {
			t.Errorf("compose.yaml does not pass %s from the environment (%q)", name, bot[name])
		}
	}
	if !strings.Contains(text, "KONTERMATT_STORE=etcd KONTERMATT_ETCD_ENDPOINTS=http://etcd:2379 docker compose --profile etcd up") {
		t.Error("compose.yaml does not say how to run it on etcd")
	}
}

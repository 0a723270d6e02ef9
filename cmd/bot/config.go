package main

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"net/url"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/kontermatt/kontermatt/adapters/discord"
	"github.com/kontermatt/kontermatt/adapters/httpserve"
	"github.com/kontermatt/kontermatt/adapters/telegram"
	"github.com/kontermatt/kontermatt/cmd/bot/internal/ops"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/storage/etcdstore"
)

// Config is the bot's configuration: a YAML file (config.example.yaml documents every key) with
// environment variables on top. Tokens belong in the environment or the file, never in code.
type Config struct {
	// Store is where the data lives: "bbolt" (the file at database; the default) or "etcd" (the
	// cluster at etcd.endpoints, which several copies of the bot can share).
	Store     string        `yaml:"store"`
	Database  string        `yaml:"database"`   // bbolt file; default kontermatt.db
	LogLevel  string        `yaml:"log_level"`  // debug, info, warn, error
	LogFormat string        `yaml:"log_format"` // text or json
	Seed      uint64        `yaml:"seed"`       // 0: each table's secret from crypto/rand
	RulesURL  string        `yaml:"rules_url"`
	Think     time.Duration `yaml:"think"` // longest computer decision
	// Retention is how long a closed table's state and command log are kept; finished matches'
	// records are kept for ever.
	Retention time.Duration `yaml:"retention"`
	// AdminAddr adds a loopback TCP listener to the admin socket (live backups, metrics); empty:
	// the socket beside the database only. AdminToken is its bearer token, required with it.
	AdminAddr  string `yaml:"admin_addr"`
	AdminToken string `yaml:"admin_token"`
	// AdminSocket is the admin socket's path; empty: beside the database (DATABASE.sock) with
	// bbolt, kontermatt.sock in the working directory with etcd (the socket then depends on no
	// database path: adminSocket).
	AdminSocket string `yaml:"admin_socket"`
	// MetricsAddr is a listener of its own for GET /metrics, which a Prometheus on another host
	// or container may scrape; off loopback it needs MetricsToken (its bearer token).
	MetricsAddr  string `yaml:"metrics_addr"`
	MetricsToken string `yaml:"metrics_token"`
	// TrustedProxies are the reverse proxies in front of the web table and the Telegram
	// webhook, whose X-Forwarded-For names the client (for the bounds per client address):
	// addresses or networks, separated by commas or spaces; empty: this machine (127.0.0.0/8,
	// ::1); "none": no proxy. Parsed into proxies.
	TrustedProxies string `yaml:"trusted_proxies"`
	proxies        []netip.Prefix
	Discord        struct {
		Token   string `yaml:"token"`
		GuildID string `yaml:"guild_id"`
		APIURL  string `yaml:"api_url"`
		// ShardID is what configs said when each process ran one shard; one process now runs
		// them all, so only 0 (or no value) is accepted.
		ShardID int `yaml:"shard_id"`
		// ShardCount is how many shards the bot runs; 0: as many as Discord recommends.
		ShardCount int `yaml:"shard_count"`
		// ClientSecret is the application's OAuth2 client secret: with the web table on, it
		// makes the table the app's Activity. Prefer the environment.
		ClientSecret string `yaml:"client_secret"`
		// PublicKey is the application's public key (hex, from the developer portal): the
		// interactions endpoint checks every post's signature with it.
		PublicKey string `yaml:"public_key"`
		// Interactions has Discord post the interactions to the bot (the Interactions Endpoint
		// URL) instead of the gateway: with listen set, no gateway connection is opened.
		Interactions struct {
			URL    string `yaml:"url"`    // the public https:// address set in the portal
			Listen string `yaml:"listen"` // where the reverse proxy forwards it
		} `yaml:"interactions"`
	} `yaml:"discord"`
	Telegram struct {
		Token  string `yaml:"token"`
		APIURL string `yaml:"api_url"`
		// Webhook receives updates by webhook (behind a reverse proxy) instead of long polling.
		Webhook struct {
			URL         string `yaml:"url"`          // the public https:// URL; empty: long polling
			Listen      string `yaml:"listen"`       // the local address the proxy forwards to
			SecretToken string `yaml:"secret_token"` // required with url; prefer the environment
			// MaxConnections is how many connections Telegram may open at once (1-100; 0: its
			// default, 40); DropPendingUpdates drops what waited while the bot was down.
			MaxConnections     int  `yaml:"max_connections"`
			DropPendingUpdates bool `yaml:"drop_pending_updates"`
		} `yaml:"webhook"`
		// MiniApp is the short name of the Mini App registered with BotFather for the web table:
		// the table's group messages then link to it.
		MiniApp string `yaml:"mini_app"`
	} `yaml:"telegram"`
	// Web is the web table: a page and its sockets served by the bot (off without listen).
	Web struct {
		Listen    string `yaml:"listen"`     // e.g. 127.0.0.1:8480, behind a reverse proxy that terminates HTTPS
		PublicURL string `yaml:"public_url"` // the page's public https:// address
		LinkKey   string `yaml:"link_key"`   // signs links and sessions; empty: a new key at every start
	} `yaml:"web"`

	// Etcd is the cluster of store: etcd. User and password come from the environment only
	// (KONTERMATT_ETCD_USERNAME, KONTERMATT_ETCD_PASSWORD).
	Etcd struct {
		Endpoints []string `yaml:"endpoints"` // client URLs; or KONTERMATT_ETCD_ENDPOINTS=a,b,c
		// Prefix is put before every key, so several bots share one cluster; default
		// "kontermatt/".
		Prefix string `yaml:"prefix"`
		// Cert and Key are the client's certificate and key (PEM files) for a cluster that
		// asks for them; CA the authority the members' certificates are checked against
		// (default: the system's).
		Cert string `yaml:"cert"`
		Key  string `yaml:"key"`
		CA   string `yaml:"ca"`
		// Timeout bounds each call to the cluster: a cluster without quorum is said after it;
		// default 5s.
		Timeout time.Duration `yaml:"timeout"`
		// History is how long the cluster keeps old revisions: one copy compacts the rest
		// away, and the members' --auto-compaction-retention should say the same
		// (docs/cluster.md); default 1h. Or KONTERMATT_ETCD_HISTORY.
		History time.Duration `yaml:"history"`
		// ElectionTimeout is the members' --election-timeout: a call that runs past half of it
		// asks the members for a leader, so that a refusal during a quorum loss comes within
		// Discord's 3 s; default 1s, etcd's. Or KONTERMATT_ETCD_ELECTION_TIMEOUT.
		ElectionTimeout    time.Duration `yaml:"election_timeout"`
		Username, Password string        `yaml:"-"`
	} `yaml:"etcd"`

	// Warnings are what the host should mend though the bot can start (a file with secrets that
	// every user may read); the bot logs them when it starts.
	Warnings []string `yaml:"-"`
}

// secretKeys are the config keys that hold secrets.
var secretKeys = []string{"admin_token", "metrics_token", "telegram.token", "telegram.webhook.secret_token", "discord.token",
	"discord.client_secret", "web.link_key"}

// errConfig marks a configuration the bot cannot start with.
var errConfig = errors.New("config")

// loadConfig reads the file (if path is not empty) strictly, then applies the environment.
func loadConfig(path string, getenv func(string) string) (Config, error) {
	c, src, err := readConfig(path, getenv)
	if err != nil {
		return c, src.locate(err)
	}
	return c, nil
}

// configSource says where each value came from: the file's line, or an environment variable.
type configSource struct {
	path  string
	lines map[string]int    // key → the line it is set on in the file
	env   map[string]string // key → the environment variable that set it
}

// locate puts where the key an error names was set before the error's text: "config.yaml line 3:
// log_format …", or "KONTERMATT_LOG_FORMAT: log_format …".
func (src configSource) locate(err error) error {
	msg, ok := strings.CutPrefix(err.Error(), errConfig.Error()+": ")
	if !ok {
		return err
	}
	key := msg
	if i := strings.IndexAny(msg, " :\"("); i >= 0 {
		key = msg[:i]
	}
	switch {
	case src.env[key] != "":
		return fmt.Errorf("%w: %s: %s", errConfig, src.env[key], msg)
	case src.lines[key] > 0:
		return fmt.Errorf("%w: %s line %d: %s", errConfig, src.path, src.lines[key], msg)
	}
	return err
}

func readConfig(path string, getenv func(string) string) (Config, configSource, error) {
	var c Config
	src := configSource{path: path, lines: map[string]int{}, env: map[string]string{}}
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return c, src, fmt.Errorf("%w: %v", errConfig, err)
		}
		var doc yaml.Node
		if err := yaml.Unmarshal(data, &doc); err != nil {
			return c, src, fmt.Errorf("%w: %s is not YAML: %s", errConfig, path, strings.TrimPrefix(err.Error(), "yaml: "))
		}
		if problems := checkConfig(&doc); len(problems) > 0 {
			return c, src, fmt.Errorf("%w: %s:\n  %s", errConfig, path, strings.Join(problems, "\n  "))
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		dec.KnownFields(true)
		if err := dec.Decode(&c); err != nil && !errors.Is(err, errEOF) {
			return c, src, fmt.Errorf("%w: %s: %v", errConfig, path, err) // checkConfig should have said why
		}
		src.lines = keyLines(&doc)
		c.Warnings = append(c.Warnings, readableSecrets(path, src.lines)...)
	}
	for _, name := range slices.Sorted(maps.Keys(envKeys)) {
		v := getenv(name)
		if v == "" {
			continue
		}
		if err := setEnv(envField(&c, envKeys[name]), v); err != nil {
			return c, src, fmt.Errorf("%w: %s %q: %v", errConfig, name, v, err)
		}
		src.env[envKeys[name]] = name
	}
	c.Etcd.Username, c.Etcd.Password = getenv("KONTERMATT_ETCD_USERNAME"), getenv("KONTERMATT_ETCD_PASSWORD")
	if err := c.checkStore(); err != nil {
		return c, src, err
	}
	switch p := strings.TrimSpace(c.TrustedProxies); p {
	case "":
	case "none":
		c.proxies = []netip.Prefix{}
	default:
		var err error
		if c.proxies, err = httpserve.ParseProxies(p); err != nil {
			return c, src, fmt.Errorf("%w: trusted_proxies: %v (write addresses or networks like 10.0.0.0/8, separated by commas, or none)", errConfig, err)
		}
	}
	if c.Database == "" {
		c.Database = "kontermatt.db"
	}
	if c.LogLevel == "" {
		c.LogLevel = "info"
	}
	if c.LogFormat == "" {
		c.LogFormat = "text"
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		return c, src, fmt.Errorf("%w: log_format %q: use text or json", errConfig, c.LogFormat)
	}
	if c.Discord.APIURL == "" {
		c.Discord.APIURL = "https://discord.com"
	}
	if c.Telegram.APIURL == "" {
		c.Telegram.APIURL = "https://api.telegram.org"
	}
	if c.AdminAddr == "off" {
		c.AdminAddr = "" // the old way to say "no TCP listener", still in some configs
	}
	if err := checkAdmin(c.AdminAddr, c.AdminToken); err != nil {
		return c, src, err
	}
	if err := ops.CheckMetrics(c.MetricsAddr, c.MetricsToken); err != nil {
		return c, src, fmt.Errorf("%w: %v", errConfig, err)
	}
	// A duration left out takes its default; one given must make sense, 0 included.
	_, thinkGiven := src.lines["think"]
	switch {
	case c.Think < 0 || c.Think == 0 && thinkGiven:
		return c, src, fmt.Errorf("%w: think %v: a computer player needs time to decide; give a duration such as 2s (or leave it out: 2s)", errConfig, c.Think)
	case c.Think == 0:
		c.Think = 2 * time.Second
	}
	_, retentionGiven := src.lines["retention"]
	if c.Retention == 0 && !retentionGiven {
		c.Retention = table.DefaultRetention
	}
	if c.Retention < time.Hour {
		return c, src, fmt.Errorf("%w: retention %v: keep closed tables at least an hour (or leave it out: %v)", errConfig, c.Retention, table.DefaultRetention)
	}
	if err := c.telegramWebhook().Check(); err != nil {
		return c, src, fmt.Errorf("%w: telegram.%v", errConfig, strings.TrimPrefix(err.Error(), "telegram: "))
	}
	if c.Discord.ShardID != 0 {
		return c, src, fmt.Errorf("%w: discord.shard_id: one bot process runs every shard now (discord.shard_count of them, or as many as Discord recommends); remove shard_id and run one process", errConfig)
	}
	if c.Discord.ShardCount < 0 {
		return c, src, fmt.Errorf("%w: discord.shard_count must be 0 (as Discord recommends) or more", errConfig)
	}
	if err := c.discordInteractions().Check(); err != nil {
		return c, src, fmt.Errorf("%w: %v", errConfig, err)
	}
	if c.discordInteractions().On() && c.Discord.Token == "" {
		return c, src, fmt.Errorf("%w: discord.interactions.listen needs discord.token (or KONTERMATT_DISCORD_TOKEN): the bot registers its commands and answers with it", errConfig)
	}
	if err := c.checkWeb(); err != nil {
		return c, src, err
	}
	if err := c.checkListeners(); err != nil {
		return c, src, err
	}
	// Levels are words, not names: DEBUG and Debug are debug, as slog itself reads them.
	c.LogLevel = strings.ToLower(strings.TrimSpace(c.LogLevel))
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return c, src, fmt.Errorf("%w: log_level %q: use debug, info, warn or error", errConfig, c.LogLevel)
	}
	return c, src, nil
}

// envKeys are the environment variables the bot reads, each with the config key it sets (and
// wins over). docs/hosting.md names every one (TestHostingDocNamesEveryVariable).
var envKeys = map[string]string{
	"KONTERMATT_STORE":                   "store",
	"KONTERMATT_ETCD_PREFIX":             "etcd.prefix",
	"KONTERMATT_DATABASE":                "database",
	"KONTERMATT_LOG_LEVEL":               "log_level",
	"KONTERMATT_LOG_FORMAT":              "log_format",
	"KONTERMATT_ADMIN_ADDR":              "admin_addr",
	"KONTERMATT_ADMIN_TOKEN":             "admin_token",
	"KONTERMATT_ADMIN_SOCKET":            "admin_socket",
	"KONTERMATT_METRICS_ADDR":            "metrics_addr",
	"KONTERMATT_METRICS_TOKEN":           "metrics_token",
	"KONTERMATT_DISCORD_TOKEN":           "discord.token",
	"KONTERMATT_DISCORD_GUILD_ID":        "discord.guild_id",
	"KONTERMATT_DISCORD_API_URL":         "discord.api_url",
	"KONTERMATT_DISCORD_CLIENT_SECRET":   "discord.client_secret",
	"KONTERMATT_DISCORD_PUBLIC_KEY":      "discord.public_key",
	"KONTERMATT_TELEGRAM_TOKEN":          "telegram.token",
	"KONTERMATT_TELEGRAM_API_URL":        "telegram.api_url",
	"KONTERMATT_TELEGRAM_WEBHOOK_URL":    "telegram.webhook.url",
	"KONTERMATT_TELEGRAM_WEBHOOK_LISTEN": "telegram.webhook.listen",
	"KONTERMATT_TELEGRAM_WEBHOOK_SECRET": "telegram.webhook.secret_token",
	"KONTERMATT_TELEGRAM_MINI_APP":       "telegram.mini_app",
	"KONTERMATT_WEB_LISTEN":              "web.listen",
	"KONTERMATT_WEB_PUBLIC_URL":          "web.public_url",
	"KONTERMATT_WEB_LINK_KEY":            "web.link_key",
	"KONTERMATT_TRUSTED_PROXIES":         "trusted_proxies",

	// Every other key too (issue 32: compose and Kubernetes configure by the environment).
	"KONTERMATT_SEED":                                  "seed",
	"KONTERMATT_RULES_URL":                             "rules_url",
	"KONTERMATT_THINK":                                 "think",
	"KONTERMATT_RETENTION":                             "retention",
	"KONTERMATT_DISCORD_SHARD_ID":                      "discord.shard_id",
	"KONTERMATT_DISCORD_SHARD_COUNT":                   "discord.shard_count",
	"KONTERMATT_DISCORD_INTERACTIONS_URL":              "discord.interactions.url",
	"KONTERMATT_DISCORD_INTERACTIONS_LISTEN":           "discord.interactions.listen",
	"KONTERMATT_TELEGRAM_WEBHOOK_MAX_CONNECTIONS":      "telegram.webhook.max_connections",
	"KONTERMATT_TELEGRAM_WEBHOOK_DROP_PENDING_UPDATES": "telegram.webhook.drop_pending_updates",
	"KONTERMATT_ETCD_ENDPOINTS":                        "etcd.endpoints",
	"KONTERMATT_ETCD_CERT":                             "etcd.cert",
	"KONTERMATT_ETCD_KEY":                              "etcd.key",
	"KONTERMATT_ETCD_CA":                               "etcd.ca",
	"KONTERMATT_ETCD_TIMEOUT":                          "etcd.timeout",
	"KONTERMATT_ETCD_HISTORY":                          "etcd.history",
	"KONTERMATT_ETCD_ELECTION_TIMEOUT":                 "etcd.election_timeout",
}

// envField is the field of c a config key names (those of envKeys).
func envField(c *Config, key string) reflect.Value {
	v := reflect.ValueOf(c).Elem()
	for _, part := range strings.Split(key, ".") {
		f, _ := yamlKeys(v.Type())[part]
		v = v.FieldByIndex(f.Index)
	}
	return v
}

// setEnv sets a config field from an environment variable's text, as the file would: a duration
// as 5s, a list separated by commas.
func setEnv(field reflect.Value, text string) error {
	switch p := field.Addr().Interface().(type) {
	case *string:
		*p = text
	case *[]string:
		*p = strings.FieldsFunc(text, func(r rune) bool { return r == ',' || r == ' ' })
	case *time.Duration:
		d, err := time.ParseDuration(text)
		if err != nil {
			return errors.New("give a duration such as 5s or 1h")
		}
		*p = d
	case *bool:
		b, err := strconv.ParseBool(text)
		if err != nil {
			return errors.New("give true or false")
		}
		*p = b
	case *int:
		n, err := strconv.Atoi(text)
		if err != nil {
			return errors.New("give a whole number")
		}
		*p = n
	case *uint64:
		n, err := strconv.ParseUint(text, 10, 64)
		if err != nil {
			return errors.New("give a whole number")
		}
		*p = n
	default:
		return fmt.Errorf("a field of type %s is not read from the environment", field.Type())
	}
	return nil
}

// readableSecrets warns about a config file that holds secrets and that every user of the machine
// may read.
func readableSecrets(path string, lines map[string]int) []string {
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm()&0o004 == 0 {
		return nil
	}
	var held []string
	for _, k := range secretKeys {
		if lines[k] > 0 {
			held = append(held, k)
		}
	}
	if len(held) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%s holds secrets (%s) and every user of this machine may read it (mode %v): chmod 600 %s, or put them in the environment",
		path, strings.Join(held, ", "), fi.Mode().Perm(), path)}
}

// checkStore refuses a store the bot cannot open: an unknown kind, etcd without endpoints or with
// a certificate and no key (or the reverse), a user without a password.
func (c *Config) checkStore() error {
	switch c.Store {
	case "", "bbolt":
		c.Store = "bbolt"
		return nil
	case "etcd":
	default:
		return fmt.Errorf("%w: store %q: use bbolt (the default, one file) or etcd", errConfig, c.Store)
	}
	e := &c.Etcd
	switch {
	case len(e.Endpoints) == 0:
		return fmt.Errorf("%w: store etcd needs etcd.endpoints (or KONTERMATT_ETCD_ENDPOINTS=https://10.0.0.1:2379,...)", errConfig)
	case (e.Cert == "") != (e.Key == ""):
		return fmt.Errorf("%w: etcd.cert and etcd.key go together: give both, or neither", errConfig)
	case (e.Username == "") != (e.Password == ""):
		return fmt.Errorf("%w: KONTERMATT_ETCD_USERNAME and KONTERMATT_ETCD_PASSWORD go together: set both, or neither", errConfig)
	case e.Timeout < 0:
		return fmt.Errorf("%w: etcd.timeout %v: give a duration such as 5s (or leave it out: 5s)", errConfig, e.Timeout)
	case e.History != 0 && e.History < time.Second:
		return fmt.Errorf("%w: etcd.history %v: give a duration such as 1h (or leave it out: 1h)", errConfig, e.History)
	case e.ElectionTimeout < 0 || e.ElectionTimeout > 50*time.Second:
		// etcd refuses an --election-timeout over 50 s (its flag check).
		return fmt.Errorf("%w: etcd.election_timeout %v: give the members' --election-timeout, such as 1s (or leave it out: 1s)", errConfig, e.ElectionTimeout)
	}
	if e.History == 0 {
		e.History = etcdstore.DefaultHistory
	}
	if e.Password != "" && slices.ContainsFunc(e.Endpoints, func(u string) bool { return strings.HasPrefix(u, "http://") }) {
		c.Warnings = append(c.Warnings, "the etcd password goes over http:// to "+strings.Join(e.Endpoints, ",")+
			" in the clear, where anyone on the path reads it: use https:// endpoints (etcd.ca, docs/cluster.md)")
	}
	for _, u := range e.Endpoints {
		if p, err := url.Parse(u); err != nil || p.Host == "" || p.Scheme != "http" && p.Scheme != "https" {
			return fmt.Errorf("%w: etcd.endpoints: %q is not a client URL like https://10.0.0.1:2379", errConfig, u)
		}
	}
	if e.Prefix == "" {
		e.Prefix = "kontermatt/"
	}
	return nil
}

// telegramWebhook is the Telegram adapter's webhook setting.
func (c Config) telegramWebhook() *telegram.Webhook {
	w := c.Telegram.Webhook
	return &telegram.Webhook{URL: w.URL, Listen: w.Listen, SecretToken: w.SecretToken,
		MaxConnections: w.MaxConnections, DropPendingUpdates: w.DropPendingUpdates, HTTP: httpserve.Limits{Proxies: c.proxies},
		InfoEvery: webhookInfoEvery}
}

// webhookInfoEvery is how often the health check's view of Telegram's webhook is refreshed (a
// variable for the tests).
var webhookInfoEvery = time.Minute

// discordInteractions is the Discord adapter's interactions endpoint setting.
func (c Config) discordInteractions() discord.Interactions {
	i := c.Discord.Interactions
	return discord.Interactions{URL: i.URL, Listen: i.Listen, PublicKey: c.Discord.PublicKey, HTTP: httpserve.Limits{Proxies: c.proxies}}
}

// checkWeb refuses a web table that cannot work: listen without a public address or the reverse,
// a public address that is not https (Telegram and Discord open only those; plain http only on
// this machine, for trying it out), a short link key, and the platforms' app settings without the
// web table. Its errors never show the secrets.
func (c Config) checkWeb() error {
	w := c.Web
	if w.Listen == "" {
		switch {
		case w.PublicURL != "":
			return fmt.Errorf("%w: web.public_url needs web.listen, the address the web table listens on", errConfig)
		case c.Telegram.MiniApp != "":
			return fmt.Errorf("%w: telegram.mini_app needs the web table (web.listen and web.public_url)", errConfig)
		case c.Discord.ClientSecret != "":
			return fmt.Errorf("%w: discord.client_secret is for the Activity, which needs the web table (web.listen and web.public_url)", errConfig)
		}
		return nil
	}
	if _, _, err := net.SplitHostPort(w.Listen); err != nil {
		return fmt.Errorf("%w: web.listen %q: %v", errConfig, w.Listen, err)
	}
	u, err := url.Parse(w.PublicURL)
	switch {
	case w.PublicURL == "":
		return fmt.Errorf("%w: web.listen needs web.public_url, the page's public https:// address", errConfig)
	case err != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "":
		return fmt.Errorf("%w: web.public_url %q is not a web address like https://table.example.org", errConfig, w.PublicURL)
	case u.Scheme == "http" && !loopbackHost(u.Hostname()):
		return fmt.Errorf("%w: web.public_url must be https:// (Telegram and Discord open nothing else); http:// only on this machine", errConfig)
	case u.Scheme != "https" && u.Scheme != "http":
		return fmt.Errorf("%w: web.public_url %q must be https://", errConfig, w.PublicURL)
	case w.LinkKey != "" && len(w.LinkKey) < minAdminToken:
		return fmt.Errorf("%w: web.link_key (or KONTERMATT_WEB_LINK_KEY) needs at least %d characters, e.g. from `openssl rand -hex 32`", errConfig, minAdminToken)
	case c.Telegram.Token == "" && c.Discord.Token == "":
		return fmt.Errorf("%w: the web table shows the tables of Telegram or Discord: set a chat token too", errConfig)
	case w.LinkKey == "" && c.Store == "etcd":
		// Each copy would make a key of its own at start: a link or session signed at one copy
		// would be refused at the next (docs/cluster.md).
		return fmt.Errorf("%w: with store etcd (several copies of the bot) the web table needs web.link_key (or KONTERMATT_WEB_LINK_KEY), the same on every copy", errConfig)
	}
	return nil
}

func loopbackHost(host string) bool { return ops.IsLoopback(host) }

// minAdminToken is the shortest admin_token accepted: any local process may knock on the port, so
// a short token is one it can guess.
const minAdminToken = ops.MinToken

// checkListeners refuses two listeners on one address: the second would fail to bind at start,
// or (one on every address, one on a port of it) take the other's traffic. The error names both
// keys.
func (c Config) checkListeners() error {
	listeners := []struct{ key, addr string }{{"admin_addr", c.AdminAddr}, {"metrics_addr", c.MetricsAddr},
		{"web.listen", c.Web.Listen}, {"telegram.webhook.listen", c.Telegram.Webhook.Listen},
		{"discord.interactions.listen", c.Discord.Interactions.Listen}}
	for i, a := range listeners {
		for _, b := range listeners[i+1:] {
			if a.addr != "" && b.addr != "" && sameListener(a.addr, b.addr) {
				return fmt.Errorf("%w: %s and %s both listen on %s: give each its own port", errConfig, a.key, b.key, a.addr)
			}
		}
	}
	return nil
}

// sameListener tells whether two listen addresses clash: the same port, on the same host or on
// every address (an empty host, 0.0.0.0 or ::). Port 0 (any free port) clashes with nothing.
func sameListener(a, b string) bool {
	ha, pa, errA := net.SplitHostPort(a)
	hb, pb, errB := net.SplitHostPort(b)
	if errA != nil || errB != nil || pa != pb || pa == "0" {
		return false
	}
	every := func(h string) bool { return h == "" || h == "0.0.0.0" || h == "::" }
	return ha == hb || every(ha) || every(hb) || loopbackHost(ha) && loopbackHost(hb) && (ha == "localhost" || hb == "localhost")
}

// checkAdmin refuses a TCP admin listener that is not on a loopback address, or has no token.
// Its errors never show the token.
func checkAdmin(addr, token string) error {
	if addr == "" {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%w: admin_addr %q: %v", errConfig, addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("%w: admin_addr %q must be a loopback address (127.0.0.1, ::1 or localhost)", errConfig, addr)
	}
	if len(token) < minAdminToken {
		return fmt.Errorf("%w: admin_addr needs admin_token (or KONTERMATT_ADMIN_TOKEN) of at least %d characters, e.g. from `openssl rand -hex 16`", errConfig, minAdminToken)
	}
	return nil
}

// errEOF is what the YAML decoder says for an empty file.
var errEOF = func() error {
	var v any
	return yaml.NewDecoder(bytes.NewReader(nil)).Decode(&v)
}()

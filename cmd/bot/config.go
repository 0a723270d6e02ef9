package main

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/kontermatt/kontermatt/adapters/telegram"
	"github.com/kontermatt/kontermatt/core/table"
)

// Config is the bot's configuration: a YAML file (config.example.yaml documents every key) with
// environment variables on top. Tokens belong in the environment or the file, never in code.
type Config struct {
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
	Discord    struct {
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
	} `yaml:"discord"`
	Telegram struct {
		Token  string `yaml:"token"`
		APIURL string `yaml:"api_url"`
		// Webhook receives updates by webhook (behind a reverse proxy) instead of long polling.
		Webhook struct {
			URL         string `yaml:"url"`          // the public https:// URL; empty: long polling
			Listen      string `yaml:"listen"`       // the local address the proxy forwards to
			SecretToken string `yaml:"secret_token"` // required with url; prefer the environment
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
}

// errConfig marks a configuration the bot cannot start with.
var errConfig = errors.New("config")

// loadConfig reads the file (if path is not empty) strictly, then applies the environment.
func loadConfig(path string, getenv func(string) string) (Config, error) {
	var c Config
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return c, fmt.Errorf("%w: %v", errConfig, err)
		}
		var doc yaml.Node
		if err := yaml.Unmarshal(data, &doc); err != nil {
			return c, fmt.Errorf("%w: %s is not YAML: %s", errConfig, path, strings.TrimPrefix(err.Error(), "yaml: "))
		}
		if problems := checkConfig(&doc); len(problems) > 0 {
			return c, fmt.Errorf("%w: %s:\n  %s", errConfig, path, strings.Join(problems, "\n  "))
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		dec.KnownFields(true)
		if err := dec.Decode(&c); err != nil && !errors.Is(err, errEOF) {
			return c, fmt.Errorf("%w: %s: %v", errConfig, path, err) // checkConfig should have said why
		}
	}
	env := func(key string, dst *string) {
		if v := getenv(key); v != "" {
			*dst = v
		}
	}
	env("KONTERMATT_DATABASE", &c.Database)
	env("KONTERMATT_LOG_LEVEL", &c.LogLevel)
	env("KONTERMATT_LOG_FORMAT", &c.LogFormat)
	env("KONTERMATT_DISCORD_TOKEN", &c.Discord.Token)
	env("KONTERMATT_DISCORD_GUILD_ID", &c.Discord.GuildID)
	env("KONTERMATT_DISCORD_API_URL", &c.Discord.APIURL)
	env("KONTERMATT_TELEGRAM_TOKEN", &c.Telegram.Token)
	env("KONTERMATT_TELEGRAM_API_URL", &c.Telegram.APIURL)
	env("KONTERMATT_TELEGRAM_WEBHOOK_URL", &c.Telegram.Webhook.URL)
	env("KONTERMATT_TELEGRAM_WEBHOOK_LISTEN", &c.Telegram.Webhook.Listen)
	env("KONTERMATT_TELEGRAM_WEBHOOK_SECRET", &c.Telegram.Webhook.SecretToken)
	env("KONTERMATT_TELEGRAM_MINI_APP", &c.Telegram.MiniApp)
	env("KONTERMATT_DISCORD_CLIENT_SECRET", &c.Discord.ClientSecret)
	env("KONTERMATT_WEB_LISTEN", &c.Web.Listen)
	env("KONTERMATT_WEB_PUBLIC_URL", &c.Web.PublicURL)
	env("KONTERMATT_WEB_LINK_KEY", &c.Web.LinkKey)
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
		return c, fmt.Errorf("%w: log_format %q: use text or json", errConfig, c.LogFormat)
	}
	if c.Discord.APIURL == "" {
		c.Discord.APIURL = "https://discord.com"
	}
	if c.Telegram.APIURL == "" {
		c.Telegram.APIURL = "https://api.telegram.org"
	}
	env("KONTERMATT_ADMIN_ADDR", &c.AdminAddr)
	env("KONTERMATT_ADMIN_TOKEN", &c.AdminToken)
	if c.AdminAddr == "off" {
		c.AdminAddr = "" // the old way to say "no TCP listener", still in some configs
	}
	if err := checkAdmin(c.AdminAddr, c.AdminToken); err != nil {
		return c, err
	}
	if c.Think == 0 {
		c.Think = 2 * time.Second
	}
	if c.Retention == 0 {
		c.Retention = table.DefaultRetention
	}
	if c.Retention < time.Hour {
		return c, fmt.Errorf("%w: retention %v: keep closed tables at least an hour", errConfig, c.Retention)
	}
	if err := c.telegramWebhook().Check(); err != nil {
		return c, fmt.Errorf("%w: telegram.%v", errConfig, strings.TrimPrefix(err.Error(), "telegram: "))
	}
	if c.Discord.ShardID != 0 {
		return c, fmt.Errorf("%w: discord.shard_id: one bot process runs every shard now (discord.shard_count of them, or as many as Discord recommends); remove shard_id and run one process", errConfig)
	}
	if c.Discord.ShardCount < 0 {
		return c, fmt.Errorf("%w: discord.shard_count must be 0 (as Discord recommends) or more", errConfig)
	}
	if err := c.checkWeb(); err != nil {
		return c, err
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return c, fmt.Errorf("%w: log_level %q: use debug, info, warn or error", errConfig, c.LogLevel)
	}
	return c, nil
}

// telegramWebhook is the Telegram adapter's webhook setting.
func (c Config) telegramWebhook() *telegram.Webhook {
	w := c.Telegram.Webhook
	return &telegram.Webhook{URL: w.URL, Listen: w.Listen, SecretToken: w.SecretToken}
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
	}
	return nil
}

func loopbackHost(host string) bool {
	ip := net.ParseIP(host)
	return host == "localhost" || ip != nil && ip.IsLoopback()
}

// minAdminToken is the shortest admin_token accepted: any local process may knock on the port, so
// a short token is one it can guess (`openssl rand -hex 16` gives 32 characters).
const minAdminToken = 16

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

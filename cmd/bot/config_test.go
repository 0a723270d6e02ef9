package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestConfig(t *testing.T) {
	noEnv := func(string) string { return "" }
	t.Run("example file loads", func(t *testing.T) {
		c, err := loadConfig("../../config.example.yaml", noEnv)
		if err != nil {
			t.Fatal(err)
		}
		if c.Database != "kontermatt.db" || c.Telegram.APIURL != "https://api.telegram.org" || c.AdminAddr != "" || c.AdminToken != "" {
			t.Errorf("example config: %+v", c)
		}
	})
	t.Run("environment wins over the file", func(t *testing.T) {
		p := writeConfig(t, "telegram:\n  token: from-file\n")
		c, err := loadConfig(p, func(k string) string {
			if k == "KONTERMATT_TELEGRAM_TOKEN" {
				return "from-env"
			}
			return ""
		})
		if err != nil || c.Telegram.Token != "from-env" {
			t.Errorf("token %q, err %v", c.Telegram.Token, err)
		}
	})
	for _, tc := range []struct{ name, text, want string }{
		{"unknown key", "databse: x.db\n", "databse"},
		{"bad log level", "log_level: loud\n", "log_level"},
		{"bad shard", "discord:\n  shard_id: 3\n  shard_count: 2\n", "shard_id"},
		{"not yaml", "{{{", "config"},
		{"admin_addr without a token", "admin_addr: 127.0.0.1:8377\n", "admin_token"},
		{"admin_addr with a short token", "admin_addr: 127.0.0.1:8377\nadmin_token: short\n", "admin_token"},
		{"admin_addr not loopback", "admin_addr: 0.0.0.0:8377\nadmin_token: 0123456789abcdef0123\n", "loopback"},
		{"admin_addr on every interface", "admin_addr: :8377\nadmin_token: 0123456789abcdef0123\n", "loopback"},
		{"admin_addr without port", "admin_addr: 127.0.0.1\nadmin_token: 0123456789abcdef0123\n", "admin_addr"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadConfig(writeConfig(t, tc.text), noEnv)
			if !errors.Is(err, errConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want a config error naming %q", err, tc.want)
			}
		})
	}
	// Errors speak the config's language: the key, the line, what fits; never a Go type.
	for _, tc := range []struct{ name, text, want string }{
		{"a typo", "loglevel: debug\n", `line 1: unknown key "loglevel" (did you mean log_level?)`},
		{"a nested typo", "telegram:\n  tokn: x\n", `line 2: unknown key "telegram.tokn" (did you mean telegram.token?)`},
		{"not a duration", "think: abc\n", `line 1: think: "abc" is not a duration (write it like 2s, 90m or 720h)`},
		{"not a number", "discord:\n  shard_id: two\n", `line 2: discord.shard_id: "two" is not a whole number`},
		{"a value for a section", "discord: x\n", "line 1: discord should hold keys (api_url, client_secret, guild_id, interactions, public_key, shard_count, shard_id, token), not a single value"},
		{"a list for a value", "database: [a, b]\n", "line 1: database should be a single value, not a list or keys"},
		{"a token one level too high", "telegram: 123:SECRET-TOKEN\n", "telegram should hold keys"},
		{"broken YAML", "a: [\n", "is not YAML: line 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadConfig(writeConfig(t, tc.text), noEnv)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want it to say %q", err, tc.want)
			}
			for _, goWord := range []string{"struct {", "main.", "!!str", "time.Duration", "SECRET"} {
				if strings.Contains(err.Error(), goWord) {
					t.Errorf("the message shows %q: %v", goWord, err)
				}
			}
		})
	}
	t.Run("a bad config never shows the token", func(t *testing.T) {
		_, err := loadConfig(writeConfig(t, "telegram:\n  token: 123:SECRET-TOKEN\n  extra: 1\n"), noEnv)
		if err == nil || strings.Contains(err.Error(), "SECRET") {
			t.Errorf("error %v", err)
		}
	})
	t.Run("admin listener from the environment", func(t *testing.T) {
		env := map[string]string{"KONTERMATT_ADMIN_ADDR": "[::1]:8377", "KONTERMATT_ADMIN_TOKEN": "0123456789abcdef-env"}
		c, err := loadConfig("", func(k string) string { return env[k] })
		if err != nil || c.AdminAddr != "[::1]:8377" || c.AdminToken != env["KONTERMATT_ADMIN_TOKEN"] {
			t.Errorf("got %q, %v", c.AdminAddr, err)
		}
	})
	t.Run("admin_addr off is no listener", func(t *testing.T) {
		c, err := loadConfig(writeConfig(t, "admin_addr: off\n"), noEnv)
		if err != nil || c.AdminAddr != "" {
			t.Errorf("got %q, %v", c.AdminAddr, err)
		}
	})
	t.Run("an admin config error never shows the token", func(t *testing.T) {
		_, err := loadConfig(writeConfig(t, "admin_addr: 10.0.0.1:8377\nadmin_token: SECRET-admin-token-123\n"), noEnv)
		if err == nil || strings.Contains(err.Error(), "SECRET") {
			t.Errorf("error %v", err)
		}
	})
	t.Run("telegram webhook from the file, its secret from the environment", func(t *testing.T) {
		p := writeConfig(t, "telegram:\n  token: x\n  webhook:\n    url: https://bot.example.org/tg\n    listen: 127.0.0.1:9000\n")
		c, err := loadConfig(p, func(k string) string {
			if k == "KONTERMATT_TELEGRAM_WEBHOOK_SECRET" {
				return "env-secret_123"
			}
			return ""
		})
		w := c.Telegram.Webhook
		if err != nil || w.URL != "https://bot.example.org/tg" || w.Listen != "127.0.0.1:9000" || w.SecretToken != "env-secret_123" {
			t.Errorf("webhook %+v, err %v", w, err)
		}
	})
	t.Run("telegram webhook's connections and dropped updates", func(t *testing.T) {
		p := writeConfig(t, "telegram:\n  token: x\n  webhook:\n    url: https://bot.example.org/tg\n    secret_token: s3cret\n"+
			"    max_connections: 10\n    drop_pending_updates: true\n")
		c, err := loadConfig(p, noEnv)
		if w := c.telegramWebhook(); err != nil || w.MaxConnections != 10 || !w.DropPendingUpdates {
			t.Errorf("webhook %+v, err %v", w, err)
		}
	})
	for _, tc := range []struct{ name, text, want string }{
		{"webhook without a secret", "telegram:\n  webhook:\n    url: https://bot.example.org/tg\n", "secret_token"},
		{"webhook not https", "telegram:\n  webhook:\n    url: http://bot.example.org/tg\n    secret_token: SECRET-hook-1\n", "https"},
		{"webhook secret with spaces", "telegram:\n  webhook:\n    url: https://bot.example.org/tg\n    secret_token: SECRET hook 1\n", "secret_token"},
		{"webhook with too many connections", "telegram:\n  webhook:\n    url: https://bot.example.org/tg\n    secret_token: SECRET-hook-1\n    max_connections: 500\n", "max_connections"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadConfig(writeConfig(t, tc.text), noEnv)
			if !errors.Is(err, errConfig) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "SECRET") {
				t.Errorf("got %v, want a config error naming %q and not the secret", err, tc.want)
			}
		})
	}
	t.Run("discord interactions by HTTP from the file, the public key from the environment", func(t *testing.T) {
		p := writeConfig(t, "discord:\n  token: x\n  interactions:\n    url: https://bot.example.org/discord/interactions\n    listen: 127.0.0.1:8444\n")
		const key = "1d8ea3e46c0b24e8b0ab6d2d8c42e2f5e0fa2a7a4a2b1b0ffbc7d1e1a2b3c4d5"
		c, err := loadConfig(p, func(k string) string {
			if k == "KONTERMATT_DISCORD_PUBLIC_KEY" {
				return key
			}
			return ""
		})
		i := c.discordInteractions()
		if err != nil || !i.On() || i.URL != "https://bot.example.org/discord/interactions" || i.Listen != "127.0.0.1:8444" || i.PublicKey != key {
			t.Errorf("interactions %+v, err %v", i, err)
		}
	})
	for _, tc := range []struct{ name, text, want string }{
		{"discord interactions without a public key", "discord:\n  token: x\n  interactions:\n    url: https://bot.example.org/i\n    listen: 127.0.0.1:8444\n", "discord.public_key"},
		{"discord interactions without a url", "discord:\n  token: x\n  public_key: 1d8ea3e46c0b24e8b0ab6d2d8c42e2f5e0fa2a7a4a2b1b0ffbc7d1e1a2b3c4d5\n  interactions:\n    listen: 127.0.0.1:8444\n", "discord.interactions.url"},
		{"discord interactions url without listen", "discord:\n  token: x\n  interactions:\n    url: https://bot.example.org/i\n", "discord.interactions.listen"},
		{"discord interactions without a token", "discord:\n  public_key: 1d8ea3e46c0b24e8b0ab6d2d8c42e2f5e0fa2a7a4a2b1b0ffbc7d1e1a2b3c4d5\n  interactions:\n    url: https://bot.example.org/i\n    listen: 127.0.0.1:8444\n", "discord.token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadConfig(writeConfig(t, tc.text), noEnv)
			if !errors.Is(err, errConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want a config error naming %q", err, tc.want)
			}
		})
	}
	t.Run("the web table from the file, its secrets from the environment", func(t *testing.T) {
		p := writeConfig(t, "telegram:\n  token: x\n  mini_app: table\nweb:\n  listen: 127.0.0.1:8480\n  public_url: https://table.example.org\n")
		env := map[string]string{"KONTERMATT_WEB_LINK_KEY": "0123456789abcdef0123", "KONTERMATT_DISCORD_CLIENT_SECRET": "SECRET-client"}
		c, err := loadConfig(p, func(k string) string { return env[k] })
		if err != nil || c.Web.Listen != "127.0.0.1:8480" || c.Web.LinkKey != env["KONTERMATT_WEB_LINK_KEY"] ||
			c.Discord.ClientSecret != "SECRET-client" || c.Telegram.MiniApp != "table" {
			t.Errorf("web %+v, err %v", c.Web, err)
		}
	})
	for _, tc := range []struct{ name, text, want string }{
		{"web listen without an address", "telegram:\n  token: x\nweb:\n  listen: 127.0.0.1:8480\n", "web.public_url"},
		{"web address without listen", "web:\n  public_url: https://table.example.org\n", "web.listen"},
		{"web address not https", "telegram:\n  token: x\nweb:\n  listen: :8480\n  public_url: http://table.example.org\n", "https"},
		{"web listen without a port", "telegram:\n  token: x\nweb:\n  listen: 127.0.0.1\n  public_url: https://t.example\n", "web.listen"},
		{"web link key short", "telegram:\n  token: x\nweb:\n  listen: :8480\n  public_url: https://t.example\n  link_key: SECRET\n", "link_key"},
		{"web without a chat", "web:\n  listen: :8480\n  public_url: https://t.example\n", "chat token"},
		{"mini app without the web", "telegram:\n  token: x\n  mini_app: table\n", "web"},
		{"client secret without the web", "discord:\n  token: x\n  client_secret: SECRET-c\n", "web"},
		{"several copies without a link key", "store: etcd\netcd:\n  endpoints: [\"http://127.0.0.1:2379\"]\ntelegram:\n  token: x\nweb:\n  listen: :8480\n  public_url: https://t.example\n", "web.link_key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadConfig(writeConfig(t, tc.text), noEnv)
			if !errors.Is(err, errConfig) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "SECRET") {
				t.Errorf("got %v, want a config error naming %q and not the secret", err, tc.want)
			}
		})
	}
	t.Run("plain http on this machine", func(t *testing.T) {
		p := writeConfig(t, "telegram:\n  token: x\nweb:\n  listen: 127.0.0.1:8480\n  public_url: http://127.0.0.1:8480\n")
		if _, err := loadConfig(p, noEnv); err != nil {
			t.Error(err)
		}
	})
	t.Run("empty file is fine", func(t *testing.T) {
		if _, err := loadConfig(writeConfig(t, ""), noEnv); err != nil {
			t.Error(err)
		}
	})
}

// trusted_proxies names the reverse proxies in front of the web table and the webhook; the
// default is this machine's, "none" is none, and anything that is no address is refused.
func TestTrustedProxies(t *testing.T) {
	for _, tc := range []struct{ text, env, want string }{
		{"", "", "[]"}, // nil: the servers' own default, this machine
		{"trusted_proxies: 10.0.0.0/8, 172.18.0.2\n", "", "[10.0.0.0/8 172.18.0.2/32]"},
		{"trusted_proxies: 10.0.0.0/8\n", "192.168.1.0/24 ::1", "[192.168.1.0/24 ::1/128]"},
		{"trusted_proxies: none\n", "", "[]"},
	} {
		c, err := loadConfig(writeConfig(t, tc.text), func(k string) string {
			if k == "KONTERMATT_TRUSTED_PROXIES" {
				return tc.env
			}
			return ""
		})
		if err != nil || fmt.Sprint(c.proxies) != tc.want || (tc.text == "" && c.proxies != nil) || (strings.Contains(tc.text, "none") && c.proxies == nil) {
			t.Errorf("%q, env %q: %v %v, want %s", tc.text, tc.env, c.proxies, err, tc.want)
		}
		if w := c.telegramWebhook(); fmt.Sprint(w.HTTP.Proxies) != tc.want {
			t.Errorf("%q: the webhook's proxies %v", tc.text, w.HTTP.Proxies)
		}
	}
	_, err := loadConfig(writeConfig(t, "trusted_proxies: 10.0.0.0/8, proxy.internal\n"), func(string) string { return "" })
	if !errors.Is(err, errConfig) || !strings.Contains(err.Error(), "trusted_proxies") || !strings.Contains(err.Error(), "proxy.internal") {
		t.Errorf("a name for a proxy: %v", err)
	}
}

// A value that does not fit is named with where it was set: the file's line, or the environment
// variable. A key given twice, a section nobody knows, a duration that makes no sense (0 given, a
// negative one) are said in the config's words.
func TestConfigMistakesSayWhere(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"a bad value's line", "database: k.db\nlog_format: xml\n", `config.yaml line 2: log_format "xml": use text or json`},
		{"a nested value's line", "telegram:\n  token: x\nweb:\n  listen: 127.0.0.1\n  public_url: https://t.example\n", "config.yaml line 4: web.listen"},
		{"a key twice", "database: a.db\nlog_level: info\ndatabase: b.db\n", "line 3: database is given twice (first on line 1): keep one"},
		{"a nested key twice", "telegram:\n  token: a\n  token: b\n", "line 3: telegram.token is given twice (first on line 2): keep one"},
		{"an unknown section", "frobnicate:\n  bar: 1\n", `line 1: unknown key "frobnicate"; the keys are admin_addr, admin_socket, admin_token, database, discord, etcd, log_format, log_level, metrics_addr, metrics_token, retention, rules_url, seed, store, telegram, think, trusted_proxies, web`},
		{"an unknown key in a section", "web:\n  xyzzy: 1\n", `line 2: unknown key "web.xyzzy"; web's keys are link_key, listen, public_url`},
		{"a negative think", "think: -5s\n", "config.yaml line 1: think -5s: a computer player needs time to decide"},
		{"a zero think", "think: 0s\n", "config.yaml line 1: think 0s"},
		{"a zero retention", "retention: 0s\n", "config.yaml line 1: retention 0s: keep closed tables at least an hour (or leave it out: 720h0m0s)"},
		{"an election timeout etcd refuses", "store: etcd\netcd:\n  endpoints: [\"http://127.0.0.1:2379\"]\n  election_timeout: 90s\n",
			"etcd.election_timeout 1m30s: give the members' --election-timeout, such as 1s (or leave it out: 1s)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadConfig(writeConfig(t, tc.text), func(string) string { return "" })
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want it to say %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "unmarshal errors") || strings.Contains(err.Error(), "mapping key") {
				t.Errorf("the YAML decoder's words: %v", err)
			}
		})
	}
	t.Run("from the environment", func(t *testing.T) {
		_, err := loadConfig(writeConfig(t, "log_format: text\n"), func(k string) string {
			if k == "KONTERMATT_LOG_FORMAT" {
				return "xml"
			}
			return ""
		})
		if err == nil || !strings.Contains(err.Error(), `KONTERMATT_LOG_FORMAT: log_format "xml"`) {
			t.Errorf("got %v, want the variable named", err)
		}
	})
	t.Run("the election timeout from the environment", func(t *testing.T) {
		c, err := loadConfig(writeConfig(t, "store: etcd\netcd:\n  endpoints: [\"http://127.0.0.1:2379\"]\n"), func(k string) string {
			if k == "KONTERMATT_ETCD_ELECTION_TIMEOUT" {
				return "2500ms"
			}
			return ""
		})
		if err != nil || c.Etcd.ElectionTimeout != 2500*time.Millisecond {
			t.Errorf("etcd.election_timeout %v, %v", c.Etcd.ElectionTimeout, err)
		}
	})
	t.Run("left out is the default", func(t *testing.T) {
		c, err := loadConfig(writeConfig(t, "think:\nretention:\n"), func(string) string { return "" })
		if err != nil || c.Think != 2*time.Second || c.Retention != 720*time.Hour {
			t.Errorf("think %v, retention %v, %v", c.Think, c.Retention, err)
		}
	})
}

// A config file with a token that every user of the machine may read is warned about (the bot
// logs it at start); one of mode 0600, or one without secrets, is not.
func TestConfigReadableSecretsWarn(t *testing.T) {
	for _, tc := range []struct {
		text string
		mode os.FileMode
		warn bool
	}{
		{"telegram:\n  token: 123:SECRET\n", 0o644, true},
		{"admin_addr: 127.0.0.1:8377\nadmin_token: SECRET-0123456789abcdef\n", 0o604, true},
		{"telegram:\n  token: 123:SECRET\n", 0o600, false},
		{"telegram:\n  token: 123:SECRET\n", 0o640, false},
		{"log_level: debug\n", 0o644, false},
	} {
		p := writeConfig(t, tc.text)
		if err := os.Chmod(p, tc.mode); err != nil {
			t.Fatal(err)
		}
		c, err := loadConfig(p, func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Join(c.Warnings, "\n")
		if tc.warn != (got != "") || tc.warn && (!strings.Contains(got, "chmod 600 "+p) || !strings.Contains(got, "every user")) {
			t.Errorf("%q mode %v: warnings %q", tc.text, tc.mode, got)
		}
		if strings.Contains(got, "SECRET") {
			t.Errorf("the warning shows the secret: %s", got)
		}
	}
}

// TestClashingListeners (issue 32): two listeners on one address are refused at start, in one
// line naming both keys; distinct ports, and port 0, are fine.
func TestClashingListeners(t *testing.T) {
	base := map[string]string{"KONTERMATT_TELEGRAM_TOKEN": "123:x", "KONTERMATT_TELEGRAM_WEBHOOK_URL": "https://bot.example.org/hook",
		"KONTERMATT_TELEGRAM_WEBHOOK_SECRET": "hook-secret-0123456789", "KONTERMATT_ADMIN_TOKEN": "admin-0123456789abcdef",
		"KONTERMATT_METRICS_TOKEN": "metrics-0123456789abcdef", "KONTERMATT_WEB_PUBLIC_URL": "https://table.example.org"}
	for _, tc := range []struct {
		name string
		env  map[string]string
		want []string // the keys the error names; none: it starts
	}{
		{"metrics on the webhook's address", map[string]string{"KONTERMATT_TELEGRAM_WEBHOOK_LISTEN": "0.0.0.0:8443", "KONTERMATT_METRICS_ADDR": "0.0.0.0:8443"},
			[]string{"metrics_addr", "telegram.webhook.listen"}},
		{"every address and loopback on one port", map[string]string{"KONTERMATT_WEB_LISTEN": ":8480", "KONTERMATT_ADMIN_ADDR": "127.0.0.1:8480"},
			[]string{"admin_addr", "web.listen"}},
		{"localhost and 127.0.0.1", map[string]string{"KONTERMATT_WEB_LISTEN": "127.0.0.1:8480", "KONTERMATT_TELEGRAM_WEBHOOK_LISTEN": "localhost:8480"},
			[]string{"web.listen", "telegram.webhook.listen"}},
		{"each its own port", map[string]string{"KONTERMATT_WEB_LISTEN": "0.0.0.0:8480", "KONTERMATT_TELEGRAM_WEBHOOK_LISTEN": "0.0.0.0:8443",
			"KONTERMATT_METRICS_ADDR": "0.0.0.0:9464", "KONTERMATT_ADMIN_ADDR": "127.0.0.1:8377"}, nil},
		{"two hosts, one port", map[string]string{"KONTERMATT_WEB_LISTEN": "10.0.0.1:8480", "KONTERMATT_TELEGRAM_WEBHOOK_LISTEN": "10.0.0.2:8480"}, nil},
		{"any free port twice", map[string]string{"KONTERMATT_WEB_LISTEN": "127.0.0.1:0", "KONTERMATT_METRICS_ADDR": "127.0.0.1:0"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{}
			for k, v := range base {
				env[k] = v
			}
			for k, v := range tc.env {
				env[k] = v
			}
			if env["KONTERMATT_WEB_LISTEN"] == "" {
				delete(env, "KONTERMATT_WEB_PUBLIC_URL")
			}
			_, err := loadConfig("", func(k string) string { return env[k] })
			if len(tc.want) == 0 {
				if err != nil {
					t.Errorf("refused: %v", err)
				}
				return
			}
			if !errors.Is(err, errConfig) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("got %v, want one line of config error", err)
			}
			for _, key := range tc.want {
				if !strings.Contains(err.Error(), key) {
					t.Errorf("%v does not name %s", err, key)
				}
			}
		})
	}
}

// TestMetricsConfig (issue 32): metrics_addr off loopback needs metrics_token; on loopback it
// does not; a short token is refused; the token shows in no error.
func TestMetricsConfig(t *testing.T) {
	for _, tc := range []struct {
		addr, token string
		ok          bool
	}{
		{"127.0.0.1:9464", "", true},
		{"localhost:9464", "", true},
		{"0.0.0.0:9464", "", false},
		{":9464", "", false},
		{"10.0.0.5:9464", "SECRET-0123456789abcdef", true},
		{"0.0.0.0:9464", "SECRET-short", false},
		{"9464", "SECRET-0123456789abcdef", false},
	} {
		env := map[string]string{"KONTERMATT_METRICS_ADDR": tc.addr, "KONTERMATT_METRICS_TOKEN": tc.token}
		_, err := loadConfig("", func(k string) string { return env[k] })
		if (err == nil) != tc.ok || err != nil && (!errors.Is(err, errConfig) || strings.Contains(err.Error(), "SECRET")) {
			t.Errorf("metrics_addr %q with token %q: %v", tc.addr, tc.token, err)
		}
	}
}

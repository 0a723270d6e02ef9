package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
		if c.Database != "kontermatt.db" || c.Telegram.APIURL != "https://api.telegram.org" || c.AdminAddr != "127.0.0.1:8377" {
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
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadConfig(writeConfig(t, tc.text), noEnv)
			if !errors.Is(err, errConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want a config error naming %q", err, tc.want)
			}
		})
	}
	t.Run("a bad config never shows the token", func(t *testing.T) {
		_, err := loadConfig(writeConfig(t, "telegram:\n  token: 123:SECRET-TOKEN\n  extra: 1\n"), noEnv)
		if err == nil || strings.Contains(err.Error(), "SECRET") {
			t.Errorf("error %v", err)
		}
	})
	t.Run("empty file is fine", func(t *testing.T) {
		if _, err := loadConfig(writeConfig(t, ""), noEnv); err != nil {
			t.Error(err)
		}
	})
}

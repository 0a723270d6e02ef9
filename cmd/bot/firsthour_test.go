package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// The flags and files a person meets in their first hour at the terminal (issue 35): -pace's
// help shows no "(default -1ns)" and a negative pause is refused; a log level is a word in any
// case; an empty database file is refused, not taken silently for a new database; a database
// that cannot be opened is named once.
func TestPaceFlag(t *testing.T) {
	_, stdout, stderr := runIn("", "-h")
	help := stdout + stderr
	i := strings.Index(help, "-pace")
	if i < 0 {
		t.Fatalf("-h does not list -pace:\n%s", help)
	}
	line := help[i:]
	line = line[:strings.Index(line, "\n  -")]
	if strings.Contains(line, "-1ns") || strings.Contains(line, "(default -") {
		t.Errorf("-pace's help shows the internal default:\n%s", line)
	}
	if !strings.HasPrefix(line, "-pace duration") {
		t.Errorf("-pace's help does not say it takes a duration:\n%s", line)
	}
	for _, bad := range []string{"-5s", "soon"} {
		code, _, stderr := runIn("", "-db", filepath.Join(t.TempDir(), "k.db"), "-pace", bad)
		if code != 2 || !strings.Contains(stderr, `invalid value "`+bad+`" for flag -pace`) {
			t.Errorf("-pace %s: exit %d, stderr %q; want it refused with exit 2", bad, code, stderr)
		}
	}
}

func TestLogLevelAnyCase(t *testing.T) {
	for _, level := range []string{"DEBUG", "Info", "warn", " Error "} {
		env := map[string]string{"KONTERMATT_LOG_LEVEL": level}
		cfg, err := loadConfig("", func(k string) string { return env[k] })
		if err != nil {
			t.Errorf("KONTERMATT_LOG_LEVEL=%q: %v", level, err)
			continue
		}
		if want := strings.ToLower(strings.TrimSpace(level)); cfg.LogLevel != want {
			t.Errorf("KONTERMATT_LOG_LEVEL=%q: level %q, want %q", level, cfg.LogLevel, want)
		}
	}
	env := map[string]string{"KONTERMATT_LOG_LEVEL": "loud"}
	if _, err := loadConfig("", func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), "use debug, info, warn or error") {
		t.Errorf("KONTERMATT_LOG_LEVEL=loud: %v; want it refused with the levels", err)
	}
}

func TestEmptyDatabaseFileIsRefused(t *testing.T) {
	db := filepath.Join(t.TempDir(), "k.db")
	if err := os.WriteFile(db, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runIn("quit\n", "-db", db)
	want := db + " is an empty file (0 bytes), not a database: restore it from a backup, or remove it to start a new database\n"
	if code != 1 || stderr != want {
		t.Errorf("exit %d, stderr %q; want exit 1 and %q (stdout %q)", code, stderr, want, tail(stdout))
	}
	if fi, err := os.Stat(db); err != nil || fi.Size() != 0 {
		t.Errorf("the empty file was changed: %v, %v", fi, err)
	}
}

// A database the bot may not write (a read-only file when not run as root) is named once, with
// why; the storage's error names the path and so does the system's inside it.
func TestUnopenableDatabaseNamedOnce(t *testing.T) {
	db := filepath.Join(t.TempDir(), "k.db")
	denied := fmt.Errorf("storage: open %s: %w", db, &fs.PathError{Op: "open", Path: db, Err: syscall.EACCES})
	odd := fmt.Errorf("storage: open %s: %w", db, &fs.PathError{Op: "open", Path: db, Err: syscall.EISDIR})
	for _, err := range []error{denied, odd} {
		got := dbError(db, err).Error()
		if n := strings.Count(got, db); n != 1 {
			t.Errorf("%q names the database %d times; want once", got, n)
		}
	}
	if got := dbError(db, denied).Error(); !strings.Contains(got, "permission denied") {
		t.Errorf("%q does not say why", got)
	}
	// The real thing, where file permissions bind (not for root).
	if os.Geteuid() != 0 {
		runIn("", "-db", db, "-humans", "0", "-pace", "0", "-options", "stripes=1")
		if err := os.Chmod(db, 0o444); err != nil {
			t.Fatal(err)
		}
		_, _, stderr := runIn("", "-db", db, "-humans", "0")
		if n := strings.Count(stderr, db); n != 1 {
			t.Errorf("a read-only database: %q names it %d times; want once", stderr, n)
		}
	}
}

// With -lang the first line the player reads is in that language too.
func TestFirstLineSpeaksTheScreensLanguage(t *testing.T) {
	for lang, want := range map[string]string{"en": "no chat token set: playing in this terminal", "lb": "Keen Chat-Token: mir spillen hei am Terminal",
		"de": "Kein Chat-Token gesetzt", "fr": "Aucun jeton de chat"} {
		_, _, stderr := runIn("quit\n", "-db", filepath.Join(t.TempDir(), "k.db"), "-lang", lang)
		if first, _, _ := strings.Cut(stderr, "\n"); !strings.HasPrefix(first, want) {
			t.Errorf("-lang %s: the first line is %q; want it to start with %q", lang, first, want)
		}
	}
}

// /rules links the web table's rules page in the reader's language when the web table is on,
// the host's rules_url when one is set, and nothing else (the project's page is English only).
func TestRulesURL(t *testing.T) {
	var c Config
	if got := rulesURL(c); got != "" {
		t.Errorf("no web table, no rules_url: %q, want no link", got)
	}
	c.Web.PublicURL = "https://table.example.org/km/"
	if got := rulesURL(c); got != "https://table.example.org/km/rules?lang={lang}" {
		t.Errorf("with the web table: %q", got)
	}
	c.RulesURL = "https://club.example.org/regelen"
	if got := rulesURL(c); got != c.RulesURL {
		t.Errorf("with rules_url: %q", got)
	}
}

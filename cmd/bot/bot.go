package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/kontermatt/kontermatt/adapters/discord"
	"github.com/kontermatt/kontermatt/adapters/telegram"
	"github.com/kontermatt/kontermatt/adapters/terminal"
	"github.com/kontermatt/kontermatt/adapters/web"
	"github.com/kontermatt/kontermatt/cmd/bot/internal/ops"
	"github.com/kontermatt/kontermatt/core/coach"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/verbset"
	"github.com/kontermatt/kontermatt/storage"
	"github.com/kontermatt/kontermatt/storage/etcdstore"
)

// Main is the running bot: what it was told and the pieces it wired. Open makes them, Run serves
// until its context ends, Close stops them in order: the platforms have stopped taking updates
// when Run returns, then the service stops its timers and computer players, the adapters send
// what is left, the admin door closes and the database last. Tests drive it the same way.
type Main struct {
	Config Config
	// Terminal is how a bot with no chat token plays: the players at the keyboard and their
	// table's options.
	Terminal TerminalFlags
	Seed     uint64 // 0: the config's, else random
	Stdin    io.Reader
	Stdout   io.Writer
	Stderr   io.Writer

	Log     *slog.Logger
	Store   botStore // the bbolt file, or the etcd cluster (Config.Store)
	Service *table.Service

	admin   *ops.Admin
	metrics *ops.MetricsListener // metrics_addr's; nil: none
	leases  *etcdstore.Leases    // with etcd: this copy's leases in the cluster
	term    *terminal.Terminal
	chats   []chatAdapter

	// stopHistory ends keepHistory (etcd) and waits for it.
	stopHistory func()
}

// TerminalFlags are the terminal table's settings from the command line.
type TerminalFlags struct {
	Humans  int
	Level   string
	Options string
	Lang    string
	Pace    time.Duration // computer players' pause before a move; negative: 1 s when watching
	Learn   bool          // a guided game for the one player (the service's learn)
	Fresh   bool          // -new: stop an unfinished match stored here and start a new table
	Web     bool          // -web: play in the browser, the web table on this machine, not in the terminal
	// Insist is what was given on the command line rather than left at its default.
	Insist terminal.Insist
}

// Open opens the database and wires the surfaces, the service and the admin door, and resumes
// the stored tables. Its error is the line for the screen.
func (m *Main) Open(ctx context.Context) error {
	cfg := m.Config
	// What the platforms and the admin door say while they start waits for the start line.
	hold := newHold(newLogger(m.Stderr, cfg.LogLevel, cfg.LogFormat).Handler())
	defer hold.release() // also when Open fails: what was said before the error is not lost
	m.Log = slog.New(hold)
	terminalMode := cfg.Discord.Token == "" && cfg.Telegram.Token == ""
	webMode := terminalMode && m.Terminal.Web
	terminalMode = terminalMode && !webMode
	if terminalMode && m.Terminal.Humans > 0 && !canPlay(m.Stdin) {
		// Under systemd or in a container stdin is /dev/null: a mistyped token variable would
		// otherwise start a card game nobody sees, and exit 0. Said before a database is made.
		return errNoTerminal
	}
	store, err := openConfigured(cfg, storage.Options{})
	if err != nil {
		return err
	}
	m.Store = store
	if etcd, ok := store.(*etcdstore.Store); ok {
		etcd.SetLog(m.Log) // what it skips is said in the bot's log
	}
	m.leases = copyLeases(store)
	seed := cfg.Seed // 0: every table's secret from crypto/rand
	if m.Seed != 0 {
		seed = m.Seed
	}
	outboxes := map[string]table.Outbox{}
	deciders := robots
	var local *web.Server // bot -web's
	if terminalMode {
		tf := m.Terminal
		// The timer waits for nobody at a keyboard: a terminal table has none unless asked.
		opts := append([]string{"timer=none", "level=" + tf.Level}, strings.Fields(tf.Options)...)
		if tf.Learn {
			// A guided game has its own defaults (easy, no timer, hints): only what was given
			// changes them.
			opts = tf.Insist.Options
		}
		m.term = terminal.New(terminal.Config{In: m.Stdin, Out: m.Stdout, Humans: tf.Humans, Options: opts,
			Name: os.Getenv("USER"), Lang: tf.Lang, Learn: tf.Learn, Insist: tf.Insist, Fresh: tf.Fresh, Pace: tf.Pace})
		outboxes[terminal.Platform] = m.term
		m.Log = newLogger(m.Stderr, "error", cfg.LogFormat) // the screen is the game's: only failures go to stderr
		deciders = m.term.Robots(robots)
	} else if webMode {
		if local, err = localWeb(outboxes, store, m.Log); err != nil {
			return err
		}
		m.chats = []chatAdapter{webChat{local}}
	} else if m.chats, err = newChats(cfg, store, m.Log, outboxes, m.leases); err != nil {
		return err
	}
	met := ops.NewMetrics(buildLabels())
	// Which copy fires the timers: with etcd, the one holding their lease in the cluster; with
	// bbolt, this one, the only copy.
	var leases table.Leases = &table.LocalLeases{}
	shared := m.leases != nil
	if shared {
		leases = m.leases
	}
	tcfg := table.Config{Store: store, KV: store, Outboxes: outboxes, Robots: deciders, Seed: seed,
		Leases: leases, Shared: shared, Coach: coach.New(coach.Config{Log: m.Log}), Log: m.Log, RulesURL: rulesURL(cfg),
		Think: cfg.Think, Retention: cfg.Retention, Observe: met,
		Surfaces: map[string]api.Surface{terminal.Platform: terminal.Surface},
		// Every adapter's, running or not: a person is forgotten from a platform served before too.
		People: []table.People{telegram.People, discord.People}}
	verbset.Wire(&tcfg) // the league's, privacy, settings and coach verbs, with the league the engine teaches
	m.Service = table.New(tcfg)
	met.Watch(m.Service, platforms(m.chats))
	met.ReadBackups(store, m.Log) // a backup by another process or copy shows too
	if etcd, ok := store.(*etcdstore.Store); ok && shared {
		m.stopHistory = startHistory(etcd, m.leases, cfg.Etcd.History, m.Log)
		met.WatchEtcd(etcd)
	}
	// Live backups, health and metrics. A file at the socket's path that is not this bot's own
	// stale socket stops the start.
	ready := ops.Health(store, platforms(m.chats), ops.StoreHealth(storeName(cfg), store, leases))
	m.admin = &ops.Admin{Store: snapshotsOf(store, cfg), Log: m.Log, Socket: adminSocket(cfg), Addr: cfg.AdminAddr, Token: cfg.AdminToken,
		SharedSocket: shared, Metrics: met.Handler(), Backups: met, Health: ready}
	if err := m.admin.Start(); err != nil {
		return err
	}
	if cfg.MetricsAddr != "" {
		m.metrics = &ops.MetricsListener{Addr: cfg.MetricsAddr, Token: cfg.MetricsToken, Handler: met.Handler(), Health: ready, Log: m.Log}
		if err := m.metrics.Start(); err != nil {
			return err
		}
	}
	for _, c := range m.chats {
		c.Attach(m.Service)
	}
	m.sayStart(slog.New(hold.inner))
	hold.release()
	for _, w := range cfg.Warnings {
		m.Log.Warn(w)
	}
	if err := m.Service.Resume(ctx); err != nil {
		m.Log.Error("some stored tables could not be resumed", "err", err)
	}
	if local != nil {
		return m.openLocalTable(ctx, local)
	}
	return nil
}

// platforms are the chat adapters as operations see them.
func platforms(chats []chatAdapter) []ops.Platform {
	out := make([]ops.Platform, len(chats))
	for i, c := range chats {
		out[i] = c
	}
	return out
}

// storeName names the store in the health answer: the bbolt file, or the cluster.
func storeName(cfg Config) string {
	if cfg.Store == "etcd" {
		return describeStore(cfg)
	}
	return "bbolt " + cfg.Database
}

// errNoTerminal is a bot with neither a chat token nor a terminal to play in.
var errNoTerminal = errors.New("no chat token set (KONTERMATT_TELEGRAM_TOKEN, KONTERMATT_DISCORD_TOKEN or the config file) " +
	"and no terminal to play in: set a token, or start the bot in a terminal")

// canPlay reports whether the terminal table has someone to read from: a terminal, a pipe or a
// file, not /dev/null.
func canPlay(in io.Reader) bool {
	f, ok := in.(*os.File)
	if !ok {
		return in != nil // a reader a test or a program hands in
	}
	if term.IsTerminal(int(f.Fd())) {
		return true
	}
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	return fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) != 0 || fi.Mode().IsRegular()
}

// rulesURL is the page /rules links ("{lang}" in it is the reader's language): the host's
// rules_url, else the web table's rules page in the reader's language, else none (the chat's
// own text is the rules; the project's page elsewhere is English only).
func rulesURL(cfg Config) string {
	if cfg.RulesURL != "" || cfg.Web.PublicURL == "" {
		return cfg.RulesURL
	}
	return strings.TrimSuffix(cfg.Web.PublicURL, "/") + "/rules?lang={lang}"
}

// sayStart is the one line that says what started: the version, the database, the platforms and
// the admin door. It is the log's first line: log writes it past what Open holds back.
func (m *Main) sayStart(log *slog.Logger) {
	if m.term != nil {
		// One line before the game; the admin door's own warnings stay off the game's screen.
		// In the screen's language when -lang gave one: it is the first line a player reads.
		lang := i18n.Pick(m.Terminal.Lang)
		door := i18n.T(lang, "term.start.backups", strings.Join(m.admin.Endpoints(), " "))
		if len(m.admin.Endpoints()) == 0 {
			door = i18n.T(lang, "term.start.no_backups")
		}
		fmt.Fprintln(m.Stderr, i18n.T(lang, "term.start", version(), describeStore(m.Config), door))
		return
	}
	var platforms []string
	for _, c := range m.chats {
		platforms = append(platforms, c.Describe())
	}
	log.Info("kontermatt started", "version", version(), "database", describeStore(m.Config),
		"platforms", strings.Join(platforms, ", "), "admin", strings.Join(m.admin.Endpoints(), " "), "metrics", m.metricsAt())
}

// metricsAt says where metrics_addr's listener listens; empty: none.
func (m *Main) metricsAt() string {
	if m.metrics == nil || m.metrics.ListenAddr() == nil {
		return ""
	}
	return "http://" + m.metrics.ListenAddr().String()
}

// Run serves the terminal table or the chat platforms until ctx ends (SIGTERM) or, in the
// terminal, the players are done. Every platform stops taking updates and finishes what is in
// flight before Run returns.
func (m *Main) Run(ctx context.Context) error {
	if m.term != nil {
		if err := m.term.Run(ctx, m.Service); err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
		return nil
	}
	return runChats(ctx, m.chats, m.Log)
}

// Close stops what Open started, in order; it may be called after a failed Open. Its error is
// the database's, as a line for the screen: a database that did not close cleanly may not hold
// what was written last.
func (m *Main) Close() error {
	if m.Service != nil {
		m.Service.Close()
	}
	if m.stopHistory != nil {
		m.stopHistory()
	}
	if m.leases != nil {
		_ = m.leases.Close() // another copy takes the leases at once, not after their time to live
	}
	closeChats(m.chats, m.Log)
	if m.metrics != nil {
		m.metrics.Close()
	}
	if m.admin != nil {
		m.admin.Close()
	}
	if m.Store != nil {
		if err := m.Store.Close(); err != nil {
			return fmt.Errorf("the database %s did not close cleanly: %w", m.Config.Database, err)
		}
	}
	return nil
}

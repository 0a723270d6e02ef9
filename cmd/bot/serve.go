package main

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/kontermatt/kontermatt/adapters/terminal"
	"github.com/kontermatt/kontermatt/core/robot"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/storage"
)

// robots makes the computer players the service seats.
func robots(level string, seed uint64) table.Decider {
	l, err := robot.ParseLevel(level)
	if err != nil {
		l = robot.Normal
	}
	return robot.New(l, seed)
}

func newLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level))
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l}))
}

func randomSeed() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])
}

// openStore opens the database; its error is the one line for the screen (see dbError).
func openStore(path string, opts storage.Options) (*storage.Store, error) {
	st, err := storage.Open(path, opts)
	if err != nil {
		return nil, dbError(path, err)
	}
	return st, nil
}

// serve runs the bot: the configured chat platforms, or with no tokens a table in the terminal.
func serve(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bot", flag.ContinueOnError)
	fs.SetOutput(stderr)
	configPath := fs.String("config", "", "YAML config file (see config.example.yaml)")
	dbPath := fs.String("db", "", "database file (overrides the config)")
	humans := fs.Int("humans", 1, "terminal: players at this keyboard: 1 plays with three computers, 4 plays hot seat, 0 watches four computers")
	level := fs.String("level", "normal", "terminal: computer players' level: easy, normal or strong")
	options := fs.String("options", "", `terminal: options for a new table, e.g. "stripes=5 timer=none"`)
	lang := fs.String("lang", "en", "terminal: language: en, lb, de or fr")
	seedFlag := fs.Uint64("seed", 0, "seed for table IDs, deals and computer players (0: the config's, else random)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *humans < 0 || *humans > 4 {
		fmt.Fprintln(stderr, "-humans must be 0 to 4")
		return 2
	}
	cfg, err := loadConfig(*configPath, os.Getenv)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	if *dbPath != "" {
		cfg.Database = *dbPath
	}
	log := newLogger(stderr, cfg.LogLevel)
	store, err := openStore(cfg.Database, storage.Options{})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	defer store.Close()
	seed := cfg.Seed
	if *seedFlag != 0 {
		seed = *seedFlag
	}
	if seed == 0 {
		seed = randomSeed()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	outboxes := map[string]table.Outbox{}
	var term *terminal.Terminal
	var chats []chatAdapter
	if cfg.Discord.Token == "" && cfg.Telegram.Token == "" {
		// The timer waits for nobody at a keyboard: a terminal table has none unless asked.
		opts := append([]string{"timer=none", "level=" + *level}, strings.Fields(*options)...)
		term = terminal.New(terminal.Config{In: stdin, Out: stdout, Humans: *humans, Options: opts,
			Name: os.Getenv("USER"), Lang: *lang})
		outboxes[terminal.Platform] = term
		log = newLogger(stderr, "warn") // the terminal is for the game; only problems go to stderr
	} else {
		chats, err = newChats(cfg, store, log, outboxes)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
	}
	// Live backups and metrics. The bot holds the database's lock by now, so a socket file beside
	// the database can only be a crashed bot's. Closed after the service, before the database.
	adm := &admin{Store: store, Log: log, Socket: cfg.Database + ".sock", Addr: cfg.AdminAddr, Token: cfg.AdminToken}
	adm.Start()
	defer adm.Close()
	svc := table.New(table.Config{Store: store, KV: store, Outboxes: outboxes, Robots: robots, Seed: seed, Log: log,
		RulesURL: cfg.RulesURL, Think: cfg.Think, Retention: cfg.Retention})
	defer svc.Close() // runs before store.Close: stop timers and computer players first
	for _, c := range chats {
		c.Attach(svc)
	}
	if err := svc.Resume(ctx); err != nil {
		log.Error("some stored tables could not be resumed", "err", err)
	}
	if term != nil {
		if err := term.Run(ctx, svc); err != nil && !errors.Is(err, context.Canceled) {
			fmt.Fprintln(stderr, err)
			return 1
		}
		return 0
	}
	// SIGTERM: the platforms stop taking updates and finish what is in flight, then the service
	// stops its timers and computer players, the adapters send what is left, and the deferred
	// Close shuts the database last.
	code := runChats(ctx, chats, log)
	svc.Close()
	closeChats(chats, log)
	return code
}

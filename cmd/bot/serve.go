package main

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

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
	m := &Main{Stdin: stdin, Stdout: stdout, Stderr: stderr}
	configPath := fs.String("config", "", "YAML config file (see config.example.yaml)")
	dbPath := fs.String("db", "", "database file (overrides the config)")
	fs.IntVar(&m.Terminal.Humans, "humans", 1, "terminal: players at this keyboard: 1 plays with three computers, 4 plays hot seat, 0 watches four computers")
	fs.StringVar(&m.Terminal.Level, "level", "normal", "terminal: computer players' level: easy, normal or strong")
	fs.StringVar(&m.Terminal.Options, "options", "", `terminal: options for a new table, e.g. "stripes=5 timer=none"`)
	fs.StringVar(&m.Terminal.Lang, "lang", "en", "terminal: language: en, lb, de or fr")
	fs.Uint64Var(&m.Seed, "seed", 0, "seed for table IDs, deals and computer players (0: the config's, else random)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if h := m.Terminal.Humans; h < 0 || h > 4 {
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
	m.Config = cfg
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	defer m.Close()
	if err := m.Open(ctx); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if err := m.Run(ctx); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}

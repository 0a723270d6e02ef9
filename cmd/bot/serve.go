package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/i18n"
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

// pacedRobots are computer players that pause before each move, so a person watching can follow.
func pacedRobots(pause time.Duration) func(level string, seed uint64) table.Decider {
	return func(level string, seed uint64) table.Decider { return paced{robots(level, seed), pause} }
}

type paced struct {
	table.Decider
	pause time.Duration
}

func (p paced) Decide(ctx context.Context, v core.View) core.Move {
	t := time.NewTimer(p.pause)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
	return p.Decider.Decide(ctx, v)
}

// newLogger logs at level and up, as text lines or JSON objects (log_format).
func newLogger(w io.Writer, level, format string) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level))
	opts := &slog.HandlerOptions{Level: l}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// openStore opens the database; its error is the one line for the screen (see dbError).
func openStore(path string, opts storage.Options) (*storage.Store, error) {
	st, err := storage.Open(path, opts)
	if err != nil {
		return nil, dbError(path, err)
	}
	return st, nil
}

// levelNames lists the computer levels for messages.
func levelNames() string {
	var names []string
	for _, l := range robot.Levels {
		names = append(names, string(l))
	}
	return strings.Join(names, ", ")
}

// serveFlags are the bot's own flags, set into m; it gives the config and database paths given.
func serveFlags(m *Main) (fs *flag.FlagSet, configPath, dbPath *string) {
	fs = newFlags("")
	configPath = fs.String("config", "", "YAML config file (see config.example.yaml)")
	dbPath = fs.String("db", "", "database file (overrides the config)")
	fs.IntVar(&m.Terminal.Humans, "humans", 1, "terminal: players at this keyboard: 1 plays with three computers, 4 plays hot seat, 0 watches four computers")
	fs.StringVar(&m.Terminal.Level, "level", "normal", "terminal: computer players' level: "+levelNames())
	fs.StringVar(&m.Terminal.Options, "options", "", "terminal: options for a new table, e.g. \"stripes=5 direction=anticlockwise\":\n"+table.OptionsUsage("en"))
	fs.StringVar(&m.Terminal.Lang, "lang", "", "terminal: language of the whole screen: "+strings.Join(i18n.Languages, ", ")+" (default: as chosen before, else en)")
	fs.BoolVar(&m.Terminal.Learn, "learn", false, "terminal: a guided game against three computers that explains every turn (with -humans 1)")
	fs.DurationVar(&m.Terminal.Pace, "pace", -1, "terminal: how long computer players pause before each move, so you can follow (default: 1s when watching, else none)")
	fs.Uint64Var(&m.Seed, "seed", 0, "seed for table IDs, deals and computer players (0: the config's, else random)")
	return fs, configPath, dbPath
}

// serve runs the bot: the configured chat platforms, or with no tokens a table in the terminal.
func serve(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	m := &Main{Stdin: stdin, Stdout: stdout, Stderr: stderr}
	fs, configPath, dbPath := serveFlags(m)
	if code, ok := parseFlags(fs, args, 0, stdout, stderr); !ok {
		return code
	}
	tf := m.Terminal
	switch {
	case tf.Humans < 0 || tf.Humans > 4:
		fmt.Fprintln(stderr, "-humans must be 0 to 4")
		return 2
	case tf.Learn && tf.Humans != 1:
		fmt.Fprintln(stderr, "-learn is a game for one player: use it with -humans 1")
		return 2
	case tf.Lang != "" && (i18n.Match(tf.Lang) == "" || i18n.Match(tf.Lang) != strings.ToLower(tf.Lang)):
		fmt.Fprintf(stderr, "-lang %q: the languages are %s\n", tf.Lang, strings.Join(i18n.Languages, ", "))
		return 2
	}
	if _, err := robot.ParseLevel(tf.Level); err != nil {
		fmt.Fprintf(stderr, "-level %q: the levels are %s\n", tf.Level, levelNames())
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

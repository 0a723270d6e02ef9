package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/kontermatt/kontermatt/adapters/terminal"
	"github.com/kontermatt/kontermatt/core/i18n"
	"github.com/kontermatt/kontermatt/core/options"
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

// openStore opens the database; its error is the one line for the screen (see dbError). An empty
// file at path is refused: bbolt would take it for a new database, and a database that lost its
// contents (a failed copy, a full disk) would then start again silently with no matches.
func openStore(path string, opts storage.Options) (*storage.Store, error) {
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() && fi.Size() == 0 && !opts.ReadOnly {
		return nil, fmt.Errorf("%s is an empty file (0 bytes), not a database: restore it from a backup, or remove it to start a new database", path)
	}
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
	fs.StringVar(&m.Terminal.Options, "options", "", "terminal: options for a new table, e.g. \"stripes=5 direction=anticlockwise\":\n"+options.Usage("en"))
	fs.StringVar(&m.Terminal.Lang, "lang", "", "terminal: language of the whole screen: "+strings.Join(i18n.Languages, ", ")+" (default: as chosen before, else en)")
	fs.BoolVar(&m.Terminal.Learn, "learn", false, "terminal: a guided game against three computers that explains every turn (with -humans 1)")
	fs.BoolVar(&m.Terminal.Fresh, "new", false, "terminal: stop an unfinished match stored in the database and start a new table with these flags (the stopped match stays in the history)")
	m.Terminal.Pace = -1
	fs.Var(paceFlag{&m.Terminal.Pace}, "pace", "terminal: how long (a `duration`, e.g. 500ms) computer players pause before each move, so you can follow (default: 1s when watching, else none)")
	fs.BoolVar(&m.Terminal.Web, "web", false, "with no chat token: play in the browser instead of this terminal, with three computer players (the web table on this machine; the bot prints its link)")
	fs.Uint64Var(&m.Seed, "seed", 0, "seed for table IDs, deals and computer players (0: the config's, else random)")
	return fs, configPath, dbPath
}

// paceFlag is -pace: a duration of 0 or more. Left out it stays negative, which the terminal reads
// as "its default", and help shows no "(default -1ns)" for it: flag prints a default only when
// String differs from the zero paceFlag's, and both say "".
type paceFlag struct{ to *time.Duration }

func (p paceFlag) String() string {
	if p.to == nil || *p.to < 0 {
		return ""
	}
	return p.to.String()
}

func (p paceFlag) Set(s string) error {
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		return errors.New("not a duration like 500ms or 2s")
	case d < 0:
		return errors.New("a pause cannot be negative; 0 is none")
	}
	*p.to = d
	return nil
}

// serve runs the bot: the configured chat platforms, or with no tokens a table in the terminal.
func serve(args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
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
	case tf.Web && (tf.Humans != 1 || tf.Learn):
		fmt.Fprintln(stderr, "-web is a table for one player and three computers: use it without -humans and -learn")
		return 2
	case tf.Lang != "" && (i18n.Match(tf.Lang) == "" || i18n.Match(tf.Lang) != strings.ToLower(tf.Lang)):
		fmt.Fprintf(stderr, "-lang %q: the languages are %s\n", tf.Lang, strings.Join(i18n.Languages, ", "))
		return 2
	}
	if _, err := robot.ParseLevel(tf.Level); err != nil {
		fmt.Fprintf(stderr, "-level %q: the levels are %s\n", tf.Level, levelNames())
		return 2
	}
	if err := checkOptions(tf.Options); err != nil {
		fmt.Fprintf(stderr, "-options %q: %v\n", tf.Options, err)
		return 2
	}
	// What was given, not defaulted, must not be overridden silently by a table stored before.
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "humans":
			m.Terminal.Insist.Humans = true
		case "level":
			m.Terminal.Insist.Options = append(m.Terminal.Insist.Options, "level="+tf.Level)
		case "options":
			m.Terminal.Insist.Options = append(m.Terminal.Insist.Options, strings.Fields(tf.Options)...)
		}
	})
	cfg, err := loadConfig(*configPath, os.Getenv)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	if *dbPath != "" {
		cfg.Database = *dbPath
	}
	m.Config = cfg
	ctx, stop := untilStopped()
	defer stop()
	defer func() {
		// A database that does not close cleanly may not hold the last moves: the host hears of
		// it, and the exit status says it.
		if err := m.Close(); err != nil {
			fmt.Fprintln(stderr, err)
			code = max(code, 1)
		}
	}()
	if err := m.Open(ctx); err != nil {
		fmt.Fprintln(stderr, err)
		if errors.Is(err, errNoTerminal) {
			return 2 // a configuration to mend: a service manager should not start it again as it is
		}
		return 1
	}
	if err := m.Run(ctx); err != nil {
		fmt.Fprintln(stderr, err)
		if conflict := (*terminal.ConflictError)(nil); errors.As(err, &conflict) {
			return 2
		}
		return 1
	}
	return 0
}

// checkOptions reads table options as new takes them ("stripes=5 timer=none") and says, in the
// command line's words, what does not fit: a word that is not key=value, an unknown key (with the
// keys there are), a value the option does not take (with those it does).
func checkOptions(typed string) error {
	for _, a := range strings.Fields(typed) {
		if !strings.Contains(a, "=") {
			return fmt.Errorf("%q is not key=value, like stripes=5", a)
		}
	}
	_, err := options.Parse(strings.Fields(typed))
	oe := (*options.Error)(nil)
	switch {
	case err == nil:
		return nil
	case !errors.As(err, &oe):
		return err
	case oe.Option == nil:
		keys := make([]string, len(options.All))
		for i, o := range options.All {
			keys[i] = o.Key
		}
		return fmt.Errorf("unknown option %q; the options are %s", oe.Name, strings.Join(keys, ", "))
	case oe.Option.Number():
		return fmt.Errorf("%s=%s: %s must be a number from %d to %d", oe.Name, oe.Value, oe.Option.Key, oe.Option.Min, oe.Option.Max)
	}
	values := make([]string, len(oe.Option.Values))
	for i, v := range oe.Option.Values {
		values[i] = v.Key
	}
	return fmt.Errorf("%s=%s: %s is one of %s", oe.Name, oe.Value, oe.Option.Key, strings.Join(values, ", "))
}

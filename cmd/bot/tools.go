package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/kontermatt/kontermatt/cmd/bot/internal/ops"
	"github.com/kontermatt/kontermatt/storage"
)

// dbCommand parses the flags of a command that works on the database (-config, -db) and its one
// argument. done means the caller should exit with code: the usage, or the problem, is printed.
func dbCommand(name string, args []string, stdout, stderr io.Writer) (cfg Config, arg string, code int, done bool) {
	cfg, code, done, fs := dbFlagSet(name, args, 1, stdout, stderr)
	if done {
		return cfg, "", code, true
	}
	return cfg, fs.Arg(0), 0, false
}

// dbFlags is dbCommand for a command that takes nargs words; more adds the command's own flags.
func dbFlags(name string, args []string, nargs int, stdout, stderr io.Writer, more ...func(*flag.FlagSet)) (cfg Config, code int, done bool) {
	cfg, code, done, _ = dbFlagSet(name, args, nargs, stdout, stderr, more...)
	return cfg, code, done
}

func dbFlagSet(name string, args []string, nargs int, stdout, stderr io.Writer, more ...func(*flag.FlagSet)) (cfg Config, code int, done bool, fs *flag.FlagSet) {
	fs = newFlags(name)
	configPath := fs.String("config", "", "YAML config file")
	dbPath := fs.String("db", "", "database file (overrides the config)")
	for _, add := range more {
		add(fs)
	}
	if code, ok := parseFlags(fs, args, nargs, stdout, stderr); !ok {
		return cfg, code, true, fs
	}
	cfg, err := loadConfig(*configPath, os.Getenv)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return cfg, 2, true, fs
	}
	if *dbPath != "" {
		cfg.Database = *dbPath
	}
	return cfg, 0, false, fs
}

// dbError says in one line what keeps the database at path from opening: another bot holds it,
// it is not there, or it is damaged. Other errors keep their own text.
func dbError(path string, err error) error {
	switch {
	case errors.Is(err, storage.ErrLocked):
		return fmt.Errorf("%s is in use: another kontermatt is running with this database", path)
	case errors.Is(err, storage.ErrDamaged):
		return fmt.Errorf("%s is damaged: restore it from a backup", path)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("no database at %s", path)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%s: permission denied: the bot must be allowed to read and write its database and the folder it is in", path)
	}
	// The storage's error names the path, and the system's error inside it names it again.
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		return fmt.Errorf("%s: %s: %w", path, pe.Op, pe.Err)
	}
	return err
}

// runBackup writes a consistent copy of the database. bbolt lets one process at a time open the
// file, so while the bot runs the copy comes from the bot itself, through the admin socket beside
// the database (or its TCP listener, if configured).
func runBackup(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	cfg, out, code, done := dbCommand("backup", args, stdout, stderr)
	if done {
		return code
	}
	if cfg.Store == "etcd" {
		// Ctrl-C or SIGTERM stop the reading from etcd rather than leave it to its timeout.
		ctx, stop := untilStopped()
		defer stop()
		return backupEtcd(ctx, cfg, out, stdout, stderr)
	}
	// Read-only: a backup never creates a database where there is none, nor writes into one.
	store, err := storage.Open(cfg.Database, storage.Options{Timeout: 200 * time.Millisecond, ReadOnly: true})
	if errors.Is(err, storage.ErrLocked) {
		via, err := ops.FetchBackup(adminTarget(cfg), out)
		if errors.Is(err, storage.ErrDamaged) {
			err = dbError(cfg.Database, err)
		}
		if err != nil {
			fmt.Fprintln(stderr, "backup:", err)
			return 1
		}
		fmt.Fprintf(stdout, "backed up the running bot's %s to %s (via %s)\n", cfg.Database, out, via)
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, dbError(cfg.Database, err))
		return 1
	}
	defer store.Close()
	if err := store.BackupFile(out); err != nil {
		if errors.Is(err, storage.ErrDamaged) {
			fmt.Fprintln(stderr, dbError(cfg.Database, err))
			return 1
		}
		fmt.Fprintln(stderr, "backup:", err)
		return 1
	}
	fmt.Fprintf(stdout, "backed up %s to %s\n", cfg.Database, out)
	return 0
}

// runExport writes every kept game and match record into a directory, one JSON file each.
func runExport(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	ctx := context.Background() // a one-shot subcommand: its work lives as long as the process
	cfg, dir, code, done := dbCommand("export", args, stdout, stderr)
	if done {
		return code
	}
	store, err := openConfigured(cfg, storage.Options{ReadOnly: true})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	defer store.Close()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintln(stderr, "export:", err)
		return 1
	}
	n := 0
	err = store.Records(ctx, func(key string, rec []byte) error {
		wrote, err := writeRecords(dir, key, rec, false)
		n += wrote
		return err
	})
	if errors.Is(err, storage.ErrDamaged) {
		fmt.Fprintln(stderr, dbError(cfg.Database, err))
		return 1
	}
	if err != nil {
		fmt.Fprintln(stderr, "export:", err)
		return 1
	}
	fmt.Fprintf(stdout, "exported %d records to %s\n", n, dir)
	return 0
}

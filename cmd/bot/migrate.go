package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/kontermatt/kontermatt/cmd/bot/internal/ops"
	"github.com/kontermatt/kontermatt/storage"
	"github.com/kontermatt/kontermatt/storage/etcdstore"
)

// runMigrate moves a stopped bot's data from its bbolt file to the etcd cluster of its config, or
// back: the destination must hold nothing yet. `bot stats rebuild` on each side then gives the
// same numbers.
func runMigrate(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	ctx := context.Background() // a one-shot subcommand: its work lives as long as the process
	fs := newFlags("migrate")
	configPath := fs.String("config", "", "YAML config file (its database and its etcd section)")
	dbPath := fs.String("db", "", "database file (overrides the config)")
	from := fs.String("from", "", "where the data is: bbolt or etcd")
	to := fs.String("to", "", "where it goes: etcd or bbolt")
	if code, ok := parseFlags(fs, args, 0, stdout, stderr); !ok {
		return code
	}
	if !(*from == "bbolt" && *to == "etcd" || *from == "etcd" && *to == "bbolt") {
		fmt.Fprintln(stderr, "bot migrate: -from bbolt -to etcd, or -from etcd -to bbolt")
		return 2
	}
	getenv := func(k string) string {
		if k == "KONTERMATT_STORE" {
			return "etcd" // the etcd section is wanted whatever the store the bot runs on
		}
		return os.Getenv(k)
	}
	cfg, err := loadConfig(*configPath, getenv)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	if *dbPath != "" {
		cfg.Database = *dbPath
	}
	cluster, err := openEtcd(cfg)
	if err != nil {
		fmt.Fprintln(stderr, "bot migrate:", err)
		return 1
	}
	defer cluster.Close()
	where := describeStore(cfg)
	if *from == "bbolt" {
		if fi, err := os.Stat(cfg.Database); err != nil || fi.Size() == 0 {
			fmt.Fprintf(stderr, "no database at %s\n", cfg.Database)
			return 1
		}
	} else if _, err := os.Stat(cfg.Database); err == nil {
		fmt.Fprintf(stderr, "bot migrate: %s exists: the data goes into a new file; move it away first\n", cfg.Database)
		return 1
	}
	file, err := storage.Open(cfg.Database, storage.Options{Timeout: 200 * time.Millisecond, ReadOnly: *from == "bbolt"})
	if errors.Is(err, storage.ErrLocked) {
		fmt.Fprintf(stderr, "%v; stop it, then migrate\n", dbError(cfg.Database, err))
		return 1
	}
	if err != nil {
		fmt.Fprintln(stderr, dbError(cfg.Database, err))
		return 1
	}
	defer file.Close()
	start := time.Now()
	var n int
	if *from == "bbolt" {
		n, err = cluster.Load(ctx, file)
	} else {
		n, err = file.Load(ctx, cluster)
	}
	if err != nil {
		if errors.Is(err, storage.ErrNotEmpty) {
			fmt.Fprintf(stderr, "bot migrate: %s already holds data: migrate into an empty one (another prefix, or a new file)\n", map[bool]string{true: where, false: cfg.Database}[*to == "etcd"])
			return 1
		}
		fmt.Fprintln(stderr, "bot migrate:", err)
		return 1
	}
	src, dst := cfg.Database, where
	if *from == "etcd" {
		src, dst = where, cfg.Database
	}
	fmt.Fprintf(stdout, "moved %d items from %s to %s in %s; bot stats rebuild on each gives the same numbers\n",
		n, src, dst, time.Since(start).Round(time.Millisecond))
	return 0
}

// backupEtcd is bot backup for an etcd-backed bot: a snapshot of the cluster's data at one
// revision, written as a bbolt file (which the bbolt store, and bot migrate -from bbolt, read).
// The bot may run meanwhile.
func backupEtcd(ctx context.Context, cfg Config, out string, stdout, stderr io.Writer) int {
	st, err := openEtcd(cfg)
	if err != nil {
		fmt.Fprintln(stderr, "backup:", err)
		return 1
	}
	defer st.Close()
	n, err := etcdBackup(st, out)
	if err != nil {
		fmt.Fprintln(stderr, "backup:", err)
		return 1
	}
	fmt.Fprintf(stdout, "backed up %s (%d items, one revision) to %s\n", describeStore(cfg), n, out)
	// Noted in the cluster, so the running copies' last-backup series show this backup.
	ctx, cancel := context.WithTimeout(ctx, etcdstore.DefaultTimeout)
	defer cancel()
	if err := ops.NoteBackup(ctx, st, time.Now()); err != nil {
		fmt.Fprintln(stderr, "backup: the backup is written, but its time could not be noted in the database (the bots' last-backup series miss it):", err)
	}
	return 0
}

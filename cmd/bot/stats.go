package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/kontermatt/kontermatt/core/league"
	"github.com/kontermatt/kontermatt/core/league/keeper"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/storage"
)

// runStats is "stats rebuild": the league (statistics, ratings, season tables) made anew from the
// kept match records, which are the truth; what the bot learned match by match must come out the
// same, and the line says whether it did.
func runStats(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	ctx := context.Background() // a one-shot subcommand: its work lives as long as the process
	cfg, what, code, done := dbCommand("stats", args, stdout, stderr)
	if done {
		return code
	}
	if what != "rebuild" {
		fmt.Fprintf(stderr, "bot stats: unknown %q; the one stats command is: bot stats rebuild\n", what)
		return 2
	}
	var store botStore
	if cfg.Store == "etcd" {
		st, err := openEtcd(cfg)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		store = st
	} else {
		// Rebuilding writes, but never creates a database where there is none.
		if fi, err := os.Stat(cfg.Database); err != nil || fi.Size() == 0 {
			fmt.Fprintf(stderr, "no database at %s\n", cfg.Database)
			return 1
		}
		st, err := storage.Open(cfg.Database, storage.Options{Timeout: 200 * time.Millisecond})
		if errors.Is(err, storage.ErrLocked) {
			fmt.Fprintf(stderr, "%v; stop it, then rebuild (the running bot keeps its league in memory)\n", dbError(cfg.Database, err))
			return 1
		}
		if err != nil {
			fmt.Fprintln(stderr, dbError(cfg.Database, err))
			return 1
		}
		store = st
	}
	defer store.Close()
	start := time.Now()
	entries, matches, skipped, err := keeper.Rebuild(ctx, store.Records)
	if err != nil {
		fmt.Fprintln(stderr, "stats rebuild:", dbError(cfg.Database, err))
		return 1
	}
	differ, err := leagueDiffers(store, entries)
	if err == nil {
		err = store.Rewrite(ctx, nil, league.Buckets, entries)
	}
	if err != nil {
		fmt.Fprintln(stderr, "stats rebuild:", dbError(cfg.Database, err))
		return 1
	}
	count := map[string]int{}
	for _, e := range entries {
		count[e.Bucket]++
	}
	fmt.Fprintf(stdout, "rebuilt the league from %d kept matches in %s: %d places, %d people rated",
		matches, time.Since(start).Round(time.Millisecond), count[league.BucketPlaces], count[league.BucketRatings])
	if skipped > 0 {
		fmt.Fprintf(stdout, ", %d records that do not read skipped", skipped)
	}
	if differ == 0 {
		fmt.Fprintln(stdout, "; every number was already the same")
	} else {
		fmt.Fprintf(stdout, "; %d entries differed from the kept ones and are made anew\n", differ)
	}
	return 0
}

// leagueDiffers counts the league entries that are kept but not rebuilt, rebuilt but not kept, or
// kept with other contents.
func leagueDiffers(store botStore, entries []table.KVEntry) (int, error) {
	ctx := context.Background() // a one-shot subcommand: its work lives as long as the process
	rebuilt := map[string]string{}
	for _, e := range entries {
		rebuilt[e.Bucket+"\x00"+e.Key] = string(e.Value)
	}
	differ := 0
	for _, b := range league.Buckets {
		err := store.KVEach(ctx, b, func(key string, value []byte) error {
			k := b + "\x00" + key
			if v, ok := rebuilt[k]; !ok || v != string(value) {
				differ++
			}
			delete(rebuilt, k)
			return nil
		})
		if err != nil {
			return 0, err
		}
	}
	return differ + len(rebuilt), nil
}

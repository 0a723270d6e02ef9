package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kontermatt/kontermatt/core/table"
)

// recordFile turns a record key ("t1x2/m1/g3") into a file name ("t1x2-m1-g3.json").
func recordFile(dir, key string) string {
	return filepath.Join(dir, strings.ReplaceAll(key, "/", "-")+".json")
}

// writeRecords writes a kept match as docs/records.md files in dir: the match record and, unless
// matchOnly, each game's. It gives how many files it wrote.
func writeRecords(dir, key string, kept []byte, matchOnly bool) (int, error) {
	recs, err := table.Export(kept)
	if err != nil {
		return 0, fmt.Errorf("record %s: %w", key, err)
	}
	n := 0
	for name, rec := range recs {
		if matchOnly && !strings.HasSuffix(name, "/match") {
			continue
		}
		data, err := json.Marshal(rec)
		if err != nil {
			return n, err
		}
		if err := os.WriteFile(recordFile(dir, name), data, 0o644); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/storage"
	"github.com/kontermatt/kontermatt/storage/storagetest"
)

// fillDatabase writes a database as the bot would after many tables: states, logs and records,
// enough for branch pages and a record over several pages.
func fillDatabase(t *testing.T, path string) {
	ctx := t.Context()
	t.Helper()
	st, err := storage.Open(path, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 300 {
		id := fmt.Sprintf("t%03d", i)
		c := table.Change{TableID: id, State: bytes.Repeat([]byte("s"), 300),
			Log:     table.LogEntry{Seq: 1, Verb: api.VerbNew, Actor: "tg:1"},
			Records: []table.Record{{Key: id + "/m1/g1", Data: bytes.Repeat([]byte("r"), 400)}}}
		if err := st.Commit(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	big := table.Change{TableID: "big", State: []byte("s"), Records: []table.Record{{Key: "big/m1/match", Data: bytes.Repeat([]byte("big "), 20000)}}}
	if err := st.Commit(ctx, big); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
}

// hostEnv is the environment without any KONTERMATT_ setting of the machine running the tests.
func hostEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "KONTERMATT_") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// runBin runs the bot binary with empty input and gives its exit status, stdout and stderr.
func runBin(t *testing.T, bin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = hostEnv()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		code = exit.ExitCode()
	default:
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

// TestDamagedDatabaseOneLine damages a real database in several ways: serving, backing up and
// exporting it each print one line saying it is damaged and exit 1, never a panic.
func TestDamagedDatabaseOneLine(t *testing.T) {
	bin := buildBot(t)
	healthy := filepath.Join(t.TempDir(), "healthy.db")
	fillDatabase(t, healthy)
	data, err := os.ReadFile(healthy)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range storagetest.Damages {
		t.Run(d.Name, func(t *testing.T) {
			dir := t.TempDir()
			db := filepath.Join(dir, "k.db")
			if err := os.WriteFile(db, data, 0o600); err != nil {
				t.Fatal(err)
			}
			d.Apply(t, db)
			want := db + " is damaged: restore it from a backup\n"
			for _, args := range [][]string{
				{"-db", db, "-humans", "0"}, // no terminal needed to watch: the database is what is refused
				{"backup", "-db", db, filepath.Join(dir, "copy.db")},
				{"export", "-db", db, filepath.Join(dir, "records")},
			} {
				code, _, stderr := runBin(t, bin, args...)
				if code != 1 || stderr != want {
					t.Errorf("bot %s: exit %d, stderr:\n%s\nwant exit 1 and %q", strings.Join(args, " "), code, stderr, want)
				}
				if strings.Contains(stderr, "panic") || strings.Contains(stderr, "goroutine") {
					t.Errorf("bot %s crashed:\n%s", strings.Join(args, " "), stderr)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "copy.db")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("backup of a damaged database left a copy: %v", err)
			}
		})
	}
}

// TestBackupAndExportNeedADatabase: with no database (or an empty file) at the path, backup and
// export say so, exit 1, and create nothing.
func TestBackupAndExportNeedADatabase(t *testing.T) {
	for _, empty := range []bool{false, true} {
		for _, cmd := range []string{"backup", "export"} {
			t.Run(fmt.Sprintf("%s/empty file=%v", cmd, empty), func(t *testing.T) {
				dir := t.TempDir()
				db, out := filepath.Join(dir, "k.db"), filepath.Join(dir, "out")
				if empty {
					if err := os.WriteFile(db, nil, 0o600); err != nil {
						t.Fatal(err)
					}
				}
				var stdout, stderr bytes.Buffer
				code := run([]string{cmd, "-db", db, out}, nil, &stdout, &stderr)
				if want := "no database at " + db + "\n"; code != 1 || stderr.String() != want {
					t.Errorf("exit %d, stderr %q; want exit 1 and %q", code, stderr.String(), want)
				}
				fi, err := os.Stat(db)
				switch {
				case !empty && !errors.Is(err, fs.ErrNotExist):
					t.Errorf("%s created %s: %v", cmd, db, err)
				case empty && (err != nil || fi.Size() != 0):
					t.Errorf("%s changed the empty file: %v, %v", cmd, fi, err)
				}
				if _, err := os.Stat(out); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("%s created %s: %v", cmd, out, err)
				}
			})
		}
	}
}

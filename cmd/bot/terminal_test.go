package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runIn runs the program in this process with stdin's lines, as a person at a terminal would.
func runIn(stdin string, args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// A match stored by an earlier run is resumed when the flags fit it. Flags that do not fit an
// unfinished match are refused with exit 2 and the line that says why and what to type instead;
// -new starts afresh. A second watch of four computers plays a new match, not the finished one.
func TestTheFlagsAndAStoredMatch(t *testing.T) {
	db := filepath.Join(t.TempDir(), "k.db")
	if code, _, stderr := runIn("", "-db", db, "-options", "stripes=3"); code != 0 {
		t.Fatalf("first run: exit %d: %s", code, stderr)
	}
	code, stdout, stderr := runIn("", "-db", db, "-options", "stripes=5")
	if code != 2 || !strings.Contains(stderr, "An unfinished match is stored here, and it is not what you asked for: stripes=5 (the match has stripes=3)") ||
		!strings.Contains(stderr, "add -new to stop it") {
		t.Errorf("flags that do not fit: exit %d, stderr %q, stdout %q", code, stderr, tail(stdout))
	}
	if code, stdout, stderr := runIn("", "-db", db, "-options", "stripes=3"); code != 0 || !strings.Contains(stdout, "Resuming") {
		t.Errorf("flags that fit: exit %d, stderr %q, stdout %q", code, stderr, tail(stdout))
	}
	if code, stdout, stderr := runIn("", "-db", db, "-options", "stripes=5", "-new"); code != 0 ||
		!strings.Contains(stdout, "The unfinished match here is stopped") || !strings.Contains(stdout, "5 stripes") {
		t.Errorf("-new: exit %d, stderr %q, stdout %q", code, stderr, tail(stdout))
	}

	watch := filepath.Join(t.TempDir(), "w.db")
	args := []string{"-db", watch, "-humans", "0", "-pace", "0", "-level", "easy", "-options", "stripes=1"}
	if code, stdout, stderr := runIn("", args...); code != 0 || !strings.Contains(stdout, "wins the match") {
		t.Fatalf("first watch: exit %d, stderr %q\n%s", code, stderr, tail(stdout))
	}
	code, stdout, stderr = runIn("", args...)
	if code != 0 || strings.Contains(stdout, "Resuming") || !strings.Contains(stdout, "The last match here is over") ||
		!strings.Contains(stdout, "wins the match") {
		t.Errorf("second watch: exit %d, stderr %q\n%s", code, stderr, tail(stdout))
	}
}

// A start refused for its flags, its config or the lack of a terminal exits 2 and leaves no
// database file behind.
func TestARefusedStartMakesNoDatabase(t *testing.T) {
	dir := t.TempDir()
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	for _, tc := range []struct {
		name  string
		stdin *os.File
		args  []string
		want  string
	}{
		{"bad options", nil, []string{"-options", "stripes=99"}, `-options "stripes=99": stripes=99: stripes must be a number from 1 to 20`},
		{"unknown option", nil, []string{"-options", "strips=5"}, `unknown option "strips"; the options are stripes, draw`},
		{"not an option", nil, []string{"-options", "fast"}, `"fast" is not key=value`},
		{"bad level", nil, []string{"-level", "hard"}, `-level "hard"`},
		{"no terminal", devNull, nil, "no terminal to play in"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".db")
			var out, errb bytes.Buffer
			var code int
			if tc.stdin != nil {
				code = run(append([]string{"-db", db}, tc.args...), tc.stdin, &out, &errb)
			} else {
				code = run(append([]string{"-db", db}, tc.args...), strings.NewReader(""), &out, &errb)
			}
			if code != 2 || !strings.Contains(errb.String(), tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, errb.String(), tc.want)
			}
			if _, err := os.Stat(db); !os.IsNotExist(err) {
				t.Errorf("a refused start made %s (%v)", db, err)
			}
		})
	}
}

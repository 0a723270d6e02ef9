package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kontermatt/kontermatt/core"
)

func TestSelfplayWritesRecordsThatReplay(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	code := run([]string{"selfplay", "-matches", "3", "-seed", "11", "-out", dir, "-options", "stripes=3"}, nil, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != 3 {
		t.Fatalf("want 3 match records, got %v", files)
	}
	for _, f := range files {
		data, _ := os.ReadFile(f)
		res, err := core.Replay(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if ms := res.(core.MatchSummary); ms.Winner == nil {
			t.Errorf("%s: no winner", f)
		}
	}
	if !strings.Contains(out.String(), "seed 11") {
		t.Errorf("selfplay does not print its seed: %q", out.String())
	}
}

func TestToolUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"backup"}, {"export"}, {"selfplay", "-matches", "0"}, {"replay"}, {"frobnicate"}, {"-humans", "7"}} {
		var out, errb bytes.Buffer
		if code := run(args, strings.NewReader(""), &out, &errb); code != 2 || errb.Len() == 0 {
			t.Errorf("%v: exit %d, stderr %q", args, code, errb.String())
		}
	}
}

// Every subcommand answers -h with its own usage on stdout and exit 0; bot -h and bot help list
// every subcommand and the bot's own flags.
func TestHelp(t *testing.T) {
	for _, c := range commands[1:] {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			want := "usage: kontermatt " + c.name
			if c.name == "help" {
				want = "usage: kontermatt [flags]" // help's help is the whole list
			}
			if code := run([]string{c.name, "-h"}, strings.NewReader(""), &out, &errb); code != 0 || !strings.HasPrefix(out.String(), want) {
				t.Errorf("%s -h: exit %d, stdout %q, stderr %q", c.name, code, out.String(), errb.String())
			}
		})
	}
	for _, args := range [][]string{{"-h"}, {"help"}, {"--help"}} {
		var out, errb bytes.Buffer
		if code := run(args, nil, &out, &errb); code != 0 {
			t.Errorf("%v: exit %d", args, code)
		}
		for _, want := range []string{"replay", "export", "backup", "selfplay", "duel", "version", "-humans", "-level", "-lang", "-options", "-db", "-config"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("%v does not mention %s:\n%s", args, want, out.String())
			}
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"help", "backup"}, nil, &out, &errb); code != 0 || !strings.Contains(out.String(), "-db") {
		t.Errorf("help backup: exit %d, %q", code, out.String())
	}
}

// Mistakes are named with what would be right.
func TestMistakesSayWhatIsRight(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"expor"}, `unknown command "expor" (did you mean export?)`},
		{[]string{"-lang", "xx"}, `-lang "xx": the languages are en, lb, de, fr`},
		{[]string{"-level", "hard"}, `-level "hard": the levels are easy, normal, strong`},
		{[]string{"replay"}, "kontermatt replay: FILE is missing (kontermatt replay FILE)"},
		{[]string{"backup", "-db", "x.db"}, "kontermatt backup: OUT is missing (kontermatt backup [-config FILE] [-db FILE] OUT)"},
		{[]string{"-humans", "1", "stray"}, `kontermatt: "stray" is not a flag; kontermatt takes only flags (kontermatt -h lists them)`},
		{[]string{"version", "now"}, `kontermatt version: "now" is not a flag; kontermatt version takes only flags (kontermatt version -h lists them)`},
		{[]string{"stats", "rebuild", "now"}, `kontermatt stats: "now" after rebuild: it takes one (kontermatt stats [-config FILE] [-db FILE] rebuild)`},
		{[]string{"stats", "rebuild", "-db"}, "flag needs an argument: -db"},
	} {
		var out, errb bytes.Buffer
		code := run(tc.args, strings.NewReader(""), &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errb.String(), tc.want)
		}
	}
}

func TestVersion(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"version"}, nil, &out, &errb); code != 0 || !strings.HasPrefix(out.String(), "kontermatt ") || !strings.Contains(out.String(), "go1.") {
		t.Errorf("version: exit %d, %q", code, out.String())
	}
}

// Flags may come after a command's words too, as most command lines take them: bot stats rebuild
// -db x.db is bot stats -db x.db rebuild. "--" ends the flags; "-" is a word (standard input).
func TestFlagsAfterTheWords(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "k.db")
	for _, args := range [][]string{
		{"stats", "rebuild", "-db", db},
		{"stats", "-db", db, "rebuild"},
		{"backup", filepath.Join(dir, "copy.db"), "-db", db},
		{"export", filepath.Join(dir, "records"), "-db=" + db},
	} {
		var out, errb bytes.Buffer
		code := run(args, strings.NewReader(""), &out, &errb)
		if code != 1 || !strings.Contains(errb.String(), "no database at "+db) {
			t.Errorf("%v: exit %d, stderr %q; want the command run on %s", args, code, errb.String(), db)
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"replay", "--", "-db"}, strings.NewReader(""), &out, &errb); code != 2 || !strings.Contains(errb.String(), "replay: open -db") {
		t.Errorf(`replay -- -db: exit %d, stderr %q; want "-db" read as a file name`, code, errb.String())
	}
}

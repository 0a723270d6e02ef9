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

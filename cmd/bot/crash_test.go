package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/core"
)

var crashSeed = flag.Uint64("crash.seed", 0, "seed for the kill points of TestSIGKILLResumes (0: random)")

// buildBot compiles the bot once for the tests that run it as a child process.
func buildBot(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "bot")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// matchRecord exports the database and gives its one match record.
func matchRecord(t *testing.T, bin, db string) []byte {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command(bin, "export", "-db", db, dir).CombinedOutput(); err != nil {
		t.Fatalf("export: %v\n%s", err, out)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*-match.json"))
	if len(files) != 1 {
		t.Fatalf("want one match record, found %v", files)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestSIGKILLResumes kills the bot with SIGKILL at random points of a match between four
// computer players, restarts it on the same database until the match is over, and checks that
// the result is exactly the one an uninterrupted run with the same seed reaches, and that the
// kept record replays to it. Deals and the easy players are deterministic given the seed, so any
// lost or doubled move would show as a different match.
func TestSIGKILLResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the bot many times")
	}
	bin := buildBot(t)
	seed := *crashSeed
	if seed == 0 {
		seed = rand.Uint64()
	}
	t.Logf("kill points seed %d (rerun with -crash.seed=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	args := []string{"-humans", "0", "-level", "easy", "-seed", "42", "-options", "stripes=4"}

	calm := filepath.Join(t.TempDir(), "calm.db")
	if out, err := exec.Command(bin, append(args, "-db", calm)...).CombinedOutput(); err != nil {
		t.Fatalf("uninterrupted run: %v\n%s", err, out)
	}
	want := matchRecord(t, bin, calm)

	db := filepath.Join(t.TempDir(), "crash.db")
	kills := 0
	for run := 0; ; run++ {
		if run > 200 {
			t.Fatal("the match never finished")
		}
		var out bytes.Buffer
		cmd := exec.Command(bin, append(args, "-db", db)...)
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("run %d: %v\n%s", run, err, out.String())
			}
			if kills == 0 {
				t.Fatal("the bot finished before any kill; kill sooner")
			}
			got := matchRecord(t, bin, db)
			if !bytes.Equal(canonical(t, got), canonical(t, want)) {
				t.Fatalf("after %d kills the match differs from the uninterrupted one:\n got %s\nwant %s", kills, got, want)
			}
			checkReplay(t, got, out.String())
			t.Logf("%d kills, %d runs; match identical to the uninterrupted one", kills, run+1)
			return
		case <-time.After(time.Duration(5+rng.IntN(60)) * time.Millisecond):
			_ = cmd.Process.Signal(syscall.SIGKILL)
			<-done
			kills++
		}
	}
}

func canonical(t *testing.T, data []byte) []byte {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(v)
	return b
}

// checkReplay replays the record and checks its winner is the one the last run announced.
func checkReplay(t *testing.T, record []byte, output string) {
	t.Helper()
	out, err := core.Replay(record)
	if err != nil {
		t.Fatalf("record does not replay: %v", err)
	}
	ms := out.(core.MatchSummary)
	if ms.Winner == nil {
		t.Fatal("replayed match has no winner")
	}
	if !strings.Contains(output, "Team "+*ms.Winner+" (") || !strings.Contains(output, "wins the match") {
		t.Errorf("the bot's last words do not name winner %s:\n%s", *ms.Winner, tail(output))
	}
}

func tail(s string) string {
	if len(s) > 600 {
		return s[len(s)-600:]
	}
	return s
}

var _ = context.Background

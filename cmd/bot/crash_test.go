package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage"
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

// matchKept reports whether the database keeps a finished match's record.
func matchKept(t *testing.T, bin, db string) bool {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command(bin, "export", "-db", db, dir).CombinedOutput(); err != nil {
		t.Fatalf("export: %v\n%s", err, out)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*-match.json"))
	return len(files) > 0
}

// TestSIGKILLResumes kills the bot with SIGKILL at random points of a match between four
// computer players (after a random number of lines of its output, within the first quarter of a
// whole match's), restarts it on the same database until the match is over, and checks that
// the result is exactly the one an uninterrupted run with the same seed reaches, and that the
// kept record replays to it. Deals and the easy players are deterministic given the seed, so any
// lost or doubled move would show as a different match.
func TestSIGKILLResumes(t *testing.T) {
	bin := buildBot(t)
	seed := *crashSeed
	if seed == 0 {
		seed = rand.Uint64()
	}
	t.Logf("kill points seed %d (rerun with -crash.seed=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	args := []string{"-humans", "0", "-pace", "0", "-level", "easy", "-seed", "42"}

	calm := filepath.Join(t.TempDir(), "calm.db")
	whole, err := exec.Command(bin, append(args, "-db", calm)...).CombinedOutput()
	if err != nil {
		t.Fatalf("uninterrupted run: %v\n%s", err, whole)
	}
	lines := bytes.Count(whole, []byte("\n")) // kill points fall within the first quarter of a whole run's output
	want := matchRecord(t, bin, calm)

	// A run that finishes before three kills proves too little: start again on a fresh database.
	// Kill points are counted in lines of output, not in time, so a loaded machine moves them
	// with the match instead of past its end.
	for attempt := 1; attempt <= 5; attempt++ {
		db := filepath.Join(t.TempDir(), "crash.db")
		kills, finished, keptBeforeKill := 0, false, false
		var out bytes.Buffer
		for run := 0; run < 300 && !finished; run++ {
			out.Reset()
			cmd := exec.Command(bin, append(args, "-db", db)...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			killAt := 1 + rng.IntN(max(lines/4, 1))
			killed := false
			sc := bufio.NewScanner(stdout)
			for n := 0; sc.Scan(); n++ {
				out.Write(sc.Bytes())
				out.WriteByte('\n')
				if n+1 == killAt {
					_ = cmd.Process.Signal(syscall.SIGKILL)
					killed = true
					break
				}
			}
			io.Copy(&out, stdout) // all of it, if the bot exited by itself before the signal
			err = cmd.Wait()
			switch {
			case killed && matchKept(t, bin, db):
				// Killed after it stored the end of the match, as it was about to say so or to
				// exit: the match is finished. A restart would rightly open a new table, since
				// nobody is at the keyboard to type rematch.
				finished, keptBeforeKill = true, true
			case killed && err != nil:
				kills++
			case err != nil:
				t.Fatalf("run %d: %v\n%s%s", run, err, out.String(), stderr.String())
			default:
				finished = true // it ended before its kill point (or was killed as it exited)
			}
		}
		if !finished {
			t.Fatal("the match never finished")
		}
		if kills < 3 {
			t.Logf("attempt %d: the match ended after %d kills; again", attempt, kills)
			continue
		}
		got := matchRecord(t, bin, db)
		if !bytes.Equal(canonical(t, got), canonical(t, want)) {
			t.Fatalf("after %d kills the match differs from the uninterrupted one:\n got %s\nwant %s", kills, got, want)
		}
		if !keptBeforeKill { // the last run's screen shows the match to its end
			checkReplay(t, got, out.String())
		}
		t.Logf("%d kills; match identical to the uninterrupted one (whole run %d lines)", kills, lines)
		return
	}
	t.Fatal("could not kill the bot three times within a match")
}

// canonical is an exported match record without its wall-clock times (a run that is killed and
// restarted ends later than one that is not), in one layout.
func canonical(t *testing.T, data []byte) []byte {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	delete(v, "start")
	delete(v, "end")
	b, _ := json.Marshal(v)
	return b
}

// checkReplay replays the record and checks that the bot's last run showed the same winner: its
// stripe board line with no open stripe left. (The "wins the match" summary may have gone out in
// a run that was killed right after; the board is shown again on every start.)
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
	for _, line := range strings.Split(output, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "Team "+*ms.Winner+" (") && strings.HasSuffix(line, "— (0)") {
			return
		}
	}
	t.Errorf("the bot's last run does not show team %s with no stripes left:\n%s", *ms.Winner, tail(output))
}

func tail(s string) string {
	if len(s) > 600 {
		return s[len(s)-600:]
	}
	return s
}

// startBot runs the bot in the terminal with its input held open, and waits until it shows a hand.
func startBot(t *testing.T, bin, db string, env ...string) (stop func()) {
	t.Helper()
	cmd := exec.Command(bin, "-db", db, "-level", "easy", "-seed", "5")
	cmd.Env = append(os.Environ(), env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out := &tabletest.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(out.String(), "Type one of") {
		if time.Now().After(deadline) {
			t.Fatalf("bot did not start:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return func() {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("bot exited with %v:\n%s", err, out.String())
		}
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func TestSecondInstanceFailsFastAndLiveBackupWorks(t *testing.T) {
	ctx := t.Context()
	bin := buildBot(t)
	db := filepath.Join(t.TempDir(), "k.db")
	stop := startBot(t, bin, db)
	defer stop()

	start := time.Now()
	// -humans 0: with no terminal and no token the second would be refused before it looks at
	// the database.
	out, err := exec.Command(bin, "-db", db, "-humans", "0").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "another kontermatt is running") {
		t.Errorf("second instance: %v\n%s", err, out)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("second instance took %v to give up", d)
	}

	backup := filepath.Join(t.TempDir(), "backup.db")
	if out, err := exec.Command(bin, "backup", "-db", db, backup).CombinedOutput(); err != nil {
		t.Fatalf("live backup: %v\n%s", err, out)
	}
	st, err := storage.Open(backup, storage.Options{})
	if err != nil {
		t.Fatalf("backup does not open: %v", err)
	}
	defer st.Close()
	n := 0
	st.Tables(ctx, func(string, []byte) error { n++; return nil })
	if n != 1 {
		t.Errorf("backup holds %d tables, want the running one", n)
	}
}

// TestChatStartupErrorHidesToken starts the bot against Bot API and Discord servers that are not
// there. Each platform's start is tried again and again while the bot runs (the network may come
// back), each failure logged, until SIGTERM. Neither shows the token.
func TestChatStartupErrorHidesToken(t *testing.T) {
	bin := buildBot(t)
	dead := "http://" + freeAddr(t) // nothing listens there any more
	for _, tc := range []struct {
		env   []string
		retry bool
	}{
		{[]string{"KONTERMATT_TELEGRAM_TOKEN=123456:SECRET-telegram-token", "KONTERMATT_TELEGRAM_API_URL=" + dead}, true},
		{[]string{"KONTERMATT_DISCORD_TOKEN=SECRET.discord.token", "KONTERMATT_DISCORD_API_URL=" + dead}, true},
	} {
		cmd := exec.Command(bin, "-db", filepath.Join(t.TempDir(), "k.db"))
		cmd.Env = append(os.Environ(), append(tc.env, "KONTERMATT_ADMIN_ADDR=off")...)
		var out tabletest.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		var err error
		select {
		case err = <-done:
			if tc.retry {
				t.Errorf("%v: the bot stopped instead of trying again: %v", tc.env[0], err)
			}
		case <-out.Seen("trying again", 60*time.Second):
			if !tc.retry {
				t.Errorf("%v: the bot keeps trying a platform it cannot build", tc.env[0])
			}
			cmd.Process.Signal(syscall.SIGTERM)
			select {
			case err = <-done:
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				<-done
				t.Fatalf("%v: the bot did not stop on SIGTERM:\n%s", tc.env[0], out.String())
			}
		}
		if !tc.retry && err == nil {
			t.Errorf("%v: exit 0 against a dead server", tc.env[0])
		}
		if tc.retry && err != nil {
			t.Errorf("%v: after SIGTERM: %v", tc.env[0], err)
		}
		if strings.Contains(out.String(), "SECRET") {
			t.Errorf("%v: output shows the token:\n%s", tc.env[0], out.String())
		}
		if out.String() == "" {
			t.Errorf("%v: no error message", tc.env[0])
		}
		t.Logf("%s → %s", strings.SplitN(tc.env[0], "=", 2)[0], strings.TrimSpace(out.String()))
	}
}

package main

import (
	"bytes"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kontermatt/kontermatt/core/table/tabletest"
)

// Piped, a long command says every few seconds how far it is: done of total, the time taken, an
// estimate of what is left; with -q it says nothing.
func TestProgressLines(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var w tabletest.Buffer
		p := startProgress(&w, false, "duel", "deals", 100)
		time.Sleep(progressEvery)
		synctest.Wait()
		for range 25 {
			p.add()
		}
		time.Sleep(progressEvery)
		synctest.Wait()
		p.finish()
		want := "duel: 0 of 100 deals, 5s, estimating\nduel: 25 of 100 deals, 10s, about 30s left\n"
		if w.String() != want {
			t.Errorf("got %q, want %q", w.String(), want)
		}

		var q tabletest.Buffer
		p = startProgress(&q, true, "duel", "deals", 100)
		p.add()
		time.Sleep(3 * progressEvery)
		p.finish()
		if q.String() != "" {
			t.Errorf("-q printed %q", q.String())
		}
	})
}

// The commands count what they do: duel its deals (and matches), selfplay its matches, and -q
// silences them.
func TestLongCommandsSayHowFar(t *testing.T) {
	defer func(d time.Duration) { progressEvery = d }(progressEvery)
	progressEvery = 0 // a line at every unit: the commands' counting, not the clock, is tested here
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"duel", "-a", "easy", "-b", "easy", "-deals", "40"}, " of 40 deals, "},
		{[]string{"duel", "-a", "easy", "-b", "easy", "-matches", "3", "-stripes", "3"}, " of 3 matches, "},
		{[]string{"selfplay", "-matches", "4", "-options", "stripes=3", "-out", t.TempDir()}, " of 4 matches, "},
	} {
		var out, errb bytes.Buffer
		if code := run(tc.args, nil, &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.args, code, errb.String())
		}
		if !strings.Contains(errb.String(), tc.want) || !strings.Contains(errb.String(), tc.args[0]+": ") {
			t.Errorf("%v: stderr %q, want lines with %q", tc.args, errb.String(), tc.want)
		}
		out.Reset()
		errb.Reset()
		if code := run(append(tc.args, "-q"), nil, &out, &errb); code != 0 || errb.Len() != 0 {
			t.Errorf("%v -q: exit %d, stderr %q", tc.args, code, errb.String())
		}
	}
}

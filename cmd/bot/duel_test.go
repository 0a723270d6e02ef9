package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/cmd/bot/internal/research"
	"github.com/kontermatt/kontermatt/core/robot"
)

// A deterministic player against itself plays both games of every pair alike: exactly one half.
func TestDuelAgainstItselfIsHalf(t *testing.T) {
	for _, cfg := range []research.DuelConfig{
		{A: robot.Easy, B: robot.Easy, Deals: 40, Seed: 7, Workers: 2},
		{A: robot.Strong, B: robot.Strong, Deals: 2, Seed: 8, Workers: 1,
			Options: robot.Options{Threads: 1, Budget: time.Minute, Worlds: 3}},
	} {
		res, err := research.Duel(t.Context(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if share, half := res.WinShare(); share != 0.5 || half != 0 {
			t.Errorf("%s against itself: share %v ± %v, want exactly 0.5", cfg.A, share, half)
		}
		for i, p := range res.Pairs {
			if p[0].Score+p[1].Score != 1 || p[0].Margin != -p[1].Margin {
				t.Errorf("%s pair %d: %+v is not mirrored", cfg.A, i, p)
			}
		}
	}
}

// The duel counts every game, times every decision and tells the levels apart in its report.
func TestRunDuel(t *testing.T) {
	var out, errOut bytes.Buffer
	code := runDuel([]string{"-a", "normal", "-b", "easy", "-deals", "3", "-seed", "4", "-worlds", "4", "-analyze"}, nil, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	for _, want := range []string{"A=normal B=easy: 3 deals", "win share", "margin", "stripe", "A normal trump", "A normal card",
		"B easy   card", "optimal in points", "trump choices: 3"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	if code := runDuel([]string{"-a", "wizard"}, nil, &out, &errOut); code != 2 {
		t.Errorf("unknown level: exit %d, want 2", code)
	}
	for _, bad := range []string{"0x", "7", "-1"} {
		out.Reset()
		if code := runDuel([]string{"-a-open-from", bad, "-deals", "1"}, nil, &out, &errOut); code != 2 || out.Len() > 0 {
			t.Errorf("-a-open-from %s: exit %d, output %q, want 2 and nothing played", bad, code, out.String())
		}
	}
	out.Reset()
	code = runDuel([]string{"-a", "normal", "-a-open-from", "5", "-b", "easy", "-deals", "2", "-seed", "4", "-worlds", "4", "-q"}, nil, &out, &errOut)
	if code != 0 || !strings.Contains(out.String(), "open from trick 5") {
		t.Errorf("-a-open-from 5: exit %d:\n%s", code, out.String())
	}
}

// A deterministic player against itself wins exactly one match of every pair: both matches of a
// pair are played on the same deals with the teams swapped.
func TestMatchDuelAgainstItselfIsHalf(t *testing.T) {
	cfg := research.DuelConfig{A: robot.Easy, B: robot.Easy, Matches: 12, Stripes: 5, Seed: 3, Workers: 2}
	res, err := research.MatchDuel(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if share, half := res.MatchShare(); share != 0.5 || half != 0 {
		t.Errorf("easy against itself: match share %v ± %v, want exactly 0.5", share, half)
	}
	for i, p := range res.Pairs {
		if p[0].Won == p[1].Won || p[0].Games != p[1].Games || p[0].Games < 2 {
			t.Errorf("pair %d: %+v is not mirrored", i, p)
		}
		for _, o := range p {
			if o.Won != (o.Board[0] == 0) || (o.Board[0] == 0) == (o.Board[1] == 0) {
				t.Errorf("pair %d: %+v: the winner must be the one team with no open stripe", i, o)
			}
		}
	}
}

func TestRunMatchDuel(t *testing.T) {
	var out, errOut bytes.Buffer
	code := runDuel([]string{"-a", "normal", "-b", "easy", "-matches", "2", "-stripes", "3", "-seed", "4", "-worlds", "4"}, nil, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	for _, want := range []string{"A=normal B=easy: 2 matches x 2", "3 stripes", "match win share", "games per match", "A normal card"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	for _, bad := range [][]string{{"-matches", "-1"}, {"-matches", "1", "-stripes", "0"}} {
		if code := runDuel(bad, nil, &out, &errOut); code != 2 {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
	}
}

// -b-previous reaches B's players: strong against strong with the previous sampler no longer
// mirrors every pair, and the report says which B it was and how the decisions were bounded.
func TestDuelAgainstThePreviousSampler(t *testing.T) {
	var out, errOut bytes.Buffer
	code := runDuel([]string{"-a", "strong", "-b", "strong", "-b-previous", "-deals", "4", "-seed", "5", "-worlds", "3", "-nodes-per-ms", "100"}, nil, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	for _, want := range []string{"A=strong B=strong (previous sampler): 4 deals", "bounded by 100 solver nodes per ms"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	res, err := research.Duel(t.Context(), research.DuelConfig{A: robot.Strong, B: robot.Strong, BPrevious: true, Deals: 4, Seed: 5, Workers: 1,
		Options: robot.Options{Threads: 1, Budget: time.Minute, Worlds: 3}})
	if err != nil {
		t.Fatal(err)
	}
	mirrored := true
	for _, p := range res.Pairs {
		mirrored = mirrored && p[0].Margin == -p[1].Margin
	}
	if mirrored {
		t.Errorf("every pair mirrored: B played as A did, the previous sampler was not used")
	}
}

// -pairs writes a duel's deals and -against compares a later run with them, deal by deal; a
// file of other deals is refused before the duel is played.
func TestRunDuelAgainst(t *testing.T) {
	pairs := filepath.Join(t.TempDir(), "normal.pairs")
	args := []string{"-a", "normal", "-b", "easy", "-deals", "4", "-seed", "6", "-worlds", "4", "-nodes-per-ms", "100", "-q"}
	var out, errOut bytes.Buffer
	if code := runDuel(append(args, "-pairs", pairs), nil, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "A's side minus B's, per deal") {
		t.Errorf("report lacks the paired difference:\n%s", out.String())
	}
	out.Reset()
	if code := runDuel(append(args, "-against", pairs), nil, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if want := "game win share +0.0000 ± 0.0000 (95%, paired"; !strings.Contains(out.String(), want) {
		t.Errorf("the same run again: report lacks %q:\n%s", want, out.String())
	}
	out.Reset()
	errOut.Reset()
	if code := runDuel([]string{"-a", "normal", "-b", "easy", "-deals", "4", "-seed", "7", "-against", pairs}, nil, &out, &errOut); code != 2 || out.Len() > 0 {
		t.Errorf("another seed against the file: exit %d, output %q, want 2 and nothing played", code, out.String())
	}
}

// A duel stopped before its end (Ctrl-C, SIGTERM) prints no result, since its share would be of
// the deals played so far, says why on stderr and exits 1.
func TestAStoppedDuelPrintsNoResult(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var out, errOut bytes.Buffer
	cfg := research.DuelConfig{A: robot.Normal, B: robot.Easy, Deals: 3, Seed: 4, Options: robot.Options{Worlds: 4}}
	code := playDuel(ctx, &out, &errOut, true, cfg, "deals", cfg.Deals, research.Duel)
	if code != 1 || out.Len() > 0 || !strings.Contains(errOut.String(), "stopped before its end") {
		t.Errorf("exit %d, stdout %q, stderr %q: want 1, nothing and the reason", code, out.String(), errOut.String())
	}
}

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kontermatt/kontermatt/cmd/bot/internal/research"
	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/options"
	"github.com/kontermatt/kontermatt/core/robot"
)

// The research tools' subcommands: their flags and their output. What they play is in
// internal/research, apart from the bot's start-up.

// openFrom is the trick from which A's cards are open: -a-open-from's, or 1 with -a-open.
func openFrom(open bool, from int) int {
	if open && (from < 1 || from > 6) {
		return 1
	}
	return max(from, 0)
}

// runDuel plays two computer levels against each other on duplicate deals.
func runDuel(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("duel")
	a := fs.String("a", "strong", "level of player A: easy, normal or strong")
	b := fs.String("b", "easy", "level of player B")
	deals := fs.Int("deals", 200, "number of deals; each is played twice with the teams swapped")
	matches := fs.Int("matches", 0, "play this many whole matches instead (each twice with the teams swapped, on the same deals), reporting the match win share")
	stripes := fs.Int("stripes", 9, "the matches' open stripes at the start")
	seed := fs.Uint64("seed", 1, "seed of the deals and the players")
	workers := fs.Int("workers", 1, "games played at once (1 gives one-core numbers)")
	threads := fs.Int("threads", 1, "goroutines per search decision")
	budget := fs.Duration("budget", 0, "time per search decision (0: the level's)")
	worlds := fs.Int("worlds", 0, "deals sampled per search decision (0: the level's)")
	nodesPerMs := fs.Int("nodes-per-ms", 0, "bound each search decision by this many solver nodes per ms of its level's budget instead of by time (a busy machine plays as an idle one; about 12000 is one core)")
	bPrevious := fs.Bool("b-previous", false, "B's search plays as before issue 34: the previous sampler, no endgame search (for measuring, not a level)")
	aOpen := fs.Bool("a-open", false, "A's cards are the best with every hand open (the ceiling of card play against B: a measurement, not a level)")
	aOpenFrom := fs.Int("a-open-from", 0, "as -a-open from this trick on (1-6; earlier cards are A's level's): the most that reading the cards better from then on could gain")
	aScale := fs.Int("a-scale", 1, "multiply A's node cap (-nodes-per-ms) and its sampled deals by this (what more search would buy: a measurement, not a level)")
	an := fs.Bool("analyze", false, "measure A's cards and trumps against the open-card solver")
	pairsOut := fs.String("pairs", "", "write every deal's two games to this file, for a later run to compare with (-against)")
	against := fs.String("against", "", "compare with an earlier run's -pairs file on the same deals (the same -seed and -deals): the difference per deal, paired")
	quiet := fs.Bool("q", false, "say nothing on stderr while it runs (else how far it is: a bar on a terminal, a line every few seconds)")
	if code, ok := parseFlags(fs, args, 0, stdout, stderr); !ok {
		return code
	}
	la, err := robot.ParseLevel(*a)
	if err == nil {
		var lb robot.Level
		lb, err = robot.ParseLevel(*b)
		*b = string(lb)
	}
	if err == nil && (*aOpenFrom < 0 || *aOpenFrom > 6) {
		err = fmt.Errorf("-a-open-from must be a trick, 1 to 6")
	}
	if err == nil && (*deals < 1 || *matches < 0 || *stripes < core.MinStripes || *stripes > core.MaxStripes) {
		err = fmt.Errorf("-deals must be at least 1, -matches at least 0, -stripes %d..%d", core.MinStripes, core.MaxStripes)
	}
	if err != nil {
		fmt.Fprintf(stderr, "duel: %v\n", err)
		fs.Usage()
		return 2
	}
	cfg := research.DuelConfig{A: la, B: robot.Level(*b), Deals: *deals, Seed: *seed, Workers: max(*workers, 1),
		Options: robot.Options{Threads: max(*threads, 1), Budget: *budget, Worlds: *worlds}, Analyze: *an,
		Matches: *matches, Stripes: *stripes, BPrevious: *bPrevious, AOpenFrom: openFrom(*aOpen, *aOpenFrom), AScale: max(*aScale, 1), NodesPerMs: max(*nodesPerMs, 0)}
	if cfg.Matches > 0 && (*pairsOut != "" || *against != "") {
		fmt.Fprintf(stderr, "duel: -pairs and -against compare deals, not -matches\n")
		return 2
	}
	// Ctrl-C or SIGTERM stop the duel between two moves, which then says so instead of printing a
	// part of its deals as a result.
	ctx, stop := untilStopped()
	defer stop()
	if cfg.Matches > 0 {
		return playDuel(ctx, stdout, stderr, *quiet, cfg, "matches", cfg.Matches, research.MatchDuel)
	}
	var before [][2]research.GameOutcome
	if *against != "" { // read first: a wrong file fails before the duel, not after it
		f, err := os.Open(*against)
		if err == nil {
			before, err = research.ReadPairs(f, cfg)
			f.Close()
		}
		if err != nil {
			fmt.Fprintf(stderr, "duel: -against: %v\n", err)
			return 2
		}
	}
	var res *research.DuelResult
	play := func(ctx context.Context, cfg research.DuelConfig) (*research.DuelResult, error) {
		var err error
		res, err = research.Duel(ctx, cfg)
		if err != nil {
			return res, err
		}
		if *pairsOut != "" {
			if err := writePairs(*pairsOut, res); err != nil {
				return res, fmt.Errorf("-pairs: %w", err)
			}
		}
		return res, nil
	}
	code := playDuel(ctx, stdout, stderr, *quiet, cfg, "deals", cfg.Deals, play)
	if code == 0 && before != nil {
		cmp, err := res.Compare(before)
		if err != nil {
			fmt.Fprintf(stderr, "duel: -against: %v\n", err)
			return 1
		}
		cmp.Print(stdout)
	}
	return code
}

// writePairs writes the duel's pairs file.
func writePairs(path string, res *research.DuelResult) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := res.WritePairs(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// playDuel plays n deals or matches with progress lines, and prints the result: the exit status.
// A duel ctx ends before its end prints no result: its share would be of the deals played so far.
func playDuel[R interface{ Print(io.Writer) }](ctx context.Context, stdout, stderr io.Writer, quiet bool, cfg research.DuelConfig, what string, n int, play func(context.Context, research.DuelConfig) (R, error)) int {
	p := startProgress(stderr, quiet, "duel", what, n)
	cfg.Done = p.add
	res, err := play(ctx, cfg)
	p.finish()
	if ctx.Err() != nil {
		fmt.Fprintf(stderr, "duel: stopped before its end (%v): no result\n", context.Cause(ctx))
		return 1
	}
	if err != nil {
		fmt.Fprintf(stderr, "duel: %v\n", err)
		return 1
	}
	res.Print(stdout)
	return 0
}

// runSelfplay plays complete matches between computer players (research.Selfplay) and writes
// each match record.
func runSelfplay(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("selfplay")
	matches := fs.Int("matches", 1, "matches to play")
	seed := fs.Uint64("seed", 1, "seed for deals and computer players")
	out := fs.String("out", "selfplay", "directory for the match records")
	level := fs.String("level", "easy", "computer players' level: easy, normal or strong")
	opts := fs.String("options", "", "table options, e.g. \"stripes=5 draw=flat1\":\n"+options.Usage("en"))
	quiet := fs.Bool("q", false, "say nothing on stderr while it runs (else how far it is: a bar on a terminal, a line every few seconds)")
	if code, ok := parseFlags(fs, args, 0, stdout, stderr); !ok {
		return code
	}
	if *matches < 1 {
		fmt.Fprintln(stderr, "-matches must be 1 or more")
		return 2
	}
	if err := checkOptions(*opts); err != nil {
		fmt.Fprintf(stderr, "-options %q: %v\n", *opts, err)
		return 2
	}
	if _, err := robot.ParseLevel(*level); err != nil {
		fmt.Fprintf(stderr, "-level %q: the levels are %s\n", *level, levelNames())
		return 2
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fmt.Fprintln(stderr, "selfplay:", err)
		return 1
	}
	p := startProgress(stderr, *quiet, "selfplay", "matches", *matches)
	defer p.finish()
	n := 0
	// A one-shot subcommand: its work lives as long as the process.
	err := research.Selfplay(context.Background(), research.SelfplayConfig{Matches: *matches, Seed: *seed, Level: *level,
		Options: strings.Fields(*opts), Robots: robots, Done: p.add}, func(key string, rec []byte) error {
		wrote, err := writeRecords(*out, key, rec, true)
		n += wrote
		return err
	})
	p.finish()
	if err != nil {
		fmt.Fprintln(stderr, "selfplay:", err)
		return 1
	}
	fmt.Fprintf(stdout, "played %d matches (seed %d), wrote %d match records to %s\n", *matches, *seed, n, *out)
	return 0
}

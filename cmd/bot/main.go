// Command bot runs kontermatt: the Konter a Matt table for Discord, Telegram and the terminal.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// untilStopped is the lifetime of a command's work: the process's, ended early by Ctrl-C or
// SIGTERM, so that the work stops cleanly and says so rather than being cut off.
func untilStopped() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// command is a subcommand: its name, what follows it and what it does.
type command struct{ name, args, summary string }

// commands are the subcommands in the order help lists them. The bot itself (no subcommand) is
// first.
var commands = []command{
	{"", "[flags]", "run the bot: the configured Telegram and Discord bots, or with no chat token a table in this terminal"},
	{"replay", "FILE", "check and score a game or match record (FILE, or - for standard input)"},
	{"export", "[-config FILE] [-db FILE] DIR", "write every kept match and game record into DIR (the bot must be stopped)"},
	{"backup", "[-config FILE] [-db FILE] OUT", "write a consistent copy of the database, also while the bot runs"},
	{"health", "[-config FILE] [-db FILE] [-live]", "ask the running bot whether it is ready (/readyz: exit 0) or not (exit 1), in one line: the container's health check; -live asks liveness (/livez)"},
	{"migrate", "-from bbolt|etcd -to etcd|bbolt [-config FILE] [-db FILE]", "move a stopped bot's data between its bbolt file and the etcd cluster of its config"},
	{"stats", "[-config FILE] [-db FILE] rebuild", "make the league (statistics, ratings, season tables) anew from the kept matches (the bot must be stopped)"},
	{"selfplay", "[flags]", "play matches between computer players and write their records"},
	{"duel", "[flags]", "measure two computer levels on duplicate deals"},
	{"invite", "[-config FILE] [-application ID]", "print the link that adds the Discord bot to a server, with the permissions it needs"},
	{"version", "", "print the version and the source revision"},
	{"help", "[COMMAND]", "this list, or one command's flags"},
}

// runner gives the function that runs a subcommand.
func runner(name string) func(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	switch name {
	case "replay":
		return runReplay
	case "export":
		return runExport
	case "backup":
		return runBackup
	case "health":
		return runHealth
	case "migrate":
		return runMigrate
	case "stats":
		return runStats
	case "selfplay":
		return runSelfplay
	case "duel":
		return runDuel
	case "invite":
		return runInvite
	case "version":
		return runVersion
	case "help":
		return runHelp
	}
	return nil
}

// run dispatches a subcommand and returns the process exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") && !isHelp(args[0]) {
		return serve(args, stdin, stdout, stderr)
	}
	if isHelp(args[0]) {
		return runHelp(nil, stdin, stdout, stderr)
	}
	if r := runner(args[0]); r != nil {
		return r(args[1:], stdin, stdout, stderr)
	}
	fmt.Fprintf(stderr, "unknown command %q%s; bot help lists the commands\n", args[0], didYouMean(args[0]))
	return 2
}

func isHelp(s string) bool { return s == "-h" || s == "-help" || s == "--help" }

func didYouMean(typed string) string {
	var names []string
	for _, c := range commands[1:] {
		names = append(names, c.name)
	}
	if near := closest(typed, names); near != "" {
		return fmt.Sprintf(" (did you mean %s?)", near)
	}
	return ""
}

// usage lists the commands and the bot's own flags.
func usage(w io.Writer) {
	fmt.Fprintf(w, "usage: kontermatt [flags]     %s\n       kontermatt COMMAND [arguments]\n\ncommands:\n", commands[0].summary)
	for _, c := range commands[1:] {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "\nflags of the bot itself (bot COMMAND -h shows a command's):\n")
	fs, _, _ := serveFlags(&Main{})
	fs.SetOutput(w)
	fs.PrintDefaults()
}

func runHelp(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || isHelp(args[0]) {
		usage(stdout)
		return 0
	}
	if r := runner(args[0]); r != nil {
		return r([]string{"-h"}, nil, stdout, stderr)
	}
	fmt.Fprintf(stderr, "unknown command %q%s\n", args[0], didYouMean(args[0]))
	return 2
}

// newFlags makes a command's flag set; its usage names the command and what follows the flags.
func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(strings.TrimSpace("kontermatt "+name), flag.ContinueOnError) // the binary's name in the image and the docs
	for _, c := range commands {
		if c.name == name {
			fs.Usage = func() {
				fmt.Fprintf(fs.Output(), "usage: %s %s\n\n%s\n", fs.Name(), c.args, c.summary)
				if hasFlags(fs) {
					fmt.Fprintln(fs.Output(), "\nflags:")
					fs.PrintDefaults()
				}
			}
		}
	}
	return fs
}

func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}

// parseFlags parses a command's flags, before, between and after its words, and wants exactly
// nargs words (-1: any); "--" ends the flags, and "-" is a word. fs.Args then gives the words.
// On -h it prints the usage to stdout; on a mistake the reason and the usage to stderr. ok false
// means: exit with code.
func parseFlags(fs *flag.FlagSet, args []string, nargs int, stdout, stderr io.Writer) (code int, ok bool) {
	fs.SetOutput(io.Discard)
	words, err := parseInterspersed(fs, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.SetOutput(stdout)
		fs.Usage()
		return 0, false
	case err == nil && nargs >= 0 && len(words) != nargs:
		err = wrongWords(fs.Name(), words, nargs)
	}
	if err != nil {
		fs.SetOutput(stderr)
		fmt.Fprintln(stderr, err)
		fs.Usage()
		return 2, false
	}
	return 0, true
}

// parseInterspersed parses flags wherever they stand among the words, and leaves fs.Args the
// words alone.
func parseInterspersed(fs *flag.FlagSet, args []string) (words []string, err error) {
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			return nil, err
		}
		left := fs.Args()
		if len(left) == 0 {
			break
		}
		if n := len(rest) - len(left); n > 0 && rest[n-1] == "--" {
			words = append(words, left...) // after "--" everything is a word
			break
		}
		words, rest = append(words, left[0]), left[1:]
	}
	return words, fs.Parse(append([]string{"--"}, words...))
}

// wrongWords says what is wrong with a command's words: which is missing, or which is one too
// many, with the command's form.
func wrongWords(name string, words []string, nargs int) error {
	form := name + " [flags]"
	var wants []string
	for _, c := range commands {
		if strings.TrimSpace("kontermatt "+c.name) == name {
			form = strings.TrimSpace(name + " " + c.args)
			for _, w := range strings.Fields(c.args) {
				if !strings.HasPrefix(w, "[") && !strings.HasSuffix(w, "]") {
					wants = append(wants, w)
				}
			}
		}
	}
	switch {
	case nargs == 0:
		return fmt.Errorf("%s: %q is not a flag; %s takes only flags (%s -h lists them)", name, words[0], name, name)
	case len(words) < nargs && len(wants) > len(words):
		return fmt.Errorf("%s: %s is missing (%s)", name, strings.Join(wants[len(words):], " "), form)
	case len(words) < nargs:
		return fmt.Errorf("%s: a word is missing (%s)", name, form)
	}
	return fmt.Errorf("%s: %q after %s: it takes %s (%s)", name, words[nargs], strings.Join(words[:nargs], " "), numberWord(nargs), form)
}

func numberWord(n int) string {
	if n == 1 {
		return "one"
	}
	return fmt.Sprint(n)
}

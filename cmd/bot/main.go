// Command bot runs kontermatt: the Konter a Matt table for Discord, Telegram and the terminal.
package main

import (
	"fmt"
	"io"
	"os"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

const usage = `usage: bot <command> [arguments]

commands:
  replay FILE   check and score a game or match record (FILE or - for stdin)
  duel          play two computer levels on duplicate deals (duel -h for flags)
`

// run dispatches a subcommand and returns the process exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") && !isHelp(args[0]) {
		return serve(args, stdin, stdout, stderr)
	}
	switch args[0] {
	case "replay":
		return runReplay(args[1:], stdin, stdout, stderr)
	case "duel":
		return runDuel(args[1:], stdout, stderr)
	case "backup":
		return runBackup(args[1:], stdout, stderr)
	case "export":
		return runExport(args[1:], stdout, stderr)
	case "selfplay":
		return runSelfplay(args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "unknown command %q\n\n%s", args[0], usage)
	return 2
}

func isHelp(s string) bool { return s == "-h" || s == "-help" || s == "--help" }

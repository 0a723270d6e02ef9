package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/kontermatt/kontermatt/core"
)

// runReplay checks and scores a game or match record from a file or stdin ("-"). It prints one
// JSON object: the summary (exit 0) or the error object (exit 1).
func runReplay(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "usage: bot replay FILE   (FILE or - for standard input)")
		return 2
	}
	var data []byte
	var err error
	if args[0] == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(args[0])
	}
	if err != nil {
		fmt.Fprintf(stderr, "replay: %v\n", err)
		return 2
	}
	enc := json.NewEncoder(stdout)
	out, err := core.Replay(data)
	if err != nil {
		_ = enc.Encode(core.AsReplayError(err))
		return 1
	}
	if err := enc.Encode(out); err != nil {
		fmt.Fprintf(stderr, "replay: %v\n", err)
		return 2
	}
	return 0
}

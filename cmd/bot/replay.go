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
	fs := newFlags("replay")
	if code, ok := parseFlags(fs, args, 1, stdout, stderr); !ok {
		return code
	}
	var data []byte
	var err error
	if fs.Arg(0) == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(fs.Arg(0))
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

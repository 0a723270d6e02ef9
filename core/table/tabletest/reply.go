package tabletest

import (
	"strings"
	"testing"

	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// Reply is the one reply to cmd, on the test's context; the test fails when Handle gives an error
// or another number of replies.
func Reply(tb testing.TB, svc *table.Service, cmd api.Command) api.Message {
	tb.Helper()
	msgs, err := svc.Handle(tb.Context(), cmd)
	if err != nil || len(msgs) != 1 {
		tb.Fatalf("%s %v: %d replies, err %v: %+v", cmd.Verb, cmd.Args, len(msgs), err, msgs)
	}
	return msgs[0]
}

// Says fails the test for each of has that text lacks and each of hasNot that it shows, each
// trimmed of spaces first (a catalog text given an empty argument stands for its start).
func Says(tb testing.TB, text string, has, hasNot []string) {
	tb.Helper()
	for _, s := range has {
		if !strings.Contains(text, strings.TrimSpace(s)) {
			tb.Errorf("the text lacks %q:\n%s", s, text)
		}
	}
	for _, s := range hasNot {
		if strings.Contains(text, strings.TrimSpace(s)) {
			tb.Errorf("the text shows %q:\n%s", s, text)
		}
	}
}

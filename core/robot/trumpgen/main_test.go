package main

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/kontermatt/kontermatt/core/robot"
	"github.com/kontermatt/kontermatt/core/robot/dd"
)

// The shipped table is what this program makes: a few of its lines, spread over the file, are
// made again from the seed and deal count its first line names, and must come out the same.
func TestShippedTableIsReproducible(t *testing.T) {
	data, err := os.ReadFile("../trumps.txt")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	var worlds int
	var seed uint64
	if _, err := fmt.Sscanf(lines[0], "# kontermatt trump table: go run ./core/robot/trumpgen -worlds %d -seed %d", &worlds, &seed); err != nil {
		t.Fatalf("the first line does not name the command: %q (%v)", lines[0], err)
	}
	var body []string
	for _, l := range lines {
		if !strings.HasPrefix(l, "#") {
			body = append(body, l)
		}
	}
	keys := robot.TrumpKeys()
	if len(body) != len(keys) {
		t.Fatalf("%d lines for %d trump choices", len(body), len(keys))
	}
	sv := dd.NewSolver()
	for _, i := range []int{0, 451, 907, 1362, len(keys) - 1} {
		if got := Line(sv, keys[i], seed, uint64(i), worlds); got != body[i] {
			t.Errorf("line %d: made %q, shipped %q", i, got, body[i])
		}
	}
}

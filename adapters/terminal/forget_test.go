package terminal

import (
	"context"
	"io"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage"
)

// thenForget types what the player types until they stop, then "forget yes".
type thenForget struct {
	*player
	said bool
}

func (p *thenForget) Read(b []byte) (int, error) {
	n, err := p.player.Read(b)
	if err == io.EOF && !p.said {
		p.said = true
		return copy(b, "forget yes\n"), nil
	}
	return n, err
}

// TestForgetAtTheTerminal: the person at the keyboard plays a match on a database, then types
// forget yes; the file then holds neither their name nor their ID.
func TestForgetAtTheTerminal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kontermatt.db")
	st, err := storage.Open(path, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := &tabletest.Buffer{}
	const name = "Evangeline Quist"
	term := New(Config{Out: out, Humans: 1, Name: name, Options: []string{"timer=none", "stripes=1"}})
	term.cfg.In = &thenForget{player: &player{term: term, rng: rand.New(rand.NewPCG(2, 2)), max: 40}}
	svc := tabletest.New(table.Config{Store: st, KV: st, Outboxes: map[string]table.Outbox{Platform: term},
		Surfaces: map[string]api.Surface{Platform: Surface}, Robots: robots, Seed: 3})
	if err := term.Run(context.Background(), svc); err != nil {
		t.Fatal(err)
	}
	svc.Close()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "wins the match") || !strings.Contains(out.String(), "your name is gone from 1 match") {
		t.Fatalf("no match, or no forgetting:\n%s", out.String())
	}
	if found := tabletest.Traces(t, path, name, "Evangeline", term.player(1).ID); len(found) > 0 {
		t.Errorf("the database still holds %v", found)
	}
}

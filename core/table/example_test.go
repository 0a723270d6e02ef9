package table_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// printer is an Outbox that prints the first line of every message the service publishes.
type printer struct{}

func (printer) Deliver(_ context.Context, msgs []api.Message) {
	for _, m := range msgs {
		first, _, _ := strings.Cut(m.Text, "\n")
		fmt.Printf("  [%s] %s\n", m.Kind, first)
	}
}

// A table in memory: Ann opens it, Bob joins, a card played before the deal is refused (only to
// Bob), and the lobby message is edited as seats fill.
func ExampleService_Handle() {
	store := mem.New()
	svc := table.New(table.Config{Store: store, Outboxes: map[string]table.Outbox{"example": printer{}}, Seed: 1})
	defer svc.Close()
	club := api.Place{Platform: "example", Chat: "club"}
	ann := api.Player{ID: "ex:ann", Name: "Ann", Locale: "en"}
	bob := api.Player{ID: "ex:bob", Name: "Bob", Locale: "en"}
	for _, cmd := range []api.Command{
		{Place: club, Actor: ann, Verb: api.VerbNew, Args: []string{"stripes=5", "timer=none"}},
		{Place: club, Actor: bob, Verb: api.VerbJoin},
		{Place: club, Actor: bob, Verb: api.VerbPlay, Args: []string{"QS"}},
	} {
		fmt.Println(cmd.Actor.Name, cmd.Verb)
		replies, err := svc.Handle(context.Background(), cmd)
		if err != nil {
			fmt.Println("  not stored:", err)
		}
		for _, r := range replies {
			fmt.Printf("  to %s: %s\n", r.Target.Player.Name, r.Text)
		}
	}
	// Output:
	// Ann new
	//   [lobby] 🃏 Konter a Matt — a table is open
	//   to Ann: Table opened. Others can /join now.
	// Bob join
	//   [lobby] 🃏 Konter a Matt — a table is open
	// Bob play
	//   to Bob: No game is being played right now.
}

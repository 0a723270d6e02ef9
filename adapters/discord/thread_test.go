package discord

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kontermatt/kontermatt/core/table"
)

// A table in a thread that gets archived mid-match: the table message can no longer be edited
// (50083), so the table goes on in a new message, whose posting unarchives the thread.
func TestArchivedThreadGetsANewTableMessage(t *testing.T) {
	f := newFakeDiscord(t)
	f.setChannel(fakeChannel{ID: guildChannel, Thread: true, Perms: Permissions})
	store := table.NewMemStore()
	h := startHarness(t, f, store, store)
	openTable(t, f, alice, []fakeUser{bob}, opt("stripes", 4, 1), opt("timer", 3, "none"), opt("level", 3, "easy"))
	first, _ := liveMessage(f)
	f.archive(guildChannel)
	playMatch(t, f, []seatPlayer{{u: alice}, {u: bob}}, rand.New(rand.NewPCG(51, 52)))
	h.a.Flush(context.Background())

	if got := f.refusals(guildChannel); !slices.Equal(got, []int{50083}) {
		t.Errorf("refusals %v, want one 50083 for the first edit after archiving", got)
	}
	f.mu.Lock()
	archived := f.channels[guildChannel].Archived
	f.mu.Unlock()
	if archived {
		t.Errorf("the thread is still archived")
	}
	msgs := f.channel(guildChannel)
	i := slices.IndexFunc(msgs, func(m fakeMessage) bool { return m.ID == first.ID })
	var after []fakeMessage
	for _, m := range msgs[i+1:] {
		if _, ok := findButton(m, table.VerbRematch); ok {
			after = append(after, m)
		}
	}
	if len(after) != 1 || after[0].Edits == 0 {
		t.Errorf("the table did not go on in a new message after the first (%d messages with the end of the match)", len(after))
	}
	if !matchOver(msgs) {
		t.Errorf("the match did not end")
	}
}

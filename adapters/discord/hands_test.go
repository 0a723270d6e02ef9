package discord

import (
	"math/rand/v2"
	"testing"

	"github.com/kontermatt/kontermatt/storage/etcdstore/etcdtest"
)

// TestEphemeralHandAcrossCopies (issue 31): two copies on a 3-member etcd cluster, by HTTP; a
// load balancer sends every interaction to the copy that does not own the channel's place, so
// the other copy, which tells the place's story and the hands, never hears an interaction. Bob
// refuses DMs and plays from his ephemeral hand ("My hand"): the owner keeps it up to date
// through the interaction's token, which the copy that answered "My hand" shares in the store.
// A whole match is played.
func TestEphemeralHandAcrossCopies(t *testing.T) {
	f := newFakeDiscordVia(t, viaHTTP)
	f.blocked[bob.ID] = true
	c := etcdtest.Start(t, etcdtest.Options{})
	a, b := startOwnedCopy(t, "a", f, c), startOwnedCopy(t, "b", f, c)
	spread(t, a, b)
	owner := ownerOf(a, b)
	answering := a
	if owner == a {
		answering = b
	}
	f.mu.Lock()
	f.Pool = []string{answering.h.endpoint}
	f.mu.Unlock()
	openTable(t, f, alice, []fakeUser{bob}, opt("stripes", 4, 1), opt("timer", 3, "none"))
	if ownerOf(a, b) != owner {
		t.Fatal("the place changed owner during the test")
	}
	moves := playMatch(t, f, []seatPlayer{{u: alice}, {u: bob, noDM: true}}, rand.New(rand.NewPCG(51, 1)))
	t.Logf("seed 51: %d moves by people; copy %s answered every interaction, copy %s owns the place and told %d posts and edits",
		moves, answering.name, owner.name, owner.net.told.Load())
}

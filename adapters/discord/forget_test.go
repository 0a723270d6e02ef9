package discord

import (
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage"
)

// TestForgetReachesTheAdaptersBuckets: Evangeline's DMs are closed, so the adapter notes it
// (discord.nodm) and she plays from ephemeral hands. After a match she says /km league forget
// confirm:true, and the database file holds neither her name nor her Discord ID any more: not in
// the adapter's bucket (registered with People), not in the table or its record, not in freed
// pages.
func TestForgetReachesTheAdaptersBuckets(t *testing.T) {
	ctx := t.Context()
	eve := fakeUser{ID: "777000000000001234", Name: "Evangeline Quist", Locale: "en-US"}
	path := filepath.Join(t.TempDir(), "kontermatt.db")
	st, err := storage.Open(path, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := newFakeDiscord(t)
	f.blocked[eve.ID] = true
	h := startHarness(t, f, st, st, harnessOpt{table: func(c *table.Config) { c.KV, c.People = st, []table.People{People} }})
	openTable(t, f, alice, []fakeUser{eve}, opt("stripes", 4, 1), opt("timer", 3, "none"), opt("level", 3, "easy"))
	playMatch(t, f, []seatPlayer{{u: alice}, {u: eve, noDM: true}}, rand.New(rand.NewPCG(5, 5)))
	if _, ok, _ := st.Get(ctx, bucketNoDM, eve.ID); !ok {
		t.Fatal("the adapter did not note Evangeline's closed DMs: the test shows nothing")
	}
	if r := f.slash(eve, guildChannel, "league forget", opt("confirm", 5, true)); !strings.Contains(r.Content, "your name is gone from 1 match") {
		t.Fatalf("/km league forget confirm:true answered %q", r.Content)
	}
	h.stop()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if found := tabletest.Traces(t, path, eve.ID, "Evangeline", "Quist"); len(found) > 0 {
		t.Errorf("the database still holds %v", found)
	}
	if len(tabletest.Traces(t, path, "Alice")) == 0 {
		t.Error("Alice is gone too")
	}
}

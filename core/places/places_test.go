package places_test

import (
	"slices"
	"testing"

	"github.com/kontermatt/kontermatt/core/places"
	"github.com/kontermatt/kontermatt/storage/mem"
	"github.com/kontermatt/kontermatt/storage/storagetest"
)

// TestVotesAtOnceCount: two of the three people at a place's table vote for one change at once,
// at two copies of the bot; both votes count (compare-and-swap), and the third one's makes it.
func TestVotesAtOnceCount(t *testing.T) {
	ctx := t.Context()
	kv := storagetest.NewRacingKV()
	mine, other := places.New(kv, nil), places.New(kv, nil)
	seated := []string{"ann", "bob", "cy"}
	kv.Meanwhile = func() {
		if _, _, err := other.Vote(ctx, "tg:g", "bob", seated, "stripes=3"); err != nil {
			t.Error(err)
		}
	}
	votes, need, err := mine.Vote(ctx, "tg:g", "ann", seated, "stripes=3")
	if err != nil || votes != 2 || need != 3 {
		t.Fatalf("ann's vote after bob's at once: %d of %d (%v), want 2 of 3", votes, need, err)
	}
	if votes, _, _ := mine.Vote(ctx, "tg:g", "cy", seated, "stripes=3"); votes != 3 {
		t.Fatalf("the last vote: %d, want 3", votes)
	}
	// Made: the proposal is gone, and a new vote starts anew.
	if votes, _, _ := mine.Vote(ctx, "tg:g", "ann", seated, "stripes=3"); votes != 1 {
		t.Errorf("a vote after the change was made: %d, want 1", votes)
	}
}

// TestUnvote: a forgotten person's vote is taken back, and a vote for another change starts
// the count again.
func TestUnvote(t *testing.T) {
	ctx := t.Context()
	b := places.New(mem.New(), nil)
	seated := []string{"ann", "bob", "cy"}
	b.Vote(ctx, "tg:g", "ann", seated, "stripes=3")
	b.Vote(ctx, "tg:g", "bob", seated, "stripes=3")
	if err := b.Unvote(ctx, "tg:g", "ann"); err != nil {
		t.Fatal(err)
	}
	if votes, _, _ := b.Vote(ctx, "tg:g", "cy", seated, "stripes=3"); votes != 2 {
		t.Errorf("after ann's vote went: %d votes, want 2 (bob's, cy's)", votes)
	}
	if votes, _, _ := b.Vote(ctx, "tg:g", "bob", seated, "stripes=5"); votes != 1 {
		t.Errorf("a vote for another change: %d votes, want 1", votes)
	}
}

// TestSettings: a place without settings has none, kept ones read back with their arguments in
// the options' order, and ones that do not read give the defaults.
func TestSettings(t *testing.T) {
	ctx := t.Context()
	kv := mem.New()
	b := places.New(kv, nil)
	if got := b.Get(ctx, "tg:g"); got.Lang != "" || got.Options != nil {
		t.Errorf("no settings: %+v", got)
	}
	if _, err := b.Change(ctx, "tg:g", func(ps *places.Settings) {
		*ps = places.Settings{Options: map[string]string{"stripes": "3"}, Lang: "lb"}
	}); err != nil {
		t.Fatal(err)
	}
	if got := b.Get(ctx, "tg:g"); got.Lang != "lb" || !slices.Equal(got.Args(), []string{"stripes=3"}) {
		t.Errorf("kept settings: %+v, args %q", got, got.Args())
	}
	kv.Put(ctx, places.Bucket, "tg:h", []byte("{not json"))
	if got := b.Get(ctx, "tg:h"); got.Lang != "" || got.Options != nil {
		t.Errorf("settings that do not read: %+v", got)
	}
}

// TestChangesAtOnceAreBothKept: two admins change a place's settings at once at two copies of
// the bot, one the stripes, the other the language; both changes are kept (compare-and-swap from
// the settings stored now), where reading and then writing lost the first.
func TestChangesAtOnceAreBothKept(t *testing.T) {
	ctx := t.Context()
	kv := storagetest.NewRacingKV()
	mine, other := places.New(kv, nil), places.New(kv, nil)
	kv.Meanwhile = func() {
		if _, err := other.Change(ctx, "tg:g", func(ps *places.Settings) { ps.Lang = "de" }); err != nil {
			t.Error(err)
		}
	}
	kept, err := mine.Change(ctx, "tg:g", func(ps *places.Settings) { ps.Options = map[string]string{"stripes": "3"} })
	if err != nil {
		t.Fatal(err)
	}
	for _, got := range []places.Settings{kept, places.New(kv, nil).Get(ctx, "tg:g")} {
		if got.Lang != "de" || got.Options["stripes"] != "3" {
			t.Errorf("after two changes at once: %+v, want both", got)
		}
	}
}

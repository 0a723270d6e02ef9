package chat

import (
	"context"
	"testing"

	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// What a message for one person shows where others see it: a hand nothing; a secret text its
// public text alone, without what could show what its person holds; anything else as it is.
func TestPublic(t *testing.T) {
	buttons := [][]api.Button{{{Label: "Q♠", Action: api.Action{Verb: api.VerbPlay, Arg: "QS"}}}}
	file := &api.File{Name: "m1.json", Data: []byte("{}")}
	for _, tc := range []struct {
		name string
		in   api.Message
		ok   bool
		want api.Message
	}{
		{"hand", api.Message{Kind: api.KindHand, Text: "Q♠ K♥", Buttons: buttons}, false, api.Message{}},
		{"secret without a public text", api.Message{Kind: api.KindNotice, Text: "you hold Q♠", Secret: true}, false, api.Message{}},
		{"secret", api.Message{Kind: api.KindNotice, Text: "you hold Q♠", Secret: true, Public: "see your DMs",
			Buttons: buttons, Picture: api.PictureBoard, File: file, Table: "t1"},
			true, api.Message{Kind: api.KindNotice, Text: "see your DMs", Table: "t1"}},
		{"plain", api.Message{Kind: api.KindNotice, Text: "your turn", Buttons: buttons, Picture: api.PictureBoard},
			true, api.Message{Kind: api.KindNotice, Text: "your turn", Buttons: buttons, Picture: api.PictureBoard}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := Public(tc.in)
			if ok != tc.ok {
				t.Fatalf("shown %v, want %v", ok, tc.ok)
			}
			if ok && (got.Text != tc.want.Text || got.Secret || got.Public != "" || got.Picture != tc.want.Picture ||
				got.File != tc.want.File || len(got.Buttons) != len(tc.want.Buttons) || got.Table != tc.want.Table) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// Who refuses private messages is remembered in the KV, for the next process too; a place is
// told how they get their hand once per person and table.
func TestUnreachable(t *testing.T) {
	ctx := t.Context()
	kv := mem.New()
	u := NewUnreachable(kv, "x.people", "x.told", nil)
	if u.Is(ctx, "42") || !u.Set(ctx, "42", true) || u.Set(ctx, "42", true) || !u.Is(ctx, "42") {
		t.Fatal("a refusal is not remembered once")
	}
	if !NewUnreachable(kv, "x.people", "x.told", nil).Is(ctx, "42") {
		t.Error("the refusal is not in the KV")
	}
	if !u.TellOnce(ctx, "t1", "42") || u.TellOnce(ctx, "t1", "42") || !u.TellOnce(ctx, "t2", "42") || u.TellOnce(ctx, "", "42") {
		t.Error("not told once per table")
	}
	if NewUnreachable(kv, "x.people", "x.told", nil).TellOnce(ctx, "t1", "42") {
		t.Error("what was told is not in the KV")
	}
	if !u.Set(ctx, "42", false) || u.Is(ctx, "42") {
		t.Error("a person who wrote to the bot is still unreachable")
	}
	if _, ok, _ := kv.Get(ctx, "x.people", "42"); ok {
		t.Error("the refusal is still in the KV")
	}
	var s Slot
	s.Reached(context.Background(), api.Place{}, "t1") // no service yet: nothing to resume
}

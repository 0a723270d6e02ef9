package api

import (
	"errors"
	"strings"
	"testing"
)

func TestActionRoundTrip(t *testing.T) {
	for _, a := range []Action{
		{Verb: VerbPlay, Table: "t1", Seq: 7, Arg: "QS"},
		{Verb: VerbJoin, Table: "abcdefghij", Seq: 1 << 40},
		{Verb: VerbRematch, Table: "t1", Arg: "rotate"},
		{Verb: VerbNew},
	} {
		t.Run(a.Encode(), func(t *testing.T) {
			got, err := ParseAction(a.Encode())
			if err != nil || got != a {
				t.Errorf("ParseAction(%q) = %+v, %v; want %+v", a.Encode(), got, err, a)
			}
		})
	}
}

// Button data that is not ours, or is damaged, is refused as one error, never half read.
func TestParseActionRefuses(t *testing.T) {
	for _, tc := range []struct{ name, data string }{
		{"empty", ""},
		{"another bot's", "xx|play|t1|7|QS"},
		{"a field short", "km|play|t1|7"},
		{"a field more", "km|play|t1|7|QS|x"},
		{"a verb nobody types", "km|timeout|t1|7|"},
		{"an unknown verb", "km|fly|t1|7|"},
		{"a bad sequence number", "km|play|t1|-7|QS"},
		{"too long", "km|play|t1|7|" + strings.Repeat("x", MaxActionLen)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if a, err := ParseAction(tc.data); !errors.Is(err, ErrBadAction) || a != (Action{}) {
				t.Errorf("ParseAction(%q) = %+v, %v; want ErrBadAction", tc.data, a, err)
			}
		})
	}
}

func TestEncodeRefusesTooLong(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("an action longer than MaxActionLen was encoded")
		}
	}()
	Action{Verb: VerbPlay, Table: strings.Repeat("t", MaxActionLen)}.Encode()
}

// A pressed button's command takes who and where from the platform, the rest from the button.
func TestActionCommand(t *testing.T) {
	place, actor := Place{Platform: "telegram", Chat: "42"}, Player{ID: "tg:1", Name: "Jang"}
	c := Action{Verb: VerbPlay, Table: "t1", Seq: 9, Arg: "QS"}.Command(place, actor, "cb1", true)
	if c.Place != place || c.Actor != actor || c.EventID != "cb1" || !c.Private || c.Table != "t1" || c.Seq != 9 ||
		c.Verb != VerbPlay || len(c.Args) != 1 || c.Args[0] != "QS" {
		t.Errorf("command %+v", c)
	}
	if c := (Action{Verb: VerbDeal, Table: "t1"}).Command(place, actor, "cb2", false); c.Args != nil {
		t.Errorf("a button without an argument gives the arguments %q", c.Args)
	}
}

func TestPlaceKey(t *testing.T) {
	for _, p := range []Place{
		{Platform: "telegram", Chat: "-100"},
		{Platform: "discord", Chat: "1", Thread: "2"},
	} {
		p.Title = "Café Konter" // not part of the identity
		got, ok := ParsePlaceKey(p.Key())
		if p.Title = ""; !ok || got != p {
			t.Errorf("ParsePlaceKey(%q) = %+v, %v; want %+v", p.Key(), got, ok, p)
		}
	}
	for _, key := range []string{"", "telegram", "telegram:", ":42"} {
		if p, ok := ParsePlaceKey(key); ok {
			t.Errorf("ParsePlaceKey(%q) = %+v, a place", key, p)
		}
	}
}

func TestParseVerb(t *testing.T) {
	for s, want := range map[string]Verb{"play": VerbPlay, "/Hand ": VerbHand, "  MYDATA": VerbMyData} {
		if v, ok := ParseVerb(s); !ok || v != want {
			t.Errorf("ParseVerb(%q) = %q, %v; want %q", s, v, ok, want)
		}
	}
	for _, s := range []string{"", "timeout", "move", "plays"} {
		if v, ok := ParseVerb(s); ok {
			t.Errorf("ParseVerb(%q) = %q: internal or unknown verbs are not typed", s, v)
		}
	}
}

// A message whose only change is newer sequence numbers on its buttons shows the same: the same
// digest. Anything shown changes it.
func TestDigest(t *testing.T) {
	msg := func(seq uint64) Message {
		return Message{Title: "Café", Text: "Your turn", Picture: PictureBoard, Buttons: [][]Button{{
			{Label: "Q♠", Action: Action{Verb: VerbPlay, Table: "t1", Seq: seq, Arg: "QS"}, Style: StylePrimary, Legal: true},
		}}}
	}
	base := msg(1).Digest()
	if msg(2).Digest() != base {
		t.Error("a newer sequence number changed the digest")
	}
	for name, change := range map[string]func(*Message){
		"text":   func(m *Message) { m.Text = "Wait" },
		"title":  func(m *Message) { m.Title = "" },
		"label":  func(m *Message) { m.Buttons[0][0].Label = "K♠" },
		"style":  func(m *Message) { m.Buttons[0][0].Style = StyleSecondary },
		"legal":  func(m *Message) { m.Buttons[0][0].Legal = false },
		"rows":   func(m *Message) { m.Buttons = append(m.Buttons, nil) },
		"watch":  func(m *Message) { m.Watch = "Watch" },
		"season": func(m *Message) { m.Season = "all" },
	} {
		m := msg(1)
		if change(&m); m.Digest() == base {
			t.Errorf("a changed %s left the digest as it was", name)
		}
	}
}

// Whatever a platform hands back as button data, ParseAction gives an action that encodes within
// the limit and reads back the same, or ErrBadAction.
func FuzzParseAction(f *testing.F) {
	f.Add("km|play|t1|7|QS")
	f.Add("km|new|||")
	f.Add("km|join|t1|ZZ|")
	f.Add("km|play|t1|007|QS")
	f.Fuzz(func(t *testing.T, data string) {
		a, err := ParseAction(data)
		if err != nil {
			if !errors.Is(err, ErrBadAction) {
				t.Fatalf("ParseAction(%q): %v", data, err)
			}
			return
		}
		again, err := ParseAction(a.Encode())
		if err != nil || again != a {
			t.Fatalf("ParseAction(%q) = %+v, which encodes to %q and reads back as %+v, %v", data, a, a.Encode(), again, err)
		}
	})
}

package table

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// WireOutside, set by this package's external tests (wiring_test.go: they may import the
// packages that answer verbs outside the engine, which import this one), registers those verbs
// in every harness's config: the tests of a verb that moved out of the engine run here as they
// did before.
var WireOutside func(cfg *Config)

func mustJSON(v any) []byte {
	data, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		panic(err)
	}
	return data
}

// maxHistory is how many matches history lists (core/league/verbs).
const maxHistory = 8

// TestOutsideVerb: a verb registered from outside the engine is answered as the engine's own
// verbs without a table are: in the actor's language, refused to an anonymous sender when it
// needs a person, its refusals and store failures told as the engine tells them.
func TestOutsideVerb(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var got *Request
		echo := OutsideVerb{Verb: "echo", Place: true, Person: true, Run: func(_ context.Context, r *Request) ([]api.Message, error) {
			got = r
			switch r.Args[0] {
			case "no":
				return nil, Refuse("err.bad_seat", "7")
			case "down":
				return nil, NotStored(ErrUnavailable)
			}
			return []api.Message{r.Reply(api.KindReply, "echo "+r.Args[0])}, nil
		}}
		h := newHarness(t, mem.New(), func(c *Config) { c.Verbs = append(c.Verbs, echo) })
		defer h.svc.Close()
		msgs := h.do(player(1), "echo", "hi")
		if len(msgs) != 1 || msgs[0].Text != "echo hi" || msgs[0].Target.Player != player(1) || msgs[0].Lang != "en" {
			t.Fatalf("echo hi: %+v", msgs)
		}
		if got.Service != h.svc || got.Place != h.place {
			t.Errorf("the request does not name its service and place: %+v", got)
		}
		if e := errText(h.do(player(1), "echo", "no")); e == "" || h.err != nil {
			t.Errorf("a refusal: %q, %v", e, h.err)
		}
		if e := errText(h.do(player(1), "echo", "down")); e == "" || !errors.Is(h.err, ErrNotStored) {
			t.Errorf("a store failure: %q, %v", e, h.err)
		}
		got = nil
		cmd := api.Command{Place: h.place, Actor: player(2), Verb: "echo", Args: []string{"hi"}, Anonymous: true}
		if msgs, _ := h.svc.Handle(context.Background(), cmd); got != nil || len(msgs) != 1 || msgs[0].Kind != api.KindError {
			t.Errorf("an anonymous sender got %+v", msgs)
		}
	})
}

// TestAdminMattersForAnOutsideVerb: a verb registered from outside the engine that an admin may
// do more with is one the platform asks about the actor's rights for (Telegram's getChatMember),
// as for the engine's own (stop); a verb without such a right is not. (Before, AdminMatters knew
// the engine's verbs alone: an outside verb's Admin was never asked about, and an admin counted
// as a member.)
func TestAdminMattersForAnOutsideVerb(t *testing.T) {
	run := func(context.Context, *Request) ([]api.Message, error) { return nil, nil }
	svc := New(Config{Store: mem.New(), Verbs: []OutsideVerb{{Verb: "rules2", Place: true, Admin: true, Run: run}, {Verb: "echo", Run: run}}})
	defer svc.Close()
	for v, want := range map[api.Verb]bool{"rules2": true, "echo": false, api.VerbStop: true, api.VerbPlay: false, "nonsense": false} {
		if got := svc.AdminMatters(v); got != want {
			t.Errorf("AdminMatters(%s) = %v, want %v", v, got, want)
		}
	}
}

// TestOutsideVerbTwice: a verb registered twice, or one of the engine's registered again, is a
// wiring mistake New refuses; only an engine verb's personal form (lang xx) may be registered
// beside it, once.
func TestOutsideVerbTwice(t *testing.T) {
	run := func(context.Context, *Request) ([]api.Message, error) { return nil, nil }
	for _, tc := range []struct {
		name  string
		verbs []OutsideVerb
	}{
		{"an engine verb", []OutsideVerb{{Verb: api.VerbPlay, Run: run}}},
		{"an outside verb twice", []OutsideVerb{{Verb: "echo", Run: run}, {Verb: "echo", Run: run}}},
		{"the personal form of a verb without one", []OutsideVerb{{Verb: api.VerbPlay, Personal: true, Run: run}}},
		{"a personal form twice", []OutsideVerb{{Verb: api.VerbLang, Personal: true, Run: run}, {Verb: api.VerbLang, Personal: true, Run: run}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			New(Config{Store: mem.New(), Verbs: tc.verbs}).Close()
		})
	}
	New(Config{Store: mem.New(), Verbs: []OutsideVerb{{Verb: api.VerbLang, Personal: true, Run: run}}}).Close()
}

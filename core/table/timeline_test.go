package table

import (
	"testing"
	"testing/synctest"

	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// TestRetoldMatchEndsWithItsWinner: a match that is over, retold (a copy took its place over
// before its last game's table message was ever shown: the copy that played it died first),
// tells the last game's table message before that game's result and the match's winner, as it
// was played: nothing comes after the winner.
func TestRetoldMatchEndsWithItsWinner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mem.New())
		defer h.svc.Close()
		me := player(1)
		if e := errText(h.do(me, api.VerbNew, "timer=none", "stripes=1")); e != "" {
			t.Fatal(e)
		}
		if e := errText(h.do(me, api.VerbDeal)); e != "" {
			t.Fatal(e)
		}
		if moves := h.playAsHuman(me, 10000); !h.over() {
			t.Fatalf("match not over after %d moves", moves)
		}
		before := len(h.out.all())
		h.svc.Retell(t.Context(), h.place)
		var public []api.Message
		for _, m := range h.out.all()[before:] {
			if m.Target.Kind == api.ToPlace && m.Key != "" {
				public = append(public, m)
			}
		}
		if len(public) < 3 {
			t.Fatalf("retold %d public messages: %+v", len(public), public)
		}
		last := public[len(public)-3:]
		if last[0].Kind != api.KindLive || last[1].Kind != api.KindSummary || last[2].Kind != api.KindSummary {
			var kinds []api.Kind
			for _, m := range public {
				kinds = append(kinds, m.Kind)
			}
			t.Errorf("a finished match is retold as %v: want its last table message, its result and the match's winner last", kinds)
		}
	})
}

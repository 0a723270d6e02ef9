package table

import (
	"testing"
)

// shownOf reads what the service holds of a place's shown-ness.
func (h *harness) shownOf() shownState {
	h.t.Helper()
	t, ok := h.svc.table(h.svc.TableAt(h.place))
	if !ok {
		h.t.Fatal("no table at the place")
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.shown
}

func TestShownKeepsTheNewestVersionShown(t *testing.T) {
	h := newHarness(t, NewMemStore())
	defer h.svc.Close()
	h.svc.Shown(h.place, 3) // no table there yet: nothing to note, nothing to fail
	if e := errText(h.do(player(1), VerbNew, "timer=none")); e != "" {
		t.Fatal(e)
	}
	lobby, ok := h.out.latest(KindLobby, "")
	if !ok {
		t.Fatal("no lobby message")
	}
	st := h.shownOf()
	if st.reports || st.published != lobby.Version {
		t.Fatalf("before any report: %+v, want not reporting and the lobby's version %d published", st, lobby.Version)
	}
	h.svc.Shown(h.place, lobby.Version)
	h.svc.Shown(h.place, lobby.Version-1) // a late report of an older edit goes back to nothing
	if st = h.shownOf(); !st.reports || st.shown != lobby.Version {
		t.Fatalf("after reports of %d then %d: %+v", lobby.Version, lobby.Version-1, st)
	}
	other := h.place
	other.Chat = "elsewhere"
	h.svc.Shown(other, 99) // another place's report is that place's
	if st = h.shownOf(); st.shown != lobby.Version {
		t.Fatalf("another place's report changed this one: %+v", st)
	}
}

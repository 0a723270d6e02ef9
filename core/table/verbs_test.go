package table

import (
	"maps"
	"slices"
	"testing"

	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// TestVerbsAreTheRegistry: Verbs, the help order, lists every verb of the registry a player may
// type, once, and nothing else; every verb but the internal ones has a help line.
// The registry is the engine's verbs with those the bot registers outside it (WireOutside).
func TestVerbsAreTheRegistry(t *testing.T) {
	svc := newHarness(t, mem.New()).svc
	defer svc.Close()
	registry := maps.Clone(verbs)
	maps.Copy(registry, svc.outside)
	if len(svc.outside) == 0 {
		t.Fatal("no verb registered outside the engine")
	}
	for _, v := range api.Verbs {
		spec, ok := registry[v]
		switch {
		case !ok:
			t.Errorf("%s is in Verbs, not in the registry", v)
		case spec.scope == scopeInternal:
			t.Errorf("%s is internal, yet in Verbs", v)
		case spec.run == nil:
			t.Errorf("%s has nothing to run", v)
		}
		if n := len(slices.DeleteFunc(slices.Clone(api.Verbs), func(w api.Verb) bool { return w != v })); n != 1 {
			t.Errorf("%s is %d times in Verbs", v, n)
		}
	}
	for v, spec := range registry {
		if spec.scope != scopeInternal && !slices.Contains(api.Verbs, v) {
			t.Errorf("%s is in the registry, not in Verbs", v)
		}
		if spec.scope != scopeTable && (spec.seated || spec.acted != actedNone || spec.allowed != 0 || spec.personal != nil) {
			t.Errorf("%s has table needs without scope table", v)
		}
	}
}

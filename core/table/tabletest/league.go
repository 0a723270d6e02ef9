package tabletest

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/kontermatt/kontermatt/core/league/keeper"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// Together is a SharedStore that, once armed, holds the first commit that ends a match (one
// with records) until a second one comes, and then lets both go on at once: two copies' match
// ends are written at the same instant, each worked out (its league learned) before the other
// is stored. Other commits, and match ends while it is not armed, go through at once.
type Together struct {
	SharedStore
	*pairs
}

// pairs is what the Togethers around the copies' stores share.
type pairs struct {
	// Wait is how long a match end waits for its pair before it goes on alone (a test whose
	// second match never ends); 10 s when 0.
	Wait time.Duration

	mu     sync.Mutex
	armed  bool
	first  chan struct{} // the held match end waits on it; nil: none held
	paired int
}

// NewTogether holds match ends committed to st, once armed.
func NewTogether(st SharedStore) *Together { return &Together{SharedStore: st, pairs: &pairs{}} }

// With is a Together around st (another copy's connection to the store) that pairs match ends
// with g's.
func (g *Together) With(st SharedStore) *Together { return &Together{SharedStore: st, pairs: g.pairs} }

// Arm makes the next two match ends go together.
func (g *pairs) Arm() {
	g.mu.Lock()
	g.armed = true
	g.mu.Unlock()
}

// Paired gives how many pairs of match ends went together.
func (g *pairs) Paired() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.paired
}

// Commit commits, a match end with its pair when armed.
func (g *Together) Commit(ctx context.Context, c table.Change) error {
	if len(c.Records) == 0 {
		return g.SharedStore.Commit(ctx, c)
	}
	g.mu.Lock()
	switch {
	case !g.armed:
		g.mu.Unlock()
	case g.first == nil:
		held := make(chan struct{})
		g.first = held
		g.mu.Unlock()
		select {
		case <-held:
		case <-time.After(cmp.Or(g.Wait, 10*time.Second)):
			g.mu.Lock()
			if g.first == held {
				g.first = nil
			}
			g.mu.Unlock()
		}
	default:
		close(g.first)
		g.first, g.armed = nil, false
		g.paired++
		g.mu.Unlock()
	}
	return g.SharedStore.Commit(ctx, c)
}

// OpenWith opens a table of four people at place, with the options ("stripes=1"; timer=none is
// added), and deals.
func OpenWith(svc *table.Service, place api.Place, players []api.Player, opts ...string) (Table, error) {
	t := Table{Place: place, Players: players}
	cmds := []api.Command{{Verb: api.VerbNew, Actor: players[0], Args: append([]string{"timer=none"}, opts...)}}
	for _, p := range players[1:] {
		cmds = append(cmds, api.Command{Verb: api.VerbJoin, Actor: p})
	}
	cmds = append(cmds, api.Command{Verb: api.VerbDeal, Actor: players[0]})
	for _, c := range cmds {
		c.Place = place
		// Background: these helpers take no test, and each command runs to its end (benchmarks share them).
		if r, _ := svc.Handle(context.Background(), c); len(r) > 0 && r[0].Kind == api.KindError {
			return t, fmt.Errorf("%s: %s", c.Verb, r[0].Text)
		}
	}
	t.ID = svc.TableAt(place)
	return t, nil
}

// OnePersonTwoTables opens, for EndTogether, a table at each of two places, table i through copy
// i: one person sits at both (their rating is one across places), three others at each, and
// both places are new in the month (its list of places is one entry).
func OnePersonTwoTables(svcs []*table.Service) ([]Table, error) {
	both := api.Player{ID: "both", Name: "Both"}
	var tables []Table
	for i := range 2 {
		players := []api.Player{both}
		for s := range 3 {
			players = append(players, api.Player{ID: fmt.Sprintf("only%d-%d", i, s), Name: fmt.Sprintf("P%d%d", i, s)})
		}
		t, err := OpenWith(svcs[i%len(svcs)], api.Place{Platform: "test", Chat: fmt.Sprint("race", i)}, players, "stripes=1")
		if err != nil {
			return nil, err
		}
		tables = append(tables, t)
	}
	return tables, nil
}

// EndTogether plays rounds matches at each table, table i through copy i alone, the two
// matches' last commands stored at the same instant (gate): each round both tables play their
// match to its end at once, and then a rematch.
func EndTogether(svcs []*table.Service, gate interface{ Arm() }, tables []Table, rounds int) error {
	for r := range rounds {
		gate.Arm()
		errs := make([]error, len(tables))
		var wg sync.WaitGroup
		for i, t := range tables {
			wg.Go(func() {
				svc := svcs[i%len(svcs)]
				for {
					if _, err := Step(svc, t); err != nil {
						errs[i] = fmt.Errorf("round %d, table %d: %w", r, i, err)
						return
					}
					if who, _, _ := svc.Turn(t.ID); who == "" {
						return // the match is over
					}
				}
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return err
		}
		for i, t := range tables {
			if _, err := Step(svcs[i%len(svcs)], t); err != nil { // the rematch
				return fmt.Errorf("round %d, table %d: rematch: %w", r, i, err)
			}
		}
	}
	return nil
}

// LeagueAsRebuilt reports, as an error, every league entry the store holds that is not what
// `stats rebuild` makes from its records (keeper.Rebuild), byte for byte; it gives how many
// records there are.
func LeagueAsRebuilt(st SharedStore) (int, error) {
	ctx := context.Background()
	entries, matches, skipped, err := keeper.Rebuild(ctx, st.Records)
	if err != nil {
		return 0, err
	}
	if skipped > 0 {
		return matches, fmt.Errorf("%d records do not read", skipped)
	}
	var errs []error
	for _, e := range entries {
		got, ok, err := st.Get(ctx, e.Bucket, e.Key)
		switch {
		case err != nil:
			errs = append(errs, err)
		case !ok:
			errs = append(errs, fmt.Errorf("%s/%s: missing, rebuilt %s", e.Bucket, e.Key, e.Value))
		case !bytes.Equal(got, e.Value):
			errs = append(errs, fmt.Errorf("%s/%s:\n stored  %s\n rebuilt %s", e.Bucket, e.Key, got, e.Value))
		}
	}
	return matches, errors.Join(errs...)
}

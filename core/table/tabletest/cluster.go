package tabletest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
)

// SharedStore is a store several copies of the bot can share: every store of the repository.
type SharedStore interface {
	table.Store
	table.Swapper
	table.Watcher
}

// Ledger is a SharedStore that notes every log entry it committed, from any copy: what the
// tests of several copies check against (Check).
type Ledger struct {
	SharedStore
	mu      sync.Mutex
	entries map[string][]table.LogEntry // by table, in commit order
	// unknown are the entries of commits that failed with ErrUnavailable: the cluster may
	// still have applied them (see there).
	unknown map[string][]table.LogEntry
}

// NewLedger notes what is committed to st.
func NewLedger(st SharedStore) *Ledger {
	return &Ledger{SharedStore: st, entries: map[string][]table.LogEntry{}, unknown: map[string][]table.LogEntry{}}
}

// Commit commits and notes the entry of a change that was written.
func (l *Ledger) Commit(ctx context.Context, c table.Change) error {
	err := l.SharedStore.Commit(ctx, c)
	if c.State == nil || c.Log.Verb == "" {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case err == nil:
		l.entries[c.TableID] = append(l.entries[c.TableID], c.Log)
	case errors.Is(err, table.ErrUnavailable):
		l.unknown[c.TableID] = append(l.unknown[c.TableID], c.Log)
	}
	return err
}

// AppliedEntries gives, of the entries the ledgers noted for a table, those applied in the order of
// their Seq: every committed one, and where there is none for a Seq, one whose commit's outcome
// was unknown (ErrUnavailable: the cluster applied it later, as the next Seq shows). A Seq no
// entry fills is missing from the result, so the order shows the gap.
func AppliedEntries(id string, ledgers ...*Ledger) []table.LogEntry {
	var all, unknown []table.LogEntry
	for _, l := range ledgers {
		l.mu.Lock()
		all = append(all, l.entries[id]...)
		unknown = append(unknown, l.unknown[id]...)
		l.mu.Unlock()
	}
	for _, u := range unknown {
		if !slices.ContainsFunc(all, func(e table.LogEntry) bool { return e.Seq == u.Seq }) &&
			slices.ContainsFunc(all, func(e table.LogEntry) bool { return e.Seq > u.Seq }) {
			all = append(all, u)
		}
	}
	slices.SortStableFunc(all, func(a, b table.LogEntry) int { return int(a.Seq) - int(b.Seq) })
	return all
}

// Entries gives the entries committed for a table, in commit order.
func (l *Ledger) Entries(id string) []table.LogEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.entries[id])
}

// Check fails the test if a table's committed entries are not one per sequence number, each the
// next, or if a platform event was applied twice: each change applied once, none lost between.
func (l *Ledger) Check(tb testing.TB) {
	tb.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for id, es := range l.entries {
		events := map[string]uint64{}
		for i, e := range es {
			if i > 0 && e.Seq != es[i-1].Seq+1 {
				tb.Errorf("table %s: change %d committed after %d", id, e.Seq, es[i-1].Seq)
			}
			if e.EventID == "" {
				continue
			}
			if at, twice := events[e.EventID]; twice {
				tb.Errorf("table %s: event %s applied at %d and again at %d", id, e.EventID, at, e.Seq)
			}
			events[e.EventID] = e.Seq
		}
	}
}

// Applied reports whether the event was committed at the table.
func (l *Ledger) Applied(id, eventID string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.ContainsFunc(l.entries[id], func(e table.LogEntry) bool { return e.EventID == eventID })
}

// Alternate plays n commands at a table through the copies in turn: each command is the one the
// copy that applied the last one says is next, sent to the following copy, which may not have
// heard of that last one yet. Every command must be applied; its event ID is "<prefix><i>".
func Alternate(svcs []*table.Service, t Table, n int, prefix string) error {
	from := svcs[0]
	for i := range n {
		to := svcs[(i+1)%len(svcs)]
		cmd := Next(from, t)
		cmd.EventID = fmt.Sprintf("%s%d", prefix, i)
		// Background: these helpers take no test, and each command runs to its end (benchmarks share them).
		if r, _ := to.Handle(context.Background(), cmd); len(r) > 0 && r[0].Kind == api.KindError {
			return fmt.Errorf("command %d (%s %v) at copy %d: %s", i, cmd.Verb, cmd.Args, (i+1)%len(svcs), r[0].Text)
		}
		from = to
	}
	return nil
}

// Outbox keeps what a service delivers, for tests.
type Outbox struct {
	mu   sync.Mutex
	msgs []api.Message
}

// Deliver keeps the messages.
func (o *Outbox) Deliver(_ context.Context, msgs []api.Message) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.msgs = append(o.msgs, msgs...)
}

// Latest gives the newest message of a kind delivered.
func (o *Outbox) Latest(kind api.Kind) (api.Message, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for i := len(o.msgs) - 1; i >= 0; i-- {
		if o.msgs[i].Kind == kind {
			return o.msgs[i], true
		}
	}
	return api.Message{}, false
}

// SlowRobots makes random players (RandomRobots) that take d for each decision, as real ones
// think: a match of them lasts long enough to stop a copy in its middle.
func SlowRobots(d time.Duration) func(level string, seed uint64) table.Decider {
	return func(level string, seed uint64) table.Decider {
		return slowPlayer{RandomRobots(level, seed), d}
	}
}

type slowPlayer struct {
	table.Decider
	d time.Duration
}

func (p slowPlayer) Decide(ctx context.Context, v core.View) core.Move {
	select {
	case <-time.After(p.d):
	case <-ctx.Done():
	}
	return p.Decider.Decide(ctx, v)
}

// OpenRobots opens a table of four computer players at place (with the options, e.g.
// "stripes=3"): a person opens it with three computer players, deals and leaves, and a computer
// finishes the seat. It gives the table's ID.
func OpenRobots(tb testing.TB, svc *table.Service, place api.Place, opts ...string) string {
	tb.Helper()
	p := api.Player{ID: "host:" + place.Chat, Name: "Host"}
	cmds := []api.Command{{Verb: api.VerbNew, Args: append([]string{"timer=none"}, opts...)},
		{Verb: api.VerbBot}, {Verb: api.VerbBot}, {Verb: api.VerbBot}, {Verb: api.VerbDeal}, {Verb: api.VerbLeave}}
	for i, c := range cmds {
		c.Place, c.Actor, c.EventID = place, p, fmt.Sprintf("open-%s-%d", place.Chat, i)
		if r, _ := svc.Handle(tb.Context(), c); len(r) > 0 && r[0].Kind == api.KindError {
			tb.Fatalf("%s: %s", c.Verb, r[0].Text)
		}
	}
	return svc.TableAt(place)
}

// DoublePresses makes, at each table in parallel and rounds times, the player to move press
// their move's button twice at once, each press at another copy (of the first two): both presses
// carry the table's sequence number, as two clicks on one button do. It gives how many double
// presses had exactly one press applied; one with both applied, or none, is an error.
func DoublePresses(ctx context.Context, svcs []*table.Service, tables []Table, rounds int) (once int, err error) {
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for ti, t := range tables {
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := svcs[ti%2]
			for r := range rounds {
				cmd := Next(last, t)
				v, _ := last.Seen(ctx, t.ID, api.Player{ID: "nobody"})
				cmd.Table, cmd.Seq = t.ID, v.Seq
				applied, why := make([]bool, 2), make([]string, 2)
				var pair sync.WaitGroup
				for c := range 2 {
					pair.Go(func() {
						press := cmd
						press.EventID = fmt.Sprintf("press-%d-%d-%d", ti, r, c)
						rs, err := svcs[c].Handle(ctx, press)
						applied[c] = len(rs) == 0 || rs[0].Kind != api.KindError
						if !applied[c] && len(rs) > 0 {
							why[c] = fmt.Sprintf("%s (%v)", rs[0].Reason, err)
						}
					})
				}
				pair.Wait()
				mu.Lock()
				switch {
				case applied[0] && applied[1]:
					errs = append(errs, fmt.Errorf("table %d round %d: both presses applied", ti, r))
				case !applied[0] && !applied[1]:
					errs = append(errs, fmt.Errorf("table %d round %d: neither press applied (%s %v), refused: %s; %s", ti, r, cmd.Verb, cmd.Args, why[0], why[1]))
				default:
					once++
				}
				mu.Unlock()
				if applied[1] {
					last = svcs[1]
				} else if applied[0] {
					last = svcs[0]
				} else {
					return
				}
			}
		}()
	}
	wg.Wait()
	return once, errors.Join(errs...)
}

package table_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// stuckStore is a MemStore whose commits of one table wait until released: a disk that hangs on
// that table's fsync while the others' go through.
// stuckStore is a memory store whose commits of one table wait until released (tabletest.Hang).
type stuckStore struct {
	*mem.Store
	*tabletest.Hang
}

func newStuckStore() *stuckStore {
	return &stuckStore{Store: mem.New(), Hang: tabletest.NewHang()}
}

func (s *stuckStore) Commit(ctx context.Context, c table.Change) error {
	s.Wait(c)
	return s.Store.Commit(ctx, c)
}

// hangNextMove makes the next move at the table t and returns once its commit hangs; the channel
// closes when the move is done (after store.Release).
func hangNextMove(svc *table.Service, store *stuckStore, t tabletest.Table) <-chan struct{} {
	store.At(t.ID)
	moved := make(chan struct{})
	go func() {
		defer close(moved)
		svc.Handle(context.Background(), tabletest.Next(svc, t))
	}()
	<-store.Stuck
	return moved
}

// stuckFor is how long a test lets a commit hang before it gives up waiting for the others: far
// more than an answer from memory takes, even with -race on a loaded machine.
const stuckFor = 2 * time.Second

// answersWhileStuck runs cmd while the store's stuck commit waits, and fails the test if the
// answer waits for that commit. It releases the commit in the end and gives how long cmd took.
func answersWhileStuck(t *testing.T, svc *table.Service, store *stuckStore, what string, cmd api.Command) time.Duration {
	t.Helper()
	took := make(chan time.Duration, 1)
	go func() {
		start := time.Now()
		if r, _ := svc.Handle(context.Background(), cmd); len(r) > 0 && r[0].Kind == api.KindError {
			t.Errorf("%s: %s", what, r[0].Text)
		}
		took <- time.Since(start)
	}()
	select {
	case d := <-took:
		t.Logf("%s answered in %v while another table's commit was stuck", what, d)
		return d
	case <-time.After(stuckFor):
		t.Errorf("%s did not answer in %v while another table's commit was stuck", what, stuckFor)
		close(store.Release)
		d := <-took
		t.Logf("%s answered %v after it was asked, once the stuck commit was let through", what, d)
		return d
	}
}

// TestNoLockWaitsForAnotherTablesCommit: a commit that hangs (a disk stuck on one table's fsync)
// holds up that table alone. While the match that ends at one table is being stored, /stats at
// another place and a command at another table answer; while a new table's /new waits for the
// finished table it replaces to be stored closed, commands at the other tables answer too.
func TestNoLockWaitsForAnotherTablesCommit(t *testing.T) {
	stats := api.Command{Place: api.Place{Platform: "bench", Chat: "stats"}, Actor: api.Player{ID: "s1", Name: "Sam"},
		Verb: api.VerbStats}
	t.Run("a match that ends", func(t *testing.T) {
		store := newStuckStore()
		svc := tabletest.New(table.Config{Store: store, KV: store.Store, Seed: 1})
		defer svc.Close()
		ending, err := tabletest.Open(svc, 1)
		if err != nil {
			t.Fatal(err)
		}
		other, err := tabletest.Open(svc, 2)
		if err != nil {
			t.Fatal(err)
		}
		move := tabletest.Next(svc, other)
		// An admin stops the match: it is kept, and the league learns it with the same commit.
		store.At(ending.ID)
		stopped := make(chan struct{})
		go func() {
			defer close(stopped)
			svc.Handle(context.Background(), api.Command{Place: ending.Place, Actor: ending.Players[0], Verb: api.VerbStop, Admin: true})
		}()
		<-store.Stuck
		answersWhileStuck(t, svc, store, "/stats at another place", stats)
		answersWhileStuck(t, svc, store, "a move at another table", move)
		select {
		case <-store.Release:
		default:
			close(store.Release)
		}
		<-stopped
		if st, _ := svc.Status(ending.ID); st != api.StatusClosed && st != "" {
			t.Errorf("the stopped table is %q", st)
		}
	})
	t.Run("a new table replaces a finished one", func(t *testing.T) {
		store := newStuckStore()
		svc := tabletest.New(table.Config{Store: store, KV: store.Store, Seed: 1})
		defer svc.Close()
		finished, err := tabletest.Open(svc, 1)
		if err != nil {
			t.Fatal(err)
		}
		for st, _ := svc.Status(finished.ID); st != api.StatusOver; st, _ = svc.Status(finished.ID) {
			if _, err := tabletest.Step(svc, finished); err != nil {
				t.Fatal(err)
			}
		}
		other, err := tabletest.Open(svc, 2)
		if err != nil {
			t.Fatal(err)
		}
		move := tabletest.Next(svc, other)
		store.At(finished.ID)
		opened := make(chan []api.Message, 1)
		go func() {
			r, _ := svc.Handle(context.Background(), api.Command{Place: finished.Place, Actor: finished.Players[0], Verb: api.VerbNew})
			opened <- r
		}()
		<-store.Stuck
		answersWhileStuck(t, svc, store, "a move at another table", move)
		answersWhileStuck(t, svc, store, "/stats at another place", stats)
		select {
		case <-store.Release:
		default:
			close(store.Release)
		}
		if r := <-opened; len(r) == 0 || r[0].Kind == api.KindError {
			t.Errorf("new at the finished table's place: %+v", r)
		}
		if id := svc.TableAt(finished.Place); id == finished.ID || id == "" {
			t.Errorf("the place's table is %q after new", id)
		}
	})
}

// TestLookupsDoNotWaitForATablesCommit: while one table's commit hangs, what is asked about the
// tables without changing one answers at once: a private command (its table is found among all
// tables by the actor's seat), where the hung table is (PlaceOf, as an adapter delivering its
// messages asks), its status, and how many tables are in each status. Each reads the tables as
// last stored, never waiting for a table's lock.
func TestLookupsDoNotWaitForATablesCommit(t *testing.T) {
	store := newStuckStore()
	svc := tabletest.New(table.Config{Store: store, KV: store.Store, Seed: 1})
	defer svc.Close()
	hung, err := tabletest.Open(svc, 1)
	if err != nil {
		t.Fatal(err)
	}
	other, err := tabletest.Open(svc, 2)
	if err != nil {
		t.Fatal(err)
	}
	moved := hangNextMove(svc, store, hung)
	asks := []struct {
		what string
		ask  func() bool
	}{
		{"PlaceOf the hung table", func() bool { p, ok := svc.PlaceOf(hung.ID); return ok && p == hung.Place }},
		{"Status of the hung table", func() bool { st, ok := svc.Status(hung.ID); return ok && st == api.StatusPlaying }},
		{"Count", func() bool { return svc.Count()[api.StatusPlaying] == 2 }},
	}
	for _, a := range asks {
		got := make(chan bool, 1)
		go func() { got <- a.ask() }()
		select {
		case ok := <-got:
			if !ok {
				t.Errorf("%s answered wrong while the table's commit hung", a.what)
			}
		case <-time.After(stuckFor):
			t.Errorf("%s did not answer in %v while the table's commit hung", a.what, stuckFor)
		}
	}
	// Her hand, asked for in her private chat: which table she sits at is looked up.
	me := other.Players[1]
	answersWhileStuck(t, svc, store, "a private /hand", api.Command{Place: api.Place{Platform: "bench", Chat: "dm-" + me.ID},
		Actor: me, Verb: api.VerbHand, Private: true})
	select {
	case <-store.Release:
	default:
		close(store.Release)
	}
	<-moved
}

// TestACommandStopsWaitingWhenItsContextEnds: a command for a table whose commit hangs waits its
// turn, but no longer than its ctx: ended, it is answered at once that nothing was changed, with
// ErrNotStored wrapping ctx's error (the platform may send it again), and the table is as it was.
func TestACommandStopsWaitingWhenItsContextEnds(t *testing.T) {
	store := newStuckStore()
	svc := tabletest.New(table.Config{Store: store, KV: store.Store, Seed: 1})
	defer svc.Close()
	hung, err := tabletest.Open(svc, 1)
	if err != nil {
		t.Fatal(err)
	}
	moved := hangNextMove(svc, store, hung)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	type answer struct {
		replies []api.Message
		err     error
	}
	got := make(chan answer, 1)
	start := time.Now()
	go func() {
		r, err := svc.Handle(ctx, api.Command{Place: hung.Place, Actor: hung.Players[2], Verb: api.VerbLeave})
		got <- answer{r, err}
	}()
	select {
	case a := <-got:
		took := time.Since(start)
		t.Logf("answered in %v once its ctx ended", took)
		if !errors.Is(a.err, table.ErrNotStored) || !errors.Is(a.err, context.DeadlineExceeded) {
			t.Errorf("error %v, want ErrNotStored wrapping the deadline", a.err)
		}
		if len(a.replies) != 1 || a.replies[0].Kind != api.KindError {
			t.Errorf("replies %+v, want one refusal", a.replies)
		}
	case <-time.After(stuckFor):
		t.Errorf("a command whose ctx ended waited %v for the hung commit", stuckFor)
	}
	close(store.Release)
	<-moved
	if sn, ok := svc.Seen(context.Background(), hung.ID, hung.Players[2]); !ok || sn.Reader != 2 {
		t.Errorf("the player whose leave was not waited for does not sit at seat 2 (reader %d)", sn.Reader)
	}
}

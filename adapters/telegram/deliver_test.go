package telegram

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/api"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
	"github.com/kontermatt/kontermatt/storage/mem"
)

// stallingKV is the adapter's KV on a disk that stalls: while stalled, every write waits until
// it is released.
type stallingKV struct {
	table.KV
	mu      sync.Mutex
	stalled chan struct{} // nil: writes go through
	writes  int           // the writes that waited
}

func (s *stallingKV) stall() {
	s.mu.Lock()
	s.stalled = make(chan struct{})
	s.mu.Unlock()
}

func (s *stallingKV) release() {
	s.mu.Lock()
	if s.stalled != nil {
		close(s.stalled)
		s.stalled = nil
	}
	s.mu.Unlock()
}

func (s *stallingKV) wait() {
	s.mu.Lock()
	ch := s.stalled
	if ch != nil {
		s.writes++
	}
	s.mu.Unlock()
	if ch != nil {
		<-ch
	}
}

func (s *stallingKV) Put(ctx context.Context, bucket, key string, value []byte) error {
	s.wait()
	return s.KV.Put(ctx, bucket, key, value)
}

func (s *stallingKV) Delete(ctx context.Context, bucket, key string) error {
	s.wait()
	return s.KV.Delete(ctx, bucket, key)
}

// unreachableAPI is a Bot API nobody reaches: every request fails on the way.
type unreachableAPI struct{}

func (unreachableAPI) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("connection refused")
}

// The service delivers holding the table's lock, so Deliver only queues (table.Outbox): what the
// adapter writes to its KV (a player's newest hand, the hands held back for Ursula, who cannot
// get private messages, the deep link shown for her) is written from the outbox's workers. With
// every KV write stalled, the deal returns at once; once the disk answers, all is written.
func TestDeliverOnlyQueues(t *testing.T) {
	ctx := t.Context()
	synctest.Test(t, func(t *testing.T) {
		store := mem.New()
		kv := &stallingKV{KV: store}
		a, err := New(Config{Token: testToken, APIURL: "http://api.fake", Client: &http.Client{Transport: unreachableAPI{}}, KV: kv})
		if err != nil {
			t.Fatal(err)
		}
		svc := tabletest.New(table.Config{Store: mem.New(), Outboxes: map[string]table.Outbox{Platform: a}, Robots: randomRobots, Seed: 7})
		a.Attach(svc)
		defer a.Close()
		defer svc.Close()
		a.reach.Set(ctx, userKey(ursula.ID), true) // she never pressed Start
		place := placeOf(group, 0)
		player := func(u tgUser) api.Player {
			return playerOf(&tgbotapi.User{ID: u.ID, FirstName: u.First, LanguageCode: u.Lang})
		}
		for _, c := range []api.Command{
			{Verb: api.VerbNew, Actor: player(alice), Args: []string{"timer=none"}},
			{Verb: api.VerbJoin, Actor: player(ursula)},
		} {
			c.Place = place
			if r, _ := svc.Handle(context.Background(), c); len(r) > 0 && r[0].Kind == api.KindError {
				t.Fatalf("%s: %s", c.Verb, r[0].Text)
			}
		}
		synctest.Wait()
		id := svc.TableAt(place)

		kv.stall()
		defer kv.release() // should the test fail, the bubble still ends
		done := make(chan []api.Message, 1)
		go func() {
			r, _ := svc.Handle(context.Background(), api.Command{Place: place, Actor: player(alice), Verb: api.VerbDeal})
			done <- r
		}()
		synctest.Wait()
		select {
		case r := <-done:
			if len(r) > 0 && r[0].Kind == api.KindError {
				t.Fatalf("deal refused: %s", r[0].Text)
			}
		default:
			t.Fatal("the deal waits for the adapter's KV writes: Deliver did more than queue")
		}
		if kv.writes == 0 {
			t.Fatal("no KV write was stalled: the test shows nothing")
		}
		kv.release()
		time.Sleep(time.Minute) // the private chats' rate limits, the retries of the failing sends
		synctest.Wait()
		if _, held, _ := store.Get(ctx, bucketPending, userTable(ursula.ID, id)); !held {
			t.Error("Ursula's hand is not held back")
		}
		if _, told, _ := store.Get(ctx, bucketTold, userTable(ursula.ID, id)); !told {
			t.Error("the deep link shown for Ursula is not noted")
		}
		if key, ok, _ := store.Get(ctx, bucketHand, userTable(alice.ID, id)); !ok || !strings.HasPrefix(string(key), id+"/") {
			t.Errorf("Alice's newest hand is not noted: %q", key)
		}
	})
}

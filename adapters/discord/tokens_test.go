package discord

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/kontermatt/kontermatt/storage/mem"
)

// What is kept per interaction token goes with the token: the ephemeral hands the adapter edits,
// and discordgo's rate-limit buckets, one per token's routes, which discordgo keeps for ever.
// (Tokens last 15 minutes; here 2 s.)
// Over the gateway only: by HTTP the first answers make no REST request, so the tokens' routes
// get buckets only from later edits, which this test's interactions do not need.
func TestTokenStateIsForgotten(t *testing.T) {
	f := newFakeDiscord(t)
	f.blocked[bob.ID] = true // Bob plays from ephemeral hands
	store := mem.New()
	const life = 2 * time.Second
	h := startHarness(t, f, store, store, harnessOpt{adapter: func(a *Adapter) { a.tokens = newTokenSessions(a.session, life) }})
	openTable(t, f, alice, []fakeUser{bob}, opt("timer", 3, "none"))
	live, hand := liveMessage(f)
	if r := f.press(bob, live, hand.CustomID); r.Type != 4 {
		t.Fatalf("My hand: %+v", r)
	}
	f.slash(alice, guildChannel, "help")

	var tokens []string
	f.mu.Lock()
	for _, in := range f.inter {
		tokens = append(tokens, in.Token)
	}
	f.mu.Unlock()
	held := func() (buckets []string, hands int) {
		a := h.a
		for _, s := range append(a.tokens.sessions(), a.rest) {
			for _, k := range bucketKeys(s) {
				for _, tok := range tokens {
					if strings.Contains(k, tok) {
						buckets = append(buckets, k)
					}
				}
			}
		}
		a.usersMu.Lock()
		defer a.usersMu.Unlock()
		return buckets, len(a.hands)
	}
	// The hand is remembered once its answer is sent.
	for deadline := time.Now().Add(life / 2); ; time.Sleep(5 * time.Millisecond) {
		b, n := held()
		if len(b) > 0 && n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("before: %d token buckets, %d hands: the test proves nothing", len(b), n)
		}
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		h.a.sweep() // what Run does every minute
		b, n := held()
		if len(b) == 0 && n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the tokens expired: still %d buckets with their tokens (%v), %d hands", len(b), b, n)
		}
		time.Sleep(life / 4)
	}
}

// bucketKeys gives the rate-limit buckets a discordgo session keeps (an unexported map).
func bucketKeys(s *discordgo.Session) []string {
	s.Ratelimiter.Lock()
	defer s.Ratelimiter.Unlock()
	var out []string
	for _, k := range reflect.ValueOf(s.Ratelimiter).Elem().FieldByName("buckets").MapKeys() {
		out = append(out, k.String())
	}
	return out
}

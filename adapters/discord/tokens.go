package discord

import (
	"strings"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"
)

// An interaction's token works for 15 minutes (developer docs, Interactions: Receiving and
// Responding). Whatever is kept per token must go with it: discordgo keeps a rate-limit bucket
// per route for ever, and the routes of interaction answers hold the token, so a long-running bot
// would keep one bucket per interaction it ever answered. Its buckets cannot be dropped one by
// one, so the answers go through sessions of their own, one per quarter of an hour: the session
// of a generation serves the interactions that arrive in it, and is dropped with its buckets once
// the last of their tokens has expired. (Answers to interactions are not bound to the bot's
// global rate limit, which is the one thing such a session does not share with the others.)

// tokenLife is how long an interaction token lasts.
const tokenLife = 15 * time.Minute

type tokenSessions struct {
	mu    sync.Mutex
	newer func() *discordgo.Session
	life  time.Duration
	start time.Time
	gens  map[int64]*discordgo.Session
}

func newTokenSessions(newer func() *discordgo.Session, life time.Duration) *tokenSessions {
	return &tokenSessions{newer: newer, life: life, start: time.Now(), gens: map[int64]*discordgo.Session{}}
}

// generation is the index of the quarter of an hour we are in.
func (t *tokenSessions) generation() int64 { return int64(time.Since(t.start) / t.life) }

// get gives the session for the tokens of interactions that arrive now.
func (t *tokenSessions) get() *discordgo.Session {
	t.mu.Lock()
	defer t.mu.Unlock()
	g := t.generation()
	s, ok := t.gens[g]
	if !ok {
		s = t.newer()
		t.gens[g] = s
	}
	return s
}

// sweep drops the sessions whose every token has expired: a token from generation g lives at
// most until the end of generation g+1.
func (t *tokenSessions) sweep() {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.generation()
	for g := range t.gens {
		if g+2 <= now {
			delete(t.gens, g)
		}
	}
}

// sessions gives the live sessions (for tests).
func (t *tokenSessions) sessions() []*discordgo.Session {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []*discordgo.Session
	for _, s := range t.gens {
		out = append(out, s)
	}
	return out
}

// sweep forgets what the adapter keeps per interaction token and per channel once it is no
// longer of use. Run calls it every minute.
func (a *Adapter) sweep() {
	a.tokens.sweep()
	// A paused channel that no interaction shows to be back is tried again once what its
	// refusal taught is old (permsFresh).
	for _, d := range a.out.Paused(func(d string) bool { return strings.HasPrefix(d, "ch:") }) {
		a.probe(strings.TrimPrefix(d, "ch:"))
	}
	a.usersMu.Lock()
	defer a.usersMu.Unlock()
	for u, h := range a.hands {
		if time.Since(h.at) > a.tokens.life {
			delete(a.hands, u)
		}
	}
	for u, h := range a.lastHand {
		if time.Since(h.at) > a.tokens.life {
			delete(a.lastHand, u)
		}
	}
	for ch, c := range a.channels {
		if !a.fresh(c.at) && !a.fresh(c.refusal.at) && !a.fresh(c.automod) {
			delete(a.channels, ch)
		}
	}
	for ch, r := range a.actors {
		if time.Since(r.start) > a.tokens.life {
			delete(a.actors, ch)
		}
	}
}

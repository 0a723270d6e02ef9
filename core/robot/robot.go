// Package robot holds the computer players. Each sees exactly one seat's core.View, never the
// hidden cards, and answers with one legal move.
//
// Easy plays by rules a club player would state. Normal and Strong search: they deal the hidden
// cards many times in ways consistent with everything public (cards played, voids shown, queens
// announced), keep them in proportion to how likely the others' moves were with them (forehand's
// trump choice, every card played, announcements made and not made: infer.go), solve each deal
// with all hands open (package dd) and play the card worth most. Strong's solver plays Easy's
// card for an opponent the inference reads, over the deals it weighs, as a rule player rather than its best
// (it exploits a player it has seen play by rules, and searches the others as usual). What a card is worth is what the game's end is worth for the
// match: the chance to win the match from the board it leaves (the view's Open), or outside a
// match the expected stripe difference (objective.go) — so a lost trump game costs twice, a draw
// is a win for the defenders, and a team one stripe from the end plays for safety. When at most
// 2,000 deals remain they solve every one exactly and break ties by points; once the game is
// decided on points they play for the stripe of taking every trick. Announcements follow the same
// worth at the higher stake. Trump comes from a table made offline with many deals per first
// packet (trumptable.go, trumpgen). Strong spends up to 100 ms and 160 sampled deals on a card,
// Normal 20 ms and 20 deals. Those times are caps: a decision searches until a reserve before its
// cap (or the context's deadline) and plays the best found then (searchDeadline), so that it is
// back in time. Judge measures every option of a decision the same way, for the coach.
//
// Where Strong's strength against the search levels is bounded: by what it knows, not by how long
// it searches. On the same 400 deals (duel -seed 7701 -nodes-per-ms 12000, one core), Strong wins
// 0.518 ± 0.021 of games against Normal. A player that plays the first trick as Strong and every
// later card as the best one with all hands open (-a-open-from 2) wins 0.596 ± 0.019, and one whose
// every card is so chosen (-a-open) 0.635 ± 0.021. Those are ceilings as far as the open-card
// solver's play is the best there is against Normal (it plays for the points against a perfect
// defence, not against Normal's mistakes): reading the hidden cards better after the first trick
// has about 0.08 of games to win, and the first trick about 0.04 more. Against the previous
// Strong, the first wins 0.574 ± 0.019 and the second 0.616 ± 0.020. More search buys nothing
// measurable: with the six-feature play model, Strong with four times the nodes and sampled deals
// (-a-scale 4) won +0.002 ± 0.021 more against Normal, deal by deal on those deals.
//
// A player's randomness comes from its seed and the view alone, so it gives the same answer to the
// same view whatever it saw before (with a deal or node cap that binds before the time, on any
// number of threads: the deals are counted and summed in their order).
package robot

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"runtime"
	"strings"
	"time"

	"github.com/kontermatt/kontermatt/core"
)

// Level names a computer player's strength.
type Level string

// The levels, weakest first.
const (
	Easy   Level = "easy"
	Normal Level = "normal"
	Strong Level = "strong"
)

// Levels lists the levels, weakest first.
var Levels = []Level{Easy, Normal, Strong}

// ParseLevel reads a level name in any case.
func ParseLevel(s string) (Level, error) {
	switch l := Level(strings.ToLower(strings.TrimSpace(s))); l {
	case Easy, Normal, Strong:
		return l, nil
	}
	return "", fmt.Errorf("robot: unknown level %q (easy, normal or strong)", s)
}

// Player decides one move for the seat whose View it is given. It sees only that View, never the
// hidden cards. A Player is used by one goroutine at a time (it may use more internally).
type Player interface {
	Decide(ctx context.Context, v core.View) core.Move
}

// Options tune a search player; the zero value means the level's defaults.
type Options struct {
	// Threads is how many goroutines one decision may use; 0 means GOMAXPROCS (at most 4).
	Threads int
	// Budget is the time one decision may take, before the context's deadline; 0 means the
	// level's per card decision (the trump choice comes from the table and takes none).
	Budget time.Duration
	// Worlds caps the deals sampled per decision; 0 means the level's cap.
	Worlds int
	// Nodes caps the solver nodes one decision searches, checked after each deal (so it always
	// solves at least one); 0 means no cap. A decision bounded by Nodes or Worlds rather than by
	// its time is the same on any machine, however busy, and with any number of Threads.
	Nodes uint64
	// PreviousSampler makes the search play as it did before issue 34: its deals drawn as before
	// the policy-based inference (infer.go), and the last cards solved deal by deal (no
	// endgame.go). It is for duels that measure the one against the other, not a level.
	PreviousSampler bool
}

// New makes a player of the level with its own seeded randomness (math/rand/v2 PCG).
func New(level Level, seed uint64) Player { return NewWith(level, seed, Options{}) }

// NewWith is New with options for the search levels (Easy ignores them).
func NewWith(level Level, seed uint64, o Options) Player {
	switch level {
	case Normal, Strong:
		return newSearcher(level, seed, o)
	}
	return &easyPlayer{seed: seed}
}

// DecisionBudget is the time a search level spends on a card decision by default (0 for Easy).
func DecisionBudget(l Level) time.Duration {
	if l != Normal && l != Strong {
		return 0
	}
	b, _ := levelDefaults(l)
	return b
}

// DefaultWorlds is a search level's cap on the deals sampled per decision (0 for Easy).
func DefaultWorlds(l Level) int {
	if l != Normal && l != Strong {
		return 0
	}
	_, w := levelDefaults(l)
	return w
}

// levelDefaults are each search level's budget per card decision and cap on sampled deals.
func levelDefaults(l Level) (budget time.Duration, worlds int) {
	if l == Strong {
		return 100 * time.Millisecond, 160
	}
	return 20 * time.Millisecond, 20
}

func (o Options) threads() int {
	if o.Threads > 0 {
		return o.Threads
	}
	return min(runtime.GOMAXPROCS(0), 4)
}

// viewHash digests everything in the view a decision may depend on, so each decision draws its
// own random numbers from (seed, view) and not from what the player decided before.
func viewHash(v core.View) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d|%d|%d|%d|%d|%d|", v.Seat, v.Phase, v.Dealer, v.Trump, v.Hand, v.Legal)
	for _, t := range v.Tricks {
		fmt.Fprintf(h, "%d%v;", t.Leader, t.Cards)
	}
	fmt.Fprintf(h, "%d%v/%d|", v.Trick.Leader, v.Trick.Cards, v.Trick.N)
	for _, a := range v.Announcements {
		fmt.Fprintf(h, "%d:%d;", a.Seat, a.Call)
	}
	fmt.Fprintf(h, "%v", v.Calls)
	return h.Sum64()
}

func rngFor(seed uint64, v core.View, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed^stream*0x9E3779B97F4A7C15, viewHash(v)))
}

// capReserve is the most of a decision's time kept back from its search, so that the decision
// returns by its cap (start+budget, or the context's deadline) and not just after it: the search
// stops at the first poll past its deadline (dd polls every 1,024 nodes), and on a busy machine
// the deciding thread may then still be waiting for a CPU. Before the reserve, decisions the clock
// stopped returned 0.07 to 0.35 ms after their cap (TestDecisionsKeepTheCap), and up to 160 ms
// after it when the thread, at nice 19 on a loaded machine, had waited that long for a CPU
// (/proc/thread-self/schedstat): that no reserve covers. With it, `GOMAXPROCS=1 nice -n 19
// kontermatt duel -a strong -b normal -deals 60 -seed 7104` on a loaded machine (load 5): Strong's
// card decisions p50 0.43 ms, p95 90.02 ms, max 101.29 ms by the clock, its thread running at
// most 89.95 ms (the one decision past 100 ms waited for a CPU); announcements max 95.38 ms;
// Normal's cards max 19.87 ms.
const capReserve = 10 * time.Millisecond

// searchDeadline is when a decision that started at start searches until: its cap (the earlier of
// start+budget and the context's deadline) less a reserve of a fifth of the time to the cap, at
// most capReserve (Strong's 100 ms: 10 ms; Normal's 20 ms: 4 ms, which also holds under the race
// detector, where a tenth did not).
func searchDeadline(ctx context.Context, start time.Time, budget time.Duration) time.Time {
	limit := start.Add(budget)
	if cd, ok := ctx.Deadline(); ok && cd.Before(limit) {
		limit = cd
	}
	return limit.Add(-min(capReserve, limit.Sub(start)/5))
}

// biggestCall is the call in calls that needs the most queens.
func biggestCall(calls []core.Call) core.Call {
	var best core.Call
	for _, c := range calls {
		if c.Queens().Len() > best.Queens().Len() {
			best = c
		}
	}
	return best
}

package robot

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/robot/dd"
)

// Choice is one option of a decision as the search judges it.
type Choice struct {
	Move core.Move // a suit to name or a card to play
	// Same are the other legal cards that give the same result as this one in every deal
	// (neighbours in rank with the same points).
	Same   []core.Card
	Win    float64 // the chance the seat's team wins the game, 0..1
	Draw   float64 // the chance of a 20-20 draw
	Points float64 // the card points the team ends the game with, on average; -1 when not solved
	// Worth is what the option is worth to the team: its chance to win the match when the view
	// knows the board (Judgement.Match), else the expected stripe difference of the game.
	Worth float64
}

// Has reports whether the choice is card c or one that gives the same result.
func (c Choice) Has(card core.Card) bool {
	return c.Move.Kind == core.MovePlay && (c.Move.Card == card || slices.Contains(c.Same, card))
}

// Judgement is how the strong search judges one decision, from the deciding seat's view alone.
type Judgement struct {
	Choices []Choice // best first
	// Call is the biggest call the seat could make now (0: none); CallStripes what making it
	// would be worth in expected stripes with the best card, CallWorth in Worth's units.
	Call        core.Call
	CallStripes float64
	CallWorth   float64
	Worlds      int    // deals solved (0 for the trump choice, which comes from the trump table)
	Nodes       uint64 // solver nodes searched
	Match       bool   // Worth is a match chance
	// Cut says the time cap or the context ended the search before its budget did: its numbers
	// come from fewer deals than the budget gives, and would differ on a faster machine.
	Cut bool
}

// Best is the best choice.
func (j Judgement) Best() Choice { return j.Choices[0] }

// Find gives the choice that move is, and false when the judgement has none (a move it did
// not judge).
func (j Judgement) Find(m core.Move) (Choice, int, bool) {
	for i, c := range j.Choices {
		switch {
		case m.Kind == core.MoveTrump && c.Move.Kind == core.MoveTrump && c.Move.Suit == m.Suit,
			m.Kind == core.MovePlay && c.Has(m.Card):
			return c, i, true
		}
	}
	return Choice{}, -1, false
}

// ShouldCall reports whether the search would make the call.
func (j Judgement) ShouldCall() bool {
	if j.Call == 0 {
		return false
	}
	threshold := 0.1
	if j.Match {
		threshold = 0.005
	}
	return j.CallWorth > threshold
}

// DefaultJudgeWorlds caps the deals Judge solves.
const DefaultJudgeWorlds = 400

// DefaultJudgeNodes is Judge's default budget in solver nodes: about 300 ms of one core (a node
// costs some 90 ns, the deals' drawing included); a first card solves a dozen deals with it, a
// card in the fourth trick hundreds.
const DefaultJudgeNodes = 3_000_000

// Effort bounds a judgement. Its budget is work, not time — solver nodes and deals — so that the
// same view and seed give the same judgement on any machine, however busy; the clock only caps
// it for safety.
type Effort struct {
	// Nodes is the solver nodes to search (0: DefaultJudgeNodes), checked after each deal: the
	// deal that reaches it is the last, so at least one is always solved.
	Nodes uint64
	// Worlds caps the deals (0: DefaultJudgeWorlds); late in a game, when at most 2,000 deals
	// fit the view, every one of them is solved instead, as the nodes allow.
	Worlds int
	// Cap is the longest the judgement may take (0: no cap but the context's). A judgement it
	// ends early says so (Judgement.Cut).
	Cap time.Duration
}

// Judge judges the decision the view is at (naming trump, or playing a card with its
// announcement) the way Strong decides, but measuring every option: the trump choice from the
// trump table, a card by solving each sampled (or, late in the game, every) deal exactly, for
// the card points and the game's chances, within the effort; with three cards in hand, as Strong
// does, without strategy fusion (endgame.go: the seat's next card is one card for all the deals it
// cannot tell apart then), so that its verdicts on the last tricks hold for the seat's knowledge
// and not for open hands. ok is false when it solved no deal
// before the cap or the context's deadline. The same view, seed and effort give the same
// judgement unless the cap or the context cut it.
func Judge(ctx context.Context, v core.View, seed uint64, e Effort) (Judgement, bool) {
	start := time.Now()
	j := Judgement{Match: v.Open != [2]int{}}
	if v.Phase == core.PhaseTrump {
		for _, x := range core.Suits {
			o, ok := Odds(v.Hand, x)
			w, _ := trumpWorth(v, x)
			if !ok {
				return j, false
			}
			j.Choices = append(j.Choices, Choice{Move: core.NameTrump(v.Seat, x), Win: float64(o.Win) / 1000,
				Draw: float64(o.Draw) / 1000, Points: -1, Worth: w})
		}
		slices.SortStableFunc(j.Choices, func(a, b Choice) int { return cmpDesc(a.Worth, b.Worth) })
		return j, true
	}
	if v.Phase != core.PhasePlay || v.Legal.Empty() {
		return j, false
	}
	o := Options{Threads: 1, Worlds: cmp.Or(e.Worlds, DefaultJudgeWorlds), Nodes: cmp.Or(e.Nodes, DefaultJudgeNodes),
		Budget: cmp.Or(e.Cap, 24*time.Hour)}
	s := newSearcher(Strong, seed, o)
	cands, live := candidates(v), liveCards(v)
	ws := s.source(v)
	stats, wsum, n, cut := s.search(ctx, searchDeadline(ctx, start, o.Budget), v, ws, cands, true, false)
	j.Nodes, j.Cut = s.solvers[0].Nodes(), cut
	if n == 0 || wsum == 0 {
		return j, false
	}
	j.Worlds = n
	u := utilities(v, v.Stake, false)
	for i, c := range cands {
		st := stats[i]
		ch := Choice{Move: core.Play(v.Seat, c), Win: st.class[classWin] / wsum, Draw: st.class[classDraw] / wsum,
			Points: st.points / wsum}
		ch.Worth = (st.class[0]*u[0] + st.class[1]*u[1] + st.class[2]*u[2]) / wsum
		// A removed card belongs to c when the nearest live card above it belongs to c.
		members := core.SetOf(c)
		for grew := true; grew; {
			grew = false
			for _, o := range (v.Legal &^ core.SetOf(cands...) &^ members).Cards() {
				if !dd.Distinct(v.Trump, members.Add(o), live).Has(o) {
					members, grew = members.Add(o), true
					ch.Same = append(ch.Same, o)
				}
			}
		}
		j.Choices = append(j.Choices, ch)
	}
	slices.SortStableFunc(j.Choices, func(a, b Choice) int {
		if a.Worth != b.Worth {
			return cmpDesc(a.Worth, b.Worth)
		}
		return cmpDesc(a.Points, b.Points)
	})
	if len(v.Calls) > 0 {
		b := j.Best()
		j.Call = biggestCall(v.Calls)
		loss := 1 - b.Win - b.Draw
		j.CallWorth = announceGain(v, j.Call, b.Win, b.Draw, loss)
		flat := v
		flat.Open = [2]int{}
		j.CallStripes = announceGain(flat, j.Call, b.Win, b.Draw, loss)
	}
	return j, true
}

func cmpDesc(a, b float64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}

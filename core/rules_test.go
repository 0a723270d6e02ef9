package core_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kontermatt/kontermatt/core"
)

// parseMove reads a move as Move.String writes it: "2:play 10D", "0:announce matt", "0:trump H".
func parseMove(t *testing.T, s string) core.Move {
	t.Helper()
	seat, rest, ok := strings.Cut(s, ":")
	verb, arg, ok2 := strings.Cut(rest, " ")
	if !ok || !ok2 || len(seat) != 1 || seat[0] < '0' || seat[0] > '3' {
		t.Fatalf("bad move %q", s)
	}
	st := core.Seat(seat[0] - '0')
	switch verb {
	case "play":
		c, err := core.ParseCard(arg)
		if err != nil {
			t.Fatalf("move %q: %v", s, err)
		}
		return core.Play(st, c)
	case "announce":
		c, err := core.ParseCall(arg)
		if err != nil {
			t.Fatalf("move %q: %v", s, err)
		}
		return core.Announce(st, c)
	case "trump":
		x, err := core.ParseSuit(arg)
		if err != nil {
			t.Fatalf("move %q: %v", s, err)
		}
		return core.NameTrump(st, x)
	}
	t.Fatalf("bad move %q", s)
	return core.Move{}
}

func mustPosition(t *testing.T, s string) *core.Game {
	t.Helper()
	g, err := core.ParsePosition(s)
	if err != nil {
		t.Fatalf("position %q: %v", s, err)
	}
	return g
}

// ruleCase is one rules test: from pos, move gives want, which is either the position after the
// move or the sentinel error the move must be refused with.
type ruleCase struct {
	name string
	pos  string
	move string
	want any // string (position after) or error (sentinel)
}

func runRuleCases(t *testing.T, cases []ruleCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := mustPosition(t, tc.pos)
			before := *g
			m := parseMove(t, tc.move)
			checkErr := g.Check(m)
			err := g.Apply(m)
			if (checkErr == nil) != (err == nil) || core.Code(checkErr) != core.Code(err) {
				t.Errorf("Check says %v, Apply says %v", checkErr, err)
			}
			switch want := tc.want.(type) {
			case string:
				if err != nil {
					t.Fatalf("%s: %v", tc.move, err)
				}
				if got := g.Position(); got != want {
					t.Errorf("after %s\n got %s\nwant %s", tc.move, got, want)
				}
			case error:
				if !errors.Is(err, want) {
					t.Fatalf("%s: got error %v, want %v", tc.move, err, want)
				}
				if core.Code(err) != core.Code(want) || core.Code(err) == "" {
					t.Errorf("code %q, want %q", core.Code(err), core.Code(want))
				}
				var me *core.MoveError
				if !errors.As(err, &me) || me.Seat != m.Seat {
					t.Errorf("error %#v is not a *MoveError for seat %v", err, m.Seat)
				}
				if *g != before {
					t.Errorf("a refused move changed the game: %s", g.Position())
				}
			default:
				t.Fatalf("bad want %T", tc.want)
			}
		})
	}
}

func TestPermanentQueens(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"QH alone is no heart: free discard", "S 9S/QH.KD.9C/10S/JS 0:AH #0", "1:play 9C", "S 9S/QH.KD/10S/JS 0:AH.9C #0"},
		{"QH alone is no heart: may trump with it", "S 9S/QH.KD.9C/10S/JS 0:AH #0", "1:play QH", "S 9S/KD.9C/10S/JS 0:AH.QH #0"},
		{"a real heart must follow", "S 9S/QH.JH.9C/10S/JS 0:AH #0", "1:play 9C", core.ErrMustFollowSuit},
		{"QD alone is no diamond", "C 9S/QD.AH/10S/JS 0:KD #0", "1:play AH", "C 9S/QD/10S/JS 0:KD.AH #0"},
		{"QS alone is no spade", "H 9C/QS.AD/10C/JC 0:AS #0", "1:play AD", "H 9C/QS/10C/JC 0:AS.AD #0"},
		{"QH led is a trump lead", "C 9S/AH.9C/10S/JS 0:QH #0", "1:play AH", core.ErrMustPlayTrump},
		{"QH led: follow with a trump", "C 9S/AH.9C/10S/JS 0:QH #0", "1:play 9C", "C 9S/AH/10S/JS 0:QH.9C #0"},
		{"QH led: no trump, anything goes", "C 9S/AH.KD/10S/JS 0:QH #0", "1:play KD", "C 9S/AH/10S/JS 0:QH.KD #0"},
		{"QS led is a trump lead: QD must go", "H 9S/AS.QD/10S/JS 0:QS #0", "1:play AS", core.ErrMustPlayTrump},
		{"QS led: QD follows", "H 9S/AS.QD/10S/JS 0:QS #0", "1:play QD", "H 9S/AS/10S/JS 0:QS.QD #0"},
		{"QD led with spades trump: QH follows", "S 9S/AD.QH/10S/JS 0:QD #0", "1:play AD", core.ErrMustPlayTrump},
	})
}

func TestQueenOfClubs(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"QC led is a trump lead when clubs are trump", "C 9S/KH.QD/10S/JS 0:QC #0", "1:play KH", core.ErrMustPlayTrump},
		{"QC follows a club trump lead", "C 9S/KH.QC/10S/JS 0:9C #0", "1:play KH", core.ErrMustPlayTrump},
		{"QC led is a plain club otherwise", "S 9S/AC.QS.9D/10S/JS 0:QC #0", "1:play 9D", core.ErrMustFollowSuit},
		{"QC led, plain: trumping is free", "S 9H/AC.QS.9D/10S/JS 0:QC #0", "1:play QS", "S 9H/9D.AC/10S/JS 0:QC.QS #0"},
		{"QC must follow clubs when clubs are not trump", "H 9S/QC.9D/10S/JS 0:AC #0", "1:play 9D", core.ErrMustFollowSuit},
		{"QC follows clubs when clubs are not trump", "H 9S/QC.9D/10S/JS 0:AC #0", "1:play QC", "H 9S/9D/10S/JS 0:AC.QC #0"},
		{"clubs trump: KC beats QC", "C 9S/9D/10S/KC.10C 0:JC.QC.9C #0", "3:play KC", "C 9S/9D/10S/10C 3:- #1 won=0,1 points=0,6 dealer=3"},
		{"clubs trump: QC beats JC", "C 9S/9D/10S/KC.10C 0:JC.QC.9C #0", "3:play 10C", "C 9S/9D/10S/KC 1:- #1 won=0,1 points=0,3 dealer=3"},
		{"clubs trump: QD beats KC and QC", "C 9S/9D/10S/QD.10C 0:JC.QC.KC #0", "3:play QD", "C 9S/9D/10S/10C 3:- #1 won=0,1 points=0,8 dealer=3"},
		{"hearts trump: QC is a plain club under KC", "H 9S/9D/10S/JC.10D 0:9C.QC.KC #0", "3:play JC", "H 9S/9D/10S/10D 2:- #1 won=1,0 points=6,0 dealer=3"},
		{"hearts trump: QC beats JC", "H 9S/9D/10S/KD.10D 0:9C.QC.JC #0", "3:play 10D", "H 9S/9D/10S/KD 1:- #1 won=0,1 points=0,3 dealer=3"},
	})
}

func TestFollowing(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"trump lead: must play a trump", "S 9H/KS.AD/10H/JC 0:JS #0", "1:play AD", core.ErrMustPlayTrump},
		{"trump lead: the Matt counts as trump", "D 9H/QS.AC/10H/JC 0:9D #0", "1:play AC", core.ErrMustPlayTrump},
		{"trump lead: any trump, not a higher one", "S 9H/AS.9S.AD/10H/JC 0:JS #0", "1:play 9S", "S 9H/AS.AD/10H/JC 0:JS.9S #0"},
		{"trump lead, no trump: anything", "S 9H/AD.KC/10H/JC 0:JS #0", "1:play KC", "S 9H/AD/10H/JC 0:JS.KC #0"},
		{"plain lead: may trump while holding the suit", "S 9H/KD.9S/10H/JC 0:AD #0", "1:play 9S", "S 9H/KD/10H/JC 0:AD.9S #0"},
		{"plain lead: may follow", "S 9H/KD.9S/10H/JC 0:AD #0", "1:play KD", "S 9H/9S/10H/JC 0:AD.KD #0"},
		{"plain lead: holding the suit, no discard", "S 9H/KD.KC/10H/JC 0:AD #0", "1:play KC", core.ErrMustFollowSuit},
		{"plain lead, void: free discard, no duty to trump", "S 9H/9S.KC/10H/JC 0:AD #0", "1:play KC", "S 9H/9S/10H/JC 0:AD.KC #0"},
		{"no duty to beat the trick", "S 9H/9D/AS.9S.JC/JD 0:KS.QH #0", "2:play 9S", "S 9H/9D/AS.JC/JD 0:KS.QH.9S #0"},
		{"leader may lead anything", "S AS.AD.9C/9D/10H/JC 0:- #0", "0:play 9C", "S AS.AD/9D/10H/JC 0:9C #0"},
		{"not your turn", "S 9H/KD.9S/10H/JC 0:AD #0", "2:play 10H", core.ErrNotYourTurn},
		{"card not in hand", "S 9H/KD.9S/10H/JC 0:AD #0", "1:play AS", core.ErrCardNotInHand},
		{"card played already", "S 9H/KD.9S/10H/JC 0:AD #0", "1:play AD", core.ErrCardNotInHand},
		{"trump already named", "S 9H/KD.9S/10H/JC 0:AD #0", "0:trump H", core.ErrTrumpAlreadyNamed},
		{"game over", "S -/-/-/- 1:- #6 won=3,3 points=20,20", "1:play AS", core.ErrGameOver},
		{"game over: no announcing", "S -/-/-/- 1:- #6 won=3,3 points=20,20", "1:announce matt", core.ErrGameOver},
	})
}

func TestTrickWinners(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"trump ace beats the Matt", "H 9S/9D/10S/QD.10D 0:QS.AH.QH #0", "3:play QD", "H 9S/9D/10S/10D 1:- #1 won=0,1 points=0,10 dealer=3"},
		{"Matt beats the Konter", "H 9S/9D/10S/QD.10D 0:QH.QS.KH #0", "3:play QD", "H 9S/9D/10S/10D 1:- #1 won=0,1 points=0,9 dealer=3"},
		{"QH beats QD", "D 9S/9C/10S/9D.10H 0:QD.JD.QH #0", "3:play 9D", "D 9S/9C/10S/10H 2:- #1 won=1,0 points=5,0 dealer=3"},
		{"Konter beat the trump king", "H 9S/9D/10S/9H.10D 0:KH.QD.QH #0", "3:play 9H", "H 9S/9D/10S/10D 2:- #1 won=1,0 points=7,0 dealer=3"},
		{"the lowest trump beats the led ace", "S 9H/9D/10H/10D.JC 0:AD.9S.KD #0", "3:play 10D", "S 9H/9D/10H/JC 1:- #1 won=0,1 points=0,7 dealer=3"},
		{"a discard never wins", "S 9H/KH/10H/10D.JC 0:9D.AC.AH #0", "3:play 10D", "S 9H/KH/10H/JC 3:- #1 won=0,1 points=0,8 dealer=3"},
		{"highest of the led suit wins", "S 9H/KH/10H/JD.JC 0:KD.AD.9D #0", "3:play JD", "S 9H/KH/10H/JC 1:- #1 won=0,1 points=0,8 dealer=3"},
		{"leader keeps it", "S 9H/KH/10H/JD.JC 0:AD.9D.KC #0", "3:play JD", "S 9H/KH/10H/JC 0:- #1 won=1,0 points=8,0"},
		{"trick in a later trick adds up", "S 9H/JD.JC/10H/KH 2:AD.9D.KC #2 won=1,1 points=5,9 dealer=0", "1:play JD",
			"S 9H/JC/10H/KH 2:- #3 won=2,1 points=13,9 dealer=0"},
	})
}

func TestTrumpPhase(t *testing.T) {
	const deal = "- AH.KH.AS.9C.10D.9H/KS.10S.AD.KC.10C.JH/QS.KD.AC.9D.9S.10H/QH.QD.JS.QC.JC.JD 0:- #0"
	runRuleCases(t, []ruleCase{
		{"forehand names trump", deal, "0:trump H", "H AS.AH.KH.9H.10D.9C/KS.10S.JH.AD.KC.10C/QS.9S.10H.KD.9D.AC/JS.QH.QD.JD.QC.JC 0:- #0"},
		{"forehand names trump with a symbol", deal, "0:trump ♣", "C AS.AH.KH.9H.10D.9C/KS.10S.JH.AD.KC.10C/QS.9S.10H.KD.9D.AC/JS.QH.QD.JD.QC.JC 0:- #0"},
		{"only forehand names trump", deal, "1:trump H", core.ErrNotYourTurn},
		{"no card before trump", deal, "0:play AH", core.ErrTrumpNotNamed},
		{"no announcement before trump", deal, "3:announce konter", core.ErrTrumpNotNamed},
	})
	g := mustPosition(t, deal)
	if got := g.View(0).Hand; got != core.SetOf(core.MustCards("AH KH AS")...) {
		t.Errorf("forehand sees %v before naming trump, want the first packet", got)
	}
}

func TestAnnouncements(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"Matt at own turn before the first card", "H QS.9C/9D/10S/JS 0:- #0", "0:announce matt", "H QS.9C/9D/10S/JS 0:- #0 calls=0:matt"},
		{"an opponent of the trump team announces", "H 9C/QS.9D/10S/JS 0:AC #0", "1:announce matt", "H 9C/QS.9D/10S/JS 0:AC #0 calls=1:matt"},
		{"the last seat of the first trick announces", "H 9C/KD/KS/QS.JS 0:AC.9D.10S #0", "3:announce matt", "H 9C/KD/KS/QS.JS 0:AC.9D.10S #0 calls=3:matt"},
		{"Konter with both red queens", "S QH.QD/9D/10S/JS 0:- #0", "0:announce konter", "S QH.QD/9D/10S/JS 0:- #0 calls=0:konter"},
		{"Konter needs both red queens", "H QH.9C/9D/10S/JS 0:- #0", "0:announce konter", core.ErrAnnounceMissingCards},
		{"Matt needs the queen of spades", "H QH.QD/9D/10S/JS 0:- #0", "0:announce matt", core.ErrAnnounceMissingCards},
		{"Konter a Matt with all three", "H QS.QH.QD/9D/10S/JS 0:- #0", "0:announce konter-a-matt", "H QS.QH.QD/9D/10S/JS 0:- #0 calls=0:konter-a-matt"},
		{"Konter a Matt needs all three", "H QH.QD/9D/10S/JS 0:- #0", "0:announce konter-a-matt", core.ErrAnnounceMissingCards},
		{"Konter then Matt", "H QS.QH.QD/9D/10S/JS 0:- #0 calls=0:konter", "0:announce matt", "H QS.QH.QD/9D/10S/JS 0:- #0 calls=0:konter,0:matt"},
		{"Matt after Konter a Matt is a duplicate", "H QS.QH.QD/9D/10S/JS 0:- #0 calls=0:konter-a-matt", "0:announce matt", core.ErrAnnounceDuplicate},
		{"Konter twice", "H QS.QH.QD/9D/10S/JS 0:- #0 calls=0:konter", "0:announce konter", core.ErrAnnounceDuplicate},
		{"Konter a Matt after Matt", "H QS.QH.QD/9D/10S/JS 0:- #0 calls=0:matt", "0:announce konter-a-matt", core.ErrAnnounceDuplicate},
		{"too late after the own first card", "H QS.9C/9D/10S/JS 0:AC #0", "0:announce matt", core.ErrAnnounceWindowClosed},
		{"not before the own turn", "H 9C/9D/QS.10S/JS 0:AC #0", "2:announce matt", core.ErrNotYourTurn},
		{"too late in the second trick", "H QS.9C/9D/10S/JS 0:- #1 won=1,0", "0:announce matt", core.ErrAnnounceWindowClosed},
		{"announcements off", "H QS.9C/9D/10S/JS 0:- #0 ann=off", "0:announce matt", core.ErrAnnouncementsOff},
		{"announcements off is a closed window", "H QS.9C/9D/10S/JS 0:- #0 ann=off", "0:announce matt", core.ErrAnnounceWindowClosed},
		{"a play after announcing", "H QS.9C/9D/10S/JS 0:- #0 calls=0:matt", "0:play QS", "H 9C/9D/10S/JS 0:QS #0 calls=0:matt"},
	})
}

func TestPossibleCalls(t *testing.T) {
	for _, tc := range []struct{ pos, want string }{
		{"H QS.QH.QD/9D/10S/JS 0:- #0", "[konter matt konter-a-matt]"},
		{"H QS.QH.QD/9D/10S/JS 0:- #0 calls=0:konter", "[matt]"},
		{"H QS.9H/9D/10S/JS 0:- #0", "[matt]"},
		{"H QS.9H/9D/10S/JS 0:- #0 ann=off", "[]"},
		{"H QS.9H/9D/10S/JS 0:- #1 won=1,0", "[]"},
		{"H 9H/9D/10S/JS 0:- #0", "[]"},
	} {
		g := mustPosition(t, tc.pos)
		if got := fmt.Sprint(g.PossibleCalls(0)); got != tc.want {
			t.Errorf("%s: calls %s, want %s", tc.pos, got, tc.want)
		}
		if got := fmt.Sprint(g.View(0).Calls); got != tc.want {
			t.Errorf("%s: view calls %s, want %s", tc.pos, got, tc.want)
		}
	}
}

// TestScoring plays the last card of a game and checks the result. The final trick is the same in
// every case: trump hearts, seat 0 leads AS, seat 1 KS, seat 2 QD (a trump, so it wins), seat 3
// adds 9C: 9 points to team A. Without dealer= the dealer is seat 3, so team A named trump.
func TestScoring(t *testing.T) {
	const last = "H -/-/-/9C 0:AS.KS.QD #5 "
	cases := []struct {
		name    string
		pos     string
		outcome core.Outcome
		stake   int
		stripes [2]int
	}{
		{"trump team wins 21-19", last + "won=3,2 points=12,19", core.WonByA, 1, [2]int{-1, 0}},
		{"trump team loses: stripes added", last + "won=3,2 points=12,19 dealer=0", core.WonByA, 1, [2]int{-1, 1}},
		{"opponents win 21-19 with Matt", last + "won=3,2 points=10,21 calls=1:matt", core.WonByB, 2, [2]int{2, -2}},
		{"draw: trump team gets the stake", last + "won=3,2 points=11,20 calls=2:konter", core.Draw, 2, [2]int{2, 0}},
		{"draw: flat1", last + "won=3,2 points=11,20 calls=2:konter draw=flat1", core.Draw, 2, [2]int{1, 0}},
		{"draw: trump team B", last + "won=3,2 points=11,20 calls=2:konter dealer=0", core.Draw, 2, [2]int{0, 2}},
		{"draw without calls", last + "won=3,2 points=11,20", core.Draw, 1, [2]int{1, 0}},
		{"no-trick bonus", last + "won=5,0 points=31,0", core.WonByA, 1, [2]int{-2, 0}},
		{"no-trick bonus off", last + "won=5,0 points=31,0 bonus=off", core.WonByA, 1, [2]int{-1, 0}},
		{"trump team without a trick", last + "won=5,0 points=31,0 dealer=0", core.WonByA, 1, [2]int{-2, 2}},
		{"bonus counts tricks, not points", last + "won=4,1 points=31,0", core.WonByA, 1, [2]int{-1, 0}},
		{"Konter a Matt and no trick", last + "won=5,0 points=31,0 calls=2:konter-a-matt", core.WonByA, 3, [2]int{-4, 0}},
		{"Konter a Matt, no trick, trump team loses", last + "won=5,0 points=31,0 calls=2:konter-a-matt dealer=0", core.WonByA, 3, [2]int{-4, 4}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := mustPosition(t, tc.pos)
			if r := g.Result(); r.Outcome != core.InProgress || r.Stripes != [2]int{} {
				t.Fatalf("result before the last card: %+v", r)
			}
			if err := g.Play(3, core.MustCards("9C")[0]); err != nil {
				t.Fatal(err)
			}
			r := g.Result()
			if r.Outcome != tc.outcome || r.Stake != tc.stake || r.Stripes != tc.stripes {
				t.Errorf("got %v stake %d stripes %v, want %v stake %d stripes %v",
					r.Outcome, r.Stake, r.Stripes, tc.outcome, tc.stake, tc.stripes)
			}
			if g.Phase() != core.PhaseOver || g.ToMove() != core.NoSeat {
				t.Errorf("phase %v, to move %v after the last card", g.Phase(), g.ToMove())
			}
			if p := r.Points; p[0]+p[1] != 40 {
				t.Errorf("points %v do not add up to 40", p)
			}
			if w := r.TricksWon; w[0]+w[1] != 6 {
				t.Errorf("tricks %v do not add up to 6", w)
			}
		})
	}
	g := mustPosition(t, last+"won=3,2 points=12,19")
	if err := g.Play(3, core.MustCards("9C")[0]); err != nil {
		t.Fatal(err)
	}
	if got, want := g.Position(), "H -/-/-/- 2:- #6 won=4,2 points=21,19 dealer=3"; got != want {
		t.Errorf("final position %s, want %s", got, want)
	}
}

func TestBoard(t *testing.T) {
	cases := []struct {
		name    string
		board   core.Board
		change  [2]int
		applied [2]int
		open    [2]int
		winner  string
	}{
		{"cross out", core.Board{Start: 9}, [2]int{-2, 0}, [2]int{-2, 0}, [2]int{7, 9}, ""},
		{"stripes added to the losing trump team", core.Board{Start: 9}, [2]int{-1, 1}, [2]int{-1, 1}, [2]int{8, 10}, ""},
		{"draw penalty only", core.Board{Start: 9, Crossed: [2]int{3, 1}}, [2]int{0, 2}, [2]int{0, 2}, [2]int{6, 10}, ""},
		{"clamps at zero", core.Board{Start: 9, Crossed: [2]int{8, 0}}, [2]int{-3, 0}, [2]int{-1, 0}, [2]int{0, 9}, "A"},
		{"exactly zero", core.Board{Start: 9, Crossed: [2]int{0, 5}}, [2]int{0, -4}, [2]int{0, -4}, [2]int{9, 0}, "B"},
		{"added stripes must be crossed out too", core.Board{Start: 2, Added: [2]int{0, 3}}, [2]int{2, -4}, [2]int{2, -4}, [2]int{4, 1}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.board
			if got := b.Apply(tc.change); got != tc.applied {
				t.Errorf("applied %v, want %v", got, tc.applied)
			}
			if got := b.OpenBoth(); got != tc.open {
				t.Errorf("open %v, want %v", got, tc.open)
			}
			w, over := b.Winner()
			if got := map[bool]string{true: w.String(), false: ""}[over]; got != tc.winner {
				t.Errorf("winner %q, want %q", got, tc.winner)
			}
		})
	}
}

func TestErrorSentinels(t *testing.T) {
	if !errors.Is(core.ErrAnnouncementsOff, core.ErrAnnounceWindowClosed) {
		t.Error("ErrAnnouncementsOff is not an ErrAnnounceWindowClosed")
	}
	if errors.Is(core.ErrAnnounceWindowClosed, core.ErrAnnouncementsOff) {
		t.Error("ErrAnnounceWindowClosed is an ErrAnnouncementsOff")
	}
	if !errors.Is(fmt.Errorf("x: %w", core.ErrBadRules), core.ErrBadRecord) {
		t.Error("ErrBadRules is not an ErrBadRecord")
	}
	if errors.Is(core.ErrMustFollowSuit, core.ErrMustPlayTrump) {
		t.Error("distinct sentinels match")
	}
	codes := map[string]bool{}
	for _, e := range []*core.RuleError{core.ErrBadRecord, core.ErrBadDeal, core.ErrWrongDealer, core.ErrNotYourTurn,
		core.ErrTrumpNotNamed, core.ErrTrumpAlreadyNamed, core.ErrCardNotInHand, core.ErrMustFollowSuit,
		core.ErrMustPlayTrump, core.ErrAnnounceWindowClosed, core.ErrAnnounceMissingCards, core.ErrAnnounceDuplicate,
		core.ErrGameOver, core.ErrMatchOver} {
		if codes[e.Code] || !replayCodes[e.Code] {
			t.Errorf("code %q repeated or not in docs/records.md", e.Code)
		}
		codes[e.Code] = true
	}
	if len(codes) != len(replayCodes) {
		t.Errorf("%d sentinels for %d codes", len(codes), len(replayCodes))
	}
	// Refused cards say what was allowed instead.
	g := mustPosition(t, "S 9H/KD.9S.KC/10H/JC 0:AD #0")
	err := g.Play(1, core.MustCards("KC")[0])
	var me *core.MoveError
	if !errors.As(err, &me) || me.Legal != core.SetOf(core.MustCards("KD 9S")...) || me.Led != core.MustCards("AD")[0] {
		t.Errorf("error %#v lacks the legal cards", err)
	}
	if got, want := err.Error(), "KC: must follow the led suit or play a trump; legal: 9S KD"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
}

// replayCodes are the error codes docs/records.md lists.
var replayCodes = map[string]bool{
	"bad_record": true, "bad_deal": true, "wrong_dealer": true, "not_your_turn": true,
	"trump_not_named": true, "trump_already_named": true, "card_not_in_hand": true,
	"must_follow_suit": true, "must_play_trump": true, "announce_window_closed": true,
	"announce_missing_cards": true, "announce_duplicate": true, "game_over": true, "match_over": true,
}

// TestStripeRange checks Validate against the exported range, at its edges.
func TestStripeRange(t *testing.T) {
	for _, tc := range []struct {
		stripes int
		ok      bool
	}{{core.MinStripes - 1, false}, {core.MinStripes, true}, {9, true}, {core.MaxStripes, true}, {core.MaxStripes + 1, false}} {
		t.Run(fmt.Sprint(tc.stripes), func(t *testing.T) {
			r := core.DefaultRules()
			r.Stripes = tc.stripes
			if err := r.Validate(); (err == nil) != tc.ok || (err != nil && !errors.Is(err, core.ErrBadRules)) {
				t.Errorf("Validate with %d stripes: %v, want ok=%v", tc.stripes, err, tc.ok)
			}
		})
	}
}

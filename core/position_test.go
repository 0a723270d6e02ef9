package core_test

import (
	"errors"
	"testing"

	"github.com/kontermatt/kontermatt/core"
)

func TestPositionRoundTrip(t *testing.T) {
	for _, tc := range []struct{ in, out string }{
		{"H AS.KH.9C/QH.9S/10D/JC 1:KS #0", "H AS.KH.9C/9S.QH/10D/JC 1:KS #0"},
		{"h as.kh.9c/qh.9s/10d/jc 1:ks", "H AS.KH.9C/9S.QH/10D/JC 1:KS #0"},
		{"♥ A♠.K♥/-/10♦/J♣ 0: #0", "H AS.KH/-/10D/JC 0:- #0"},
		{"S 9H/JD.JC/10H/KH 2:AD.9D.KC #2 won=1,1 points=5,9 dealer=0", ""},
		{"S 9H/JD.JC/10H/KH 2:AD.9D.KC #2", "S 9H/JD.JC/10H/KH 2:AD.9D.KC #2 won=2,0"},
		{"S 9H/JD.JC/10H/KH 2:AD.9D.KC won=1,2", "S 9H/JD.JC/10H/KH 2:AD.9D.KC #3 won=1,2"},
		{"H QS.QH.QD/9D/10S/JS 0:- #0 calls=0:konter,0:matt", ""},
		{"H QS.QH.QD/9D/10S/JS 0:- #0 calls=0:Konter_a_Matt", "H QS.QH.QD/9D/10S/JS 0:- #0 calls=0:konter-a-matt"},
		{"C 9S/9D/10S/10C 3:- #1 won=0,1 points=0,6 dealer=3 ann=off draw=flat1 bonus=off dir=anticlockwise stripes=12", ""},
		{"C 9S/9D/10S/10C 3:- stripes=9 bonus=on draw=stake dir=clockwise ann=on #1 won=0,1", "C 9S/9D/10S/10C 3:- #1 won=0,1"},
		{"S -/-/-/- 1:- #6 won=3,3 points=20,20", ""},
		{"- AH.KH.AS.9C.10D.9H/KS.10S.AD.KC.10C.JH/QS.KD.AC.9D.9S.10H/QH.QD.JS.QC.JC.JD 0:- #0", ""},
		{"- AH.KH.AS.9C.10D.9H/KS.10S.AD.KC.10C.JH/QS.KD.AC.9D.9S.10H/QH.QD.JS.QC.JC.JD 2:- dealer=1 draw=flat1",
			"- AH.KH.AS.9C.10D.9H/KS.10S.AD.KC.10C.JH/QS.KD.AC.9D.9S.10H/QH.QD.JS.QC.JC.JD 2:- #0 draw=flat1"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			want := tc.out
			if want == "" {
				want = tc.in
			}
			g := mustPosition(t, tc.in)
			if got := g.Position(); got != want {
				t.Fatalf("got  %s\nwant %s", got, want)
			}
			if g2 := mustPosition(t, want); *g2 != *g {
				t.Errorf("reparsing %s gives another game", want)
			}
		})
	}
}

func TestPositionFields(t *testing.T) {
	g := mustPosition(t, "H AS.KH.9C/QH.9S/10D/JC 1:KS #0")
	if g.Trump() != core.Hearts || g.ToMove() != 2 || g.Dealer() != 0 || g.TrumpTeam() != core.TeamB ||
		g.TricksDone() != 0 || g.Phase() != core.PhasePlay {
		t.Errorf("trump %v to move %v dealer %v trump team %v done %d phase %v",
			g.Trump(), g.ToMove(), g.Dealer(), g.TrumpTeam(), g.TricksDone(), g.Phase())
	}
	if got := g.Hand(1); got != core.SetOf(core.MustCards("QH 9S")...) {
		t.Errorf("seat 1 holds %v", got)
	}
	if tr := g.CurrentTrick(); tr.Leader != 1 || tr.N != 1 || tr.Led() != core.MustCards("KS")[0] {
		t.Errorf("trick %+v", tr)
	}
	if !g.AnnounceWindow(2) || g.AnnounceWindow(1) {
		t.Error("seat 2 should be in its window, seat 1 (played already) not")
	}
	g = mustPosition(t, "S 9H/JD.JC/10H/KH 2:AD.9D.KC #2 won=1,1 points=5,9 dealer=0 calls=1:matt")
	if g.Points() != [2]int{5, 9} || g.TricksWon() != [2]int{1, 1} || g.Stake() != 2 || len(g.Tricks()) != 2 {
		t.Errorf("points %v tricks %v stake %d", g.Points(), g.TricksWon(), g.Stake())
	}
	for _, tr := range g.Tricks() {
		if tr.N != 0 || tr.Leader != core.NoSeat || tr.Winner != core.NoSeat {
			t.Errorf("a completed trick of a position should be an empty placeholder, got %+v", tr)
		}
	}
	if len(g.Moves()) != 0 {
		t.Errorf("a position has no moves, got %v", g.Moves())
	}
	// Its record lists the cards the position shows and does not replay.
	rec := g.Record()
	if got := rec.Hands; len(got) != 4 || len(got[0]) != 1 || got[0][0] != "9H" || len(got[1]) != 2 {
		t.Errorf("record hands %v", got)
	}
	if _, err := core.ReplayGame(rec); core.Code(err) != "bad_deal" {
		t.Errorf("replaying a position's record: %v, want bad_deal", err)
	}
	// A position before trump is a whole deal: its record replays.
	g = mustPosition(t, "- AH.KH.AS.9C.10D.9H/KS.10S.AD.KC.10C.JH/QS.KD.AC.9D.9S.10H/QH.QD.JS.QC.JC.JD 0:- #0")
	if err := g.NameTrump(0, core.Hearts); err != nil {
		t.Fatal(err)
	}
	if h, err := core.ReplayGame(g.Record()); err != nil || h.Position() != g.Position() {
		t.Errorf("a deal from a position replays as %v, %v", h, err)
	}
}

func TestPositionErrors(t *testing.T) {
	for _, tc := range []struct{ name, pos string }{
		{"empty", ""},
		{"two fields", "H AS/KS/QS/JS"},
		{"bad trump", "X AS/KS/QS/JS 0:-"},
		{"three hands", "H AS/KS/QS 0:-"},
		{"five hands", "H AS/KS/QS/JS/9S 0:-"},
		{"bad card", "H AS.XX/KS/QS/JS 0:-"},
		{"card twice in hands", "H AS/AS/QS/JS 0:-"},
		{"card in hand and trick", "H AS/KS/QS/JS 0:AS"},
		{"trick without seat", "H AS/KS/QS/JS AS"},
		{"trick seat 4", "H AS/KS/QS/JS 4:-"},
		{"four cards on the trick", "H AS/KS/QS/JS 0:AD.KD.QD.JD"},
		{"too many cards", "H AS.KS.QS.JS.10S.9S.AH/KH/AD/KD 0:-"},
		{"six cards after leading", "H AS/AH.KH.QH.JH.10H.9H/KS/KD 1:9S"},
		{"six cards after a trick", "H AS.KS.QS.JS.10S.9S/KD/KH/KC 0:- #1 won=1,0"},
		{"seat to move holds nothing", "H AS/-/KS/QS 0:9S"},
		{"#7", "H AS/KS/QS/JS 0:- #7"},
		{"#x", "H AS/KS/QS/JS 0:- #x"},
		{"#+1", "H AS/KS/QS/JS 0:- #+1"},
		{"#6 with cards", "H AS/KS/QS/JS 0:- #6 won=3,3"},
		{"won more than six", "H -/-/-/- 0:- won=4,4"},
		{"won does not add up", "H AS/KS/QS/JS 0:- #2 won=1,0"},
		{"leader's team won no trick", "H AS/KS/QS/JS 0:- #2 won=0,2"},
		{"points without tricks", "H AS/KS/QS/JS 0:- #1 won=1,0 points=3,4"},
		{"points at #0", "H AS/KS/QS/JS 0:- points=3,0"},
		{"more than 40 points", "H AS/KS/QS/JS 0:- #2 won=1,1 points=20,20"},
		{"negative points", "H AS/KS/QS/JS 0:- #2 won=1,1 points=-1,20"},
		{"bad pair", "H AS/KS/QS/JS 0:- #2 won=2"},
		{"first trick led by the dealer", "H AS/KS/QS/JS 0:- dealer=0"},
		{"dealer 5", "H AS/KS/QS/JS 0:- #1 won=1,0 dealer=5"},
		{"unknown key", "H AS/KS/QS/JS 0:- colour=red"},
		{"no key", "H AS/KS/QS/JS 0:- extra"},
		{"key twice", "H AS/KS/QS/JS 0:- ann=off ann=off"},
		{"# twice", "H AS/KS/QS/JS 0:- #0 #0"},
		{"bad on/off", "H AS/KS/QS/JS 0:- ann=maybe"},
		{"bad draw", "H AS/KS/QS/JS 0:- draw=none"},
		{"bad dir", "H AS/KS/QS/JS 0:- dir=up"},
		{"stripes 0", "H AS/KS/QS/JS 0:- stripes=0"},
		{"stripes 21", "H AS/KS/QS/JS 0:- stripes=21"},
		{"unknown call", "H QS/KS/QH/JS 0:- calls=0:schneider"},
		{"call without seat", "H QS/KS/QH/JS 0:- calls=matt"},
		{"call by seat 9", "H QS/KS/QH/JS 0:- calls=9:matt"},
		{"call twice", "H QS/KS/QH/JS 0:- calls=0:matt,0:matt"},
		{"overlapping calls", "H QS.QH.QD/KS/9H/JS 0:- calls=0:konter-a-matt,0:konter"},
		{"call without its queen", "H AS/QS/QH/JS 0:- calls=0:matt"},
		{"Konter with a queen played by another", "H QH.AS/KS/QH/JS 0:QD.9S calls=0:konter"},
		{"call before its turn", "H QS/KS/QH/JS 0:- calls=2:matt"},
		{"calls out of order", "H 9S/QS/QH.QD/JS 0:AS.KS calls=2:konter,1:matt"},
		{"calls with announcements off", "H QS/KS/QH/JS 0:- calls=0:matt ann=off"},
		{"trump phase with five cards", "- AH.KH.AS.9C.10D/KS.10S.AD.KC.10C.JH/QS.KD.AC.9D.9S.10H/QH.QD.JS.QC.JC.JD 0:-"},
		{"trump phase with a trick", "- AH.KH.AS.9C.10D/KS.10S.AD.KC.10C.JH/QS.KD.AC.9D.9S.10H/QH.QD.JS.QC.JC.JD 0:9H"},
		{"trump phase after a trick", "- AH.KH.AS.9C.10D.9H/KS.10S.AD.KC.10C.JH/QS.KD.AC.9D.9S.10H/QH.QD.JS.QC.JC.JD 0:- #1 won=1,0"},
		{"trump phase with a call", "- AH.KH.AS.9C.10D.9H/KS.10S.AD.KC.10C.JH/QS.KD.AC.9D.9S.10H/QH.QD.JS.QC.JC.JD 0:- calls=3:konter"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := core.ParsePosition(tc.pos)
			if !errors.Is(err, core.ErrInvalidPosition) {
				t.Fatalf("got %v, %v; want ErrInvalidPosition", g, err)
			}
		})
	}
	_, err := core.ParsePosition("H AS.XX/KS/QS/JS 0:-")
	if !errors.Is(err, core.ErrInvalidCard) {
		t.Errorf("a bad card should wrap ErrInvalidCard: %v", err)
	}
}

func TestViewHidesHands(t *testing.T) {
	g := mustPosition(t, "H AS.KH.9C/QH.9S/10D/JC 1:KS #0")
	for s := core.Seat(0); s < 4; s++ {
		v := g.View(s)
		if v.Hand != g.Hand(s) || v.Seat != s {
			t.Errorf("seat %v sees hand %v, holds %v", s, v.Hand, g.Hand(s))
		}
		if v.Played() != core.SetOf(core.MustCards("KS")...) || v.Unseen()&(v.Hand|v.Played()) != 0 {
			t.Errorf("seat %v: played %v, unseen %v", s, v.Played(), v.Unseen())
		}
		if (s == 2) == v.Legal.Empty() || v.ToMove != 2 {
			t.Errorf("seat %v: legal %v, to move %v; only seat 2 is to play", s, v.Legal, v.ToMove)
		}
	}
	pub := g.View(core.NoSeat)
	if pub.Hand != 0 || pub.Legal != 0 || pub.Calls != nil || pub.Seat != core.NoSeat {
		t.Errorf("the public view shows %v, legal %v, calls %v", pub.Hand, pub.Legal, pub.Calls)
	}
	if pub.HandSizes != [4]int{3, 2, 1, 1} || pub.Trick.N != 1 || pub.ToMove != 2 {
		t.Errorf("public view: sizes %v, trick %+v, to move %v", pub.HandSizes, pub.Trick, pub.ToMove)
	}
}

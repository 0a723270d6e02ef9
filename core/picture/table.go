package picture

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kontermatt/kontermatt/core"
)

// TableInput is everything the table picture shows. View must be the public view (Seat ==
// core.NoSeat, no hand): the picture goes to the whole channel.
type TableInput struct {
	View          core.View
	Names         [4]string // the players' names by seat; empty ones become "Seat 1".."Seat 4"
	Labels        Labels
	ShowLastTrick bool // show the last completed trick instead of the trick in progress
}

func (in TableInput) prepare() (TableInput, error) {
	in.Labels = in.Labels.withDefaults()
	v := in.View
	if v.Seat != core.NoSeat || !v.Hand.Empty() || !v.Legal.Empty() || len(v.Calls) > 0 {
		return in, fmt.Errorf("%w: the table picture takes the public view only", ErrBadInput)
	}
	if len(v.Tricks) > 6 || v.Trick.N < 0 || v.Trick.N > 4 {
		return in, fmt.Errorf("%w: impossible trick count", ErrBadInput)
	}
	return in, nil
}

// shownTrick is the trick the picture shows and whether it is the last completed one: the last
// trick when asked for (and there is one) or when the game is over, else the trick in progress.
func (in TableInput) shownTrick() (core.Trick, bool) {
	v := in.View
	if n := len(v.Tricks); n > 0 && (in.ShowLastTrick || v.Phase == core.PhaseOver) {
		return v.Tricks[n-1], true
	}
	return v.Trick, false
}

// trickTitle is "Last trick" or "Trick 3/6".
func (in TableInput) trickTitle(last bool) string {
	if last {
		return in.Labels.LastTrick
	}
	n := min(len(in.View.Tricks)+1, 6)
	return in.Labels.Trick + " " + strconv.Itoa(n) + "/6"
}

// The table's geometry, in pixels.
const (
	tableW    = 720
	tableH    = 668
	feltTop   = 96
	feltBot   = 596
	cardW     = 100
	cardH     = 140
	cardOffX  = 112
	cardOffY  = 92
	plateH    = 56
	plateSide = 150 // the widest a plate left or right of the trick may be
	plateEnd  = 300 // the widest a plate above or below the trick may be
	backW     = 12  // the small card backs that count a player's cards
	backStep  = 7
)

// place is where a seat sits on the picture: 0 bottom, 1 left, 2 top, 3 right.
type place uint8

const (
	bottom place = iota
	leftSide
	top
	rightSide
)

// placeOf puts seat 0 at the bottom and the others after it in playing order, clockwise (bottom,
// left, top, right, seen from above) or anticlockwise.
func placeOf(s core.Seat, d core.Direction) place {
	p := place(s & 3)
	if d == core.Anticlockwise {
		p = (4 - p) & 3
	}
	return p
}

// Table draws the table as a PNG: the four players around it, the trick in progress (or the last
// trick) with each card in front of its player, trump, the calls and whose turn it is.
func Table(in TableInput, th Theme) ([]byte, error) { return pngOf(drawTable(in, th)) }

func drawTable(in TableInput, th Theme) (*canvas, error) {
	in, err := in.prepare()
	if err != nil {
		return nil, err
	}
	fs, err := fontsFor(&in.Names)
	if err != nil {
		return nil, err
	}
	pal := th.palette()
	v, l := in.View, in.Labels
	c := newCanvas(tableW, tableH, pal.bg)

	// Trump, top left.
	small := face{fs[regular], 20}
	c.text(small, margin, 30, l.Trump, pal.muted, left)
	x := float32(margin)
	if v.Trump.Valid() {
		sym := face{fs[bold], 46}
		x += c.text(sym, x, 76, v.Trump.Symbol(), pal.suitInk(v.Trump), left) + 10
		fore := v.Forehand
		nf := face{fs[regular], 22}
		c.text(nf, x, 70, nf.ellipsize(name(in.Names, l, fore), 250), pal.team[fore.Team()], left)
	} else {
		// Trump is still to be named, by forehand.
		x += c.text(face{fs[bold], 40}, x, 74, "?", pal.muted, left) + 12
		nf := face{fs[regular], 22}
		c.text(nf, x, 70, nf.ellipsize(name(in.Names, l, v.Forehand), 250), pal.team[v.Forehand.Team()], left)
	}

	// The trick's title and the calls, top right.
	trick, last := in.shownTrick()
	tf := face{fs[bold], 22}
	c.text(tf, tableW-margin, 32, in.trickTitle(last), pal.text, right)
	cx := float32(tableW - margin)
	cf := face{fs[bold], 19}
	for i := len(v.Announcements) - 1; i >= 0; i-- {
		a := v.Announcements[i]
		s := a.Call.Title() + " · " + cf.ellipsize(name(in.Names, l, a.Seat), 120)
		w := cf.width(s) + 22
		c.roundRect(cx-w, 45, cx, 77, 16, pal.team[a.Seat.Team()])
		c.text(cf, cx-w/2, 68, s, pal.onTeam, center)
		cx -= w + 8
	}

	// The felt.
	c.roundRect(margin, feltTop, tableW-margin, feltBot, 36, pal.feltEdge)
	c.roundRect(margin+6, feltTop+6, tableW-margin-6, feltBot-6, 30, pal.felt)

	midX, midY := float32(tableW/2), float32(feltTop+feltBot)/2
	names := plateNames(in, fs[bold])
	for s := core.Seat(0); s < 4; s++ {
		p := placeOf(s, v.Rules.Direction)
		c.seatPlate(in, fs, pal, s, p, names[s], midX, midY)
		cxc, cyc := midX, midY
		switch p {
		case bottom:
			cyc += cardOffY
		case top:
			cyc -= cardOffY
		case leftSide:
			cxc -= cardOffX
		case rightSide:
			cxc += cardOffX
		}
		x0, y0 := cxc-cardW/2, cyc-cardH/2
		if card := trick.CardOf(s); card != core.NoCard {
			won := last && trick.Winner == s
			c.card(fs, pal, x0, y0, l.rank(card), card, won)
			order := int(s-trick.Leader)&3 + 1
			c.orderBadge(fs, pal, x0, y0, order, p)
		} else {
			col := pal.feltEdge
			if !last && v.ToMove == s && v.Phase == core.PhasePlay {
				col = pal.accent
			}
			c.ring(x0, y0, x0+cardW, y0+cardH, 10, 3, col)
		}
	}

	// Whose turn, and the card points so far, at the bottom.
	by := float32(feltBot + 46)
	bf := face{fs[bold], 23}
	if v.ToMove.Valid() && !last {
		x := float32(margin)
		x += c.text(small, x, by, l.Turn+strings.TrimRight(l.Colon, " "), pal.muted, left) + 8
		c.circle(x+7, by-8, 7, pal.accent)
		x += 20
		c.text(bf, x, by, bf.ellipsize(name(in.Names, l, v.ToMove), 260), pal.text, left)
	}
	if v.Phase != core.PhaseTrump {
		rx := float32(tableW - margin)
		rx -= c.text(bf, rx, by, strconv.Itoa(v.Points[1]), pal.team[1], right)
		rx -= c.text(bf, rx, by, " – ", pal.muted, right)
		rx -= c.text(bf, rx, by, strconv.Itoa(v.Points[0]), pal.team[0], right) + 10
		c.text(small, rx, by, l.Points, pal.muted, right)
	}
	return c, nil
}

// seatPlate draws a player's name plate at the edge of the felt: a team-coloured dot and the name,
// and below it the cards still in hand as small backs; the player to move gets the accent colour.
func (c *canvas) seatPlate(in TableInput, fs [2]*ttFont, pal palette, s core.Seat, p place, shown plateName, midX, midY float32) {
	v := in.View
	nf, nm := shown.face, shown.text
	cards := min(max(v.HandSizes[s], 0), 6)
	backsW := float32(0)
	if cards > 0 {
		backsW = float32(cards-1)*backStep + backW
	}
	w := 2*platePad + plateDotW + max(nf.width(nm), backsW)
	var x0, y0 float32
	switch p {
	case bottom:
		x0, y0 = midX-w/2, feltBot-10-plateH
	case top:
		x0, y0 = midX-w/2, feltTop+10
	case leftSide:
		x0, y0 = margin+16, midY-plateH/2
	case rightSide:
		x0, y0 = tableW-margin-16-w, midY-plateH/2
	}
	turn := v.ToMove == s && v.Phase != core.PhaseOver && !(in.ShowLastTrick && len(v.Tricks) > 0)
	bg, fg := pal.panel, pal.text
	if turn {
		bg, fg = pal.accent, pal.onAccent
	}
	c.roundRect(x0, y0, x0+w, y0+plateH, 16, bg)
	base := y0 + 26
	dx, dy := x0+platePad+8, base-nf.capHeight()/2
	c.circle(dx, dy, 8, pal.team[s.Team()])
	if turn {
		c.ring(dx-10, dy-10, dx+10, dy+10, 10, 2, pal.onAccent)
	}
	tx := x0 + platePad + plateDotW
	c.text(nf, tx, base, nm, fg, left)
	for i := range cards {
		bx, by := tx+float32(i)*backStep, y0+33
		c.roundRect(bx, by, bx+backW, by+17, 3, pal.cardFace)
		c.roundRect(bx+1.5, by+1.5, bx+backW-1.5, by+15.5, 2, pal.cardBack)
	}
}

// The plates' padding and the team dot before the name.
const platePad, plateDotW = 14, 26

// plateRoom is the width a plate's name may take at a place.
func plateRoom(p place) float32 {
	maxW := float32(plateEnd)
	if p == leftSide || p == rightSide {
		maxW = plateSide
	}
	return maxW - 2*platePad - plateDotW
}

// plateName is a name as its plate shows it.
type plateName struct {
	face face
	text string
}

// plateSizes are the sizes a plate's name may take, largest first.
var plateSizes = []float32{23, 20, 18, 16}

// plateNames gives each seat's name as its plate shows it: in the largest size at which it fits,
// else shortened. Two plates never look alike: names shortened to the same text ("Compute…" for
// "Computer 2" and "Computer 4") are shortened in the middle instead, keeping the ends that tell
// them apart, and people with the same name get their seat number.
func plateNames(in TableInput, f *ttFont) [4]plateName {
	var full [4]string
	for s := range full {
		full[s] = name(in.Names, in.Labels, core.Seat(s))
	}
	same := full
	for s := range full {
		for o := range full {
			if o != s && same[o] == same[s] {
				full[s] += " (" + strconv.Itoa(s+1) + ")"
				break
			}
		}
	}
	var out [4]plateName
	var room [4]float32
	for s := range out {
		room[s] = plateRoom(placeOf(core.Seat(s), in.View.Rules.Direction))
		fc, text := fit(f, full[s], room[s], plateSizes...)
		out[s] = plateName{fc, text}
	}
	for s := range out {
		var group []int // the plates that look like this one, it included
		for o := range out {
			if out[o].text == out[s].text {
				group = append(group, o)
			}
		}
		if len(group) < 2 {
			continue
		}
		taken := func(text string) bool {
			for o := range out {
				if !slices.Contains(group, o) && out[o].text == text {
					return true
				}
			}
			return false
		}
		// Keep the ends: the shortest tail that sets every name of the group apart.
		for tail := 1; tail < 24; tail++ {
			texts := make([]string, len(group))
			ok := true
			for i, o := range group {
				texts[i] = out[o].face.ellipsizeMiddle(full[o], room[o], tail)
				ok = ok && texts[i] != "" && !taken(texts[i]) && !slices.Contains(texts[:i], texts[i])
			}
			if ok {
				for i, o := range group {
					out[o].text = texts[i]
				}
				break
			}
		}
	}
	return out
}

// card draws a face-up card: its rank as the language writes it (rs) and the small suit in the
// top-left corner, a big suit symbol below.
// A trick's winning card gets an accent frame.
func (c *canvas) card(fs [2]*ttFont, pal palette, x, y float32, rs string, card core.Card, won bool) {
	if won {
		c.roundRect(x-6, y-6, x+cardW+6, y+cardH+6, 15, pal.accent)
	}
	c.roundRect(x+2, y+4, x+cardW+2, y+cardH+4, 10, pal.shadow)
	c.roundRect(x, y, x+cardW, y+cardH, 10, pal.cardRim)
	c.roundRect(x+1.5, y+1.5, x+cardW-1.5, y+cardH-1.5, 9, pal.cardFace)
	ink := pal.black
	if card.Suit().Red() {
		ink = pal.red
	}
	rank := face{fs[bold], 40}
	rw := c.text(rank, x+9, y+44, rs, ink, left)
	c.text(face{fs[bold], 28}, x+9+rw/2, y+76, card.Suit().Symbol(), ink, center)
	c.text(face{fs[regular], 72}, x+cardW-30, y+cardH-15, card.Suit().Symbol(), ink, center)
}

// orderBadge numbers a trick's cards in the order they were played, on the corner facing the
// player.
func (c *canvas) orderBadge(fs [2]*ttFont, pal palette, x, y float32, n int, p place) {
	bx, by := x+cardW, y+cardH
	switch p {
	case top:
		bx, by = x, y
	case leftSide:
		bx, by = x, y+cardH
	case rightSide:
		bx, by = x+cardW, y
	}
	c.circle(bx, by, 13, pal.feltEdge)
	c.circle(bx, by, 11, pal.felt)
	f := face{fs[bold], 16}
	c.text(f, bx, by+f.capHeight()/2, strconv.Itoa(n), pal.feltText, center)
}

// AltText is a short text version of the table for screen readers and notifications: trump and
// who named it, the calls, the trick shown, whose turn, and the card points. It is empty for input
// Table refuses (a private view).
func (in TableInput) AltText() string {
	in, err := in.prepare()
	if err != nil {
		return ""
	}
	v, l := in.View, in.Labels
	var parts []string
	if v.Trump.Valid() {
		parts = append(parts, fmt.Sprintf("%s %s (%s)", l.Trump, v.Trump.Symbol(), name(in.Names, l, v.Forehand)))
	} else {
		parts = append(parts, fmt.Sprintf("%s ? (%s)", l.Trump, name(in.Names, l, v.Forehand)))
	}
	if len(v.Announcements) > 0 {
		var calls []string
		for _, a := range v.Announcements {
			calls = append(calls, a.Call.Title()+" ("+name(in.Names, l, a.Seat)+")")
		}
		parts = append(parts, l.Calls+l.Colon+strings.Join(calls, ", "))
	}
	trick, last := in.shownTrick()
	if trick.N > 0 {
		var cards []string
		for i := range trick.N {
			cards = append(cards, name(in.Names, l, trick.SeatOf(i))+" "+l.cardText(trick.Cards[i]))
		}
		s := in.trickTitle(last) + l.Colon + strings.Join(cards, ", ")
		if last && trick.Winner.Valid() {
			s += " → " + name(in.Names, l, trick.Winner)
		}
		parts = append(parts, s)
	}
	if v.ToMove.Valid() && !last {
		parts = append(parts, l.Turn+l.Colon+name(in.Names, l, v.ToMove))
	}
	if v.Phase != core.PhaseTrump {
		parts = append(parts, fmt.Sprintf("%s%s%s %d, %s %d", l.Points, l.Colon, l.TeamA, v.Points[0], l.TeamB, v.Points[1]))
	}
	return strings.Join(parts, ". ") + "."
}
